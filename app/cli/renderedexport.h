#pragma once

#include "chartrender.h"
#include "export/exporter.h"

#include <QCommandLineParser>
#include <QList>
#include <QMap>

#include <optional>

namespace rpcscope::cli {

/// html, png, pdf, svg and the slides: drawn offscreen by the ui library (charts with QCustomPlot), so the CLI needs
/// a QApplication on the offscreen platform for them (see main.cpp).
bool isRenderedFormat(ExportFormat format);
/// slide-png and slide-pdf: two runs (the baseline, then the candidate) on one 16:9 slide.
bool isSlideFormat(ExportFormat format);
/// "histogram" (default), "spectrum", "timeline", "throughput".
std::optional<ChartKind> parseChartKind(const QString &name);
/// True when the command line, or the scenario document it names (--scenario), asks for a rendered format (html, png,
/// pdf, svg): main() then makes a QApplication.
bool wantsRenderedFormat(int argc, char *argv[]);
/**
 * @p runs as an HTML report (one run; two or more: the comparison of the second against the first, with overlays)
 * or as @p chart in PNG (twice the size, for slides), PDF or SVG (several runs overlaid); or, for slide-png and
 * slide-pdf, exactly two runs compared on a 1920x1080 slide (PNG at the options' scale; @p chart its distribution:
 * histogram or spectrum). Empty with @p error on failure. A slide-png is its first page; @p slidePage 1 asks for its
 * profile page, empty without an error when the runs were not both profiled.
 */
QByteArray renderExport(const QList<RunRecord> &runs, ExportFormat format, ChartKind chart, const ChartOptions &options,
    QString *error, int slidePage = 0);
/// Which output each --chart belongs to. QCommandLineParser keeps the order of the options, not which value came
/// where: a --chart given right after an -o is that output's (index: the -o's, from 0), any other is the chart of
/// every output without its own (the last such wins; empty when none).
struct ChartsByOutput {
    QMap<qsizetype, QString> own;
    QString others;
};
ChartsByOutput chartsByOutput(const QCommandLineParser &parser);
/// --chart-size WxH (default 1000x600 logical pixels) and --chart-scale S (PNG pixels per logical pixel, default 2:
/// a 2000x1200 image; 1 for screen size, 3-4 for print) into @p options; false with @p error naming the flag.
bool parseChartOptions(const QString &size, const QString &scale, ChartOptions *options, QString *error);

} // namespace rpcscope::cli
