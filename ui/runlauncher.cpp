#include "runlauncher.h"

#include "abcontroller.h"
#include "backgroundjob.h"
#include "builtinservers.h"
#include "commandserver.h"
#include "engine/singlecall.h"
#include "matrixpage.h"
#include "metrics/callstatus.h"
#include "report/callreport.h"
#include "report/rawsamples.h"
#include "runcontroller.h"
#include "runrecorder.h"
#include "store/environment.h"
#include "store/runrecord.h"
#include "store/runstore.h"
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
    , m_commandServer(new CommandServer(this))
    , m_ab(new AbController(recorder, this))
{
    connect(m_controller, &RunController::snapshotAvailable, this, &RunLauncher::snapshotAvailable);
    connect(m_controller, &RunController::snapshotAvailable, this, &RunLauncher::recordProgress);
    connect(m_controller, &RunController::runFinished, this, &RunLauncher::runFinished);
    connect(m_commandServer, &CommandServer::ready, this, &RunLauncher::commandServerReady);
    connect(m_commandServer, &CommandServer::failed, this, &RunLauncher::commandServerFailed);
    connect(m_ab, &AbController::progressed, this, &RunLauncher::abProgressed);
    connect(m_ab, &AbController::finished, this, &RunLauncher::abEnded);
    connect(m_matrix, &MatrixPage::cellDone, this, &RunLauncher::recordMatrixCell);
}

void RunLauncher::recordMatrixCell(const MatrixResult &result, const QString &matrixId)
{
    RunStore *store = m_recorder->store();
    if (!store)
        return;
    const MatrixCell &cell = result.cell;
    RunRecord run;
    run.name = cell.label() + (cell.payload.isEmpty() ? QString() : QLatin1Char(' ') + cell.payload)
        + QStringLiteral(" c=%1").arg(cell.concurrency);
    run.labels = { QStringLiteral("matrix:") + matrixId, QStringLiteral("stack:") + cell.label(),
        QStringLiteral("c:%1").arg(cell.concurrency) };
    if (!cell.payload.isEmpty())
        run.labels << QStringLiteral("payload:") + cell.payload;
    // The cell's scenario: the editor's, as the cell varied it.
    Scenario scenario = m_scenario->scenario();
    scenario.transport = transportName(cell.transport);
    scenario.codec = codecName(cell.codec);
    scenario.concurrency = cell.concurrency;
    for (const QString &fill : cell.payload.split(QLatin1Char(','), Qt::SkipEmptyParts))
        scenario.fills << fill.trimmed();
    if (cell.transport == TransportKind::InProcess)
        scenario.target.clear();
    else if (!cell.target.isEmpty())
        scenario.target = cell.target;
    else if (cell.ownServer)
        scenario.target = QStringLiteral("builtin");
    scenario.rpcMethod = cell.rpcMethod;
    scenario.httpPath = cell.httpPath;
    run.method = m_scenario->method();
    run.transport = scenario.transport;
    run.codec = scenario.codec;
    run.target = scenario.target;
    run.scenario = QJsonDocument::fromJson(scenario.toJson()).object();
    run.environment = environmentFingerprint();
    run.endedAt = QDateTime::currentDateTimeUtc();
    run.startedAt
        = run.endedAt.addMSecs(-std::chrono::duration_cast<std::chrono::milliseconds>(result.run.elapsed).count());
    run.status = QString::fromUtf16(result.run.state == RunState::Stopped ? RunStatus::Stopped : RunStatus::Finished);
    run.snapshot = result.run;
    QString error;
    if (const qint64 id = store->addRun(run, &error); id > 0)
        Q_EMIT m_recorder->runStored(id);
    else
        Q_EMIT statusMessage(tr("The stack comparison's cell %1 is not saved: %2").arg(run.name, error), 10000);
}

RunLauncher::~RunLauncher() = default;

void RunLauncher::sampleBuiltinServer(ScenarioPage::Prepared *prepared) const
{
    if (m_builtin->pid() && m_builtin->isTarget(prepared->target.address))
        prepared->plan.serverPid = m_builtin->pid(); // sampled for the server's CPU and RSS
}

std::optional<ScenarioPage::Prepared> RunLauncher::prepareVariation(
    const ScenarioPage::Variation &variation, QString *error)
{
    if (m_controller->isRunning()) {
        *error = tr("a single run is going; stop it first");
        return std::nullopt;
    }
    auto prepared = m_scenario->prepare(error, &variation);
    if (prepared)
        sampleBuiltinServer(&*prepared);
    return prepared;
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
    auto prepared = m_scenario->prepare(&error);
    if (prepared)
        sampleBuiltinServer(&*prepared);
    std::unique_ptr<OutputFile> rawFile;
    if (prepared && !prepared->rawSamplesPath.isEmpty()) {
        // Opened before the run, as the CLI does: an unwritable path is known before any load is sent.
        rawFile = std::make_unique<OutputFile>(prepared->rawSamplesPath);
        if (!rawFile->open()) {
            Q_EMIT statusMessage(tr("Cannot run: raw samples %1").arg(rawFile->error()), 10000);
            return;
        }
    }
    if (!prepared) {
        Q_EMIT statusMessage(tr("Cannot run: %1").arg(error), 10000);
        return;
    }
    if (prepared->serverCommand) {
        // The server comes first: started off the GUI thread; the run follows when it is ready.
        m_pendingRun = std::make_unique<ScenarioPage::Prepared>(*prepared);
        m_pendingRawFile = std::move(rawFile);
        m_scenario->setRunning(true);
        Q_EMIT stateChanged(tr("Starting"));
        Q_EMIT statusMessage(tr("Starting %1 ...").arg(prepared->serverCommand->command), 0);
        m_commandServer->start(*prepared->serverCommand, prepared->transport.kind);
        return;
    }
    launch(*prepared, std::move(rawFile));
}

void RunLauncher::commandServerReady(const QString &address)
{
    if (!m_pendingRun)
        return;
    std::unique_ptr<ScenarioPage::Prepared> prepared = std::move(m_pendingRun);
    prepared->target.address = address;
    prepared->plan.serverPid = m_commandServer->pid();
    if (m_pendingIsSend) {
        m_pendingIsSend = false;
        send(*prepared);
        return;
    }
    launch(*prepared, std::move(m_pendingRawFile));
}

void RunLauncher::commandServerFailed(const QString &error)
{
    if (m_pendingIsSend) {
        m_pendingIsSend = false;
        m_sending = false;
        m_scenario->showReply(tr("The server command did not start:\n%1").arg(error));
        Q_EMIT sentOnce();
    }
    m_pendingRun.reset();
    m_pendingRawFile.reset();
    m_scenario->setRunning(false);
    Q_EMIT stateChanged(tr("Idle"));
    Q_EMIT statusMessage(tr("The server command did not start"), 15000);
    Q_EMIT serverCommandFailed(error);
}

void RunLauncher::sendOnce()
{
    if (m_controller->isRunning() || m_sending || m_pendingRun || m_ab->isRunning())
        return;
    QString error;
    auto prepared = m_scenario->prepare(&error);
    if (!prepared) {
        Q_EMIT statusMessage(tr("Cannot send: %1").arg(error), 10000);
        return;
    }
    m_sending = true;
    if (prepared->serverCommand) {
        m_pendingRun = std::make_unique<ScenarioPage::Prepared>(*prepared);
        m_pendingIsSend = true;
        m_scenario->showReply(tr("Starting %1 ...").arg(prepared->serverCommand->command), true);
        m_commandServer->start(*prepared->serverCommand, prepared->transport.kind);
        return;
    }
    send(*prepared);
}

namespace {

/// What Send once's background job hands back.
struct SentCall {
    SingleCallResult result;
    QString error; ///< the transport could not be made
};

} // namespace

void RunLauncher::send(ScenarioPage::Prepared prepared)
{
    prepared.call.captureMetadata = true;
    CallDescription described;
    described.method = m_scenario->method();
    described.transport = transportName(prepared.transport.kind);
    described.codec = codecName(prepared.transport.codec.value_or(defaultCodec(prepared.transport.kind)));
    described.inProcess = prepared.transport.kind == TransportKind::InProcess;
    described.target = described.inProcess ? QString() : prepared.target.address;
    described.clientStreams = prepared.call.method && prepared.call.method->client_streaming();
    described.serverStreams = prepared.call.method && prepared.call.method->server_streaming();
    const bool ownServer = prepared.serverCommand.has_value();
    m_scenario->showReply(tr("Sending %1 ...").arg(described.method), true);
    Q_EMIT stateChanged(tr("Sending"));
    runInBackground(
        this,
        [prepared]() {
            SentCall sent;
            QString error;
            // Made and destroyed here: making a transport may resolve a name, and ending one joins its threads.
            std::unique_ptr<Transport> transport
                = makeTransport(prepared.transport, prepared.target, prepared.call, &error);
            if (!transport) {
                sent.error = error;
                return sent;
            }
            sent.result = ::rpcscope::sendOnce(*transport, sendOnceWait(prepared.target.timeout),
                prepared.plan.expectations, prepared.plan.expectedStatuses);
            return sent;
        },
        [this, described, ownServer](SentCall sent) {
            if (ownServer)
                m_commandServer->stop();
            m_sending = false;
            m_scenario->showReply(sent.error.isEmpty() ? formatSingleCall(described, sent.result)
                                                       : tr("Cannot send: %1").arg(sent.error));
            Q_EMIT stateChanged(tr("Idle"));
            Q_EMIT statusMessage(sent.error.isEmpty()
                    ? tr("Sent once: %1 in %2")
                          .arg(callStatusName(sent.result.status), formatDuration(sent.result.latency))
                    : tr("Cannot send: %1").arg(sent.error),
                10000);
            Q_EMIT sentOnce();
        });
}

void RunLauncher::launch(const ScenarioPage::Prepared &prepared, std::unique_ptr<OutputFile> rawFile)
{
    QString error;
    if (!m_controller->start(prepared.transport, prepared.target, prepared.call, prepared.plan, &error)) {
        Q_EMIT statusMessage(tr("Cannot run: %1").arg(error), 10000);
        m_scenario->setRunning(false);
        m_commandServer->stop();
        return;
    }
    m_rawSamplesFile = std::move(rawFile);
    // The run goes into the history from its first interval on (see RunRecorder).
    m_run = std::make_shared<RunRecord>();
    m_run->method = m_scenario->method();
    m_run->transport = transportName(prepared.transport.kind);
    m_run->codec = codecName(prepared.transport.codec.value_or(defaultCodec(prepared.transport.kind)));
    const bool builtinTarget = m_builtin->isTarget(prepared.target.address);
    m_run->target = builtinTarget ? QStringLiteral("builtin")
        : prepared.serverCommand  ? prepared.serverCommand->command
                                  : prepared.target.address;
    if (prepared.serverCommand)
        m_run->server = prepared.serverCommand->describe();
    m_run->scenario = QJsonDocument::fromJson(m_scenario->scenario().toJson()).object();
    m_run->environment = environmentFingerprint();
    if (builtinTarget && m_builtin->pid())
        m_run->server = QJsonObject { { QStringLiteral("command"), QStringLiteral("rpcscope-cli serve all") } };
    m_run->startedAt = QDateTime::currentDateTimeUtc();
    QString storeError;
    if (m_recorder->store() && !m_recorder->begin(m_run.get(), &storeError))
        Q_EMIT statusMessage(tr("The run is not saved: %1").arg(storeError), 10000);
    m_runChecks = prepared.checks;
    const QString description = prepared.transport.kind == TransportKind::InProcess
        ? tr("%1, no RPC (%2 codec only)").arg(m_scenario->method(), codecName(*prepared.transport.codec))
        : tr("%1 → %2 (%3/%4)")
              .arg(m_scenario->method(), prepared.target.address, transportName(prepared.transport.kind),
                  codecName(*prepared.transport.codec));
    if (prepared.transport.kind != TransportKind::InProcess && !builtinTarget)
        Q_EMIT remoteTargetUsed(prepared.transport.kind, prepared.target.address);
    m_scenario->setRunning(true);
    Q_EMIT runLaunched(m_run, description);
}

void RunLauncher::recordProgress(const RunSnapshot &snapshot)
{
    m_recorder->progress(m_run.get(), snapshot);
}

void RunLauncher::runFinished(const RunSnapshot &snapshot)
{
    Q_EMIT snapshotAvailable(snapshot);
    m_recorder->finish(m_run.get(), snapshot, m_controller->rawSamples());
    std::vector<CheckResult> checks;
    for (const Check &check : m_runChecks)
        checks.push_back(evaluateCheck(check, snapshot));
    Q_EMIT checksJudged(checks);
    m_commandServer->stop();
    m_scenario->setRunning(false);
    Q_EMIT statusMessage(tr("Run %1: %2 calls, %3 failed")
                             .arg(runStateName(snapshot.state))
                             .arg(snapshot.callsCompleted())
                             .arg(snapshot.callsFailed()),
        10000);
    writeRawSamples();
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
    if (m_controller->isRunning()) {
        // Kept as a stopped run, not left for the next start to find as interrupted.
        m_controller->stop();
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
    if (prepared->transport.kind == TransportKind::InProcess) {
        *error = tr("The no-RPC baseline calls no server: pick a transport to compare two servers.");
        return false;
    }
    if (prepared->plan.totalCalls == 0 && prepared->plan.duration.count() <= 0) {
        *error = tr("An A/B run needs an end: set a number of calls or a duration.");
        return false;
    }
    prepared->plan.serverPid = 0;
    std::array<AbSide, 2> sides { AbSide { prepared->transport, prepared->target, prepared->call, prepared->plan, {} },
        AbSide { prepared->transport, prepared->target, prepared->call, prepared->plan, {} } };
    std::array<RunRecord, 2> records;
    // The A/B design as run (the request's, whatever the document says), for a later look to judge it again.
    Scenario design = m_scenario->scenario();
    design.abBlock = request.block;
    design.abRestarts = request.restarts;
    design.abConnection = request.connectionPerBlock ? QStringLiteral("per-block") : QString();
    design.abThreshold = QStringLiteral("%1%").arg(request.threshold * 100);
    design.abUntilDecided = request.untilDecided;
    design.abMaxDuration = request.maxDuration;
    const QJsonObject scenario = QJsonDocument::fromJson(design.toJson()).object();
    // Each side named by what distinguishes it from the other, short enough for a legend.
    const std::array<QString, 2> names = abSideNames({ request.targetText(0), request.targets[0].environment },
        { request.targetText(1), request.targets[1].environment });
    for (int i = 0; i < 2; ++i) {
        RunRecord &r = records[static_cast<size_t>(i)];
        r.name = names[static_cast<size_t>(i)] + (i == 0 ? QStringLiteral(" (A)") : QStringLiteral(" (B)"));
        r.labels = { i == 0 ? QStringLiteral("A") : QStringLiteral("B") };
        r.method = m_scenario->method();
        r.transport = transportName(prepared->transport.kind);
        r.codec = codecName(prepared->transport.codec.value_or(defaultCodec(prepared->transport.kind)));
        r.target = request.targetText(i);
        r.scenario = scenario;
        r.environment = environmentFingerprint();
    }
    if (!m_ab->start(sides, request, m_builtin->cliProgram(), transportName(prepared->transport.kind), records, error))
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
