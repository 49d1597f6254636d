#include "runlauncher.h"

#include "abcontroller.h"
#include "backgroundjob.h"
#include "builtinservers.h"
#include "engine/singlecall.h"
#include "matrixpage.h"
#include "metrics/callstatus.h"
#include "report/callreport.h"
#include "report/rawsamples.h"
#include "runcontroller.h"
#include "runrecorder.h"
#include "session/absession.h"
#include "store/environment.h"
#include "store/runrecord.h"
#include "store/runstore.h"
#include "store/runwriter.h"
#include "util/units.h"

#include "util/outputfile.h"
#include <QJsonDocument>

#include <google/protobuf/descriptor.h>

namespace rpcscope {

RunLauncher::RunLauncher(
    ScenarioPage *scenario, MatrixPage *matrix, BuiltinServers *builtin, RunRecorder *recorder, QObject *parent)
    : QObject(parent)
    , m_scenario(scenario)
    , m_matrix(matrix)
    , m_builtin(builtin)
    , m_recorder(recorder)
    , m_controller(new RunController(this))
    , m_ab(new AbController(recorder, this))
{
    connect(m_controller, &RunController::snapshotAvailable, this, &RunLauncher::snapshotAvailable);
    connect(m_controller, &RunController::snapshotAvailable, this, &RunLauncher::recordProgress);
    connect(m_controller, &RunController::runFinished, this, &RunLauncher::runFinished);
    connect(m_controller, &RunController::runStarted, this, &RunLauncher::runStarted);
    connect(m_controller, &RunController::startFailed, this, &RunLauncher::runNotStarted);
    connect(m_controller, &RunController::profilesRead, this, &RunLauncher::profilesRead);
    connect(m_ab, &AbController::progressed, this, &RunLauncher::abProgressed);
    connect(m_ab, &AbController::finished, this, &RunLauncher::abEnded);
    connect(m_matrix, &MatrixPage::cellDone, this, &RunLauncher::recordMatrixCell);
}

void RunLauncher::recordMatrixCell(const MatrixResult &result, const RunRecord &started)
{
    RunStore *store = m_recorder->store();
    if (!store)
        return;
    // The cell's session's record: the document that ran (the editor's, as the cell varied it and named it for the
    // matrix), where, the server.
    RunRecord run = started;
    run.endedAt = QDateTime::currentDateTimeUtc();
    run.status = QString::fromUtf16(result.run.state == RunState::Stopped ? RunStatus::Stopped : RunStatus::Finished);
    run.snapshot = result.run;
    QString error;
    if (const qint64 id = store->addRun(run, &error); id > 0)
        Q_EMIT m_recorder->runStored(id);
    else
        Q_EMIT statusMessage(tr("The stack comparison's cell %1 is not saved: %2").arg(run.name, error), 10000);
}

RunLauncher::~RunLauncher() = default;

std::shared_ptr<RunSession> RunLauncher::prepareVariation(const ScenarioPage::Variation &variation, QString *error)
{
    if (m_controller->isRunning()) {
        *error = tr("a single run is going; stop it first");
        return nullptr;
    }
    auto prepared = m_scenario->prepare(error, &variation);
    if (!prepared)
        return nullptr;
    prepared->spec.profile = ProfileOptions(); // the stack comparison shows no profiles (yet): none is recorded
    return sessionFor(*prepared);
}

std::shared_ptr<RunSession> RunLauncher::sessionFor(const ScenarioPage::Prepared &prepared) const
{
    auto session
        = std::make_shared<RunSession>(prepared.document, prepared.spec, prepared.call, m_builtin->cliProgram());
    if (prepared.spec.server == RunServer::Builtin) // the no-RPC baseline has no server: never builtin
        session->useRunningBuiltin(
            prepared.spec.target.address, m_builtin->pid(), QStringLiteral("rpcscope-cli serve all"));
    return session;
}

void RunLauncher::startRun()
{
    if (m_controller->isRunning())
        return;
    if (m_matrix->isRunning()) {
        Q_EMIT statusMessage(tr("Cannot run: the stack comparison is running; stop it first"), 10000);
        return;
    }
    QString error;
    const auto prepared = m_scenario->prepare(&error);
    if (!prepared) {
        Q_EMIT statusMessage(tr("Cannot run: %1").arg(error), 10000);
        return;
    }
    std::unique_ptr<OutputFile> rawFile;
    if (!prepared->spec.rawSamplesPath.isEmpty()) {
        // Opened before the run, as the CLI does: an unwritable path is known before any load is sent.
        rawFile = std::make_unique<OutputFile>(prepared->spec.rawSamplesPath);
        if (!rawFile->open()) {
            Q_EMIT statusMessage(tr("Cannot run: raw samples %1").arg(rawFile->error()), 10000);
            return;
        }
    }
    // The session starts the server command (when the target is one), loads and makes the transport off this
    // thread; runStarted() or runNotStarted() follows.
    if (!m_controller->start(sessionFor(*prepared)))
        return;
    m_run.reset(); // recorded when its load starts (runStarted())
    m_rawSamplesFile = std::move(rawFile);
    m_runChecks = prepared->spec.checks;
    m_scenario->setRunning(true);
    Q_EMIT stateChanged(tr("Starting"));
    Q_EMIT statusMessage(prepared->spec.server == RunServer::Command
            ? tr("Starting %1 ...").arg(prepared->spec.command.command)
            : tr("Starting the run ..."),
        0);
}

void RunLauncher::runNotStarted(const RunSession::Started &started)
{
    m_rawSamplesFile.reset();
    m_scenario->setRunning(false);
    Q_EMIT stateChanged(tr("Idle"));
    if (!started.serverError.isEmpty()) {
        Q_EMIT statusMessage(tr("The server command did not start"), 15000);
        Q_EMIT serverCommandFailed(started.serverError);
        return;
    }
    const QString text = m_scenario->describeProblem(*started.problem);
    Q_EMIT statusMessage(
        tr("Cannot run: %1").arg(started.details.isEmpty() ? text : text + QLatin1Char('\n') + started.details), 10000);
}

void RunLauncher::sendOnce()
{
    if (m_controller->isRunning() || m_sending || m_ab->isRunning())
        return;
    QString error;
    const auto prepared = m_scenario->prepare(&error);
    if (!prepared) {
        Q_EMIT statusMessage(tr("Cannot send: %1").arg(error), 10000);
        return;
    }
    m_sending = true;
    ScenarioPage::Prepared once = *prepared;
    once.spec.profile = ProfileOptions(); // one call has nothing to profile: no profiler is started for it
    once.spec.client.reset(); // one call is rpcscope's own, shown with its reply: a client command's are its own
    std::shared_ptr<RunSession> session = sessionFor(once);
    session->setCaptureMetadata(true);
    CallDescription described;
    described.method = prepared->spec.request.call;
    described.transport = transportName(prepared->spec.transport.kind);
    described.codec = codecName(prepared->spec.transport.codec.value_or(defaultCodec(prepared->spec.transport.kind)));
    described.inProcess = prepared->spec.transport.kind == TransportKind::InProcess;
    described.clientStreams = prepared->call.method && prepared->call.method->client_streaming();
    described.serverStreams = prepared->call.method && prepared->call.method->server_streaming();
    m_scenario->showReply(prepared->spec.server == RunServer::Command
            ? tr("Starting %1 ...").arg(prepared->spec.command.command)
            : tr("Sending %1 ...").arg(described.method),
        true);
    Q_EMIT stateChanged(tr("Sending"));
    /// What the background job hands back.
    struct Sent {
        SingleCallResult result;
        RunSession::Started problem; ///< set: the call was not sent
        QString address;
    };
    runInBackground(
        this,
        [session]() {
            // The session starts the server command (this thread holds it until the call is made), probes the
            // target and makes the transport here: making one may resolve a name, and ending one joins its threads.
            Sent sent;
            ScenarioProblem problem;
            if (!session->prepare(&problem, &sent.problem.details)) {
                sent.problem.problem = problem;
                sent.problem.serverError = session->serverError();
                return sent;
            }
            sent.address = session->spec().target.address;
            std::unique_ptr<Transport> transport = session->takeTransport();
            const RunSpec &spec = session->spec();
            sent.result = ::rpcscope::sendOnce(
                *transport, sendOnceWait(spec.target.timeout), spec.plan.expectations, spec.plan.expectedStatuses);
            transport.reset();
            session->stopServers();
            return sent;
        },
        [this, described](Sent sent) mutable {
            m_sending = false;
            Q_EMIT stateChanged(tr("Idle"));
            if (!sent.problem.serverError.isEmpty()) {
                m_scenario->showReply(tr("The server command did not start:\n%1").arg(sent.problem.serverError));
                Q_EMIT statusMessage(tr("The server command did not start"), 15000);
                Q_EMIT serverCommandFailed(sent.problem.serverError);
            } else if (sent.problem.problem) {
                const QString text = tr("Cannot send: %1").arg(m_scenario->describeProblem(*sent.problem.problem));
                m_scenario->showReply(sent.problem.details.isEmpty() ? text : text + u'\n' + sent.problem.details);
                Q_EMIT statusMessage(text, 10000);
            } else {
                described.target = described.inProcess ? QString() : sent.address;
                m_scenario->showReply(formatSingleCall(described, sent.result));
                Q_EMIT statusMessage(tr("Sent once: %1 in %2")
                                         .arg(callStatusName(sent.result.status), formatDuration(sent.result.latency)),
                    10000);
            }
            Q_EMIT sentOnce();
        });
}

void RunLauncher::runStarted()
{
    const RunSession &session = *m_controller->session();
    const RunSpec &spec = session.spec();
    // The run goes into the history from its first interval on (see RunRecorder).
    m_run = std::make_shared<RunRecord>(session.record());
    QString storeError;
    if (m_recorder->store() && !m_recorder->begin(m_run.get(), &storeError))
        Q_EMIT statusMessage(tr("The run is not saved: %1").arg(storeError), 10000);
    const QString codec = codecName(spec.transport.codec.value_or(defaultCodec(spec.transport.kind)));
    const QString description = spec.transport.kind == TransportKind::InProcess
        ? tr("%1, no RPC (%2 codec only)").arg(spec.request.call, codec)
        : spec.client
        ? tr("%1 → %2, calls made by the client command %3")
              .arg(spec.request.call, spec.target.address, spec.client->command)
        : tr("%1 → %2 (%3/%4)").arg(spec.request.call, spec.target.address, transportName(spec.transport.kind), codec);
    if (spec.transport.kind != TransportKind::InProcess && spec.server != RunServer::Builtin)
        Q_EMIT remoteTargetUsed(spec.transport.kind, spec.target.address);
    Q_EMIT stateChanged(tr("Running"));
    Q_EMIT runLaunched(m_run, description);
    if (spec.profile.any()) {
        m_profiledRuns.insert(m_controller->sessionNumber(), { m_run, spec.profile });
        Q_EMIT profilesPending(spec.profile.server, spec.profile.client);
    }
}

void RunLauncher::recordProgress(const RunSnapshot &snapshot)
{
    if (m_run)
        m_recorder->progress(m_run.get(), snapshot);
}

void RunLauncher::runFinished(const RunSnapshot &snapshot)
{
    if (const QString failure = m_controller->failure(); !failure.isEmpty()) {
        // What a broken client reported is no measurement of the plan: not kept, not judged, and said.
        m_recorder->discard(m_run.get());
        m_scenario->setRunning(false);
        Q_EMIT stateChanged(tr("Failed"));
        Q_EMIT statusMessage(
            tr("Run failed: the client command broke off after %1 calls").arg(snapshot.callsSent), 15000);
        Q_EMIT clientCommandFailed(failure);
        return;
    }
    Q_EMIT snapshotAvailable(snapshot);
    m_recorder->finish(m_run.get(), snapshot, m_controller->rawSamples());
    std::vector<CheckResult> checks;
    for (const Check &check : m_runChecks)
        checks.push_back(evaluateCheck(check, snapshot));
    Q_EMIT checksJudged(checks);
    m_scenario->setRunning(false);
    Q_EMIT statusMessage(tr("Run %1: %2 calls, %3 failed")
                             .arg(runStateName(snapshot.state))
                             .arg(snapshot.callsCompleted())
                             .arg(snapshot.callsFailed()),
        10000);
    writeRawSamples();
}

void RunLauncher::profilesRead(quint64 session, const RunProfiles &profiles)
{
    const ProfiledRun profiled = m_profiledRuns.take(session);
    if (!profiled.run)
        return;
    RunRecord &run = *profiled.run;
    run.serverProfile = profiles.server;
    run.clientProfile = profiles.client;
    if (run.id > 0 && (profiles.server || profiles.client))
        m_recorder->writer()->saveProfiles(run.id, profiles.server, profiles.client);
    RunProfiles shown = profiles;
    // A side asked for and not had: its tab says why rather than vanishing.
    for (auto [asked, profile, scope] : { std::tuple(profiled.asked.server, &shown.server, QStringLiteral("server")),
             std::tuple(profiled.asked.client, &shown.client, QStringLiteral("client")) }) {
        if (asked && !*profile) {
            *profile = Profile();
            (*profile)->scope = scope;
            (*profile)->notes = profiles.notes;
        }
    }
    if (!profiles.notes.isEmpty())
        Q_EMIT statusMessage(tr("Profile: %1").arg(profiles.notes.join(QStringLiteral("; "))), 15000);
    Q_EMIT runProfilesRead(profiled.run, shown);
}

void RunLauncher::writeRawSamples()
{
    if (!m_rawSamplesFile)
        return;
    const std::unique_ptr<OutputFile> file = std::move(m_rawSamplesFile);
    const std::vector<RawSample> samples = m_controller->rawSamples();
    const bool written = writeRawSamplesCsv(*file->device(), samples);
    const QString writeError
        = written ? QString() : file->path() + QStringLiteral(": ") + file->device()->errorString();
    if (written && file->commit())
        Q_EMIT statusMessage(
            tr("Wrote %n raw sample(s) to %1", nullptr, static_cast<int>(samples.size())).arg(file->path()), 15000);
    else
        Q_EMIT statusMessage(tr("Raw samples %1").arg(written ? file->error() : writeError), 15000);
}

void RunLauncher::stopRun()
{
    m_controller->stop();
    if (m_ab->isRunning())
        m_ab->stop();
}

void RunLauncher::stopForClose()
{
    m_controller->stop(); // a run, or one still starting (its server command getting ready)
    if (m_controller->isRunning() && m_run) { // a run still starting has no record yet
        // Kept as a stopped run, not left for the next start to find as interrupted.
        RunSnapshot last = m_controller->lastSnapshot();
        last.state = RunState::Stopped;
        m_recorder->finish(m_run.get(), last, m_controller->rawSamples());
    }
    m_ab->stopAndFinish(); // an A/B run, too, is kept as stopped with what both sides measured
}

bool RunLauncher::startAb(const AbRequest &request, QString *error)
{
    if (m_controller->isRunning() || m_ab->isRunning() || m_matrix->isRunning()) {
        *error = tr("A run is going; stop it first.");
        return false;
    }
    // The sides have their own servers (a built-in side is its own rpcscope-cli serve): the window's are not needed.
    auto prepared = m_scenario->prepare(error, nullptr, ScenarioPage::BuiltinStart::Never);
    if (!prepared)
        return false;
    // The editor's document with the dialog's A/B design and readiness; core runs it as the CLI's ab does.
    Scenario design = prepared->document;
    design.abBlock = request.block;
    design.abRestarts = request.restarts;
    design.abConnection = request.connectionPerBlock ? QStringLiteral("per-block") : QString();
    design.abThreshold = QStringLiteral("%1%").arg(request.threshold * 100);
    design.abUntilDecided = request.untilDecided;
    design.abMaxDuration = request.maxDuration;
    // The dialog's sides have client commands of their own: the Load tab's is a single run's.
    design.clientCommand.clear();
    design.clientEnvironment.clear();
    design.profilePid = 0; // and each side its own server's (the dialog's Server PID)
    design.profileServer = request.profileServer || request.targets[0].profilePid > 0
        || request.targets[1].profilePid > 0; // as --a-profile-pid implies --profile
    design.profileClient = request.profileClient;
    const bool profiling = design.profileServer || design.profileClient;
    design.profilePeriod
        = profiling ? m_scenario->profilePeriod() : QString(); // the Load tab's, as the dialog has none
    design.profileCallGraph = profiling ? m_scenario->profileCallGraph() : QString();
    design.readyPattern = request.readyPattern;
    design.readyTimeout = request.readyTimeout;
    std::array<AbTarget, 2> targets;
    for (size_t i = 0; i < 2; ++i)
        targets[i] = { request.targetText(static_cast<int>(i)), request.targets[i].environment,
            request.targets[i].workingDirectory, request.targets[i].client, request.targets[i].clientEnvironment,
            request.targets[i].profilePid };
    auto session = std::make_unique<AbSession>(design, targets, prepared->call, m_builtin->cliProgram());
    // Checked now, with the CLI's rules (a number of server starts above the rounds is refused, not cut), before
    // any server starts.
    ScenarioProblem problem;
    int side = -1;
    if (!session->check(&problem, &side)) {
        *error = (side < 0 ? QString() : side == 0 ? tr("A: ") : tr("B: ")) + m_scenario->describeProblem(problem);
        return false;
    }
    if (!m_ab->start(std::move(session), error))
        return false;
    Q_EMIT abStarted(request.threshold);
    m_scenario->setRunning(true);
    Q_EMIT statusMessage(m_ab->progressText(), 0);
    return true;
}

void RunLauncher::abProgressed()
{
    Q_EMIT stateChanged(tr("A/B"));
    Q_EMIT statusMessage(m_ab->progressText(), 0);
}

void RunLauncher::abEnded(const QString &error)
{
    m_scenario->setRunning(false);
    Q_EMIT stateChanged(tr("Idle"));
    const auto &records = m_ab->records();
    const bool measured = records[0].snapshot.callsCompleted() > 0 || records[1].snapshot.callsCompleted() > 0;
    Q_EMIT abFinished(measured, error);
    if (!error.isEmpty())
        Q_EMIT statusMessage(tr("A/B: %1").arg(error), 0);
}

} // namespace rpcscope
