#include "historycommand.h"

#include "cliapp.h"
#include "compare/checks.h"
#include "report/textreport.h"
#include "store/runjson.h"
#include "store/runstore.h"
#include "util/printable.h"
#include "util/units.h"

#include <QCommandLineParser>
#include <QFileInfo>
#include <QJsonDocument>

namespace rpcscope::cli {

namespace {

const QString kCommand = QStringLiteral("history");

const char *const kHistoryHelp = R"(Usage: rpcscope-cli history SUBCOMMAND [OPTIONS]

The run history (runs saved by 'run --save', the GUI, 'ab' and 'import').
  list                  newest first; filters: --method TEXT, --target TEXT, --label TEXT, --filter TEXT
                        (name, method, target or label), --limit N
  show RUN              one run: what was run, where, the environment, and the report (--json: the JSON report)
  delete RUN...         remove runs
  rename RUN NAME       give a run a name
  label RUN [LABEL...]  set a run's labels (none: remove them)
RUN: an ID from 'list' (12 or #12), last (the newest run), last~N (N runs before it), label:NAME (the newest
run labelled NAME) or label:NAME~N.
Common: --db PATH (default: $RPCSCOPE_DB, else ~/.local/share/rpcscope/runs.sqlite).
)";

/// @p text in a column @p width wide, at least one space before the next (cut with an ellipsis when longer), its
/// control characters shown escaped (a name or label comes from whoever wrote the history).
QString cell(QString text, int width)
{
    text = printable(text);
    if (text.size() >= width)
        text = text.left(width - 2) + QChar(0x2026);
    return text.leftJustified(width);
}

/// history's subcommand argument and options.
void addHistoryOptions(QCommandLineParser &parser)
{
    parser.addHelpOption();
    parser.addPositionalArgument(QStringLiteral("subcommand"), QStringLiteral("list, show, delete, rename, label"));
    parser.addOptions({
        { QStringLiteral("db"), QStringLiteral("Run history database."), QStringLiteral("PATH") },
        { QStringLiteral("method"), QStringLiteral("list: runs whose method contains TEXT."), QStringLiteral("TEXT") },
        { QStringLiteral("target"), QStringLiteral("list: runs whose target contains TEXT."), QStringLiteral("TEXT") },
        { QStringLiteral("label"), QStringLiteral("list: runs with a label containing TEXT."), QStringLiteral("TEXT") },
        { QStringLiteral("filter"), QStringLiteral("list: TEXT in the name, method, target or a label."),
            QStringLiteral("TEXT") },
        { QStringLiteral("limit"), QStringLiteral("list: at most N runs."), QStringLiteral("N") },
        { QStringLiteral("json"), QStringLiteral("show: print the run as rpcscope's JSON report.") },
    });
}

/// list's table: one row a run, under a header.
void printRunTable(const std::vector<RunListEntry> &rows)
{
    out() << cell(QStringLiteral("ID"), 6) << cell(QStringLiteral("STARTED"), 17) << cell(QStringLiteral("STATUS"), 12)
          << cell(QStringLiteral("NAME"), 26) << cell(QStringLiteral("METHOD"), 18) << cell(QStringLiteral("STACK"), 17)
          << cell(QStringLiteral("CALLS"), 9) << cell(QStringLiteral("REQ/S"), 10) << cell(QStringLiteral("P50"), 10)
          << cell(QStringLiteral("P99"), 10) << QStringLiteral("LABELS") << '\n';
    for (const RunListEntry &e : rows) {
        const bool measured = e.hasOkCalls();
        const auto figure = [measured](const QString &text) { return measured ? text : QStringLiteral("-"); };
        out() << cell(QString::number(e.id), 6)
              << cell(e.startedAt.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm")), 17) << cell(e.status, 12)
              << cell(e.name.isEmpty() ? QStringLiteral("-") : e.name, 26) << cell(e.method.section(u'/', -1), 18)
              << cell(e.transport + u'/' + e.codec, 17) << cell(QString::number(e.calls), 9)
              << cell(figure(QString::number(e.rps, 'f', 0)), 10)
              << cell(figure(formatNanos(static_cast<double>(e.p50Ns))), 10)
              << cell(figure(formatNanos(static_cast<double>(e.p99Ns))), 10)
              << printable(e.labels.join(QStringLiteral(", "))) << '\n';
    }
    out().flush();
}

/// `history list`: the runs that pass the filter flags, newest first; nothing when @p nothingSaved.
int listRuns(const QCommandLineParser &parser, const RunStore &store, const QStringList &args, const QString &path,
    bool nothingSaved, QString *error)
{
    if (!args.isEmpty())
        return usageError(
            kCommand, QStringLiteral("list takes no arguments (filters are --method, --target, --label, --filter)"));
    RunFilter filter;
    filter.method = parser.value(QStringLiteral("method"));
    filter.target = parser.value(QStringLiteral("target"));
    filter.label = parser.value(QStringLiteral("label"));
    filter.text = parser.value(QStringLiteral("filter"));
    if (parser.isSet(QStringLiteral("limit"))) {
        bool ok = false;
        filter.limit = parser.value(QStringLiteral("limit")).toInt(&ok);
        if (!ok || filter.limit < 1)
            return usageError(kCommand,
                QStringLiteral("--limit: expected a number >= 1, got \"%1\"")
                    .arg(parser.value(QStringLiteral("limit"))));
    }
    const std::vector<RunListEntry> rows = nothingSaved ? std::vector<RunListEntry>() : store.list(filter, error);
    if (!error->isEmpty()) {
        err() << "rpcscope-cli history: " << path << ": " << *error << '\n';
        return ExitRuntime;
    }
    printRunTable(rows);
    return ExitOk;
}

/// The run the first of @p args names into @p id; false (with the usage error printed) when none is given or found.
bool resolveRun(const RunStore &store, const QString &sub, const QStringList &args, qint64 *id, QString *error)
{
    if (args.isEmpty()) {
        usageError(
            kCommand, QStringLiteral("%1: expected a run (an ID from 'history list', last, label:NAME)").arg(sub));
        return false;
    }
    *id = store.resolve(args.first(), error);
    if (*id == 0) {
        usageError(kCommand, QStringLiteral("%1: %2").arg(sub, *error));
        return false;
    }
    return true;
}

/// `history show`: the run @p id, as its JSON report with --json, else what was run, where, and its report.
int showRun(const QCommandLineParser &parser, const RunStore &store, qint64 id, QString *error)
{
    const auto run = store.load(id, error);
    if (!run)
        return usageError(kCommand, *error);
    if (parser.isSet(QStringLiteral("json"))) {
        out() << QJsonDocument(runToJson(*run)).toJson(QJsonDocument::Indented);
        out().flush();
        return ExitOk;
    }
    out() << "Run #" << run->id << (run->name.isEmpty() ? QString() : QStringLiteral(" \"%1\"").arg(run->name)) << ", "
          << run->status << '\n';
    out() << "  Started:     " << run->startedAt.toLocalTime().toString(Qt::ISODate) << '\n';
    out() << "  Method:      " << run->method << '\n';
    out() << "  Stack:       " << run->transport << " / " << run->codec << '\n';
    out() << "  Target:      " << run->target << '\n';
    if (!run->labels.isEmpty())
        out() << "  Labels:      " << run->labels.join(QStringLiteral(", ")) << '\n';
    if (run->origin != u"rpcscope")
        out() << "  Origin:      " << run->origin << '\n';
    if (!run->server.isEmpty())
        out() << "  Server:      " << QJsonDocument(run->server).toJson(QJsonDocument::Compact) << '\n';
    const QJsonObject env = run->environment;
    if (!env.isEmpty()) {
        out() << "  Environment: rpcscope " << env.value(QStringLiteral("rpcscope")).toString() << ", gRPC "
              << env.value(QStringLiteral("grpc")).toString() << ", protobuf "
              << env.value(QStringLiteral("protobuf")).toString() << ", " << env.value(QStringLiteral("os")).toString()
              << ", " << env.value(QStringLiteral("cpu_model")).toString() << " x"
              << env.value(QStringLiteral("cores")).toInt() << ", host "
              << env.value(QStringLiteral("hostname")).toString() << '\n';
    }
    out() << '\n' << formatTextSummary(run->snapshot);
    // The run's own checks, judged again on what was stored.
    if (const std::vector<CheckResult> checks = evaluateChecks(checksOfRun(run->scenario), run->snapshot);
        !checks.empty())
        out() << '\n' << formatCheckResults(checks);
    out().flush();
    return ExitOk;
}

/// `history delete`: the runs @p args name, all resolved before any is removed.
int deleteRuns(RunStore &store, const QStringList &args, QString *error)
{
    if (args.isEmpty())
        return usageError(kCommand, QStringLiteral("delete: expected run IDs"));
    QList<qint64> ids;
    for (const QString &a : args) {
        // all resolved first: "last last~1" means the two newest, not one twice
        const qint64 id = store.resolve(a, error);
        if (id == 0)
            return usageError(kCommand, QStringLiteral("delete: ") + *error);
        ids << id;
    }
    for (const qint64 each : ids) {
        if (!store.remove(each, error))
            return usageError(kCommand, *error);
        out() << "Deleted run #" << each << '\n';
    }
    return ExitOk;
}

} // namespace

int historyCommand(const QStringList &arguments)
{
    QCommandLineParser parser;
    addHistoryOptions(parser);
    if (!parser.parse(arguments))
        return usageError(kCommand, parser.errorText());
    const QStringList positional = parser.positionalArguments().mid(1);
    if (printCommandHelp(parser, kCommand, QString::fromUtf8(kHistoryHelp)))
        return ExitOk;
    if (positional.isEmpty()) {
        out() << kHistoryHelp;
        return ExitUsage;
    }
    const QString &sub = positional.first();
    const QStringList args = positional.mid(1);
    RunStore store;
    QString error;
    const QString path = historyPath(parser);
    // list and show only read: they write nothing to the history (no migration either).
    const bool reads = sub == u"list" || sub == u"show";
    // A history never written to lists as empty, as it is.
    const bool nothingSaved = sub == u"list" && !QFileInfo::exists(path);
    if (!nothingSaved
        && !store.open(path, &error, reads ? RunStore::OpenMode::ReadOnly : RunStore::OpenMode::ReadWrite))
        return usageError(kCommand, QStringLiteral("--db ") + error);

    if (sub == u"list")
        return listRuns(parser, store, args, path, nothingSaved, &error);

    qint64 id = 0;
    if (sub == u"show") {
        if (!resolveRun(store, sub, args, &id, &error))
            return ExitUsage;
        return showRun(parser, store, id, &error);
    }
    if (sub == u"delete")
        return deleteRuns(store, args, &error);
    if (sub == u"rename") {
        if (!resolveRun(store, sub, args, &id, &error))
            return ExitUsage;
        if (args.size() != 2)
            return usageError(kCommand, QStringLiteral("rename: expected ID NAME"));
        return store.rename(id, args.at(1), &error) ? ExitOk : usageError(kCommand, error);
    }
    if (sub == u"label") {
        if (!resolveRun(store, sub, args, &id, &error))
            return ExitUsage;
        return store.setLabels(id, args.mid(1), &error) ? ExitOk : usageError(kCommand, error);
    }
    return usageError(
        kCommand, QStringLiteral("unknown subcommand \"%1\" (list, show, delete, rename, label)").arg(sub));
}

} // namespace rpcscope::cli