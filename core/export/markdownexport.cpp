#include "markdownexport.h"

#include "report/comparereport.h"
#include "util/units.h"

#include <algorithm>

namespace rpcscope {

namespace {

QString cell(QString text)
{
    text.replace(QStringLiteral("\\"), QStringLiteral("\\\\"));
    text.replace(QStringLiteral("|"), QStringLiteral("\\|"));
    text.replace(QStringLiteral("\r\n"), QStringLiteral(" "));
    text.replace(u'\n', u' ');
    text.replace(u'\r', u' ');
    return text.trimmed();
}

QString versionOf(const RunRecord &run)
{
    QStringList parts;
    const QString rpcscope = run.environment.value(QStringLiteral("rpcscope")).toString();
    const QString protobuf = run.environment.value(QStringLiteral("protobuf")).toString();
    if (!rpcscope.isEmpty())
        parts << QStringLiteral("rpcscope ") + rpcscope;
    if (!protobuf.isEmpty())
        parts << QStringLiteral("protobuf ") + protobuf;
    return parts.join(QStringLiteral(", "));
}

QString latency(const LatencyHistogram &h, double percentile)
{
    return h.isEmpty() ? QStringLiteral("-") : formatNanos(static_cast<double>(h.percentile(percentile)));
}

} // namespace

QString runsMarkdownTable(const QList<RunRecord> &runs)
{
    // Streaming runs add their messages, in columns to the right ("-" for the unary runs beside them).
    const bool streams
        = std::any_of(runs.begin(), runs.end(), [](const RunRecord &r) { return r.snapshot.hasStreams(); });
    QString text = QStringLiteral("| Run | Labels | Version | Count | req/s | p50 | p95 | p99 | Mean | Errors |");
    text += streams ? QStringLiteral(" msg/s | 1st msg p50 | msg p50 | msg p99 |\n") : QStringLiteral("\n");
    text += QStringLiteral("|:--|:--|:--|--:|--:|--:|--:|--:|--:|--:|");
    text += streams ? QStringLiteral("--:|--:|--:|--:|\n") : QStringLiteral("\n");
    bool approximate = false;
    for (const RunRecord &run : runs) {
        const RunSnapshot &s = run.snapshot;
        QString name = run.displayName();
        if (run.id > 0 && !run.name.isEmpty())
            name = QStringLiteral("#%1 %2").arg(run.id).arg(run.name);
        const uint64_t calls = s.callsCompleted();
        const QString errors = calls
            ? QStringLiteral("%1 (%2%)")
                  .arg(s.callsFailed())
                  .arg(100.0 * static_cast<double>(s.callsFailed()) / static_cast<double>(calls), 0, 'f', 2)
            : QStringLiteral("0");
        QStringList cells {
            cell(name),
            cell(run.labels.join(QStringLiteral(", "))),
            cell(versionOf(run)),
            QString::number(calls),
            QString::number(s.requestsPerSecond(), 'f', 1),
            latency(s.latency, 50),
            latency(s.latency, 95),
            latency(s.latency, 99),
            s.latency.isEmpty() ? QStringLiteral("-") : formatNanos(s.latency.mean()),
            errors,
        };
        if (streams) {
            cells << (s.hasStreams() ? QString::number(s.messagesReceivedPerSecond(), 'f', 1) : QStringLiteral("-"))
                  << latency(s.firstMessageLatency, 50) << latency(s.messageLatency, 50)
                  << latency(s.messageLatency, 99);
        }
        text += QStringLiteral("| ") + cells.join(QStringLiteral(" | ")) + QStringLiteral(" |\n");
        approximate = approximate || run.origin.contains(QStringLiteral("approximate"));
    }
    if (approximate)
        text += QStringLiteral("\nNote: runs imported without per-call details have approximate percentiles.\n");
    return text;
}

QString comparisonMarkdown(const RunRecord &a, const RunRecord &b, const CompareOptions &options)
{
    const Comparison comparison
        = compareRuns(a.snapshot, b.snapshot, okLatenciesUs(a.rawSamples, a.snapshot.expectedStatuses),
            okLatenciesUs(b.rawSamples, b.snapshot.expectedStatuses), options);
    return runsMarkdownTable({ a, b }) + u'\n' + formatComparisonMarkdown(comparison, a.displayName(), b.displayName());
}

} // namespace rpcscope
