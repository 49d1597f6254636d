#include "comparison.h"

#include "compare/replicatetest.h"
#include "util/units.h"

#include <QStringList>

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

namespace rpcscope {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct LatencySpec {
    MetricKind kind;
    double percentile; // NaN: the mean
    const char16_t *name;
    bool verdict;
};

// p90 and p99.9 are shown with their interval but decide nothing: the verdict rests on p50, p95, p99 and the mean
// (Holm-adjusted over those), so the chance of a false alarm does not grow with every percentile we print.
constexpr LatencySpec kLatencyRows[] = {
    { MetricKind::P50, 50, u"p50", true },
    { MetricKind::P90, 90, u"p90", false },
    { MetricKind::P95, 95, u"p95", true },
    { MetricKind::P99, 99, u"p99", true },
    { MetricKind::P999, 99.9, u"p99.9", false },
    { MetricKind::Mean, kNaN, u"mean", true },
};

/// Rows whose per-call verdict rests on their interval alone (see decidePerCall()).
bool isTail(MetricKind kind)
{
    return kind == MetricKind::P95 || kind == MetricKind::P99 || kind == MetricKind::MessageP99;
}

QString signedNumber(double value, int decimals)
{
    QString text = QString::number(value, 'f', decimals);
    if (text.startsWith(u'-')) {
        // "-0.0" says a direction the number does not have.
        bool onlyZeros = true;
        for (const QChar c : QStringView(text).mid(1)) {
            if (c != u'0' && c != u'.')
                onlyZeros = false;
        }
        return onlyZeros ? text.mid(1).prepend(u'+') : text;
    }
    return text.prepend(u'+');
}

double geometricMean(const std::vector<double> &values)
{
    double logs = 0;
    for (const double v : values)
        logs += std::log(v);
    return values.empty() ? kNaN : std::exp(logs / static_cast<double>(values.size()));
}

double relative(double a, double b)
{
    return a != 0 ? b / a - 1 : kNaN;
}

MetricRow plainRow(MetricKind kind, const QString &name, MetricUnit unit, double a, double b, bool lowerIsBetter)
{
    MetricRow row;
    row.kind = kind;
    row.name = name;
    row.unit = unit;
    row.valueA = a;
    row.valueB = b;
    row.delta = b - a;
    row.relativeChange = relative(a, b);
    row.lowerIsBetter = lowerIsBetter;
    return row;
}

uint64_t requiredCalls(double percentile, const SampleRules &rules)
{
    uint64_t required = rules.minSamples;
    if (!std::isnan(percentile) && percentile > 0 && percentile < 100) {
        const double tail = rules.minTailSamples / (1.0 - percentile / 100.0);
        required = std::max(required, static_cast<uint64_t>(std::ceil(tail - 1e-6)));
    }
    return required;
}

/// NaN for a side without a sample (no OK call): not measured, never 0 ns.
double statisticOf(const LatencyHistogram &h, double percentile)
{
    if (h.count() == 0)
        return kNaN;
    return std::isnan(percentile) ? h.mean() : static_cast<double>(h.percentile(percentile));
}

/// "B has no OK call", "A and B have no OK call"; empty when both sides have some (@p a and @p b: the pooled
/// histograms of a latency row).
QString sidesWithoutSamples(const LatencyHistogram &a, const LatencyHistogram &b, bool messages)
{
    const QString what = messages ? QStringLiteral("no message timed") : QStringLiteral("no OK call");
    if (a.count() == 0 && b.count() == 0)
        return QStringLiteral("A and B have ") + what;
    if (a.count() == 0 || b.count() == 0)
        return (a.count() == 0 ? QStringLiteral("A has ") : QStringLiteral("B has ")) + what;
    return {};
}

QString unitSingular(ReplicateUnit unit)
{
    switch (unit) {
    case ReplicateUnit::Call:
        return QStringLiteral("call");
    case ReplicateUnit::Block:
        return QStringLiteral("block");
    case ReplicateUnit::ServerProcess:
        return QStringLiteral("server process");
    case ReplicateUnit::ClientProcess:
        return QStringLiteral("client process");
    case ReplicateUnit::Run:
        return QStringLiteral("run");
    }
    return {};
}

// The per-call verdict of the first version, kept for perCallWhenSingleRun: a bootstrap interval over calls, and for
// p50 and the mean Mann-Whitney too.
Verdict decidePerCall(
    const BootstrapResult &bootstrap, const MannWhitneyResult &mannWhitney, bool tail, const CompareOptions &options)
{
    if (!bootstrap.valid || bootstrap.tooFewSamples || (!tail && !mannWhitney.valid))
        return Verdict::TooFewSamples;
    const bool significant = bootstrap.excludesZero() && (tail || mannWhitney.pValue < 1 - options.confidence);
    if (!significant)
        return Verdict::NoSignificantChange;
    if (bootstrap.estimate > options.threshold)
        return Verdict::Regression;
    if (bootstrap.estimate < -options.threshold)
        return Verdict::Improvement;
    return Verdict::WithinThreshold;
}

struct RowSpec {
    MetricKind kind;
    double percentile;
    QString name;
    bool verdict;
    bool messages; // of the message histograms
};

QList<RowSpec> latencySpecs(bool streams)
{
    QList<RowSpec> specs;
    for (const auto &spec : kLatencyRows)
        specs.push_back({ spec.kind, spec.percentile, QString::fromUtf16(spec.name), spec.verdict, false });
    if (streams) {
        specs.push_back({ MetricKind::MessageP50, 50, QStringLiteral("message p50"), true, true });
        specs.push_back({ MetricKind::MessageP99, 99, QStringLiteral("message p99"), true, true });
    }
    return specs;
}

/// @p row judged on its replicates by @p change (valid): its interval, and its values what the interval compares.
void takeChange(const ReplicateChange &change, const CompareOptions &options, MetricRow *row)
{
    row->hasInterval = true;
    row->interval.valid = true;
    row->interval.estimate = change.estimate;
    row->interval.ciLow = change.ciLow;
    row->interval.ciHigh = change.ciHigh;
    row->interval.confidence = options.confidence;
    row->interval.pValue = change.pValue;
    // One estimate per metric: A and B become what the interval compares (the replicates' geometric means, whose
    // ratio is its estimate); the pooled statistic stays beside them, labelled as such where shown.
    row->pooledA = row->valueA;
    row->pooledB = row->valueB;
    row->valueA = geometricMean(row->replicatesA);
    row->valueB = geometricMean(row->replicatesB);
    row->delta = row->valueB - row->valueA;
    row->relativeChange = change.estimate;
}

/// Each replicate's CPU per call in us (@p server: the server's, else the client's); empty when any replicate's was
/// not measured (then the row is shown unjudged, as before).
std::vector<double> cpuPerCall(const CompareSide &side, bool server)
{
    std::vector<double> values;
    for (const CompareSide::Replicate &r : side.replicates) {
        const double seconds = server ? r.serverCpuSeconds : r.clientCpuSeconds;
        if (!(seconds > 0) || r.calls == 0)
            return {};
        values.push_back(seconds * 1e6 / static_cast<double>(r.calls));
    }
    return values;
}

/// Whether @p a and @p b are the two sides of one A/B run whose replicates pair up: blocks, or processes started
/// anew, with the same labels in the same order (a run stopped between a pair's two blocks has one side longer: it
/// is judged unpaired).
bool pairedSides(const CompareSide &a, const CompareSide &b)
{
    if (a.total.abRunId.isEmpty() || a.total.abRunId != b.total.abRunId || a.unit != b.unit
        || (a.unit != ReplicateUnit::Block && a.unit != ReplicateUnit::ServerProcess
            && a.unit != ReplicateUnit::ClientProcess)
        || a.replicates.size() != b.replicates.size() || a.replicates.size() < 2)
        return false;
    for (size_t i = 0; i < a.replicates.size(); ++i)
        if (a.replicates[i].label != b.replicates[i].label)
            return false;
    return true;
}

/// A row's change from its replicates: pair by pair when the sides pair up, else Welch's t.
ReplicateChange judgeChange(const MetricRow &row, bool paired, const CompareOptions &options)
{
    return paired ? pairedLogChange(row.replicatesA, row.replicatesB, options.confidence)
                  : welchLogChange(row.replicatesA, row.replicatesB, options.confidence);
}

// CPU per call judged as latency is (issue 37): what a slowdown changes, and far less disturbed by other programs
// than waiting for a CPU is. Server and client, each on the same replicates, in the same Holm family.
void cpuRows(const CompareSide &a, const CompareSide &b, bool paired, const CompareOptions &options,
    QList<MetricRow> *rows, QList<ReplicateChange> *changes)
{
    for (const bool server : { true, false }) {
        std::vector<double> valuesA = cpuPerCall(a, server);
        std::vector<double> valuesB = cpuPerCall(b, server);
        if (valuesA.size() < 2 || valuesB.size() < 2)
            continue;
        MetricRow row = server
            ? plainRow(MetricKind::ServerCpuPerCall, QStringLiteral("server CPU/call"), MetricUnit::Microseconds,
                a.total.serverCpuPerCallUs(), b.total.serverCpuPerCallUs(), true)
            : plainRow(MetricKind::ClientCpuPerCall, QStringLiteral("client CPU/call"), MetricUnit::Microseconds,
                a.total.clientCpuPerCallUs(), b.total.clientCpuPerCallUs(), true);
        // In a client command's A/B the client is what is judged: the server's CPU per call is shown with its
        // interval, not judged, since a slower client leaves the server more time between calls, and waking up
        // for each costs it CPU of its own (seen: +24% for the same server under a pure-Python protobuf client).
        const bool clientsCompared = a.unit == ReplicateUnit::ClientProcess || b.unit == ReplicateUnit::ClientProcess;
        row.hasVerdict = !(server && clientsCompared);
        if (!row.hasVerdict)
            row.reason = QStringLiteral("server CPU/call is not judged when client commands are compared: a slower "
                                        "client leaves the server more time between calls, which costs it CPU too");
        row.replicatesA = std::move(valuesA);
        row.replicatesB = std::move(valuesB);
        const ReplicateChange change = judgeChange(row, paired, options);
        if (change.valid)
            takeChange(change, options, &row);
        else
            row.reason = row.name + u' ' + change.reason;
        rows->push_back(row);
        changes->push_back(change);
    }
}

// Latency rows judged on replicates: each statistic per replicate, Welch's t on their logs (a paired t on their log
// ratios when the sides pair up), Holm over the verdicts.
void replicateRows(const CompareSide &a, const CompareSide &b, const QList<RowSpec> &specs,
    const CompareOptions &options, Comparison *result)
{
    const double alpha = 1 - options.confidence;
    QList<MetricRow> rows;
    QList<ReplicateChange> changes;
    for (const RowSpec &spec : specs) {
        const LatencyHistogram &pooledA = spec.messages ? a.total.messageLatency : a.total.latency;
        const LatencyHistogram &pooledB = spec.messages ? b.total.messageLatency : b.total.latency;
        MetricRow row = plainRow(spec.kind, spec.name, MetricUnit::Nanoseconds, statisticOf(pooledA, spec.percentile),
            statisticOf(pooledB, spec.percentile), true);
        row.hasVerdict = spec.verdict;
        const uint64_t required = requiredCalls(spec.percentile, options.rules);
        QStringList shortSides;
        for (const auto &[side, name] : { std::pair(&a, QStringLiteral("A")), std::pair(&b, QStringLiteral("B")) }) {
            uint64_t fewest = std::numeric_limits<uint64_t>::max();
            for (const auto &replicate : side->replicates) {
                const LatencyHistogram &h = spec.messages ? replicate.messageLatency : replicate.latency;
                fewest = std::min(fewest, h.count());
                if (h.count() >= required)
                    (side == &a ? row.replicatesA : row.replicatesB).push_back(statisticOf(h, spec.percentile));
            }
            if (fewest < required)
                shortSides << QStringLiteral("%1's smallest has %2").arg(name).arg(fewest);
        }
        ReplicateChange change;
        if (const QString missing = sidesWithoutSamples(pooledA, pooledB, spec.messages); !missing.isEmpty()) {
            row.reason = missing;
        } else if (!shortSides.isEmpty()) {
            // A percentile is estimated inside each replicate: a tail needs enough calls in every one of them.
            row.reason = QStringLiteral("%1 needs at least %2 %3 per %4 (%5): use fewer, longer blocks or more calls")
                             .arg(row.name)
                             .arg(required)
                             .arg(spec.messages ? QStringLiteral("messages") : QStringLiteral("OK calls"),
                                 unitSingular(a.unit == b.unit ? a.unit : ReplicateUnit::Block),
                                 shortSides.join(QStringLiteral(", ")));
        } else {
            change = judgeChange(row, result->paired, options);
            if (!change.valid)
                row.reason = row.name + u' ' + change.reason;
        }
        if (change.valid)
            takeChange(change, options, &row);
        rows.push_back(row);
        changes.push_back(change);
    }
    cpuRows(a, b, result->paired, options, &rows, &changes);

    std::vector<double> pValues;
    for (const MetricRow &row : std::as_const(rows))
        pValues.push_back(row.hasVerdict && row.interval.valid ? row.interval.pValue : kNaN);
    const std::vector<double> adjusted = holmAdjust(pValues);
    int family = 0;
    for (const double p : pValues)
        family += std::isnan(p) ? 0 : 1;
    result->testedMetrics = family;
    for (qsizetype i = 0; i < rows.size(); ++i) {
        MetricRow &row = rows[i];
        if (row.interval.valid) {
            // Bonferroni's share is Holm's strictest step: a change this large is found even when it is the only one.
            row.interval.detectable = minimumDetectableChange(changes[i].standardError, changes[i].degreesOfFreedom,
                row.hasVerdict ? alpha / std::max(family, 1) : alpha);
        }
        if (!row.hasVerdict)
            continue;
        if (!row.interval.valid) {
            row.verdict = Verdict::TooFewSamples;
            continue;
        }
        row.interval.pAdjusted = adjusted[static_cast<size_t>(i)];
        if (row.interval.pAdjusted < alpha) {
            if (row.interval.estimate > options.threshold)
                row.verdict = Verdict::Regression;
            else if (row.interval.estimate < -options.threshold)
                row.verdict = Verdict::Improvement;
            else
                row.verdict = Verdict::WithinThreshold;
        } else {
            const bool sensitive = options.threshold <= 0 || !(row.interval.detectable > options.threshold);
            row.verdict = sensitive ? Verdict::NoSignificantChange : Verdict::Inconclusive;
        }
    }
    result->rows += rows;
}

// One run a side, each call a sample (perCallWhenSingleRun); or, without it, the estimates and no verdict.
void perCallRows(const CompareSide &a, const CompareSide &b, const QList<RowSpec> &specs, const CompareOptions &options,
    Comparison *result)
{
    const bool raw = !a.rawLatenciesUs.empty() && !b.rawLatenciesUs.empty();
    const EmpiricalDistribution distA = raw ? EmpiricalDistribution::fromMicroseconds(a.rawLatenciesUs)
                                            : EmpiricalDistribution::fromHistogram(a.total.latency);
    const EmpiricalDistribution distB = raw ? EmpiricalDistribution::fromMicroseconds(b.rawLatenciesUs)
                                            : EmpiricalDistribution::fromHistogram(b.total.latency);
    BootstrapOptions bootstrapOptions;
    bootstrapOptions.replicates = options.replicates;
    bootstrapOptions.confidence = options.confidence;
    bootstrapOptions.seed = options.seed;
    bootstrapOptions.rules = options.rules;
    QList<double> callPercentiles;
    QList<double> messagePercentiles;
    for (const RowSpec &spec : specs)
        (spec.messages ? messagePercentiles : callPercentiles).push_back(spec.percentile);
    QList<BootstrapResult> changes;
    if (options.perCallWhenSingleRun) {
        result->perCall = true;
        result->fromRawSamples = raw;
        result->mannWhitney = mannWhitney(distA, distB);
        changes = bootstrapChanges(distA, distB, callPercentiles, bootstrapOptions);
        if (!messagePercentiles.isEmpty()) {
            const auto messagesA = EmpiricalDistribution::fromHistogram(a.total.messageLatency);
            const auto messagesB = EmpiricalDistribution::fromHistogram(b.total.messageLatency);
            result->messageMannWhitney = mannWhitney(messagesA, messagesB);
            changes += bootstrapChanges(messagesA, messagesB, messagePercentiles, bootstrapOptions);
        }
    }
    for (qsizetype i = 0; i < specs.size(); ++i) {
        const RowSpec &spec = specs[i];
        const LatencyHistogram &pooledA = spec.messages ? a.total.messageLatency : a.total.latency;
        const LatencyHistogram &pooledB = spec.messages ? b.total.messageLatency : b.total.latency;
        const bool exact = raw && !spec.messages;
        // Raw samples give exact values (the mean too: percentile() takes no NaN); else the pooled histograms.
        auto value = [&](const EmpiricalDistribution &dist, const LatencyHistogram &pooled) {
            if (!exact)
                return statisticOf(pooled, spec.percentile);
            return std::isnan(spec.percentile) ? dist.mean() : dist.percentile(spec.percentile);
        };
        MetricRow row = plainRow(
            spec.kind, spec.name, MetricUnit::Nanoseconds, value(distA, pooledA), value(distB, pooledB), true);
        row.hasVerdict = spec.verdict;
        if (const QString missing = sidesWithoutSamples(pooledA, pooledB, spec.messages); !missing.isEmpty()) {
            row.valueA = statisticOf(pooledA, spec.percentile); // raw samples or not, a side without any is unknown
            row.valueB = statisticOf(pooledB, spec.percentile);
            row.delta = row.relativeChange = kNaN;
            if (row.hasVerdict) {
                row.verdict = Verdict::TooFewSamples;
                row.reason = missing;
            }
            result->rows.push_back(row);
            continue;
        }
        if (!options.perCallWhenSingleRun) {
            if (row.hasVerdict) {
                row.verdict = Verdict::Inconclusive;
                row.reason = QStringLiteral("one run per side");
            }
            result->rows.push_back(row);
            continue;
        }
        const BootstrapResult &change = changes[i];
        const MannWhitneyResult &rank = spec.messages ? result->messageMannWhitney : result->mannWhitney;
        row.hasInterval = change.valid && !change.tooFewSamples;
        row.interval.valid = row.hasInterval;
        row.interval.estimate = change.estimate;
        row.interval.ciLow = change.ciLow;
        row.interval.ciHigh = change.ciHigh;
        row.interval.confidence = change.confidence;
        if (!isTail(spec.kind) && rank.valid)
            row.interval.pValue = rank.pValue;
        row.reason = change.reason;
        if (row.hasVerdict)
            row.verdict = decidePerCall(change, rank, isTail(spec.kind), options);
        result->rows.push_back(row);
    }
}

// "p50 +19.1% (95% CI +17.0 .. +21.3%, p < 0.001)": the row's part of a verdict line.
QString verdictPart(const MetricRow &row, const Comparison &comparison)
{
    if (row.verdict == Verdict::TooFewSamples)
        return row.reason;
    QString text = row.name + u' ' + formatPercentChange(row.hasInterval ? row.interval.estimate : row.relativeChange);
    if (!row.hasInterval)
        return text;
    const ChangeInterval &i = row.interval;
    text += QStringLiteral(" (%1% CI %2 .. %3%")
                .arg(QString::number(i.confidence * 100, 'g', 3), signedNumber(i.ciLow * 100, 1),
                    signedNumber(i.ciHigh * 100, 1));
    if (comparison.perCall) {
        if (!isTail(row.kind) && !std::isnan(i.pValue)
            && (row.verdict != Verdict::NoSignificantChange || i.excludesZero()))
            text += QStringLiteral(", Mann-Whitney ") + formatPValue(i.pValue);
    } else if (i.lostToCorrection()) {
        // The interval alone says "changed"; the verdict, Holm-adjusted over the family, does not: both are said.
        return text
            + QStringLiteral("; %1 for this metric alone, %2 after Holm's correction over %3 metrics)")
                  .arg(formatPValue(i.pValue), formatPValue(i.pAdjusted))
                  .arg(comparison.testedMetrics);
    } else if (!std::isnan(i.pAdjusted)) {
        text += QStringLiteral(", ") + formatPValue(i.pAdjusted);
    }
    return text + u')';
}

} // namespace

QString verdictName(Verdict verdict)
{
    switch (verdict) {
    case Verdict::NotTested:
        return {};
    case Verdict::TooFewSamples:
        return QStringLiteral("too few samples");
    case Verdict::NoSignificantChange:
        return QStringLiteral("no significant change");
    case Verdict::Inconclusive:
        return QStringLiteral("inconclusive");
    case Verdict::WithinThreshold:
        return QStringLiteral("change within threshold");
    case Verdict::Improvement:
        return QStringLiteral("improvement");
    case Verdict::Regression:
        return QStringLiteral("regression");
    }
    return {};
}

QString replicateCountText(ReplicateUnit unit, qint64 count)
{
    QString name = unitSingular(unit);
    if (count != 1)
        name += unit == ReplicateUnit::ServerProcess || unit == ReplicateUnit::ClientProcess ? QStringLiteral("es")
                                                                                             : QStringLiteral("s");
    return QString::number(count) + u' ' + name;
}

QString formatPercentChange(double fraction, int decimals)
{
    if (!std::isfinite(fraction))
        return QStringLiteral("n/a");
    return signedNumber(fraction * 100, decimals) + u'%';
}

QString formatPValue(double p)
{
    if (p < 0.001)
        return QStringLiteral("p < 0.001");
    if (p < 0.01)
        return QStringLiteral("p = ") + QString::number(p, 'f', 3);
    return QStringLiteral("p = ") + QString::number(p, 'f', 2);
}

const MetricRow *Comparison::row(MetricKind kind) const
{
    for (const auto &r : rows) {
        if (r.kind == kind)
            return &r;
    }
    return nullptr;
}

QString Comparison::basis() const
{
    if (perCall) {
        return QStringLiteral("one run per side, each call a sample (%1 vs %2 calls): run-to-run noise is not counted")
            .arg(replicatesA)
            .arg(replicatesB);
    }
    if (singleRun)
        return QStringLiteral("one run per side: nothing measures how much runs differ");
    QString text = paired ? QStringLiteral("%1 pairs of %2, run side by side")
                                .arg(replicatesA)
                                .arg(replicateCountText(unitA, replicatesA).section(u' ', 1, -1))
        : unitA == unitB
        ? QStringLiteral("%1 vs %2").arg(replicatesA).arg(replicateCountText(unitB, replicatesB))
        : replicateCountText(unitA, replicatesA) + QStringLiteral(" vs ") + replicateCountText(unitB, replicatesB);
    if (!connectionA.isEmpty() && connectionA == connectionB)
        text += QStringLiteral(" (connection %1)")
                    .arg(connectionA == u"kept" ? QStringLiteral("kept across blocks")
                                                : QStringLiteral("dialled per block"));
    if (testedMetrics > 1)
        text += QStringLiteral(", p Holm-adjusted over %1 metrics").arg(testedMetrics);
    return text;
}

QString Comparison::narrowedBy() const
{
    switch (unitA == unitB ? unitA : ReplicateUnit::Block) {
    case ReplicateUnit::ServerProcess:
        return QStringLiteral("more server processes, --restarts");
    case ReplicateUnit::ClientProcess:
        return QStringLiteral("more client processes, --restarts");
    case ReplicateUnit::Run:
        return QStringLiteral("more runs a side");
    case ReplicateUnit::Block:
        return QStringLiteral("more blocks: a longer run");
    case ReplicateUnit::Call:
        break;
    }
    return QStringLiteral("a longer run");
}

QString Comparison::processSpreadNote() const
{
    const MetricRow *p50 = row(MetricKind::P50);
    if (!p50)
        return {};
    QStringList notes;
    for (const auto &[unit, values, side] : { std::tuple(unitA, &p50->replicatesA, QStringLiteral("A")),
             std::tuple(unitB, &p50->replicatesB, QStringLiteral("B")) }) {
        if ((unit != ReplicateUnit::ServerProcess && unit != ReplicateUnit::ClientProcess) || values->size() < 2)
            continue;
        const auto [low, high] = std::minmax_element(values->cbegin(), values->cend());
        if (!(*low > 0) || *high / *low <= 1.25)
            continue;
        QStringList shown;
        for (const double v : *values)
            shown << formatNanos(v);
        notes << QStringLiteral("%1's %2 differ from each other: p50 %3")
                     .arg(side,
                         unit == ReplicateUnit::ServerProcess ? QStringLiteral("server processes")
                                                              : QStringLiteral("client processes"),
                         shown.join(QStringLiteral(", ")));
    }
    if (notes.isEmpty())
        return {};
    return notes.join(QStringLiteral("; "))
        + QStringLiteral(
            ". The noise is between processes, not calls: more calls in each will not narrow it, more processes will "
            "(--restarts)");
}

QString Comparison::verdictText(const MetricRow &row) const
{
    if (!row.hasVerdict)
        return {};
    return verdictName(row.verdict) + QStringLiteral(": ") + verdictPart(row, *this);
}

QString Comparison::verdictLine() const
{
    QStringList parts;
    auto addRows = [&](Verdict verdict) {
        for (const auto &r : rows) {
            if (r.hasVerdict && r.verdict == verdict)
                parts << verdictPart(r, *this);
        }
    };
    const MetricRow *p50 = row(MetricKind::P50);
    QString lead = verdictName(overall) + QStringLiteral(": ");
    QString tail;
    if (overall == Verdict::TooFewSamples && p50 && (std::isnan(p50->valueA) || std::isnan(p50->valueB)))
        return lead + p50->reason + QStringLiteral(": no latency to compare (see the error rate)");
    if (singleRun && !perCall) {
        lead += QStringLiteral("one run per side: ");
        if (p50)
            parts << p50->name + u' ' + formatPercentChange(p50->relativeChange);
        tail = QStringLiteral("; the change may be run-to-run noise; use ab, or several runs a side "
                              "(compare 3,4,5 6,7,8 or label:NAME)");
        return lead + parts.join(QStringLiteral("; ")) + tail;
    }
    switch (overall) {
    case Verdict::Regression:
    case Verdict::Improvement:
    case Verdict::WithinThreshold:
        addRows(overall);
        break;
    case Verdict::Inconclusive:
        lead += QStringLiteral("noise too high for the %1 threshold (%2 would narrow it): ")
                    .arg(formatPercentChange(threshold).mid(1), narrowedBy());
        [[fallthrough]];
    case Verdict::NoSignificantChange:
    case Verdict::TooFewSamples:
    case Verdict::NotTested:
        // p50 speaks for the whole run when nothing stands out.
        if (p50)
            parts << verdictPart(*p50, *this);
        if (p50 && p50->hasInterval && std::isfinite(p50->interval.detectable))
            tail = QStringLiteral("; could detect changes above %1")
                       .arg(formatPercentChange(p50->interval.detectable).mid(1));
        break;
    }
    return lead + parts.join(QStringLiteral("; ")) + tail + QStringLiteral(" [") + basis() + u']';
}

CompareSide CompareSide::fromRun(const RunSnapshot &run, std::vector<uint32_t> rawLatenciesUs)
{
    CompareSide side;
    side.total = run;
    side.rawLatenciesUs = std::move(rawLatenciesUs);
    if (run.blocks.size() < 2)
        return side;
    std::vector<int> processes;
    for (const RunBlock &block : run.blocks) {
        if (std::find(processes.cbegin(), processes.cend(), block.process) == processes.cend())
            processes.push_back(block.process);
    }
    if (processes.size() > 1) {
        // Blocks served by one process share its placement and memory layout: the process is the replicate.
        side.unit = run.blocksByClient ? ReplicateUnit::ClientProcess : ReplicateUnit::ServerProcess;
        for (const int process : processes) {
            Replicate replicate;
            replicate.label = QStringLiteral("process %1").arg(process);
            replicate.serverCpuSeconds = replicate.clientCpuSeconds = 0;
            for (const RunBlock &block : run.blocks) {
                if (block.process == process) {
                    replicate.latency.merge(block.latency);
                    replicate.messageLatency.merge(block.messageLatency);
                    replicate.calls += block.calls;
                    // A block not measured leaves its process's CPU unknown (NaN), not short.
                    replicate.serverCpuSeconds += block.serverCpuSeconds >= 0 ? block.serverCpuSeconds : kNaN;
                    replicate.clientCpuSeconds += block.clientCpuSeconds >= 0 ? block.clientCpuSeconds : kNaN;
                }
            }
            side.replicates.push_back(std::move(replicate));
        }
        return side;
    }
    side.unit = ReplicateUnit::Block;
    for (const RunBlock &block : run.blocks)
        side.replicates.push_back({ QStringLiteral("block %1").arg(block.round), block.latency, block.messageLatency,
            block.serverCpuSeconds >= 0 ? block.serverCpuSeconds : kNaN,
            block.clientCpuSeconds >= 0 ? block.clientCpuSeconds : kNaN, block.calls });
    return side;
}

CompareSide CompareSide::fromRuns(const QList<RunSnapshot> &runs)
{
    if (runs.size() == 1)
        return fromRun(runs.first());
    CompareSide side;
    side.unit = ReplicateUnit::Run;
    side.runs = static_cast<int>(runs.size());
    for (qsizetype i = 0; i < runs.size(); ++i) {
        appendRun(side.total, runs[i]);
        const RunSnapshot &run = runs[i];
        side.replicates.push_back({ QStringLiteral("run %1").arg(i + 1), run.latency, run.messageLatency,
            run.hasServerStats && !run.serverCpuInTicks ? run.serverCpuSeconds : kNaN,
            run.clientCpuSeconds > 0 ? run.clientCpuSeconds : kNaN, run.callsCompleted() });
    }
    side.total.blocks.clear();
    return side;
}

Comparison compareSides(const CompareSide &a, const CompareSide &b, const CompareOptions &options)
{
    Comparison result;
    result.threshold = options.threshold;
    result.confidence = options.confidence;
    result.runsA = a.runs;
    result.runsB = b.runs;
    result.connectionA = a.unit == ReplicateUnit::Block || a.unit == ReplicateUnit::ServerProcess
        ? a.total.blocksConnection
        : QString();
    result.connectionB = b.unit == ReplicateUnit::Block || b.unit == ReplicateUnit::ServerProcess
        ? b.total.blocksConnection
        : QString();
    const bool streams = !a.total.messageLatency.isEmpty() && !b.total.messageLatency.isEmpty();
    const QList<RowSpec> specs = latencySpecs(streams);
    result.singleRun = a.replicates.size() < 2 || b.replicates.size() < 2;
    if (result.singleRun) {
        result.unitA = result.unitB = ReplicateUnit::Call;
        result.replicatesA = static_cast<qint64>(a.total.latency.count());
        result.replicatesB = static_cast<qint64>(b.total.latency.count());
        perCallRows(a, b, specs, options, &result);
    } else {
        result.unitA = a.unit;
        result.unitB = b.unit;
        result.replicatesA = static_cast<qint64>(a.replicates.size());
        result.replicatesB = static_cast<qint64>(b.replicates.size());
        result.paired = pairedSides(a, b);
        replicateRows(a, b, specs, options, &result);
    }
    // Latency rows first, then the message rate (streams), then the rest.
    const RunSnapshot &ta = a.total;
    const RunSnapshot &tb = b.total;
    if (streams) {
        result.rows.push_back(plainRow(MetricKind::MessagesPerSecond, QStringLiteral("messages/s"),
            MetricUnit::PerSecond, ta.messagesReceivedPerSecond(), tb.messagesReceivedPerSecond(), false));
    }
    // A side where no call ended OK has no throughput to speak of: how fast its calls failed is not one.
    auto okRate = [](const RunSnapshot &run) { return run.callsOk() > 0 ? run.requestsPerSecond() : kNaN; };
    result.rows.push_back(plainRow(
        MetricKind::RequestsPerSecond, QStringLiteral("req/s"), MetricUnit::PerSecond, okRate(ta), okRate(tb), false));
    // A run always spends some CPU and memory: zero means not measured (an imported report), shown as unknown.
    auto measured = [](double value) { return value > 0 ? value : kNaN; };
    // Judged on replicates above when every replicate had them measured; else shown as measured, unjudged.
    if (!result.row(MetricKind::ClientCpuPerCall))
        result.rows.push_back(plainRow(MetricKind::ClientCpuPerCall, QStringLiteral("client CPU/call"),
            MetricUnit::Microseconds, measured(ta.clientCpuPerCallUs()), measured(tb.clientCpuPerCallUs()), true));
    const bool serverStats = ta.hasServerStats && tb.hasServerStats;
    if (serverStats && !result.row(MetricKind::ServerCpuPerCall)) {
        result.rows.push_back(plainRow(MetricKind::ServerCpuPerCall, QStringLiteral("server CPU/call"),
            MetricUnit::Microseconds, ta.serverCpuPerCallUs(), tb.serverCpuPerCallUs(), true));
    }
    result.rows.push_back(plainRow(MetricKind::ClientPeakRss, QStringLiteral("client peak RSS"), MetricUnit::Bytes,
        measured(static_cast<double>(ta.clientPeakRssBytes)), measured(static_cast<double>(tb.clientPeakRssBytes)),
        true));
    if (serverStats) {
        result.rows.push_back(plainRow(MetricKind::ServerPeakRss, QStringLiteral("server peak RSS"), MetricUnit::Bytes,
            static_cast<double>(ta.serverPeakRssBytes), static_cast<double>(tb.serverPeakRssBytes), true));
    }
    auto errorRate = [](const RunSnapshot &run) {
        const uint64_t calls = run.callsCompleted();
        return calls ? static_cast<double>(run.callsFailed()) / static_cast<double>(calls) : 0.0;
    };
    result.rows.push_back(plainRow(
        MetricKind::ErrorRate, QStringLiteral("error rate"), MetricUnit::Fraction, errorRate(ta), errorRate(tb), true));

    bool anyWithin = false;
    bool anySensitive = false;
    bool anyInconclusive = false;
    for (const auto &row : std::as_const(result.rows)) {
        if (!row.hasVerdict)
            continue;
        if (row.verdict == Verdict::Regression)
            result.regressions << row.name;
        else if (row.verdict == Verdict::Improvement)
            result.improvements << row.name;
        else if (row.verdict == Verdict::WithinThreshold)
            anyWithin = true;
        else if (row.verdict == Verdict::NoSignificantChange)
            anySensitive = true;
        else if (row.verdict == Verdict::Inconclusive)
            anyInconclusive = true;
    }
    const MetricRow *p50 = result.row(MetricKind::P50);
    if (!result.regressions.isEmpty())
        result.overall = Verdict::Regression;
    else if (!result.improvements.isEmpty())
        result.overall = Verdict::Improvement;
    else if (anyWithin)
        result.overall = Verdict::WithinThreshold;
    else if (p50 && (p50->verdict == Verdict::NoSignificantChange || p50->verdict == Verdict::Inconclusive))
        result.overall = p50->verdict; // the median speaks for the run; a noisy tail alone does not make it unknown
    else if (anySensitive)
        result.overall = Verdict::NoSignificantChange;
    else if (anyInconclusive)
        result.overall = Verdict::Inconclusive;
    else
        result.overall = Verdict::TooFewSamples;
    return result;
}

Comparison compareRuns(const RunSnapshot &a, const RunSnapshot &b, const CompareOptions &options)
{
    return compareSides(CompareSide::fromRun(a), CompareSide::fromRun(b), options);
}

Comparison compareRuns(const RunSnapshot &a, const RunSnapshot &b, const std::vector<uint32_t> &latenciesUsA,
    const std::vector<uint32_t> &latenciesUsB, const CompareOptions &options)
{
    return compareSides(CompareSide::fromRun(a, latenciesUsA), CompareSide::fromRun(b, latenciesUsB), options);
}

std::vector<uint32_t> okLatenciesUs(const std::vector<RawSample> &samples, const ExpectedStatuses &expected)
{
    std::vector<uint32_t> out;
    out.reserve(samples.size());
    for (const auto &s : samples) {
        if (expected.has(static_cast<int>(s.status)))
            out.push_back(s.latencyUs);
    }
    return out;
}

} // namespace rpcscope
