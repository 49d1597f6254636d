#include "comparison.h"

#include <cmath>
#include <limits>

namespace rpcscope {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct LatencySpec
{
    MetricKind kind;
    double percentile; // NaN: the mean
    const char16_t *name;
    bool verdict;
};

// p90 and p99.9 are shown with their interval but decide nothing: the verdict rests on p50, p95 and p99, so the
// chance of a false alarm does not grow with every extra percentile we print.
constexpr LatencySpec kLatencyRows[] = {
    {MetricKind::P50, 50, u"p50", true},   {MetricKind::P90, 90, u"p90", false},
    {MetricKind::P95, 95, u"p95", true},   {MetricKind::P99, 99, u"p99", true},
    {MetricKind::P999, 99.9, u"p99.9", false}, {MetricKind::Mean, kNaN, u"mean", true},
};

bool decidesOverall(MetricKind kind)
{
    return kind == MetricKind::P50 || kind == MetricKind::P95 || kind == MetricKind::P99 || kind == MetricKind::MessageP50
        || kind == MetricKind::MessageP99;
}

/// Rows whose verdict rests on their interval alone (see decide()).
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

Verdict decide(const BootstrapResult &bootstrap, const MannWhitneyResult &mannWhitney, bool lowerIsBetter,
               bool tail, const CompareOptions &options)
{
    if (!bootstrap.valid || bootstrap.tooFewSamples || (!tail && !mannWhitney.valid))
        return Verdict::TooFewSamples;
    // Mann-Whitney asks whether B's calls tend to be slower as a whole: the right second opinion for the median
    // and the mean, the wrong one for a tail (a p99 that doubles while most calls are unchanged is a regression
    // the rank test cannot see). Tail percentiles rest on their own interval.
    const bool significant = bootstrap.excludesZero() && (tail || mannWhitney.pValue < 1 - options.confidence);
    if (!significant)
        return Verdict::NoSignificantChange;
    const double worse = lowerIsBetter ? bootstrap.estimate : -bootstrap.estimate;
    if (worse > options.threshold)
        return Verdict::Regression;
    if (worse < -options.threshold)
        return Verdict::Improvement;
    return Verdict::WithinThreshold;
}

// "p50 +19.1% (95% CI +17.0 .. +21.3%, Mann-Whitney p < 0.001)": the row's part of a verdict line.
QString verdictPart(const MetricRow &row, const MannWhitneyResult &mannWhitney)
{
    if (row.verdict == Verdict::TooFewSamples)
        return row.reason;
    QString text = row.name + u' ' + formatPercentChange(row.relativeChange);
    if (!row.hasInterval)
        return text;
    const auto &b = row.bootstrap;
    text += QStringLiteral(" (%1% CI %2 .. %3%")
                .arg(QString::number(b.confidence * 100, 'g', 3), signedNumber(b.ciLow * 100, 1),
                     signedNumber(b.ciHigh * 100, 1));
    // Mann-Whitney's p is shown whenever it is part of the reason: for every significant verdict, and when the
    // interval alone would have called the change significant.
    if (!isTail(row.kind) && (row.verdict != Verdict::NoSignificantChange || b.excludesZero()))
        text += QStringLiteral(", Mann-Whitney ") + formatPValue(mannWhitney.pValue);
    return text + u')';
}

Comparison compare(const RunSnapshot &a, const RunSnapshot &b, const EmpiricalDistribution &latencyA,
                   const EmpiricalDistribution &latencyB, const MannWhitneyResult &mannWhitney,
                   const CompareOptions &options)
{
    Comparison result;
    result.threshold = options.threshold;
    result.confidence = options.confidence;
    result.mannWhitney = mannWhitney;

    QList<double> percentiles;
    for (const auto &spec : kLatencyRows)
        percentiles.push_back(spec.percentile);
    BootstrapOptions bootstrapOptions;
    bootstrapOptions.replicates = options.replicates;
    bootstrapOptions.confidence = options.confidence;
    bootstrapOptions.seed = options.seed;
    bootstrapOptions.rules = options.rules;
    const QList<BootstrapResult> changes = bootstrapChanges(latencyA, latencyB, percentiles, bootstrapOptions);

    for (qsizetype i = 0; i < changes.size(); ++i) {
        const LatencySpec &spec = kLatencyRows[i];
        const BootstrapResult &change = changes[i];
        MetricRow row = plainRow(spec.kind, QString::fromUtf16(spec.name), MetricUnit::Nanoseconds, change.valueA,
                                 change.valueB, true);
        row.bootstrap = change;
        row.hasInterval = change.valid && !change.tooFewSamples;
        row.reason = change.reason;
        row.hasVerdict = spec.verdict;
        if (spec.verdict)
            row.verdict = decide(change, mannWhitney, true, isTail(spec.kind), options);
        result.rows.push_back(row);
    }

    // Streams: what each message took, from the message histograms, with a rank test of their own.
    if (!a.messageLatency.isEmpty() && !b.messageLatency.isEmpty()) {
        result.messageMannWhitney = rpcscope::mannWhitney(a.messageLatency, b.messageLatency);
        const QList<BootstrapResult> messageChanges
            = bootstrapChanges(EmpiricalDistribution::fromHistogram(a.messageLatency),
                               EmpiricalDistribution::fromHistogram(b.messageLatency), {50, 99}, bootstrapOptions);
        const std::pair<MetricKind, QString> specs[] = {{MetricKind::MessageP50, QStringLiteral("message p50")},
                                                        {MetricKind::MessageP99, QStringLiteral("message p99")}};
        for (qsizetype i = 0; i < messageChanges.size() && i < 2; ++i) {
            const BootstrapResult &change = messageChanges[i];
            MetricRow row = plainRow(specs[i].first, specs[i].second, MetricUnit::Nanoseconds, change.valueA,
                                     change.valueB, true);
            row.bootstrap = change;
            row.hasInterval = change.valid && !change.tooFewSamples;
            row.reason = change.reason;
            row.hasVerdict = true;
            row.verdict = decide(change, result.messageMannWhitney, true, isTail(row.kind), options);
            result.rows.push_back(row);
        }
        result.rows.push_back(plainRow(MetricKind::MessagesPerSecond, QStringLiteral("messages/s"), MetricUnit::PerSecond,
                                       a.messagesReceivedPerSecond(), b.messagesReceivedPerSecond(), false));
    }

    result.rows.push_back(plainRow(MetricKind::RequestsPerSecond, QStringLiteral("req/s"), MetricUnit::PerSecond,
                                   a.requestsPerSecond(), b.requestsPerSecond(), false));
    result.rows.push_back(plainRow(MetricKind::ClientCpuPerCall, QStringLiteral("client CPU/call"),
                                   MetricUnit::Microseconds, a.clientCpuPerCallUs(), b.clientCpuPerCallUs(), true));
    const bool serverStats = a.hasServerStats && b.hasServerStats;
    if (serverStats) {
        result.rows.push_back(plainRow(MetricKind::ServerCpuPerCall, QStringLiteral("server CPU/call"),
                                       MetricUnit::Microseconds, a.serverCpuPerCallUs(), b.serverCpuPerCallUs(),
                                       true));
    }
    result.rows.push_back(plainRow(MetricKind::ClientPeakRss, QStringLiteral("client peak RSS"), MetricUnit::Bytes,
                                   static_cast<double>(a.clientPeakRssBytes),
                                   static_cast<double>(b.clientPeakRssBytes), true));
    if (serverStats) {
        result.rows.push_back(plainRow(MetricKind::ServerPeakRss, QStringLiteral("server peak RSS"),
                                       MetricUnit::Bytes, static_cast<double>(a.serverPeakRssBytes),
                                       static_cast<double>(b.serverPeakRssBytes), true));
    }
    auto errorRate = [](const RunSnapshot &run) {
        const uint64_t calls = run.callsCompleted();
        return calls ? static_cast<double>(run.callsFailed()) / static_cast<double>(calls) : 0.0;
    };
    result.rows.push_back(plainRow(MetricKind::ErrorRate, QStringLiteral("error rate"), MetricUnit::Fraction,
                                   errorRate(a), errorRate(b), true));

    bool anyWithin = false;
    bool anyTested = false;
    for (const auto &row : std::as_const(result.rows)) {
        if (!decidesOverall(row.kind))
            continue;
        if (row.verdict == Verdict::Regression)
            result.regressions << row.name;
        else if (row.verdict == Verdict::Improvement)
            result.improvements << row.name;
        else if (row.verdict == Verdict::WithinThreshold)
            anyWithin = true;
        if (row.verdict != Verdict::TooFewSamples)
            anyTested = true;
    }
    if (!result.regressions.isEmpty())
        result.overall = Verdict::Regression;
    else if (!result.improvements.isEmpty())
        result.overall = Verdict::Improvement;
    else if (anyWithin)
        result.overall = Verdict::WithinThreshold;
    else if (anyTested)
        result.overall = Verdict::NoSignificantChange;
    else
        result.overall = Verdict::TooFewSamples;
    return result;
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
    case Verdict::WithinThreshold:
        return QStringLiteral("change within threshold");
    case Verdict::Improvement:
        return QStringLiteral("improvement");
    case Verdict::Regression:
        return QStringLiteral("regression");
    }
    return {};
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

QString MetricRow::verdictText(const MannWhitneyResult &mannWhitney) const
{
    if (!hasVerdict)
        return {};
    return verdictName(verdict) + QStringLiteral(": ") + verdictPart(*this, mannWhitney);
}

const MannWhitneyResult &Comparison::rankTestFor(MetricKind kind) const
{
    return kind == MetricKind::MessageP50 || kind == MetricKind::MessageP99 ? messageMannWhitney : mannWhitney;
}

const MetricRow *Comparison::row(MetricKind kind) const
{
    for (const auto &r : rows) {
        if (r.kind == kind)
            return &r;
    }
    return nullptr;
}

QString Comparison::verdictLine() const
{
    QStringList parts;
    auto addRows = [&](Verdict verdict) {
        for (const auto &r : rows) {
            if (decidesOverall(r.kind) && r.verdict == verdict)
                parts << verdictPart(r, rankTestFor(r.kind));
        }
    };
    switch (overall) {
    case Verdict::Regression:
    case Verdict::Improvement:
    case Verdict::WithinThreshold:
        addRows(overall);
        break;
    case Verdict::NoSignificantChange:
    case Verdict::TooFewSamples:
    case Verdict::NotTested:
        // p50 speaks for the whole run when nothing stands out.
        if (const MetricRow *p50 = row(MetricKind::P50))
            parts << verdictPart(*p50, mannWhitney);
        break;
    }
    return verdictName(overall) + QStringLiteral(": ") + parts.join(QStringLiteral("; "));
}

Comparison compareRuns(const RunSnapshot &a, const RunSnapshot &b, const CompareOptions &options)
{
    return compare(a, b, EmpiricalDistribution::fromHistogram(a.latency),
                   EmpiricalDistribution::fromHistogram(b.latency), mannWhitney(a.latency, b.latency), options);
}

Comparison compareRuns(const RunSnapshot &a, const RunSnapshot &b, const std::vector<uint32_t> &latenciesUsA,
                       const std::vector<uint32_t> &latenciesUsB, const CompareOptions &options)
{
    if (latenciesUsA.empty() || latenciesUsB.empty())
        return compareRuns(a, b, options);
    const auto distA = EmpiricalDistribution::fromMicroseconds(latenciesUsA);
    const auto distB = EmpiricalDistribution::fromMicroseconds(latenciesUsB);
    Comparison result = compare(a, b, distA, distB, mannWhitney(distA, distB), options);
    result.fromRawSamples = true;
    return result;
}

std::vector<uint32_t> okLatenciesUs(const std::vector<RawSample> &samples)
{
    std::vector<uint32_t> out;
    out.reserve(samples.size());
    for (const auto &s : samples) {
        if (s.status == CallStatus::Ok)
            out.push_back(s.latencyUs);
    }
    return out;
}

} // namespace rpcscope
