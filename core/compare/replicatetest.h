#pragma once

#include <QString>

#include <vector>

namespace rpcscope {

/// Student's t distribution with @p df degrees of freedom (df > 0, not necessarily whole): P(T <= t).
double studentTCdf(double t, double df);
/// The @p q quantile (0 < q < 1) of Student's t with @p df degrees of freedom.
double studentTQuantile(double q, double df);

/**
 * The change of a statistic between two sets of replicates (blocks, server processes or runs), judged from the
 * replicates alone: Welch's t test on the logarithms of the per-replicate statistics.
 *
 * Why replicates and not calls: calls inside one block share a connection, a server process and a moment of the
 * machine, so they are not independent; the spread that decides whether A and B differ is the spread between
 * replicates. Why logarithms: latency effects are multiplicative and right-skewed, and the change is reported as a
 * ratio. Why Welch's t and not a rank test: with 3 to 10 replicates a side a rank test cannot reach small p-values
 * at all (3 against 3 never goes below p = 0.1), and t on log values has held its level in our A/A calibration
 * (docs/statistics.md).
 *
 * Every replicate value also carries the variance of the histogram's bucket rounding (about 1.6% wide), so runs
 * whose blocks all land in the same bucket do not give an interval of zero width.
 */
struct ReplicateChange {
    bool valid = false;
    QString reason; ///< why not valid: fewer than 2 replicates on a side, or a value that is not positive
    int countA = 0;
    int countB = 0;
    double geometricMeanA = 0; ///< of A's replicate values (their unit)
    double geometricMeanB = 0;
    double estimate = 0; ///< geometricMeanB / geometricMeanA - 1
    double ciLow = 0; ///< of the relative change
    double ciHigh = 0;
    double confidence = 0.95;
    double degreesOfFreedom = 0; ///< Welch-Satterthwaite
    double standardError = 0; ///< of the difference of the mean logs
    double pValue = 1; ///< two-sided, of "no change"
};

ReplicateChange welchLogChange(const std::vector<double> &a, const std::vector<double> &b, double confidence = 0.95);

/**
 * The same change judged on pairs: a[i] and b[i] were measured side by side (an A/B run's i-th server process of
 * each side, or its i-th pair of blocks), so what drifted over the run moved both. Student's t on the logs of the
 * ratios b[i] / a[i], n - 1 degrees of freedom; each ratio also carries both values' bucket rounding. Not valid for
 * fewer than 2 pairs or sides of different sizes.
 */
ReplicateChange pairedLogChange(const std::vector<double> &a, const std::vector<double> &b, double confidence = 0.95);

/**
 * Holm's step-down adjustment of several p-values tested together: rejecting every adjusted p below alpha keeps
 * the chance of any false rejection at alpha, whatever the dependence between the tests. NaN entries are not
 * tests: they stay NaN and do not count in the family.
 */
std::vector<double> holmAdjust(const std::vector<double> &pValues);

/**
 * The smallest relative change (an increase, as a fraction) that a two-sided t test at level @p alpha finds with
 * probability @p power, given the standard error of the log difference and its degrees of freedom.
 */
double minimumDetectableChange(double standardError, double df, double alpha, double power = 0.8);

} // namespace rpcscope
