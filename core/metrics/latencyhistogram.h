#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace rpcscope {

/**
 * A log-linear (HDR-style) latency histogram over nanoseconds.
 *
 * Values below 128 ns get a bucket each; above, every power of two is split into 64 equal buckets, so a bucket's
 * width is at most 1/64 of its lower bound and the bucket midpoint is within 0.8% of any value in it. That holds
 * from 1 ns to 2^48 ns (78 hours); larger values land in the last bucket. Memory is constant (a fixed array),
 * recording is a few integer operations, and merging two histograms gives exactly the histogram of all their
 * samples. Count, min, max, sum and sum of squares are kept exactly, so mean and standard deviation are not
 * bucket approximations.
 */
class LatencyHistogram {
public:
    static constexpr int kLinearBits = 7; ///< values below 2^7 are exact
    static constexpr int kSubBuckets = 64; ///< buckets per power of two above that
    static constexpr int kMaxExponent = 48; ///< values >= 2^48 ns share the last bucket
    static constexpr int kBucketCount = (1 << kLinearBits) + (kMaxExponent - kLinearBits) * kSubBuckets;

    struct Bucket {
        uint64_t lowNs; ///< inclusive
        uint64_t highNs; ///< inclusive
        uint64_t count;
    };

    void record(uint64_t nanos) noexcept
    {
        ++m_counts[bucketIndex(nanos)];
        ++m_count;
        m_sum += nanos;
        m_sumSquares += static_cast<Wide>(nanos) * nanos;
        if (nanos < m_min)
            m_min = nanos;
        if (nanos > m_max)
            m_max = nanos;
    }

    /// Adds every sample of @p other; the result equals recording both sample sets into one histogram.
    void merge(const LatencyHistogram &other) noexcept;
    void reset() noexcept { *this = LatencyHistogram(); }

    uint64_t count() const noexcept { return m_count; }
    bool isEmpty() const noexcept { return m_count == 0; }
    uint64_t min() const noexcept { return m_count ? m_min : 0; }
    uint64_t max() const noexcept { return m_max; }
    double mean() const noexcept;
    /// Population standard deviation, from exact sums.
    double stddev() const noexcept;

    /**
     * The value at percentile @p p (0..100): the smallest recorded value such that at least p% of samples are
     * less than or equal to it, reported as its bucket's midpoint clamped to [min, max]. 0 gives min, 100 max.
     */
    uint64_t percentile(double p) const noexcept;

    /// The non-empty buckets in increasing order.
    std::vector<Bucket> buckets() const;

    static int bucketIndex(uint64_t nanos) noexcept
    {
        if (nanos < (uint64_t(1) << kLinearBits))
            return static_cast<int>(nanos);
        const int exponent = 63 - __builtin_clzll(nanos);
        if (exponent >= kMaxExponent)
            return kBucketCount - 1;
        const int shift = exponent - 6; // keep the top 7 bits: 64..127
        const auto sub = static_cast<int>(nanos >> shift) - kSubBuckets;
        return (1 << kLinearBits) + (exponent - kLinearBits) * kSubBuckets + sub;
    }
    static uint64_t bucketLow(int index) noexcept;
    static uint64_t bucketHigh(int index) noexcept;

    bool operator==(const LatencyHistogram &other) const noexcept;

    /// Exact sums of values and of their squares, kept so a stored histogram gives the same mean and stddev.
    // NOLINTNEXTLINE(modernize-use-using): __extension__ (which keeps -Wpedantic quiet) takes a typedef, not a using
    __extension__ typedef unsigned __int128 Wide;
    Wide exactSum() const noexcept { return m_sum; }
    Wide exactSumOfSquares() const noexcept { return m_sumSquares; }
    /**
     * Rebuilds a histogram from its stored parts (bucket index -> count, min, max, the exact sums). False when
     * the parts cannot come from one histogram: an index out of range, min > max, or min/max outside the
     * buckets that hold samples.
     */
    static bool restore(const std::vector<std::pair<int, uint64_t>> &bucketCounts, uint64_t min, uint64_t max, Wide sum,
        Wide sumOfSquares, LatencyHistogram *into);
    /// The non-empty buckets as (index, count), in increasing order: what restore() takes.
    std::vector<std::pair<int, uint64_t>> bucketCounts() const;

private:
    std::array<uint64_t, kBucketCount> m_counts {};
    uint64_t m_count = 0;
    uint64_t m_min = UINT64_MAX;
    uint64_t m_max = 0;
    Wide m_sum = 0;
    Wide m_sumSquares = 0;
};

} // namespace rpcscope
