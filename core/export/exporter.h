#pragma once

#include "store/runrecord.h"
#include "util/outputfile.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace rpcscope {

/**
 * What a run can be exported as. The text formats are written here (core); Html, Png, Pdf, Svg and the slides are
 * rendered by the ui library and exportRun() refuses them.
 *
 * CSV files hold one table each, so LibreOffice and pandas read them without options; a run has four:
 * - Csv ("csv"): the summary, one row per run (runsSummaryCsv; several runs give several rows);
 * - CsvHistogram ("csv-histogram"): the OK calls' histogram buckets;
 * - CsvTimeline ("csv-timeline"): the time series, one row per interval;
 * - CsvRawSamples ("csv-raw"): every call, when the run recorded raw samples.
 */
enum class ExportFormat {
    Summary, ///< "summary": the ghz-like text report (formatTextSummary)
    Csv,
    CsvHistogram,
    CsvTimeline,
    CsvRawSamples,
    Json, ///< "json": rpcscope's lossless JSON report (runToJson), which `import` reads back
    GhzJson, ///< "ghz-json": ghz's JSON report (runToGhzJson)
    Hgrm, ///< "hgrm": HdrHistogram's percentile distribution of the OK calls, in milliseconds
    Markdown, ///< "markdown": a table for an issue (runsMarkdownTable)
    Folded, ///< "folded": the run's CPU profile (--profile) as folded stacks, in CPU ns per call
    FlameGraph, ///< "flamegraph": the profile as a flame graph SVG; of two runs, the differential one (B against A)
    Html,
    Png,
    Pdf,
    Svg,
    SlidePng, ///< "slide-png": two runs compared on one 16:9 slide, 1920x1080 (ui/sliderender.h)
    SlidePdf, ///< "slide-pdf": the same slide as a one-page PDF
};

/// "summary", "csv", "csv-histogram", "csv-timeline", "csv-raw", "json", "ghz-json", "hgrm", "markdown", "html", ...
QString exportFormatName(ExportFormat format);
/// Every format's name, in the enum's order (for --help and error messages).
QStringList exportFormatNames();
/// B's CPU profile against A's as a differential flame graph SVG (their server profiles, else their client
/// profiles); empty with @p error when one of them has none.
QByteArray differentialFlameGraph(const RunRecord &a, const RunRecord &b, QString *error);
/// The format named @p name (case-insensitive; "md" is markdown, "ghz" ghz-json); std::nullopt if none.
std::optional<ExportFormat> parseExportFormat(const QString &name);
/// The usual file name suffix without the dot: "txt", "csv", "json", "hgrm", "md", "html", "png", "pdf", "svg".
QString exportFileSuffix(ExportFormat format);
/// True for the formats exportRun() writes; false for html, png, pdf, svg and the slides (the ui library renders
/// those).
bool isTextFormat(ExportFormat format);
/// True for the formats that hold several runs in one file (csv summary rows, markdown table rows).
bool supportsSeveralRuns(ExportFormat format);

/**
 * @p run in a text format, as UTF-8. An empty result with @p error set when the format is not a text format or
 * the run lacks what it needs (csv-raw without raw samples).
 */
QByteArray exportRun(const RunRecord &run, ExportFormat format, QString *error);

/**
 * Several runs in one file: a summary row or a table row each (csv, markdown); for markdown with exactly two runs,
 * the comparison of the second against the first follows the table. Other formats take one run only.
 */
QByteArray exportRuns(const QList<RunRecord> &runs, ExportFormat format, QString *error);

/**
 * A run from a JSON report: rpcscope's own ("format": "rpcscope-run", runFromJson) or ghz's (runFromGhzJson,
 * origin "ghz: FILE" with FILE @p fileName's file name), told apart by content. The record's id is 0 (not stored).
 * Errors name the field ("latencyDistribution[2].latency: expected a number") or the JSON syntax error's offset.
 */
std::optional<RunRecord> importRunJson(const QByteArray &data, const QString &fileName, QString *error);
/// Reads @p path and imports it as importRunJson() does; errors do not repeat the path.
std::optional<RunRecord> importRunFile(const QString &path, QString *error);
/// @p inputs with every folder among them replaced by its *.json files, by name (reports to import); folders holding
/// none are added to @p emptyFolders. Other inputs are kept as given (a missing file is reported when it is read).
QStringList jsonFilesOf(const QStringList &inputs, QStringList *emptyFolders);

} // namespace rpcscope
