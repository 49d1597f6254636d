#pragma once

#include <chrono>
#include <cstdint>

namespace rpcscope {

/**
 * An arrival-rate schedule for open-loop runs, in ghz's terms (--rps, --load-schedule, --load-start, --load-step,
 * --load-end, --load-step-duration, --load-max-duration).
 */
struct RateSchedule {
    enum class Kind { Constant, Step, Line };
    Kind kind = Kind::Constant;
    double start = 0; ///< calls per second at t = 0 (Constant: the rate)
    double step = 0; ///< Step: added every stepDuration; Line: added per second (may be negative)
    double end = 0; ///< the rate stops changing once it reaches this (0 = no bound)
    std::chrono::nanoseconds stepDuration { std::chrono::seconds(1) };
    std::chrono::nanoseconds maxDuration { 0 }; ///< 0 = no time bound

    /// The rate at time @p t.
    double rateAt(std::chrono::nanoseconds t) const;
    /**
     * The intended send time of call number @p k (0-based): the time at which the integral of the rate reaches k.
     * std::chrono::nanoseconds::max() when the schedule never gets there (the rate fell to zero).
     */
    std::chrono::nanoseconds intendedTime(uint64_t k) const;
    /// Empty when valid, else what is wrong (in the schedule's own terms; front ends name the field).
    const char *problem() const;
};

struct PaceDecision {
    std::chrono::nanoseconds due { 0 }; ///< the next call's intended send time, since the start
    std::chrono::nanoseconds wait { 0 }; ///< how long until then (0 = due now or overdue)
    bool stop = false; ///< the schedule is over: send nothing more
};

/**
 * The pacer, as a pure function: given the time since the timed phase began and how many calls were sent, when is
 * the next one due? No clock inside; callers pass it in (tests use tables).
 */
PaceDecision pace(const RateSchedule &schedule, std::chrono::nanoseconds elapsed, uint64_t sent);

} // namespace rpcscope
