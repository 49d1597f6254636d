#pragma once

// Charts of stored runs drawn offscreen into files, images and SVG text: for reports, slides and the clipboard.

#include <QByteArray>
#include <QColor>
#include <QFont>
#include <QImage>
#include <QList>
#include <QPalette>
#include <QString>

class QCustomPlot;

namespace rpcscope {

struct RunRecord;

enum class ChartKind {
    Histogram, ///< latency histogram: log-spaced bins on a log latency axis
    Spectrum, ///< percentile spectrum on HdrHistogram's 1/(1-p) axis
    Timeline, ///< latency over time (p50, p90, p99 per interval)
    Throughput, ///< requests/s (and errors/s) over time
    MessageHistogram, ///< streaming runs: the latency of each received message, binned as Histogram
};

enum class ChartFormat { Png, Pdf, Svg };

struct ChartOptions {
    int width = 1000; ///< in logical pixels (PDF: points at screen resolution)
    int height = 600;
    double scale = 1.0; ///< PNG and images only: the pixel size is width * scale (2 for a "retina" image)
    QString title; ///< empty = a title from the kind and the run names
};

/// The colour of run @p index (the baseline first) in every chart written to a file: the same as on screen.
QColor chartRunColor(qsizetype index);

/// The light theme of charts written to files, whatever the desktop's: white base, dark text, light grey grid.
QPalette chartFilePalette();
/// The font of charts written to files: sans-serif at @p pixelSize pixels (the same proportions in PNG, PDF, SVG).
QFont chartFileFont(int pixelSize, bool bold = false);

/// "Latency histogram", "Percentile spectrum", "Latency over time", "Throughput", "Message latency histogram".
QString chartKindName(ChartKind kind);
/// "png", "pdf", "svg".
QString chartFormatSuffix(ChartFormat format);
/// The title a chart gets when ChartOptions::title is empty: the kind, then the run name (or "A vs B").
QString defaultChartTitle(const QList<const RunRecord *> &runs, ChartKind kind);

/**
 * A chart of @p runs on a plot of its own, in the light file theme: one run as the run page draws it (histogram
 * with percentile lines, spectrum with percentile dots, p50/p90/p99 over time, rates and concurrency), several as
 * overlays, each run in its own color and named in the legend (the first is the baseline). The caller owns the
 * plot; it is never shown.
 */
QCustomPlot *createChartPlot(const QList<const RunRecord *> &runs, ChartKind kind, const ChartOptions &options);

/// Gives a plot drawn for a file its title row and the light file theme (fonts, grid): what createChartPlot does
/// last, for other charts written to files (the stack comparison's).
void finishPlotForFile(QCustomPlot *plot, const QString &title);
/// @p plot as an SVG document of the options' size, titled @p title (escaped: Qt writes it raw).
QByteArray plotToSvg(QCustomPlot *plot, const ChartOptions &options, const QString &title);
/// @p plot as a PDF document of the options' size; empty with @p error on failure.
QByteArray plotToPdf(QCustomPlot *plot, const ChartOptions &options, const QString &title, QString *error);

/// The chart as an image of width * scale by height * scale pixels; a null image when there is no run.
QImage renderChartImage(const QList<const RunRecord *> &runs, ChartKind kind, const ChartOptions &options = {});

/// The chart as an SVG document (vector paths, text as <text>); empty when there is no run.
QByteArray renderChartSvg(const QList<const RunRecord *> &runs, ChartKind kind, const ChartOptions &options = {});

/// The chart as a PDF document (vector); empty on failure, with @p error set.
QByteArray renderChartPdf(
    const QList<const RunRecord *> &runs, ChartKind kind, const ChartOptions &options = {}, QString *error = nullptr);

/**
 * Renders the chart and writes it to @p path atomically: the whole file or, on failure, nothing (an existing
 * file is left as it was). False with @p error naming the path and the reason.
 */
bool renderChart(const QList<const RunRecord *> &runs, ChartKind kind, ChartFormat format, const ChartOptions &options,
    const QString &path, QString *error = nullptr);

} // namespace rpcscope
