#include "textreport.h"

#include "util/printable.h"
#include "util/units.h"

#include <QStringList>

#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace rpcscope {

const QList<double> &reportPercentiles()
{
    static const QList<double> percentiles { 10, 25, 50, 75, 90, 95, 99, 99.9, 99.99 };
    return percentiles;
}

namespace {

QString pad(const QString &label, int width)
{
    return label.leftJustified(width);
}

QString percentileLabel(double p)
{
    return QString::number(p, 'g', 6);
}

/// ghz-style bars over log-spaced buckets between the fastest and the slowest call.
QString histogramText(const LatencyHistogram &h)
{
    if (h.isEmpty())
        return QStringLiteral("  (no successful calls)\n");
    constexpr int kBuckets = 10;
    constexpr int kBarWidth = 40;
    const double low = std::max<double>(1.0, static_cast<double>(h.min()));
    const double high = std::max<double>(low, static_cast<double>(h.max()));
    std::vector<double> edges(kBuckets + 1);
    for (int i = 0; i <= kBuckets; ++i)
        edges[static_cast<size_t>(i)] = low * std::pow(high / low, static_cast<double>(i) / kBuckets);
    std::vector<uint64_t> counts(kBuckets, 0);
    for (const auto &bucket : h.buckets()) {
        const double mid
            = std::clamp(0.5 * (static_cast<double>(bucket.lowNs) + static_cast<double>(bucket.highNs)), low, high);
        auto it = std::lower_bound(edges.begin() + 1, edges.end(), mid);
        const auto index = std::min<ptrdiff_t>(it - edges.begin() - 1, kBuckets - 1);
        counts[static_cast<size_t>(std::max<ptrdiff_t>(index, 0))] += bucket.count;
    }
    const uint64_t most = *std::max_element(counts.begin(), counts.end());
    QString out;
    for (int i = 0; i < kBuckets; ++i) {
        const uint64_t c = counts[static_cast<size_t>(i)];
        const int bar
            = most ? static_cast<int>(std::lround(static_cast<double>(c) * kBarWidth / static_cast<double>(most))) : 0;
        out += QStringLiteral("  %1 [%2]\t|%3\n")
                   .arg(pad(formatNanos(edges[static_cast<size_t>(i) + 1]), 10), QString::number(c),
                       QString(bar, QChar(0x220E)));
    }
    return out;
}

/// The Server CPU line: per call, with its resolution when it was counted in clock ticks.
QString serverCpuText(const RunSnapshot &run)
{
    // Another process's CPU time comes from its nanosecond CPU clock; when only /proc's clock ticks (10 ms at 100
    // Hz) could be read, at the start and the end, it is coarse over few calls, and said so rather than shown as
    // if exact.
    const double tickUs = 1e6 / static_cast<double>(std::max(1L, sysconf(_SC_CLK_TCK)));
    const double resolutionUs = 2 * tickUs / static_cast<double>(run.callsCompleted());
    const QString resolution = run.serverCpuInTicks && resolutionUs > 0.02 * std::max(run.serverCpuPerCallUs(), 1e-9)
        ? QStringLiteral(" (+/- %1 us: counted in %2 ms clock ticks; more calls make it finer)")
              .arg(resolutionUs, 0, 'f', 1)
              .arg(tickUs / 1000, 0, 'g', 3)
        : QString();
    return QStringLiteral("  Server CPU:\t%1 us/call%2 (%3 s in all), peak RSS %4\n")
        .arg(run.serverCpuPerCallUs(), 0, 'f', 1)
        .arg(resolution)
        .arg(run.serverCpuSeconds, 0, 'f', 2)
        .arg(formatBytes(static_cast<double>(run.serverPeakRssBytes)));
}

/// The Summary section: counts, times, rates and what the client (and server) cost.
QString summaryText(const RunSnapshot &run)
{
    QString out;
    LatencyHistogram all = run.latency;
    all.merge(run.errorLatency);
    out += QStringLiteral("\nSummary:\n");
    out += QStringLiteral("  Count:\t%1\n").arg(run.callsCompleted());
    out += QStringLiteral("  Total:\t%1\n").arg(formatDuration(run.elapsed));
    out += QStringLiteral("  Slowest:\t%1\n").arg(formatNanos(static_cast<double>(all.max())));
    out += QStringLiteral("  Fastest:\t%1\n").arg(formatNanos(static_cast<double>(all.min())));
    out += QStringLiteral("  Average:\t%1\n").arg(formatNanos(all.mean()));
    out += QStringLiteral("  Std dev:\t%1\n").arg(formatNanos(all.stddev()));
    out += QStringLiteral("  Requests/sec:\t%1\n").arg(run.requestsPerSecond(), 0, 'f', 2);
    // ghz counts failed calls in Requests/sec (kept, for scripts that read it); what failed, and the throughput of
    // the calls that did not, are said beside it.
    if (const QString failed = failureSummary(run); !failed.isEmpty()) {
        out += QStringLiteral("  OK calls/sec:\t%1\n").arg(run.okPerSecond(), 0, 'f', 2);
        out += QStringLiteral("  Failed:\t%1\n").arg(failed);
    }
    if (run.warmupCalls)
        out += QStringLiteral("  Warm-up:\t%1 calls (not counted)\n").arg(run.warmupCalls);
    if (run.callsCompleted()) {
        const auto n = static_cast<double>(run.callsCompleted());
        out += QStringLiteral("  Bytes/call:\t%1 sent, %2 received\n")
                   .arg(formatBytes(static_cast<double>(run.bytesSent) / n),
                       formatBytes(static_cast<double>(run.bytesReceived) / n));
    }
    if (run.serverNotifications)
        out += QStringLiteral("  Notifications:\t%1 from the server (msgpack-rpc; skipped, not replies)\n")
                   .arg(run.serverNotifications);
    if (run.callsCompleted() && run.hasClientStats())
        out += QStringLiteral("  Client CPU:\t%1 us/call (%2 s in all), peak RSS %3\n")
                   .arg(run.clientCpuPerCallUs(), 0, 'f', 1)
                   .arg(run.clientCpuSeconds, 0, 'f', 2)
                   .arg(formatBytes(static_cast<double>(run.clientPeakRssBytes)));
    else if (run.callsCompleted())
        out += QStringLiteral("  Client CPU:\t- (not measured), peak RSS -\n");
    if (run.hasServerStats && run.callsCompleted())
        out += serverCpuText(run);
    if (run.state == RunState::Stopped)
        out += QStringLiteral("  Stopped early:\tthe numbers cover the calls made until then\n");
    return out;
}

/// The open-loop section: intended against sent calls, and how late the sends were.
QString openLoopText(const RunSnapshot &run)
{
    QString out;
    const double seconds = std::chrono::duration<double>(run.elapsed).count();
    out += QStringLiteral("\nOpen loop (latency counted from each call's intended send time):\n");
    out += QStringLiteral("  Intended:\t%1 calls (rate now %2/s)\n")
               .arg(run.intendedCalls, 0, 'f', 0)
               .arg(run.intendedRate, 0, 'f', 1);
    out += QStringLiteral("  Sent:\t%1 calls, %2/s achieved\n")
               .arg(run.callsSent)
               .arg(seconds > 0 ? static_cast<double>(run.callsSent) / seconds : 0.0, 0, 'f', 1);
    out += QStringLiteral("  Send lag:\tp50 %1, p99 %2, max %3; %4 calls sent over 1 ms late\n")
               .arg(formatNanos(static_cast<double>(run.sendLag.percentile(50))),
                   formatNanos(static_cast<double>(run.sendLag.percentile(99))),
                   formatNanos(static_cast<double>(run.sendLag.max())))
               .arg(run.lateSends);
    if (!run.keptUp())
        out += QStringLiteral(
            "  WARNING:\tthe client could not keep up with the intended rate (too few slots: raise -c, "
            "or the server is too slow); latencies include the wait to be sent\n");
    return out;
}

/// The streams section: messages sent and received, and how long they took.
QString streamsText(const RunSnapshot &run)
{
    QString out;
    // One call is one stream; what each message took is beside it.
    const double calls = static_cast<double>(std::max<uint64_t>(1, run.callsCompleted()));
    out += QStringLiteral("\nStreams (one call = one stream):\n");
    out += QStringLiteral("  Messages:\t%1 sent, %2 received (%3/s; %4 sent and %5 received per call)\n")
               .arg(run.messagesSent)
               .arg(run.messagesReceived)
               .arg(run.messagesReceivedPerSecond(), 0, 'f', 1)
               .arg(static_cast<double>(run.messagesSent) / calls, 0, 'f', 1)
               .arg(static_cast<double>(run.messagesReceived) / calls, 0, 'f', 1);
    const auto distribution = [](const LatencyHistogram &h) -> QString {
        QStringList parts;
        for (double p : { 50.0, 90.0, 99.0, 99.9 })
            parts << QStringLiteral("p%1 %2").arg(
                percentileLabel(p), formatNanos(static_cast<double>(h.percentile(p))));
        return QStringLiteral("%1, mean %2, max %3")
            .arg(parts.join(QStringLiteral(", ")), formatNanos(h.mean()), formatNanos(static_cast<double>(h.max())));
    };
    const LatencyHistogram &first = run.firstMessageLatency;
    if (!first.isEmpty())
        out += QStringLiteral("  First message:	%1 (%2 streams; from the call's start)\n")
                   .arg(distribution(first))
                   .arg(first.count());
    const LatencyHistogram &m = run.messageLatency;
    if (!m.isEmpty()) {
        out += QStringLiteral("  %1\t%2 (%3 timed)\n")
                   .arg(first.isEmpty() ? QStringLiteral("Per message:") : QStringLiteral("Later gaps:"),
                       distribution(m))
                   .arg(m.count());
        if (const auto backToBack = backToBackGaps(run))
            out += QStringLiteral("  Note:\t%1% of the gaps are under %2 (twice the shortest): those messages came "
                                  "in together and were read back to back, so their gaps time rpcscope's reads, "
                                  "not the server's sends; the mean gap (%3) is the pace they came at\n")
                       .arg(backToBack->share * 100, 0, 'f', 0)
                       .arg(formatNanos(static_cast<double>(backToBack->thresholdNs)), formatNanos(m.mean()));
    }
    return out;
}

/// The response time histogram and the latency distribution of the OK calls.
QString latencyText(const RunSnapshot &run)
{
    QString out;
    const LatencyHistogram &ok = run.latency;
    out += QStringLiteral("\nResponse time histogram (%1):\n").arg(okCallsLabel(run));
    out += histogramText(ok);

    out += QStringLiteral("\nLatency distribution (%1):\n").arg(okCallsLabel(run));
    if (ok.isEmpty()) {
        out += QStringLiteral("  (no successful calls)\n");
    } else if (run.openLoop) {
        out += QStringLiteral("  %1 from intended send    from actual send\n").arg(QString(), 10);
        for (double p : reportPercentiles())
            out += QStringLiteral("  %1 % in %2 %3\n")
                       .arg(percentileLabel(p), 5)
                       .arg(formatNanos(static_cast<double>(ok.percentile(p))), -22)
                       .arg(formatNanos(static_cast<double>(run.serviceLatency.percentile(p))));
    } else {
        for (double p : reportPercentiles())
            out += QStringLiteral("  %1 % in %2\n")
                       .arg(percentileLabel(p), formatNanos(static_cast<double>(ok.percentile(p))));
    }
    return out;
}

/// The time series table: one row per interval, with the streams' columns when there are streams.
QString timeSeriesText(const RunSnapshot &run)
{
    QString out;
    out += QStringLiteral("\nTime series:\n  %1 %2 %3 %4 %5 %6 %7")
               .arg(QStringLiteral("t (s)"), 8)
               .arg(QStringLiteral("calls"), 9)
               .arg(QStringLiteral("errors"), 7)
               .arg(QStringLiteral("req/s"), 10)
               .arg(QStringLiteral("p50"), 9)
               .arg(QStringLiteral("p99"), 9)
               .arg(run.openLoop ? QStringLiteral("in flight") : QStringLiteral("callers"), 9);
    if (run.hasStreams()) // streams: what the messages did in each interval, to the right
        out += QStringLiteral(" %1 %2 %3")
                   .arg(QStringLiteral("msgs/s"), 10)
                   .arg(QStringLiteral("msg p50"), 9)
                   .arg(QStringLiteral("msg p99"), 9);
    out += u'\n';
    // An interval without an OK call (or a timed message) has no percentiles: "-", not 0 ns.
    const auto nanosOrDash = [](bool measured, uint64_t nanos) -> QString {
        return measured ? formatNanos(static_cast<double>(nanos)) : QStringLiteral("-");
    };
    for (const IntervalPoint &point : run.timeline) {
        const bool hasOk = point.calls > point.errors;
        out += QStringLiteral("  %1 %2 %3 %4 %5 %6 %7")
                   .arg(point.endSeconds, 8, 'f', 2)
                   .arg(point.calls, 9)
                   .arg(point.errors, 7)
                   .arg(point.requestsPerSecond(), 10, 'f', 1)
                   .arg(nanosOrDash(hasOk, point.p50), 9)
                   .arg(nanosOrDash(hasOk, point.p99), 9)
                   .arg(point.concurrency, 9);
        if (run.hasStreams())
            out += QStringLiteral(" %1 %2 %3")
                       .arg(point.messagesPerSecond(), 10, 'f', 1)
                       .arg(nanosOrDash(point.messageP50 > 0, point.messageP50), 9)
                       .arg(nanosOrDash(point.messageP50 > 0, point.messageP99), 9);
        out += u'\n';
    }
    return out;
}

/// The status code distribution: how many calls ended in each status.
QString statusCodesText(const RunSnapshot &run)
{
    QString out;
    out += QStringLiteral("\nStatus code distribution:\n");
    for (int i = 0; i < CallStatus::SlotCount; ++i) {
        const uint64_t c = run.statusCounts[static_cast<size_t>(i)];
        if (c)
            out += QStringLiteral("  [%1]\t%2 responses%3\n")
                       .arg(callStatusName(i))
                       .arg(c)
                       .arg(run.expectedStatuses.onlyOk() || !run.expectedStatuses.has(i)
                               ? QString()
                               : QStringLiteral(" (expected)"));
    }
    if (run.callsCompleted() == 0)
        out += QStringLiteral("  (no calls completed)\n");
    return out;
}

/// The error distribution: each distinct error kept, with its count.
QString errorsText(const RunSnapshot &run)
{
    QString out;
    out += QStringLiteral("\nError distribution:\n");
    for (const ErrorSample &e : run.errors)
        out += QStringLiteral("  [%1]\t%2: %3\n").arg(e.count).arg(callStatusName(e.status), printable(e.message));
    return out;
}

/// The --expect section: how many replies were checked, and the unexpected ones kept.
QString repliesCheckedText(const RunSnapshot &run)
{
    QString out;
    const uint64_t unexpected = run.statusCounts[CallStatus::UnexpectedReply];
    out += QStringLiteral("\nReplies checked (--expect): %1, %2 unexpected\n").arg(run.repliesChecked).arg(unexpected);
    for (size_t i = 0; i < run.unexpectedReplies.size(); ++i) {
        const UnexpectedReply &u = run.unexpectedReplies[i];
        out += QStringLiteral("  %1. failed %2: got %3\n").arg(i + 1).arg(printable(u.expectation), printable(u.got));
        for (const QByteArray &line : u.reply.split('\n'))
            out += QStringLiteral("     ") + printable(QString::fromUtf8(line)) + u'\n';
    }
    if (unexpected > run.unexpectedReplies.size())
        out += QStringLiteral("  (the first %1 kept)\n").arg(run.unexpectedReplies.size());
    return out;
}

} // namespace

QString formatTextSummary(const RunSnapshot &run)
{
    QString out;
    out += summaryText(run);
    if (run.openLoop)
        out += openLoopText(run);
    if (run.hasStreams())
        out += streamsText(run);
    out += latencyText(run);
    if (!run.timeline.isEmpty() && run.timeline.size() <= 120)
        out += timeSeriesText(run);
    out += statusCodesText(run);
    if (!run.errors.isEmpty())
        out += errorsText(run);
    if (run.repliesChecked)
        out += repliesCheckedText(run);
    return out;
}

} // namespace rpcscope
