#include "matrixcharts.h"

#include "charts.h"
#include "qcp.h"
#include "util/units.h"

#include <QBuffer>
#include <QDateTime>
#include <QMap>
#include <QRegularExpression>

#include <algorithm>
#include <limits>
#include <memory>

namespace rpcscope {

namespace {

/// One colour per transport/codec (a user's stack: per series, in order), the same in both charts; readable on
/// light and dark backgrounds.
QColor seriesColor(const MatrixCell &cell, qsizetype series)
{
    if (!cell.stack.isEmpty()) {
        static const QColor palette[] = { QColor(0x1f, 0x77, 0xb4), QColor(0xff, 0x7f, 0x0e), QColor(0x2c, 0xa0, 0x2c),
            QColor(0xd6, 0x27, 0x28), QColor(0x94, 0x67, 0xbd), QColor(0x8c, 0x56, 0x4b), QColor(0xe3, 0x77, 0xc2),
            QColor(0x7f, 0x7f, 0x7f), QColor(0xbc, 0xbd, 0x22), QColor(0x17, 0xbe, 0xcf) };
        return palette[series % qsizetype(std::size(palette))];
    }
    // A hue per transport, a shade per codec: the eye groups a transport's bars, and no two series are
    // near-duplicates of different families (15 colours of one palette had several).
    QColor hue;
    switch (cell.transport) {
    case TransportKind::Grpc:
        hue = QColor(0x1f, 0x77, 0xb4); // blue
        break;
    case TransportKind::H2Grpc:
        hue = QColor(0x6a, 0x3d, 0x9a); // purple
        break;
    case TransportKind::Http:
        hue = QColor(0xe6, 0x7e, 0x10); // orange
        break;
    case TransportKind::Msgpack:
        hue = QColor(0x2c, 0xa0, 0x2c); // green
        break;
    case TransportKind::InProcess:
        hue = QColor(0x70, 0x70, 0x70); // grey: the baseline
        break;
    }
    switch (cell.codec) {
    case Codec::Protobuf:
        return hue;
    case Codec::Json:
        return hue.lighter(150);
    case Codec::Msgpack:
        return hue.darker(150);
    }
    return hue;
}

/// The series of a matrix (in order of first appearance) and its payloads (in order).
struct Series {
    QStringList names;
    QList<MatrixCell> first; ///< each series' first cell, for its colour
    QStringList payloads;
    QStringList labels; ///< stacks (or transport/codecs), without their callers
    QList<int> levels; ///< caller counts of the networked cells, in order

    /// A stack keeps its colour at every level, darker the more callers: the eye groups a stack's bars.
    QColor color(qsizetype series) const
    {
        const MatrixCell &cell = first.at(series);
        const QColor base = seriesColor(cell, labels.indexOf(cell.label()));
        const qsizetype level = levels.indexOf(cell.concurrency);
        return levels.size() > 1 && level > 0 && cell.transport != TransportKind::InProcess
            ? base.darker(100 + static_cast<int>(45 * level / (levels.size() - 1)))
            : base;
    }
};

Series seriesOf(const QList<MatrixCell> &cells)
{
    Series s;
    for (const MatrixCell &cell : cells) {
        if (!s.payloads.contains(cell.payload))
            s.payloads << cell.payload;
        if (!s.labels.contains(cell.label()))
            s.labels << cell.label();
        if (cell.transport != TransportKind::InProcess && cell.concurrency > 0 && !s.levels.contains(cell.concurrency))
            s.levels << cell.concurrency;
        const QString name = matrixSeriesName(cells, cell);
        if (!s.names.contains(name)) {
            s.names << name;
            s.first << cell;
        }
    }
    std::sort(s.levels.begin(), s.levels.end());
    return s;
}

/// "NAME (failed)" for a series that ran and measured nothing: its bars and points are missing, not 0.
QString legendName(const QList<MatrixCell> &cells, const QList<MatrixResult> &results, const QString &name)
{
    bool ran = false;
    bool measured = false;
    for (const MatrixResult &r : results) {
        if (matrixSeriesName(cells, r.cell) != name)
            continue;
        ran = true;
        measured = measured || r.run.latency.count() > 0;
    }
    return ran && !measured ? QObject::tr("%1 (failed)").arg(name) : name;
}

bool isLatency(MatrixMetric metric)
{
    return metric == MatrixMetric::Mean || metric == MatrixMetric::P50 || metric == MatrixMetric::P99;
}

QString axisLabel(MatrixMetric metric)
{
    switch (metric) {
    case MatrixMetric::RequestsPerSecond:
        return QObject::tr("requests/s");
    case MatrixMetric::ClientCpu:
        return QObject::tr("client CPU per call (us)");
    default:
        return QObject::tr("%1 latency (log scale)").arg(matrixMetricName(metric));
    }
}

/// An SVG document made fit to sit inside HTML: no XML declaration, sized by the page.
QString inlineSvg(const QByteArray &svg)
{
    QString text = QString::fromUtf8(svg);
    text.remove(QRegularExpression(QStringLiteral("^<\\?xml[^>]*>\\s*")));
    return text;
}

} // namespace

std::optional<MatrixMetric> parseMatrixMetric(const QString &name)
{
    const QString n = name.trimmed().toLower();
    if (n == u"mean")
        return MatrixMetric::Mean;
    if (n == u"p50")
        return MatrixMetric::P50;
    if (n == u"p99")
        return MatrixMetric::P99;
    if (n == u"rps" || n == u"req/s")
        return MatrixMetric::RequestsPerSecond;
    if (n == u"cpu")
        return MatrixMetric::ClientCpu;
    return std::nullopt;
}

QString matrixMetricName(MatrixMetric metric)
{
    switch (metric) {
    case MatrixMetric::Mean:
        return QObject::tr("mean");
    case MatrixMetric::P50:
        return QObject::tr("p50");
    case MatrixMetric::P99:
        return QObject::tr("p99");
    case MatrixMetric::RequestsPerSecond:
        return QObject::tr("requests/s");
    case MatrixMetric::ClientCpu:
        return QObject::tr("client CPU/call");
    }
    return {};
}

double matrixMetricValue(const MatrixResult &result, MatrixMetric metric)
{
    const RunSnapshot &run = result.run;
    switch (metric) {
    case MatrixMetric::Mean:
        return run.latency.count() ? run.latency.mean() / 1e6 : 0.0; // ms
    case MatrixMetric::P50:
        return static_cast<double>(run.latency.percentile(50)) / 1e6;
    case MatrixMetric::P99:
        return static_cast<double>(run.latency.percentile(99)) / 1e6;
    case MatrixMetric::RequestsPerSecond:
        return run.requestsPerSecond();
    case MatrixMetric::ClientCpu:
        return run.clientCpuPerCallUs();
    }
    return 0;
}

QString matrixSeriesName(const QList<MatrixCell> &cells, const MatrixCell &cell)
{
    bool severalLevels = false;
    for (const MatrixCell &other : cells)
        severalLevels = severalLevels
            || (other.concurrency > 0 && cell.concurrency > 0 && other.concurrency != cell.concurrency
                && other.transport != TransportKind::InProcess && cell.transport != TransportKind::InProcess);
    return severalLevels ? QStringLiteral("%1 c=%2").arg(cell.label()).arg(cell.concurrency) : cell.label();
}

std::optional<double> matrixPayloadSize(const QString &payload)
{
    const QString first = payload.section(QLatin1Char(','), 0, 0);
    const QString size = first.section(QLatin1Char('='), 1).trimmed();
    if (size.isEmpty())
        return std::nullopt;
    const auto bytes = parseByteSize(size);
    if (!bytes)
        return std::nullopt;
    return static_cast<double>(*bytes);
}

bool isSizeSweep(const QList<MatrixCell> &cells)
{
    const QStringList payloads = seriesOf(cells).payloads;
    return payloads.size() >= 2
        && std::all_of(payloads.begin(), payloads.end(), [](const QString &p) { return matrixPayloadSize(p); });
}

void drawMatrixBars(
    QCustomPlot *plot, const QList<MatrixCell> &cells, const QList<MatrixResult> &results, MatrixMetric metric)
{
    const Series series = seriesOf(cells);
    plot->clearPlottables();
    auto *group = new QCPBarsGroup(plot);
    group->setSpacing(1);
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    for (qsizetype i = 0; i < series.payloads.size(); ++i)
        ticker->addTick(static_cast<double>(i + 1),
            series.payloads.at(i).isEmpty() ? QObject::tr("(as given)") : series.payloads.at(i));
    plot->xAxis->setTicker(ticker);
    plot->xAxis->setRange(0.4, static_cast<double>(series.payloads.size()) + 0.6);
    const double width = 0.8 / std::max<qsizetype>(1, series.names.size());
    double top = 0;
    double bottom = std::numeric_limits<double>::max();
    for (qsizetype index = 0; index < series.names.size(); ++index) {
        auto *bars = new QCPBars(plot->xAxis, plot->yAxis);
        bars->setName(legendName(cells, results, series.names.at(index)));
        bars->setWidth(width);
        bars->setBarsGroup(group);
        const QColor color = series.color(index);
        bars->setPen(color.darker(130));
        bars->setBrush(color);
        for (const MatrixResult &r : results) {
            if (matrixSeriesName(cells, r.cell) != series.names.at(index) || !r.run.latency.count())
                continue; // a cell whose calls all failed has no bar (not a bar of 0): the table says why
            const double v = matrixMetricValue(r, metric);
            bars->addData(static_cast<double>(series.payloads.indexOf(r.cell.payload) + 1), v);
            top = std::max(top, v);
            if (v > 0)
                bottom = std::min(bottom, v);
        }
    }
    // Latencies span decades between the no-RPC baseline and a slow stack: a log axis keeps both readable.
    if (isLatency(metric) && top > 0) {
        plot->yAxis->setScaleType(QCPAxis::stLogarithmic);
        plot->yAxis->setRange(bottom / 2, top * 2);
        setLatencyTicks(plot->yAxis);
        // On a log axis a bar's base of 0 lies infinitely far down: it was drawn below the axis, over the payload
        // labels. The bars stand on the axis' bottom instead.
        for (int i = 0; i < plot->plottableCount(); ++i) {
            if (auto *bars = qobject_cast<QCPBars *>(plot->plottable(i)))
                bars->setBaseValue(bottom / 2);
        }
    } else {
        plot->yAxis->setScaleType(QCPAxis::stLinear);
        plot->yAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
        plot->yAxis->setRange(0, top > 0 ? top * 1.15 : 1);
    }
    plot->yAxis->setLabel(axisLabel(metric));
    plot->legend->setVisible(!series.names.isEmpty());
}

QString matrixBarTip(const QList<MatrixCell> &cells, const QList<MatrixResult> &results, const QString &series,
    int payloadIndex, MatrixMetric metric)
{
    const Series s = seriesOf(cells);
    for (qsizetype i = 0; i < results.size(); ++i) {
        const MatrixResult &r = results.at(i);
        if (matrixSeriesName(cells, r.cell) != series || s.payloads.indexOf(r.cell.payload) != payloadIndex)
            continue;
        const RunSnapshot &run = r.run;
        if (!run.latency.count())
            return QObject::tr("%1, %2: no call ended OK").arg(series, r.cell.payload);
        QString tip
            = QObject::tr("%1, %2, %3 callers\n%4: %5\nmean %6, p50 %7, p99 %8\n%9 OK calls/s, %10 failed")
                  .arg(series, r.cell.payload.isEmpty() ? QObject::tr("request as given") : r.cell.payload)
                  .arg(r.cell.concurrency)
                  .arg(matrixMetricName(metric),
                      isLatency(metric) ? formatNanos(matrixMetricValue(r, metric) * 1e6)
                                        : QString::number(matrixMetricValue(r, metric), 'f', 1))
                  .arg(formatNanos(run.latency.mean()), formatNanos(static_cast<double>(run.latency.percentile(50))),
                      formatNanos(static_cast<double>(run.latency.percentile(99))))
                  .arg(run.okPerSecond(), 0, 'f', 0)
                  .arg(run.callsFailed());
        const double share = codecShare(results, i);
        if (share >= 0)
            tip += QObject::tr("\ncodec share %1%").arg(share * 100, 0, 'f', 1);
        return tip;
    }
    return {};
}

void drawMatrixCurves(
    QCustomPlot *plot, const QList<MatrixCell> &cells, const QList<MatrixResult> &results, MatrixMetric metric)
{
    plot->clearGraphs();
    plot->xAxis->setScaleType(QCPAxis::stLogarithmic);
    plot->xAxis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
    plot->xAxis->setLabel(QObject::tr("payload size (bytes or elements, log scale)"));
    plot->yAxis->setLabel(matrixMetricName(metric));
    if (!isSizeSweep(cells))
        return;
    const Series series = seriesOf(cells);
    double lo = std::numeric_limits<double>::max(), hi = 0, ylo = std::numeric_limits<double>::max(), yhi = 0;
    for (qsizetype index = 0; index < series.names.size(); ++index) {
        QCPGraph *graph = plot->addGraph();
        graph->setName(legendName(cells, results, series.names.at(index)));
        graph->setPen(QPen(series.color(index), 2));
        graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 6));
        for (const MatrixResult &r : results) {
            if (matrixSeriesName(cells, r.cell) != series.names.at(index) || !r.run.latency.count())
                continue;
            const double x = *matrixPayloadSize(r.cell.payload);
            const double y = matrixMetricValue(r, metric);
            graph->addData(x, y);
            lo = std::min(lo, x);
            hi = std::max(hi, x);
            if (y > 0)
                ylo = std::min(ylo, y);
            yhi = std::max(yhi, y);
        }
    }
    if (hi <= 0)
        return;
    plot->xAxis->setRange(lo / 1.5, hi * 1.5);
    if (isLatency(metric) && ylo > 0 && ylo <= yhi) {
        plot->yAxis->setScaleType(QCPAxis::stLogarithmic);
        plot->yAxis->setRange(ylo / 2, yhi * 2);
        setLatencyTicks(plot->yAxis);
    } else {
        plot->yAxis->setScaleType(QCPAxis::stLinear);
        plot->yAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
        plot->yAxis->setRange(0, yhi * 1.15);
    }
}

std::optional<MatrixChart> parseMatrixChart(const QString &name)
{
    const QString n = name.trimmed().toLower();
    if (n.isEmpty() || n == u"bars")
        return MatrixChart::Bars;
    if (n == u"curves")
        return MatrixChart::Curves;
    return std::nullopt;
}

QByteArray renderMatrixChart(const QList<MatrixResult> &results, MatrixChart chart, MatrixMetric metric,
    ChartFormat format, const ChartOptions &options, QString *error)
{
    QList<MatrixCell> cells;
    for (const MatrixResult &r : results)
        cells << r.cell;
    if (chart == MatrixChart::Curves && !isSizeSweep(cells)) {
        *error = QObject::tr("curves need payloads that are two or more sizes of one field (--payloads "
                             "'nums=2;nums=1000')");
        return {};
    }
    auto plot = std::make_unique<QCustomPlot>();
    plot->resize(options.width, options.height);
    placeLegendBelow(plot.get(), 4);
    if (chart == MatrixChart::Bars)
        drawMatrixBars(plot.get(), cells, results, metric);
    else
        drawMatrixCurves(plot.get(), cells, results, metric);
    plot->legend->setVisible(plot->legend->itemCount() > 0);
    const QString title = !options.title.isEmpty() ? options.title
        : chart == MatrixChart::Bars               ? QObject::tr("Stacks compared: %1").arg(matrixMetricName(metric))
                                     : QObject::tr("%1 against payload size").arg(matrixMetricName(metric));
    finishPlotForFile(plot.get(), title);
    switch (format) {
    case ChartFormat::Png: {
        QByteArray png;
        QBuffer buffer(&png);
        buffer.open(QIODevice::WriteOnly);
        if (!plot->toPixmap(options.width, options.height, options.scale).toImage().save(&buffer, "PNG")) {
            *error = QObject::tr("cannot encode the PNG");
            return {};
        }
        return png;
    }
    case ChartFormat::Svg:
        return plotToSvg(plot.get(), options, title);
    case ChartFormat::Pdf:
        return plotToPdf(plot.get(), options, title, error);
    }
    return {};
}

QByteArray matrixHtmlReport(const QList<MatrixResult> &results, const QString &method, MatrixMetric metric)
{
    QList<MatrixCell> cells;
    QStringList payloads;
    QList<int> callers;
    for (const MatrixResult &r : results) {
        cells << r.cell;
        if (!payloads.contains(r.cell.payload))
            payloads << (r.cell.payload.isEmpty() ? QObject::tr("(as given)") : r.cell.payload);
        if (r.cell.transport != TransportKind::InProcess && !callers.contains(r.cell.concurrency))
            callers << r.cell.concurrency;
    }
    QStringList callerText;
    for (int c : callers)
        callerText << QString::number(c);
    auto esc = [](const QString &text) { return text.toHtmlEscaped(); };
    QString html = QStringLiteral(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>Stacks compared: %1</title>\n"
        "<style>\nbody { font-family: sans-serif; max-width: 1100px; margin: 2em auto; color: #202020; }\n"
        "table { border-collapse: collapse; font-size: 0.9em; } th, td { padding: 4px 8px; border-bottom: 1px solid "
        "#ddd; }\nth { text-align: left; } td.num { text-align: right; } tr.error td { color: #c0392b; }\n"
        "svg { width: 100%; height: auto; } .muted { color: #666; }\n</style></head><body>\n")
                       .arg(esc(method));
    html += QStringLiteral("<h1>Stacks compared: %1</h1>\n").arg(esc(method));
    html += QStringLiteral("<p>Payloads: %1. Callers: %2. %3 cells. Bars and curves: %4; a cell in which no call "
                           "ended OK has no bar and is marked in the table.</p>\n")
                .arg(esc(payloads.join(QStringLiteral(", "))), esc(callerText.join(QStringLiteral(", "))))
                .arg(results.size())
                .arg(esc(matrixMetricName(metric)));
    ChartOptions options;
    QString error;
    html += inlineSvg(renderMatrixChart(results, MatrixChart::Bars, metric, ChartFormat::Svg, options, &error));
    if (isSizeSweep(cells))
        html += inlineSvg(renderMatrixChart(results, MatrixChart::Curves, metric, ChartFormat::Svg, options, &error));
    const MatrixTable table = matrixTable(results);
    html += QStringLiteral("<h2>Every cell</h2>\n<table>\n<tr>");
    for (const QString &column : table.header)
        html += QStringLiteral("<th>%1</th>").arg(esc(column));
    html += QStringLiteral("<th></th></tr>\n");
    for (qsizetype i = 0; i < table.rows.size(); ++i) {
        const bool failed = !table.failures.at(i).isEmpty();
        html += failed ? QStringLiteral("<tr class=\"error\">") : QStringLiteral("<tr>");
        for (qsizetype c = 0; c < table.rows.at(i).size(); ++c)
            html += QStringLiteral("<td%1>%2</td>")
                        .arg(c >= 2 ? QStringLiteral(" class=\"num\"") : QString(), esc(table.rows.at(i).at(c)));
        html += QStringLiteral("<td>%1</td></tr>\n")
                    .arg(failed ? esc(QObject::tr("FAILED: %1").arg(table.failures.at(i))) : QString());
    }
    html += QStringLiteral("</table>\n<p class=\"muted\">codec share: the no-RPC baseline's mean over the cell's, for "
                           "cells served by rpcscope's built-in servers only. Written by rpcscope %1 on %2.</p>\n"
                           "</body></html>\n")
                .arg(esc(QString::fromLatin1(RPCSCOPE_VERSION)), QDateTime::currentDateTimeUtc().toString(Qt::ISODate));
    return html.toUtf8();
}

} // namespace rpcscope
