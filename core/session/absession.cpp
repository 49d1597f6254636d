#include "absession.h"

#include "net/reachability.h"
#include "scenario/abdesign.h"
#include "store/environment.h"
#include "store/secrets.h"
#include "transport/transports.h"
#include "util/cpuset.h"

#include <QDateTime>
#include <QFileInfo>
#include <QJsonDocument>

namespace rpcscope {

namespace {

/// The client command of @p target as given (its command line and environment).
ClientCommand clientCommandOf(const AbTarget &target)
{
    ClientCommand client;
    client.command = target.client;
    client.environment = target.clientEnvironment;
    return client;
}

QString sideLetter(int side)
{
    return side == 0 ? QStringLiteral("A") : QStringLiteral("B");
}

} // namespace

AbSession::AbSession(
    Scenario design, std::array<AbTarget, 2> targets, std::optional<GrpcCall> call, QString serveProgram)
    : m_design(std::move(design))
    , m_targets(std::move(targets))
    , m_call(std::move(call))
    , m_serveProgram(std::move(serveProgram))
{
}

AbSession::~AbSession()
{
    stop();
    m_ending = true;
    if (m_thread.joinable())
        m_thread.join();
    m_runner.stop();
    m_runner.waitForFinished(std::chrono::seconds(30));
    finish();
}

void AbSession::setNaming(const QString &name, const QStringList &labels)
{
    m_name = name;
    m_labels = labels;
}

bool AbSession::check(ScenarioProblem *problem, int *side)
{
    int ignored = -1;
    int &at = side ? *side : ignored;
    at = -1;
    if (m_checked)
        return true;
    auto fail = [&](int index, const ScenarioProblem &why) {
        *problem = why;
        at = index;
        return false;
    };
    if (parseTransport(m_design.transport) == TransportKind::InProcess)
        return fail(-1,
            { QStringLiteral("transport"),
                QStringLiteral("the no-RPC baseline calls no server: there is nothing to compare A/B"), false });
    if (m_design.profilePid > 0)
        return fail(-1,
            { QStringLiteral("profile.pid"),
                QStringLiteral("ab profiles each side's own server (the ones it starts, or each address's listener; "
                               "--a-profile-pid and --b-profile-pid name an address's): one process for both sides "
                               "would compare a process with itself"),
                false });
    for (int index = 0; index < 2; ++index) {
        Side &s = m_sides[static_cast<size_t>(index)];
        const AbTarget &t = m_targets[static_cast<size_t>(index)];
        s.builtin = t.spec.trimmed() == u"builtin";
        s.startsServer = s.builtin || looksLikeCommand(t.spec);
        if (t.client.isEmpty() && !t.clientEnvironment.isEmpty())
            return fail(index,
                { QStringLiteral("client_environment"),
                    QStringLiteral("is for a client command, and this side has none"), false });
        if (!t.client.isEmpty()) {
            if (QString why; !clientCommandOf(t).check(&why))
                return fail(index, { QStringLiteral("client"), why, false });
        }
        if (t.profilePid > 0) {
            if (s.startsServer)
                return fail(index,
                    { QStringLiteral("profile_pid"),
                        QStringLiteral("is for a side whose server runs already (an address): rpcscope knows, and "
                                       "restarts, the server it starts for \"%1\"")
                            .arg(t.spec),
                        false });
            if (!QFileInfo::exists(QStringLiteral("/proc/%1").arg(t.profilePid)))
                return fail(index,
                    { QStringLiteral("profile_pid"), QStringLiteral("no process %1 on this machine").arg(t.profilePid),
                        false });
        }
        if (!s.startsServer && (!t.environment.isEmpty() || !t.workingDirectory.isEmpty()))
            return fail(index,
                { QStringLiteral("environment"),
                    QStringLiteral("is for a server rpcscope starts, and \"%1\" is an address").arg(t.spec), false });
        s.scenario = m_design;
        s.scenario.target = t.spec;
        if (!s.startsServer || s.builtin) { // readiness is a server command's; the built-in server says it itself
            s.scenario.readyPattern.clear();
            s.scenario.readyTimeout.clear();
        }
        if (!s.startsServer)
            s.scenario.serverCpus.clear(); // pins the servers the session starts; an address runs where it runs
        std::optional<RunSpec> spec = prepareRun(s.scenario, problem);
        if (!spec)
            return fail(index, *problem);
        s.spec = std::move(*spec);
    }
    const Side &a = m_sides[0], &b = m_sides[1];
    m_clientCpus = a.spec.clientCpus;
    m_serverCpus = a.startsServer ? a.spec.serverCpus : b.spec.serverCpus;
    // Judged pair by pair, a side is one server process, and the verdict is about those two processes: unpinned,
    // where the scheduler put the client and each server decided 6 and 7 of 40 A/A runs (one server command against
    // itself, grpc and h2grpc, 2 cores, 4 Dec 2026); pinned apart, none of 40. So when the session starts both
    // servers and nothing is pinned, it pins them apart itself.
    m_pinnedApart = false;
    if (m_design.abUntilDecided && m_clientCpus.empty() && m_serverCpus.empty() && a.startsServer && b.startsServer) {
        if (const std::optional<ClientServerCpus> apart = clientApartFromServers()) {
            m_clientCpus = apart->client;
            m_serverCpus = apart->servers;
            m_pinnedApart = true;
        }
    }
    // A client command is a process of the side as a server command is: restarted, and the replicate.
    const bool clientA = !m_targets[0].client.isEmpty();
    const bool clientB = !m_targets[1].client.isEmpty();
    const AbServers servers { a.startsServer || b.startsServer || clientA || clientB,
        (a.startsServer || clientA) && (b.startsServer || clientB), !m_clientCpus.empty() };
    std::optional<AbBlocks> designed = prepareAb(m_design, a.spec.plan, servers, problem);
    if (!designed)
        return fail(-1, *problem);
    m_blocks = *designed;
    m_rounds = m_blocks.roundsFor(a.spec.plan);
    for (int index = 0; index < 2; ++index) {
        Side &s = m_sides[static_cast<size_t>(index)];
        if (!s.startsServer)
            continue;
        const AbTarget &t = m_targets[static_cast<size_t>(index)];
        s.server = s.builtin ? builtinServeCommand(m_serveProgram, s.spec.transport.kind) : s.spec.command;
        s.server.environment = t.environment;
        s.server.workingDirectory = t.workingDirectory;
        s.server.cpus = m_serverCpus; // every start of it, restarts too
        if (QString why; !s.server.check(&why))
            return fail(index, { QStringLiteral("target"), why, false });
    }
    m_checked = true;
    return true;
}

bool AbSession::startServer(int index, ScenarioProblem *problem)
{
    Side &s = m_sides[static_cast<size_t>(index)];
    if (m_startingHook)
        m_startingHook(
            QStringLiteral("Starting %1: %2")
                .arg(sideLetter(index),
                    s.builtin ? QStringLiteral("built-in %1 server").arg(transportName(s.spec.transport.kind))
                              : s.server.command));
    QString error;
    // started with the profiler's additions; recorded as given (buildRecords())
    s.spec.target.address
        = s.launch.start(m_profiler ? m_profiler->profiled(s.server) : s.server, s.spec.transport.kind, &error);
    if (s.spec.target.address.isEmpty()) {
        *problem = { {}, QStringLiteral("server %1 did not start: %2").arg(sideLetter(index), error), true };
        return false;
    }
    s.spec.plan.serverPid = s.launch.pid();
    return true;
}

bool AbSession::prepare(ScenarioProblem *problem, int *side, QString *details)
{
    int ignored = -1;
    int &at = side ? *side : ignored;
    if (!check(problem, &at))
        return false;
    auto fail = [&](int index, const ScenarioProblem &why) {
        *problem = why;
        at = index;
        return false;
    };
    auto stopped = [&] {
        if (!stopping())
            return false;
        fail(-1, { {}, QStringLiteral("stopped before the run started"), true });
        return true;
    };
    // Servers first, so that a schema can come from their reflection. The side that goes first in round 1 (a coin
    // flip) starts first, as it restarts first in the rounds where it goes first: which server starts first shows in
    // the timings (docs/statistics.md).
    m_blocks.firstSide = AbBlocks::coinFlip();
    if (m_sides[0].spec.profile.any())
        m_profiler = std::make_unique<ProfileRecorder>(m_sides[0].spec.profile);
    for (const int index : { m_blocks.firstSide, 1 - m_blocks.firstSide }) {
        if (stopped())
            return false;
        Side &s = m_sides[static_cast<size_t>(index)];
        if (s.startsServer) {
            if (!startServer(index, problem))
                return fail(index, *problem);
            continue;
        }
        s.spec.plan.serverPid = 0;
        if (QString why; !probeReachable(s.spec.target.address, probeTimeoutFor(s.spec.target.timeout), &why))
            return fail(index, { {}, QStringLiteral("cannot reach %1: %2").arg(sideLetter(index), why), true });
    }
    for (int index = 0; index < 2; ++index) {
        if (stopped())
            return false;
        Side &s = m_sides[static_cast<size_t>(index)];
        if (m_call) {
            s.call = m_call;
            continue;
        }
        QString said;
        const std::optional<Schema> schema = loadRunSchema(s.scenario, s.spec, s.spec.target.address, problem, &said);
        if (details)
            *details = said;
        if (!schema)
            return fail(index, *problem);
        s.call = prepareCall(s.spec, *schema, problem);
        if (!s.call)
            return fail(index, *problem);
    }
    // This process is pinned once its servers run (a child would inherit its CPUs), and given its CPUs back when
    // the run ends (the window goes on).
    if (!m_clientCpus.empty()) {
        const std::vector<int> before = availableCpus();
        if (QString why; !pinCurrentProcess(m_clientCpus, &why))
            return fail(-1,
                { QStringLiteral("pinning.client_cpus"),
                    QStringLiteral("could not pin rpcscope to CPU %1: %2").arg(formatCpuList(m_clientCpus), why),
                    true });
        m_cpusBefore = before;
    }
    buildRecords();
    if (m_profiler)
        startProfiling();
    return true;
}

void AbSession::startProfiling()
{
    if (!m_profiler->start()) {
        m_profileNotes << m_profiler->notes();
        m_profiler.reset();
        return;
    }
    for (int index = 0; index < 2; ++index) {
        Side &s = m_sides[static_cast<size_t>(index)];
        if (m_sides[0].spec.profile.client && m_targets[static_cast<size_t>(index)].client.isEmpty())
            m_profiler->addProcess(clientKey(index), ::getpid(), QStringLiteral("rpcscope"), false);
        if (!m_sides[0].spec.profile.server)
            continue;
        qint64 pid = s.spec.plan.serverPid;
        QString command = m_records[static_cast<size_t>(index)].server.value(QStringLiteral("command")).toString();
        if (const qint64 given = m_targets[static_cast<size_t>(index)].profilePid; given > 0) {
            pid = given; // the user's say-so wins over the port's listener
            command = processName(given);
        } else if (pid <= 0) {
            const PortOwner owner = localListener(s.spec.target.address);
            pid = owner.pid;
            command = owner.name;
            if (pid <= 0)
                m_profileNotes << QStringLiteral("no server profile of %1: no local process that rpcscope may look "
                                                 "at listens on %2")
                                      .arg(sideLetter(index), s.spec.target.address);
        }
        if (pid > 0) {
            m_serverProcess[static_cast<size_t>(index)] = 1;
            m_serverKeys[static_cast<size_t>(index)] << serverKey(index, 1);
            m_profiler->addProcess(serverKey(index, 1), pid, command);
        }
    }
}

void AbSession::finishProfiles()
{
    if (!m_profiler)
        return;
    // Each block's OK calls go to the server process that served it: a side's processes in the order they served.
    std::array<int, 2> lastProcess { -1, -1 };
    std::array<int, 2> ordinal { 0, 0 };
    for (const AbBlockResult &block : m_runner.completedBlocks()) {
        const auto side = static_cast<size_t>(block.side);
        if (block.process != lastProcess[side]) {
            lastProcess[side] = block.process;
            ++ordinal[side];
        }
        const auto ok = static_cast<double>(block.calls - block.failed);
        m_profiler->addCalls(serverKey(block.side, ordinal[side]), ok);
        // A client command starts anew with each new process of its side: its processes in the same order.
        m_profiler->addCalls(
            m_clientKeys[side].isEmpty() ? clientKey(block.side) : clientCommandKey(block.side, ordinal[side]), ok);
    }
    const std::map<int, ProcessProfile> profiles = m_profiler->finish();
    for (int index = 0; index < 2; ++index) {
        const auto i = static_cast<size_t>(index);
        if (m_sides[0].spec.profile.server)
            m_serverProfiles[i] = m_profiler->profileOf(QStringLiteral("server"), profiles, m_serverKeys[i]);
        if (!m_clientKeys[i].isEmpty())
            m_clientProfiles[i] = m_profiler->profileOf(QStringLiteral("client"), profiles, m_clientKeys[i]);
        else if (m_sides[0].spec.profile.client)
            m_clientProfiles[i] = m_profiler->profileOf(QStringLiteral("client"), profiles, { clientKey(index) });
    }
    m_profileNotes << m_profiler->notes();
    m_profiler.reset();
}

int AbSession::currentClientKey(int side) const
{
    const auto index = static_cast<size_t>(side);
    return m_targets[index].client.isEmpty() ? clientKey(side) : clientCommandKey(side, m_clientProcess[index]);
}

QStringList AbSession::profileNotes() const
{
    return m_profileNotes;
}

bool AbSession::startLoad(QString *error)
{
    if (!m_sides[0].call || !m_sides[1].call) {
        *error = QStringLiteral("the A/B run is not prepared");
        return false;
    }
    if (stopping()) {
        *error = QStringLiteral("stopped before the run started");
        return false;
    }
    std::array<AbSide, 2> sides;
    for (size_t index = 0; index < 2; ++index) {
        Side &s = m_sides[index];
        sides[index] = { s.spec.transport, s.spec.target, *s.call, s.spec.plan, {}, {}, {} };
        if (const AbTarget &t = m_targets[index]; !t.client.isEmpty()) {
            ClientCommand client = clientCommandOf(t);
            client.cpus = m_clientCpus;
            sides[index].client = client;
            // Profiled as a server is, whole process tree, with --profile or --profile-client: the code under test.
            if (m_profiler && m_sides[0].spec.profile.any()) {
                sides[index].client = m_profiler->profiled(client); // a Python sampler in its environment
                sides[index].clientStarted = [this, index](int64_t pid, const QString &command) {
                    const int side = static_cast<int>(index);
                    const int process = ++m_clientProcess[index];
                    m_clientKeys[index] << clientCommandKey(side, process);
                    m_profiler->addProcess(clientCommandKey(side, process), pid, command);
                };
            }
        }
        if (ProfileRecorder *profiler = m_profiler.get()) {
            // Every block's timed phase is a window of this side's current server process and of the client.
            const int side = static_cast<int>(index);
            sides[index].plan.timedPhase = [this, profiler, side](bool timed) {
                const int server = serverKey(side, m_serverProcess[static_cast<size_t>(side)]);
                for (int key : { server, currentClientKey(side) }) {
                    if (timed)
                        profiler->windowOpen(key);
                    else
                        profiler->windowClose(key, 0); // the blocks' calls are added up once the run ended
                }
            };
        }
        if (!s.startsServer || m_blocks.restarts < 2)
            continue;
        // Called on the runner's thread between blocks, never during one: the same command again, pinned as before.
        sides[index].restartServer = [this, index, launch = &s.launch](QString *address, int64_t *pid, QString *why) {
            *address = launch->restart(why);
            if (address->isEmpty())
                return false;
            *pid = launch->pid();
            if (m_profiler && m_sides[0].spec.profile.server) {
                const int side = static_cast<int>(index);
                const int process = ++m_serverProcess[index];
                m_serverKeys[index] << serverKey(side, process);
                m_profiler->addProcess(serverKey(side, process), *pid,
                    m_records[index].server.value(QStringLiteral("command")).toString());
            }
            return true;
        };
    }
    if (!m_runner.start(sides, m_blocks, error))
        return false;
    const QDateTime now = QDateTime::currentDateTimeUtc();
    for (RunRecord &r : m_records)
        r.startedAt = now;
    m_loadStarted = true;
    return true;
}

void AbSession::startInBackground(std::function<void(const Started &)> started)
{
    m_thread = std::thread([this, started = std::move(started)] {
        Started outcome;
        ScenarioProblem problem;
        if (!prepare(&problem, &outcome.side, &outcome.details))
            outcome.problem = problem;
        else if (QString error; !startLoad(&error))
            outcome.problem = ScenarioProblem { {}, error, false };
        const bool running = !outcome.problem;
        started(outcome);
        // This thread holds the servers it started: it waits for the run's end (or the session's), then stops them.
        while (running && !m_ending && !m_runner.waitForFinished(std::chrono::milliseconds(50))) { }
        finish();
        m_done = true;
    });
}

void AbSession::stop()
{
    m_stop = true;
    m_runner.stop();
}

void AbSession::finish()
{
    finishProfiles(); // before the servers stop: a sampler in a server writes what it saw when its window closes
    if (!m_cpusBefore.empty()) {
        QString ignored; // the CPUs it ran on before: pinning them again cannot fail where pinning one did not
        pinCurrentProcess(m_cpusBefore, &ignored);
        m_cpusBefore.clear();
    }
    m_runEnded = true;
    for (Side &s : m_sides)
        s.launch.stop();
}

void AbSession::buildRecords()
{
    // Each side named by what distinguishes it from the other (the words of its command, its environment), short
    // enough for a legend; the side in the name too: charts and lists name runs by it.
    const std::array<QString, 2> names = abSideNames(
        { m_targets[0].spec, m_targets[0].environment, m_targets[0].client, m_targets[0].clientEnvironment },
        { m_targets[1].spec, m_targets[1].environment, m_targets[1].client, m_targets[1].clientEnvironment });
    QJsonObject environment = environmentFingerprint();
    // Pinning is part of where a run ran: two runs pinned differently are told apart like two machines.
    if (!m_clientCpus.empty())
        environment.insert(QStringLiteral("client_cpus"), formatCpuList(m_clientCpus));
    if (!m_serverCpus.empty())
        environment.insert(QStringLiteral("server_cpus"), formatCpuList(m_serverCpus));
    for (int index = 0; index < 2; ++index) {
        const Side &s = m_sides[static_cast<size_t>(index)];
        RunRecord &r = m_records[static_cast<size_t>(index)];
        r = RunRecord();
        r.name = (m_name.isEmpty() ? names[static_cast<size_t>(index)] : m_name)
            + QStringLiteral(" (%1)").arg(sideLetter(index));
        r.labels = m_labels;
        r.labels << sideLetter(index);
        r.method = s.spec.request.call;
        r.transport = transportName(s.spec.transport.kind);
        r.codec = codecName(s.spec.transport.codec.value_or(defaultCodec(s.spec.transport.kind)));
        r.target = m_targets[static_cast<size_t>(index)].spec.trimmed();
        // The side's document (its target, the A/B design as it runs), and what a later look needs to judge the
        // pairs again as this run did (SequentialAb::fromBlocks).
        Scenario ran = documentAsRun(s.scenario, s.spec);
        ran.abRestarts = m_blocks.restarts;
        ran.abConnection = m_blocks.connectionName();
        ran.abThreshold = m_design.abThreshold.isEmpty() ? QStringLiteral("5%") : m_design.abThreshold;
        ran.abUntilDecided = m_blocks.untilDecided;
        r.scenario = QJsonDocument::fromJson(ran.toJson()).object();
        r.scenario.insert(QStringLiteral("ab_side"), sideLetter(index));
        r.scenario.insert(QStringLiteral("ab_rounds_planned"), m_rounds);
        if (const AbTarget &t = m_targets[static_cast<size_t>(index)]; !t.client.isEmpty()) {
            // What made the calls: recorded, never run again from a record (a shared document names no command).
            r.scenario.insert(QStringLiteral("client_command"), clientCommandOf(t).describe());
        }
        r.environment = environment;
        if (s.startsServer) {
            r.server = s.server.describe();
            if (s.builtin) // the same on every machine, not this build's path and port
                r.server.insert(QStringLiteral("command"),
                    QString(QStringLiteral("rpcscope-cli serve ") + serveSubcommand(s.spec.transport.kind)));
        }
        redactSecrets(&r); // before anything prints or stores it
    }
}

void AbSession::completeRecords(std::array<RunRecord, 2> *records) const
{
    const QDateTime now = QDateTime::currentDateTimeUtc();
    const QString status = QString::fromUtf16(m_runner.wasStopped() ? RunStatus::Stopped : RunStatus::Finished);
    for (int index = 0; index < 2; ++index) {
        RunRecord &r = (*records)[static_cast<size_t>(index)];
        r.snapshot = m_runner.snapshot(index);
        r.rawSamples = m_runner.rawSamples(index);
        r.endedAt = now;
        r.status = status;
        r.serverProfile = m_serverProfiles[static_cast<size_t>(index)];
        r.clientProfile = m_clientProfiles[static_cast<size_t>(index)];
    }
}

} // namespace rpcscope
