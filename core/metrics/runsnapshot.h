#pragma once

#include "callstatus.h"
#include "latencyhistogram.h"

#include <QByteArray>
#include <QList>
#include <QString>

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

namespace rpcscope {

enum class RunState {
    Idle,
    WarmingUp,
    Running,
    Finished, ///< every planned call was made (or the duration ran out)
    Stopped, ///< the user stopped it; everything measured until then is kept
};

QString runStateName(RunState state);

/// A reply that failed an --expect, kept to be shown.
struct UnexpectedReply {
    QString expectation; ///< the --expect text that failed
    QString got; ///< what the reply had instead
    QByteArray reply; ///< the reply in the proto3 JSON mapping (indented), cut at kUnexpectedReplyBytes
};

/// Replies kept of those that failed an --expect (the first ones; the rest are only counted), and their size cap.
inline constexpr size_t kKeptUnexpectedReplies = 5;
inline constexpr qsizetype kUnexpectedReplyBytes = 4096;

struct RunSnapshot;
/**
 * Adds @p block, a run that followed the ones already in @p total, to it: histograms and counts add up, the time
 * series continues after @p total's elapsed time, peaks take the larger. For runs made of blocks (A/B mode).
 */
void appendRun(RunSnapshot &total, const RunSnapshot &block);
/**
 * What adds up however @p part ran beside the runs in @p total (after them, or at the same time on another worker):
 * histograms, status counts, errors, bytes, messages, calls sent, warm-up calls, checked replies, client and server
 * CPU time. Neither the time series nor elapsed time, peaks, rates or state: appendRun() and a merge of segments
 * each take those their own way.
 */
void addCounts(RunSnapshot &total, const RunSnapshot &part);

/// One timed call, kept only when the run records raw samples (LoadPlan::recordRawSamples).
struct RawSample {
    uint64_t sentNs; ///< intended send time, since the timed phase began
    uint32_t latencyUs; ///< from the intended send time, in microseconds (saturates at ~71 minutes)
    uint32_t status; ///< a CallStatus value
};

struct ErrorSample {
    int status = 0;
    QString message;
    uint64_t count = 0;
};

/// One interval of the time series (default 1 s): what completed in it.
struct IntervalPoint {
    double endSeconds = 0; ///< since the timed phase began
    double seconds = 0; ///< length (the last one may be shorter)
    uint64_t calls = 0;
    uint64_t errors = 0;
    uint64_t p50 = 0; ///< ns, OK calls
    uint64_t p90 = 0;
    uint64_t p99 = 0;
    int concurrency = 0; ///< callers running (closed loop) or calls in flight (open loop) at the interval's end
    // Streaming runs: the messages received in the interval, and the latency of the timed ones (ns).
    uint64_t messages = 0;
    uint64_t messageP50 = 0;
    uint64_t messageP90 = 0;
    uint64_t messageP99 = 0;
    /// Split runs (--segment) only: the interval's OK latencies as (bucket index, count) with their min and max, so
    /// that a merge of the workers' intervals has exact percentiles (percentiles themselves do not merge).
    std::vector<std::pair<int, uint64_t>> okBuckets {};
    uint64_t okMinNs = 0;
    uint64_t okMaxNs = 0;

    double requestsPerSecond() const { return seconds > 0 ? static_cast<double>(calls) / seconds : 0.0; }
    double messagesPerSecond() const { return seconds > 0 ? static_cast<double>(messages) / seconds : 0.0; }
};

/**
 * One block of an interleaved A/B run (AbRunner): the replicate its comparison is judged on. Its calls also count
 * in the side's totals; the block keeps its own latency histograms so a comparison can take each statistic per block
 * (or per server process, merging the blocks a process served).
 */
struct RunBlock {
    int round = 0; ///< from 1
    int process = 0; ///< which start of this side's server command served it (from 1); 0: a server not restarted
    std::chrono::nanoseconds elapsed { 0 };
    uint64_t calls = 0; ///< completed, OK or not
    uint64_t failed = 0;
    LatencyHistogram latency; ///< OK calls
    LatencyHistogram messageLatency; ///< streams: per message
    /// The CPU the side's server (its process tree's first process) and its client (rpcscope's process, or the
    /// client command's) spent over the block, from their CPU clocks; -1: not measured (a remote server, an import,
    /// a clock read in ticks). A comparison judges CPU per call on them as it judges latency.
    double serverCpuSeconds = -1;
    double clientCpuSeconds = -1;
};

/**
 * Everything a run has measured so far, as a plain value: the engine hands out copies, the GUI and the reports
 * read only these. Only the timed phase is in here; warm-up calls are counted in warmupCalls and nowhere else.
 */
struct RunSnapshot {
    uint64_t generation = 0; ///< which run of the engine this belongs to
    RunState state = RunState::Idle;

    /// Calls that ended OK, from their intended send time (in a closed loop that is their actual send time).
    LatencyHistogram latency;
    LatencyHistogram errorLatency; ///< calls that ended with any other status, likewise

    // Open loop only.
    bool openLoop = false;
    LatencyHistogram serviceLatency; ///< OK calls from their actual send time (uncorrected)
    LatencyHistogram sendLag; ///< how late each call was sent, against its intended time
    uint64_t callsSent = 0;
    uint64_t lateSends = 0; ///< sent more than 1 ms after their intended time
    double intendedRate = 0; ///< the schedule's rate now (or at the end)
    double intendedCalls = 0; ///< calls the schedule meant to send by now (or by the end)

    // Streaming calls only (gRPC server, client and bidi streams); all zero for unary calls.
    uint64_t messagesSent = 0; ///< by the client, over every call that ended
    uint64_t messagesReceived = 0; ///< by the client, as they arrive
    /// Per received message after the first of a server stream (the gap since the message before), or per reply of
    /// a bidi stream (the round trip from its request).
    LatencyHistogram messageLatency;
    /// Server streams: from each call's start to its first message (the server's time to first byte of data), kept
    /// apart from the gaps between the later messages.
    LatencyHistogram firstMessageLatency;

    QList<IntervalPoint> timeline;
    double clientCpuSeconds = 0; ///< user + system CPU of this process during the timed phase
    uint64_t clientPeakRssBytes = 0; ///< largest resident set sampled during the run
    bool hasServerStats = false; ///< the server is a process rpcscope started and could sample
    double serverCpuSeconds = 0;
    /// The server's CPU time was read in clock ticks (10 ms at 100 Hz), not from its nanosecond CPU clock: coarse
    /// over few calls, and said so.
    bool serverCpuInTicks = false;
    uint64_t serverPeakRssBytes = 0;
    StatusCounts statusCounts {};
    /// What counts as success (--expect-status; OK unless told): callsOk() and the latency histogram are the calls
    /// that ended with one of these, statusCounts what the server really said.
    ExpectedStatuses expectedStatuses;
    QList<ErrorSample> errors; ///< distinct error messages with their counts (capped, most frequent kept)

    uint64_t warmupCalls = 0;
    uint64_t bytesSent = 0;
    uint64_t bytesReceived = 0;
    uint64_t serverNotifications = 0; ///< msgpack-rpc notifications the server sent (skipped, not replies)
    /// --expect: the replies checked (a sample, ExpectSampling) and the first that failed (they count as
    /// UNEXPECTED_REPLY). repliesChecked stays 0 when nothing was checked (no --expect, or replies not decoded).
    uint64_t repliesChecked = 0;
    std::vector<UnexpectedReply> unexpectedReplies;

    std::chrono::nanoseconds elapsed { 0 }; ///< of the timed phase, up to now or to its end
    /// The wall-clock time the timed phase began, in microseconds since 1970 (0 = unknown): what lines up the time
    /// series of runs made in parallel (the segments of a split plan).
    int64_t timedStartUnixUs = 0;
    /// An A/B side's blocks, in order (empty for other runs); blocksConnection says how they connected.
    std::vector<RunBlock> blocks;
    QString blocksConnection; ///< "kept" (one connection per server process) or "per-block" (dialled anew)
    /// The blocks' calls were made by a client command (ab --a-client): its processes, not a server's, are what
    /// starts anew between them, and its connections are its own (blocksConnection is then empty).
    bool blocksByClient = false;
    /// The A/B run the blocks came from, the same on both its sides (a random id; empty for other runs, and for
    /// runs saved before it was kept): two runs of one A/B ran their i-th blocks or processes side by side, and are
    /// compared pair by pair.
    QString abRunId;

    uint64_t plannedCalls = 0; ///< 0 = bounded by duration only
    std::chrono::nanoseconds plannedDuration { 0 }; ///< 0 = bounded by count only

    uint64_t callsCompleted() const { return latency.count() + errorLatency.count(); }
    /// Calls that ended as expected: OK, or a status --expect-status asked for.
    uint64_t callsOk() const { return expectedStatuses.count(statusCounts); }
    uint64_t callsFailed() const { return callsCompleted() - callsOk(); }
    double requestsPerSecond() const;
    /// Calls that ended as expected, per second: the throughput (failed calls are not).
    double okPerSecond() const;
    bool hasStreams() const { return messagesSent > 0 || messagesReceived > 0; }
    double messagesReceivedPerSecond() const;
    /// 0..1 by count or by time, whichever is further along; -1 when unknown.
    double progress() const;
    /// Remaining time estimated from the progress so far; negative when unknown.
    std::chrono::nanoseconds eta() const;
    /// Open loop: false when the client could not send at the intended rate (the numbers then say so).
    bool keptUp() const;
    /// A run always spends some CPU and memory: none at all means they were not measured (an imported ghz report),
    /// which is shown as unknown ("-"), never as 0.
    bool hasClientStats() const { return clientCpuSeconds > 0 || clientPeakRssBytes > 0; }
    double clientCpuPerCallUs() const
    {
        return callsCompleted() ? clientCpuSeconds * 1e6 / static_cast<double>(callsCompleted()) : 0.0;
    }
    double serverCpuPerCallUs() const
    {
        return callsCompleted() ? serverCpuSeconds * 1e6 / static_cast<double>(callsCompleted()) : 0.0;
    }
    bool isFinal() const { return state == RunState::Finished || state == RunState::Stopped; }
};

/// What the latency histogram holds, for titles: "OK calls", or "calls that ended NOT_FOUND, as expected" after an
/// --expect-status.
QString okCallsLabel(const RunSnapshot &run);

/**
 * What failed, in one line, or empty when nothing did: "all 3000 calls failed: UNAVAILABLE: Connection refused"
 * when no call ended as expected, else "412 of 3000 calls failed (13.7%): UNAVAILABLE: Connection refused (400),
 * DEADLINE_EXCEEDED (12)" (the most frequent messages first, at most three, then how many other kinds there were).
 * What the Run page's banner and the CLI say, so that a failed run never reads as a measurement.
 */
QString failureSummary(const RunSnapshot &run);

/**
 * A server stream's gaps that time the client, not the server: when several messages come in one read, the client
 * hands them out one after the other and their "gaps" are only how fast it does that (about a microsecond with gRPC
 * C++), whatever pace the server sent them at. The shortest gap of the run is taken as that read cost, and gaps up to
 * twice it count as back to back. The mean gap stays the server's pace either way; the percentiles do not.
 */
struct BackToBackGaps {
    uint64_t shortestNs = 0; ///< the run's shortest gap: the client handing out a message it already had
    uint64_t thresholdNs = 0; ///< gaps up to this (twice the shortest) count as back to back
    uint64_t count = 0; ///< back-to-back gaps
    double share = 0; ///< of all the run's gaps, 0..1
};

/// A shortest gap at or above this is a wake-up from the network, not a read of a message already in (loopback
/// wake-ups take several microseconds): no gap is then called back to back.
inline constexpr uint64_t kBackToBackCeilingNs = 5000;
/// Back-to-back gaps are only worth a word from this share of all gaps on.
inline constexpr double kBackToBackShare = 0.05;

/// Set when a server stream's run has back-to-back gaps worth a word (see BackToBackGaps); nullopt otherwise.
std::optional<BackToBackGaps> backToBackGaps(const RunSnapshot &run);

} // namespace rpcscope
