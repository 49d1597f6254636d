#include "runsnapshot.h"

#include "util/printable.h"

#include <algorithm>
#include <cmath>

namespace rpcscope {

QString runStateName(RunState state)
{
    switch (state) {
    case RunState::Idle:
        return QStringLiteral("idle");
    case RunState::WarmingUp:
        return QStringLiteral("warming up");
    case RunState::Running:
        return QStringLiteral("running");
    case RunState::Finished:
        return QStringLiteral("finished");
    case RunState::Stopped:
        return QStringLiteral("stopped");
    }
    return {};
}

void addCounts(RunSnapshot &total, const RunSnapshot &part)
{
    total.latency.merge(part.latency);
    total.errorLatency.merge(part.errorLatency);
    total.serviceLatency.merge(part.serviceLatency);
    total.sendLag.merge(part.sendLag);
    total.callsSent += part.callsSent;
    total.lateSends += part.lateSends;
    total.intendedCalls += part.intendedCalls;
    total.messagesSent += part.messagesSent;
    total.messagesReceived += part.messagesReceived;
    total.messageLatency.merge(part.messageLatency);
    total.firstMessageLatency.merge(part.firstMessageLatency);
    total.clientCpuSeconds += part.clientCpuSeconds;
    total.serverCpuSeconds += part.serverCpuSeconds;
    total.serverCpuInTicks = total.serverCpuInTicks || part.serverCpuInTicks;
    for (size_t i = 0; i < total.statusCounts.size(); ++i)
        total.statusCounts[i] += part.statusCounts[i];
    for (const ErrorSample &e : part.errors) {
        auto same = std::find_if(total.errors.begin(), total.errors.end(),
            [&e](const ErrorSample &t) { return t.status == e.status && t.message == e.message; });
        if (same != total.errors.end())
            same->count += e.count;
        else
            total.errors.append(e);
    }
    total.warmupCalls += part.warmupCalls;
    total.bytesSent += part.bytesSent;
    total.bytesReceived += part.bytesReceived;
    total.serverNotifications += part.serverNotifications;
    total.repliesChecked += part.repliesChecked;
    for (const UnexpectedReply &kept : part.unexpectedReplies) {
        if (total.unexpectedReplies.size() < kKeptUnexpectedReplies)
            total.unexpectedReplies.push_back(kept);
    }
    total.plannedCalls += part.plannedCalls;
}

void appendRun(RunSnapshot &total, const RunSnapshot &block)
{
    const double offset = std::chrono::duration<double>(total.elapsed).count();
    total.state = block.state;
    total.expectedStatuses = block.expectedStatuses;
    total.openLoop = total.openLoop || block.openLoop;
    total.intendedRate = block.intendedRate;
    addCounts(total, block);
    for (IntervalPoint point : block.timeline) {
        point.endSeconds += offset;
        total.timeline.append(point);
    }
    total.clientPeakRssBytes = std::max(total.clientPeakRssBytes, block.clientPeakRssBytes);
    total.hasServerStats = total.hasServerStats || block.hasServerStats;
    total.serverPeakRssBytes = std::max(total.serverPeakRssBytes, block.serverPeakRssBytes);
    total.elapsed += block.elapsed;
    total.plannedDuration += block.plannedDuration;
    total.blocks.insert(total.blocks.end(), block.blocks.cbegin(), block.blocks.cend());
    if (!block.blocksConnection.isEmpty())
        total.blocksConnection = block.blocksConnection;
    total.blocksByClient = total.blocksByClient || block.blocksByClient;
    if (!block.abRunId.isEmpty())
        total.abRunId = block.abRunId;
}

double RunSnapshot::requestsPerSecond() const
{
    const double seconds = std::chrono::duration<double>(elapsed).count();
    return seconds > 0 ? static_cast<double>(callsCompleted()) / seconds : 0.0;
}

double RunSnapshot::okPerSecond() const
{
    const double seconds = std::chrono::duration<double>(elapsed).count();
    return seconds > 0 ? static_cast<double>(callsOk()) / seconds : 0.0;
}

double RunSnapshot::messagesReceivedPerSecond() const
{
    const double seconds = std::chrono::duration<double>(elapsed).count();
    return seconds > 0 ? static_cast<double>(messagesReceived) / seconds : 0.0;
}

bool RunSnapshot::keptUp() const
{
    if (!openLoop || callsSent == 0)
        return true;
    // More than 1% of calls sent over 1 ms late, or fewer than 95% of the intended calls sent.
    return lateSends * 100 <= callsSent && static_cast<double>(callsSent) >= 0.95 * intendedCalls - 1;
}

double RunSnapshot::progress() const
{
    if (isFinal())
        return 1.0;
    double p = -1;
    if (plannedCalls > 0)
        p = static_cast<double>(callsCompleted()) / static_cast<double>(plannedCalls);
    if (plannedDuration.count() > 0)
        p = std::max(p, static_cast<double>(elapsed.count()) / static_cast<double>(plannedDuration.count()));
    return p < 0 ? -1 : std::min(p, 1.0);
}

std::chrono::nanoseconds RunSnapshot::eta() const
{
    const double p = progress();
    if (p <= 0 || elapsed.count() <= 0)
        return std::chrono::nanoseconds(-1);
    if (p >= 1)
        return std::chrono::nanoseconds(0);
    return std::chrono::nanoseconds(static_cast<int64_t>(static_cast<double>(elapsed.count()) * (1 - p) / p));
}

QString okCallsLabel(const RunSnapshot &run)
{
    if (run.expectedStatuses.onlyOk())
        return QStringLiteral("OK calls");
    return QStringLiteral("calls that ended %1, as expected")
        .arg(run.expectedStatuses.names().join(QStringLiteral(" or ")));
}

QString failureSummary(const RunSnapshot &run)
{
    const uint64_t failed = run.callsFailed();
    if (failed == 0)
        return {};
    const uint64_t all = run.callsCompleted();
    QString lead = failed == all
        ? (all == 1 ? QStringLiteral("the only call failed") : QStringLiteral("all %1 calls failed").arg(all))
        : QStringLiteral("%1 of %2 calls failed (%3%)")
              .arg(failed)
              .arg(all)
              .arg(100.0 * static_cast<double>(failed) / static_cast<double>(all), 0, 'f', 1);
    // The messages of the calls that failed (not of an expected status), most frequent first.
    QList<ErrorSample> errors;
    for (const ErrorSample &e : run.errors) {
        if (!run.expectedStatuses.has(e.status))
            errors << e;
    }
    std::stable_sort(
        errors.begin(), errors.end(), [](const ErrorSample &x, const ErrorSample &y) { return x.count > y.count; });
    QStringList kinds;
    for (const ErrorSample &e : errors) {
        QString kind = callStatusName(e.status);
        const QString message = printable(e.message.simplified());
        if (!message.isEmpty())
            kind += QStringLiteral(": ") + (message.size() > 200 ? message.left(199) + QChar(0x2026) : message);
        if (failed != all || errors.size() > 1)
            kind += QStringLiteral(" (%1)").arg(e.count);
        kinds << kind;
    }
    if (kinds.isEmpty()) { // no message kept: name the statuses from their counts
        for (int code = 0; code < CallStatus::SlotCount; ++code) {
            const uint64_t c = run.statusCounts[static_cast<size_t>(code)];
            if (c && !run.expectedStatuses.has(code))
                kinds << QStringLiteral("%1 (%2)").arg(callStatusName(code)).arg(c);
        }
    }
    constexpr qsizetype kShown = 3;
    QString text = lead;
    if (!kinds.isEmpty())
        text += QStringLiteral(": ") + kinds.mid(0, kShown).join(QStringLiteral(", "));
    if (kinds.size() > kShown)
        text += QStringLiteral(" and %1 other kind(s)").arg(kinds.size() - kShown);
    return text;
}

std::optional<BackToBackGaps> backToBackGaps(const RunSnapshot &run)
{
    const LatencyHistogram &gaps = run.messageLatency;
    if (run.firstMessageLatency.isEmpty() || gaps.isEmpty() || gaps.min() >= kBackToBackCeilingNs)
        return std::nullopt; // not a server stream, or no gap as short as a read of a message already in
    BackToBackGaps result;
    result.shortestNs = gaps.min();
    result.thresholdNs = 2 * gaps.min();
    for (const LatencyHistogram::Bucket &bucket : gaps.buckets()) {
        if (bucket.lowNs > result.thresholdNs)
            break;
        // A bucket across the threshold counts in proportion to its part under it.
        const auto width = static_cast<double>(bucket.highNs - bucket.lowNs + 1);
        const auto under = static_cast<double>(std::min(bucket.highNs, result.thresholdNs) - bucket.lowNs + 1);
        result.count += static_cast<uint64_t>(std::llround(static_cast<double>(bucket.count) * under / width));
    }
    result.share = static_cast<double>(result.count) / static_cast<double>(gaps.count());
    if (result.share < kBackToBackShare)
        return std::nullopt;
    return result;
}

} // namespace rpcscope
