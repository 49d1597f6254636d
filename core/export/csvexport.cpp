#include "csvexport.h"

#include "report/rawsamples.h"

#include <QBuffer>
#include <QJsonArray>
#include <QJsonObject>

#include <algorithm>
#include <chrono>
#include <cmath>

namespace rpcscope {

namespace {

// QString::number is locale-independent (always '.'), unlike QLocale::toString or QString::arg with 'L'; every
// number in these files goes through these two helpers so a German desktop cannot put a ',' in a CSV column.
QString number(double value, int decimals)
{
    if (!std::isfinite(value))
        return {};
    return QString::number(value, 'f', decimals);
}

QString count(uint64_t value)
{
    return QString::number(static_cast<qulonglong>(value));
}

QString millis(double nanos)
{
    return number(nanos / 1e6, 6); // 6 decimals keep whole nanoseconds
}

struct PercentileColumn {
    const char *name;
    double percentile;
};

// Fixed here rather than taken from reportPercentiles(): the columns are an interface and must not move when the
// text report changes what it shows.
constexpr PercentileColumn kPercentileColumns[] = {
    { "p10_ms", 10 },
    { "p25_ms", 25 },
    { "p50_ms", 50 },
    { "p75_ms", 75 },
    { "p90_ms", 90 },
    { "p95_ms", 95 },
    { "p99_ms", 99 },
    { "p99_9_ms", 99.9 },
    { "p99_99_ms", 99.99 },
};

void appendRow(QString &out, const QStringList &fields)
{
    bool first = true;
    for (const QString &field : fields) {
        if (!first)
            out += u',';
        first = false;
        out += csvField(field);
    }
    out += u'\n';
}

} // namespace

QString csvField(const QString &text)
{
    const bool quote = text.contains(u',') || text.contains(u'"') || text.contains(u'\n') || text.contains(u'\r');
    if (!quote)
        return text;
    QString escaped = text;
    escaped.replace(QStringLiteral("\""), QStringLiteral("\"\""));
    return u'"' + escaped + u'"';
}

QStringList summaryCsvColumns()
{
    QStringList columns {
        QStringLiteral("id"),
        QStringLiteral("name"),
        QStringLiteral("labels"),
        QStringLiteral("status"),
        QStringLiteral("started_at"),
        QStringLiteral("method"),
        QStringLiteral("transport"),
        QStringLiteral("codec"),
        QStringLiteral("target"),
        QStringLiteral("count"),
        QStringLiteral("ok"),
        QStringLiteral("failed"),
        QStringLiteral("duration_s"),
        QStringLiteral("rps"),
        QStringLiteral("mean_ms"),
        QStringLiteral("stddev_ms"),
        QStringLiteral("min_ms"),
    };
    for (const PercentileColumn &column : kPercentileColumns)
        columns << QString::fromLatin1(column.name);
    columns << QStringLiteral("max_ms") << QStringLiteral("client_cpu_per_call_us")
            << QStringLiteral("server_cpu_per_call_us") << QStringLiteral("client_peak_rss_bytes")
            << QStringLiteral("server_peak_rss_bytes") << QStringLiteral("bytes_sent")
            << QStringLiteral("bytes_received")
            // Streaming runs; empty for unary ones.
            << QStringLiteral("messages_sent") << QStringLiteral("messages_received")
            << QStringLiteral("messages_per_s") << QStringLiteral("message_p50_ms") << QStringLiteral("message_p90_ms")
            << QStringLiteral("message_p99_ms")
            // What was asked of the run (from its scenario; empty when unknown, as for an imported report), and
            // bytes per call, for rows that compare runs of different sizes.
            << QStringLiteral("concurrency") << QStringLiteral("payload") << QStringLiteral("bytes_sent_per_call")
            << QStringLiteral("bytes_received_per_call")
            // Server streams: from the call's start to its first message (the message_* columns are then the gaps
            // between the later messages).
            << QStringLiteral("first_message_p50_ms") << QStringLiteral("first_message_p99_ms");
    return columns;
}

QByteArray runsSummaryCsv(const QList<RunRecord> &runs)
{
    QString out;
    appendRow(out, summaryCsvColumns());
    for (const RunRecord &run : runs) {
        const RunSnapshot &s = run.snapshot;
        const LatencyHistogram &ok = s.latency;
        const bool hasOk = !ok.isEmpty();
        const bool hasCalls = s.callsCompleted() > 0;
        QStringList row {
            run.id > 0 ? QString::number(run.id) : QString(),
            run.name,
            run.labels.join(u';'),
            run.status,
            run.startedAt.isValid() ? run.startedAt.toUTC().toString(Qt::ISODateWithMs) : QString(),
            run.method,
            run.transport,
            run.codec,
            run.target,
            count(s.callsCompleted()),
            count(s.callsOk()),
            count(s.callsFailed()),
            number(std::chrono::duration<double>(s.elapsed).count(), 6),
            number(s.requestsPerSecond(), 3),
            hasOk ? millis(ok.mean()) : QString(),
            hasOk ? millis(ok.stddev()) : QString(),
            hasOk ? millis(static_cast<double>(ok.min())) : QString(),
        };
        for (const PercentileColumn &column : kPercentileColumns)
            row << (hasOk ? millis(static_cast<double>(ok.percentile(column.percentile))) : QString());
        row << (hasOk ? millis(static_cast<double>(ok.max())) : QString());
        row << (hasCalls && s.hasClientStats() ? number(s.clientCpuPerCallUs(), 3) : QString());
        // Empty, not 0, when rpcscope could not sample the server: 0 would read as a free server.
        row << (hasCalls && s.hasServerStats ? number(s.serverCpuPerCallUs(), 3) : QString());
        row << (s.clientPeakRssBytes ? count(s.clientPeakRssBytes) : QString());
        row << (s.hasServerStats && s.serverPeakRssBytes ? count(s.serverPeakRssBytes) : QString());
        row << count(s.bytesSent) << count(s.bytesReceived);
        const bool streams = s.hasStreams();
        const LatencyHistogram &m = s.messageLatency;
        row << (streams ? count(s.messagesSent) : QString()) << (streams ? count(s.messagesReceived) : QString())
            << (streams ? number(s.messagesReceivedPerSecond(), 3) : QString());
        for (double p : { 50.0, 90.0, 99.0 })
            row << (m.isEmpty() ? QString() : millis(static_cast<double>(m.percentile(p))));
        const QJsonValue concurrency
            = run.scenario.value(QStringLiteral("load")).toObject().value(QStringLiteral("concurrency"));
        QStringList fills;
        for (const auto &fill : run.scenario.value(QStringLiteral("fills")).toArray())
            fills << fill.toString();
        row << (concurrency.isDouble() ? QString::number(concurrency.toInteger()) : QString()) << fills.join(u';');
        const auto calls = static_cast<double>(s.callsCompleted());
        row << (hasCalls ? number(static_cast<double>(s.bytesSent) / calls, 1) : QString())
            << (hasCalls ? number(static_cast<double>(s.bytesReceived) / calls, 1) : QString());
        const LatencyHistogram &first = s.firstMessageLatency;
        for (double p : { 50.0, 99.0 })
            row << (first.isEmpty() ? QString() : millis(static_cast<double>(first.percentile(p))));
        appendRow(out, row);
    }
    return out.toUtf8();
}

QByteArray histogramCsv(const LatencyHistogram &histogram)
{
    QString out = QStringLiteral("low_ns,high_ns,count,cumulative_fraction\n");
    const auto total = static_cast<double>(histogram.count());
    uint64_t seen = 0;
    for (const LatencyHistogram::Bucket &bucket : histogram.buckets()) {
        seen += bucket.count;
        appendRow(out,
            { count(bucket.lowNs), count(bucket.highNs), count(bucket.count),
                number(static_cast<double>(seen) / total, 9) });
    }
    return out.toUtf8();
}

QByteArray timelineCsv(const QList<IntervalPoint> &timeline)
{
    // A streaming run's file has its messages too, in columns to the right.
    const bool streams
        = std::any_of(timeline.begin(), timeline.end(), [](const IntervalPoint &p) { return p.messages > 0; });
    QString out = QStringLiteral("end_s,seconds,calls,errors,rps,p50_ms,p90_ms,p99_ms,concurrency");
    out += streams ? QStringLiteral(",messages,messages_per_s,message_p50_ms,message_p90_ms,message_p99_ms\n")
                   : QStringLiteral("\n");
    for (const IntervalPoint &point : timeline) {
        // An interval without OK calls has no percentiles: empty fields, so a plot shows a gap and not a 0 ms dip.
        const bool hasOk = point.calls > point.errors;
        appendRow(out,
            { number(point.endSeconds, 6), number(point.seconds, 6), count(point.calls), count(point.errors),
                number(point.requestsPerSecond(), 3), hasOk ? millis(static_cast<double>(point.p50)) : QString(),
                hasOk ? millis(static_cast<double>(point.p90)) : QString(),
                hasOk ? millis(static_cast<double>(point.p99)) : QString(), QString::number(point.concurrency) });
        if (streams) {
            out.chop(1); // the row's newline: the message columns follow
            const bool timed = point.messageP50 > 0;
            out += u',';
            appendRow(out,
                { count(point.messages), number(point.messagesPerSecond(), 3),
                    timed ? millis(static_cast<double>(point.messageP50)) : QString(),
                    timed ? millis(static_cast<double>(point.messageP90)) : QString(),
                    timed ? millis(static_cast<double>(point.messageP99)) : QString() });
        }
    }
    return out.toUtf8();
}

QByteArray rawSamplesCsv(const std::vector<RawSample> &samples)
{
    // The same bytes as --raw-samples writes, so scripts read either file.
    QByteArray data;
    QBuffer buffer(&data);
    buffer.open(QIODevice::WriteOnly);
    writeRawSamplesCsv(buffer, samples);
    return data;
}

} // namespace rpcscope
