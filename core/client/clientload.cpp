#include "clientload.h"

#include "metrics/processstats.h"

namespace rpcscope {

ClientBlock clientBlockOf(const LoadPlan &plan, int number)
{
    ClientBlock block;
    block.number = number;
    block.calls = plan.totalCalls;
    block.duration = plan.duration;
    block.concurrency = plan.concurrency;
    block.warmupCalls = plan.warmupCalls;
    block.interval = plan.interval;
    return block;
}

bool runTimedClientBlock(
    ClientCommandRunner &client, const ClientBlock &block, const LoadPlan &plan, RunSnapshot *result, QString *error)
{
    const auto server = static_cast<pid_t>(plan.serverPid);
    const ProcessSample serverBefore = server > 0 ? sampleProcess(server) : ProcessSample();
    if (plan.timedPhase)
        plan.timedPhase(true);
    const bool ok = client.runBlock(block, result, error);
    if (plan.timedPhase)
        plan.timedPhase(false);
    if (const ProcessSample after = server > 0 ? sampleProcess(server) : ProcessSample();
        serverBefore.valid && after.valid) {
        result->hasServerStats = true;
        result->serverCpuSeconds = std::max(0.0, after.cpuSeconds - serverBefore.cpuSeconds);
        result->serverCpuInTicks = after.cpuFromTicks;
        result->serverPeakRssBytes = after.rssBytes;
    }
    return ok;
}

ClientLoad::ClientLoad(QObject *parent) : LoadRun(parent) { }

ClientLoad::~ClientLoad()
{
    stop();
    if (m_thread.joinable())
        m_thread.join();
}

QString ClientLoad::planProblem(const LoadPlan &plan)
{
    if (plan.rate || plan.concurrencySchedule)
        return QStringLiteral("a client command makes its calls closed loop, as fast as its callers go: it takes no "
                              "rate or schedule");
    if (plan.warmupDuration.count() > 0)
        return QStringLiteral("a client command warms up by a number of calls, not for a time");
    if (plan.recordRawSamples)
        return QStringLiteral("a client command's calls are kept as histograms, not as raw samples");
    if (!plan.segment.isWhole() || plan.startAt)
        return QStringLiteral("a client command's run is not split over workers");
    if (!plan.expectations.empty())
        return QStringLiteral("a client command's replies are its own: rpcscope cannot check them");
    return {};
}

bool ClientLoad::start(const ClientCommand &command, const QString &target, const LoadPlan &plan,
    std::function<void(qint64 pid, const QString &commandLine)> started, QString *error)
{
    if (const QString problem = planProblem(plan); !problem.isEmpty()) {
        if (error)
            *error = problem;
        return false;
    }
    if (isRunning()) {
        if (error)
            *error = QStringLiteral("a run is still going");
        return false;
    }
    if (m_thread.joinable())
        m_thread.join();
    {
        std::lock_guard lock(m_mutex);
        m_snapshot = RunSnapshot();
        m_snapshot.state = RunState::Running;
        m_snapshot.plannedCalls = plan.totalCalls;
        m_snapshot.plannedDuration = plan.duration;
        m_running = true;
        m_stopped = false;
        m_failure.clear();
    }
    m_thread = std::thread(
        [this, command, target, plan, started = std::move(started)] { run(command, target, plan, started); });
    return true;
}

void ClientLoad::run(const ClientCommand &command, const QString &target, const LoadPlan &plan,
    const std::function<void(qint64, const QString &)> &started)
{
    QString error;
    RunSnapshot result;
    bool ok = m_runner.start(command, target, &error);
    if (ok) {
        if (started)
            started(m_runner.pid(), m_runner.commandLine());
        ClientBlock block = clientBlockOf(plan, 1);
        block.progress = [this](const RunSnapshot &progress) { publish(progress); };
        ok = runTimedClientBlock(m_runner, block, plan, &result, &error);
    }
    m_runner.stop();
    {
        std::lock_guard lock(m_mutex);
        if (!ok && !m_stopped)
            m_failure = error;
        if (!ok || m_stopped)
            result.state = RunState::Stopped;
        if (result.state == RunState::Running) // a block that ran as planned says Finished itself
            result.state = RunState::Finished;
        result.plannedCalls = plan.totalCalls;
        result.plannedDuration = plan.duration;
        m_snapshot = std::move(result);
        m_running = false;
    }
    m_ended.notify_all();
    Q_EMIT runFinished();
}

void ClientLoad::publish(const RunSnapshot &snapshot)
{
    std::lock_guard lock(m_mutex);
    if (m_running)
        m_snapshot = snapshot;
}

void ClientLoad::stop()
{
    {
        std::lock_guard lock(m_mutex);
        if (!m_running)
            return;
        m_stopped = true;
    }
    m_runner.interrupt(); // a block ends with what it has; a client still starting is not waited for
}

bool ClientLoad::isRunning() const
{
    std::lock_guard lock(m_mutex);
    return m_running;
}

bool ClientLoad::waitForFinished(std::chrono::milliseconds timeout) const
{
    std::unique_lock lock(m_mutex);
    return m_ended.wait_for(lock, timeout, [this] { return !m_running; });
}

RunSnapshot ClientLoad::snapshot() const
{
    std::lock_guard lock(m_mutex);
    return m_snapshot;
}

QString ClientLoad::failure() const
{
    std::lock_guard lock(m_mutex);
    return m_failure;
}

} // namespace rpcscope
