#pragma once

#include "engine/expectations.h"
#include "engine/loadrun.h"
#include "load/pacer.h"
#include "load/segment.h"
#include "metrics/runsnapshot.h"

#include <QObject>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace rpcscope {

class Transport;

/// What a closed-loop run does; a snapshot of the caller's settings, never read again from outside.
struct LoadPlan {
    /// Closed loop: callers, each with one call in flight (ghz -c). Open loop: the most calls in flight at once.
    int concurrency = 50;
    uint64_t totalCalls = 200; ///< timed calls (ghz -n); 0 = bounded by duration only
    std::chrono::nanoseconds duration { 0 }; ///< the whole run's length, warm-up included (ghz -z); 0 = by count only
    uint64_t warmupCalls = 0; ///< made first, never counted in the statistics
    std::chrono::nanoseconds warmupDuration { 0 }; ///< or warm up for this long (closed loop, `concurrency` callers)
    /// Set: open loop, calls sent at the schedule's intended times whatever the replies do (--rps, --load-schedule).
    std::optional<RateSchedule> rate;
    /// Set (closed loop only): the number of callers follows this schedule (values are callers, not rates),
    /// never more than `concurrency` (--concurrency-schedule).
    std::optional<RateSchedule> concurrencySchedule;
    std::chrono::nanoseconds interval { std::chrono::seconds(1) }; ///< time-series resolution
    int64_t serverPid = 0; ///< a server process to sample for CPU and RSS (one rpcscope started); 0 = none
    /// Keep every timed call (16 bytes each) for export; off by default so memory stays flat with run length.
    bool recordRawSamples = false;
    /// --expect: what sampled replies must hold; a reply that does not counts as UNEXPECTED_REPLY.
    std::vector<Expectation> expectations;
    ExpectSampling expectSampling;
    /// --expect-status: the statuses that count as success (OK unless told); a call that ends OK when OK is not
    /// among them counts as UNEXPECTED_REPLY.
    ExpectedStatuses expectedStatuses;
    /// --segment I/N: this process sends its share of a plan split over N workers (see Segment). The counts above
    /// are already this segment's (segmentPlan()); the schedules stay the whole plan's and are shared out as they run.
    Segment segment;
    /// --start-at: the timed phase starts at this wall-clock time (the warm-up, if any, goes before), so that the
    /// workers of a split plan line up; unset = as soon as the warm-up is done.
    std::optional<std::chrono::system_clock::time_point> startAt;
    /// Told true right before the timed phase starts and false when it ends (not when there was none), on the
    /// engine's threads; it may block a little (a profiler switched on and off around the timed calls).
    std::function<void(bool timed)> timedPhase;
};

/**
 * The part of @p whole that segment @p segment sends: the counts (callers, calls, warm-up calls) dealt as Segment
 * says, the rest kept. std::nullopt with @p error when the plan cannot be divided: fewer callers (or calls in flight)
 * than workers, or fewer calls than workers, so that some worker would have nothing to do.
 */
std::optional<LoadPlan> segmentPlan(const LoadPlan &whole, Segment segment, QString *error);

/// Reads a warm-up given as a number of calls ("100") or a duration ("5s") into @p plan; false with @p error.
bool parseWarmup(const QString &text, LoadPlan *plan, QString *error);

/**
 * The load engine. Closed loop: `concurrency` callers each keep one call in flight until the plan is done.
 * Open loop: a dispatcher sends call k at the schedule's intended time t_k, whatever the replies do (at most
 * `concurrency` in flight; a call that must wait for a free slot is sent late). Latency is measured from the
 * intended send time, so a stalling server cannot hide its stall (no coordinated omission); the latency from the
 * actual send time is kept beside it, as is how late each call was sent.
 *
 * Calls run on the transport's threads, never on the thread that called start(). Results are read as snapshots
 * (value copies) at any time; runFinished() is emitted once per run, from a transport thread.
 *
 * A run has two phases. Warm-up calls go first (closed loop, by count or duration) and are not measured; the
 * timed phase starts when the last warm-up call is back, so its clock and statistics hold timed calls only. The
 * duration bounds the whole run, warm-up included: the timed phase gets what the warm-up leaves of it. When both a
 * count and a duration are set, whichever is reached first ends the run. Calls in flight when a count-bounded run
 * ends are waited for and counted; when a duration ends it, they get a grace period (3 x the p99 so far, 100 ms to
 * 2 s) and are then cancelled and counted as CANCELLED.
 */
class LoadEngine : public LoadRun {
    Q_OBJECT
public:
    explicit LoadEngine(QObject *parent = nullptr);
    ~LoadEngine() override;

    /// Starts a run; false (with @p error) when the plan makes no sense or a run is still going.
    bool start(std::unique_ptr<Transport> transport, const LoadPlan &plan, QString *error = nullptr);
    /// Ends the run early: calls in flight are cancelled and not counted; everything finished so far is kept.
    void stop() override;
    bool isRunning() const override;
    /// Blocks until the run ends; false on timeout.
    bool waitForFinished(std::chrono::milliseconds timeout) const override;

    /// A copy of the current measurements; cheap enough to call at 10-50 Hz. Thread-safe.
    RunSnapshot snapshot() const override;
    /// Which run this is (increments with every start()).
    uint64_t generation() const;
    /// The raw samples of the last run in send order (empty unless recorded). Call after it ended.
    std::vector<RawSample> rawSamples() const override;

private:
    class Run;
    std::shared_ptr<Run> m_run;
    uint64_t m_generation = 0;
};

} // namespace rpcscope
