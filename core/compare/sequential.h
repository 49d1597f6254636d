#pragma once

namespace rpcscope {

/**
 * How a SequentialRatio is tuned. Only confidence and the mixing variance decide what the interval means; the planned
 * number of pairs only decides where it is narrowest, and the guarantee holds after every pair, before and after it.
 */
struct SequentialOptions {
    /// 1 - alpha, of the whole sequence of intervals; a value outside (0, 1) is taken as 0.95.
    double confidence = 0.95;
    /// The number of pairs the experiment expects to run at most: the mixing variance is chosen to make the interval
    /// narrowest there. Values below 2 are taken as 2.
    int plannedPairs = 200;
    /// c^2, the variance (in units of sigma^2) of the Gaussian mixture over the mean; 0 (or anything not positive and
    /// finite) = tuned for plannedPairs.
    double mixingVariance = 0;
    /**
     * A floor on the standard deviation of the log ratios, in the same log units: the sum of squares the interval uses
     * is at least (n - 1) * minimumSd^2. A floor only widens the interval (it stays valid); it keeps a run of identical
     * ratios (statistics that landed in the same histogram buckets) from giving an interval of zero width. Negative or
     * NaN is taken as 0.
     */
    double minimumSd = 0;
};

/// What a sequential comparison can conclude after a pair; see SequentialRatio::decide.
enum class SequentialDecision {
    Undecided, ///< keep going
    Regression, ///< B is slower (the interval is above 0) and the estimate is above +threshold
    Improvement, ///< B is faster (the interval is below 0) and the estimate is below -threshold
    NoChangeBeyondThreshold, ///< the whole interval lies within (-threshold, +threshold)
};

/**
 * An anytime-valid confidence sequence for the ratio B/A from paired blocks, fed one pair at a time.
 *
 * Each observation is d_i = log(B_i) - log(A_i), the log ratio of a statistic (say p50 latency) of the i-th pair of
 * adjacent blocks A_i B_i. The d_i are taken as independent draws from a normal distribution with unknown mean mu and
 * unknown variance sigma^2. After every pair this gives an interval for mu, and so for the ratio exp(mu) - 1, such
 * that the chance that the interval EVER misses mu, over the whole unbounded sequence of pairs, is at most
 * 1 - confidence. The interval may therefore be looked at after every pair and the experiment stopped whenever it
 * is convincing, which a fixed-sample t interval does not allow.
 *
 * The construction (docs/sequential.md) is the scale-invariant Gaussian-mixture t-test martingale: for a candidate
 * mean m, with S the sum of squares of the d_i about their mean and r = n (mean - m)^2 / S,
 *
 *     M_n(m) = (1 + n c^2)^(-1/2) * ((1 + r) / (1 + r / (1 + n c^2)))^(n/2)
 *
 * is a nonnegative martingale with M_1 = 1 when m is the true mean, whatever sigma is, so by Ville's inequality it
 * reaches 1/alpha with probability at most alpha. The interval is {m : M_n(m) < 1/alpha}, which is in closed form
 * mean +- sqrt(u_n S / n) with u_n = boundaryFactor(n, c^2, confidence), and the whole real line while u_n is infinite
 * (at n = 1 always, and for the first few pairs when c^2 is tuned for many pairs).
 */
class SequentialRatio {
public:
    explicit SequentialRatio(const SequentialOptions &options = {});

    /**
     * Adds the next pair's log ratio log(B_i / A_i). Returns false, and ignores the value, when it is not finite or
     * its magnitude is above 1e150 (no measured ratio is e^1e150; beyond that the sums would overflow).
     */
    bool add(double logRatio);
    /// Forgets every pair (the options stay).
    void reset();

    int count() const { return m_count; }
    /// The mean of the log ratios; NaN before the first pair.
    double meanLog() const;
    /// Their sample standard deviation (n - 1 in the denominator, before the minimumSd floor); NaN below 2 pairs.
    double sdLog() const;
    /// exp(meanLog()) - 1: the ratio of the geometric means of B's and A's statistics, minus one. NaN when empty.
    double estimate() const;

    /// Whether the interval is finite. It is not before the first pair at which boundaryFactor is finite.
    bool bounded() const;
    /// The interval for the mean log ratio: -inf and +inf while not bounded.
    double lowerLog() const;
    double upperLog() const;
    /// The interval for the relative change, exp(end) - 1: -1 and +inf while not bounded.
    double lower() const;
    double upper() const;

    /// M_n(0): the evidence against "no change" now (an e-value); 1 before the first pair.
    double eValue() const;
    /// min(1, 1 / max over k <= n of M_k(0)): an anytime-valid p-value for "no change"; below 1 - confidence
    /// exactly when some interval so far (not necessarily the current one) excluded 0.
    double anytimePValue() const;

    /**
     * The decision at relative threshold @p threshold (>= 0; 0.05 = 5%), in the sense of docs/statistics.md's
     * verdicts: Regression when the interval lies above 0 and the estimate is above +threshold; Improvement when it
     * lies below 0 and the estimate is below -threshold; NoChangeBeyondThreshold when the whole interval lies within
     * (-threshold, +threshold); Undecided otherwise (and always while unbounded, or for a NaN or negative threshold).
     * Because the interval is valid at every pair, a decision taken at the first pair that shows one is wrong (B not
     * slower, B not faster, or a change of at least the threshold) with probability at most 1 - confidence.
     */
    SequentialDecision decide(double threshold) const;

    double confidence() const { return m_confidence; }
    double mixingVariance() const { return m_mixingVariance; }

    /// The mixing variance c^2 that makes the interval narrowest after @p plannedPairs pairs (golden-section search).
    static double tunedMixingVariance(int plannedPairs, double confidence);
    /**
     * u_n: the interval is mean +- sqrt(u_n S / n), S the sum of squares about the mean. With g = log(1 + n c^2) and
     * L = (g + 2 log(1/alpha)) / n, u_n = (e^L - 1) / (1 - e^(L - g)) when L < g, and +inf otherwise.
     */
    static double boundaryFactor(int n, double mixingVariance, double confidence);
    /// The first n at which boundaryFactor is finite; 0 if none below 1e9.
    static int firstBoundedPair(double mixingVariance, double confidence);

private:
    double sumOfSquares() const; // with the floor
    double halfWidthLog() const; // +inf while unbounded
    double logEValue(double mean) const; // log M_n(mean)

    double m_confidence;
    double m_mixingVariance;
    double m_minimumSd;
    int m_count = 0;
    double m_mean = 0; // Welford
    double m_m2 = 0;
    double m_maxLogE = 0; // log of the largest M_k(0) so far; M_0 = 1
};

} // namespace rpcscope
