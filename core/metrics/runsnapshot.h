#pragma once

#include "callstatus.h"
#include "latencyhistogram.h"

#include <QList>
#include <QString>

#include <chrono>
#include <cstdint>

namespace rpcscope {

enum class RunState {
    Idle,
    WarmingUp,
    Running,
    Finished, ///< every planned call was made (or the duration ran out)
    Stopped, ///< the user stopped it; everything measured until then is kept
};

QString runStateName(RunState state);

struct ErrorSample
{
    int status = 0;
    QString message;
    uint64_t count = 0;
};

/**
 * Everything a run has measured so far, as a plain value: the engine hands out copies, the GUI and the reports
 * read only these. Only the timed phase is in here; warm-up calls are counted in warmupCalls and nowhere else.
 */
struct RunSnapshot
{
    uint64_t generation = 0; ///< which run of the engine this belongs to
    RunState state = RunState::Idle;

    LatencyHistogram latency; ///< calls that ended OK
    LatencyHistogram errorLatency; ///< calls that ended with any other status
    StatusCounts statusCounts{};
    QList<ErrorSample> errors; ///< distinct error messages with their counts (capped, most frequent kept)

    uint64_t warmupCalls = 0;
    uint64_t bytesSent = 0;
    uint64_t bytesReceived = 0;

    std::chrono::nanoseconds elapsed{0}; ///< of the timed phase, up to now or to its end
    uint64_t plannedCalls = 0; ///< 0 = bounded by duration only
    std::chrono::nanoseconds plannedDuration{0}; ///< 0 = bounded by count only

    uint64_t callsCompleted() const { return latency.count() + errorLatency.count(); }
    uint64_t callsOk() const { return statusCounts[CallStatus::Ok]; }
    uint64_t callsFailed() const { return callsCompleted() - callsOk(); }
    double requestsPerSecond() const;
    /// 0..1 by count or by time, whichever is further along; -1 when unknown.
    double progress() const;
    /// Remaining time estimated from the progress so far; negative when unknown.
    std::chrono::nanoseconds eta() const;
    bool isFinal() const { return state == RunState::Finished || state == RunState::Stopped; }
};

} // namespace rpcscope
