#include "loadengine.h"

#include "transport/transport.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <vector>

namespace rpcscope {

using Clock = std::chrono::steady_clock;

namespace {
constexpr int kShards = 16; // callers share a few locked accumulators; snapshots merge them
constexpr size_t kMaxDistinctErrors = 64;

enum Phase : int { WarmupPhase, TimedPhase, DonePhase };

struct alignas(64) Shard
{
    std::mutex mutex;
    LatencyHistogram ok;
    LatencyHistogram failed;
    StatusCounts status{};
    uint64_t bytesSent = 0;
    uint64_t bytesReceived = 0;
    std::map<std::pair<int, std::string>, uint64_t> errors;
    uint64_t otherErrors = 0; // beyond kMaxDistinctErrors distinct messages
};
} // namespace

class LoadEngine::Run final : public CallSink
{
public:
    Run(LoadEngine *engine, std::unique_ptr<Transport> transport, const LoadPlan &plan, uint64_t generation)
        : m_engine(engine)
        , m_transport(std::move(transport))
        , m_plan(plan)
        , m_generation(generation)
        , m_shards(kShards)
        , m_callStart(static_cast<size_t>(plan.concurrency))
    {
        for (int i = 0; i < plan.concurrency; ++i)
            m_slots.push_back(m_transport->makeSlot(i, this));
    }

    void begin()
    {
        if (m_plan.warmupCalls > 0) {
            m_phase.store(WarmupPhase);
            m_active.store(m_plan.concurrency);
            for (int i = 0; i < m_plan.concurrency; ++i)
                issueNext(i, Clock::now());
        } else {
            beginTimed();
        }
    }

    void stop()
    {
        m_stopping.store(true);
        for (auto &slot : m_slots)
            slot->cancel();
    }

    void callDone(int slot, CallOutcome &outcome) override
    {
        const auto now = Clock::now();
        if (m_phase.load(std::memory_order_acquire) == TimedPhase) {
            // A call we cancelled ourselves on Stop is not a server's failure: leave it out.
            const bool cancelledByUs = outcome.status == CallStatus::Cancelled && m_stopping.load();
            if (!cancelledByUs)
                record(slot, outcome, static_cast<uint64_t>((now - m_callStart[static_cast<size_t>(slot)]).count()));
        } else {
            m_warmupDone.fetch_add(1, std::memory_order_relaxed);
        }
        issueNext(slot, now);
    }

    RunSnapshot snapshot() const
    {
        RunSnapshot s;
        s.generation = m_generation;
        s.plannedCalls = m_plan.totalCalls;
        s.plannedDuration = m_plan.duration;
        s.warmupCalls = m_warmupDone.load();
        std::map<std::pair<int, std::string>, uint64_t> errors;
        uint64_t otherErrors = 0;
        for (auto &shard : m_shards) {
            std::lock_guard lock(shard.mutex);
            s.latency.merge(shard.ok);
            s.errorLatency.merge(shard.failed);
            for (int i = 0; i < CallStatus::SlotCount; ++i)
                s.statusCounts[static_cast<size_t>(i)] += shard.status[static_cast<size_t>(i)];
            s.bytesSent += shard.bytesSent;
            s.bytesReceived += shard.bytesReceived;
            for (const auto &[key, count] : shard.errors)
                errors[key] += count;
            otherErrors += shard.otherErrors;
        }
        for (const auto &[key, count] : errors)
            s.errors.append({key.first, QString::fromStdString(key.second), count});
        if (otherErrors)
            s.errors.append({CallStatus::Unknown, QStringLiteral("(other error messages)"), otherErrors});
        std::sort(s.errors.begin(), s.errors.end(), [](const auto &a, const auto &b) { return a.count > b.count; });

        std::lock_guard lock(m_stateMutex);
        s.state = m_state;
        if (m_state == RunState::Running)
            s.elapsed = Clock::now() - m_timedStart;
        else if (s.isFinal() && m_timedStarted)
            s.elapsed = m_timedEnd - m_timedStart;
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
    void record(int slot, const CallOutcome &outcome, uint64_t nanos)
    {
        Shard &shard = m_shards[static_cast<size_t>(slot % kShards)];
        std::lock_guard lock(shard.mutex);
        const int status = std::clamp(outcome.status, 0, CallStatus::SlotCount - 1);
        ++shard.status[static_cast<size_t>(status)];
        shard.bytesSent += outcome.bytesSent;
        shard.bytesReceived += outcome.bytesReceived;
        if (status == CallStatus::Ok) {
            shard.ok.record(nanos);
            return;
        }
        shard.failed.record(nanos);
        auto key = std::make_pair(status, outcome.errorMessage);
        auto it = shard.errors.find(key);
        if (it != shard.errors.end())
            ++it->second;
        else if (shard.errors.size() < kMaxDistinctErrors)
            shard.errors.emplace(std::move(key), 1);
        else
            ++shard.otherErrors;
    }

    void issueNext(int slot, Clock::time_point now)
    {
        if (m_stopping.load(std::memory_order_relaxed))
            return idle();
        if (m_phase.load(std::memory_order_acquire) == WarmupPhase) {
            if (m_tickets.fetch_add(1, std::memory_order_relaxed) >= m_plan.warmupCalls)
                return idle();
        } else {
            if (m_plan.totalCalls > 0 && m_tickets.fetch_add(1, std::memory_order_relaxed) >= m_plan.totalCalls)
                return idle();
            if (m_plan.duration.count() > 0 && now >= m_deadline)
                return idle();
        }
        m_callStart[static_cast<size_t>(slot)] = Clock::now();
        m_slots[static_cast<size_t>(slot)]->start();
    }

    // Every slot goes idle once per phase; the last one moves the run on.
    void idle()
    {
        if (m_active.fetch_sub(1, std::memory_order_acq_rel) != 1)
            return;
        if (m_phase.load() == WarmupPhase && !m_stopping.load())
            beginTimed();
        else
            finish();
    }

    void beginTimed()
    {
        m_tickets.store(0);
        m_active.store(m_plan.concurrency);
        const auto now = Clock::now();
        {
            std::lock_guard lock(m_stateMutex);
            m_timedStart = now;
            m_timedStarted = true;
            m_state = RunState::Running;
        }
        m_deadline = now + m_plan.duration;
        m_phase.store(TimedPhase, std::memory_order_release);
        for (int i = 0; i < m_plan.concurrency; ++i)
            issueNext(i, now);
    }

    void finish()
    {
        const auto now = Clock::now();
        m_phase.store(DonePhase);
        {
            std::lock_guard lock(m_stateMutex);
            m_timedEnd = now;
            if (!m_timedStarted)
                m_timedStart = now;
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
    std::vector<std::unique_ptr<CallSlot>> m_slots;
    mutable std::vector<Shard> m_shards;
    std::vector<Clock::time_point> m_callStart; // per slot; written before start(), read in its callback

    std::atomic<int> m_phase{WarmupPhase};
    std::atomic<uint64_t> m_tickets{0};
    std::atomic<int> m_active{0};
    std::atomic<bool> m_stopping{false};
    std::atomic<uint64_t> m_warmupDone{0};
    Clock::time_point m_deadline; // written before the timed phase is published

    mutable std::mutex m_stateMutex;
    mutable std::condition_variable m_finishedCv;
    RunState m_state = RunState::WarmingUp;
    bool m_timedStarted = false;
    bool m_finished = false;
    bool m_quiescent = false;
    Clock::time_point m_timedStart;
    Clock::time_point m_timedEnd;
};

LoadEngine::LoadEngine(QObject *parent)
    : QObject(parent)
{
}

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
    if (plan.totalCalls == 0 && plan.duration.count() <= 0)
        return fail(QStringLiteral("a run needs a number of calls or a duration"));
    if (plan.duration.count() < 0)
        return fail(QStringLiteral("duration must not be negative"));
    LoadPlan effective = plan;
    // No point in more callers than calls: -n smaller than -c still sends exactly n calls.
    if (plan.duration.count() == 0)
        effective.concurrency = static_cast<int>(std::min<uint64_t>(plan.concurrency, plan.totalCalls));
    if (m_run)
        m_run->waitUntilQuiescent();
    m_run = std::make_shared<Run>(this, std::move(transport), effective, ++m_generation);
    m_run->setState(effective.warmupCalls > 0 ? RunState::WarmingUp : RunState::Running);
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

} // namespace rpcscope
