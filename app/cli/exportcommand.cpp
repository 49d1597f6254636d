#include "exportcommand.h"
#include "renderedexport.h"

#include "cliapp.h"
#include "export/exporter.h"
#include "sliderender.h"
#include "store/runstore.h"

#include <QCommandLineParser>

namespace rpcscope::cli {

namespace {

const char *const kExportHelp
    = R"(Usage: rpcscope-cli export RUN... [--db PATH] -O FORMAT -o FILE [-O FORMAT -o FILE ...]

Writes runs from the history (RUN: an ID from 'history list', last, last~N, label:NAME or label:NAME~N) as
files; each -O FORMAT goes to the -o FILE given with it (pairs in order), and "-o -" (or a single -O without
-o) writes a text format to standard output. Every file is written whole or not at all.
Formats:
  summary        the text report (as 'run' prints it)
  csv            summary table, one row per run (several IDs give several rows)
  csv-histogram  the OK calls' latency histogram buckets (low_ns, high_ns, count, cumulative_fraction)
  csv-timeline   the time series (end_s, seconds, calls, errors, rps, p50_ms, p90_ms, p99_ms, concurrency)
  csv-raw        every call (sent_ns, latency_us, status); only for runs recorded with --raw-samples
  json           rpcscope's lossless JSON report ('import' reads it back)
  ghz-json       ghz's JSON report (-O json in ghz)
  hgrm           HdrHistogram percentile distribution in milliseconds (HdrHistogram plotter, hdr-plot)
  markdown       a table to paste into an issue (two IDs: with the comparison of the second against the first)
  folded         the run's CPU profile (run --profile) as folded stacks in CPU ns per call (FlameGraph's tools,
                 speedscope, hotspot's import)
  flamegraph     the CPU profile as a self-contained flame graph SVG; two IDs: the second against the first,
                 coloured by how each function changed (red slower, blue faster, grey within noise)
  html           one self-contained HTML report (charts inline as SVG); two or more IDs: the comparison of
                 the second against the first, with overlays, the delta table and the verdict
  png, pdf, svg  a chart (--chart histogram|spectrum|timeline|throughput|message-histogram), several IDs
                 overlaid; PNG at 2x
  slide-png, slide-pdf
                 two IDs (the baseline, then the candidate) compared on one 16:9 slide for a deck or a room:
                 the verdict as the headline, the two latency distributions (--chart histogram|spectrum), the
                 per-block dots, p50, p99, req/s and client CPU per call of A and B with the change, what
                 differs and when and where each ran. When both runs have a CPU profile, a second page: where
                 B's time went, as a differential flame graph with the top three changes. PNG 1920x1080
                 (--chart-scale 2: 3840x2160; the second page beside it as NAME-profile.png), PDF widescreen pages
                 (13.33 x 7.5 in); --chart-size does not apply
Common: --db PATH (default: $RPCSCOPE_DB, else ~/.local/share/rpcscope/runs.sqlite).
)";

const char *const kImportHelp = R"(Usage: rpcscope-cli import FILE|DIR... [--db PATH] [--label TEXT]...

Adds runs to the history from JSON reports: ghz's ('ghz -O json') or rpcscope's own ('export -O json',
'history show --json'), told apart by their content. A DIR imports every *.json file in it (not its
subfolders). A ghz report without "details" is imported with an approximate histogram (labelled "approximate").
A file that cannot be read is reported and skipped; the exit code is then 2.
Common: --db PATH (default: $RPCSCOPE_DB, else ~/.local/share/rpcscope/runs.sqlite).
)";

/// Writes each rendered export to its output (standard output for "-"), and a slide's profile page beside its PNG;
/// ExitUsage at the first that cannot be written, naming it.
int writeExports(const QStringList &outputs, const QList<ExportFormat> &formats, const QList<QByteArray> &rendered,
    const QMap<qsizetype, QByteArray> &profilePages)
{
    QString error;
    auto write = [&](const QString &path, const QByteArray &data, const QString &what) {
        if (!writeOutputFile(path, data, &error)) {
            // Exit 2 as for any unusable file argument (run --raw-samples does the same).
            err() << "rpcscope-cli export: " << error << '\n';
            err().flush();
            return false;
        }
        err() << "Wrote " << path << " (" << what << ")\n";
        return true;
    };
    for (qsizetype i = 0; i < formats.size(); ++i) {
        const QString &path = outputs.at(i);
        if (path == u"-") {
            out() << QString::fromUtf8(rendered.at(i)); // text formats only: UTF-8 in, UTF-8 out
            out().flush();
            continue;
        }
        if (!write(path, rendered.at(i), exportFormatName(formats.at(i))))
            return ExitUsage;
        if (profilePages.contains(i)
            && !write(Slide::profilePagePath(path), profilePages.value(i), QStringLiteral("the slide's profile page")))
            return ExitUsage;
    }
    err().flush();
    return ExitOk;
}

} // namespace

int exportCommand(const QStringList &arguments)
{
    const QString cmd = QStringLiteral("export");
    QCommandLineParser parser;
    parser.addHelpOption();
    parser.addPositionalArgument(QStringLiteral("ID"), QStringLiteral("Runs to export (see 'history list')."));
    parser.addOptions({
        { QStringLiteral("db"), QStringLiteral("Run history database."), QStringLiteral("PATH") },
        { { QStringLiteral("O"), QStringLiteral("format") }, QStringLiteral("Output format (repeatable)."),
            QStringLiteral("FORMAT") },
        { { QStringLiteral("o"), QStringLiteral("output") },
            QStringLiteral("Output file for the -O before it; - for stdout."), QStringLiteral("FILE") },
        { QStringLiteral("chart"),
            QStringLiteral(
                "png/pdf/svg: histogram (default), spectrum, timeline, throughput or message-histogram (streams)."),
            QStringLiteral("CHART") },
        { QStringLiteral("chart-size"), QStringLiteral("png/pdf/svg: WIDTHxHEIGHT (default 1000x600)."),
            QStringLiteral("WxH") },
        { QStringLiteral("chart-scale"), QStringLiteral("png: pixels per point (default 2; slide-png 1)."),
            QStringLiteral("S") },
    });
    if (!parser.parse(arguments))
        return usageError(cmd, parser.errorText());
    if (printCommandHelp(parser, cmd, QString::fromUtf8(kExportHelp)))
        return ExitOk;
    const QStringList ids = parser.positionalArguments().mid(1);
    const QStringList formatNames = parser.values(QStringLiteral("O"));
    QStringList outputs = parser.values(QStringLiteral("o"));
    if (outputs.isEmpty() && formatNames.size() == 1)
        outputs << QStringLiteral("-"); // one format and no file: standard output, as ghz does
    if (ids.isEmpty())
        return usageError(cmd, QStringLiteral("expected a run ID (see 'history list')"));
    if (formatNames.isEmpty())
        return usageError(cmd,
            QStringLiteral("expected -O FORMAT -o FILE (formats: %1)")
                .arg(exportFormatNames().join(QStringLiteral(", "))));
    if (formatNames.size() != outputs.size())
        return usageError(cmd,
            QStringLiteral("each -O FORMAT needs its -o FILE (%1 formats, %2 files; -o - is stdout)")
                .arg(formatNames.size())
                .arg(outputs.size()));

    // Every format and ID is checked before anything is written: a typo in the last pair must not leave half
    // the files behind.
    QList<ExportFormat> formats;
    for (qsizetype i = 0; i < formatNames.size(); ++i) {
        const std::optional<ExportFormat> format = parseExportFormat(formatNames.at(i));
        if (!format)
            return usageError(cmd,
                QStringLiteral("-O %1: unknown format (%2)")
                    .arg(formatNames.at(i), exportFormatNames().join(QStringLiteral(", "))));
        if (ids.size() > 1 && !supportsSeveralRuns(*format) && !isRenderedFormat(*format))
            return usageError(cmd,
                QStringLiteral("-O %1 holds one run; %2 IDs given (csv and markdown take several)")
                    .arg(exportFormatName(*format))
                    .arg(ids.size()));
        if (isSlideFormat(*format) && ids.size() != 2)
            return usageError(cmd,
                QStringLiteral("-O %1 compares two runs: give the baseline and the candidate (2 IDs, %2 given)")
                    .arg(exportFormatName(*format))
                    .arg(ids.size()));
        if (outputs.at(i).isEmpty())
            return usageError(cmd, QStringLiteral("-o: expected a file name (or - for stdout)"));
        if (isSlideFormat(*format) && outputs.at(i) == u"-")
            return usageError(cmd,
                QStringLiteral("-O %1: give a file (-o FILE), not standard output").arg(exportFormatName(*format)));
        formats << *format;
    }

    RunStore store;
    QString error;
    if (!store.open(historyPath(parser), &error, RunStore::OpenMode::ReadOnly))
        return usageError(cmd, QStringLiteral("--db ") + error);
    QList<RunRecord> runs;
    for (const QString &text : ids) {
        const qint64 id = store.resolve(text, &error);
        if (id == 0)
            return usageError(cmd, error);
        std::optional<RunRecord> run = store.load(id, &error);
        if (!run)
            return usageError(cmd, error);
        runs << std::move(*run);
    }

    // Everything is rendered before the first file is written, so a format that cannot take these runs (csv-raw
    // without raw samples) leaves no files behind either.
    // --chart right after a png/pdf/svg output's -o is its own chart; another is every other one's.
    const ChartsByOutput chartNames = chartsByOutput(parser);
    QList<ChartKind> charts;
    for (qsizetype i = 0; i < formats.size(); ++i) {
        const QString name = chartNames.own.contains(i) && isRenderedFormat(formats.at(i)) ? chartNames.own.value(i)
                                                                                           : chartNames.others;
        const std::optional<ChartKind> chart = parseChartKind(name);
        if (!chart)
            return usageError(cmd,
                QStringLiteral("--chart: \"%1\" is not histogram, spectrum, timeline, throughput or message-histogram")
                    .arg(name));
        if (isSlideFormat(formats.at(i)) && *chart != ChartKind::Histogram && *chart != ChartKind::Spectrum)
            return usageError(cmd,
                QStringLiteral("--chart \"%1\" for -O %2: a slide shows histogram or spectrum")
                    .arg(name, exportFormatName(formats.at(i))));
        charts << *chart;
    }
    ChartOptions chartOptions;
    if (!parseChartOptions(parser.value(QStringLiteral("chart-size")), parser.value(QStringLiteral("chart-scale")),
            &chartOptions, &error))
        return usageError(cmd, error);
    QList<QByteArray> rendered;
    QMap<qsizetype, QByteArray> profilePages; // a slide-png's second page, by output
    for (qsizetype i = 0; i < formats.size(); ++i) {
        const ExportFormat format = formats.at(i);
        error.clear();
        ChartOptions options = chartOptions;
        // A slide is 1920x1080 as designed; 2x only when asked.
        if (isSlideFormat(format) && !parser.isSet(QStringLiteral("chart-scale")))
            options.scale = 1.0;
        rendered << (isRenderedFormat(format) ? renderExport(runs, format, charts.at(i), options, &error)
                                              : exportRuns(runs, format, &error));
        if (format == ExportFormat::SlidePng && error.isEmpty()) {
            if (QByteArray page = renderExport(runs, format, charts.at(i), options, &error, 1); !page.isEmpty())
                profilePages.insert(i, page);
        }
        if (!error.isEmpty())
            return usageError(cmd, error);
    }
    return writeExports(outputs, formats, rendered, profilePages);
}

int importCommand(const QStringList &arguments)
{
    const QString cmd = QStringLiteral("import");
    QCommandLineParser parser;
    parser.addHelpOption();
    parser.addPositionalArgument(
        QStringLiteral("FILE"), QStringLiteral("ghz or rpcscope-run JSON reports, or folders of them."));
    parser.addOptions({
        { QStringLiteral("db"), QStringLiteral("Run history database."), QStringLiteral("PATH") },
        { QStringLiteral("label"), QStringLiteral("Add a label to every imported run (repeatable)."),
            QStringLiteral("TEXT") },
    });
    if (!parser.parse(arguments))
        return usageError(cmd, parser.errorText());
    if (printCommandHelp(parser, cmd, QString::fromUtf8(kImportHelp)))
        return ExitOk;
    const QStringList inputs = parser.positionalArguments().mid(1);
    if (inputs.isEmpty())
        return usageError(cmd, QStringLiteral("expected FILE or DIR"));

    QStringList empty;
    const QStringList files = jsonFilesOf(inputs, &empty);
    for (const QString &folder : empty)
        err() << "rpcscope-cli import: " << folder << ": no *.json files in this folder\n";
    bool failed = !empty.isEmpty();

    RunStore store;
    QString error;
    const QString path = historyPath(parser);
    if (!store.open(path, &error))
        return usageError(cmd, QStringLiteral("--db ") + error);
    const QStringList labels = parser.values(QStringLiteral("label"));
    for (const QString &file : files) {
        std::optional<RunRecord> run = importRunFile(file, &error);
        if (!run) {
            err() << "rpcscope-cli import: " << file << ": " << error << '\n';
            failed = true;
            continue;
        }
        for (const QString &label : labels) {
            if (!run->labels.contains(label))
                run->labels << label;
        }
        const qint64 id = store.addRun(*run, &error);
        if (id == 0) {
            err() << "rpcscope-cli import: " << file << ": --db " << path << ": " << error << '\n';
            err().flush();
            return ExitRuntime;
        }
        out() << "imported " << file << " as run #" << id << '\n';
        out().flush();
    }
    err().flush();
    return failed ? ExitUsage : ExitOk;
}

} // namespace rpcscope::cli
