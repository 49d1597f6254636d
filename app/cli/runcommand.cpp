#include "runcommand.h"

#include "cliapp.h"
#include "comparecommand.h"
#include "renderedexport.h"
#include "runflags.h"
#include "runsetup.h"

#include "compare/checks.h"
#include "engine/loadengine.h"
#include "export/exporter.h"
#include "report/profilereport.h"
#include "report/rawsamples.h"
#include "report/textreport.h"
#include "scenario/confinement.h"
#include "scenario/runspec.h"
#include "server/servercommand.h"
#include "session/runsession.h"
#include "store/environment.h"
#include "store/runstore.h"
#include "store/secrets.h"
#include "transport/transports.h"
#include "util/cpuset.h"
#include "util/wallclock.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QGuiApplication>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSysInfo>

#include <algorithm>

namespace rpcscope::cli {

std::optional<Scenario> scenarioFromArguments(
    const QString &cmd, const QStringList &arguments, int *code, bool callerSetsTarget)
{
    *code = ExitUsage;
    QCommandLineParser parser;
    addRunOptions(parser);
    if (!parser.parse(arguments)) {
        usageError(cmd, parser.errorText());
        return std::nullopt;
    }
    if (printCommandHelp(parser, cmd)) {
        *code = ExitOk;
        return std::nullopt;
    }
    const bool userTarget = parser.positionalArguments().size() > 1 || parser.isSet(QStringLiteral("builtin"));
    Scenario base;
    base.target.clear(); // a document's default is the built-in server; the command line names its target
    if (parser.isSet(QStringLiteral("scenario"))) {
        const QString path = parser.value(QStringLiteral("scenario"));
        QString why;
        const std::optional<Scenario> document = Scenario::load(path, &why);
        if (!document) {
            usageError(cmd, QStringLiteral("--scenario ") + why);
            return std::nullopt;
        }
        // A document can start a program: only with the user's say-so (the file may come from anywhere).
        if (!userTarget && !callerSetsTarget && looksLikeCommand(document->target)
            && !parser.isSet(QStringLiteral("trust"))) {
            usageError(cmd,
                QStringLiteral("--scenario %1 starts a server command: %2\nRun it with --trust if you "
                               "trust that file, or give the target on the command line.")
                    .arg(path, document->target));
            return std::nullopt;
        }
        // Nor may it read or write files outside its folder, or overwrite one, unless the user says so.
        if (!parser.isSet(QStringLiteral("trust"))) {
            QStringList refused;
            for (const ScenarioProblem &problem : confinementProblems(*document, path)) {
                if (flagReplaces(parser, problem.field))
                    continue;
                const QString flag = flagFor(problem.field);
                refused << QStringLiteral("  ") + problem.text()
                        + (flag.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(flag));
            }
            if (!refused.isEmpty()) {
                usageError(cmd,
                    QStringLiteral("--scenario %1 names files it may not use on its own:\n%2\nRun it with --trust if "
                                   "you trust that file, or give these paths on the command line.")
                        .arg(path, refused.join(u'\n')));
                return std::nullopt;
            }
        }
        base = *document;
        if (callerSetsTarget)
            base.target.clear(); // ab and matrix set the targets; a document's is never started by them
        else if (base.target.isEmpty())
            base.target = QStringLiteral("builtin");
    }
    QString error;
    std::optional<Scenario> scenario = scenarioFromFlags(parser, base, &error);
    if (!scenario) {
        usageError(cmd, error);
        return std::nullopt;
    }
    if (scenario->target.isEmpty() && scenario->transport != u"none" && !callerSetsTarget) {
        usageError(cmd,
            QStringLiteral("no target: give %1 or --builtin")
                .arg(scenario->transport == u"http" ? QStringLiteral("a URL") : QStringLiteral("HOST:PORT")));
        return std::nullopt;
    }
    *code = ExitOk;
    return scenario;
}

namespace {

/**
 * Saves a run that has ended, whole: recorded first if it could not be as it started (@p begun false), up to three
 * tries while the history is busy or locked (each waits the busy timeout). False with @p error when it is not saved.
 */
bool saveFinishedRun(RunStore &store, RunRecord *record, bool begun, const RunSnapshot &result,
    const std::vector<RawSample> &rawSamples, const QString &status, QString *error)
{
    for (int attempt = 0; attempt < 3; ++attempt) {
        if (!begun)
            begun = store.beginRun(record, error);
        if (begun && store.finishRun(record->id, result, rawSamples, status, error)
            && store.saveProfiles(*record, error))
            return true;
        if (!error->contains(QStringLiteral("locked")) && !error->contains(QStringLiteral("busy")))
            return false;
    }
    return false;
}

/// The chart an output draws unless it names its own (--chart), and how (--chart-size, --chart-scale).
struct Charts {
    ChartKind kind = ChartKind::Histogram;
    ChartOptions options;
};

/**
 * The run's outputs (-O/-o, --chart) checked before any server starts or load is sent, so a typo costs no run: false
 * with @p why, worded with the flags.
 */
bool checkOutputs(const RunSpec &spec, const Scenario &scenario, Charts *charts, QString *why)
{
    for (const RunSpec::Output &output : spec.exports) {
        if (isSlideFormat(output.format)) {
            *why = QStringLiteral("-O %1 compares two runs: save this one and write the slide with 'export BASELINE "
                                  "CANDIDATE -O %1 -o FILE'")
                       .arg(exportFormatName(output.format));
            return false;
        }
        if (isRenderedFormat(output.format) && !qobject_cast<QGuiApplication *>(QCoreApplication::instance())) {
            *why = QStringLiteral("-O %1: give it as -O %1 (this process has no offscreen drawing)")
                       .arg(exportFormatName(output.format));
            return false;
        }
        if (QString problem; output.file != u"-" && !checkOutputPath(output.file, &problem)) {
            *why = QStringLiteral("-o ") + problem;
            return false;
        }
        if (!output.chart.isEmpty() && (!isRenderedFormat(output.format) || !parseChartKind(output.chart))) {
            *why = QStringLiteral("--chart \"%1\" for -o %2: %3")
                       .arg(output.chart, output.file,
                           isRenderedFormat(output.format)
                               ? QStringLiteral("not histogram, spectrum, timeline, throughput or message-histogram")
                               : QStringLiteral("only png, pdf and svg outputs draw a chart"));
            return false;
        }
    }
    const std::optional<ChartKind> chart
        = parseChartKind(scenario.chart.isEmpty() ? QStringLiteral("histogram") : scenario.chart);
    if (!chart) {
        *why = QStringLiteral("--chart: \"%1\" is not histogram, spectrum, timeline or throughput").arg(scenario.chart);
        return false;
    }
    charts->kind = *chart;
    return parseChartOptions(scenario.chartSize, scenario.chartScale, &charts->options, why);
}

/// Writes the run's outputs (-O/-o: a file, or - for stdout); false with @p why, worded with the flags.
bool writeOutputs(const RunSpec &spec, const RunRecord &record, const Charts &charts, QString *why)
{
    QString error;
    for (const RunSpec::Output &output : spec.exports) {
        const QByteArray data = isRenderedFormat(output.format)
            ? renderExport({ record }, output.format,
                output.chart.isEmpty() ? charts.kind : *parseChartKind(output.chart), charts.options, &error)
            : exportRun(record, output.format, &error);
        if (data.isEmpty() && !error.isEmpty()) {
            *why = QStringLiteral("-O ") + exportFormatName(output.format) + QStringLiteral(": ") + error;
            return false;
        }
        if (output.file == u"-") {
            out() << QString::fromUtf8(data);
            out().flush();
        } else if (!writeOutputFile(output.file, data, &error)) {
            *why = QStringLiteral("-o ") + error;
            return false;
        }
    }
    return true;
}

/// When a split run's timed phase starts (--start-at), said just before the engine waits for it.
void announceStartAt(std::chrono::system_clock::time_point startAt, const QString &given)
{
    const double seconds = std::chrono::duration<double>(startAt - std::chrono::system_clock::now()).count();
    if (seconds > 0)
        err() << "Timed phase starts at " << given.trimmed() << " (in " << QString::number(seconds, 'f', 1) << " s)\n";
    else
        err() << "warning: --start-at was " << QString::number(-seconds, 'f', 1)
              << " s ago; the timed phase starts now, late for the other workers\n";
    err().flush();
}

/// This process pinned to CPUs for a run (--client-cpus), and unpinned on the way out: matrix runs its cells in
/// this process, and the next cell's server must not inherit this cell's pinning.
struct ClientPinning {
    std::vector<int> restore;
    bool failed = false;
    ClientPinning() = default;
    ClientPinning(const ClientPinning &) = delete;
    ClientPinning &operator=(const ClientPinning &) = delete;
    ~ClientPinning()
    {
        if (!restore.empty())
            pinCurrentProcess(restore, nullptr);
    }
    /// Pins to @p cpus (none: nothing to do); false with @p why.
    bool pin(const std::vector<int> &cpus, QString *why)
    {
        if (cpus.empty())
            return true;
        restore = availableCpus();
        failed = !pinCurrentProcess(cpus, why);
        return !failed;
    }
};

/**
 * The run in the history while it runs: inserted when its load starts, its figures updated every interval, saved
 * whole when it ends. The history is where the run is kept, not a condition of measuring it: whatever happens to it
 * (a lock held by another process, a damaged table), the run goes on and what could not be saved is said. Null
 * @p store: the run is not saved.
 */
class LiveHistory {
public:
    explicit LiveHistory(RunStore *store) : m_store(store) { }
    void begin(RunRecord *record)
    {
        QString error;
        if (!m_store)
            return;
        m_begun = m_store->beginRun(record, &error);
        if (!m_begun)
            err() << "warning: --db " << m_store->path() << ": the history cannot record this run as it runs (" << error
                  << "); it is tried again when the run ends\n";
    }
    void interval(const RunRecord &record, const RunSnapshot &snapshot)
    {
        QString error;
        if (m_begun && !m_intervalsFailed && !m_store->updateRun(record.id, snapshot, &error)) {
            m_intervalsFailed = true; // said once, not every interval
            err() << "warning: --db " << m_store->path() << ": " << error
                  << " (the run goes on; it is saved whole when it ends)\n";
        }
    }
    /// Takes the run out of the history again (it failed: nothing it measured is kept).
    void discard(const RunRecord &record)
    {
        QString error;
        if (m_begun && !m_store->remove(record.id, &error))
            err() << "warning: --db " << m_store->path() << ": the failed run #" << record.id
                  << " could not be taken out of the history (" << error << ")\n";
        m_begun = false;
    }
    /// Saves the ended run (RunSession::completeRecord()'s: its figures, status and raw samples); empty, or why it is
    /// not in the history.
    QString finish(RunRecord *record)
    {
        if (!m_store)
            return {};
        QString notSaved;
        if (saveFinishedRun(*m_store, record, m_begun, record->snapshot, record->rawSamples, record->status, &notSaved))
            err() << "Saved as run #" << record->id << " in " << m_store->path() << '\n';
        return notSaved;
    }

private:
    RunStore *m_store;
    bool m_begun = false;
    bool m_intervalsFailed = false;
};

/// The scenario's checks judged on @p result and printed; true when all passed (or there are none).
bool printChecks(const std::vector<Check> &checks, const RunSnapshot &result)
{
    if (checks.empty())
        return true;
    bool passed = true;
    std::vector<CheckResult> results;
    for (const Check &check : checks) {
        results.push_back(evaluateCheck(check, result));
        passed = passed && results.back().passed;
    }
    out() << '\n' << formatCheckResults(results);
    out().flush();
    return passed;
}

} // namespace

int runScenario(const QString &cmd, const Scenario &scenario, RunOutcome *outcome)
{
    ScenarioProblem problem;
    std::optional<RunSpec> prepared = prepareRun(scenario, &problem);
    if (!prepared)
        return usageError(cmd, describeForCli(problem, scenario));
    RunSpec &spec = *prepared;

    // Outputs: checked before any server starts or load is sent, so a typo costs no run.
    Charts charts;
    if (QString why; !checkOutputs(spec, scenario, &charts, &why))
        return usageError(cmd, why);
    // Opened before the run, so an unwritable path is known before any load is sent. Committed whole at the end.
    OutputFile rawFile(spec.rawSamplesPath);
    if (!spec.rawSamplesPath.isEmpty() && !rawFile.open())
        return usageError(cmd, QStringLiteral("--raw-samples ") + rawFile.error());
    // Opened before any load is sent, so a bad --db is a usage error, not a lost run.
    QString error;
    const bool save = (!outcome || outcome->save) && spec.save;
    RunStore store;
    const QString storePath = spec.db.isEmpty() ? RunStore::chosenPath() : spec.db;
    if (save && !store.open(storePath, &error))
        return usageError(cmd, QStringLiteral("--db ") + error);
    // The baseline is read before the run (a typo costs no load), and before this run is saved: "last" is the
    // newest run so far, not this one.
    std::optional<RunRecord> baseline;
    if (!spec.compareTo.isEmpty()) {
        baseline = loadRun(store, storePath, spec.compareTo, &error);
        if (!baseline)
            return usageError(cmd, QStringLiteral("--compare-to ") + error);
    }

    RunSession session(scenario, spec, std::nullopt, QCoreApplication::applicationFilePath());
    if (const int code = prepareSession(cmd, &session); code != ExitOk)
        return code;
    if (!outcome)
        printMachineNoiseWarnings();
    // Pinned after the servers started (a child inherits its parent's mask) and before the engine's threads start (a
    // thread inherits its creator's): the threads running already (gRPC's, the server output reader) are pinned
    // one by one.
    ClientPinning pinning;
    session.setBeforeLoadHook([&](QString *why) {
        if (!pinning.pin(spec.clientCpus, why))
            return false;
        if (spec.plan.startAt)
            announceStartAt(*spec.plan.startAt, scenario.startAt);
        return true;
    });
    if (!session.startLoad(&error)) {
        if (!pinning.failed)
            return usageError(cmd, error);
        err() << "rpcscope-cli " << cmd << ": --client-cpus: " << error << '\n';
        return ExitRuntime;
    }
    LoadRun &engine = session.load();
    RunRecord record = session.record();
    LiveHistory history(save ? &store : nullptr);
    history.begin(&record);
    // Saved every interval while it runs, so a crash or kill leaves all but the last interval.
    waitForEngine(engine,
        save ? std::chrono::duration_cast<std::chrono::milliseconds>(
            std::max<std::chrono::nanoseconds>(spec.plan.interval, std::chrono::milliseconds(100)))
             : std::chrono::hours(24 * 365),
        [&] { history.interval(record, engine.snapshot()); });
    const RunSnapshot result = engine.snapshot();
    if (const QString failure = engine.failure(); !failure.isEmpty()) {
        // A client command that failed mid-run: what it reported is not a measurement of the plan (nor kept as one).
        history.discard(record);
        err() << "rpcscope-cli " << cmd << ": " << failure << "\nNothing was saved or written: the run ended after "
              << result.callsSent << " timed calls, when the client command failed.\n";
        return ExitRuntime;
    }
    session.completeRecord(&record, result);
    const QString notSaved = history.finish(&record);
    if (outcome) {
        outcome->savedId = save && notSaved.isEmpty() ? record.id : 0;
        outcome->snapshot = result;
        outcome->transport = record.transport;
        outcome->codec = record.codec;
        outcome->serverProfile = record.serverProfile;
        outcome->clientProfile = record.clientProfile;
    } else {
        out() << "Transport: " << record.transport << ", codec " << record.codec
              << (session.spec().target.address.isEmpty() ? QString()
                                                          : QStringLiteral(", target ") + session.spec().target.address)
              << '\n';
        out() << formatTextSummary(result);
        for (const std::optional<Profile> &profile : { record.serverProfile, record.clientProfile })
            if (profile)
                out() << '\n' << formatProfileSummary(*profile);
        out().flush();
    }
    for (const QString &note : session.profileNotes())
        if (!record.serverProfile && !record.clientProfile)
            err() << "rpcscope-cli " << cmd << ": " << note << '\n';
    if (!spec.rawSamplesPath.isEmpty()) {
        // The record holds them: a raw-samples file makes the plan record them.
        if (!writeRawSamplesCsv(*rawFile.device(), record.rawSamples) || !rawFile.commit()) {
            err() << "rpcscope-cli " << cmd << ": --raw-samples "
                  << (rawFile.error().isEmpty()
                             ? rawFile.path() + QStringLiteral(": ") + rawFile.device()->errorString()
                             : rawFile.error())
                  << '\n';
            return ExitRuntime;
        }
    }
    if (QString why; !writeOutputs(spec, record, charts, &why)) {
        err() << "rpcscope-cli " << cmd << ": " << why << '\n';
        return ExitRuntime;
    }
    Verdict verdict = Verdict::NotTested;
    if (baseline) {
        out() << "\nCompared with the baseline " << spec.compareTo
              << (baseline->id > 0 ? QStringLiteral(" (run #%1)").arg(baseline->id) : QString()) << ":\n";
        CompareOptions compareOptions;
        compareOptions.threshold = spec.compareThreshold;
        verdict = printComparison(*baseline, record, compareOptions, false).overall;
    }
    const bool checksPassed = printChecks(spec.checks, result);
    if (!notSaved.isEmpty()) {
        err() << "rpcscope-cli " << cmd << ": --db " << store.path() << ": " << notSaved
              << "\nThis run was measured, printed and exported above, but it is not in the history.\n";
        return ExitRuntime;
    }
    if (spec.failOnError && result.callsFailed() > 0)
        return ExitFailedCalls;
    return verdict == Verdict::Regression || !checksPassed ? ExitRegression : ExitOk;
}

bool refuseSingleRunOutputs(const QString &cmd, const QStringList &arguments, Scenario *scenario)
{
    auto given = [&arguments](const QStringList &flags) {
        return std::any_of(arguments.begin(), arguments.end(), [&flags](const QString &a) {
            return std::any_of(flags.begin(), flags.end(),
                [&a](const QString &f) { return a == f || a.startsWith(f + QLatin1Char('=')); });
        });
    };
    QString refused;
    if (given({ QStringLiteral("-O"), QStringLiteral("--output-format"), QStringLiteral("-o"),
            QStringLiteral("--output") }))
        refused = QStringLiteral("-O/-o are for run; %1 prints its own report").arg(cmd);
    else if (given({ QStringLiteral("--compare-to"), QStringLiteral("--compare-threshold") }))
        refused = QStringLiteral("--compare-to is for run (%1 compares in its own way)").arg(cmd);
    else if (given({ QStringLiteral("--check") }))
        refused = QStringLiteral("--check is for run");
    if (!refused.isEmpty()) {
        usageError(cmd, refused);
        return true;
    }
    scenario->exports.clear();
    scenario->compareTo.clear();
    scenario->compareThreshold.clear();
    scenario->checks.clear();
    return false;
}

int runCommand(const QStringList &arguments)
{
    int code = ExitOk;
    const std::optional<Scenario> scenario = scenarioFromArguments(QStringLiteral("run"), arguments, &code);
    if (!scenario)
        return code;
    return runScenario(QStringLiteral("run"), *scenario);
}

} // namespace rpcscope::cli
