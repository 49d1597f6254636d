#include "abcontroller.h"

#include "scenario/abdesign.h"

#include "runrecorder.h"
#include "server/serverlaunch.h"
#include "store/runstore.h"
#include "store/runwriter.h"
#include "util/cpuset.h"
#include "util/units.h"

#include <QScopeGuard>
#include <QtConcurrent/QtConcurrentRun>

namespace rpcscope {

AbController::AbController(RunRecorder *recorder, QObject *parent) : QObject(parent), m_recorder(recorder)
{
    m_pool.setMaxThreadCount(1);
    m_timer.setInterval(100);
    connect(&m_timer, &QTimer::timeout, this, &AbController::poll);
    connect(&m_worker, &QFutureWatcherBase::finished, this, &AbController::workerFinished);
}

AbController::~AbController()
{
    stop();
    m_worker.waitForFinished();
}

bool AbController::start(const std::array<AbSide, 2> &sides, const AbRequest &request, const Scenario &design,
    const QString &cliPath, const QString &transport, std::array<RunRecord, 2> records, QString *error)
{
    if (m_running) {
        *error = tr("An A/B run is going already.");
        return false;
    }
    m_worker.waitForFinished();
    m_sides = sides;
    m_request = request;
    m_design = design;
    m_cliPath = cliPath;
    m_transport = transport;
    m_records = std::move(records);
    m_stop = false;
    m_begun = false;
    m_shownBlocks = 0;
    {
        std::lock_guard lock(m_mutex);
        m_phase = tr("Starting the servers ...");
        m_error.clear();
        m_runnerStarted = false;
        m_serverDescriptions = {};
        m_pinnedClient.clear();
        m_pinnedServers.clear();
    }
    m_running = true;
    m_worker.setFuture(QtConcurrent::run(&m_pool, [this] { work(); }));
    m_timer.start();
    return true;
}

void AbController::stop()
{
    m_stop = true;
    m_runner.stop();
}

void AbController::stopAndFinish()
{
    if (!m_running)
        return;
    stop();
    m_worker.waitForFinished();
    workerFinished(); // now, not when the watcher says so: the window closes before that
}

bool AbController::isRunning() const
{
    return m_running;
}

void AbController::work()
{
    // Servers live on this thread: a child started here is told to end if this thread ends (PR_SET_PDEATHSIG).
    std::array<std::unique_ptr<ServerLaunch>, 2> servers;
    auto fail = [this](const QString &why) {
        std::lock_guard lock(m_mutex);
        m_error = why;
    };
    std::array<std::optional<ServerCommand>, 2> commands; // std::nullopt: an address
    std::array<QString, 2> problems;
    for (size_t side = 0; side < 2; ++side)
        commands[side] = m_request.command(static_cast<int>(side), m_cliPath, m_transport, &problems[side]);
    // Judged pair by pair, a side is one server process, and unpinned, where the scheduler put the client and the two
    // servers decided 15-17.5% of A/A runs on 2 cores (docs/sequential.md). As the CLI's ab --until-decided does,
    // this process is pinned to the first CPU it may use and the servers to the others, while the run lasts.
    const std::vector<int> allowed = availableCpus(); // what it runs on again after the run
    std::optional<ClientServerCpus> apart;
    if (m_request.untilDecided && commands[0] && commands[1])
        apart = clientApartFromServers();
    const std::vector<int> clientCpus = apart ? apart->client : std::vector<int>();
    const std::vector<int> serverCpus = apart ? apart->servers : std::vector<int>();
    // The side that goes first in round 1 (a coin flip) starts first, as it restarts first in the rounds where it
    // goes first: which server starts first shows in the timings (docs/statistics.md).
    const int firstSide = AbBlocks::coinFlip();
    for (int turn = 0; turn < 2 && !m_stop; ++turn) {
        const int side = turn == 0 ? firstSide : 1 - firstSide;
        QString why;
        if (!problems[static_cast<size_t>(side)].isEmpty())
            return fail(problems[static_cast<size_t>(side)]);
        std::optional<ServerCommand> &command = commands[static_cast<size_t>(side)];
        if (command)
            command->cpus = serverCpus;
        AbSide &s = m_sides[static_cast<size_t>(side)];
        if (!command) {
            s.target.address = m_request.targets[static_cast<size_t>(side)].text;
            continue;
        }
        {
            std::lock_guard lock(m_mutex);
            m_phase = tr("Starting %1: %2").arg(QChar(side == 0 ? u'A' : u'B')).arg(m_request.targetText(side));
            m_serverDescriptions[static_cast<size_t>(side)] = command->describe();
        }
        servers[static_cast<size_t>(side)] = std::make_unique<ServerLaunch>();
        s.target.address = servers[static_cast<size_t>(side)]->start(*command, s.transport.kind, &why);
        if (s.target.address.isEmpty())
            return fail(tr("Server %1 did not start: %2").arg(QChar(side == 0 ? u'A' : u'B')).arg(why));
        s.plan.serverPid = servers[static_cast<size_t>(side)]->pid();
    }
    if (m_stop)
        return fail(tr("Stopped before the run began."));
    // The design as the launcher checked it (prepareAb(), the CLI's rules), now with the servers as they started.
    ScenarioProblem designProblem;
    std::optional<AbBlocks> designed = prepareAb(m_design, m_sides[0].plan,
        { servers[0] || servers[1], servers[0] && servers[1], !clientCpus.empty() }, &designProblem);
    if (!designed)
        return fail(designProblem.text());
    AbBlocks blocks = *designed;
    blocks.firstSide = firstSide;
    for (size_t side = 0; side < 2; ++side) {
        if (!servers[side] || blocks.restarts < 2)
            continue;
        // Called on the runner's thread between blocks; this thread only waits meanwhile.
        // The same command again, pinned where the first start was.
        m_sides[side].restartServer = [server = servers[side].get()](QString *address, int64_t *pid, QString *why) {
            *address = server->restart(why);
            if (address->isEmpty())
                return false;
            *pid = server->pid();
            return true;
        };
    }
    QString why;
    // Pinned once the servers run (they would inherit this process's CPUs), and unpinned when the run ends: the
    // GUI thread shares the client's CPU meanwhile.
    if (!clientCpus.empty()) {
        if (!pinCurrentProcess(clientCpus, &why))
            return fail(tr("Could not pin rpcscope to CPU %1: %2").arg(formatCpuList(clientCpus), why));
        std::lock_guard lock(m_mutex);
        m_pinnedClient = formatCpuList(clientCpus);
        m_pinnedServers = formatCpuList(serverCpus);
    }
    const auto unpin = qScopeGuard([&] {
        QString ignored; // the CPUs it ran on before: pinning them again cannot fail where pinning one did not
        if (!clientCpus.empty())
            pinCurrentProcess(allowed, &ignored);
    });
    if (!m_runner.start(m_sides, blocks, &why))
        return fail(why);
    {
        std::lock_guard lock(m_mutex);
        m_runnerStarted = true;
    }
    m_runner.waitForFinished(std::chrono::hours(24 * 365));
    for (auto &server : servers) {
        if (server)
            server->stop();
    }
    std::lock_guard lock(m_mutex);
    if (!m_runner.error().isEmpty())
        m_error = m_runner.error();
}

void AbController::beginRunsOnceStarted(QString *error)
{
    {
        std::lock_guard lock(m_mutex);
        if (!m_runnerStarted || m_begun)
            return;
    }
    m_begun = true;
    QString why;
    for (size_t i = 0; i < 2; ++i) {
        {
            std::lock_guard lock(m_mutex);
            m_records[i].server = m_serverDescriptions[i];
            if (!m_pinnedClient.isEmpty()) { // as the CLI records its pinning
                m_records[i].environment.insert(QStringLiteral("client_cpus"), m_pinnedClient);
                m_records[i].environment.insert(QStringLiteral("server_cpus"), m_pinnedServers);
            }
        }
        // What a later look needs to judge the pairs again as this run did (SequentialAb::fromBlocks).
        m_records[i].scenario.insert(QStringLiteral("ab_side"), i == 0 ? QStringLiteral("A") : QStringLiteral("B"));
        m_records[i].scenario.insert(QStringLiteral("ab_rounds_planned"), m_runner.roundsPlanned());
        if (m_recorder->store() && !m_recorder->store()->beginRun(&m_records[i], &why))
            *error = why;
    }
}

void AbController::poll()
{
    QString error;
    beginRunsOnceStarted(&error);
    if (m_begun) {
        const int blocks = m_runner.blocksDone();
        if (blocks != m_shownBlocks) {
            m_shownBlocks = blocks;
            for (int side = 0; side < 2; ++side) {
                if (m_records[static_cast<size_t>(side)].id > 0) // inserted: the history is open
                    m_recorder->writer()->update(m_records[static_cast<size_t>(side)].id, m_runner.snapshot(side));
            }
        }
    }
    Q_EMIT progressed();
}

void AbController::workerFinished()
{
    if (!m_running)
        return; // stopAndFinish() ended it already
    m_timer.stop();
    m_running = false;
    QString error;
    {
        std::lock_guard lock(m_mutex);
        error = m_error;
    }
    beginRunsOnceStarted(&error);
    if (m_begun) {
        for (int side = 0; side < 2; ++side) {
            RunRecord &r = m_records[static_cast<size_t>(side)];
            r.snapshot = m_runner.snapshot(side);
            r.rawSamples = m_runner.rawSamples(side);
            r.status = m_runner.wasStopped() ? QStringLiteral("stopped") : QStringLiteral("finished");
            if (r.id > 0)
                m_recorder->writer()->finish(r.id, r.snapshot, r.rawSamples, r.status);
        }
    }
    Q_EMIT progressed();
    Q_EMIT finished(error);
}

RunSnapshot AbController::snapshot(int side) const
{
    return m_runner.snapshot(side);
}

std::array<RunRecord, 2> AbController::liveRecords() const
{
    std::array<RunRecord, 2> live = m_records;
    for (int side = 0; side < 2; ++side)
        live[static_cast<size_t>(side)].snapshot = m_runner.snapshot(side);
    return live;
}

QString AbController::sequentialText() const
{
    {
        std::lock_guard lock(m_mutex);
        if (!m_runnerStarted)
            return {};
    }
    const SequentialAb s = m_runner.sequential();
    if (s.pairs() == 0)
        return {};
    if (m_running || s.decided())
        return s.statusLine();
    return s.verdictLine(m_runner.endedByText(tr("the planned run")));
}

QString AbController::progressText() const
{
    std::lock_guard lock(m_mutex);
    if (!m_runnerStarted)
        return m_phase;
    const std::vector<AbBlockResult> blocks = m_runner.completedBlocks();
    // The round running: the last block's, unless that block ended it (each round runs A and B, in either order).
    const bool roundDone = blocks.size() >= 2 && blocks[blocks.size() - 2].round == blocks.back().round;
    const int round = blocks.empty() ? 1 : blocks.back().round + (roundDone ? 1 : 0);
    QString text = tr("Round %1 of %2").arg(std::min(round, m_runner.roundsPlanned())).arg(m_runner.roundsPlanned());
    for (int side = 0; side < 2; ++side) {
        const RunSnapshot s = m_runner.snapshot(side);
        text += QStringLiteral(", %1 p50 %2")
                    .arg(QChar(side == 0 ? u'A' : u'B'))
                    .arg(formatNanos(static_cast<double>(s.latency.percentile(50))));
    }
    if (!m_pinnedClient.isEmpty()) // m_mutex is held from the top
        text += tr("; rpcscope on CPU %1, the servers on %2").arg(m_pinnedClient, m_pinnedServers);
    return text;
}

double AbController::progress() const
{
    {
        std::lock_guard lock(m_mutex);
        if (!m_runnerStarted)
            return -1;
    }
    const double planned = std::max(1, m_runner.roundsPlanned()) * 2.0;
    return std::min(1.0, m_runner.blocksDone() / planned);
}

} // namespace rpcscope
