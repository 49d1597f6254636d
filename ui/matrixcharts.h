#pragma once

// The stack comparison's charts and report: grouped bars (a group per payload, a bar per stack) and latency-vs-size
// curves, drawn the same on the Compare stacks page and into files (`rpcscope-cli matrix -O png|svg|html`).

#include "chartrender.h"
#include "report/matrixreport.h"

#include <QByteArray>
#include <QColor>
#include <QList>
#include <QString>

#include <optional>

class QCustomPlot;

namespace rpcscope {

/// What the bars and curves show.
enum class MatrixMetric { Mean, P50, P99, RequestsPerSecond, ClientCpu };
/// "mean", "p50", "p99", "rps", "cpu" (the CLI's --metric); std::nullopt for another word.
std::optional<MatrixMetric> parseMatrixMetric(const QString &name);
/// As a chart labels it: "mean", "p50", "p99", "requests/s", "client CPU/call".
QString matrixMetricName(MatrixMetric metric);
/// Latencies in ms, requests/s, client CPU in us per call.
double matrixMetricValue(const MatrixResult &result, MatrixMetric metric);

/// A bar series' name: the stack (or transport/codec), with its callers when @p cells run several levels.
QString matrixSeriesName(const QList<MatrixCell> &cells, const MatrixCell &cell);
/// The size in a payload variant "field=SIZE[,field=SIZE]": the first SIZE, for the x axis of a size sweep.
std::optional<double> matrixPayloadSize(const QString &payload);
/// True when the payloads of @p cells are two or more sizes (a size sweep: curves can be drawn).
bool isSizeSweep(const QList<MatrixCell> &cells);

/**
 * Grouped bars of @p metric on @p plot (cleared first): a group per payload, a bar per series in order of first
 * appearance in @p cells. A cell in which no call ended OK has no bar (not a bar of 0), and a series that measured
 * nothing is "NAME (failed)" in the legend. Latencies on a log axis.
 */
void drawMatrixBars(
    QCustomPlot *plot, const QList<MatrixCell> &cells, const QList<MatrixResult> &results, MatrixMetric metric);
/// A bar's tooltip: the cell of series @p series at payload @p payloadIndex (0-based, the bars' order) with its
/// numbers (the metric shown, mean, p50, p99, OK calls/s, failures, codec share); empty when there is no such cell.
QString matrixBarTip(const QList<MatrixCell> &cells, const QList<MatrixResult> &results, const QString &series,
    int payloadIndex, MatrixMetric metric);
/// @p metric against payload size, a curve per series, on log axes; nothing when the payloads are not a size sweep.
void drawMatrixCurves(
    QCustomPlot *plot, const QList<MatrixCell> &cells, const QList<MatrixResult> &results, MatrixMetric metric);

enum class MatrixChart { Bars, Curves };
/// "bars", "curves"; std::nullopt for another word.
std::optional<MatrixChart> parseMatrixChart(const QString &name);

/**
 * A matrix's chart as a file: PNG (width * scale pixels), SVG or PDF, in the light file theme with a title. Empty
 * with @p error when it cannot be drawn (curves without a size sweep).
 */
QByteArray renderMatrixChart(const QList<MatrixResult> &results, MatrixChart chart, MatrixMetric metric,
    ChartFormat format, const ChartOptions &options, QString *error);

/**
 * One self-contained HTML page for stakeholders: the question (method, payloads, callers), the bars and (for a size
 * sweep) the curves inline as SVG, and the table with every cell, failed ones marked with their error.
 */
QByteArray matrixHtmlReport(const QList<MatrixResult> &results, const QString &method, MatrixMetric metric);

} // namespace rpcscope
