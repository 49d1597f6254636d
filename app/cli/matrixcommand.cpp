#include "matrixcommand.h"

#include "cliapp.h"
#include "renderedexport.h"
#include "report/matrixreport.h"
#include "runcommand.h"
#include "runflags.h"

#include "matrixcharts.h"

#include "scenario/matrixcell.h"
#include "scenario/runspec.h"
#include "server/baselinecommand.h"
#include "server/serverlaunch.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QGuiApplication>
#include <QMap>

namespace rpcscope::cli {

namespace {

/// The --grpc/--http/--msgpack flag that gives @p kind's target: h2grpc calls the --grpc server too.
QString targetKey(TransportKind kind)
{
    return serveSubcommand(kind); // the built-in server a transport calls names its flag
}

const char *const kMatrixHelp
    = R"(Usage: rpcscope-cli matrix [RUN OPTIONS] --stack NAME=TRANSPORT[/CODEC]@TARGET ... [--payloads LIST] [-c LIST]
       rpcscope-cli matrix [RUN OPTIONS] [--transports LIST] [--codecs LIST] [--payloads LIST] [-c LIST]

Runs the same method over stacks (or transports x codecs) x payloads x concurrency levels and prints one table:
mean, p50, p99, req/s, bytes/call, client and server CPU per call, errors, and which share of the mean is codec
time (from the no-RPC baseline: the same payload and codec, encoded and decoded in process with one caller). A
cell in which no call ended OK shows "-" for what it could not measure, and says why below the table.

  --stack SPEC       one of your stacks (repeatable), each with its own target and method name:
                       NAME=TRANSPORT[/CODEC]@TARGET[,method=NAME][,path=/PATH][,baseline=COMMAND]
                     TRANSPORT grpc, h2grpc, http, msgpack or none (in process, no target); CODEC protobuf, json or
                     msgpack (default: the transport's); TARGET an address, an HTTP URL with its path, a server
                     command with {port}, or builtin; method= the msgpack-rpc method's name; path= an HTTP
                     server command's URL path; baseline= (last) a command of yours that prints one call's
                     codec time in your server's language ({payload} replaced), run once per payload before
                     the load: the stack's codec share is then that time over the cell's mean. For example:
                       --stack 'fastapi=http/json@http://127.0.0.1:8000/sum'
                       --stack 'api=http/json@uvicorn app:app --port {port},path=/sum'
                       --stack 'grpcio=grpc@127.0.0.1:50051'
                       --stack 'msgpack=msgpack@127.0.0.1:18800,method=sum_nums'
  --transports LIST  without --stack: grpc,http,msgpack,none (default: all four)
  --codecs LIST      without --stack: protobuf,json,msgpack (default: all three); each transport runs the codecs
                     it carries: grpc protobuf, msgpack msgpack, http and none all of them
  --grpc ADDR, --http URL, --msgpack ADDR
                     without --stack: targets per transport; or --builtin to start each built-in server
  --payloads LIST    payload variants as --fill specs separated by ';', e.g. 'nums=2;nums=1000'
                     (default: the request as given)
  -c LIST            concurrency levels, e.g. 1,8,64 (default: run's -c); the no-RPC baseline runs with one
                     caller. Lists given again add up: -c 1 -c 8 is -c 1,8 (so do --transports, --codecs and
                     --payloads)
  --client CMD       (a run option) a client command of yours makes each cell's calls (docs/client-protocol.md):
                     give the servers it calls as --stack, and -c levels; its transport, codec and requests
                     are its own (no --payloads, no codec share)
  --format text|csv|markdown  what is printed (default text)
  -O FORMAT -o FILE  also write (repeatable): csv (one row per cell), markdown (the table, for a wiki or an
                     issue), html (one page: bars, curves for a size sweep, every cell), png, svg or pdf (a
                     chart); '-' is standard output
  --chart bars|curves  the chart of png/svg/pdf outputs (default bars; curves need a size sweep); given right
                     after an output's -o, that output's own
  --metric mean|p50|p99|rps|cpu  what the bars and curves show (default mean)
  --chart-size WxH, --chart-scale S  as for run
  --save, --db PATH, --label L, --name N
                     save every cell to the history, one run each, labelled matrix:ID, stack:NAME, payload:P and
                     c:N, so any two cells can be compared later (rpcscope-cli compare label:stack:a label:stack:b)
  --profile, --profile-client
                     profile each cell's server (or rpcscope's own process) during its timed phase, as run does:
                     the heaviest functions of each cell under the table (after csv: on standard error), and with
                     --save each cell's profile in the history (export A B -O flamegraph compares two cells)
Every other option is run's (see 'rpcscope-cli run --help'): --call, -d, --fill, -n, -z, --warmup, --expect, ...
)";

/// One -O FORMAT -o FILE [--chart NAME] of the matrix.
struct MatrixOutput {
    QString format;
    QString file;
    QString chart;
};

/// The matrix's own flags; the rest are run's (rest, for scenarioFromArguments()).
struct MatrixFlags {
    QStringList rest;
    QString transports;
    QString codecs;
    QString payloads;
    QString levels;
    QString format = QStringLiteral("text");
    QMap<QString, QString> targets; ///< --grpc/--http/--msgpack
    QList<MatrixStack> stacks;
    bool builtin = false;
    QList<MatrixOutput> outputs;
    QString chart;
    QString metricName = QStringLiteral("mean");
    QString chartSize;
    QString chartScale;
    // Checked by checkMatrixFlags():
    QList<int> concurrency;
    MatrixMetric metric = MatrixMetric::Mean;
    ChartOptions chartOptions;
};

/// Parses the command line into @p f; the exit code when it ends here (a usage error, or --help), else nothing.
std::optional<int> parseMatrixFlags(const QString &cmd, const QStringList &arguments, MatrixFlags *f)
{
    f->rest = QStringList { arguments.value(0), QStringLiteral("run") };
    QStringList &rest = f->rest;
    QString &transports = f->transports;
    QString &codecs = f->codecs;
    QString &payloads = f->payloads;
    QString &levels = f->levels;
    QString &format = f->format;
    QMap<QString, QString> &targets = f->targets;
    QList<MatrixStack> &stacks = f->stacks;
    bool &builtin = f->builtin;
    QList<MatrixOutput> &outputs = f->outputs;
    QString &chart = f->chart;
    QString &metricName = f->metricName;
    QString &chartSize = f->chartSize;
    QString &chartScale = f->chartScale;
    QString lastOption; ///< the option just before, when it was one of the outputs' own
    static const QStringList ownFlags { QStringLiteral("transports"), QStringLiteral("codecs"),
        QStringLiteral("payloads"), QStringLiteral("format"), QStringLiteral("grpc"), QStringLiteral("http"),
        QStringLiteral("msgpack"), QStringLiteral("stack"), QStringLiteral("concurrency") };
    for (qsizetype i = 2; i < arguments.size(); ++i) {
        const QString &a = arguments.at(i);
        auto value = [&](QString *into) {
            if (i + 1 >= arguments.size())
                return false;
            *into = arguments.at(++i);
            return true;
        };
        QString name = a.startsWith(QStringLiteral("--")) ? a.mid(2).section(QLatin1Char('='), 0, 0) : QString();
        if (a == u"-c")
            name = QStringLiteral("concurrency");
        if (a.startsWith(QStringLiteral("--")) && a.contains(QLatin1Char('=')) && ownFlags.contains(name)) {
            // --flag=value: split, then handle like --flag value.
            QStringList again = arguments;
            again.replace(i, QStringLiteral("--") + name);
            again.insert(i + 1, a.section(QLatin1Char('='), 1));
            *f = MatrixFlags();
            return parseMatrixFlags(cmd, again, f);
        }
        if (a == u"-h" || a == u"--help" || a == u"--help-all") {
            out() << kMatrixHelp;
            return ExitOk;
        }
        // The matrix's own outputs (run's single-run -O/-o are not for it).
        if (a == u"-O" || a == u"--output-format" || a == u"-o" || a == u"--output" || a == u"--chart"
            || a == u"--metric" || a == u"--chart-size" || a == u"--chart-scale") {
            QString v;
            if (!value(&v))
                return usageError(cmd, QStringLiteral("%1 needs a value").arg(a));
            const QString previous = lastOption;
            lastOption = a;
            if (a == u"-O" || a == u"--output-format") {
                outputs.append({ v, QString(), QString() });
            } else if (a == u"-o" || a == u"--output") {
                auto open = std::find_if(
                    outputs.begin(), outputs.end(), [](const MatrixOutput &o) { return o.file.isEmpty(); });
                if (open == outputs.end())
                    return usageError(cmd, QStringLiteral("-o %1: no -O before it (-O html -o stacks.html)").arg(v));
                open->file = v;
            } else if (a == u"--chart") {
                // Right after an output's -o: that output's own chart.
                if ((previous == u"-o" || previous == u"--output") && !outputs.isEmpty()
                    && outputs.last().chart.isEmpty())
                    outputs.last().chart = v;
                else
                    chart = v;
            } else if (a == u"--metric") {
                metricName = v;
            } else if (a == u"--chart-size") {
                chartSize = v;
            } else {
                chartScale = v;
            }
            continue;
        }
        lastOption.clear();
        if (name == u"transports" || name == u"codecs" || name == u"payloads" || name == u"format"
            || name == u"concurrency") {
            QString *into = name == u"transports" ? &transports
                : name == u"codecs"               ? &codecs
                : name == u"payloads"             ? &payloads
                : name == u"concurrency"          ? &levels
                                                  : &format;
            QString given;
            if (!value(&given))
                return usageError(cmd, QStringLiteral("%1 needs a value").arg(a));
            // Given again, a list grows (-c 1 -c 8 is -c 1,8) rather than the last one silently winning.
            if (into != &format && !into->isEmpty())
                *into += (into == &payloads ? QLatin1Char(';') : QLatin1Char(',')) + given;
            else
                *into = given;
        } else if (name == u"stack") {
            QString spec;
            if (!value(&spec))
                return usageError(cmd, QStringLiteral("--stack needs NAME=TRANSPORT[/CODEC]@TARGET"));
            QString why;
            const std::optional<MatrixStack> stack = parseMatrixStack(spec, &why);
            if (!stack)
                return usageError(cmd, QStringLiteral("--stack ") + why);
            for (const MatrixStack &other : std::as_const(stacks)) {
                if (other.name == stack->name)
                    return usageError(cmd, QStringLiteral("--stack: two stacks are named \"%1\"").arg(stack->name));
            }
            stacks << *stack;
        } else if (name == u"grpc" || name == u"http" || name == u"msgpack") {
            if (!value(&targets[name]))
                return usageError(cmd, QStringLiteral("--%1 needs an address").arg(name));
        } else if (a == u"--transport" || a == u"--codec" || a.startsWith(QStringLiteral("--transport="))
            || a.startsWith(QStringLiteral("--codec=")) || a == u"--rpc-method"
            || a.startsWith(QStringLiteral("--rpc-method="))) {
            return usageError(cmd,
                QStringLiteral("%1: the matrix sets it per cell; use --stack (or --transports / --codecs)").arg(a));
        } else {
            if (a == u"--builtin")
                builtin = true;
            rest << a;
        }
    }
    return std::nullopt;
}

/// Checks the callers, the format and the outputs before any cell runs, so that a typo costs no load.
std::optional<int> checkMatrixFlags(const QString &cmd, MatrixFlags *f)
{
    const QString &levels = f->levels;
    const QString &format = f->format;
    const QString &metricName = f->metricName;
    const QString &chart = f->chart;
    const QString &chartScale = f->chartScale;
    QList<int> &concurrency = f->concurrency;
    ChartOptions &chartOptions = f->chartOptions;
    const QList<MatrixOutput> &outputs = f->outputs;
    for (const QString &level : levels.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        bool ok = false;
        const int n = level.trimmed().toInt(&ok);
        if (!ok || n < 1 || n > 100000)
            return usageError(cmd, QStringLiteral("-c: \"%1\" is not a number of callers from 1 to 100000").arg(level));
        if (concurrency.contains(n))
            return usageError(cmd, QStringLiteral("-c: %1 is given twice").arg(n));
        concurrency << n;
    }
    if (!levels.isEmpty() && concurrency.isEmpty())
        return usageError(cmd, QStringLiteral("-c needs one or more numbers of callers, e.g. 1,8,64"));
    if (format != u"text" && format != u"csv" && format != u"markdown")
        return usageError(cmd, QStringLiteral("--format: \"%1\" is not text, csv or markdown").arg(format));
    // Outputs: checked before any cell runs, so a typo costs no load.
    const std::optional<MatrixMetric> metric = parseMatrixMetric(metricName);
    if (!metric)
        return usageError(cmd, QStringLiteral("--metric: \"%1\" is not mean, p50, p99, rps or cpu").arg(metricName));
    f->metric = *metric;
    if (QString why; !parseChartOptions(f->chartSize, chartScale, &chartOptions, &why))
        return usageError(cmd, why);
    chartOptions.scale = chartScale.isEmpty() ? 2.0 : chartOptions.scale; // slides: twice the pixels, as run's PNGs
    static const QStringList outputFormats { QStringLiteral("csv"), QStringLiteral("markdown"), QStringLiteral("html"),
        QStringLiteral("png"), QStringLiteral("svg"), QStringLiteral("pdf") };
    for (const MatrixOutput &o : std::as_const(outputs)) {
        if (!outputFormats.contains(o.format))
            return usageError(
                cmd, QStringLiteral("-O %1: the matrix writes csv, markdown, html, png, svg or pdf").arg(o.format));
        if (o.file.isEmpty())
            return usageError(
                cmd, QStringLiteral("-O %1: give its file with -o (- for standard output)").arg(o.format));
        const QString name = o.chart.isEmpty() ? chart : o.chart;
        if (!parseMatrixChart(name))
            return usageError(cmd, QStringLiteral("--chart: \"%1\" is not bars or curves").arg(name));
        if (QString why; o.file != u"-" && !checkOutputPath(o.file, &why))
            return usageError(cmd, QStringLiteral("-o ") + why);
        if ((o.format == u"png" || o.format == u"svg" || o.format == u"pdf" || o.format == u"html")
            && !qobject_cast<QGuiApplication *>(QCoreApplication::instance()))
            return usageError(
                cmd, QStringLiteral("-O %1: give it as -O %1 (this process has no offscreen drawing)").arg(o.format));
    }
    return std::nullopt;
}

/// The cells to run: the stacks', else the transports' with the codecs they carry; the exit code on a problem.
std::optional<int> matrixCellsOf(const QString &cmd, const MatrixFlags &f, QList<MatrixCell> *into)
{
    const QString &transports = f.transports;
    const QString &codecs = f.codecs;
    const QMap<QString, QString> &targets = f.targets;
    const bool builtin = f.builtin;
    const QList<int> &concurrency = f.concurrency;
    const QList<MatrixOutput> &outputs = f.outputs;
    QList<MatrixCell> &cells = *into;
    const QStringList variants = f.payloads.split(QLatin1Char(';'), Qt::SkipEmptyParts);
    if (!f.stacks.isEmpty()) {
        if (!transports.isEmpty() || !codecs.isEmpty() || !targets.isEmpty() || builtin)
            return usageError(cmd,
                QStringLiteral("--stack names each stack's transport, codec and target: drop --transports, "
                               "--codecs, --grpc/--http/--msgpack and --builtin (a stack's target can be builtin)"));
        cells = stackCells(f.stacks, variants, concurrency);
    } else {
        QList<TransportKind> kinds;
        for (const QString &t : (transports.isEmpty() ? QStringLiteral("grpc,http,msgpack,none") : transports)
                                    .split(QLatin1Char(','), Qt::SkipEmptyParts)) {
            const auto kind = parseTransport(t);
            if (!kind)
                return usageError(
                    cmd, QStringLiteral("--transports: \"%1\" is not grpc, h2grpc, http, msgpack or none").arg(t));
            kinds << *kind;
        }
        QList<Codec> codecList;
        for (const QString &c : (codecs.isEmpty() ? QStringLiteral("protobuf,json,msgpack") : codecs)
                                    .split(QLatin1Char(','), Qt::SkipEmptyParts)) {
            const auto codec = parseCodec(c);
            if (!codec)
                return usageError(cmd, QStringLiteral("--codecs: \"%1\" is not protobuf, json or msgpack").arg(c));
            codecList << *codec;
        }
        for (TransportKind kind : std::as_const(kinds)) {
            if (kind != TransportKind::InProcess && !builtin && !targets.contains(targetKey(kind)))
                return usageError(cmd,
                    QStringLiteral("no target for %1: give --%2 ADDRESS, --builtin, or your stacks with --stack")
                        .arg(transportName(kind), targetKey(kind)));
        }
        cells = matrixCells(kinds, codecList, variants, concurrency);
        if (cells.isEmpty())
            return usageError(cmd, QStringLiteral("no transport in --transports carries a codec in --codecs"));
    }

    for (const MatrixOutput &o : std::as_const(outputs)) {
        const bool drawn = o.format == u"png" || o.format == u"svg" || o.format == u"pdf";
        if (drawn && *parseMatrixChart(o.chart.isEmpty() ? f.chart : o.chart) == MatrixChart::Curves
            && !isSizeSweep(cells))
            return usageError(cmd,
                QStringLiteral("--chart curves for -o %1: the payloads must be two or more sizes of one field "
                               "(--payloads 'nums=2;nums=1000')")
                    .arg(o.file));
    }

    return std::nullopt;
}

/// The matrix as it will run: the base document, its id in the history, each cell's document and title.
struct MatrixPlan {
    Scenario base;
    QString matrixId;
    QList<Scenario> scenarios;
    QStringList wheres;
};

/// Each cell's document, all checked (and, with the schema in files, its request built) before the first runs: a
/// mistake in the last stack costs no load. The exit code on a problem.
std::optional<int> planMatrixCells(const QString &cmd, const MatrixFlags &f, QList<MatrixCell> *into, MatrixPlan *plan)
{
    QList<MatrixCell> &cells = *into;
    int code = ExitOk;
    std::optional<Scenario> base = scenarioFromArguments(cmd, f.rest, &code, true);
    if (!base)
        return code;
    if (refuseSingleRunOutputs(cmd, f.rest, &*base))
        return ExitUsage;
    if (!base->target.isEmpty() && base->target != u"builtin")
        return usageError(cmd,
            QStringLiteral("give targets with --stack, or per transport (--grpc, --http, --msgpack) or --builtin, "
                           "not \"%1\"")
                .arg(base->target));
    if (!base->clientCommand.isEmpty()) {
        // A client command makes its own calls: what the matrix can vary for it is the servers it calls (stacks,
        // named by what they are) and its callers (-c); the transport, codec and request are its own.
        if (f.stacks.isEmpty())
            return usageError(cmd,
                QStringLiteral("--client: give the servers it calls as --stack NAME=TRANSPORT@TARGET (the transport "
                               "it speaks); transports x codecs are rpcscope's client's"));
        if (!f.payloads.isEmpty())
            return usageError(cmd,
                QStringLiteral("--payloads: a client command sends its own requests (vary them with one matrix per "
                               "client command line)"));
        for (const MatrixStack &stack : f.stacks) {
            if (stack.transport == TransportKind::InProcess)
                return usageError(cmd,
                    QStringLiteral("--stack %1: the no-RPC baseline has no server for a client command to call")
                        .arg(stack.name));
        }
    }
    // Saved cells carry the matrix's id, so the cells of one matrix are found together later.
    const QString matrixId = QDateTime::currentDateTimeUtc().toString(QStringLiteral("yyyyMMdd-HHmmss"));
    // Each cell's scenario, all checked before the first runs: a mistake in the last stack costs no load.
    QList<Scenario> scenarios;
    std::optional<Schema> schemaInFiles;
    QStringList wheres;
    for (MatrixCell &cell : cells) {
        // The cell's document, as the window's stack comparison makes it: its target its stack's, else its
        // transport's (--grpc/--http/--msgpack, or the built-in server).
        Scenario scenario = scenarioForCell(
            *base, cell, f.builtin ? QStringLiteral("builtin") : f.targets.value(targetKey(cell.transport)));
        if (cell.transport == TransportKind::InProcess) {
            scenario.profileServer = false; // the no-RPC baseline has no server: --profile is for the other cells
            if (!scenario.profileClient) { // and how to profile is theirs too
                scenario.profiler.clear();
                scenario.profilePeriod.clear();
                scenario.profileCallGraph.clear();
                scenario.profileKeep = false;
            }
        }
        cell.concurrency = scenario.concurrency; // what the cell runs with, for the table
        const QString where = matrixCellTitle(cell, cell.concurrency);
        if (base->savesRun())
            labelMatrixCell(&scenario, cell, matrixId);
        ScenarioProblem problem;
        const std::optional<RunSpec> spec = prepareRun(scenario, &problem);
        if (!spec)
            return usageError(cmd, where + QStringLiteral(": ") + describeForCli(problem, scenario));
        // rpcscope's codecs are the built-in server's, not a client command's: no codec share for its cells.
        cell.ownServer = spec->server == RunServer::Builtin && !spec->client;
        // Only gRPC servers describe themselves (reflection); the others need the schema given.
        if (scenario.protos.isEmpty() && scenario.protosets.isEmpty() && !speaksGrpc(cell.transport)
            && (spec->server == RunServer::Address || spec->server == RunServer::Command))
            return usageError(
                cmd, where + QStringLiteral(": no schema: give a .proto file or a protoset (reflection is gRPC only)"));
        // With the schema in files (or the bench schema), the request and its payload are built now too: a fill
        // that does not fit the method fails here, not after the cells before it have run.
        const bool schemaFromFiles = !scenario.protos.isEmpty() || !scenario.protosets.isEmpty()
            || spec->server == RunServer::Builtin || spec->server == RunServer::None;
        if (schemaFromFiles) {
            // Every cell has the matrix's own .proto files or protosets: parsed for the first, reused after.
            const bool inFiles = !scenario.protos.isEmpty() || !scenario.protosets.isEmpty();
            std::optional<Schema> schema = inFiles ? schemaInFiles : std::nullopt;
            if (!schema) {
                QString details;
                schema = loadRunSchema(scenario, *spec, QString(), &problem, &details);
                if (inFiles)
                    schemaInFiles = schema;
            }
            if (schema && !prepareCall(*spec, *schema, &problem))
                return usageError(cmd, where + QStringLiteral(": ") + describeForCli(problem, scenario));
        }
        scenarios << scenario;
        wheres << where;
    }
    plan->base = *base;
    plan->matrixId = matrixId;
    plan->scenarios = scenarios;
    plan->wheres = wheres;
    return std::nullopt;
}

/// The stacks' own codec baselines, once per stack and payload, before any load (and so not disturbed by it): the
/// time in ns per (stack, payload), -1 when unknown.
QMap<QPair<QString, QString>, double> runMatrixBaselines(const QList<MatrixCell> &cells)
{
    QMap<QPair<QString, QString>, double> baselines;
    for (const MatrixCell &cell : std::as_const(cells)) {
        const auto key = qMakePair(cell.stack, cell.payload);
        if (cell.baselineCommand.isEmpty() || baselines.contains(key))
            continue;
        err() << "rpcscope-cli matrix: " << cell.label() << ' ' << cell.payload << ": baseline " << cell.baselineCommand
              << " ...\n";
        err().flush();
        QString why;
        const std::optional<std::chrono::nanoseconds> time
            = BaselineCommand { cell.baselineCommand }.run(cell.payload, &why);
        if (!time) // the share is then unknown ("-"); the cells still run
            err() << "rpcscope-cli matrix: " << cell.label() << ' ' << cell.payload << ": " << why << '\n';
        baselines.insert(key, time ? static_cast<double>(time->count()) : -1.0);
    }
    return baselines;
}

/// Runs the cells one after the other; a cell that could not be run is a failed cell, the others still run.
std::optional<int> runMatrixCells(const QString &cmd, const QList<MatrixCell> &cells, const MatrixPlan &plan,
    const QMap<QPair<QString, QString>, double> &baselines, QList<MatrixResult> *into, QList<qint64> *saved)
{
    QList<MatrixResult> &results = *into;
    for (qsizetype i = 0; i < cells.size(); ++i) {
        const MatrixCell &cell = cells.at(i);
        const Scenario &scenario = plan.scenarios.at(i);
        const QString &where = plan.wheres.at(i);
        err() << "rpcscope-cli matrix: " << where << " ...\n";
        err().flush();
        RunOutcome outcome;
        outcome.save = true;
        const int code = runScenario(cmd, scenario, &outcome);
        if (code == ExitRuntime) {
            // This stack could not be run (its server did not start, its address did not resolve): said above, and
            // shown as a failed cell; the others still run.
            results.append({ cell, RunSnapshot(), QStringLiteral("could not be run (see the error above the table)"),
                baselines.value(qMakePair(cell.stack, cell.payload), -1.0) });
            continue;
        }
        if (code != ExitOk)
            return code;
        if (outcome.savedId > 0)
            *saved << outcome.savedId;
        results.append({ cell, outcome.snapshot, QString(), baselines.value(qMakePair(cell.stack, cell.payload), -1.0),
            outcome.serverProfile, outcome.clientProfile });
    }
    return std::nullopt;
}

/// The table on standard output and each -O/-o output; ExitRuntime when one could not be written.
int writeMatrixOutputs(const MatrixFlags &f, const QList<MatrixResult> &results, const QString &method)
{
    const QString &format = f.format;
    out() << (format == u"csv"      ? formatMatrixCsv(results)
            : format == u"markdown" ? formatMatrixMarkdown(results, method)
                                    : formatMatrixTable(results));
    // Under the table; after a CSV, on standard error, so that the CSV stays one table.
    if (const QString profiles = formatMatrixProfiles(results); !profiles.isEmpty())
        (format == u"csv" ? err() : out()) << '\n' << profiles;
    out().flush();
    for (const MatrixOutput &o : f.outputs) {
        QString error;
        QByteArray data;
        if (o.format == u"csv") {
            data = formatMatrixCsv(results).toUtf8();
        } else if (o.format == u"markdown") {
            data = formatMatrixMarkdown(results, method).toUtf8();
        } else if (o.format == u"html") {
            data = matrixHtmlReport(results, method, f.metric);
        } else {
            const ChartFormat chartFormat = o.format == u"png" ? ChartFormat::Png
                : o.format == u"svg"                           ? ChartFormat::Svg
                                                               : ChartFormat::Pdf;
            data = renderMatrixChart(results, *parseMatrixChart(o.chart.isEmpty() ? f.chart : o.chart), f.metric,
                chartFormat, f.chartOptions, &error);
        }
        if (data.isEmpty()) {
            err() << "rpcscope-cli matrix: -O " << o.format << " -o " << o.file << ": " << error << '\n';
            return ExitRuntime;
        }
        if (o.file == u"-") {
            out() << QString::fromUtf8(data);
            out().flush();
        } else if (!writeOutputFile(o.file, data, &error)) {
            err() << "rpcscope-cli matrix: -o " << error << '\n';
            return ExitRuntime;
        } else {
            err() << "Wrote " << o.file << " (" << o.format << ")\n";
        }
    }
    return ExitOk;
}

} // namespace

int matrixCommand(const QStringList &arguments)
{
    const QString cmd = QStringLiteral("matrix");
    MatrixFlags f;
    if (const std::optional<int> code = parseMatrixFlags(cmd, arguments, &f))
        return *code;
    if (const std::optional<int> code = checkMatrixFlags(cmd, &f))
        return *code;
    QList<MatrixCell> cells;
    if (const std::optional<int> code = matrixCellsOf(cmd, f, &cells))
        return *code;
    MatrixPlan plan;
    if (const std::optional<int> code = planMatrixCells(cmd, f, &cells, &plan))
        return *code;
    const QMap<QPair<QString, QString>, double> baselines = runMatrixBaselines(cells);
    QList<MatrixResult> results;
    QList<qint64> saved;
    if (const std::optional<int> code = runMatrixCells(cmd, cells, plan, baselines, &results, &saved))
        return *code;
    if (const int code = writeMatrixOutputs(f, results, plan.base.method); code != ExitOk)
        return code;
    if (!saved.isEmpty())
        err() << "Saved " << saved.size() << " cells as runs #" << saved.first() << " to #" << saved.last()
              << ", labelled matrix:" << plan.matrixId << '\n';
    return ExitOk;
}

} // namespace rpcscope::cli
