#include "hgrm.h"

#include <QString>

#include <algorithm>
#include <cmath>

namespace rpcscope {

namespace {

// Locale-independent fixed notation right-aligned in @p width, as Java's String.format(Locale.US, "%W.Df").
QByteArray fixed(double value, int width, int decimals)
{
    return QByteArray::number(value, 'f', decimals).rightJustified(width, ' ');
}

QByteArray integer(uint64_t value, int width)
{
    return QByteArray::number(static_cast<qulonglong>(value)).rightJustified(width, ' ');
}

} // namespace

QByteArray histogramToHgrm(const LatencyHistogram &histogram, double scale, int ticksPerHalf, int decimals)
{
    ticksPerHalf = std::max(1, ticksPerHalf);
    if (decimals < 0) {
        decimals = 3;
        const double smallest = static_cast<double>(std::max<uint64_t>(histogram.min(), 1)) / scale;
        if (!histogram.isEmpty() && smallest < 100)
            decimals = std::clamp(2 - static_cast<int>(std::floor(std::log10(smallest))), 3, 9);
    }
    QByteArray out = QByteArray("Value").rightJustified(12, ' ') + ' '
        + QByteArray("Percentile").rightJustified(14, ' ') + ' ' + QByteArray("TotalCount").rightJustified(10, ' ')
        + ' ' + QByteArray("1/(1-Percentile)").rightJustified(14, ' ') + "\n\n";

    const uint64_t total = histogram.count();
    if (total > 0) {
        const std::vector<LatencyHistogram::Bucket> buckets = histogram.buckets();
        // HdrHistogram's PercentileIterator: stay on a bucket while it reaches the next tick, move on when it does
        // not; the tick step halves every time the remaining distance to 100% halves.
        double level = 0.0; // percent
        uint64_t seen = 0;
        for (size_t i = 0; i < buckets.size(); ++i) {
            seen += buckets[i].count;
            const double reached = 100.0 * static_cast<double>(seen) / static_cast<double>(total);
            const bool lastBucket = i + 1 == buckets.size();
            const double value = static_cast<double>(lastBucket ? histogram.max() : buckets[i].highNs) / scale;
            while (reached >= level) {
                const double fraction = level / 100.0;
                out += fixed(value, 12, decimals) + ' ' + fixed(fraction, 2, 12) + ' ' + integer(seen, 10) + ' '
                    + fixed(1.0 / (1.0 - fraction), 14, 2) + '\n';
                const auto halvings = static_cast<long>(std::log(100.0 / (100.0 - level)) / std::log(2.0));
                const double ticks = ticksPerHalf * std::pow(2.0, static_cast<double>(halvings + 1));
                level += 100.0 / ticks;
                if (lastBucket)
                    break; // as HdrHistogram: one row when the last bucket is reached, then the 100% row
            }
        }
        const double maxValue = static_cast<double>(histogram.max()) / scale;
        out += fixed(maxValue, 12, decimals) + ' ' + fixed(1.0, 2, 12) + ' ' + integer(total, 10) + '\n';
    }

    out += "#[Mean    = " + fixed(histogram.mean() / scale, 12, decimals)
        + ", StdDeviation   = " + fixed(histogram.stddev() / scale, 12, decimals) + "]\n";
    out += "#[Max     = " + fixed(static_cast<double>(histogram.max()) / scale, 12, decimals)
        + ", Total count    = " + integer(total, 12) + "]\n";
    constexpr int kHdrBuckets = LatencyHistogram::kMaxExponent - LatencyHistogram::kLinearBits + 1;
    out += "#[Buckets = " + integer(kHdrBuckets, 12)
        + ", SubBuckets     = " + integer(1u << LatencyHistogram::kLinearBits, 12) + "]\n";
    return out;
}

} // namespace rpcscope
