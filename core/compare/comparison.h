#pragma once

#include "compare/statistics.h"
#include "metrics/runsnapshot.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace rpcscope {

struct CompareOptions {
    /// A significant change counts as a regression or an improvement only beyond this relative size (0.05 = 5%).
    double threshold = 0.05;
    /// Of the intervals; a change is significant when its (Holm-adjusted) p is below 1 - confidence.
    double confidence = 0.95;
    /// Bootstrap replicates and seed: only for perCallWhenSingleRun.
    int replicates = 2000;
    uint64_t seed = 0x9e3779b97f4a7c15ULL;
    SampleRules rules;
    /**
     * One run against one run has no replicates: nothing says how much a run differs from the next one, so its
     * verdict is "inconclusive". Set this to judge such a pair the old way instead, each call a sample (a bootstrap
     * over calls and Mann-Whitney): it then may say regression, and the verdict line says on what it rests.
     */
    bool perCallWhenSingleRun = false;
};

/**
 * What a comparison says about one metric (and overall).
 *
 * - TooFewSamples: a replicate has too few OK calls for this statistic (SampleRules, applied per replicate), or a
 *   side has fewer than 2 replicates with it; nothing is concluded.
 * - NoSignificantChange: the change is not significant, and the experiment could have seen one of the threshold's
 *   size (the minimum detectable change is within the threshold).
 * - Inconclusive: not significant, and the noise was too high to see a change of the threshold's size; or one run
 *   per side, which cannot tell a change from run-to-run noise.
 * - WithinThreshold: significant, but the estimate is within +-threshold: real, and too small to matter.
 * - Regression: significant and beyond the threshold in the bad direction (slower).
 * - Improvement: significant and beyond the threshold in the good direction.
 * - NotTested: the row has no verdict (throughput, CPU, memory, and the percentiles without a verdict).
 *
 * Significant means: Welch's t test on the log of the per-replicate statistic (ReplicateChange) gives a p that,
 * Holm-adjusted over every metric with a verdict, is below 1 - confidence. See docs/statistics.md.
 */
enum class Verdict {
    NotTested,
    TooFewSamples,
    NoSignificantChange,
    Inconclusive,
    WithinThreshold,
    Improvement,
    Regression,
};

/// "regression", "improvement", "change within threshold", "no significant change", "inconclusive",
/// "too few samples", "".
QString verdictName(Verdict verdict);

enum class MetricKind {
    P50,
    P90,
    P95,
    P99,
    P999,
    Mean,
    RequestsPerSecond,
    ClientCpuPerCall,
    ServerCpuPerCall,
    ClientPeakRss,
    ServerPeakRss,
    ErrorRate,
    // Streaming runs (both sides with timed messages): the latency of each received message, and their rate.
    MessageP50,
    MessageP99,
    MessagesPerSecond,
};

enum class MetricUnit {
    Nanoseconds, ///< latencies
    PerSecond, ///< throughput
    Microseconds, ///< CPU per call
    Bytes,
    Fraction, ///< 0..1, shown as a percentage (error rate)
};

/// What one replicate of a comparison is: the unit whose statistics vary independently from one to the next.
enum class ReplicateUnit {
    Call, ///< no replicates: one run, each call taken as a sample (perCallWhenSingleRun only)
    Block, ///< a block of an interleaved A/B run
    ServerProcess, ///< the blocks one start of a server command served (ab --restarts)
    ClientProcess, ///< the blocks one start of a client command made (ab --a-client; with its server's start, if any)
    Run, ///< a whole run (compare of several runs a side)
};

/// "3 blocks", "1 server process", "5 runs", "20000 calls".
QString replicateCountText(ReplicateUnit unit, qint64 count);

/// The interval of a relative change (B / A - 1), its test and how sensitive the test was.
struct ChangeInterval {
    bool valid = false;
    double estimate = 0; ///< relative change (geometric means of the replicates, or of the calls per call)
    double ciLow = 0;
    double ciHigh = 0;
    double confidence = 0.95;
    double pValue = std::numeric_limits<double>::quiet_NaN(); ///< two-sided; NaN when no test backs the row
    double pAdjusted = std::numeric_limits<double>::quiet_NaN(); ///< Holm-adjusted over the verdict rows
    /// The smallest change this test finds 80% of the time at this noise (fraction); NaN when unknown.
    double detectable = std::numeric_limits<double>::quiet_NaN();

    /// The interval does not contain 0 (no change).
    bool excludesZero() const { return valid && (ciLow > 0 || ciHigh < 0); }
    /// The interval (at its own confidence, for its metric alone) excludes zero while the verdict, corrected for the
    /// other metrics tested beside it, found nothing: said beside it, so that a reader can reconcile the two.
    bool lostToCorrection() const { return excludesZero() && !std::isnan(pAdjusted) && pAdjusted >= 1 - confidence; }
};

/// One line of a comparison: A and B, how they differ, and for tested latencies whether that matters.
struct MetricRow {
    MetricKind kind = MetricKind::P50;
    QString name; ///< "p50", "p99.9", "mean", "req/s", "client CPU/call", ...
    MetricUnit unit = MetricUnit::Nanoseconds;
    /// Of all of A's calls together; or, for a row with a replicate interval (blocks, server processes, runs), the
    /// geometric mean of A's replicates' statistic: what the interval's estimate compares, so that A, B, delta and
    /// change are the verdict's one estimate in every view.
    double valueA = 0;
    double valueB = 0;
    /// A row judged on replicates: the statistic of all of each side's calls pooled, shown only labelled as pooled;
    /// NaN for other rows (their values are the pooled ones).
    double pooledA = std::numeric_limits<double>::quiet_NaN();
    double pooledB = std::numeric_limits<double>::quiet_NaN();
    bool judgedOnReplicates() const { return !std::isnan(pooledA); }
    double delta = 0; ///< B - A, in the row's unit
    double relativeChange = 0; ///< B / A - 1; NaN when A is 0
    bool lowerIsBetter = true; ///< false for req/s
    bool hasInterval = false; ///< interval holds a confidence interval (latency rows)
    ChangeInterval interval;
    bool hasVerdict = false; ///< p50, p95, p99 and mean; a stream's message p50 and p99
    Verdict verdict = Verdict::NotTested;
    QString reason; ///< for TooFewSamples (or an invalid statistic)
    /// The row's statistic per replicate (ns), in order: what the dots of a comparison chart show.
    std::vector<double> replicatesA;
    std::vector<double> replicatesB;
};

/// Two sides side by side, B against A (A is the baseline).
struct Comparison {
    QList<MetricRow> rows;
    /// Per call only (perCallWhenSingleRun): the rank tests behind p50/mean and the message p50.
    MannWhitneyResult mannWhitney;
    MannWhitneyResult messageMannWhitney;
    bool fromRawSamples = false; ///< per call only: latencies from raw samples rather than histograms
    double threshold = 0.05;
    double confidence = 0.95;

    ReplicateUnit unitA = ReplicateUnit::Call;
    ReplicateUnit unitB = ReplicateUnit::Call;
    qint64 replicatesA = 0; ///< how many replicates (calls, when judged per call)
    qint64 replicatesB = 0;
    int runsA = 1;
    int runsB = 1;
    bool singleRun = false; ///< one run a side without blocks: run-to-run noise is unknown
    bool perCall = false; ///< judged call by call (singleRun with perCallWhenSingleRun)
    /// The two sides of one A/B run (RunSnapshot::abRunId), their i-th blocks or processes run side by side: judged
    /// pair by pair (pairedLogChange), so that what drifted over the run, moving both, is not counted as noise.
    bool paired = false;
    int testedMetrics = 0; ///< the family Holm adjusts over
    QString connectionA; ///< of A/B blocks: "kept" or "per-block"; empty otherwise
    QString connectionB;

    /// Regression if a verdict row is one; else improvement if any is; else change within threshold if any is;
    /// else no significant change when p50 (or another row) could have seen a change; else inconclusive; too
    /// few samples when no row could be tested.
    Verdict overall = Verdict::NotTested;
    QStringList regressions; ///< names of the verdict rows that regressed, e.g. {"p50", "p99"}
    QStringList improvements;

    /// The row of @p kind, or nullptr when the comparison has none (e.g. server CPU without server stats).
    const MetricRow *row(MetricKind kind) const;
    /// What the verdict rests on: "10 vs 10 blocks (connection kept), p Holm-adjusted over 4 metrics".
    QString basis() const;
    /// What would narrow the intervals, by what the replicates are: "more server processes (--restarts)", "more
    /// blocks (a longer run)", "more runs a side". More calls in each replicate do not, when the noise is between them.
    QString narrowedBy() const;
    /**
     * When a side's replicates are processes that differ from each other by more than a quarter in p50, what they
     * were: "A's server processes differ from each other: p50 53.1 us, 54.0 us, 74.2 us ...; the verdict is about
     * these processes as much as about A"; empty otherwise.
     */
    QString processSpreadNote() const;
    /// @p row's verdict in one line: "regression: p50 +19.1% (95% CI +17.0 .. +21.3%, p < 0.001)".
    QString verdictText(const MetricRow &row) const;
    /**
     * The overall verdict in one line, naming the deciding rows and what they rest on: "regression: p50 +19.1%
     * (95% CI +17.0 .. +21.3%, p < 0.001) [10 vs 10 blocks, p Holm-adjusted over 4 metrics]", "inconclusive: one
     * run per side: p50 +43.3%; the change may be run-to-run noise; use ab, or several runs a side".
     */
    QString verdictLine() const;
};

/// One side of a comparison: its calls pooled (for the values shown) and its replicates (for the verdict).
struct CompareSide {
    RunSnapshot total;
    ReplicateUnit unit = ReplicateUnit::Call;
    struct Replicate {
        QString label; ///< "block 3", "process 2", "run #12"
        LatencyHistogram latency; ///< OK calls
        LatencyHistogram messageLatency;
        /// The CPU its server and its client spent over it, from their CPU clocks; NaN: not measured (in a part).
        double serverCpuSeconds = std::numeric_limits<double>::quiet_NaN();
        double clientCpuSeconds = std::numeric_limits<double>::quiet_NaN();
        uint64_t calls = 0; ///< completed, OK or not: what CPU per call divides by
    };
    std::vector<Replicate> replicates;
    int runs = 1;
    std::vector<uint32_t> rawLatenciesUs; ///< per call only: the OK calls, exact

    /**
     * One run: the blocks of an A/B side (merged per server process when its server was started more than once),
     * or none (a plain run; compared per call only when asked).
     */
    static CompareSide fromRun(const RunSnapshot &run, std::vector<uint32_t> rawLatenciesUs = {});
    /// Several runs of one side (e.g. every run labelled "before"): each run a replicate, their numbers pooled.
    static CompareSide fromRuns(const QList<RunSnapshot> &runs);
};

/**
 * Compares side B against side A (the baseline): p50, p90, p95, p99, p99.9 and mean latency of the OK calls, req/s,
 * client CPU per call, server CPU per call (when both have server stats), peak client and server RSS and error
 * rate; for streams also the message p50 and p99 and messages/s. p50, p95, p99, mean (and the message p50/p99) get
 * verdicts; every latency row gets an interval when both sides have 2 or more replicates. Deterministic.
 */
Comparison compareSides(const CompareSide &a, const CompareSide &b, const CompareOptions &options = {});

/// Two runs: compareSides(CompareSide::fromRun(a), CompareSide::fromRun(b)).
Comparison compareRuns(const RunSnapshot &a, const RunSnapshot &b, const CompareOptions &options = {});
/// The same, with the OK calls' raw latencies (used only when judged per call).
Comparison compareRuns(const RunSnapshot &a, const RunSnapshot &b, const std::vector<uint32_t> &latenciesUsA,
    const std::vector<uint32_t> &latenciesUsB, const CompareOptions &options = {});

/// The latencies of the calls among @p samples that ended as @p expected (OK unless --expect-status said otherwise:
/// the run's RunSnapshot::expectedStatuses), for the per-call comparison.
std::vector<uint32_t> okLatenciesUs(const std::vector<RawSample> &samples, const ExpectedStatuses &expected);

/// "+19.1%", "-0.4%", "+0.0%"; @p fraction 0.191 = +19.1%. "n/a" for NaN or infinity.
QString formatPercentChange(double fraction, int decimals = 1);
/// "p < 0.001", "p = 0.012", "p = 0.43".
QString formatPValue(double p);

} // namespace rpcscope
