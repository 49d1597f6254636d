#include "comparecommand.h"

#include "cliapp.h"
#include "report/comparereport.h"
#include "store/environment.h"
#include "store/runjson.h"
#include "store/runstore.h"

#include <QCommandLineParser>
#include <QFile>
#include <QJsonDocument>

#include <algorithm>

namespace rpcscope::cli {

namespace {

const char *const kCompareHelp = R"HELP(Usage: rpcscope-cli compare A B [--threshold 5%] [--format text|markdown] [--db PATH]

Compares run B against run A (the baseline). A and B are runs from the history (an ID from 'history list',
last, last~N, label:NAME or label:NAME~N; e.g. compare label:baseline last) or rpcscope JSON reports (files). Prints p50, p90, p95, p99, p99.9, mean, req/s, client and server CPU per call,
peak RSS and error rate with the change, a bootstrap confidence interval for the latency percentiles and a
Mann-Whitney rank test, then the verdict: "regression: p50 +19.1% (95% CI +17.0 .. +21.3%, ...)" or
"no significant change". Runs with raw samples (run --raw-samples) are compared call by call.

  --threshold T     smallest change that counts as a regression or improvement (default 5%)
  --confidence C    of the intervals (default 95%)
  --format F        text (default) or markdown (a table to paste into an issue)
  --replicates N    bootstrap replicates (default 2000)
  --db PATH         run history database

Exit codes: 0 no regression; 4 a regression beyond the threshold (p50, p95 or p99), for CI jobs;
2 bad usage or input.
)HELP";

} // namespace

std::optional<RunRecord> loadRun(RunStore &store, const QString &storePath, const QString &text, QString *error)
{
    if (RunStore::isReference(text) && !QFile::exists(text)) {
        if (!store.isOpen() && !store.open(storePath, error))
            return std::nullopt;
        const qint64 id = store.resolve(text, error);
        if (id == 0)
            return std::nullopt;
        return store.load(id, error);
    }
    QFile file(text);
    if (!file.open(QIODevice::ReadOnly)) {
        *error = QStringLiteral("%1: %2 (give a run ID from 'history list' or a JSON report)").arg(text, file.errorString());
        return std::nullopt;
    }
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(file.readAll(), &parseError);
    if (parseError.error != QJsonParseError::NoError) {
        *error = QStringLiteral("%1: not JSON (%2 at offset %3)").arg(text, parseError.errorString()).arg(parseError.offset);
        return std::nullopt;
    }
    QString why;
    auto run = runFromJson(doc.object(), &why);
    if (!run)
        *error = text + QStringLiteral(": ") + why;
    return run;
}

bool parseThreshold(const QString &text, double *fraction, QString *error)
{
    QString t = text.trimmed();
    const bool percent = t.endsWith(u'%');
    if (percent)
        t.chop(1);
    bool ok = false;
    double v = t.toDouble(&ok);
    if (!ok || v < 0) {
        *error = QStringLiteral("\"%1\" is not a percentage like 5% or 0.05").arg(text);
        return false;
    }
    // "5" means 5%, "0.05" means 5%: a bare number of 1 or more is read as percent.
    if (percent || v >= 1)
        v /= 100;
    if (v >= 1) {
        *error = QStringLiteral("\"%1\" is 100% or more").arg(text);
        return false;
    }
    *fraction = v;
    return true;
}

Comparison printComparison(const RunRecord &a, const RunRecord &b, const CompareOptions &options, bool markdown)
{
    const std::vector<uint32_t> rawA = okLatenciesUs(a.rawSamples);
    const std::vector<uint32_t> rawB = okLatenciesUs(b.rawSamples);
    const Comparison c = !rawA.empty() && !rawB.empty() ? compareRuns(a.snapshot, b.snapshot, rawA, rawB, options)
                                                        : compareRuns(a.snapshot, b.snapshot, options);
    const QString nameA = QStringLiteral("A: ") + a.displayName();
    const QString nameB = QStringLiteral("B: ") + b.displayName();
    out() << (markdown ? formatComparisonMarkdown(c, nameA, nameB) : formatComparisonTable(c, nameA, nameB));
    QStringList differences;
    for (const auto &[what, va, vb] : {std::tuple(QStringLiteral("method"), a.method, b.method),
                                       std::tuple(QStringLiteral("transport"), a.transport, b.transport),
                                       std::tuple(QStringLiteral("codec"), a.codec, b.codec),
                                       std::tuple(QStringLiteral("target"), a.target, b.target)}) {
        if (va != vb)
            differences << QStringLiteral("%1: %2 -> %3").arg(what, va, vb);
    }
    differences += environmentDifferences(a.environment, b.environment);
    for (const QString &line : environmentDifferences(a.server, b.server))
        differences << QStringLiteral("server ") + line;
    if (!differences.isEmpty()) {
        out() << (markdown ? QStringLiteral("\nWhat differs between the runs:\n\n") : QStringLiteral("\nWhat differs between the runs:\n"));
        for (const QString &line : differences)
            out() << (markdown ? QStringLiteral("- ") : QStringLiteral("  ")) << line << '\n';
    }
    out().flush();
    return c;
}

int compareCommand(const QStringList &arguments)
{
    const QString cmd = QStringLiteral("compare");
    QCommandLineParser parser;
    parser.addHelpOption();
    parser.addPositionalArgument(QStringLiteral("A"), QStringLiteral("baseline run"));
    parser.addPositionalArgument(QStringLiteral("B"), QStringLiteral("run compared against it"));
    parser.addOptions({
        {QStringLiteral("threshold"), QStringLiteral("Regression threshold."), QStringLiteral("T"), QStringLiteral("5%")},
        {QStringLiteral("confidence"), QStringLiteral("Confidence level."), QStringLiteral("C"), QStringLiteral("95%")},
        {QStringLiteral("format"), QStringLiteral("text or markdown."), QStringLiteral("F"), QStringLiteral("text")},
        {QStringLiteral("replicates"), QStringLiteral("Bootstrap replicates."), QStringLiteral("N"), QStringLiteral("2000")},
        {QStringLiteral("db"), QStringLiteral("Run history database."), QStringLiteral("PATH")},
    });
    if (!parser.parse(arguments))
        return usageError(cmd, parser.errorText());
    if (parser.isSet(QStringLiteral("help"))) {
        out() << kCompareHelp;
        return ExitOk;
    }
    const QStringList runs = parser.positionalArguments().mid(1);
    if (runs.size() != 2)
        return usageError(cmd, QStringLiteral("expected two runs A B (IDs or JSON reports), got %1").arg(runs.size()));
    CompareOptions options;
    QString error;
    if (!parseThreshold(parser.value(QStringLiteral("threshold")), &options.threshold, &error))
        return usageError(cmd, QStringLiteral("--threshold: ") + error);
    if (!parseThreshold(parser.value(QStringLiteral("confidence")), &options.confidence, &error) || options.confidence < 0.5)
        return usageError(cmd, QStringLiteral("--confidence: expected 50% to 99.9%, got \"%1\"").arg(parser.value(QStringLiteral("confidence"))));
    bool ok = false;
    options.replicates = parser.value(QStringLiteral("replicates")).toInt(&ok);
    if (!ok || options.replicates < 100 || options.replicates > 1000000)
        return usageError(cmd, QStringLiteral("--replicates: expected 100 to 1000000"));
    const QString format = parser.value(QStringLiteral("format"));
    if (format != u"text" && format != u"markdown")
        return usageError(cmd, QStringLiteral("--format: \"%1\" is not text or markdown").arg(format));
    RunStore store;
    const QString storePath = historyPath(parser);
    std::optional<RunRecord> a = loadRun(store, storePath, runs.at(0), &error);
    if (!a)
        return usageError(cmd, QStringLiteral("A: ") + error);
    std::optional<RunRecord> b = loadRun(store, storePath, runs.at(1), &error);
    if (!b)
        return usageError(cmd, QStringLiteral("B: ") + error);
    const bool bothStored = std::all_of(runs.cbegin(), runs.cend(),
                                        [](const QString &r) { return RunStore::isReference(r) && !QFile::exists(r); });
    if (bothStored && a->id == b->id)
        return usageError(cmd, QStringLiteral("\"%1\" and \"%2\" are both run #%3: nothing to compare").arg(runs.at(0), runs.at(1)).arg(a->id));
    const Comparison c = printComparison(*a, *b, options, format == u"markdown");
    return c.overall == Verdict::Regression ? ExitRegression : ExitOk;
}

} // namespace rpcscope::cli
