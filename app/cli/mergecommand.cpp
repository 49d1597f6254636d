#include "mergecommand.h"

#include "cliapp.h"

#include "export/exporter.h"
#include "report/textreport.h"
#include "store/runjson.h"
#include "store/runstore.h"
#include "store/segmentmerge.h"
#include "util/units.h"

#include <QCommandLineParser>
#include <QDateTime>
#include <QJsonDocument>

namespace rpcscope::cli {

namespace {

/// The workers side by side, so a slow one stands out: calls, throughput, p50/p99, client CPU, start skew, clock.
QString workerTable(const RunRecord &run)
{
    QString text = QStringLiteral("Workers (%1 of %2):\n").arg(run.split.workers.size()).arg(run.split.count);
    text += QStringLiteral("  %1 %2 %3 %4 %5 %6 %7 %8  %9\n")
                .arg(QStringLiteral("seg"), -5)
                .arg(QStringLiteral("host"), -20)
                .arg(QStringLiteral("calls"), 9)
                .arg(QStringLiteral("failed"), 7)
                .arg(QStringLiteral("rps"), 10)
                .arg(QStringLiteral("p50"), 10)
                .arg(QStringLiteral("p99"), 10)
                .arg(QStringLiteral("start"), 9)
                .arg(QStringLiteral("clock"));
    const int64_t first = run.split.firstStartUnixUs();
    const QStringList outlying = outlyingWorkers(run.split);
    for (qsizetype i = 0; i < run.split.workers.size(); ++i) {
        const WorkerRecord &w = run.split.workers[i];
        const QString start = w.timedStartUnixUs > 0 && first > 0
            ? QStringLiteral("+%1").arg(formatDuration(std::chrono::microseconds(w.timedStartUnixUs - first)))
            : QStringLiteral("-");
        QString clock = w.clock == WorkerRecord::Clock::Synchronized ? QStringLiteral("synchronized")
            : w.clock == WorkerRecord::Clock::Unsynchronized         ? QStringLiteral("NOT synchronized")
                                                                     : QStringLiteral("unknown");
        if (w.clockErrorUs >= 0)
            clock += QStringLiteral(" (+/- %1)")
                         .arg(formatDuration(std::chrono::microseconds(static_cast<int64_t>(w.clockErrorUs))));
        text += QStringLiteral("  %1 %2 %3 %4 %5 %6 %7 %8  %9\n")
                    .arg(QStringLiteral("%1/%2").arg(w.index).arg(run.split.count), -5)
                    .arg(w.host.left(20), -20)
                    .arg(w.calls, 9)
                    .arg(w.failed, 7)
                    .arg(QString::number(w.requestsPerSecond(), 'f', 1), 10)
                    .arg(w.calls > w.failed ? formatDuration(std::chrono::nanoseconds(w.p50Ns)) : QStringLiteral("-"),
                        10)
                    .arg(w.calls > w.failed ? formatDuration(std::chrono::nanoseconds(w.p99Ns)) : QStringLiteral("-"),
                        10)
                    .arg(start, 9)
                    .arg(clock);
        if (!outlying[i].isEmpty())
            text += QStringLiteral("        ^ stands out: %1\n").arg(outlying[i]);
    }
    if (run.split.partial) {
        QStringList missing;
        for (int i : run.split.missing)
            missing << QStringLiteral("%1/%2").arg(i).arg(run.split.count);
        text += QStringLiteral("PARTIAL: segment(s) %1 missing; the totals are the workers' above only.\n")
                    .arg(missing.join(QStringLiteral(", ")));
    }
    return text;
}

} // namespace

int mergeCommand(const QStringList &arguments)
{
    const QString cmd = QStringLiteral("merge");
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "Merges the JSON reports of a split run (each worker ran `run --segment I/N -O json`) into one run, as if\n"
        "one process had run the whole plan: histograms merged exactly (the percentiles are the whole run's, not an\n"
        "average of the workers'), statuses, errors, bytes and CPU summed, the time series merged interval by\n"
        "interval on the wall clock. Prints the merged summary and each worker's figures. Refuses reports of\n"
        "different plans, a segment given twice, or a missing one (unless --partial)."));
    parser.addHelpOption();
    parser.addPositionalArgument(QStringLiteral("REPORT"),
        QStringLiteral("The segments' rpcscope JSON reports, or folders of them (every *.json)."),
        QStringLiteral("REPORT..."));
    parser.addOptions({
        { { QStringLiteral("o"), QStringLiteral("output") },
            QStringLiteral("Write the merged run as an rpcscope JSON report here ('-' = standard output)."),
            QStringLiteral("FILE") },
        { QStringLiteral("partial"),
            QStringLiteral("Merge the segments that are there when some are missing; the run is marked partial.") },
        { QStringLiteral("save"), QStringLiteral("Save the merged run in the history.") },
        { QStringLiteral("db"), QStringLiteral("Run history database (implies --save)."), QStringLiteral("PATH") },
        { QStringLiteral("label"), QStringLiteral("Label for the saved run (repeatable; implies --save)."),
            QStringLiteral("TEXT") },
        { QStringLiteral("name"), QStringLiteral("Name of the merged run."), QStringLiteral("NAME") },
    });
    if (!parser.parse(arguments))
        return usageError(cmd, parser.errorText());
    if (printCommandHelp(parser, cmd))
        return ExitOk;
    const QStringList inputs = parser.positionalArguments().mid(1);
    if (inputs.isEmpty())
        return usageError(cmd, QStringLiteral("expected the segments' reports (files or folders)"));
    QStringList empty;
    const QStringList files = jsonFilesOf(inputs, &empty);
    if (!empty.isEmpty())
        return usageError(cmd, QStringLiteral("%1: no *.json files in this folder").arg(empty.first()));
    const QString output = parser.value(QStringLiteral("output"));
    QString error;
    if (!output.isEmpty() && output != u"-" && !checkOutputPath(output, &error))
        return usageError(cmd, QStringLiteral("-o ") + error);

    QList<SegmentReport> reports;
    for (const QString &file : files) {
        std::optional<RunRecord> run = importRunFile(file, &error);
        if (!run)
            return usageError(cmd, file + QStringLiteral(": ") + error);
        reports.append({ file, *run });
    }
    std::optional<RunRecord> merged = mergeSegments(reports, parser.isSet(QStringLiteral("partial")), &error);
    if (!merged)
        return usageError(cmd, error);
    merged->name = parser.value(QStringLiteral("name"));
    for (const QString &label : parser.values(QStringLiteral("label"))) {
        if (!merged->labels.contains(label))
            merged->labels << label;
    }

    const bool toStdout = output == u"-";
    QTextStream &text = toStdout ? err() : out();
    text << "Merged " << merged->split.workers.size() << " segment(s) of " << merged->split.count << ": "
         << merged->method << " over " << merged->transport << ", target " << merged->target << '\n';
    text << formatTextSummary(merged->snapshot) << '\n' << workerTable(*merged);
    text.flush();
    if (!output.isEmpty()) {
        const QByteArray json = QJsonDocument(runToJson(*merged)).toJson(QJsonDocument::Indented);
        if (toStdout) {
            out() << QString::fromUtf8(json);
            out().flush();
        } else if (!writeOutputFile(output, json, &error)) {
            err() << "rpcscope-cli " << cmd << ": -o " << error << '\n';
            return ExitRuntime;
        } else {
            err() << "Wrote " << output << '\n';
        }
    }
    const bool save = parser.isSet(QStringLiteral("save")) || parser.isSet(QStringLiteral("db"))
        || parser.isSet(QStringLiteral("label"));
    if (save) {
        RunStore store;
        const QString path = historyPath(parser);
        if (!store.open(path, &error))
            return usageError(cmd, QStringLiteral("--db ") + error);
        const qint64 id = store.addRun(*merged, &error);
        if (id == 0) {
            err() << "rpcscope-cli " << cmd << ": --db " << path << ": " << error << '\n';
            return ExitRuntime;
        }
        err() << "Saved as run #" << id << " in " << path << '\n';
    }
    err().flush();
    return ExitOk;
}

} // namespace rpcscope::cli
