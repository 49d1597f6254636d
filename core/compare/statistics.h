#pragma once

#include "metrics/latencyhistogram.h"

#include <QList>
#include <QString>

#include <cstdint>
#include <vector>

namespace rpcscope {

/**
 * A sample as sorted distinct values with their counts: the form every statistic here works on.
 *
 * Runs are mostly stored as histograms, so a histogram is taken as the empirical distribution with each sample
 * rounded to its bucket's midpoint (clamped to the histogram's exact min and max, as LatencyHistogram::percentile
 * reports it; values within 0.8%). Samples in the same bucket are ties. When raw samples exist they give the exact
 * distribution instead. Either way the cost of a statistic is O(distinct values), never O(samples).
 */
class EmpiricalDistribution {
public:
    struct Value {
        double ns; ///< the value, in nanoseconds
        uint64_t count; ///< > 0
    };

    EmpiricalDistribution() = default;
    /// Bucket midpoints; the exact mean of the histogram is kept for the mean's point estimate.
    static EmpiricalDistribution fromHistogram(const LatencyHistogram &histogram);
    /// Raw latencies in microseconds (e.g. RawSample::latencyUs of the OK calls); exact, in any order.
    static EmpiricalDistribution fromMicroseconds(const std::vector<uint32_t> &latenciesUs);

    const std::vector<Value> &values() const { return m_values; }
    uint64_t count() const { return m_count; }
    bool isEmpty() const { return m_count == 0; }
    /// Exact when built from a histogram (its exact sum) or from raw samples.
    double mean() const { return m_mean; }
    /// The mean of the values as stored (bucket midpoints); the bootstrap resamples these.
    double storedMean() const;
    /**
     * The nearest-rank percentile, as LatencyHistogram::percentile defines it: the smallest value such that at
     * least p% (0..100) of the samples are less than or equal to it. 0 gives the smallest value, 100 the largest.
     */
    double percentile(double p) const;

private:
    std::vector<Value> m_values; // increasing ns
    uint64_t m_count = 0;
    double m_mean = 0;
};

/**
 * When a sample is too small for a statistic to mean anything. A percentile p needs at least minSamples calls on
 * each side and at least minTailSamples of them beyond the percentile (n * (1 - p/100) >= minTailSamples): with the
 * defaults p50 needs 20 calls, p90 100, p95 200, p99 1000, p99.9 10000. The mean and Mann-Whitney need minSamples.
 */
struct SampleRules {
    uint64_t minSamples = 20;
    double minTailSamples = 10;
};

/// Whether both samples are large enough for percentile @p percentile (0..100); NaN means the mean.
struct SampleCheck {
    bool enough = true;
    QString reason; ///< e.g. "p99 needs at least 1000 calls per run (A has 150)"; empty when enough
};

/// @p percentile 0..100, or NaN for the mean; @p label names it in the reason ("p99", "mean").
SampleCheck checkSamples(
    uint64_t countA, uint64_t countB, double percentile, const QString &label, const SampleRules &rules = {});

struct BootstrapOptions {
    int replicates = 2000;
    double confidence = 0.95; ///< of the two-sided interval
    uint64_t seed = 0x9e3779b97f4a7c15ULL; ///< the same seed and data give the same interval
    SampleRules rules;
};

/**
 * The relative change of a statistic from sample A to sample B, with a percentile-bootstrap confidence interval.
 *
 * The estimate is B/A - 1 of the original samples. Each replicate resamples A and B independently as a multinomial
 * over their distinct values (sequential conditional binomials, so O(distinct values) per replicate, whatever the
 * number of calls), computes the statistic of each, and their ratio; the interval is the (1-c)/2 and (1+c)/2
 * quantiles of the replicate ratios, minus one.
 */
struct BootstrapResult {
    double percentile = 0; ///< 0..100, or NaN for the mean
    bool valid = false; ///< false when a sample is empty or A's statistic is 0 (no ratio)
    bool tooFewSamples = false; ///< SampleRules say no: the estimate is shown, the interval is not to be trusted
    QString reason; ///< why not valid, or why too few samples
    double valueA = 0; ///< the statistic of A, ns
    double valueB = 0;
    double estimate = 0; ///< B/A - 1
    double ciLow = 0; ///< relative change at the interval's lower end
    double ciHigh = 0;
    double confidence = 0.95;
    int replicates = 0;

    /// The interval does not contain 0 (no change).
    bool excludesZero() const { return valid && (ciLow > 0 || ciHigh < 0); }
};

/// One percentile (0 < percentile < 100) of two histograms.
BootstrapResult bootstrapPercentileChange(
    const LatencyHistogram &a, const LatencyHistogram &b, double percentile, const BootstrapOptions &options = {});
/// The mean of two histograms: exact means for the estimate, midpoint means (rescaled to the exact ones) inside.
BootstrapResult bootstrapMeanChange(
    const LatencyHistogram &a, const LatencyHistogram &b, const BootstrapOptions &options = {});

/**
 * Several statistics from the same replicates, which is what a comparison wants: one resampling pass serves every
 * percentile and the mean. Returns one result per entry of @p percentiles (0..100, NaN for the mean), in order.
 */
QList<BootstrapResult> bootstrapChanges(const EmpiricalDistribution &a, const EmpiricalDistribution &b,
    const QList<double> &percentiles, const BootstrapOptions &options = {});

/**
 * The Mann-Whitney U test of A against B, from the normal approximation with tie correction and a continuity
 * correction. Ties are equal values: for histograms, samples in the same bucket. O(distinct values).
 */
struct MannWhitneyResult {
    bool valid = false; ///< both samples non-empty
    uint64_t countA = 0;
    uint64_t countB = 0;
    double u = 0; ///< U of B: pairs (a, b) with b > a, plus half the pairs with b == a
    double z = 0; ///< > 0 when B tends to be larger (slower)
    double pValue = 1; ///< two-sided
    /// Common-language effect size: P(B > A) + 0.5 P(B == A), for a random a from A and b from B; 0.5 = no shift.
    double probabilityBGreater = 0.5;
};

MannWhitneyResult mannWhitney(const EmpiricalDistribution &a, const EmpiricalDistribution &b);
MannWhitneyResult mannWhitney(const LatencyHistogram &a, const LatencyHistogram &b);

} // namespace rpcscope
