#include "latencyhistogram.h"

#include <algorithm>
#include <cmath>

namespace rpcscope {

void LatencyHistogram::merge(const LatencyHistogram &other) noexcept
{
    if (other.m_count == 0)
        return;
    for (int i = 0; i < kBucketCount; ++i)
        m_counts[i] += other.m_counts[i];
    m_count += other.m_count;
    m_sum += other.m_sum;
    m_sumSquares += other.m_sumSquares;
    m_min = std::min(m_min, other.m_min);
    m_max = std::max(m_max, other.m_max);
}

double LatencyHistogram::mean() const noexcept
{
    return m_count ? static_cast<double>(static_cast<long double>(m_sum) / m_count) : 0.0;
}

double LatencyHistogram::stddev() const noexcept
{
    if (m_count < 2)
        return 0.0;
    const long double n = m_count;
    const long double mean = static_cast<long double>(m_sum) / n;
    const long double variance = static_cast<long double>(m_sumSquares) / n - mean * mean;
    return variance > 0 ? static_cast<double>(std::sqrt(variance)) : 0.0;
}

uint64_t LatencyHistogram::bucketLow(int index) noexcept
{
    if (index < (1 << kLinearBits))
        return static_cast<uint64_t>(index);
    const int rel = index - (1 << kLinearBits);
    const int exponent = kLinearBits + rel / kSubBuckets;
    const int sub = rel % kSubBuckets + kSubBuckets;
    return static_cast<uint64_t>(sub) << (exponent - 6);
}

uint64_t LatencyHistogram::bucketHigh(int index) noexcept
{
    if (index == kBucketCount - 1)
        return UINT64_MAX;
    return bucketLow(index + 1) - 1;
}

uint64_t LatencyHistogram::percentile(double p) const noexcept
{
    if (m_count == 0)
        return 0;
    if (p <= 0)
        return m_min;
    if (p >= 100)
        return m_max;
    auto rank = static_cast<uint64_t>(std::ceil(p / 100.0 * static_cast<double>(m_count)));
    rank = std::clamp<uint64_t>(rank, 1, m_count);
    uint64_t seen = 0;
    for (int i = 0; i < kBucketCount; ++i) {
        seen += m_counts[i];
        if (seen >= rank) {
            const uint64_t low = bucketLow(i);
            const uint64_t high = i == kBucketCount - 1 ? m_max : bucketHigh(i);
            const uint64_t mid = low + (high - low) / 2;
            return std::clamp(mid, m_min, m_max);
        }
    }
    return m_max;
}

std::vector<LatencyHistogram::Bucket> LatencyHistogram::buckets() const
{
    std::vector<Bucket> out;
    for (int i = 0; i < kBucketCount; ++i) {
        if (m_counts[i])
            out.push_back({ bucketLow(i), bucketHigh(i), m_counts[i] });
    }
    return out;
}

std::vector<std::pair<int, uint64_t>> LatencyHistogram::bucketCounts() const
{
    std::vector<std::pair<int, uint64_t>> out;
    for (int i = 0; i < kBucketCount; ++i) {
        if (m_counts[i])
            out.emplace_back(i, m_counts[i]);
    }
    return out;
}

bool LatencyHistogram::restore(const std::vector<std::pair<int, uint64_t>> &bucketCounts, uint64_t min, uint64_t max,
    Wide sum, Wide sumOfSquares, LatencyHistogram *into)
{
    LatencyHistogram h;
    int lowest = kBucketCount;
    int highest = -1;
    for (const auto &[index, count] : bucketCounts) {
        if (index < 0 || index >= kBucketCount || count == 0)
            return false;
        h.m_counts[index] += count;
        h.m_count += count;
        lowest = std::min(lowest, index);
        highest = std::max(highest, index);
    }
    if (h.m_count > 0) {
        if (min > max || bucketIndex(min) != lowest || bucketIndex(max) != highest)
            return false;
        h.m_min = min;
        h.m_max = max;
        h.m_sum = sum;
        h.m_sumSquares = sumOfSquares;
    }
    *into = h;
    return true;
}

bool LatencyHistogram::operator==(const LatencyHistogram &other) const noexcept
{
    return m_counts == other.m_counts && m_count == other.m_count && min() == other.min() && m_max == other.m_max
        && m_sum == other.m_sum && m_sumSquares == other.m_sumSquares;
}

} // namespace rpcscope
