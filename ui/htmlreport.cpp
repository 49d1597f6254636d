#include "htmlreport.h"

#include "chartrender.h"
#include "compare/checks.h"
#include "compare/comparison.h"
#include "compare/sequentialab.h"
#include "export/flamegraphsvg.h"
#include "replicatespread.h"
#include "report/comparereport.h"
#include "report/profilereport.h"
#include "report/textreport.h"
#include "store/environment.h"
#include "store/runrecord.h"
#include "store/secrets.h"
#include "util/units.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <functional>
#include <set>

namespace rpcscope {

namespace {

// Chart size in the page: wide enough for the axis labels, scaled down by CSS to the text width (and to A4).
constexpr int kChartWidth = 900;
constexpr int kChartHeight = 480;

// Everything inline: the file is mailed, archived and opened offline, so it must not fetch anything.
const char kStyle[] = R"css(
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; color: #202020;
       background: #fff; margin: 24px auto; max-width: 1000px; padding: 0 16px; line-height: 1.4; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; word-break: break-word; }
h2 { font-size: 1.25em; margin-top: 1.6em; border-bottom: 1px solid #ddd; padding-bottom: 0.2em; }
.subtitle { color: #666; margin-top: 0; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.92em; max-width: 100%; }
table.delta { width: 100%; }
table.delta td:last-child { min-width: 9em; }
th, td { border: 1px solid #d8d8d8; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f2f4f7; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.error td { color: #b3261e; }
tr.differs td { background: #fff6db; }
td.regression { color: #b3261e; font-weight: 600; }
td.improvement { color: #1e7b34; font-weight: 600; }
.verdict { padding: 10px 14px; border-radius: 6px; border: 1px solid; font-weight: 600; margin: 0.8em 0; }
.verdict.regression { background: #fdecea; border-color: #e0a39e; color: #8c1d18; }
.verdict.improvement { background: #e8f5ec; border-color: #9fd0ad; color: #1b5e2b; }
.verdict.neutral { background: #f2f4f7; border-color: #cfd4da; color: #333; }
figure { margin: 1em 0; }
figure svg { width: 100%; height: auto; display: block; border: 1px solid #eee; box-sizing: border-box; }
figcaption { color: #666; font-size: 0.9em; }
figure.flame div { max-height: 640px; overflow-y: auto; border: 1px solid #eee; }
figure.flame img { width: 100%; height: auto; display: block; }
ul.changes li { margin: 0.2em 0; }
td.fn { word-break: break-all; }
pre { white-space: pre-wrap; word-break: break-word; background: #f6f8fa; padding: 8px; font-size: 0.88em; }
.muted { color: #777; }
footer { margin-top: 2em; color: #888; font-size: 0.85em; }
@page { size: A4; margin: 14mm; }
@media print {
  body { margin: 0; max-width: none; padding: 0; font-size: 10pt; }
  table, figure, .verdict, pre { break-inside: avoid; page-break-inside: avoid; }
  h2 { break-after: avoid; page-break-after: avoid; }
  figure svg { border: none; }
  figure.flame div { max-height: none; overflow: visible; }
  .verdict, th, tr.differs td { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
}
)css";

QString esc(const QString &text)
{
    return text.toHtmlEscaped();
}

QString formatTime(const QDateTime &time)
{
    return time.isValid() ? time.toUTC().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss 'UTC'")) : QStringLiteral("-");
}

QString jsonText(const QJsonValue &value)
{
    switch (value.type()) {
    case QJsonValue::Bool:
        return value.toBool() ? QStringLiteral("yes") : QStringLiteral("no");
    case QJsonValue::Double:
        return QString::number(value.toDouble(), 'g', 12);
    case QJsonValue::String:
        return value.toString();
    case QJsonValue::Array:
        return QString::fromUtf8(QJsonDocument(value.toArray()).toJson(QJsonDocument::Compact));
    case QJsonValue::Object: {
        // A schedule: "kind step, start 100, step 100, ..."
        QStringList parts;
        const QJsonObject object = value.toObject();
        for (auto it = object.begin(); it != object.end(); ++it) {
            const QString text = jsonText(it.value());
            if (!text.isEmpty())
                parts << it.key().replace(u'_', u' ') + u' ' + text;
        }
        return parts.join(QStringLiteral(", "));
    }
    case QJsonValue::Null:
    case QJsonValue::Undefined:
        break;
    }
    return {};
}

// A two-column table of label/value pairs; values are escaped here.
QString keyValueTable(const QList<QPair<QString, QString>> &rows, const QString &cssClass = QString())
{
    QString html
        = cssClass.isEmpty() ? QStringLiteral("<table>\n") : QStringLiteral("<table class=\"%1\">\n").arg(cssClass);
    for (const auto &[key, value] : rows)
        html += QStringLiteral("<tr><th>%1</th><td>%2</td></tr>\n").arg(esc(key), esc(value));
    return html + QStringLiteral("</table>\n");
}

QString percentileLabel(double pct)
{
    return QStringLiteral("p%1").arg(pct, 0, 'g', 6);
}

struct SummaryMetric {
    QString label;
    std::function<QString(const RunSnapshot &)> value;
};

QList<SummaryMetric> summaryMetrics()
{
    auto ns = [](double v) { return formatNanos(v); };
    QList<SummaryMetric> metrics = {
        { QStringLiteral("Calls"), [](const RunSnapshot &s) { return QString::number(s.callsCompleted()); } },
        { QStringLiteral("Errors"),
            [](const RunSnapshot &s) {
                return s.callsCompleted()
                    ? QStringLiteral("%1 (%2%)")
                          .arg(s.callsFailed())
                          .arg(100.0 * static_cast<double>(s.callsFailed()) / static_cast<double>(s.callsCompleted()),
                              0, 'f', 2)
                    : QStringLiteral("0");
            } },
        { QStringLiteral("Duration"), [](const RunSnapshot &s) { return formatDuration(s.elapsed); } },
        { QStringLiteral("OK calls/s"), [](const RunSnapshot &s) { return QString::number(s.okPerSecond(), 'f', 1); } },
        { QStringLiteral("Mean"), [ns](const RunSnapshot &s) { return ns(s.latency.mean()); } },
        { QStringLiteral("Std dev"), [ns](const RunSnapshot &s) { return ns(s.latency.stddev()); } },
        { QStringLiteral("Min"), [ns](const RunSnapshot &s) { return ns(static_cast<double>(s.latency.min())); } },
    };
    for (double pct : reportPercentiles())
        metrics.append({ percentileLabel(pct),
            [ns, pct](const RunSnapshot &s) { return ns(static_cast<double>(s.latency.percentile(pct))); } });
    metrics.append(
        { QStringLiteral("Max"), [ns](const RunSnapshot &s) { return ns(static_cast<double>(s.latency.max())); } });
    metrics.append({ QStringLiteral("Client CPU/call"), [](const RunSnapshot &s) {
                        return s.hasClientStats() ? formatNanos(s.clientCpuPerCallUs() * 1e3) : QStringLiteral("-");
                    } });
    metrics.append({ QStringLiteral("Server CPU/call"), [](const RunSnapshot &s) {
                        return s.hasServerStats ? formatNanos(s.serverCpuPerCallUs() * 1e3) : QStringLiteral("n/a");
                    } });
    metrics.append({ QStringLiteral("Client peak RSS"), [](const RunSnapshot &s) {
                        return s.hasClientStats() ? formatBytes(static_cast<double>(s.clientPeakRssBytes))
                                                  : QStringLiteral("-");
                    } });
    metrics.append({ QStringLiteral("Server peak RSS"), [](const RunSnapshot &s) {
                        return s.hasServerStats ? formatBytes(static_cast<double>(s.serverPeakRssBytes))
                                                : QStringLiteral("n/a");
                    } });
    metrics.append({ QStringLiteral("Bytes/call sent"), [](const RunSnapshot &s) {
                        return s.callsCompleted()
                            ? formatBytes(static_cast<double>(s.bytesSent) / static_cast<double>(s.callsCompleted()))
                            : QStringLiteral("-");
                    } });
    metrics.append({ QStringLiteral("Bytes/call received"), [](const RunSnapshot &s) {
                        return s.callsCompleted() ? formatBytes(
                                   static_cast<double>(s.bytesReceived) / static_cast<double>(s.callsCompleted()))
                                                  : QStringLiteral("-");
                    } });
    return metrics;
}

/// Rows for what only some runs have (open loop, streams): shown when any run has it, "-" for the others.
void conditionalRows(QString &html, const QList<const RunRecord *> &runs, bool (*applies)(const RunSnapshot &),
    const QList<SummaryMetric> &metrics)
{
    if (std::none_of(runs.begin(), runs.end(), [applies](const RunRecord *run) { return applies(run->snapshot); }))
        return;
    for (const SummaryMetric &metric : metrics) {
        html += QStringLiteral("<tr><th>%1</th>").arg(esc(metric.label));
        for (const RunRecord *run : runs)
            html += QStringLiteral("<td class=\"num\">%1</td>")
                        .arg(applies(run->snapshot) ? esc(metric.value(run->snapshot)) : QStringLiteral("-"));
        html += QStringLiteral("</tr>\n");
    }
}

// Metrics down, runs across: one value column for a single run, one per run for a comparison.
QString summaryTable(const QList<const RunRecord *> &runs)
{
    QString html = QStringLiteral("<table class=\"summary\">\n<tr><th>Metric</th>");
    for (const RunRecord *run : runs)
        html += QStringLiteral("<th>%1</th>").arg(runs.size() == 1 ? QStringLiteral("Value") : esc(run->displayName()));
    html += QStringLiteral("</tr>\n");
    for (const SummaryMetric &metric : summaryMetrics()) {
        html += QStringLiteral("<tr><th>%1</th>").arg(esc(metric.label));
        for (const RunRecord *run : runs)
            html += QStringLiteral("<td class=\"num\">%1</td>").arg(esc(metric.value(run->snapshot)));
        html += QStringLiteral("</tr>\n");
    }
    // Open loop: the numbers that say whether the client kept the schedule.
    conditionalRows(html, runs, [](const RunSnapshot &s) { return s.openLoop; },
        {
            { QStringLiteral("Intended rate"),
                [](const RunSnapshot &s) { return QStringLiteral("%1/s").arg(s.intendedRate, 0, 'f', 1); } },
            { QStringLiteral("Send lag p99"),
                [](const RunSnapshot &s) { return formatNanos(static_cast<double>(s.sendLag.percentile(99))); } },
            { QStringLiteral("Client kept up"),
                [](const RunSnapshot &s) {
                    return s.keptUp() ? QStringLiteral("yes")
                                      : QStringLiteral("NO: latencies include the wait to be sent");
                } },
            { QStringLiteral("p99 from actual send"),
                [](const RunSnapshot &s) {
                    return formatNanos(static_cast<double>(s.serviceLatency.percentile(99)));
                } },
        });
    // Streams: one call is one stream; its messages beside it.
    conditionalRows(html, runs, [](const RunSnapshot &s) { return s.hasStreams(); },
        {
            { QStringLiteral("Messages sent"), [](const RunSnapshot &s) { return QString::number(s.messagesSent); } },
            { QStringLiteral("Messages received"),
                [](const RunSnapshot &s) { return QString::number(s.messagesReceived); } },
            { QStringLiteral("Messages received/s"),
                [](const RunSnapshot &s) { return QString::number(s.messagesReceivedPerSecond(), 'f', 1); } },
            { QStringLiteral("First message p50 (server streams)"),
                [](const RunSnapshot &s) {
                    return s.firstMessageLatency.isEmpty()
                        ? QStringLiteral("-")
                        : formatNanos(static_cast<double>(s.firstMessageLatency.percentile(50)));
                } },
            { QStringLiteral("Per message p50"),
                [](const RunSnapshot &s) {
                    return formatNanos(static_cast<double>(s.messageLatency.percentile(50)));
                } },
            { QStringLiteral("Per message p99"),
                [](const RunSnapshot &s) {
                    return formatNanos(static_cast<double>(s.messageLatency.percentile(99)));
                } },
        });
    return html + QStringLiteral("</table>\n");
}

QString statusTable(const QList<const RunRecord *> &runs)
{
    QString html = QStringLiteral("<table class=\"status\">\n<tr><th>Status</th>");
    for (const RunRecord *run : runs)
        html += runs.size() == 1 ? QStringLiteral("<th>Calls</th><th>Share</th>")
                                 : QStringLiteral("<th>%1</th>").arg(esc(run->displayName()));
    html += QStringLiteral("</tr>\n");
    bool any = false;
    for (int code = 0; code < CallStatus::SlotCount; ++code) {
        bool occurred = false;
        bool expected = true; // by every run (--expect-status); OK unless told
        bool anyExpectsOtherThanOk = false;
        for (const RunRecord *run : runs) {
            occurred = occurred || run->snapshot.statusCounts[static_cast<size_t>(code)] > 0;
            expected = expected && run->snapshot.expectedStatuses.has(code);
            anyExpectsOtherThanOk = anyExpectsOtherThanOk || !run->snapshot.expectedStatuses.onlyOk();
        }
        if (!occurred)
            continue;
        any = true;
        html += QStringLiteral("<tr%1><td>%2%3</td>")
                    .arg(expected ? QString() : QStringLiteral(" class=\"error\""), esc(callStatusName(code)),
                        expected && anyExpectsOtherThanOk ? QStringLiteral(" (expected)") : QString());
        for (const RunRecord *run : runs) {
            const uint64_t count = run->snapshot.statusCounts[static_cast<size_t>(code)];
            const uint64_t total = run->snapshot.callsCompleted();
            const QString share = total
                ? QStringLiteral("%1%").arg(100.0 * static_cast<double>(count) / static_cast<double>(total), 0, 'f', 2)
                : QStringLiteral("-");
            if (runs.size() == 1)
                html += QStringLiteral("<td class=\"num\">%1</td><td class=\"num\">%2</td>").arg(count).arg(share);
            else
                html += QStringLiteral("<td class=\"num\">%1 (%2)</td>").arg(count).arg(share);
        }
        html += QStringLiteral("</tr>\n");
    }
    if (!any)
        return QStringLiteral("<p class=\"muted\">No calls completed.</p>\n");
    return html + QStringLiteral("</table>\n");
}

QString errorsSection(const QList<const RunRecord *> &runs)
{
    QString html;
    bool any = false;
    QString table
        = QStringLiteral("<table class=\"errors\">\n<tr>%1<th>Status</th><th>Message</th><th>Calls</th></tr>\n")
              .arg(runs.size() > 1 ? QStringLiteral("<th>Run</th>") : QString());
    for (const RunRecord *run : runs) {
        for (const ErrorSample &error : run->snapshot.errors) {
            any = true;
            table += QStringLiteral("<tr class=\"error\">%1<td>%2</td><td>%3</td><td class=\"num\">%4</td></tr>\n")
                         .arg(runs.size() > 1 ? QStringLiteral("<td>%1</td>").arg(esc(run->displayName())) : QString(),
                             esc(callStatusName(error.status)), esc(error.message), QString::number(error.count));
        }
    }
    html += QStringLiteral("<h2>Errors</h2>\n");
    html += any ? table + QStringLiteral("</table>\n") : QStringLiteral("<p class=\"muted\">No errors.</p>\n");
    // --expect: how many replies were checked, and the first that failed, as they came (the server's text, escaped).
    for (const RunRecord *run : runs) {
        const RunSnapshot &s = run->snapshot;
        if (!s.repliesChecked)
            continue;
        const QString who = runs.size() > 1 ? esc(run->displayName()) + QStringLiteral(": ") : QString();
        html += QStringLiteral("<p>%1Replies checked (--expect): %2, %3 unexpected.</p>\n")
                    .arg(who)
                    .arg(s.repliesChecked)
                    .arg(s.statusCounts[CallStatus::UnexpectedReply]);
        for (const UnexpectedReply &kept : s.unexpectedReplies)
            html
                += QStringLiteral("<p class=\"error\">Failed <code>%1</code>: got <code>%2</code></p>\n<pre>%3</pre>\n")
                       .arg(esc(kept.expectation), esc(kept.got), esc(QString::fromUtf8(kept.reply)));
    }
    return html;
}

// QSvgGenerator writes a standalone document: inline in HTML it needs no XML declaration, and its size in
// millimetres would fight the page's CSS, which sizes charts to the text width.
QString inlineSvg(const QByteArray &svg, const QString &label)
{
    QString text = QString::fromUtf8(svg);
    const qsizetype start = text.indexOf(QStringLiteral("<svg"));
    if (start < 0)
        return {};
    text = text.mid(start);
    static const QRegularExpression size(QStringLiteral("^<svg\\s+width=\"[^\"]*\"\\s+height=\"[^\"]*\""));
    text.replace(size, QStringLiteral("<svg"));
    text.replace(0, 4, QStringLiteral("<svg role=\"img\" aria-label=\"%1\"").arg(esc(label)));
    return text;
}

QString chartsSection(const QList<const RunRecord *> &runs)
{
    QString html = QStringLiteral("<h2>Charts</h2>\n");
    ChartOptions options;
    options.width = kChartWidth;
    options.height = kChartHeight;
    const bool overlay = runs.size() > 1;
    const std::pair<ChartKind, QString> charts[] = {
        { ChartKind::Histogram,
            overlay ? QStringLiteral("Latency of the OK calls in log-spaced bins, as a share of each run's calls.")
                    : QStringLiteral("Latency of the OK calls in log-spaced bins; dashed lines mark percentiles.") },
        { ChartKind::Spectrum,
            QStringLiteral("Latency at each percentile; the axis spreads the tail (90%, 99%, 99.9%...) "
                           "evenly.") },
        { ChartKind::Timeline,
            overlay ? QStringLiteral("p50 (solid) and p99 (dashed) per interval of each run.")
                    : QStringLiteral("Latency percentiles per interval of the time series.") },
        { ChartKind::Throughput,
            QStringLiteral("Completed calls (and errors, when there are any to speak of) per second, "
                           "per interval.") },
    };
    auto figure = [&](ChartKind kind, const QString &caption) {
        const QString svg = inlineSvg(renderChartSvg(runs, kind, options), chartKindName(kind));
        html += QStringLiteral("<figure class=\"chart\">\n%1\n<figcaption>%2</figcaption>\n</figure>\n")
                    .arg(svg, esc(caption));
    };
    // A streaming run's calls last as long as its streams do: what each message took comes first.
    if (std::any_of(runs.begin(), runs.end(), [](const RunRecord *r) { return !r->snapshot.messageLatency.isEmpty(); }))
        figure(ChartKind::MessageHistogram,
            QStringLiteral("Latency of each received message in log-spaced bins: a server stream's gaps between "
                           "messages (after its first), a bidi stream's round trips."));
    for (const auto &[kind, caption] : charts)
        figure(kind, caption);
    return html;
}

QList<QPair<QString, QString>> scenarioRows(const RunRecord &given)
{
    RunRecord run = given; // a report never shows a secret (runs saved by older versions may hold them)
    redactSecrets(&run);
    QList<QPair<QString, QString>> rows = {
        { QStringLiteral("Method"), run.method },
        { QStringLiteral("Transport / codec"),
            run.transport + QStringLiteral(" / ") + (run.codec.isEmpty() ? QStringLiteral("default") : run.codec) },
        { QStringLiteral("Target"), run.target },
        { QStringLiteral("Status"), run.status },
        { QStringLiteral("Started"), formatTime(run.startedAt) },
        { QStringLiteral("Ended"), formatTime(run.endedAt) },
    };
    if (!run.labels.isEmpty())
        rows.append({ QStringLiteral("Labels"), run.labels.join(QStringLiteral(", ")) });
    if (run.origin != u"rpcscope")
        rows.append({ QStringLiteral("Origin"), run.origin });
    // The scenario document's load settings, as written (runs saved before CLI runs kept a document hold their flags).
    const QJsonObject load = run.scenario.value(QStringLiteral("load")).toObject();
    for (auto it = load.begin(); it != load.end(); ++it) {
        const QString text = jsonText(it.value());
        if (!text.isEmpty())
            rows.append({ QStringLiteral("Load: ") + QString(it.key()).replace(u'_', u' '), text });
    }
    const QJsonArray arguments = run.scenario.value(QStringLiteral("arguments")).toArray();
    if (!arguments.isEmpty()) {
        QStringList words;
        for (const auto &word : arguments)
            words << word.toString();
        rows.append({ QStringLiteral("Command line"), words.join(u' ') });
    }
    const QString fills = jsonText(run.scenario.value(QStringLiteral("fills")));
    if (!fills.isEmpty() && fills != u"[]")
        rows.append({ QStringLiteral("Fills"), fills });
    if (!run.server.isEmpty())
        rows.append({ QStringLiteral("Server command"), jsonText(run.server.value(QStringLiteral("command"))) });
    // What the reader cannot see, and why: secrets are redacted unless the run kept them (--keep-secrets).
    if (keepsSecrets(run))
        rows.append({ QStringLiteral("Secrets"),
            QStringLiteral("kept in clear (--keep-secrets): this run's metadata and server environment are as sent") });
    else if (const QStringList redacted = redactedFields(run); !redacted.isEmpty())
        rows.append({ QStringLiteral("Secrets"),
            QStringLiteral("redacted (shown as a SHA-256 prefix): ") + redacted.join(QStringLiteral(", ")) });
    return rows;
}

// Keys down, runs across; rows whose values differ from the baseline's are marked.
QString environmentTable(const QList<const RunRecord *> &runs)
{
    std::set<QString> keys;
    for (const RunRecord *run : runs)
        for (const QString &key : run->environment.keys())
            keys.insert(key);
    if (keys.empty())
        return QStringLiteral("<p class=\"muted\">No environment recorded.</p>\n");
    QString html = QStringLiteral("<table class=\"environment\">\n<tr><th>Key</th>");
    for (const RunRecord *run : runs)
        html += QStringLiteral("<th>%1</th>").arg(runs.size() == 1 ? QStringLiteral("Value") : esc(run->displayName()));
    html += QStringLiteral("</tr>\n");
    for (const QString &key : keys) {
        bool differs = false;
        const QString first = jsonText(runs.first()->environment.value(key));
        for (const RunRecord *run : runs)
            differs = differs || jsonText(run->environment.value(key)) != first;
        html += QStringLiteral("<tr%1><th>%2</th>")
                    .arg(differs ? QStringLiteral(" class=\"differs\"") : QString(), esc(key));
        for (const RunRecord *run : runs)
            html += QStringLiteral("<td>%1</td>").arg(esc(jsonText(run->environment.value(key))));
        html += QStringLiteral("</tr>\n");
    }
    return html + QStringLiteral("</table>\n");
}

QString page(const QString &title, const QString &body)
{
    QString footer = QStringLiteral("Generated by rpcscope on %1.").arg(formatTime(QDateTime::currentDateTimeUtc()));
    return QStringLiteral("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                          "<meta name=\"generator\" content=\"rpcscope\">\n<title>%1</title>\n<style>%2</style>\n"
                          "</head>\n<body>\n%3<footer>%4</footer>\n</body>\n</html>\n")
        .arg(esc(title), QString::fromUtf8(kStyle), body, esc(footer));
}

QString verdictClass(Verdict verdict)
{
    switch (verdict) {
    case Verdict::Regression:
        return QStringLiteral("regression");
    case Verdict::Improvement:
        return QStringLiteral("improvement");
    case Verdict::NotTested:
    case Verdict::TooFewSamples:
    case Verdict::NoSignificantChange:
    case Verdict::Inconclusive:
    case Verdict::WithinThreshold:
        break;
    }
    return QStringLiteral("neutral");
}

QString deltaTable(const Comparison &comparison, const QString &nameA, const QString &nameB)
{
    // The sides as A and B (their names are in the Runs table above, and on hover): long names made the table
    // overflow the page and squeezed the verdict to a word a line.
    QString html = QStringLiteral("<table class=\"delta\">\n<tr><th>Metric</th><th title=\"%1\">A</th>"
                                  "<th title=\"%2\">B</th><th>Delta</th>"
                                  "<th>Change</th><th>%3% CI of change</th>"
                                  "<th title=\"The smallest change this comparison finds 80% of the time at the noise "
                                  "measured between replicates\">Detectable</th><th>Verdict</th></tr>\n")
                       .arg(esc(nameA), esc(nameB), QString::number(comparison.confidence * 100, 'g', 3));
    QStringList notes;
    for (const MetricRow &row : comparison.rows) {
        const QString ci = row.hasInterval && row.interval.valid ? formatPercentChange(row.interval.ciLow)
                + QStringLiteral(" .. ") + formatPercentChange(row.interval.ciHigh)
                                                                 : QString();
        // A size either way: "+-4.2%" without the sign formatPercentChange puts first.
        const QString detectable = std::isfinite(row.interval.detectable)
            ? QChar(0x00b1) + formatPercentChange(row.interval.detectable).mid(1)
            : QString();
        const QString verdict = row.hasVerdict ? verdictName(row.verdict) : QString();
        if (row.verdict == Verdict::TooFewSamples && !row.reason.isEmpty())
            notes << esc(row.reason); // under the table, whole, rather than a word a line in a narrow cell
        const QString cls = row.hasVerdict ? verdictClass(row.verdict) : QString();
        html += QStringLiteral("<tr><th>%1</th><td class=\"num\">%2</td><td class=\"num\">%3</td>"
                               "<td class=\"num\">%4</td><td class=\"num\">%5</td><td class=\"num\">%6</td>"
                               "<td class=\"num\">%7</td><td class=\"%8\">%9</td></tr>\n")
                    .arg(esc(row.name), esc(formatMetricValue(row.valueA, row.unit)),
                        esc(formatMetricValue(row.valueB, row.unit)), esc(formatMetricDelta(row.delta, row.unit)),
                        esc(formatPercentChange(row.relativeChange)), esc(ci), esc(detectable), cls, esc(verdict));
    }
    html += QStringLiteral("</table>\n");
    for (const QString &note : std::as_const(notes))
        html += QStringLiteral("<p class=\"muted\">Too few samples: %1.</p>\n").arg(note);
    html += QStringLiteral("<p class=\"muted\">Judged on %1; a change counts beyond &plusmn;%2%.</p>\n")
                .arg(esc(comparison.basis()))
                .arg(comparison.threshold * 100, 0, 'g', 3);
    return html;
}

// Linear ticks at 1-2-5 steps, about @p target of them between @p low and @p high.
QList<double> linearTicks(double low, double high, int target)
{
    QList<double> ticks;
    const double raw = (high - low) / target;
    if (!(raw > 0))
        return ticks;
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    const double norm = raw / magnitude;
    const double step = (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * magnitude;
    // Multiples of the step, so "2.05" does not come out as "2.0500000001".
    for (double k = std::ceil(low / step); k * step <= high + step * 1e-9; ++k)
        ticks << k * step;
    return ticks;
}

QString svgNumber(double v)
{
    return QString::number(v, 'f', 1);
}

/**
 * The replicates as dots: a panel per tested latency with its own value axis, A's and B's dots side by side (each
 * side in its run's colour), and a bar at each side's geometric mean. Written directly rather than through
 * QCustomPlot: each dot is a <circle> whose <title> names its replicate and value, which a browser shows on hover.
 * Laid out as the Compare runs page's chart (ReplicateChart), from the same ReplicateSpread values.
 */
QString spreadSvg(const QList<ReplicateSpread> &spreads, const QString &nameA, const QString &nameB)
{
    constexpr int kHeight = 400;
    constexpr double kSide = 10; // page margin, left and right
    constexpr double kAxisRoom = 66; // the rotated axis title and the tick labels, left of each panel's plot
    constexpr double kPlotTop = 14;
    constexpr double kPlotBottom = kHeight - 84; // below: A/B, the change, the legend
    constexpr double kJitter = 0.2; // in column widths, as on the page
    constexpr double kMeanHalfWidth = 0.32;
    const QString text = QStringLiteral("#202020");
    const QColor colors[] = { chartRunColor(0), chartRunColor(1) };
    const double panelWidth = (kChartWidth - 2 * kSide) / static_cast<double>(spreads.size());

    QString svg = QStringLiteral("<svg role=\"img\" aria-label=\"Spread of the replicates\" viewBox=\"0 0 %1 %2\" "
                                 "xmlns=\"http://www.w3.org/2000/svg\" font-family=\"sans-serif\" font-size=\"13\" "
                                 "fill=\"%3\">\n<rect width=\"%1\" height=\"%2\" fill=\"#fff\"/>\n")
                      .arg(kChartWidth)
                      .arg(kHeight)
                      .arg(text);
    for (qsizetype p = 0; p < spreads.size(); ++p) {
        const ReplicateSpread &spread = spreads[p];
        const double left = kSide + static_cast<double>(p) * panelWidth + kAxisRoom;
        const double right = kSide + static_cast<double>(p + 1) * panelWidth - 12;
        // Keys as on the page: A at 1, B at 2, shown from 0.4 to 2.6.
        auto xOf = [&](double key) { return left + (key - 0.4) / 2.2 * (right - left); };
        // Named, not structured bindings: a lambda may not capture those before C++20's clang 16.
        const std::pair<double, double> range = spreadRangeNs(spread);
        const double lowNs = range.first;
        const double highNs = range.second;
        const auto [scale, unit] = latencyAxisUnit(highNs);
        auto yOf = [&](double ns) { return kPlotBottom - (ns - lowNs) / (highNs - lowNs) * (kPlotBottom - kPlotTop); };

        svg += QStringLiteral("<g class=\"panel\" data-metric=\"%1\">\n").arg(esc(spread.metric));
        for (const double tick : linearTicks(lowNs / scale, highNs / scale, 5)) {
            // Text is placed by its baseline: 4.5 px below the line centres a 13 px label on it. (Not with dy,
            // which Qt's own SVG renderer ignores.)
            const double y = yOf(tick * scale);
            svg += QStringLiteral("<line x1=\"%1\" y1=\"%2\" x2=\"%3\" y2=\"%2\" stroke=\"#c8c8c8\" "
                                  "stroke-dasharray=\"2 3\"/>\n<text x=\"%4\" y=\"%5\" text-anchor=\"end\">%6</text>\n")
                       .arg(svgNumber(left), svgNumber(y), svgNumber(right), svgNumber(left - 6), svgNumber(y + 4.5),
                           esc(QString::number(tick, 'g', 6)));
        }
        svg += QStringLiteral("<path d=\"M%1 %2V%3H%4\" fill=\"none\" stroke=\"%5\"/>\n")
                   .arg(svgNumber(left), svgNumber(kPlotTop), svgNumber(kPlotBottom), svgNumber(right), text);
        const double titleX = left - kAxisRoom + 14;
        const double titleY = (kPlotTop + kPlotBottom) / 2;
        svg += QStringLiteral("<text x=\"%1\" y=\"%2\" text-anchor=\"middle\" transform=\"rotate(-90 %1 %2)\">%3 "
                              "(%4)</text>\n")
                   .arg(svgNumber(titleX), svgNumber(titleY), esc(spread.axisTitle), unit);
        const QString changeColor = spread.verdict == Verdict::Regression ? QStringLiteral("#b3261e")
            : spread.verdict == Verdict::Improvement                      ? QStringLiteral("#1e7b34")
                                                                          : text;
        svg += QStringLiteral("<text x=\"%1\" y=\"%2\" text-anchor=\"middle\" fill=\"%3\">B vs A %4</text>\n")
                   .arg(svgNumber((left + right) / 2), svgNumber(kPlotBottom + 38), changeColor,
                       esc(formatPercentChange(spread.change)));

        const struct {
            const std::vector<double> &values;
            double mean;
            double center;
            ReplicateUnit unit;
            QString role;
            QColor color;
        } sides[] = { { spread.a, spread.geometricMeanA, 1, spread.unitA, QStringLiteral("A"), colors[0] },
            { spread.b, spread.geometricMeanB, 2, spread.unitB, QStringLiteral("B"), colors[1] } };
        for (const auto &s : sides) {
            svg += QStringLiteral("<text x=\"%1\" y=\"%2\" text-anchor=\"middle\">%3</text>\n")
                       .arg(svgNumber(xOf(s.center)), svgNumber(kPlotBottom + 18), s.role);
            for (std::size_t i = 0; i < s.values.size(); ++i) {
                svg += QStringLiteral("<circle cx=\"%1\" cy=\"%2\" r=\"4\" fill=\"%3\" fill-opacity=\"0.8\" "
                                      "stroke=\"%4\"><title>%5</title></circle>\n")
                           .arg(svgNumber(xOf(s.center + kJitter * spreadJitter(i))), svgNumber(yOf(s.values[i])),
                               s.color.name(), s.color.darker(115).name(),
                               esc(QStringLiteral("%1, %2: %3 %4")
                                       .arg(
                                           s.role, replicateName(s.unit, i), spread.metric, formatNanos(s.values[i]))));
            }
            svg += QStringLiteral("<line x1=\"%1\" y1=\"%2\" x2=\"%3\" y2=\"%2\" stroke=\"%4\" stroke-width=\"2.5\">"
                                  "<title>%5</title></line>\n")
                       .arg(svgNumber(xOf(s.center - kMeanHalfWidth)), svgNumber(yOf(s.mean)),
                           svgNumber(xOf(s.center + kMeanHalfWidth)), text,
                           esc(QStringLiteral("%1 geometric mean: %2 %3")
                                   .arg(s.role, spread.metric, formatNanos(s.mean))));
        }
        svg += QStringLiteral("</g>\n");
    }

    // The legend under the panels: which run is which colour, and what the bars are. SVG text does not measure
    // itself: each entry advances by an estimate of its width (about 7.5 px a character at 13 px), and a long run
    // name is shortened so that the three entries fit.
    // The sides by letter (named in the Runs table; on hover here): names made the legend run off the chart.
    const ReplicateSpread &first = spreads.first();
    const QString entries[] = {
        QStringLiteral("A: %1").arg(replicateCountText(first.unitA, static_cast<qint64>(first.a.size()))),
        QStringLiteral("B: %1").arg(replicateCountText(first.unitB, static_cast<qint64>(first.b.size()))),
    };
    const QString entryNames[] = { nameA, nameB };
    const double legendY = kHeight - 16;
    double x = kSide + 8;
    svg += QStringLiteral("<g class=\"legend\">\n");
    for (int i = 0; i < 2; ++i) {
        svg += QStringLiteral("<g><title>%7</title><circle cx=\"%1\" cy=\"%2\" r=\"5\" fill=\"%3\"/>"
                              "<text x=\"%4\" y=\"%5\">%6</text></g>\n")
                   .arg(svgNumber(x + 5), svgNumber(legendY), colors[i].name(), svgNumber(x + 15),
                       svgNumber(legendY + 4.5), esc(entries[i]), esc(entryNames[i]));
        x += 15 + 7.5 * static_cast<double>(entries[i].size()) + 24;
    }
    svg += QStringLiteral("<line x1=\"%1\" y1=\"%2\" x2=\"%3\" y2=\"%2\" stroke=\"%4\" stroke-width=\"2.5\"/>"
                          "<text x=\"%5\" y=\"%6\">geometric mean</text>\n</g>\n</svg>")
               .arg(svgNumber(x), svgNumber(legendY), svgNumber(x + 20), text, svgNumber(x + 26),
                   svgNumber(legendY + 4.5));
    return svg;
}

/// The replicates behind the verdict, as dots; nothing when there are none (one run per side).
QString spreadSection(const Comparison &comparison, const QString &nameA, const QString &nameB)
{
    const QList<ReplicateSpread> spreads = replicateSpreads(comparison);
    if (spreads.isEmpty())
        return {};
    return QStringLiteral("<h2>Spread of the replicates</h2>\n<figure class=\"chart spread\">\n%1\n<figcaption>Each "
                          "dot is one %2's value, the bar each side's geometric mean: the values the verdict compares. "
                          "Judged on %3.</figcaption>\n</figure>\n")
        .arg(spreadSvg(spreads, nameA, nameB), esc(spreads.first().axisTitle.section(QStringLiteral(" per "), 1)),
            esc(comparison.basis()));
}

/// The run's checks (its scenario's, or its CLI --check flags), judged on its numbers; nothing when it had none.
QString checksSection(const RunRecord &run)
{
    const std::vector<CheckResult> results = evaluateChecks(checksOfRun(run.scenario), run.snapshot);
    if (results.empty())
        return {};
    const auto failed = std::count_if(results.cbegin(), results.cend(), [](const CheckResult &r) { return !r.passed; });
    QString html = QStringLiteral("<h2>Checks</h2>\n<div class=\"verdict %1\">%2</div>\n<table class=\"checks\">\n"
                                  "<tr><th>Check</th><th>Measured</th><th>Result</th></tr>\n")
                       .arg(failed ? QStringLiteral("regression") : QStringLiteral("improvement"),
                           failed ? esc(QStringLiteral("%1 of %2 checks failed").arg(failed).arg(results.size()))
                                  : esc(QStringLiteral("All %1 checks met").arg(results.size())));
    for (const CheckResult &r : results) {
        html += QStringLiteral("<tr><td>%1</td><td class=\"num\">%2</td><td%3>%4</td></tr>\n")
                    .arg(esc(r.check.text),
                        esc(r.measured ? formatCheckValue(r.check, r.actual)
                                       : QStringLiteral("not measured: no OK call")),
                        r.passed ? QString() : QStringLiteral(" class=\"regression\""),
                        r.passed ? QStringLiteral("ok") : QStringLiteral("FAIL"));
    }
    return html + QStringLiteral("</table>\n");
}

// CPU us per call with two decimals below 1 ("0.42"), as the window's tables.
QString usText(double value, bool sign = false)
{
    return formatUsPerCall(value, sign, true);
}

QString scopeWord(const Profile &profile)
{
    return profile.scope == u"client" ? QStringLiteral("client") : QStringLiteral("server");
}

/// "Server" or "Client", to begin a heading or a sentence.
QString scopeTitle(const Profile &profile)
{
    return profile.scope == u"client" ? QStringLiteral("Client") : QStringLiteral("Server");
}

/// A flame graph as a picture: an <img> (no script of it runs in the page), scaled to the text width.
QString flameFigure(const QString &svg, const QString &label, const QString &caption)
{
    // Deep stacks (a kernel's network path) make a tall graph: on screen it scrolls in its box, on paper it is whole.
    return QStringLiteral("<figure class=\"flame\"><div><img alt=\"%1\" src=\"data:image/svg+xml;base64,%2\"></div>\n"
                          "<figcaption>%3</figcaption></figure>\n")
        .arg(esc(label), QString::fromLatin1(svg.toUtf8().toBase64()), esc(caption));
}

/// What went wrong or was worked around while profiling, one item each; nothing when all went well.
QString profileNotes(const QStringList &notes)
{
    if (notes.isEmpty())
        return {};
    QString html = QStringLiteral("<ul class=\"muted\">\n");
    for (const QString &note : notes)
        html += QStringLiteral("<li>%1</li>\n").arg(esc(note));
    return html + QStringLiteral("</ul>\n");
}

/// One run's profiles (run --profile, --profile-client): the CPU per call, the flame graph and the heaviest
/// functions by self time; nothing for a run not profiled.
QString profileSection(const RunRecord &run)
{
    QString html;
    for (const std::optional<Profile> *given : { &run.serverProfile, &run.clientProfile }) {
        if (!*given)
            continue;
        const Profile &profile = **given;
        const QString scope = scopeWord(profile);
        html += QStringLiteral("<h2>%1 profile</h2>\n").arg(scopeTitle(profile));
        if (profile.isEmpty() || profile.calls() <= 0) {
            // The profiler ran and the run was too short for a sample, or it could not run (its notes say why).
            const QString hint = noSamplesHint(profile);
            html += (hint.isEmpty()
                            ? QStringLiteral("<p class=\"muted\">No samples: the %1 was not profiled.</p>\n").arg(scope)
                            : QStringLiteral("<p class=\"muted\">No samples: %1.</p>\n").arg(esc(hint)))
                + profileNotes(profile.notes);
            continue;
        }
        const double total = profile.totalUsPerCall();
        const QString samples = profileSamplesText(profile);
        html += QStringLiteral("<p>%1 us of %2 CPU per call over %3 calls, %4; recorded with %5%6.</p>\n")
                    .arg(usText(total), scope, QString::number(profile.calls(), 'f', 0),
                        (profile.processes.size() == 1 ? QStringLiteral("1 process")
                                                       : QStringLiteral("%1 processes").arg(profile.processes.size()))
                            + (samples.isEmpty() ? QString() : QStringLiteral(", ") + esc(samples)))
                    .arg(esc(profile.how),
                        profile.profilerCpuSeconds >= 0
                            ? QStringLiteral("; the profiler's own CPU %1").arg(esc(profilerCpuText(profile)))
                            : QString());
        FlameGraphSvgOptions options;
        options.interactive = false; // a picture in the page
        options.title = QStringLiteral("%1 CPU per call: %2").arg(scopeTitle(profile), run.displayName());
        html += flameFigure(flameGraphSvg(buildFlameTree(profile.usPerCall(), QStringLiteral("all")), options),
            options.title, QStringLiteral("Each frame as wide as its CPU per call, callers above their callees."));
        html += QStringLiteral("<table class=\"functions\">\n<tr><th>Function</th><th>Self us/call</th>"
                               "<th>Total us/call</th><th>Self share</th></tr>\n");
        const std::vector<FunctionCost> costs = functionCosts(profile.usPerCall());
        for (size_t i = 0; i < costs.size() && i < 10; ++i)
            html += QStringLiteral("<tr><td class=\"fn\">%1</td><td class=\"num\">%2</td><td class=\"num\">%3</td>"
                                   "<td class=\"num\">%4%</td></tr>\n")
                        .arg(esc(flameDisplayName(costs[i].name)), usText(costs[i].self), usText(costs[i].total),
                            QString::number(total > 0 ? 100 * costs[i].self / total : 0, 'f', 1));
        html += QStringLiteral("</table>\n") + profileNotes(profile.notes);
    }
    return html;
}

/// Where B's CPU went against A's, for each side both runs profiled: the change per call with its interval, the
/// top three changes in words, the differential flame graph and the changed functions; nothing when not profiled.
QString profileComparisonSection(const RunRecord &a, const RunRecord &b, const QString &nameA, const QString &nameB)
{
    QString html;
    const std::array<std::pair<const std::optional<Profile> *, const std::optional<Profile> *>, 2> sides {
        std::pair(&a.serverProfile, &b.serverProfile), std::pair(&a.clientProfile, &b.clientProfile)
    };
    for (const auto &[pa, pb] : sides) {
        if (!*pa || !*pb)
            continue;
        const QString scope = scopeWord(**pb);
        html += QStringLiteral("<h2>Where B's %1 time went</h2>\n").arg(scope);
        const bool emptyA = (*pa)->isEmpty() || (*pa)->calls() <= 0;
        if (emptyA || (*pb)->isEmpty() || (*pb)->calls() <= 0) {
            html += QStringLiteral("<p class=\"muted\">Not compared: %1 has no samples of its %2.</p>\n")
                        .arg(emptyA ? QStringLiteral("A") : QStringLiteral("B"), scope)
                + profileNotes((*pa)->notes + (*pb)->notes);
            continue;
        }
        const ProfileDiff diff = diffProfiles(**pa, **pb);
        const QString confidence = QString::number(diff.confidence * 100, 'f', 0);
        html += QStringLiteral("<p>%1 CPU per call: A %2 us, B %3 us (%4 us, %5% CI %6 .. %7), judged %8.</p>\n")
                    .arg(scopeTitle(**pb), usText(diff.totalA), usText(diff.totalB),
                        usText(diff.totalB - diff.totalA, true), confidence, usText(diff.totalDiff.low, true),
                        usText(diff.totalDiff.high, true))
                    .arg(esc(diff.method));
        const std::vector<FunctionChange> top = diff.ownChanges(3);
        if (top.empty()) {
            html += QStringLiteral("<p>No function changed beyond noise (changes under %1 us per call are not "
                                   "flagged).</p>\n")
                        .arg(usText(diff.minChangeUs));
        } else {
            html += QStringLiteral("<ul class=\"changes\">\n");
            for (const FunctionChange &change : top)
                html += QStringLiteral("<li>%1</li>\n").arg(esc(profileChangeSentence(change, diff.confidence)));
            html += QStringLiteral("</ul>\n");
        }
        FlameGraphSvgOptions options;
        options.interactive = false; // a picture in the page
        options.differential = true;
        options.title = QStringLiteral("%1 CPU per call: B against A").arg(scopeTitle(**pb));
        options.subtitle = QStringLiteral("A: %1; B: %2").arg(nameA, nameB);
        html += flameFigure(
            flameGraphSvg(
                buildDiffFlameTree((*pa)->usPerCall(), (*pb)->usPerCall(), diff, QStringLiteral("all")), options),
            options.title,
            QStringLiteral("Each frame as wide as B's CPU per call; red: slower in B, blue: faster, grey: within "
                           "noise."));
        html += QStringLiteral("<table class=\"delta functions\">\n<tr><th>Function</th><th>A us/call</th>"
                               "<th>B us/call</th><th>B - A</th><th>%1% interval</th><th>Judged</th></tr>\n")
                    .arg(confidence);
        int rows = 0;
        for (const FunctionChange &c : diff.functions) {
            if (rows++ >= 10 || (!c.changed && rows > 3))
                break;
            const bool total = changeToldByTotal(c);
            const DiffInterval interval = total ? c.totalDiff : c.selfDiff;
            const double delta = total ? c.totalChange() : c.selfChange();
            html += QStringLiteral("<tr><td class=\"fn\">%1</td><td class=\"num\">%2</td><td class=\"num\">%3</td>"
                                   "<td class=\"num\">%4</td><td class=\"num\">%5 .. %6</td><td%7>%8</td></tr>\n")
                        .arg(esc(flameDisplayName(c.name)), usText(total ? c.totalA : c.selfA),
                            usText(total ? c.totalB : c.selfB), usText(delta, true), usText(interval.low, true),
                            usText(interval.high, true),
                            !c.changed      ? QString()
                                : delta > 0 ? QStringLiteral(" class=\"regression\"")
                                            : QStringLiteral(" class=\"improvement\""),
                            profileChangeVerdict(c));
        }
        html += QStringLiteral("</table>\n") + profileNotes((*pa)->notes + (*pb)->notes);
    }
    return html;
}

} // namespace

QByteArray htmlReport(const RunRecord &run)
{
    const QList<const RunRecord *> runs { &run };
    const QString title = run.displayName().isEmpty() ? QStringLiteral("rpcscope run") : run.displayName();
    QString body = QStringLiteral("<h1>%1</h1>\n<p class=\"subtitle\">rpcscope run report: %2, %3 calls, %4</p>\n")
                       .arg(esc(title), esc(run.method.isEmpty() ? QStringLiteral("no method") : run.method),
                           QString::number(run.snapshot.callsCompleted()), esc(formatTime(run.startedAt)));
    body += QStringLiteral("<h2>Scenario</h2>\n") + keyValueTable(scenarioRows(run), QStringLiteral("scenario"));
    // Beside a verdict judged on replicates, these are the other numbers: say which.
    body += (runs.size() >= 2 ? QStringLiteral("<h2>Summary (each run's calls pooled)</h2>\n")
                              : QStringLiteral("<h2>Summary</h2>\n"))
        + summaryTable(runs);
    body += checksSection(run);
    body += QStringLiteral("<h2>Status codes</h2>\n") + statusTable(runs);
    body += errorsSection(runs);
    body += chartsSection(runs);
    body += profileSection(run);
    body += QStringLiteral("<h2>Environment</h2>\n") + environmentTable(runs);
    return page(title, body).toUtf8();
}

QByteArray htmlComparisonReport(const QList<const RunRecord *> &runs, const Comparison &comparison)
{
    QStringList names;
    for (const RunRecord *run : runs)
        names << run->displayName();
    const QString title = QStringLiteral("Comparison: ")
        + names.join(names.size() == 2 ? QStringLiteral(" vs ") : QStringLiteral(", "));
    QString body = QStringLiteral("<h1>%1</h1>\n<p class=\"subtitle\">rpcscope comparison report; the first run is "
                                  "the baseline.</p>\n")
                       .arg(esc(title));

    body += QStringLiteral("<h2>Runs</h2>\n<table class=\"runs\">\n<tr><th></th><th>Run</th><th>Method</th>"
                           "<th>Transport / codec</th><th>Target</th><th>Started</th><th>Calls</th></tr>\n");
    for (qsizetype i = 0; i < runs.size(); ++i) {
        const RunRecord *run = runs[i];
        body += QStringLiteral("<tr><td>%1</td><td>%2</td><td>%3</td><td>%4</td><td>%5</td><td>%6</td>"
                               "<td class=\"num\">%7</td></tr>\n")
                    .arg(i == 0 ? QStringLiteral("baseline") : QStringLiteral("compared"), esc(run->displayName()),
                        esc(run->method), esc(run->transport + QStringLiteral(" / ") + run->codec), esc(run->target),
                        esc(formatTime(run->startedAt)), QString::number(run->snapshot.callsCompleted()));
    }
    body += QStringLiteral("</table>\n");

    if (runs.size() >= 2) {
        body += QStringLiteral("<h2>Verdict</h2>\n");
        // An A/B run judged until decided was decided by its anytime-valid sequence: that verdict first, as on the
        // Compare runs page, the fixed-sample detail after it, labelled.
        if (const std::optional<SequentialAb> sequential = sequentialVerdictOf(*runs[0], *runs[1])) {
            const SequentialDecision decision = sequential->decision();
            const QString cls = decision == SequentialDecision::Regression ? QStringLiteral("regression")
                : decision == SequentialDecision::Improvement              ? QStringLiteral("improvement")
                                                                           : QStringLiteral("neutral");
            body += QStringLiteral("<div class=\"verdict %1\">Judged until decided: %2</div>\n")
                        .arg(cls, esc(sequential->verdictLine(QStringLiteral("the run ended"))));
            body += QStringLiteral("<p class=\"muted\">Fixed-sample detail (its intervals assume a run of planned "
                                   "length):</p>\n");
        }
        body += QStringLiteral("<div class=\"verdict %1\">%2</div>\n")
                    .arg(verdictClass(comparison.overall), esc(comparison.verdictLine()));
        if (runs.size() > 2)
            body += QStringLiteral("<p class=\"muted\">The verdict and the deltas compare %1 against the baseline %2; "
                                   "the other runs are in the charts and tables.</p>\n")
                        .arg(esc(names[1]), esc(names[0]));
        body += QStringLiteral("<h2>Deltas</h2>\n") + deltaTable(comparison, names[0], names[1]);
        body += spreadSection(comparison, names[0], names[1]);
        body += profileComparisonSection(*runs[0], *runs[1], names[0], names[1]);
    }
    body += chartsSection(runs);
    body += QStringLiteral("<h2>Summary</h2>\n") + summaryTable(runs);
    body += QStringLiteral("<h2>Status codes</h2>\n") + statusTable(runs);
    body += errorsSection(runs);

    body += QStringLiteral("<h2>Scenarios</h2>\n");
    for (const RunRecord *run : runs)
        body += QStringLiteral("<h3>%1</h3>\n").arg(esc(run->displayName()))
            + keyValueTable(scenarioRows(*run), QStringLiteral("scenario"));

    body += QStringLiteral("<h2>Environment</h2>\n");
    for (qsizetype i = 1; i < runs.size(); ++i) {
        const QStringList differences = environmentDifferences(runs.first()->environment, runs[i]->environment);
        body += QStringLiteral("<p>%1 against %2: ").arg(esc(names[i]), esc(names[0]));
        if (differences.isEmpty()) {
            body += QStringLiteral("the same environment.</p>\n");
            continue;
        }
        body += QStringLiteral("what differs:</p>\n<ul class=\"differences\">\n");
        for (const QString &line : differences)
            body += QStringLiteral("<li>%1</li>\n").arg(esc(line));
        body += QStringLiteral("</ul>\n");
    }
    body += environmentTable(runs);
    return page(title, body).toUtf8();
}

} // namespace rpcscope
