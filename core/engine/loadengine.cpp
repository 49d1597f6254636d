#include "loadengine.h"

#include "metrics/processstats.h"
#include "transport/transport.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace rpcscope {

using Clock = std::chrono::steady_clock;
using std::chrono::nanoseconds;

namespace {
constexpr int kShards = 16; // callers share a few locked accumulators; snapshots merge them
constexpr size_t kMaxDistinctErrors = 64;
constexpr nanoseconds kLateSend = std::chrono::milliseconds(1);

enum Phase : int { WarmupPhase, TimedPhase, DonePhase };

struct alignas(64) Shard {
    std::mutex mutex;
    LatencyHistogram ok;
    LatencyHistogram failed;
    LatencyHistogram service; // open loop: OK calls from their actual send
    LatencyHistogram lag; // open loop: actual minus intended send time
    uint64_t lateSends = 0;
    StatusCounts status {};
    uint64_t bytesSent = 0;
    uint64_t bytesReceived = 0;
    uint64_t notifications = 0;
    uint64_t messagesSent = 0; // streaming calls only
    uint64_t messagesReceived = 0;
    LatencyHistogram message; // gaps of a server stream, round trips of a bidi stream
    LatencyHistogram firstMessage; // server streams: from the call's start to its first message
    std::map<std::pair<int, std::string>, uint64_t> errors;
    uint64_t otherErrors = 0; // beyond kMaxDistinctErrors distinct messages
    // The current time-series interval; the clock thread takes and resets these.
    LatencyHistogram intervalOk;
    uint64_t intervalErrors = 0;
    LatencyHistogram intervalMessage; // streams: the interval's timed messages
    uint64_t intervalMessages = 0;
    std::vector<RawSample> raw; // only with LoadPlan::recordRawSamples
};

/// Per slot, written before its call starts and read in its completion callback (ordered by the transport).
struct SlotTiming {
    Clock::time_point intended;
    Clock::time_point sent;
};
} // namespace

class LoadEngine::Run final : public CallSink {
public:
    Run(LoadEngine *engine, std::unique_ptr<Transport> transport, const LoadPlan &plan, uint64_t generation)
        : m_engine(engine)
        , m_transport(std::move(transport))
        , m_plan(plan)
        , m_generation(generation)
        , m_openLoop(plan.rate.has_value())
        , m_shards(kShards)
        , m_timing(static_cast<size_t>(plan.concurrency))
        , m_okUnexpected("ended OK, but --expect-status wanted "
              + plan.expectedStatuses.names().join(QStringLiteral(" or ")).toStdString())
    {
        if (!plan.expectations.empty())
            m_replyChecker = std::make_unique<ReplyChecker>(
                plan.expectations, plan.expectSampling, static_cast<size_t>(plan.concurrency));
        for (int i = 0; i < plan.concurrency; ++i)
            m_slots.push_back(m_transport->makeSlot(i, this));
    }

    ~Run() override
    {
        if (m_starter.joinable())
            m_starter.join();
        if (m_dispatcher.joinable())
            m_dispatcher.join();
        if (m_clock.joinable())
            m_clock.join();
    }

    void begin()
    {
        // -z bounds the whole run, warm-up included: the timed phase gets what the warm-up leaves.
        m_runDeadline = m_plan.duration.count() > 0 ? Clock::now() + m_plan.duration : Clock::time_point::max();
        if (m_plan.warmupCalls > 0 || m_plan.warmupDuration.count() > 0) {
            m_phase.store(WarmupPhase);
            m_active.store(m_plan.concurrency);
            m_warmupDeadline = Clock::now() + m_plan.warmupDuration;
            for (int i = 0; i < m_plan.concurrency; ++i)
                issueNext(i, Clock::now());
        } else {
            beginTimed();
        }
    }

    void stop()
    {
        {
            std::lock_guard lock(m_slotMutex);
            m_stopping.store(true);
        }
        m_slotCv.notify_all();
        for (auto &slot : m_slots)
            slot->cancel();
    }

    void callDone(int slot, CallOutcome &outcome) override
    {
        const auto now = Clock::now();
        if (outcome.fatal)
            stop(); // reported before anything was sent, from inside start(): no point in going on
        if (m_phase.load(std::memory_order_acquire) != TimedPhase) {
            m_warmupDone.fetch_add(1, std::memory_order_relaxed);
            issueNext(slot, now);
            return;
        }
        // A call we cancelled ourselves on Stop is not a server's failure: leave it out. One still in flight when the
        // run's time was up is counted, as cancelled (ghz does the same).
        const bool cancelledByUs = outcome.status == CallStatus::Cancelled && m_stopping.load() && !outcome.fatal;
        if (outcome.status == CallStatus::Cancelled && m_endedInFlight.load())
            outcome.errorMessage = "still in flight when the run's time (-z) was up";
        if (outcome.status == CallStatus::Ok && !m_plan.expectedStatuses.has(CallStatus::Ok)) {
            outcome.status = CallStatus::UnexpectedReply;
            outcome.errorMessage = m_okUnexpected;
        }
        if (m_replyChecker)
            m_replyChecker->check(slot, outcome); // sampled replies only; ends the slot's stream
        if (!cancelledByUs)
            record(slot, outcome, now);
        if (!m_openLoop) {
            issueNext(slot, now);
            return;
        }
        {
            std::lock_guard lock(m_slotMutex);
            m_freeSlots.push_back(slot);
        }
        m_running.fetch_sub(1);
        m_slotCv.notify_one();
        idle();
    }

    void messageReceived(
        int slot, MessageTiming timing, int64_t latencyNs, const google::protobuf::Message *message) override
    {
        if (m_phase.load(std::memory_order_acquire) != TimedPhase)
            return;
        if (m_replyChecker)
            m_replyChecker->checkMessage(slot, message);
        Shard &shard = m_shards[static_cast<size_t>(slot % kShards)];
        std::lock_guard lock(shard.mutex);
        ++shard.messagesReceived;
        ++shard.intervalMessages;
        if (latencyNs < 0 || timing == MessageTiming::Untimed)
            return;
        if (timing == MessageTiming::FirstMessage) {
            shard.firstMessage.record(static_cast<uint64_t>(latencyNs));
        } else {
            shard.message.record(static_cast<uint64_t>(latencyNs));
            shard.intervalMessage.record(static_cast<uint64_t>(latencyNs));
        }
    }

    RunSnapshot snapshot() const
    {
        RunSnapshot s;
        s.generation = m_generation;
        s.expectedStatuses = m_plan.expectedStatuses;
        s.plannedCalls = m_plan.totalCalls;
        s.timedStartUnixUs = m_timedStartUnixUs.load();
        s.plannedDuration = m_plan.duration;
        s.warmupCalls = m_warmupDone.load();
        s.openLoop = m_openLoop;
        s.callsSent = m_sent.load();
        std::map<std::pair<int, std::string>, uint64_t> errors;
        uint64_t otherErrors = 0;
        for (auto &shard : m_shards) {
            std::lock_guard lock(shard.mutex);
            s.latency.merge(shard.ok);
            s.errorLatency.merge(shard.failed);
            s.serviceLatency.merge(shard.service);
            s.sendLag.merge(shard.lag);
            s.lateSends += shard.lateSends;
            for (int i = 0; i < CallStatus::SlotCount; ++i)
                s.statusCounts[static_cast<size_t>(i)] += shard.status[static_cast<size_t>(i)];
            s.bytesSent += shard.bytesSent;
            s.bytesReceived += shard.bytesReceived;
            s.serverNotifications += shard.notifications;
            s.messagesSent += shard.messagesSent;
            s.messagesReceived += shard.messagesReceived;
            s.messageLatency.merge(shard.message);
            s.firstMessageLatency.merge(shard.firstMessage);
            for (const auto &[key, count] : shard.errors)
                errors[key] += count;
            otherErrors += shard.otherErrors;
        }
        for (const auto &[key, count] : errors)
            s.errors.append({ key.first, QString::fromStdString(key.second), count });
        if (m_replyChecker) {
            s.repliesChecked = m_replyChecker->checked();
            s.unexpectedReplies = m_replyChecker->kept();
        }
        if (otherErrors)
            s.errors.append({ CallStatus::Unknown, QStringLiteral("(other error messages)"), otherErrors });
        std::sort(s.errors.begin(), s.errors.end(), [](const auto &a, const auto &b) { return a.count > b.count; });
        {
            std::lock_guard lock(m_timelineMutex);
            s.timeline = m_timeline;
            s.clientPeakRssBytes = m_peakRss;
            s.serverPeakRssBytes = m_serverPeakRss;
        }

        std::lock_guard lock(m_stateMutex);
        s.state = m_state;
        if (m_state == RunState::Running)
            s.elapsed = Clock::now() - m_timedStart;
        else if (s.isFinal() && m_timedStarted)
            s.elapsed = m_timedEnd - m_timedStart;
        if (m_timedStarted) {
            s.clientCpuSeconds = (s.isFinal() ? m_cpuAtEnd : processCpuSeconds()) - m_cpuAtStart;
            if (m_serverCpuAtStart >= 0) {
                const double now = s.isFinal() ? m_serverCpuAtEnd : serverCpu();
                s.serverCpuInTicks = m_serverCpuCoarse.load();
                s.hasServerStats = now >= m_serverCpuAtStart;
                s.serverCpuSeconds = s.hasServerStats ? now - m_serverCpuAtStart : 0;
            }
            if (m_openLoop) {
                s.intendedRate = m_plan.rate->rateAt(s.elapsed) / m_plan.segment.count;
                s.intendedCalls = intendedCallsBy(s.elapsed);
            }
        }
        return s;
    }

    bool waitForFinished(std::chrono::milliseconds timeout) const
    {
        std::unique_lock lock(m_stateMutex);
        return m_finishedCv.wait_for(lock, timeout, [this] { return m_finished; });
    }

    /// Waits until the thread that ended the run has let go of the engine.
    void waitUntilQuiescent() const
    {
        std::unique_lock lock(m_stateMutex);
        m_finishedCv.wait(lock, [this] { return m_quiescent; });
    }

    std::vector<RawSample> rawSamples() const
    {
        std::vector<RawSample> all;
        for (auto &shard : m_shards) {
            std::lock_guard lock(shard.mutex);
            all.insert(all.end(), shard.raw.begin(), shard.raw.end());
        }
        std::sort(all.begin(), all.end(), [](const RawSample &a, const RawSample &b) { return a.sentNs < b.sentNs; });
        return all;
    }

    bool isFinished() const
    {
        std::lock_guard lock(m_stateMutex);
        return m_finished;
    }

    void setState(RunState state)
    {
        std::lock_guard lock(m_stateMutex);
        m_state = state;
    }

private:
    void record(int slot, const CallOutcome &outcome, Clock::time_point now)
    {
        const SlotTiming &timing = m_timing[static_cast<size_t>(slot)];
        const auto fromIntended = static_cast<uint64_t>((now - timing.intended).count());
        Shard &shard = m_shards[static_cast<size_t>(slot % kShards)];
        std::lock_guard lock(shard.mutex);
        const int status = std::clamp(outcome.status, 0, CallStatus::SlotCount - 1);
        ++shard.status[static_cast<size_t>(status)];
        if (m_plan.recordRawSamples)
            shard.raw.push_back({ static_cast<uint64_t>(std::max<int64_t>(0, (timing.intended - m_timedStart).count())),
                static_cast<uint32_t>(std::min<uint64_t>(fromIntended / 1000, UINT32_MAX)),
                static_cast<uint32_t>(status) });
        shard.bytesSent += outcome.bytesSent;
        shard.bytesReceived += outcome.bytesReceived;
        shard.notifications += outcome.notifications;
        shard.messagesSent += outcome.messagesSent;
        if (m_openLoop) {
            const nanoseconds lag = timing.sent - timing.intended;
            shard.lag.record(static_cast<uint64_t>(std::max<int64_t>(0, lag.count())));
            if (lag > kLateSend)
                ++shard.lateSends;
        }
        if (m_plan.expectedStatuses.has(status)) { // OK, or what --expect-status asked for
            shard.ok.record(fromIntended);
            shard.intervalOk.record(fromIntended);
            if (m_openLoop)
                shard.service.record(static_cast<uint64_t>((now - timing.sent).count()));
            return;
        }
        shard.failed.record(fromIntended);
        ++shard.intervalErrors;
        auto key = std::make_pair(status, outcome.errorMessage);
        auto it = shard.errors.find(key);
        if (it != shard.errors.end())
            ++it->second;
        else if (shard.errors.size() < kMaxDistinctErrors)
            shard.errors.emplace(std::move(key), 1);
        else
            ++shard.otherErrors;
    }

    void startCall(int slot, Clock::time_point intended)
    {
        SlotTiming &timing = m_timing[static_cast<size_t>(slot)];
        timing.intended = intended;
        timing.sent = Clock::now();
        if (m_openLoop)
            timing.intended = std::min(timing.intended, timing.sent); // early wake-ups do not count as negative
        else
            timing.intended = timing.sent;
        m_slots[static_cast<size_t>(slot)]->start(
            m_plan.segment.globalNumber(m_sent.fetch_add(1, std::memory_order_relaxed)));
    }

    // Closed loop (and warm-up): the slot that just finished makes the next call, if any is left.
    void issueNext(int slot, Clock::time_point now)
    {
        if (m_stopping.load(std::memory_order_relaxed))
            return idle();
        if (m_phase.load(std::memory_order_acquire) == WarmupPhase) {
            if (now >= m_runDeadline)
                return idle();
            if (m_plan.warmupDuration.count() > 0) {
                if (now >= m_warmupDeadline)
                    return idle();
            } else if (m_tickets.fetch_add(1, std::memory_order_relaxed) >= m_plan.warmupCalls) {
                return idle();
            }
            SlotTiming &timing = m_timing[static_cast<size_t>(slot)];
            timing.intended = timing.sent = Clock::now();
            m_slots[static_cast<size_t>(slot)]->start(
                m_plan.segment.globalNumber(m_warmupSent.fetch_add(1, std::memory_order_relaxed)));
            return;
        }
        if (m_plan.concurrencySchedule) {
            // Too many callers for the schedule now: this one parks until the controller needs it again.
            const int target = callersWanted(now);
            int running = m_running.load();
            while (running > target) {
                if (m_running.compare_exchange_weak(running, running - 1)) {
                    {
                        std::lock_guard lock(m_slotMutex);
                        m_parked.push_back(slot);
                    }
                    return idle();
                }
            }
        }
        if ((m_plan.totalCalls > 0 && m_tickets.fetch_add(1, std::memory_order_relaxed) >= m_plan.totalCalls)
            || (m_plan.duration.count() > 0 && now >= m_deadline) || scheduleOver(now)) {
            m_running.fetch_sub(1);
            return idle();
        }
        startCall(slot, now);
    }

    int callersWanted(Clock::time_point now) const
    {
        const double wanted = m_plan.concurrencySchedule->rateAt(now - m_timedStart);
        // A split plan: of the whole plan's callers now, this segment's share (caller i runs in segment i mod N).
        const auto whole = static_cast<uint64_t>(std::max(0.0, std::floor(wanted + 1e-9)));
        return static_cast<int>(std::min<uint64_t>(m_plan.segment.share(whole), m_plan.concurrency));
    }

    bool scheduleOver(Clock::time_point now) const
    {
        return m_plan.concurrencySchedule && m_plan.concurrencySchedule->maxDuration.count() > 0
            && now - m_timedStart >= m_plan.concurrencySchedule->maxDuration;
    }

    /// Closed loop with a concurrency schedule: every 10 ms, wakes parked callers while the schedule wants more.
    void controlConcurrency()
    {
        while (!m_stopping.load()) {
            const auto now = Clock::now();
            const bool countDone = m_plan.totalCalls > 0 && m_tickets.load() >= m_plan.totalCalls;
            if (countDone || (m_plan.duration.count() > 0 && now >= m_deadline) || scheduleOver(now))
                break;
            const int target = callersWanted(now);
            while (m_running.load() < target) {
                int slot = -1;
                {
                    std::lock_guard lock(m_slotMutex);
                    if (m_parked.empty())
                        break;
                    slot = m_parked.back();
                    m_parked.pop_back();
                }
                m_running.fetch_add(1);
                m_active.fetch_add(1);
                issueNext(slot, now);
            }
            std::unique_lock lock(m_slotMutex);
            m_slotCv.wait_for(lock, std::chrono::milliseconds(10), [this] { return m_stopping.load(); });
        }
        idle();
    }

    // Closed loop: every slot goes idle once per phase. Open loop: every call and the dispatcher each hold one
    // count. The last one out moves the run on.
    void idle()
    {
        if (m_active.fetch_sub(1, std::memory_order_acq_rel) != 1)
            return;
        if (m_phase.load() == WarmupPhase && !m_stopping.load())
            beginTimed();
        else
            finish();
    }

    /// Begins the timed phase now, or, with a start time still ahead (--start-at), from a thread that waits for it:
    /// this is called from the thread that started the run or from a transport's, neither of which may block.
    void beginTimed()
    {
        if (m_plan.startAt && std::chrono::system_clock::now() < *m_plan.startAt) {
            m_starter = std::thread([this] {
                {
                    std::unique_lock lock(m_slotMutex);
                    // The wall clock may be stepped while we wait: look again at least every 100 ms.
                    while (!m_stopping.load() && std::chrono::system_clock::now() < *m_plan.startAt)
                        m_slotCv.wait_for(lock,
                            std::min<nanoseconds>(
                                std::chrono::milliseconds(100), *m_plan.startAt - std::chrono::system_clock::now()));
                }
                if (m_stopping.load())
                    finish();
                else
                    beginTimedNow();
            });
            return;
        }
        beginTimedNow();
    }

    void beginTimedNow()
    {
        if (m_plan.timedPhase)
            m_plan.timedPhase(true);
        m_tickets.store(0);
        const auto now = Clock::now();
        m_timedStartUnixUs.store(
            std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
                .count());
        if (m_plan.startAt) {
            // Workers that start together run the same time: -z less the warm-up's own length, from the start time.
            m_runDeadline = m_plan.duration.count() > 0
                ? now + std::max<nanoseconds>(m_plan.duration - m_plan.warmupDuration, nanoseconds(0))
                : Clock::time_point::max();
        }
        {
            std::lock_guard lock(m_stateMutex);
            m_timedStart = now;
            m_timedStarted = true;
            m_state = RunState::Running;
            m_cpuAtStart = processCpuSeconds();
            m_serverCpuAtStart = serverCpu();
        }
        m_deadline = m_runDeadline;
        m_intervalStart = now;
        m_clock = std::thread([this] { clockLoop(); });
        if (m_openLoop) {
            for (int i = m_plan.concurrency - 1; i >= 0; --i)
                m_freeSlots.push_back(i);
            m_active.store(1); // the dispatcher's own count
            m_phase.store(TimedPhase, std::memory_order_release);
            m_dispatcher = std::thread([this] { dispatch(); });
            return;
        }
        if (m_plan.concurrencySchedule) {
            for (int i = m_plan.concurrency - 1; i >= 0; --i)
                m_parked.push_back(i);
            m_active.store(1); // the controller's own count
            m_phase.store(TimedPhase, std::memory_order_release);
            m_dispatcher = std::thread([this] { controlConcurrency(); });
            return;
        }
        m_active.store(m_plan.concurrency);
        m_running.store(m_plan.concurrency);
        m_phase.store(TimedPhase, std::memory_order_release);
        for (int i = 0; i < m_plan.concurrency; ++i)
            issueNext(i, now);
    }

    /// Open loop: sends call k at start + t_k, taking a free slot (waiting for one if all are busy: sent late).
    void dispatch()
    {
        const RateSchedule &schedule = *m_plan.rate;
        for (uint64_t k = 0;; ++k) {
            if (m_plan.totalCalls > 0 && k >= m_plan.totalCalls)
                break;
            // A split plan: this segment's k-th call is the whole plan's globalNumber(k), sent at that call's time.
            const PaceDecision decision = pace(schedule, Clock::now() - m_timedStart, m_plan.segment.globalNumber(k));
            const Clock::time_point intended = m_timedStart + decision.due;
            if (decision.stop || (m_plan.duration.count() > 0 && intended >= m_deadline)) // warm-up took its share
                break;
            int slot = -1;
            {
                std::unique_lock lock(m_slotMutex);
                m_slotCv.wait_until(lock, intended, [this] { return m_stopping.load(); });
                m_slotCv.wait(lock, [this] { return m_stopping.load() || !m_freeSlots.empty(); });
                if (m_stopping.load())
                    break;
                slot = m_freeSlots.back();
                m_freeSlots.pop_back();
            }
            m_active.fetch_add(1, std::memory_order_acq_rel);
            m_running.fetch_add(1);
            startCall(slot, intended);
        }
        idle();
    }

    double intendedCallsBy(nanoseconds elapsed) const
    {
        // Count of k with t_k <= elapsed: binary search on the monotonic intendedTime().
        uint64_t low = 0;
        uint64_t high = 1;
        while (high < (uint64_t(1) << 40) && m_plan.rate->intendedTime(high) <= elapsed)
            high *= 2;
        while (low < high) {
            const uint64_t mid = low + (high - low) / 2;
            if (m_plan.rate->intendedTime(mid) <= elapsed)
                low = mid + 1;
            else
                high = mid;
        }
        auto count = static_cast<double>(m_plan.segment.share(low));
        if (m_plan.totalCalls > 0)
            count = std::min(count, static_cast<double>(m_plan.totalCalls));
        return count;
    }

    /// Closes the current time-series interval at @p now.
    void closeInterval(Clock::time_point now)
    {
        LatencyHistogram ok;
        LatencyHistogram messageLatency;
        uint64_t errors = 0;
        uint64_t messages = 0;
        for (auto &shard : m_shards) {
            std::lock_guard lock(shard.mutex);
            ok.merge(shard.intervalOk);
            shard.intervalOk.reset();
            errors += shard.intervalErrors;
            shard.intervalErrors = 0;
            if (shard.intervalMessages) {
                messageLatency.merge(shard.intervalMessage);
                shard.intervalMessage.reset();
                messages += shard.intervalMessages;
                shard.intervalMessages = 0;
            }
        }
        IntervalPoint point;
        point.endSeconds = std::chrono::duration<double>(now - m_timedStart).count();
        point.seconds = std::chrono::duration<double>(now - m_intervalStart).count();
        point.calls = ok.count() + errors;
        point.errors = errors;
        point.p50 = ok.percentile(50);
        point.p90 = ok.percentile(90);
        point.p99 = ok.percentile(99);
        point.concurrency = m_running.load();
        point.messages = messages;
        point.messageP50 = messageLatency.percentile(50);
        point.messageP90 = messageLatency.percentile(90);
        point.messageP99 = messageLatency.percentile(99);
        if (!m_plan.segment.isWhole() && !ok.isEmpty()) {
            point.okBuckets = ok.bucketCounts();
            point.okMinNs = ok.min();
            point.okMaxNs = ok.max();
        }
        m_intervalStart = now;
        m_timeline.append(point);
        m_peakRss = std::max(m_peakRss, processRssBytes());
        if (m_plan.serverPid > 0)
            m_serverPeakRss = std::max(m_serverPeakRss, sampleProcess(static_cast<pid_t>(m_plan.serverPid)).rssBytes);
    }

    double serverCpu() const
    {
        if (m_plan.serverPid <= 0)
            return -1;
        const ProcessSample sample = sampleProcess(static_cast<pid_t>(m_plan.serverPid));
        if (sample.cpuFromTicks)
            m_serverCpuCoarse.store(true);
        return sample.valid ? sample.cpuSeconds : -1;
    }

    void clockLoop()
    {
        auto next = m_timedStart + m_plan.interval;
        // A run bounded by time ends at its deadline: calls still in flight then get a grace period (a few times the
        // p99 so far, from 100 ms to 2 s) and are then cancelled, so a stalled server cannot stretch a
        // -z 6s run to its calls' timeout.
        auto cutoff = Clock::time_point::max();
        bool graceSet = false;
        std::unique_lock lock(m_timelineMutex);
        while (!m_clockStop) {
            const auto wake = std::min({ next, graceSet ? cutoff : m_deadline });
            if (m_clockCv.wait_until(lock, wake, [this] { return m_clockStop; }))
                break;
            const auto now = Clock::now();
            if (m_deadline != Clock::time_point::max() && now >= m_deadline && !graceSet) {
                graceSet = true;
                lock.unlock();
                cutoff = m_deadline + endGrace();
                lock.lock();
                continue;
            }
            if (graceSet && now >= cutoff && !m_endedInFlight.load()) {
                m_endedInFlight.store(true);
                lock.unlock(); // a cancel may report its call at once, which takes the shards' locks
                for (auto &slot : m_slots)
                    slot->cancel();
                lock.lock();
                cutoff = Clock::time_point::max();
                continue;
            }
            if (now >= next) {
                closeInterval(next);
                next += m_plan.interval;
            }
        }
    }

    /// How long calls in flight at the deadline may still take: 3 x the p99 so far, from 100 ms to 2 s.
    std::chrono::nanoseconds endGrace()
    {
        LatencyHistogram ok;
        for (auto &shard : m_shards) {
            std::lock_guard shardLock(shard.mutex);
            ok.merge(shard.ok);
        }
        auto grace = std::clamp(std::chrono::nanoseconds(3 * ok.percentile(99)),
            std::chrono::nanoseconds(std::chrono::milliseconds(100)),
            std::chrono::nanoseconds(std::chrono::seconds(2)));
        return grace;
    }

    void finish()
    {
        const auto now = Clock::now();
        if (m_plan.timedPhase) {
            bool timed = false;
            {
                std::lock_guard lock(m_stateMutex);
                timed = m_timedStarted;
            }
            if (timed)
                m_plan.timedPhase(false);
        }
        m_phase.store(DonePhase);
        {
            std::lock_guard lock(m_timelineMutex);
            m_clockStop = true;
            if (m_timedStarted && now > m_intervalStart)
                closeInterval(now); // the last, partial interval
        }
        m_clockCv.notify_all();
        {
            std::lock_guard lock(m_stateMutex);
            m_timedEnd = now;
            if (!m_timedStarted)
                m_timedStart = now;
            m_cpuAtEnd = processCpuSeconds();
            m_serverCpuAtEnd = serverCpu();
            m_state = m_stopping.load() ? RunState::Stopped : RunState::Finished;
            m_finished = true;
            m_finishedCv.notify_all();
        }
        Q_EMIT m_engine->runFinished();
        // From here on this thread touches neither the engine nor the run, so both may be destroyed.
        std::lock_guard lock(m_stateMutex);
        m_quiescent = true;
        m_finishedCv.notify_all();
    }

    LoadEngine *m_engine;
    std::unique_ptr<Transport> m_transport;
    const LoadPlan m_plan;
    const uint64_t m_generation;
    const bool m_openLoop;
    std::vector<std::unique_ptr<CallSlot>> m_slots;
    mutable std::vector<Shard> m_shards;
    std::unique_ptr<ReplyChecker> m_replyChecker; ///< set when the plan has --expect
    std::vector<SlotTiming> m_timing;
    const std::string m_okUnexpected; ///< the error of a call that ended OK when --expect-status left OK out

    std::atomic<int> m_phase { WarmupPhase };
    std::atomic<uint64_t> m_tickets { 0 };
    std::atomic<int> m_active { 0 };
    std::atomic<bool> m_stopping { false };
    std::atomic<uint64_t> m_warmupDone { 0 };
    std::atomic<uint64_t> m_sent { 0 };
    std::atomic<uint64_t> m_warmupSent { 0 };
    std::atomic<int64_t> m_timedStartUnixUs { 0 };
    Clock::time_point m_deadline; // likewise
    Clock::time_point m_warmupDeadline;
    Clock::time_point m_runDeadline = Clock::time_point::max(); // start + -z, warm-up included; max() = none
    std::atomic<bool> m_endedInFlight { false }; // the calls in flight at the deadline were cancelled

    // Open loop: free slots for the dispatcher.
    std::mutex m_slotMutex;
    std::condition_variable m_slotCv;
    std::vector<int> m_freeSlots;
    std::vector<int> m_parked; // closed loop with a concurrency schedule: callers not wanted now
    std::atomic<int> m_running { 0 }; // callers running (closed loop) or calls in flight (open loop)
    std::thread m_dispatcher;
    std::thread m_starter; // waits for the start time (--start-at), then begins the timed phase

    // Time series and resource samples, advanced by the clock thread.
    mutable std::mutex m_timelineMutex;
    std::condition_variable m_clockCv;
    bool m_clockStop = false;
    Clock::time_point m_intervalStart;
    QList<IntervalPoint> m_timeline;
    uint64_t m_peakRss = 0;
    uint64_t m_serverPeakRss = 0;
    std::thread m_clock;

    mutable std::mutex m_stateMutex;
    mutable std::condition_variable m_finishedCv;
    RunState m_state = RunState::WarmingUp;
    bool m_timedStarted = false;
    bool m_finished = false;
    bool m_quiescent = false;
    Clock::time_point m_timedStart;
    Clock::time_point m_timedEnd;
    double m_cpuAtStart = 0;
    double m_cpuAtEnd = 0;
    double m_serverCpuAtStart = -1;
    mutable std::atomic<bool> m_serverCpuCoarse { false }; ///< a server CPU reading came in clock ticks
    double m_serverCpuAtEnd = -1;
};

LoadEngine::LoadEngine(QObject *parent) : LoadRun(parent) { }

LoadEngine::~LoadEngine()
{
    if (m_run) {
        m_run->stop();
        m_run->waitUntilQuiescent();
    }
}

bool LoadEngine::start(std::unique_ptr<Transport> transport, const LoadPlan &plan, QString *error)
{
    auto fail = [&](const QString &message) {
        if (error)
            *error = message;
        return false;
    };
    if (isRunning())
        return fail(QStringLiteral("a run is still going"));
    if (!transport)
        return fail(QStringLiteral("no transport"));
    if (plan.concurrency < 1)
        return fail(QStringLiteral("concurrency must be at least 1"));
    const bool timeBound = plan.duration.count() > 0 || (plan.rate && plan.rate->maxDuration.count() > 0)
        || (plan.concurrencySchedule && plan.concurrencySchedule->maxDuration.count() > 0);
    if (plan.totalCalls == 0 && !timeBound)
        return fail(QStringLiteral("a run needs a number of calls or a duration"));
    if (plan.duration.count() < 0 || plan.warmupDuration.count() < 0)
        return fail(QStringLiteral("durations must not be negative"));
    if (plan.interval < std::chrono::milliseconds(10))
        return fail(QStringLiteral("the time-series interval must be at least 10 ms"));
    if (plan.rate) {
        if (const char *problem = plan.rate->problem())
            return fail(QString::fromLatin1(problem));
    }
    if (plan.concurrencySchedule) {
        if (plan.rate)
            return fail(QStringLiteral("a concurrency schedule is for closed-loop runs, not with a rate"));
        if (const char *problem = plan.concurrencySchedule->problem())
            return fail(QStringLiteral("concurrency schedule: ") + QString::fromLatin1(problem));
    }
    LoadPlan effective = plan;
    // No point in more callers than calls: -n smaller than -c still sends exactly n calls.
    if (!timeBound && plan.warmupDuration.count() == 0)
        effective.concurrency
            = static_cast<int>(std::min<uint64_t>(plan.concurrency, std::max(plan.totalCalls, plan.warmupCalls)));
    if (m_run)
        m_run->waitUntilQuiescent();
    m_run.reset();
    m_run = std::make_shared<Run>(this, std::move(transport), effective, ++m_generation);
    const bool warmup = effective.warmupCalls > 0 || effective.warmupDuration.count() > 0;
    m_run->setState(warmup ? RunState::WarmingUp : RunState::Running);
    m_run->begin();
    return true;
}

void LoadEngine::stop()
{
    if (m_run)
        m_run->stop();
}

bool LoadEngine::isRunning() const
{
    return m_run && !m_run->isFinished();
}

bool LoadEngine::waitForFinished(std::chrono::milliseconds timeout) const
{
    return !m_run || m_run->waitForFinished(timeout);
}

RunSnapshot LoadEngine::snapshot() const
{
    return m_run ? m_run->snapshot() : RunSnapshot();
}

uint64_t LoadEngine::generation() const
{
    return m_generation;
}

std::vector<RawSample> LoadEngine::rawSamples() const
{
    return m_run ? m_run->rawSamples() : std::vector<RawSample>();
}

} // namespace rpcscope
