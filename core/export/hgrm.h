#pragma once

#include "metrics/latencyhistogram.h"

#include <QByteArray>

namespace rpcscope {

/**
 * A histogram as HdrHistogram's percentile distribution text (`.hgrm`, what Java's
 * AbstractHistogram::outputPercentileDistribution prints and the HdrHistogram plotter and hdr-plot read):
 *
 *            Value     Percentile TotalCount 1/(1-Percentile)
 *
 *            0.412 0.000000000000          1           1.00
 *            ...
 *           12.345 1.000000000000       5000
 *     #[Mean    =        1.234, StdDeviation   =        0.567]
 *     #[Max     =       12.345, Total count    =         5000]
 *     #[Buckets =           42, SubBuckets     =          128]
 *
 * Rows follow HdrHistogram's percentile iterator: ticks at 0%, then @p ticksPerHalf ticks for each halving of the
 * distance to 100% (0, 10, ... 50, 55, ... 75, 77.5, ...), each reported at the first bucket that reaches it, with
 * the bucket's highest value (HdrHistogram's "highest equivalent value") and the count up to it; a last row at
 * 100% has no fourth column, as in HdrHistogram (the plotter skips it). Values are divided by @p scale (1e6: from
 * nanoseconds to milliseconds). Buckets/SubBuckets describe rpcscope's layout in HdrHistogram's terms (128 linear
 * values, then 64 sub-buckets per power of two: 42 buckets of 128 sub-buckets).
 *
 * @p decimals < 0 picks enough decimals for three significant digits of the smallest value (at least 3), where
 * HdrHistogram uses its configured significant digits.
 */
QByteArray histogramToHgrm(
    const LatencyHistogram &histogram, double scale = 1e6, int ticksPerHalf = 5, int decimals = -1);

} // namespace rpcscope
