#include "runsession.h"

#include "net/reachability.h"
#include "store/environment.h"
#include "store/secrets.h"
#include "transport/transports.h"
#include "util/cpuset.h"
#include "util/wallclock.h"

#include <google/protobuf/descriptor.h>

#include <QDateTime>
#include <QJsonDocument>
#include <QSysInfo>

#include <unistd.h>

namespace rpcscope {

RunSession::RunSession(Scenario scenario, RunSpec spec, std::optional<GrpcCall> call, QString serveProgram)
    : m_scenario(std::move(scenario))
    , m_spec(std::move(spec))
    , m_call(std::move(call))
    , m_serveProgram(std::move(serveProgram))
{
    if (m_spec.client)
        m_client = std::make_unique<ClientLoad>();
}

RunSession::~RunSession()
{
    stop();
    m_ending = true;
    if (m_thread.joinable())
        m_thread.join();
    load().stop();
    load().waitForFinished(std::chrono::seconds(30));
    stopServers();
}

void RunSession::useRunningBuiltin(const QString &address, qint64 pid, const QString &command)
{
    m_spec.target.address = address;
    m_runningBuiltinPid = pid;
    m_runningBuiltinCommand = command;
}

void RunSession::stop()
{
    m_stop = true;
    load().stop();
}

void RunSession::stopServers()
{
    m_server.stop();
}

bool RunSession::startBuiltinChild(ScenarioProblem *problem)
{
    ServerCommand command = builtinServeCommand(m_serveProgram, m_spec.transport.kind);
    command.cpus = m_spec.serverCpus;
    QString error;
    m_spec.target.address
        = m_server.start(m_profiler ? m_profiler->profiled(command) : command, m_spec.transport.kind, &error);
    if (m_spec.target.address.isEmpty()) {
        *problem = { {}, QStringLiteral("built-in server: ") + error, true };
        return false;
    }
    m_spec.plan.serverPid = m_server.pid();
    return true;
}

bool RunSession::prepare(ScenarioProblem *problem, QString *details)
{
    auto stopped = [&] {
        if (!stopping())
            return false;
        *problem = { {}, QStringLiteral("stopped before the run started"), true };
        return true;
    };
    QString error;
    if (m_spec.profile.any())
        m_profiler = std::make_unique<ProfileRecorder>(m_spec.profile);
    // A server command is started first: the schema may come from it by reflection.
    if (m_spec.server == RunServer::Command) {
        if (m_startingHook)
            m_startingHook(m_spec.command.command);
        m_spec.target.address = m_server.start(
            m_profiler ? m_profiler->profiled(m_spec.command) : m_spec.command, m_spec.transport.kind, &error);
        if (m_spec.target.address.isEmpty()) {
            m_serverError = error;
            *problem = { {}, QStringLiteral("the server command did not start: ") + error, true };
            return false;
        }
        m_spec.plan.serverPid = m_server.pid();
    }
    if (stopped())
        return false;
    if (!m_call) {
        QString said;
        const std::optional<Schema> schema = loadRunSchema(m_scenario, m_spec, m_spec.target.address, problem, &said);
        if (details)
            *details = said;
        if (!schema)
            return false;
        m_call = prepareCall(m_spec, *schema, problem);
        if (!m_call)
            return false;
    }
    m_call->captureMetadata = m_captureMetadata;
    if (m_spec.transport.kind == TransportKind::InProcess && !inProcessRunsMethod(*m_call))
        m_notes << QString::fromStdString(m_call->method->full_name())
                + QStringLiteral(" is not a method of rpcscope's bench service: the no-RPC baseline times its "
                                 "request's codec and an empty reply's, not the method's work");
    if (m_spec.server == RunServer::Builtin) {
        if (!m_runningBuiltinCommand.isEmpty())
            m_spec.plan.serverPid = m_runningBuiltinPid;
        else if (!startBuiltinChild(problem))
            return false;
    }
    if (stopped())
        return false;
    // An address nobody answers at is "could not do the work" for every transport, before any load is sent (what
    // was given is checked first: a bad file is a usage error wherever the target is).
    if (m_spec.server == RunServer::Address
        && !probeReachable(m_spec.target.address, probeTimeoutFor(m_spec.target.timeout), &error)) {
        *problem = { {}, QStringLiteral("cannot reach the target: ") + error, true };
        return false;
    }
    if (!m_client) { // a client command makes its own connections
        m_transport = makeTransport(m_spec.transport, m_spec.target, *m_call, &error);
        if (!m_transport) {
            *problem = { {}, error, false };
            return false;
        }
    }
    buildRecord();
    m_prepared = true;
    if (m_profiler)
        startProfiling();
    return true;
}

void RunSession::startProfiling()
{
    if (!m_profiler->start()) {
        m_profileNotes << m_profiler->notes();
        m_profiler.reset();
        return;
    }
    constexpr int server = 0;
    constexpr int client = 1;
    if (m_spec.profile.server) {
        qint64 pid = m_spec.plan.serverPid;
        QString command = m_record.server.value(QStringLiteral("command")).toString();
        if (m_spec.profile.pid > 0) { // --profile-pid: the user's say-so wins
            pid = m_spec.profile.pid;
            command = processName(pid);
        } else if (pid <= 0 && m_spec.server == RunServer::Address) {
            // a local server given by its address: the process that listens on the target's port
            const PortOwner owner = localListener(m_spec.target.address);
            pid = owner.pid;
            command = owner.name;
            if (pid <= 0)
                m_profileNotes << QStringLiteral("no server profile: no local process that rpcscope may look at "
                                                 "listens on %1")
                                      .arg(m_spec.target.address);
        }
        if (pid > 0)
            m_profiler->addProcess(server, pid, command);
    }
    // A client command is added as it starts (ClientLoad's started hook), its whole process tree: the code under test.
    if (m_spec.profile.client && !m_client)
        m_profiler->addProcess(client, ::getpid(), QStringLiteral("rpcscope"), false);
    ProfileRecorder *profiler = m_profiler.get();
    m_spec.plan.timedPhase = [profiler](bool timed) {
        for (int key : { server, client }) {
            if (timed)
                profiler->windowOpen(key);
            else
                profiler->windowClose(key, 0); // the calls are known once the run's figures are final
        }
    };
}

void RunSession::finishProfiles() const
{
    if (m_profilesRead || !m_profiler)
        return;
    m_profilesRead = true;
    const RunSnapshot last = load().snapshot();
    const auto ok = static_cast<double>(last.callsOk());
    m_profiler->addCalls(0, ok);
    m_profiler->addCalls(1, ok);
    const std::map<int, ProcessProfile> profiles = m_profiler->finish();
    if (m_spec.profile.server)
        m_serverProfile = m_profiler->profileOf(QStringLiteral("server"), profiles, { 0 });
    if (m_spec.profile.client || m_client)
        m_clientProfile = m_profiler->profileOf(QStringLiteral("client"), profiles, { 1 });
}

QStringList RunSession::profileNotes() const
{
    QStringList notes = m_profileNotes;
    if (m_profiler)
        for (const QString &note : m_profiler->notes())
            if (!notes.contains(note))
                notes << note;
    return notes;
}

bool RunSession::startLoad(QString *error)
{
    if (!m_prepared || (!m_client && !m_transport)) {
        *error = QStringLiteral("the run is not prepared");
        return false;
    }
    if (m_beforeLoadHook && !m_beforeLoadHook(error))
        return false;
    if (stopping()) {
        *error = QStringLiteral("stopped before the run started");
        return false;
    }
    if (m_client) {
        ProfileRecorder *profiler = m_profiler.get();
        auto started = [profiler](qint64 pid, const QString &command) {
            if (profiler)
                profiler->addProcess(1, pid, command);
        };
        // Profiled: rpcscope's Python sampler on its PYTHONPATH, as a server command's.
        const ClientCommand client = m_profiler ? m_profiler->profiled(*m_spec.client) : *m_spec.client;
        if (!m_client->start(client, m_spec.target.address, m_spec.plan, started, error))
            return false;
    } else if (!m_engine.start(std::move(m_transport), m_spec.plan, error)) {
        return false;
    }
    if (stopping())
        load().stop(); // a stop() that came while the load was starting: it ends the run, what it measured kept
    m_record.startedAt = QDateTime::currentDateTimeUtc();
    return true;
}

void RunSession::startInBackground(std::function<void(const Started &)> started)
{
    m_thread = std::thread([this, started = std::move(started)] {
        Started outcome;
        ScenarioProblem problem;
        if (!prepare(&problem, &outcome.details)) {
            outcome.problem = problem;
            outcome.serverError = m_serverError;
        } else if (QString error; !startLoad(&error)) {
            outcome.problem = ScenarioProblem { {}, error, false };
        }
        const bool running = !outcome.problem;
        started(outcome);
        // This thread holds the servers it started: it waits for the run's end (or the session's), then stops them.
        while (running && !m_ending && !load().waitForFinished(std::chrono::milliseconds(50))) { }
        if (running && !m_ending && m_spec.profile.any() && m_profilesHook) {
            finishProfiles(); // before the servers stop: a sampler in a server writes what it saw as its window closes
            m_profilesHook(RunProfiles { m_serverProfile, m_clientProfile, profileNotes() });
        }
        stopServers();
        m_done = true;
    });
}

void RunSession::buildRecord()
{
    RunRecord &record = m_record;
    record.name = m_spec.name;
    record.labels = m_spec.labels;
    record.method = m_spec.request.call;
    record.transport = transportName(m_spec.transport.kind);
    record.codec = codecName(m_spec.transport.codec.value_or(defaultCodec(m_spec.transport.kind)));
    record.target = m_spec.server == RunServer::Builtin ? QStringLiteral("builtin") : m_spec.targetText;
    record.scenario = QJsonDocument::fromJson(documentAsRun(m_scenario, m_spec).toJson()).object();
    if (m_spec.client) // what made the calls: recorded, never run again from a record (a document names no command)
        record.scenario.insert(QStringLiteral("client_command"), m_spec.client->describe());
    record.environment = environmentFingerprint();
    // Pinning is part of where a run ran: two runs pinned differently are told apart like two machines.
    if (!m_spec.clientCpus.empty())
        record.environment.insert(QStringLiteral("client_cpus"), formatCpuList(m_spec.clientCpus));
    if (!m_spec.serverCpus.empty())
        record.environment.insert(QStringLiteral("server_cpus"), formatCpuList(m_spec.serverCpus));
    if (m_spec.server == RunServer::Builtin) {
        const QString command = !m_runningBuiltinCommand.isEmpty()
            ? m_runningBuiltinCommand
            : QString(QStringLiteral("rpcscope-cli serve ") + serveSubcommand(m_spec.transport.kind));
        record.server = QJsonObject { { QStringLiteral("command"), command } };
        if (!m_spec.serverCpus.empty() && m_runningBuiltinCommand.isEmpty())
            record.server.insert(QStringLiteral("cpus"), formatCpuList(m_spec.serverCpus));
    } else if (m_spec.server == RunServer::Command) {
        record.server = m_spec.command.describe();
    }
    if (!m_spec.plan.segment.isWhole()) {
        record.split.count = m_spec.plan.segment.count;
        record.split.planId = m_scenario.planFingerprint();
        if (m_spec.plan.startAt)
            record.split.startAt = QDateTime::fromMSecsSinceEpoch(
                std::chrono::duration_cast<std::chrono::milliseconds>(m_spec.plan.startAt->time_since_epoch()).count(),
                Qt::UTC)
                                       .toString(Qt::ISODateWithMs);
        WorkerRecord worker;
        worker.index = m_spec.plan.segment.index;
        worker.host = QSysInfo::machineHostName();
        const WallClockState clock = wallClockState();
        worker.clock = !clock.known ? WorkerRecord::Clock::Unknown
            : clock.synchronized    ? WorkerRecord::Clock::Synchronized
                                    : WorkerRecord::Clock::Unsynchronized;
        worker.clockErrorUs = clock.estimatedErrorUs;
        record.split.workers << worker;
    }
    redactSecrets(&record); // before anything prints, exports or stores it
}

void RunSession::completeRecord(RunRecord *record, const RunSnapshot &last) const
{
    record->snapshot = last;
    if (record->split.isSplit())
        record->split.workers.front().takeFigures(last);
    record->endedAt = QDateTime::currentDateTimeUtc();
    record->status = QString::fromUtf16(last.state == RunState::Stopped ? RunStatus::Stopped : RunStatus::Finished);
    if (m_spec.plan.recordRawSamples)
        record->rawSamples = load().rawSamples();
    finishProfiles();
    record->serverProfile = m_serverProfile;
    record->clientProfile = m_clientProfile;
}

} // namespace rpcscope
