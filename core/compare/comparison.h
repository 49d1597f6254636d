#pragma once

#include "compare/statistics.h"
#include "metrics/runsnapshot.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <vector>

namespace rpcscope {

struct CompareOptions
{
    /// A significant change counts as a regression or an improvement only beyond this relative size (0.05 = 5%).
    double threshold = 0.05;
    /// Of the bootstrap intervals; Mann-Whitney's p must also be below 1 - confidence.
    double confidence = 0.95;
    int replicates = 2000;
    uint64_t seed = 0x9e3779b97f4a7c15ULL;
    SampleRules rules;
};

/**
 * What a comparison says about one metric (and overall).
 *
 * - TooFewSamples: SampleRules say a run has too few OK calls for this statistic; nothing is concluded.
 * - NoSignificantChange: the bootstrap interval of the relative change contains 0, or (p50, mean) Mann-Whitney's
 *   p is not below 1 - confidence.
 * - WithinThreshold: significant (interval excludes 0 and p < 1 - confidence) but the point estimate is within
 *   +-threshold: real, and too small to matter.
 * - Regression: significant and the point estimate is beyond the threshold in the bad direction (slower).
 * - Improvement: significant and beyond the threshold in the good direction.
 * - NotTested: the row has no verdict (throughput, CPU, memory, and the percentiles without a verdict).
 *
 * For p50 and the mean both tests must agree (has this statistic moved; do B's calls tend to be slower than A's).
 * For the tail percentiles (p95, p99) the interval alone decides: a tail that grows while most calls stay the same
 * is a real regression that a rank test over all calls would not see.
 */
enum class Verdict {
    NotTested,
    TooFewSamples,
    NoSignificantChange,
    WithinThreshold,
    Improvement,
    Regression,
};

/// "regression", "improvement", "change within threshold", "no significant change", "too few samples", "".
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

/// One line of a comparison: A and B, how they differ, and for tested latencies whether that matters.
struct MetricRow
{
    MetricKind kind = MetricKind::P50;
    QString name; ///< "p50", "p99.9", "mean", "req/s", "client CPU/call", ...
    MetricUnit unit = MetricUnit::Nanoseconds;
    double valueA = 0;
    double valueB = 0;
    double delta = 0; ///< B - A, in the row's unit
    double relativeChange = 0; ///< B / A - 1; NaN when A is 0
    bool lowerIsBetter = true; ///< false for req/s
    bool hasInterval = false; ///< bootstrap holds a confidence interval (latency rows)
    BootstrapResult bootstrap;
    bool hasVerdict = false; ///< p50, p95, p99 and mean; a stream's message p50 and p99
    Verdict verdict = Verdict::NotTested;
    QString reason; ///< for TooFewSamples (or an invalid statistic)

    /**
     * The verdict in one line: "regression: p50 +19.1% (95% CI +17.0 .. +21.3%, Mann-Whitney p < 0.001)",
     * "no significant change: p50 +0.4% (95% CI -1.2 .. +2.0%)", "too few samples: p99 needs ...".
     */
    QString verdictText(const MannWhitneyResult &mannWhitney) const;
};

/// Two runs side by side, B against A (A is the baseline).
struct Comparison
{
    QList<MetricRow> rows;
    /// Of the OK calls' latencies; the same test backs every call latency verdict.
    MannWhitneyResult mannWhitney;
    /// Of the streams' per-message latencies (when both runs have them): backs the message p50's verdict.
    MannWhitneyResult messageMannWhitney;
    bool fromRawSamples = false; ///< latencies compared from raw samples rather than histograms
    double threshold = 0.05;
    double confidence = 0.95;

    /// Regression if p50, p95 or p99 is one; else improvement if any is; else change within threshold if any is;
    /// else no significant change; too few samples when even p50 has too few.
    Verdict overall = Verdict::NotTested;
    QStringList regressions; ///< names of the p50/p95/p99 rows that regressed, e.g. {"p50", "p99"}
    QStringList improvements;

    /// The row of @p kind, or nullptr when the comparison has none (e.g. server CPU without server stats).
    const MetricRow *row(MetricKind kind) const;
    /// The rank test behind @p kind's verdict: the messages' for the message rows, else the calls'.
    const MannWhitneyResult &rankTestFor(MetricKind kind) const;
    /// @p row's verdict in one line, with its own rank test (see MetricRow::verdictText).
    QString verdictText(const MetricRow &row) const { return row.verdictText(rankTestFor(row.kind)); }
    /**
     * The overall verdict in one line, naming the deciding rows: "regression: p50 +19.1% (95% CI +17.0 .. +21.3%,
     * Mann-Whitney p < 0.001); p99 +12.0% (...)", or "no significant change: p50 +0.4% (95% CI -1.2 .. +2.0%)".
     */
    QString verdictLine() const;
};

/**
 * Compares run B against run A (the baseline): p50, p90, p95, p99, p99.9 and mean latency of the OK calls, req/s,
 * client CPU per call, server CPU per call (when both runs have server stats), peak client RSS, peak server RSS
 * (likewise) and error rate; for streaming runs (both with timed messages) also the message p50 and p99 (with
 * verdicts that count in the overall one: a stream's calls can last as long as the stream is told to) and the
 * messages received per second. p50, p95, p99 and mean get a verdict (see Verdict); all latency rows get a bootstrap
 * interval. Deterministic for a given CompareOptions::seed.
 */
Comparison compareRuns(const RunSnapshot &a, const RunSnapshot &b, const CompareOptions &options = {});

/**
 * The same, with the latency rows computed from raw samples (microseconds of the OK calls, e.g. from
 * okLatenciesUs()) rather than the histograms: exact values and ties, at the raw samples' 1 us resolution.
 * Falls back to the histograms when either list is empty.
 */
Comparison compareRuns(const RunSnapshot &a, const RunSnapshot &b, const std::vector<uint32_t> &latenciesUsA,
                       const std::vector<uint32_t> &latenciesUsB, const CompareOptions &options = {});

/// The latencies of the OK calls among @p samples, for the raw-sample comparison.
std::vector<uint32_t> okLatenciesUs(const std::vector<RawSample> &samples);

/// "+19.1%", "-0.4%", "+0.0%"; @p fraction 0.191 = +19.1%. "n/a" for NaN or infinity.
QString formatPercentChange(double fraction, int decimals = 1);
/// "p < 0.001", "p = 0.012", "p = 0.43".
QString formatPValue(double p);

} // namespace rpcscope
