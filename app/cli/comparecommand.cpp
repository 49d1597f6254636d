#include "comparecommand.h"

#include "cliapp.h"
#include "compare/sequentialab.h"
#include "report/comparereport.h"
#include "store/environment.h"
#include "store/runjson.h"
#include "store/runstore.h"
#include "util/inputfile.h"
#include "util/units.h"

#include <QCommandLineParser>
#include <QFile>
#include <QJsonDocument>

#include <algorithm>

namespace rpcscope::cli {

namespace {

const char *const kCompareHelp
    = R"HELP(Usage: rpcscope-cli compare A B [--threshold 5%] [--format text|markdown] [--db PATH]

Compares B against A (the baseline). Each side is one run or several:
  12, last, last~N, label:NAME~N   one run from the history ('history list' shows the IDs)
  3,4,5   or   last~5,last~4,last~3   several runs, listed
  label:NAME                        every run with that label, e.g. compare label:before label:after
  FILE                              an rpcscope JSON report (or a comma list of them)

Prints p50, p90, p95, p99, p99.9, mean, req/s, client and server CPU per call, peak RSS and error rate with the
change, then the verdict, e.g. "regression: p50 +19.1% (95% CI +17.0 .. +21.3%, p < 0.001) [5 vs 5 runs, ...]".

What the verdict rests on (docs/statistics.md):
  - several runs a side: the runs are the replicates (as benchstat does with its -count runs): each statistic
    per run, Welch's t test on their logs, p Holm-adjusted over p50, p95, p99 and the mean;
  - one A/B side against the other (from 'ab'): its blocks, or its server processes with --restarts, pair by
    pair (the i-th of each ran side by side: Student's t on the logs of their ratios);
  - one plain run against one plain run: nothing measures how much a run differs from the next, so the verdict
    is "inconclusive: one run per side" and the exit code 0; --per-call judges such a pair call by call (a
    bootstrap and Mann-Whitney over the calls), which ignores run-to-run noise and says so.
Beside each verdict, the smallest change the comparison could detect at this noise; "inconclusive: noise too
high" when that is above the threshold.

  --threshold T     smallest change that counts as a regression or improvement (default 5%)
  --confidence C    of the intervals (default 95%)
  --per-call        judge one run against one run call by call (see above)
  --format F        text (default) or markdown (a table to paste into an issue)
  --replicates N    bootstrap replicates, for --per-call (default 2000)
  --db PATH         run history database

Exit codes: 0 no regression (or inconclusive); 4 a regression beyond the threshold (p50, p95, p99 or the
mean), for CI jobs; 2 bad usage or input.
)HELP";

QString groupName(const QList<RunRecord> &runs)
{
    if (runs.size() == 1)
        return runs.first().displayName();
    QStringList ids;
    for (const RunRecord &run : runs)
        ids << (run.id ? QStringLiteral("#%1").arg(run.id) : run.displayName());
    return QStringLiteral("%1 runs (%2)").arg(runs.size()).arg(ids.join(QStringLiteral(", ")));
}

} // namespace

std::optional<RunRecord> loadRun(RunStore &store, const QString &storePath, const QString &text, QString *error)
{
    if (RunStore::isReference(text) && !QFile::exists(text)) {
        if (!store.isOpen() && !store.open(storePath, error, RunStore::OpenMode::ReadOnly))
            return std::nullopt;
        const qint64 id = store.resolve(text, error);
        if (id == 0)
            return std::nullopt;
        return store.load(id, error);
    }
    QString why;
    const std::optional<QByteArray> data = readInputFile(text, inputlimits::kReport, &why);
    if (!data) {
        *error = QStringLiteral("%1: %2 (give a run ID from 'history list' or a JSON report)").arg(text, why);
        return std::nullopt;
    }
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(*data, &parseError);
    if (parseError.error != QJsonParseError::NoError) {
        *error = QStringLiteral("%1: not JSON (%2 at offset %3)")
                     .arg(text, parseError.errorString())
                     .arg(parseError.offset);
        return std::nullopt;
    }
    auto run = runFromJson(doc.object(), &why);
    if (!run)
        *error = text + QStringLiteral(": ") + why;
    return run;
}

std::optional<QList<RunRecord>> loadRunGroup(
    RunStore &store, const QString &storePath, const QString &text, QString *error)
{
    const QStringList parts
        = text.contains(u',') && !QFile::exists(text) ? text.split(u',', Qt::SkipEmptyParts) : QStringList { text };
    QList<RunRecord> runs;
    for (const QString &part : parts) {
        const QString label
            = part.startsWith(QStringLiteral("label:")) && !part.contains(u'~') ? part.mid(6) : QString();
        if (!label.isEmpty() && !QFile::exists(part)) {
            if (!store.isOpen() && !store.open(storePath, error, RunStore::OpenMode::ReadOnly))
                return std::nullopt;
            const std::vector<qint64> ids = store.idsWithLabel(label, error);
            if (ids.empty())
                return std::nullopt;
            for (const qint64 id : ids) {
                auto run = store.load(id, error);
                if (!run)
                    return std::nullopt;
                runs.push_back(std::move(*run));
            }
            continue;
        }
        auto run = loadRun(store, storePath, part.trimmed(), error);
        if (!run) {
            if (parts.size() > 1)
                *error = QStringLiteral("in \"%1\": %2").arg(text, *error);
            return std::nullopt;
        }
        runs.push_back(std::move(*run));
    }
    if (runs.isEmpty()) {
        *error = QStringLiteral("\"%1\" names no run").arg(text);
        return std::nullopt;
    }
    return runs;
}

Comparison printComparison(const RunRecord &a, const RunRecord &b, const CompareOptions &options, bool markdown)
{
    return printComparison(QList<RunRecord> { a }, QList<RunRecord> { b }, options, markdown);
}

Comparison printComparison(
    const QList<RunRecord> &groupA, const QList<RunRecord> &groupB, const CompareOptions &options, bool markdown)
{
    const RunRecord &a = groupA.first();
    const RunRecord &b = groupB.first();
    Comparison c;
    if (groupA.size() == 1 && groupB.size() == 1) {
        c = compareSides(CompareSide::fromRun(a.snapshot, okLatenciesUs(a.rawSamples, a.snapshot.expectedStatuses)),
            CompareSide::fromRun(b.snapshot, okLatenciesUs(b.rawSamples, b.snapshot.expectedStatuses)), options);
    } else {
        QList<RunSnapshot> snapshotsA;
        QList<RunSnapshot> snapshotsB;
        for (const RunRecord &run : groupA)
            snapshotsA << run.snapshot;
        for (const RunRecord &run : groupB)
            snapshotsB << run.snapshot;
        c = compareSides(CompareSide::fromRuns(snapshotsA), CompareSide::fromRuns(snapshotsB), options);
    }
    const QString nameA = QStringLiteral("A: ") + groupName(groupA);
    const QString nameB = QStringLiteral("B: ") + groupName(groupB);
    out() << (markdown ? formatComparisonMarkdown(c, nameA, nameB) : formatComparisonTable(c, nameA, nameB));
    const QStringList differences = runDifferences(a, b);
    if (!differences.isEmpty()) {
        out() << (markdown ? QStringLiteral("\nWhat differs between the runs:\n\n")
                           : QStringLiteral("\nWhat differs between the runs:\n"));
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
        { QStringLiteral("threshold"), QStringLiteral("Regression threshold."), QStringLiteral("T"),
            QStringLiteral("5%") },
        { QStringLiteral("confidence"), QStringLiteral("Confidence level."), QStringLiteral("C"),
            QStringLiteral("95%") },
        { QStringLiteral("format"), QStringLiteral("text or markdown."), QStringLiteral("F"), QStringLiteral("text") },
        { QStringLiteral("replicates"), QStringLiteral("Bootstrap replicates."), QStringLiteral("N"),
            QStringLiteral("2000") },
        { QStringLiteral("per-call"), QStringLiteral("Judge one run against one run call by call.") },
        { QStringLiteral("db"), QStringLiteral("Run history database."), QStringLiteral("PATH") },
    });
    if (!parser.parse(arguments))
        return usageError(cmd, parser.errorText());
    if (printCommandHelp(parser, cmd, QString::fromUtf8(kCompareHelp)))
        return ExitOk;
    const QStringList runs = parser.positionalArguments().mid(1);
    if (runs.size() != 2)
        return usageError(
            cmd, QStringLiteral("expected two sides A B (runs, run lists or label:NAME), got %1").arg(runs.size()));
    CompareOptions options;
    QString error;
    if (!parseFraction(parser.value(QStringLiteral("threshold")), &options.threshold, &error))
        return usageError(cmd, QStringLiteral("--threshold: ") + error);
    if (!parseFraction(parser.value(QStringLiteral("confidence")), &options.confidence, &error)
        || options.confidence < 0.5)
        return usageError(cmd,
            QStringLiteral("--confidence: expected 50% to 99.9%, got \"%1\"")
                .arg(parser.value(QStringLiteral("confidence"))));
    bool ok = false;
    options.replicates = parser.value(QStringLiteral("replicates")).toInt(&ok);
    if (!ok || options.replicates < 100 || options.replicates > 1000000)
        return usageError(cmd, QStringLiteral("--replicates: expected 100 to 1000000"));
    const QString format = parser.value(QStringLiteral("format"));
    if (format != u"text" && format != u"markdown")
        return usageError(cmd, QStringLiteral("--format: \"%1\" is not text or markdown").arg(format));
    options.perCallWhenSingleRun = parser.isSet(QStringLiteral("per-call"));
    RunStore store;
    const QString storePath = historyPath(parser);
    std::optional<QList<RunRecord>> a = loadRunGroup(store, storePath, runs.at(0), &error);
    if (!a)
        return usageError(cmd, QStringLiteral("A: ") + error);
    std::optional<QList<RunRecord>> b = loadRunGroup(store, storePath, runs.at(1), &error);
    if (!b)
        return usageError(cmd, QStringLiteral("B: ") + error);
    for (const RunRecord &ra : std::as_const(*a)) {
        for (const RunRecord &rb : std::as_const(*b)) {
            if (ra.id != 0 && ra.id == rb.id)
                return usageError(cmd,
                    QStringLiteral("run #%1 is on both sides (\"%2\" and \"%3\"): nothing to compare")
                        .arg(ra.id)
                        .arg(runs.at(0), runs.at(1)));
        }
    }
    // The two sides of an A/B run judged until decided: that verdict first, judged again from their blocks.
    const std::optional<SequentialAb> judged
        = a->size() == 1 && b->size() == 1 ? sequentialVerdictOf(a->first(), b->first()) : std::nullopt;
    if (judged)
        out() << "Sequential verdict (the run was judged until decided, anytime-valid 95%, " << judged->basis()
              << "): " << judged->verdictLine(QStringLiteral("the run ended")) << "\n\n";
    const Comparison c = printComparison(*a, *b, options, format == u"markdown");
    if (judged)
        return judged->decision() == SequentialDecision::Regression ? ExitRegression : ExitOk;
    return c.overall == Verdict::Regression ? ExitRegression : ExitOk;
}

} // namespace rpcscope::cli
