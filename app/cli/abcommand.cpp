#include "abcommand.h"

#include "cliapp.h"
#include "compare/sequentialab.h"
#include "comparecommand.h"
#include "engine/abrunner.h"
#include "net/reachability.h"
#include "runcommand.h"
#include "runflags.h"
#include "scenario/abdesign.h"
#include "scenario/runspec.h"
#include "scenario/scenario.h"
#include "server/serverlaunch.h"
#include "store/environment.h"
#include "store/runstore.h"
#include "store/secrets.h"
#include "util/cpuset.h"
#include "util/units.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <cmath>
#include <functional>

namespace rpcscope::cli {

namespace {

const char *const kAbHelp = R"HELP(Usage: rpcscope-cli ab --a TARGET --b TARGET [AB OPTIONS] [RUN OPTIONS]

Runs one scenario against two targets, alternating blocks of calls between them in rounds (A B, B A, B A,
A B, ... or the same from B, a coin flip: each side first in half the rounds) so that whatever drifts on the
machine meanwhile, and going first, hits both alike, saves both runs in the history and prints the comparison
of B against A with its verdict (as 'compare' does).

A target is one of:
  builtin              the built-in server for the transport (started as a child process)
  HOST:PORT or URL     a server that is already running
  a command            any command line holding a space or {port}; rpcscope starts it with {port} replaced by
                       a free port, waits until it is ready, samples its CPU and memory, and stops it at the end
                       (SIGTERM, then SIGKILL). Its output is shown when it fails to start.

AB options:
  --a TARGET, --b TARGET     the two targets (required)
  --a-env NAME=VALUE         environment variable for command A (repeatable); --b-env likewise
  --a-dir DIR, --b-dir DIR   working directory of a command
  --ready REGEX              a command is ready when an output line matches (default: when its port accepts
                             connections)
  --ready-timeout DURATION   how long a command may take to get ready (default 10s)
  --block N|DURATION         calls (or time) per block (default: a tenth of -n, at least 4 per caller; or a
                             tenth of -z, at least 1s)
  --restarts K               start each command's server K times over the run (A1 B1 B2 A2 ..., fresh processes,
                             each side's blocks split evenly), so that what differs from one server process to
                             the next (CPU placement, memory layout) is counted, not mistaken for A vs B
                             (default: 5 for commands and builtin, at most one per round; no effect on addresses)
  --server-cpus LIST, --client-cpus LIST
                             pin the server commands (every start) and this client to CPUs, e.g. 1 and 0
  --connection kept|per-block
                             keep one connection per side and server process across its blocks (default), or
                             dial anew for every block
  --threshold T              smallest change that counts as a regression (default 5%)
  --until-decided            judge the p50 after every pair of blocks (A_i, B_i) with an anytime-valid 95%
                             confidence sequence (docs/sequential.md) and stop as soon as it decides: a
                             regression or an improvement beyond the threshold, or no change beyond it; else
                             the run ends at -n/-z and says it did not decide. Its verdict sets the exit code.
                             Blocks default to a fortieth of the run (at least 20 calls and 4 per caller, or
                             250 ms); with server commands, one process a side (--restarts 1): the verdict is
                             about those two processes. Where the scheduler places them can decide it (A/A
                             runs unpinned on 2 cores: 15% decided), so when ab starts both servers and no
                             --client-cpus/--server-cpus is given, it pins this client to the first CPU it may
                             use and the servers to the others (give both flags to choose, e.g. the same list
                             twice for none)
  --max-duration DURATION    end the run after this long, whatever -n or -z plan (the block running then ends
                             early and is kept); with --until-decided the verdict says which ended it
  --format text|markdown     of the comparison
  --db PATH, --label TEXT, --name NAME
                             where and how both runs are saved (labels go on both; each also gets "A" or "B")
  --no-save                  do not save the runs
  --trust                    accepted as run accepts it; ab never starts a --scenario file's server command (its
                             targets are --a and --b, given here)
RUN OPTIONS are run's: --call, --proto, --protoset, --transport, --codec, -d, -D, --fill, -n, -z, -c, --rps,
--warmup, --timeout, -m, ... or --scenario FILE (see 'rpcscope-cli run --help'); not --builtin or a target. A
scenario's "ab" section (block, restarts, connection, threshold, until_decided, max_duration) sets the AB options
not given here.

The verdict is judged on the blocks (or, with restarts, on the server processes) as replicates, not on the calls:
calls inside one block share a connection, a server process and a moment of the machine, and do not vary
independently (see docs/statistics.md).

Exit codes: 0 no regression; 4 B regressed beyond the threshold; 2 bad usage or input; 3 the work could not be
done: a server did not start, a side's address cannot be reached (its name does not resolve, nothing accepts).
)HELP";

struct Side {
    QString name; ///< "A" or "B"
    QString spec; ///< as given
    bool builtin = false;
    bool command = false;
    ServerCommand server;
    ServerLaunch running;
    QString address;
    Scenario scenario; ///< the run's scenario with this side's target
    RunSpec run; ///< prepared from it; the address filled in once the server runs
    std::optional<GrpcCall> call;
    RunSnapshot total;
    std::vector<RawSample> raw;
    RunRecord record;
    std::function<bool(QString *, int64_t *, QString *)> restart; ///< set when its server is restarted
};

/// A problem with the A/B design in this command line's words: the flag when one was given, else the document's field.
QString abProblemText(const ScenarioProblem &problem, const QStringList &givenFlags, const Scenario &scenario)
{
    static const std::pair<const char16_t *, const char16_t *> kFlags[] { { u"ab.block", u"--block" },
        { u"ab.restarts", u"--restarts" }, { u"ab.connection", u"--connection" }, { u"ab.threshold", u"--threshold" },
        { u"ab.until_decided", u"--until-decided" }, { u"ab.max_duration", u"--max-duration" } };
    for (const auto &[field, flag] : kFlags) {
        if (problem.field != QStringView(field))
            continue;
        const QString given = QString::fromUtf16(flag);
        // Other fields the message names are worded as their flags ("load.calls" as -n).
        const QString message = describeForCli(ScenarioProblem { QString(), problem.message }, scenario);
        return (givenFlags.contains(given) ? given : QString::fromUtf16(field)) + QStringLiteral(": ") + message;
    }
    return describeForCli(problem, scenario);
}

} // namespace

int abCommand(const QStringList &arguments)
{
    const QString cmd = QStringLiteral("ab");
    Side sides[2];
    sides[0].name = QStringLiteral("A");
    sides[1].name = QStringLiteral("B");
    QStringList runArgs { arguments.value(0), QStringLiteral("run") };
    QString ready;
    QString readyTimeout = QStringLiteral("10s");
    QString block;
    QString restartsText;
    QString connection; // these four: the flag, else the scenario's "ab" section, else the default
    QString threshold;
    QString maxDurationText;
    QString format = QStringLiteral("text");
    QString db;
    QString name;
    QStringList labels;
    bool save = true;
    bool untilDecided = false;
    for (qsizetype i = 2; i < arguments.size(); ++i) {
        QString a = arguments.at(i);
        QString inlineValue;
        bool hasInline = false;
        if (a.startsWith(QStringLiteral("--")) && a.contains(u'=')) {
            inlineValue = a.section(u'=', 1);
            a = a.section(u'=', 0, 0);
            hasInline = true;
        }
        auto value = [&](QString *into) {
            if (hasInline) {
                *into = inlineValue;
                return true;
            }
            if (i + 1 >= arguments.size())
                return false;
            *into = arguments.at(++i);
            return true;
        };
        QString v;
        if (a == u"--help" || a == u"-h" || a == u"--help-all") {
            out() << kAbHelp;
            return ExitOk;
        }
        const bool isA = a.startsWith(QStringLiteral("--a")), isB = a.startsWith(QStringLiteral("--b-")) || a == u"--b";
        Side *side = isA ? &sides[0] : isB ? &sides[1] : nullptr;
        const QString key = side ? a.mid(3) : a; // "", "-env", "-dir"
        if (side && (key.isEmpty() || key == u"-env" || key == u"-dir")) {
            if (!value(&v))
                return usageError(cmd, a + QStringLiteral(" needs a value"));
            if (key.isEmpty()) {
                side->spec = v;
            } else if (key == u"-env") {
                const qsizetype eq = v.indexOf(u'=');
                if (eq <= 0)
                    return usageError(cmd, QStringLiteral("%1: expected NAME=VALUE, got \"%2\"").arg(a, v));
                side->server.environment.append({ v.left(eq), v.mid(eq + 1) });
            } else {
                side->server.workingDirectory = v;
            }
            continue;
        }
        if (a == u"--ready" || a == u"--ready-timeout" || a == u"--block" || a == u"--threshold" || a == u"--format"
            || a == u"--db" || a == u"--name" || a == u"--label" || a == u"--restarts" || a == u"--connection"
            || a == u"--max-duration") {
            if (!value(&v))
                return usageError(cmd, a + QStringLiteral(" needs a value"));
            if (a == u"--ready")
                ready = v;
            else if (a == u"--ready-timeout")
                readyTimeout = v;
            else if (a == u"--block")
                block = v;
            else if (a == u"--restarts")
                restartsText = v;
            else if (a == u"--connection")
                connection = v;
            else if (a == u"--threshold")
                threshold = v;
            else if (a == u"--max-duration")
                maxDurationText = v;
            else if (a == u"--format")
                format = v;
            else if (a == u"--db")
                db = v;
            else if (a == u"--name")
                name = v;
            else
                labels << v;
            continue;
        }
        if (a == u"--no-save") {
            save = false;
            continue;
        }
        if (a == u"--until-decided") {
            untilDecided = true;
            continue;
        }
        if (a == u"--trust")
            continue; // commands come from this command line; a scenario's own server commands are not run by ab
        runArgs << arguments.at(i);
    }
    for (const Side &side : sides) {
        if (side.spec.isEmpty())
            return usageError(cmd, QStringLiteral("--a and --b are required (builtin, HOST:PORT, a URL or a command)"));
    }
    QString error;
    int code = ExitOk;
    const std::optional<Scenario> scenario = scenarioFromArguments(cmd, runArgs, &code, true);
    if (!scenario)
        return code;
    // The A/B design: a flag given here, else the --scenario document's "ab" section, else the default. Checked with
    // prepareAb() once the sides' plans are known, before any server starts.
    Scenario withDesign = *scenario;
    if (!threshold.isEmpty())
        withDesign.abThreshold = threshold;
    if (!connection.isEmpty())
        withDesign.abConnection = connection;
    if (!block.isEmpty())
        withDesign.abBlock = block;
    if (!maxDurationText.isEmpty())
        withDesign.abMaxDuration = maxDurationText;
    withDesign.abUntilDecided = withDesign.abUntilDecided || untilDecided;
    untilDecided = withDesign.abUntilDecided;
    if (!restartsText.isEmpty()) {
        bool isNumber = false;
        withDesign.abRestarts = restartsText.toInt(&isNumber);
        if (!isNumber || withDesign.abRestarts < 1 || withDesign.abRestarts > 1000)
            return usageError(cmd,
                QStringLiteral("--restarts: expected a number of server starts from 1 to 1000, got \"%1\"")
                    .arg(restartsText));
    }
    if (format != u"text" && format != u"markdown")
        return usageError(cmd, QStringLiteral("--format: \"%1\" is not text or markdown").arg(format));
    QStringList givenFlags;
    for (const auto &[flag, value] :
        { std::pair(QStringLiteral("--block"), block), std::pair(QStringLiteral("--restarts"), restartsText),
            std::pair(QStringLiteral("--connection"), connection), std::pair(QStringLiteral("--threshold"), threshold),
            std::pair(QStringLiteral("--max-duration"), maxDurationText) }) {
        if (!value.isEmpty())
            givenFlags << flag;
    }
    if (untilDecided)
        givenFlags << QStringLiteral("--until-decided");
    const auto timeout = parseDuration(readyTimeout, &error);
    if (!timeout)
        return usageError(cmd, QStringLiteral("--ready-timeout: ") + error);

    if (!scenario->target.isEmpty())
        return usageError(cmd,
            scenario->target == u"builtin"
                ? QStringLiteral("--builtin: say --a builtin or --b builtin instead")
                : QStringLiteral("give the targets as --a and --b, not \"%1\"").arg(scenario->target));
    // A single run's outputs are refused on this command line; a document's are left out (ab reports its own way).
    Scenario design = withDesign;
    if (refuseSingleRunOutputs(cmd, runArgs, &design))
        return ExitUsage;
    const QString transport = scenario->transport;
    if (transport == u"none")
        return usageError(cmd, QStringLiteral("--transport none calls no server: there is nothing to compare A/B"));

    // Each side is the scenario with its own target, checked before any server starts.
    for (Side &side : sides) {
        side.builtin = side.spec == u"builtin";
        side.command = side.builtin || looksLikeCommand(side.spec);
        side.scenario = design;
        side.scenario.target = side.spec;
        side.scenario.readyPattern = side.command && !side.builtin ? ready : QString();
        side.scenario.readyTimeout = side.command && !side.builtin ? readyTimeout : QString();
        if (!side.command)
            side.scenario.serverCpus.clear(); // pins the servers ab starts; an address runs where it runs
        ScenarioProblem problem;
        std::optional<RunSpec> spec = prepareRun(side.scenario, &problem);
        if (!spec) {
            if (problem.field == u"target")
                return usageError(cmd, QStringLiteral("--%1: ").arg(side.name.toLower()) + problem.message);
            if (problem.field.startsWith(QStringLiteral("server_command.")))
                return usageError(
                    cmd, QStringLiteral("--%1: ").arg(problem.field.mid(15).replace(u'_', u'-')) + problem.message);
            return usageError(cmd, abProblemText(problem, givenFlags, side.scenario));
        }
        side.run = std::move(*spec);
    }
    std::vector<int> clientCpus = sides[0].run.clientCpus;
    std::vector<int> serverCpus;
    if (!scenario->serverCpus.isEmpty()) {
        const std::optional<std::vector<int>> cpus = parseCpuList(scenario->serverCpus, &error);
        if (!cpus)
            return usageError(cmd, QStringLiteral("--server-cpus: ") + error);
        serverCpus = *cpus;
    }
    // Judged pair by pair, a side is one server process, and the verdict is about those two processes: unpinned,
    // where the scheduler put the client and each server decided 6 and 7 of 40 A/A runs (one server command against
    // itself, grpc and h2grpc, 2 cores, 4 Dec 2026); pinned apart, none of 40. So when ab starts both servers and
    // nothing is pinned, it pins them apart itself.
    if (untilDecided && clientCpus.empty() && serverCpus.empty() && sides[0].command && sides[1].command) {
        if (const std::optional<ClientServerCpus> apart = clientApartFromServers()) {
            clientCpus = apart->client;
            serverCpus = apart->servers;
            err() << "--until-decided: this client pinned to CPU " << formatCpuList(clientCpus)
                  << " and the servers to " << formatCpuList(serverCpus)
                  << " (the verdict is about one server process a side, and where the scheduler puts them can "
                     "decide it; --client-cpus and --server-cpus choose)\n";
        }
    }
    // The design, typed by core as the window's Compare A/B types it.
    ScenarioProblem designProblem;
    const AbServers servers { sides[0].command || sides[1].command, sides[0].command && sides[1].command,
        !clientCpus.empty() };
    std::optional<AbBlocks> designed = prepareAb(design, sides[0].run.plan, servers, &designProblem);
    if (!designed)
        return usageError(cmd, abProblemText(designProblem, givenFlags, design));
    AbBlocks &blocks = *designed;
    const int rounds = blocks.roundsFor(sides[0].run.plan);
    // Targets: commands and built-in servers are started first, so the schema can come from their reflection. The
    // side that goes first in round 1 (a coin flip) starts first, as it restarts first in the rounds where it goes
    // first: which server starts first shows in the timings (docs/statistics.md).
    const int firstSide = AbBlocks::coinFlip();
    for (const int index : { firstSide, 1 - firstSide }) {
        Side &side = sides[index];
        side.builtin = side.spec == u"builtin";
        side.command = side.builtin || looksLikeCommand(side.spec);
        if (!side.command) {
            if (!side.server.environment.isEmpty() || !side.server.workingDirectory.isEmpty())
                return usageError(cmd,
                    QStringLiteral("--%1-env/--%1-dir are for commands; \"%2\" is an address")
                        .arg(side.name.toLower(), side.spec));
            side.address = side.spec;
            if (QString why; !probeReachable(side.address, probeTimeoutFor(side.run.target.timeout), &why)) {
                err() << "rpcscope-cli ab: cannot reach " << side.name << ": " << why << '\n';
                return ExitRuntime;
            }
            continue;
        }
        if (side.builtin) {
            const ServerCommand serve
                = builtinServeCommand(QCoreApplication::applicationFilePath(), side.run.transport.kind);
            side.server.command = serve.command;
            side.server.readyPattern = serve.readyPattern;
        } else {
            side.server.command = side.spec;
            side.server.readyPattern = ready;
        }
        side.server.readyTimeout = std::chrono::duration_cast<std::chrono::milliseconds>(*timeout);
        side.server.cpus = serverCpus;
        if (!side.server.check(&error))
            return usageError(cmd, QStringLiteral("--%1: ").arg(side.name.toLower()) + error);
        err() << "Starting " << side.name << ": "
              << (side.builtin ? QStringLiteral("built-in %1 server").arg(transport) : side.spec) << '\n';
        err().flush();
        side.address = side.running.start(side.server, side.run.transport.kind, &error);
        if (side.address.isEmpty()) {
            err() << "rpcscope-cli ab: server " << side.name << " did not start: " << error << '\n';
            return ExitRuntime;
        }
    }

    for (Side &side : sides) {
        side.run.target.address = side.address;
        side.run.plan.serverPid = side.command ? side.running.pid() : 0;
        ScenarioProblem problem;
        QString details;
        const std::optional<Schema> schema = loadRunSchema(side.scenario, side.run, side.address, &problem, &details);
        if (!schema) {
            if (!details.isEmpty())
                err() << details << '\n';
            if (problem.runtime) { // the server did not answer its reflection: nothing wrong with what was given
                err() << "rpcscope-cli ab: " << side.name << ": " << describeForCli(problem, side.scenario) << '\n';
                return ExitRuntime;
            }
            return usageError(cmd, describeForCli(problem, side.scenario));
        }
        side.call = prepareCall(side.run, *schema, &problem);
        if (!side.call)
            return usageError(cmd, describeForCli(problem, side.scenario));
    }
    // The client is pinned once its servers run (a child would inherit the client's CPUs).
    if (!clientCpus.empty() && !pinCurrentProcess(clientCpus, &error)) {
        err() << "rpcscope-cli ab: --client-cpus: " << error << '\n';
        return ExitRuntime;
    }
    printMachineNoiseWarnings();

    blocks.firstSide = firstSide;
    for (Side &side : sides) {
        if (!side.command || blocks.restarts < 2)
            continue;
        side.restart = [&side](QString *address, int64_t *pid, QString *why) {
            *address = side.running.restart(why);
            if (address->isEmpty())
                return false;
            *pid = side.running.pid();
            return true;
        };
    }

    // The records are filled whether or not they are saved: the comparison below names its sides from them.
    QJsonObject environment = environmentFingerprint();
    if (!clientCpus.empty())
        environment.insert(QStringLiteral("client_cpus"), formatCpuList(clientCpus));
    if (!serverCpus.empty())
        environment.insert(QStringLiteral("server_cpus"), formatCpuList(serverCpus));
    // Each side named by what distinguishes it from the other (the words of its command, its environment), short
    // enough for a legend; the side in the name too: charts and lists name runs by it.
    const std::array<QString, 2> sideNames
        = abSideNames({ sides[0].spec, sides[0].server.environment }, { sides[1].spec, sides[1].server.environment });
    for (Side &side : sides) {
        RunRecord &r = side.record;
        r.name
            = (name.isEmpty() ? sideNames[&side == &sides[0] ? 0 : 1] : name) + QStringLiteral(" (%1)").arg(side.name);
        r.labels = labels;
        r.labels << side.name;
        r.method = side.run.request.call;
        r.transport = transportName(side.run.transport.kind);
        r.codec = codecName(side.run.transport.codec.value_or(defaultCodec(side.run.transport.kind)));
        r.target = side.spec;
        // The side's scenario (its target the side's, the A/B design as run), and which side it was.
        side.scenario.abBlock = design.abBlock;
        side.scenario.abRestarts = blocks.restarts;
        side.scenario.abConnection = blocks.connectionName();
        side.scenario.abThreshold = design.abThreshold.isEmpty() ? QStringLiteral("5%") : design.abThreshold;
        side.scenario.abUntilDecided = blocks.untilDecided;
        side.scenario.abMaxDuration = design.abMaxDuration;
        r.scenario = QJsonDocument::fromJson(side.scenario.toJson()).object();
        r.scenario.insert(QStringLiteral("ab_side"), side.name);
        r.scenario.insert(QStringLiteral("ab_rounds_planned"), rounds);
        r.environment = environment;
        r.startedAt = QDateTime::currentDateTimeUtc();
        if (side.command) {
            r.server = side.server.describe();
            if (side.builtin)
                r.server.insert(QStringLiteral("command"), QString(QStringLiteral("rpcscope-cli serve ") + transport));
        }
        redactSecrets(&r); // before anything prints or stores it
    }
    RunStore store;
    if (save) {
        if (!store.open(db.isEmpty() ? RunStore::chosenPath() : db, &error))
            return usageError(cmd, QStringLiteral("--db ") + error);
        for (Side &side : sides) {
            if (!store.beginRun(&side.record, &error)) {
                err() << "rpcscope-cli ab: --db " << store.path() << ": " << error << '\n';
                return ExitRuntime;
            }
        }
    }

    std::array<AbSide, 2> abSides;
    for (int i = 0; i < 2; ++i)
        abSides[i]
            = { sides[i].run.transport, sides[i].run.target, *sides[i].call, sides[i].run.plan, sides[i].restart };
    AbRunner runner;
    if (!runner.start(abSides, blocks, &error))
        return usageError(cmd, error);
    int shown = 0;
    auto report = [&] {
        // Progress and saving happen here, on the thread that owns the run store.
        const std::vector<AbBlockResult> done = runner.completedBlocks();
        bool changed[2] = { false, false };
        for (; shown < static_cast<int>(done.size()); ++shown) {
            const AbBlockResult &b = done[static_cast<size_t>(shown)];
            err() << "round " << b.round << ' ' << sides[b.side].name
                  << (b.process > 0 && blocks.restarts > 1 ? QStringLiteral(" (process %1)").arg(b.process) : QString())
                  << ": " << b.calls << " calls, p50 " << formatNanos(static_cast<double>(b.p50Ns)) << ", " << b.failed
                  << " failed\n";
            changed[b.side] = true;
            if (untilDecided && !b.pairJudged.isEmpty())
                err() << b.pairJudged << '\n';
        }
        err().flush();
        for (int side = 0; side < 2; ++side) {
            if (save && changed[side] && !store.updateRun(sides[side].record.id, runner.snapshot(side), &error))
                err() << "rpcscope-cli ab: --db " << store.path() << ": " << error << '\n';
        }
    };
    const bool interrupted
        = waitForEngineLike([&runner](std::chrono::milliseconds t) { return runner.waitForFinished(t); },
            [&runner] { runner.stop(); }, std::chrono::milliseconds(100), report);
    report();
    if (!runner.error().isEmpty())
        err() << "rpcscope-cli ab: " << runner.error() << '\n';
    for (int i = 0; i < 2; ++i) {
        sides[i].total = runner.snapshot(i);
        sides[i].raw = runner.rawSamples(i);
    }
    const SequentialAb sequential = runner.sequential();
    const bool decidedEarly = runner.endedBy() == AbEnd::Decided;
    const bool stopped = interrupted || runner.wasStopped();
    for (Side &side : sides) {
        if (side.command)
            side.running.stop();
        side.record.snapshot = side.total;
        side.record.rawSamples = side.raw;
        side.record.endedAt = QDateTime::currentDateTimeUtc();
        side.record.status = stopped ? QString::fromUtf16(RunStatus::Stopped) : QString::fromUtf16(RunStatus::Finished);
        if (save) {
            if (!store.finishRun(side.record.id, side.total, side.raw, side.record.status, &error))
                err() << "rpcscope-cli ab: --db " << store.path() << ": " << error << '\n';
        }
    }
    if (save)
        err() << "Saved as runs #" << sides[0].record.id << " (A) and #" << sides[1].record.id << " (B) in "
              << store.path() << '\n';
    err().flush();
    const std::vector<AbBlockResult> done = runner.completedBlocks();
    out() << "A: " << sides[0].spec << "\nB: " << sides[1].spec << '\n'
          << (done.empty() ? 0 : done.back().round) << " rounds, "
          << (sides[0].run.plan.totalCalls > 0 ? QStringLiteral("%1 calls").arg(blocks.calls)
                                               : formatDuration(blocks.time))
          << " per block, "
          << (blocks.restarts > 1         ? QStringLiteral("%1 server processes per command side").arg(blocks.restarts)
                     : servers.anyCommand ? QStringLiteral("one server process per command side (--restarts 1)")
                                          : QStringLiteral("servers not restarted (addresses)"))
          << ", connection "
          << (blocks.connectionPerBlock ? QStringLiteral("dialled per block") : QStringLiteral("kept across blocks"))
          << (stopped                                         ? QStringLiteral(", stopped early")
                     : runner.endedBy() == AbEnd::MaxDuration ? QStringLiteral(", ended by --max-duration")
                                                              : QString())
          << "\n\n";
    if (untilDecided) {
        // The sequential verdict first: the run was judged (and, when decided, stopped) on it.
        out() << "Sequential verdict (--until-decided, anytime-valid 95%, p50 of block pairs): "
              << sequential.verdictLine(
                     runner.endedByText(sides[0].run.plan.totalCalls > 0 ? QStringLiteral("the run's -n")
                                                                         : QStringLiteral("the run's -z")))
              << '\n';
        if (decidedEarly)
            out() << "The run stopped on this verdict. The fixed-sample comparison below shows its detail; its "
                     "intervals and p-values assume a run of planned length, and are narrower than a run stopped "
                     "when it looked decided deserves.\n";
        out() << '\n';
    }
    CompareOptions options;
    options.threshold = blocks.threshold;
    const Comparison c = printComparison(sides[0].record, sides[1].record, options, format == u"markdown");
    if (c.overall == Verdict::Inconclusive && (clientCpus.empty() || serverCpus.empty()) && servers.anyCommand) {
        // Measured on 2 cores: unpinned, an Echo block's p50 is ~45 us when client and server share a core and
        // ~130 us when they do not, and which one a block gets is chance; pinned apart, blocks agree within ~10%.
        out() << "\nhint: where the scheduler moves client and server between cores, pinning them apart removes most "
                 "of this noise: --client-cpus 0 --server-cpus 1\n";
    }
    if (untilDecided)
        return sequential.decision() == SequentialDecision::Regression ? ExitRegression : ExitOk;
    return c.overall == Verdict::Regression ? ExitRegression : ExitOk;
}

} // namespace rpcscope::cli
