#include "abcommand.h"

#include "cliapp.h"
#include "compare/sequentialab.h"
#include "comparecommand.h"
#include "engine/abrunner.h"
#include "report/profilereport.h"
#include "runcommand.h"
#include "runflags.h"
#include "scenario/scenario.h"
#include "session/absession.h"
#include "store/runstore.h"
#include "util/cpuset.h"
#include "util/units.h"

#include <QCoreApplication>

#include <algorithm>
#include <array>
#include <limits>
#include <optional>

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
  --a-client CMD, --b-client CMD, --client CMD
                             the side's calls are made by this client command (--client: both sides), not by
                             rpcscope's own client: the code under test is then the client (a protobuf runtime,
                             a gRPC library). {target} in it is the side's HOST:PORT (also $RPCSCOPE_TARGET); it
                             is told each block on its stdin and reports each call on its stdout
                             (docs/client-protocol.md; examples/clients/ has Python and shell ones). It is
                             restarted as server commands are (--restarts), its CPU and memory measured from
                             outside. Command lines from here only: a --scenario file never names one
  --a-client-env NAME=VALUE  environment variable for client command A (repeatable); --b-client-env likewise,
                             --client-env for both
  --a-profile-pid PID, --b-profile-pid PID
                             profile this local process (and its children) as the side's server, rather than
                             the one listening on its address's port (a proxy's, a container's); for an address
                             target; implies --profile
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
                             250 ms). With server commands, each side's server is started anew every few
                             rounds (default: 10 processes a side, at most one per two rounds; --restarts K
                             sets it) and the pairs of processes are the replicates: a pair's block ratios are
                             averaged and judged when its last round ends, so the verdict is about the servers,
                             not two of their processes. When ab starts both servers and no --client-cpus/
                             --server-cpus is given, it pins this client to the first CPU it may use and the
                             servers to the others (blocks vary less; give both flags to choose, e.g. the same
                             list twice for none)
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

/// The command line, parsed; the design and the run options are checked by core (AbSession::check()).
struct AbFlags {
    std::array<AbTarget, 2> targets;
    QStringList runArgs; ///< run's options, for scenarioFromArguments()
    QString ready;
    QString readyTimeout;
    QString block; // these: the flag, else the scenario's "ab" section, else the default
    QString restarts;
    QString connection;
    QString threshold;
    QString maxDuration;
    bool untilDecided = false;
    QString format = QStringLiteral("text");
    QString db;
    QString name;
    QStringList labels;
    bool save = true;

    /// The A/B flags given (for messages: a problem is named by its flag when one was given, else by its field).
    QStringList given() const
    {
        QStringList flags;
        for (const auto &[flag, value] :
            { std::pair(QStringLiteral("--block"), block), std::pair(QStringLiteral("--restarts"), restarts),
                std::pair(QStringLiteral("--connection"), connection),
                std::pair(QStringLiteral("--threshold"), threshold),
                std::pair(QStringLiteral("--max-duration"), maxDuration) }) {
            if (!value.isEmpty())
                flags << flag;
        }
        if (untilDecided)
            flags << QStringLiteral("--until-decided");
        return flags;
    }
};

/// Parses ab's own flags, the rest are run's; std::nullopt with the exit code (ExitOk after --help).
std::optional<AbFlags> parseAbFlags(const QString &cmd, const QStringList &arguments, int *code)
{
    AbFlags f;
    f.runArgs = QStringList { arguments.value(0), QStringLiteral("run") };
    const std::pair<const char16_t *, QString *> valued[] { { u"--ready", &f.ready },
        { u"--ready-timeout", &f.readyTimeout }, { u"--block", &f.block }, { u"--restarts", &f.restarts },
        { u"--connection", &f.connection }, { u"--threshold", &f.threshold }, { u"--max-duration", &f.maxDuration },
        { u"--format", &f.format }, { u"--db", &f.db }, { u"--name", &f.name } };
    auto fail = [code, &cmd](const QString &why) -> std::optional<AbFlags> {
        *code = usageError(cmd, why);
        return std::nullopt;
    };
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
            *code = ExitOk;
            return std::nullopt;
        }
        const bool isA = a.startsWith(QStringLiteral("--a")), isB = a.startsWith(QStringLiteral("--b-")) || a == u"--b";
        const bool both = a == u"--client" || a == u"--client-env"; // a client command (or its variable) for A and B
        AbTarget *side = isA ? &f.targets[0] : isB ? &f.targets[1] : nullptr;
        const QString key = side ? a.mid(3) : both ? a.mid(1) : a; // "", "-env", "-dir", "-client", "-client-env"
        if (side && key == u"-profile-pid") {
            bool number = false;
            if (!value(&v))
                return fail(a + QStringLiteral(" needs a value"));
            side->profilePid = v.toLongLong(&number);
            if (!number || side->profilePid <= 0 || side->profilePid > std::numeric_limits<int>::max())
                return fail(QStringLiteral("%1: expected a process id, got \"%2\"").arg(a, v));
            continue;
        }
        if ((side || both)
            && (key.isEmpty() || key == u"-env" || key == u"-dir" || key == u"-client" || key == u"-client-env")) {
            if (!value(&v))
                return fail(a + QStringLiteral(" needs a value"));
            std::pair<QString, QString> variable;
            if (key.endsWith(QStringLiteral("-env"))) {
                const qsizetype eq = v.indexOf(u'=');
                if (eq <= 0)
                    return fail(QStringLiteral("%1: expected NAME=VALUE, got \"%2\"").arg(a, v));
                variable = { v.left(eq), v.mid(eq + 1) };
            }
            // --client and --client-env: both sides; the others: their side, once.
            for (AbTarget *target : both ? std::array { &f.targets[0], &f.targets[1] } : std::array { side, side }) {
                if (key.isEmpty())
                    target->spec = v;
                else if (key == u"-env")
                    target->environment.append(variable);
                else if (key == u"-dir")
                    target->workingDirectory = v;
                else if (key == u"-client")
                    target->client = v;
                else
                    target->clientEnvironment.append(variable);
                if (!both)
                    break;
            }
            continue;
        }
        const auto flag = std::find_if(std::begin(valued), std::end(valued),
            [&a](const std::pair<const char16_t *, QString *> &known) { return a == QStringView(known.first); });
        if (flag != std::end(valued) || a == u"--label") {
            if (!value(&v))
                return fail(a + QStringLiteral(" needs a value"));
            if (flag != std::end(valued))
                *flag->second = v;
            else
                f.labels << v;
        } else if (a == u"--no-save") {
            f.save = false;
        } else if (a == u"--until-decided") {
            f.untilDecided = true;
        } else if (a != u"--trust") { // commands come from this command line; a document's are not run by ab
            f.runArgs << arguments.at(i);
        }
    }
    for (const AbTarget &target : f.targets) {
        if (target.spec.isEmpty())
            return fail(QStringLiteral("--a and --b are required (builtin, HOST:PORT, a URL or a command)"));
    }
    if (!f.restarts.isEmpty()) {
        bool isNumber = false;
        const int restarts = f.restarts.toInt(&isNumber);
        if (!isNumber || restarts < 1 || restarts > 1000)
            return fail(QStringLiteral("--restarts: expected a number of server starts from 1 to 1000, got \"%1\"")
                            .arg(f.restarts));
    }
    if (f.format != u"text" && f.format != u"markdown")
        return fail(QStringLiteral("--format: \"%1\" is not text or markdown").arg(f.format));
    return f;
}

/// The document both sides run: run's options (or --scenario's document), with the A/B design and the readiness
/// given here over the document's. std::nullopt with the exit code.
std::optional<Scenario> abDesign(const QString &cmd, const AbFlags &f, int *code)
{
    const std::optional<Scenario> scenario = scenarioFromArguments(cmd, f.runArgs, code, true);
    if (!scenario)
        return std::nullopt;
    if (!scenario->target.isEmpty()) {
        *code = usageError(cmd,
            scenario->target == u"builtin"
                ? QStringLiteral("--builtin: say --a builtin or --b builtin instead")
                : QStringLiteral("give the targets as --a and --b, not \"%1\"").arg(scenario->target));
        return std::nullopt;
    }
    Scenario design = *scenario;
    for (const auto &[given, field] :
        { std::pair(&f.threshold, &design.abThreshold), std::pair(&f.connection, &design.abConnection),
            std::pair(&f.block, &design.abBlock), std::pair(&f.maxDuration, &design.abMaxDuration),
            std::pair(&f.ready, &design.readyPattern), std::pair(&f.readyTimeout, &design.readyTimeout) }) {
        if (!given->isEmpty())
            *field = *given;
    }
    if (!f.restarts.isEmpty())
        design.abRestarts = f.restarts.toInt();
    design.abUntilDecided = design.abUntilDecided || f.untilDecided;
    if (f.targets[0].profilePid > 0 || f.targets[1].profilePid > 0)
        design.profileServer = true; // as run's --profile-pid implies --profile
    // A single run's outputs are refused on this command line; a document's are left out (ab reports its own way).
    if (refuseSingleRunOutputs(cmd, f.runArgs, &design)) {
        *code = ExitUsage;
        return std::nullopt;
    }
    return design;
}

/// A problem AbSession found, in this command line's words: a side's by its flag (--a, --b-env, --ready), the
/// design's by its flag when one was given, else by its field.
QString abProblemText(const ScenarioProblem &problem, int side, const AbFlags &f, const Scenario &design)
{
    if (side >= 0) {
        const QString letter = side == 0 ? QStringLiteral("a") : QStringLiteral("b");
        if (problem.field == u"target")
            return QStringLiteral("--%1: ").arg(letter) + problem.message;
        if (problem.field == u"environment")
            return QStringLiteral("--%1-env/--%1-dir are for commands; \"%2\" is an address")
                .arg(letter, f.targets[static_cast<size_t>(side)].spec);
        if (problem.field == u"client")
            return QStringLiteral("--%1-client: ").arg(letter) + problem.message;
        if (problem.field == u"profile_pid")
            return QStringLiteral("--%1-profile-pid: ").arg(letter) + problem.message;
        if (problem.field == u"client_environment")
            return QStringLiteral("--%1-client-env: is for a client command; give --%1-client (or --client)")
                .arg(letter);
        if (problem.field.startsWith(QStringLiteral("server_command.")))
            return QStringLiteral("--%1: ").arg(problem.field.mid(15).replace(u'_', u'-')) + problem.message;
    }
    static const std::pair<const char16_t *, const char16_t *> kFlags[] { { u"ab.block", u"--block" },
        { u"ab.restarts", u"--restarts" }, { u"ab.connection", u"--connection" }, { u"ab.threshold", u"--threshold" },
        { u"ab.until_decided", u"--until-decided" }, { u"ab.max_duration", u"--max-duration" } };
    for (const auto &[field, flag] : kFlags) {
        if (problem.field != QStringView(field))
            continue;
        const QString given = QString::fromUtf16(flag);
        // Other fields the message names are worded as their flags ("load.calls" as -n).
        const QString message = describeForCli(ScenarioProblem { QString(), problem.message }, design);
        return (f.given().contains(given) ? given : QString::fromUtf16(field)) + QStringLiteral(": ") + message;
    }
    if (side < 0 && problem.field == u"transport") // AbSession: the no-RPC baseline has no server to compare
        return QStringLiteral("--transport none calls no server: there is nothing to compare A/B");
    return describeForCli(problem, design);
}

/// The run's shape, printed above the comparison.
void printAbShape(const AbSession &session, const QString &endedBy)
{
    const AbBlocks &blocks = session.blocks();
    const std::vector<AbBlockResult> done = session.runner().completedBlocks();
    const bool anyCommand = session.startsServer(0) || session.startsServer(1);
    // The most any side started (an address side's blocks name none, so the last block may not tell).
    int processesRun = done.empty() ? 0 : 1;
    for (const AbBlockResult &block : done)
        processesRun = std::max(processesRun, block.process);
    // A run that ended early (decided, stopped) ran fewer processes than planned: both counts.
    const QString processes = processesRun < blocks.restarts
        ? QStringLiteral("%1 of %2 server processes per command side").arg(processesRun).arg(blocks.restarts)
        : QStringLiteral("%1 server processes per command side").arg(blocks.restarts);
    out() << "A: " << session.target(0).spec << "\nB: " << session.target(1).spec << '\n'
          << (done.empty() ? 0 : done.back().round) << " rounds, "
          << (session.spec(0).plan.totalCalls > 0 ? QStringLiteral("%1 calls").arg(blocks.calls)
                                                  : formatDuration(blocks.time))
          << " per block, "
          << (blocks.restarts > 1 ? processes
                     : anyCommand ? QStringLiteral("one server process per command side (--restarts 1)")
                                  : QStringLiteral("servers not restarted (addresses)"))
          << ", connection "
          << (blocks.connectionPerBlock ? QStringLiteral("dialled per block") : QStringLiteral("kept across blocks"))
          << endedBy << "\n\n";
}

/// The run's shape, the sequential verdict when it was judged as it went, and the comparison; the exit code.
/// With --profile (--profile-client): where B's time went, function by function, and each side's heaviest.
void printAbProfiles(const AbSession &session, const std::array<RunRecord, 2> &records)
{
    for (const QString &note : session.profileNotes())
        err() << "rpcscope-cli ab: " << note << '\n';
    const std::array<std::pair<std::optional<Profile>, std::optional<Profile>>, 2> pairs {
        std::pair(records[0].serverProfile, records[1].serverProfile),
        std::pair(records[0].clientProfile, records[1].clientProfile)
    };
    for (const auto &[a, b] : pairs) {
        if (!a || !b)
            continue;
        out() << '\n'
              << formatProfileSummary(*a, 5).replace(QLatin1String(" profile:"), QLatin1String(" profile of A:"));
        out() << formatProfileSummary(*b, 5).replace(QLatin1String(" profile:"), QLatin1String(" profile of B:"));
        if (a->isEmpty() || b->isEmpty() || a->calls() <= 0 || b->calls() <= 0)
            continue;
        out() << formatProfileChanges(diffProfiles(*a, *b), a->scope);
    }
}

int printAbResult(
    const AbSession &session, const std::array<RunRecord, 2> &records, bool markdown, const QString &endedBy)
{
    const AbRunner &runner = session.runner();
    const bool untilDecided = session.blocks().untilDecided;
    printAbShape(session, endedBy);
    const SequentialAb sequential = runner.sequential();
    if (untilDecided) {
        // The sequential verdict first: the run was judged (and, when decided, stopped) on it.
        out() << "Sequential verdict (--until-decided, anytime-valid 95%, " << sequential.basis() << "): "
              << sequential.verdictLine(
                     runner.endedByText(session.spec(0).plan.totalCalls > 0 ? QStringLiteral("the run's -n")
                                                                            : QStringLiteral("the run's -z")))
              << '\n';
        if (runner.endedBy() == AbEnd::Decided)
            out() << "The run stopped on this verdict. The fixed-sample comparison below shows its detail; its "
                     "intervals and p-values assume a run of planned length, and are narrower than a run stopped "
                     "when it looked decided deserves.\n";
        out() << '\n';
    }
    CompareOptions options;
    options.threshold = session.blocks().threshold;
    const Comparison c = printComparison(records[0], records[1], options, markdown);
    const bool anyCommand = session.startsServer(0) || session.startsServer(1);
    if (c.overall == Verdict::Inconclusive && (session.clientCpus().empty() || session.serverCpus().empty())
        && anyCommand) {
        // Measured on 2 cores: unpinned, an Echo block's p50 is ~45 us when client and server share a core and
        // ~130 us when they do not, and which one a block gets is chance; pinned apart, blocks agree within ~10%.
        out() << "\nhint: where the scheduler moves client and server between cores, pinning them apart removes most "
                 "of this noise: --client-cpus 0 --server-cpus 1\n";
    }
    if (c.overall == Verdict::Inconclusive) {
        // Other programs: a call's latency is then mostly waiting for a CPU, which no number of calls averages out.
        for (const QString &warning : machineNoiseWarnings()) {
            if (warning.startsWith(QStringLiteral("load average")))
                out() << "\nhint: this machine is busy (" << warning.section(QStringLiteral(" (above"), 0, 0)
                      << "): other programs are running, and latency is mostly waiting for a CPU. Pin the client "
                         "and the servers apart (--client-cpus, --server-cpus), or read the CPU per call rows, "
                         "which other programs disturb less when they are pinned.\n";
        }
    }
    printAbProfiles(session, records);
    if (untilDecided)
        return sequential.decision() == SequentialDecision::Regression ? ExitRegression : ExitOk;
    return c.overall == Verdict::Regression ? ExitRegression : ExitOk;
}

} // namespace

int abCommand(const QStringList &arguments)
{
    const QString cmd = QStringLiteral("ab");
    int code = ExitOk;
    const std::optional<AbFlags> flags = parseAbFlags(cmd, arguments, &code);
    if (!flags)
        return code;
    const AbFlags &f = *flags;
    const std::optional<Scenario> design = abDesign(cmd, f, &code);
    if (!design)
        return code;

    // Core checks both sides and the design before any server starts, then starts them, in the coin's order.
    AbSession session(*design, f.targets, std::nullopt, QCoreApplication::applicationFilePath());
    session.setNaming(f.name, f.labels);
    session.setStartingHook([](const QString &what) {
        err() << what << '\n';
        err().flush();
    });
    ScenarioProblem problem;
    int side = -1;
    if (!session.check(&problem, &side))
        return usageError(cmd, abProblemText(problem, side, f, *design));
    if (session.pinnedApart())
        err() << "--until-decided: this client pinned to CPU " << formatCpuList(session.clientCpus())
              << " and the servers to " << formatCpuList(session.serverCpus())
              << " (pinned apart, blocks vary less than where the scheduler moves them; --client-cpus and "
                 "--server-cpus choose)\n";
    QString details;
    if (!session.prepare(&problem, &side, &details)) {
        if (!details.isEmpty())
            err() << details << '\n';
        if (problem.runtime) { // a server did not start or answer: nothing wrong with what was given
            // "server B did not start ...", "cannot reach A ..." name their side; a reflection's problem does not.
            const QString which = side >= 0 && !problem.field.isEmpty()
                ? QString(QChar(side == 0 ? u'A' : u'B')) + QStringLiteral(": ")
                : QString();
            err() << "rpcscope-cli ab: " << which
                  << (problem.field.isEmpty() ? problem.message : describeForCli(problem, *design)) << '\n';
            return ExitRuntime;
        }
        return usageError(cmd, abProblemText(problem, side, f, *design));
    }
    printMachineNoiseWarnings();

    // The records are filled whether or not they are saved: the comparison below names its sides from them.
    std::array<RunRecord, 2> records = session.records();
    QString error;
    RunStore store;
    if (f.save) {
        if (!store.open(f.db.isEmpty() ? RunStore::chosenPath() : f.db, &error))
            return usageError(cmd, QStringLiteral("--db ") + error);
        for (RunRecord &record : records) {
            if (!store.beginRun(&record, &error)) {
                err() << "rpcscope-cli ab: --db " << store.path() << ": " << error << '\n';
                return ExitRuntime;
            }
        }
    }
    if (!session.startLoad(&error))
        return usageError(cmd, error);
    AbRunner &runner = session.runner();
    const bool untilDecided = session.blocks().untilDecided;
    int shown = 0;
    auto report = [&] {
        // Progress and saving happen here, on the thread that owns the run store.
        const std::vector<AbBlockResult> done = runner.completedBlocks();
        bool changed[2] = { false, false };
        for (; shown < static_cast<int>(done.size()); ++shown) {
            const AbBlockResult &b = done[static_cast<size_t>(shown)];
            err() << "round " << b.round << ' ' << (b.side == 0 ? 'A' : 'B')
                  << (b.process > 0 && session.blocks().restarts > 1 ? QStringLiteral(" (process %1)").arg(b.process)
                                                                     : QString())
                  << ": " << b.calls << " calls, p50 " << formatNanos(static_cast<double>(b.p50Ns)) << ", " << b.failed
                  << " failed\n";
            changed[b.side] = true;
            if (untilDecided && !b.pairJudged.isEmpty())
                err() << b.pairJudged << '\n';
        }
        err().flush();
        for (int i = 0; i < 2; ++i) {
            if (f.save && changed[i]
                && !store.updateRun(records[static_cast<size_t>(i)].id, runner.snapshot(i), &error))
                err() << "rpcscope-cli ab: --db " << store.path() << ": " << error << '\n';
        }
    };
    const bool interrupted
        = waitForEngineLike([&runner](std::chrono::milliseconds t) { return runner.waitForFinished(t); },
            [&runner] { runner.stop(); }, std::chrono::milliseconds(100), report);
    report();
    if (!runner.error().isEmpty())
        err() << "rpcscope-cli ab: " << runner.error() << '\n';
    session.finish(); // the servers stopped
    session.completeRecords(&records);
    // A run that failed (a server that did not start again, a client command that broke the protocol) has no
    // verdict: its blocks are kept, as a stopped run's, and no comparison is printed that would look like one.
    const bool failed = runner.endedBy() == AbEnd::Failed;
    const bool stopped = interrupted || runner.wasStopped() || failed;
    for (RunRecord &record : records) {
        if (stopped)
            record.status = QString::fromUtf16(RunStatus::Stopped);
        if (f.save
            && (!store.finishRun(record.id, record.snapshot, record.rawSamples, record.status, &error)
                || !store.saveProfiles(record, &error)))
            err() << "rpcscope-cli ab: --db " << store.path() << ": " << error << '\n';
    }
    if (f.save)
        err() << "Saved as runs #" << records[0].id << " (A) and #" << records[1].id << " (B) in " << store.path()
              << '\n';
    if (failed) {
        err() << "rpcscope-cli ab: the A/B run did not complete: no verdict\n";
        err().flush();
        return ExitRuntime;
    }
    err().flush();
    return printAbResult(session, records, f.format == u"markdown",
        stopped                                      ? QStringLiteral(", stopped early")
            : runner.endedBy() == AbEnd::MaxDuration ? QStringLiteral(", ended by --max-duration")
                                                     : QString());
}

} // namespace rpcscope::cli
