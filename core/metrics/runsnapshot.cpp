#include "runsnapshot.h"

#include <algorithm>

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

double RunSnapshot::requestsPerSecond() const
{
    const double seconds = std::chrono::duration<double>(elapsed).count();
    return seconds > 0 ? static_cast<double>(callsCompleted()) / seconds : 0.0;
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

} // namespace rpcscope
