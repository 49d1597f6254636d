#include "exporter.h"

#include "csvexport.h"
#include "flamegraphsvg.h"
#include "ghzjson.h"
#include "hgrm.h"
#include "markdownexport.h"
#include "report/textreport.h"
#include "store/runjson.h"
#include "util/inputfile.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QSaveFile>

namespace rpcscope {

namespace {

struct FormatInfo {
    ExportFormat format;
    const char *name;
    const char *suffix;
    bool text;
    bool severalRuns;
};

constexpr FormatInfo kFormats[] = {
    { ExportFormat::Summary, "summary", "txt", true, false },
    { ExportFormat::Csv, "csv", "csv", true, true },
    { ExportFormat::CsvHistogram, "csv-histogram", "csv", true, false },
    { ExportFormat::CsvTimeline, "csv-timeline", "csv", true, false },
    { ExportFormat::CsvRawSamples, "csv-raw", "csv", true, false },
    { ExportFormat::Json, "json", "json", true, false },
    { ExportFormat::GhzJson, "ghz-json", "json", true, false },
    { ExportFormat::Hgrm, "hgrm", "hgrm", true, false },
    { ExportFormat::Markdown, "markdown", "md", true, true },
    { ExportFormat::Folded, "folded", "folded", true, false },
    { ExportFormat::FlameGraph, "flamegraph", "svg", true, true },
    { ExportFormat::Html, "html", "html", false, false },
    { ExportFormat::Png, "png", "png", false, false },
    { ExportFormat::Pdf, "pdf", "pdf", false, false },
    { ExportFormat::Svg, "svg", "svg", false, false },
    { ExportFormat::SlidePng, "slide-png", "png", false, false },
    { ExportFormat::SlidePdf, "slide-pdf", "pdf", false, false },
};

const FormatInfo &infoOf(ExportFormat format)
{
    for (const FormatInfo &info : kFormats) {
        if (info.format == format)
            return info;
    }
    return kFormats[0];
}

QByteArray failed(QString *error, const QString &message)
{
    if (error)
        *error = message;
    return {};
}

} // namespace

QString exportFormatName(ExportFormat format)
{
    return QString::fromLatin1(infoOf(format).name);
}

QStringList exportFormatNames()
{
    QStringList names;
    for (const FormatInfo &info : kFormats)
        names << QString::fromLatin1(info.name);
    return names;
}

std::optional<ExportFormat> parseExportFormat(const QString &name)
{
    const QString key = name.trimmed().toLower();
    if (key == u"md")
        return ExportFormat::Markdown;
    if (key == u"ghz" || key == u"ghzjson")
        return ExportFormat::GhzJson;
    for (const FormatInfo &info : kFormats) {
        if (key == QLatin1String(info.name))
            return info.format;
    }
    return std::nullopt;
}

QString exportFileSuffix(ExportFormat format)
{
    return QString::fromLatin1(infoOf(format).suffix);
}

bool isTextFormat(ExportFormat format)
{
    return infoOf(format).text;
}

bool supportsSeveralRuns(ExportFormat format)
{
    return infoOf(format).severalRuns;
}

QByteArray exportRun(const RunRecord &run, ExportFormat format, QString *error)
{
    switch (format) {
    case ExportFormat::Summary:
        return formatTextSummary(run.snapshot).toUtf8();
    case ExportFormat::Csv:
        return runsSummaryCsv({ run });
    case ExportFormat::CsvHistogram:
        return histogramCsv(run.snapshot.latency);
    case ExportFormat::CsvTimeline:
        return timelineCsv(run.snapshot.timeline);
    case ExportFormat::CsvRawSamples:
        if (run.rawSamples.empty())
            return failed(error,
                QStringLiteral("csv-raw: run %1 has no raw samples (record them with 'run --raw-samples FILE')")
                    .arg(run.displayName()));
        return rawSamplesCsv(run.rawSamples);
    case ExportFormat::Json:
        return QJsonDocument(runToJson(run)).toJson(QJsonDocument::Indented);
    case ExportFormat::GhzJson:
        return QJsonDocument(runToGhzJson(run)).toJson(QJsonDocument::Indented);
    case ExportFormat::Hgrm:
        return histogramToHgrm(run.snapshot.latency);
    case ExportFormat::Markdown:
        return runsMarkdownTable({ run }).toUtf8();
    case ExportFormat::Folded:
    case ExportFormat::FlameGraph: {
        const std::optional<Profile> &profile = run.serverProfile ? run.serverProfile : run.clientProfile;
        if (!profile || profile->isEmpty())
            return failed(error,
                QStringLiteral("%1: run %2 has no CPU profile (run it with --profile or --profile-client)")
                    .arg(exportFormatName(format), run.displayName()));
        if (format == ExportFormat::Folded)
            return toFoldedNsPerCall(profile->usPerCall()).toUtf8();
        FlameGraphSvgOptions options;
        options.title = QStringLiteral("%1 CPU per call: %2")
                            .arg(profile->scope == u"client" ? QStringLiteral("Client") : QStringLiteral("Server"),
                                run.displayName());
        return flameGraphSvg(buildFlameTree(profile->usPerCall(), QStringLiteral("all")), options).toUtf8();
    }
    case ExportFormat::Html:
    case ExportFormat::Png:
    case ExportFormat::Pdf:
    case ExportFormat::Svg:
    case ExportFormat::SlidePng:
    case ExportFormat::SlidePdf:
        break;
    }
    return failed(
        error, QStringLiteral("%1 is rendered by the ui library, not exportRun()").arg(exportFormatName(format)));
}

QByteArray differentialFlameGraph(const RunRecord &a, const RunRecord &b, QString *error)
{
    const bool server = a.serverProfile && b.serverProfile;
    const std::optional<Profile> &pa = server ? a.serverProfile : a.clientProfile;
    const std::optional<Profile> &pb = server ? b.serverProfile : b.clientProfile;
    if (!pa || !pb || pa->isEmpty() || pb->isEmpty())
        return failed(error,
            QStringLiteral("flamegraph: runs %1 and %2 do not both have a CPU profile (run them with --profile)")
                .arg(a.displayName(), b.displayName()));
    const ProfileDiff diff = diffProfiles(*pa, *pb);
    FlameGraphSvgOptions options;
    options.differential = true;
    options.title
        = QStringLiteral("%1 CPU per call: %2 against %3")
              .arg(server ? QStringLiteral("Server") : QStringLiteral("Client"), b.displayName(), a.displayName());
    options.subtitle
        = QStringLiteral("%1 -> %2 us per call; judged %3")
              .arg(QString::number(diff.totalA, 'f', 1), QString::number(diff.totalB, 'f', 1), diff.method);
    return flameGraphSvg(buildDiffFlameTree(pa->usPerCall(), pb->usPerCall(), diff, QStringLiteral("all")), options)
        .toUtf8();
}

QByteArray exportRuns(const QList<RunRecord> &runs, ExportFormat format, QString *error)
{
    if (runs.size() == 1)
        return exportRun(runs.first(), format, error);
    if (runs.isEmpty())
        return failed(error, QStringLiteral("no runs to export"));
    if (format == ExportFormat::Csv)
        return runsSummaryCsv(runs);
    if (format == ExportFormat::FlameGraph) {
        if (runs.size() == 2)
            return differentialFlameGraph(runs.at(0), runs.at(1), error);
        return failed(error,
            QStringLiteral("flamegraph draws one run, or the second of two against the first; %1 given")
                .arg(runs.size()));
    }
    if (format == ExportFormat::Markdown) {
        if (runs.size() == 2)
            return comparisonMarkdown(runs.at(0), runs.at(1)).toUtf8();
        return runsMarkdownTable(runs).toUtf8();
    }
    return failed(error,
        QStringLiteral("%1 holds one run; %2 given (csv and markdown take several)")
            .arg(exportFormatName(format))
            .arg(runs.size()));
}

std::optional<RunRecord> importRunJson(const QByteArray &data, const QString &fileName, QString *error)
{
    QJsonParseError parseError {};
    const QJsonDocument document = QJsonDocument::fromJson(data, &parseError);
    if (parseError.error != QJsonParseError::NoError) {
        if (error)
            *error = QStringLiteral("not JSON: %1 at offset %2").arg(parseError.errorString()).arg(parseError.offset);
        return std::nullopt;
    }
    if (!document.isObject()) {
        if (error)
            *error = QStringLiteral("expected a JSON object (a ghz or rpcscope-run report)");
        return std::nullopt;
    }
    const QJsonObject json = document.object();
    std::optional<RunRecord> run;
    if (json.contains(QStringLiteral("format"))) {
        run = runFromJson(json, error);
    } else if (looksLikeGhzReport(json)) {
        run = runFromGhzJson(json, QStringLiteral("ghz: ") + QFileInfo(fileName).fileName(), error);
    } else {
        if (error)
            *error
                = QStringLiteral("neither a ghz report (no \"count\" with \"statusCodeDistribution\", "
                                 "\"latencyDistribution\" or \"details\") nor an rpcscope-run report (no \"format\")");
        return std::nullopt;
    }
    if (!run)
        return std::nullopt;
    // A report from elsewhere is untrusted: numbers that do not add up would print nonsense (an error rate of
    // 922337203685477632%) in every comparison it takes part in. (A ghz report's figures are rebuilt consistent.)
    if (const QString why = snapshotInconsistency(run->snapshot);
        json.contains(QStringLiteral("format")) && !why.isEmpty()) {
        if (error)
            *error = why;
        return std::nullopt;
    }
    run->id = 0;
    return run;
}

std::optional<RunRecord> importRunFile(const QString &path, QString *error)
{
    QString why;
    const std::optional<QByteArray> data = readInputFile(path, inputlimits::kReport, &why);
    if (!data) {
        if (error)
            *error = why; // the callers name the file
        return std::nullopt;
    }
    return importRunJson(*data, path, error);
}

QStringList jsonFilesOf(const QStringList &inputs, QStringList *emptyFolders)
{
    QStringList files;
    for (const QString &input : inputs) {
        if (!QFileInfo(input).isDir()) {
            files << input;
            continue;
        }
        const QStringList names
            = QDir(input).entryList({ QStringLiteral("*.json") }, QDir::Files | QDir::Readable, QDir::Name);
        if (names.isEmpty())
            *emptyFolders << input;
        for (const QString &name : names)
            files << QDir(input).filePath(name);
    }
    return files;
}

} // namespace rpcscope
