#include "pacer.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rpcscope {

namespace {
using Ns = std::chrono::nanoseconds;
constexpr double kNs = 1e9;

Ns fromSeconds(double s)
{
    if (!std::isfinite(s) || s * kNs >= static_cast<double>(std::numeric_limits<int64_t>::max()))
        return Ns::max();
    return Ns(static_cast<int64_t>(std::llround(s * kNs)));
}

/// The rate after @p changes applications of @p delta to start, held at end once reached.
double boundedRate(const RateSchedule &s, double value)
{
    if (s.end > 0) {
        if (s.step >= 0)
            value = std::min(value, s.end);
        else
            value = std::max(value, s.end);
    }
    return std::max(0.0, value);
}
} // namespace

double RateSchedule::rateAt(Ns t) const
{
    const double seconds = static_cast<double>(t.count()) / kNs;
    switch (kind) {
    case Kind::Constant:
        return std::max(0.0, start);
    case Kind::Step: {
        const double steps = std::floor(static_cast<double>(t.count()) / static_cast<double>(stepDuration.count()));
        return boundedRate(*this, start + steps * step);
    }
    case Kind::Line:
        return boundedRate(*this, start + seconds * step);
    }
    return 0;
}

const char *RateSchedule::problem() const
{
    if (start < 0)
        return "the start rate must not be negative";
    if (kind == Kind::Constant && start <= 0)
        return "the rate must be positive";
    if (kind == Kind::Step && stepDuration.count() <= 0)
        return "the step duration must be positive";
    if (kind != Kind::Constant && start <= 0 && step <= 0)
        return "the rate never becomes positive";
    return nullptr;
}

Ns RateSchedule::intendedTime(uint64_t k) const
{
    const auto target = static_cast<double>(k);
    switch (kind) {
    case Kind::Constant:
        return start > 0 ? fromSeconds(target / start) : Ns::max();
    case Kind::Step: {
        // Walk the steps; once the rate stops changing (bound reached, or step 0) the rest is one division.
        const double stepSeconds = static_cast<double>(stepDuration.count()) / kNs;
        double done = 0;
        for (int64_t i = 0;; ++i) {
            const double rate = boundedRate(*this, start + static_cast<double>(i) * step);
            const double next = boundedRate(*this, start + static_cast<double>(i + 1) * step);
            const double t0 = static_cast<double>(i) * stepSeconds;
            if (rate > 0 && done + rate * stepSeconds > target)
                return fromSeconds(t0 + (target - done) / rate);
            if (next == rate) { // constant from here on
                return rate > 0 ? fromSeconds(t0 + stepSeconds + (target - done - rate * stepSeconds) / rate)
                                : Ns::max();
            }
            done += rate * stepSeconds;
            if (i > 10'000'000)
                return Ns::max();
        }
    }
    case Kind::Line: {
        // Count N(t) = start*t + step*t^2/2 until the rate reaches its bound (or zero), linear after that.
        double bound = std::numeric_limits<double>::infinity(); // time at which the rate stops changing
        if (step > 0 && end > 0)
            bound = (end - start) / step;
        else if (step < 0)
            bound = ((end > 0 ? std::max(end, 0.0) : 0.0) - start) / step;
        if (step == 0)
            return start > 0 ? fromSeconds(target / start) : Ns::max();
        bound = std::max(0.0, bound);
        const double countAtBound
            = std::isinf(bound) ? std::numeric_limits<double>::infinity() : start * bound + step * bound * bound / 2;
        if (target <= countAtBound) {
            // Solve step/2 t^2 + start t - target = 0 for the smallest t >= 0.
            const double disc = start * start + 2 * step * target;
            if (disc < 0)
                return Ns::max();
            return fromSeconds((-start + std::sqrt(disc)) / step);
        }
        const double rate = boundedRate(*this, start + step * bound);
        return rate > 0 ? fromSeconds(bound + (target - countAtBound) / rate) : Ns::max();
    }
    }
    return Ns::max();
}

PaceDecision pace(const RateSchedule &schedule, Ns elapsed, uint64_t sent)
{
    const Ns due = schedule.intendedTime(sent);
    PaceDecision decision;
    if (due == Ns::max() || (schedule.maxDuration.count() > 0 && due >= schedule.maxDuration)) {
        decision.stop = true;
        return decision;
    }
    decision.due = due;
    decision.wait = due > elapsed ? due - elapsed : Ns(0);
    return decision;
}

} // namespace rpcscope
