#include "chartrender.h"

#include "charts.h"
#include "qcp.h"
#include "store/runrecord.h"
#include "util/outputfile.h"
#include "util/units.h"

#include <QBuffer>
#include <QDir>
#include <QFile>
#include <QPalette>
#include <QSvgGenerator>
#include <QTemporaryDir>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

namespace rpcscope {

namespace {

// Files get this theme whatever the desktop's: a chart pasted into a slide or printed must not come out black.
const QColor kBackground(Qt::white);
const QColor kText(0x20, 0x20, 0x20);
const QColor kGrid(0xc8, 0xc8, 0xc8);
const QColor kAccent(0x1f, 0x77, 0xb4);

// One color per run in overlays (Tableau 10): the baseline blue, the next orange; distinct in print and for the
// common color-vision deficiencies in the first few.
QColor runColor(qsizetype index)
{
    static const QColor colors[] = { QColor(0x1f, 0x77, 0xb4), QColor(0xff, 0x7f, 0x0e), QColor(0x2c, 0xa0, 0x2c),
        QColor(0xd6, 0x27, 0x28), QColor(0x94, 0x67, 0xbd), QColor(0x8c, 0x56, 0x4b), QColor(0xe3, 0x77, 0xc2),
        QColor(0x7f, 0x7f, 0x7f), QColor(0xbc, 0xbd, 0x22), QColor(0x17, 0xbe, 0xcf) };
    return colors[index % static_cast<qsizetype>(std::size(colors))];
}

QPalette filePalette()
{
    QPalette palette;
    palette.setColor(QPalette::Base, kBackground);
    palette.setColor(QPalette::Text, kText);
    palette.setColor(QPalette::Mid, kGrid);
    palette.setColor(QPalette::Highlight, kAccent);
    return palette;
}

// Pixel sizes, not point sizes: the same proportions in PNG, PDF and SVG whatever the screen's DPI. The family is
// CSS's generic name, which SVG files carry as it is: a browser knows "sans-serif", not the desktop's "Sans Serif".
QFont fileFont(int pixelSize, bool bold = false)
{
    QFont font(QStringLiteral("sans-serif"));
    font.setStyleHint(QFont::SansSerif);
    font.setPixelSize(pixelSize);
    font.setBold(bold);
    return font;
}

QString runName(const RunRecord *run)
{
    const QString name = run->displayName();
    return name.isEmpty() ? QObject::tr("this run") : name;
}

QVector<double> scaled(const QVector<double> &values, double factor)
{
    QVector<double> out;
    out.reserve(values.size());
    for (double v : values)
        out << v * factor;
    return out;
}

// Scatter dots only while they stay dots: on a long run they would merge into a thick band.
QCPScatterStyle pointStyle(qsizetype points)
{
    return points <= 120 ? QCPScatterStyle(QCPScatterStyle::ssDisc, 4) : QCPScatterStyle(QCPScatterStyle::ssNone);
}

/// The calls' latency histogram, or with @p messages a streaming run's per-message one.
void drawHistogram(QCustomPlot *plot, const QList<const RunRecord *> &runs, bool messages = false)
{
    const bool overlay = runs.size() > 1;
    auto of = [messages](const RunRecord *run) -> const LatencyHistogram & {
        return messages ? run->snapshot.messageLatency : run->snapshot.latency;
    };
    // Overlaid runs rarely have the same number of calls: shares make their shapes comparable.
    const QString unit = messages ? QObject::tr("messages") : QObject::tr("calls");
    setUpHistogramAxes(
        plot, overlay ? QObject::tr("share of %1 per bin (%)").arg(unit) : QObject::tr("%1 per bin").arg(unit));
    double lowMs = std::numeric_limits<double>::max();
    double highMs = 0;
    for (const RunRecord *run : runs) {
        if (of(run).isEmpty())
            continue;
        const auto [low, high] = histogramSpanMs(of(run));
        lowMs = std::min(lowMs, low);
        highMs = std::max(highMs, high);
    }
    if (highMs <= 0)
        return;
    double peak = 0;
    for (qsizetype i = 0; i < runs.size(); ++i) {
        const LatencyHistogram &h = of(runs[i]);
        if (h.isEmpty())
            continue;
        const HistogramBins bins = histogramBins(h, lowMs, highMs);
        QCPGraph *graph = plot->addGraph();
        graph->setLineStyle(QCPGraph::lsStepLeft);
        const QColor color = overlay ? runColor(i) : kAccent;
        QColor fill = color;
        fill.setAlpha(overlay ? 45 : 90);
        graph->setPen(QPen(color, overlay ? 2 : 1.5));
        graph->setBrush(fill);
        if (overlay) {
            const QVector<double> shares = scaled(bins.counts, 100.0 / static_cast<double>(h.count()));
            graph->setData(bins.edgesMs, shares, true);
            peak = std::max(peak, *std::max_element(shares.begin(), shares.end()));
            // The numbers people compare, next to the name, since overlaid marker lines would be a thicket; labelled
            // as all of the run's calls pooled, which a verdict judged on replicates does not compare.
            graph->setName(QStringLiteral("%1 (all calls: p50 %2, p99 %3)")
                               .arg(runName(runs[i]), formatNanos(static_cast<double>(h.percentile(50))),
                                   formatNanos(static_cast<double>(h.percentile(99)))));
        } else {
            graph->setData(bins.edgesMs, bins.counts, true);
            peak = bins.peak;
            graph->setName(runName(runs[i]));
        }
    }
    plot->xAxis->setRange(lowMs / 1.3, highMs * 1.3);
    // Room above the tallest bin for the stacked percentile labels.
    plot->yAxis->setRange(0, peak * (overlay ? 1.2 : 1.35));
    if (!overlay) {
        auto markers = HistogramMarkers(plot); // the items belong to the plot
        markers.update(of(runs.first()));
    }
}

void drawSpectrum(QCustomPlot *plot, const QList<const RunRecord *> &runs)
{
    setUpSpectrumAxes(plot);
    const bool overlay = runs.size() > 1;
    double lowMs = std::numeric_limits<double>::max();
    double highMs = 0;
    double rightKey = 1;
    auto add = [&](const LatencyHistogram &h, const QString &name, const QPen &pen) {
        if (h.isEmpty())
            return;
        const SpectrumCurve curve = spectrumCurve(h);
        QCPGraph *graph = plot->addGraph();
        graph->setName(name);
        graph->setPen(pen);
        graph->setData(curve.keys, curve.ms, true);
        lowMs = std::min(lowMs, curve.ms.first());
        highMs = std::max(highMs, curve.ms.last());
        rightKey = std::max(rightKey, curve.keys.last());
    };
    if (overlay) {
        for (qsizetype i = 0; i < runs.size(); ++i)
            add(runs[i]->snapshot.latency, runName(runs[i]), QPen(runColor(i), 2));
    } else {
        const RunSnapshot &s = runs.first()->snapshot;
        // Open loop: beside the latency from the intended send time, the one from the actual send, as on screen.
        add(s.latency,
            s.openLoop ? QObject::tr("%1: from intended send time").arg(runName(runs.first())) : runName(runs.first()),
            QPen(kAccent, 2));
        if (s.openLoop)
            add(s.serviceLatency, QObject::tr("from actual send time (uncorrected)"),
                QPen(mixColors(kText, kBackground, 0.6), 1.8));
    }
    plot->xAxis->setRange(0.9, std::max(rightKey * 1.5, 1e3));
    plot->yAxis->setRange(latencyRange(lowMs, highMs, 1.5));
    if (!overlay)
        SpectrumMarkers(plot).update(runs.first()->snapshot.latency);
}

void drawTimeline(QCustomPlot *plot, const QList<const RunRecord *> &runs)
{
    setUpLatencyTimeAxes(plot);
    const bool overlay = runs.size() > 1;
    double lowMs = std::numeric_limits<double>::max();
    double highMs = 0;
    double end = 0;
    for (qsizetype i = 0; i < runs.size(); ++i) {
        const TimelineSeries series = timelineSeries(runs[i]->snapshot.timeline);
        if (series.seconds.isEmpty())
            continue;
        if (series.highMs > 0) {
            lowMs = std::min(lowMs, series.lowMs);
            highMs = std::max(highMs, series.highMs);
        }
        end = std::max(end, series.endSeconds);
        // Overlays show p50 and p99 per run: three percentiles times several runs is a tangle.
        for (size_t j : overlay ? std::vector<size_t> { 0, 2 } : std::vector<size_t> { 0, 1, 2 }) {
            QCPGraph *graph = plot->addGraph();
            const QString percentile = QStringLiteral("p%1").arg(kMarkerPercentiles[j], 0, 'g', 4);
            if (overlay) {
                graph->setName(runName(runs[i]) + u' ' + percentile);
                graph->setPen(QPen(runColor(i), j == 0 ? 1.6 : 2, j == 0 ? Qt::SolidLine : Qt::DashLine));
            } else {
                graph->setName(percentile);
                graph->setPen(QPen(markerColor(static_cast<int>(j)), 1.8));
                graph->setScatterStyle(pointStyle(series.seconds.size()));
            }
            graph->setData(series.seconds, series.latencyMs[j], true);
        }
    }
    plot->xAxis->setRange(0, end > 0 ? end * 1.03 : 10);
    plot->yAxis->setRange(latencyRange(highMs > 0 ? lowMs : 0, highMs, 1.25));
}

void drawThroughput(QCustomPlot *plot, const QList<const RunRecord *> &runs)
{
    setUpThroughputAxes(plot);
    const bool overlay = runs.size() > 1;
    double end = 0;
    double top = 0;
    for (qsizetype i = 0; i < runs.size(); ++i) {
        const RunSnapshot &s = runs[i]->snapshot;
        const TimelineSeries series = timelineSeries(s.timeline);
        if (series.seconds.isEmpty())
            continue;
        end = std::max(end, series.endSeconds);
        top = std::max(top, series.topRate);
        QCPGraph *rate = plot->addGraph();
        rate->setData(series.seconds, series.rates, true);
        rate->setScatterStyle(pointStyle(series.seconds.size()));
        if (overlay) {
            rate->setName(runName(runs[i]) + QObject::tr(" OK calls/s"));
            rate->setPen(QPen(runColor(i), 1.8));
            // Errors a hundred times rarer than calls would be a flat dashed line on the axis: legend noise.
            const double errorShare = static_cast<double>(s.callsFailed()) / std::max<double>(1, s.callsCompleted());
            if (series.hasErrors && errorShare >= 0.005) {
                QCPGraph *errors = plot->addGraph();
                errors->setName(runName(runs[i]) + QObject::tr(" errors/s"));
                errors->setPen(QPen(runColor(i), 1.5, Qt::DashLine));
                errors->setData(series.seconds, series.errorRates, true);
            }
            continue;
        }
        rate->setName(QObject::tr("OK calls/s"));
        rate->setPen(QPen(kAccent, 1.8));
        QCPGraph *errors = plot->addGraph();
        errors->setName(QObject::tr("errors/s"));
        errors->setPen(QPen(errorColor(), 1.5));
        errors->setScatterStyle(pointStyle(series.seconds.size()));
        errors->setData(series.seconds, series.errorRates, true);
        if (series.topConcurrency > 0) {
            // Context for the rates, on its own axis and drawn under them.
            plot->addLayer(QStringLiteral("behind"), plot->layer(QStringLiteral("main")), QCustomPlot::limBelow);
            QCPGraph *concurrency = plot->addGraph(plot->xAxis, plot->yAxis2);
            concurrency->setLayer(QStringLiteral("behind"));
            const QString name = s.openLoop ? QObject::tr("calls in flight") : QObject::tr("callers");
            concurrency->setName(name);
            concurrency->setPen(QPen(mixColors(concurrencyColor(), kBackground, 0.7), 1.5));
            concurrency->setData(series.seconds, series.concurrency, true);
            auto ticker = QSharedPointer<QCPAxisTickerFixed>::create();
            ticker->setTickStep(1);
            ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
            plot->yAxis2->setTicker(ticker);
            plot->yAxis2->setLabel(name);
            plot->yAxis2->setVisible(true);
            plot->yAxis2->setRange(0, series.topConcurrency * 1.15);
        }
    }
    plot->xAxis->setRange(0, end > 0 ? end * 1.03 : 10);
    plot->yAxis->setRange(0, top > 0 ? top * 1.15 : 1);
}

void applyFileStyle(QCustomPlot *plot)
{
    applyChartPalette(plot, filePalette());
    for (QCPAxis *axis : { plot->xAxis, plot->yAxis, plot->xAxis2, plot->yAxis2 }) {
        axis->setTickLabelFont(fileFont(13));
        axis->setLabelFont(fileFont(14));
        axis->grid()->setPen(QPen(kGrid, 1, Qt::DotLine));
    }
    plot->setFont(fileFont(13));
    plot->legend->setFont(fileFont(13));
    // SVG output ignores clipping, and QCustomPlot draws a step graph's legend line 5 px past its icon, relying on
    // the clip: more padding keeps it off the text.
    plot->legend->setIconTextPadding(12);
    for (int i = 0; i < plot->itemCount(); ++i) {
        if (auto *text = qobject_cast<QCPItemText *>(plot->item(i)))
            text->setFont(fileFont(13, true));
    }
}

bool writeAtomically(const QString &path, const QByteArray &data, QString *error)
{
    QString why;
    if (writeOutputFile(path, data, &why))
        return true;
    if (error)
        *error = QObject::tr("Cannot write %1").arg(why);
    return false;
}

} // namespace

QColor chartRunColor(qsizetype index)
{
    return runColor(index);
}

QPalette chartFilePalette()
{
    return filePalette();
}

QFont chartFileFont(int pixelSize, bool bold)
{
    return fileFont(pixelSize, bold);
}

QString chartKindName(ChartKind kind)
{
    switch (kind) {
    case ChartKind::Histogram:
        return QObject::tr("Latency histogram");
    case ChartKind::Spectrum:
        return QObject::tr("Percentile spectrum");
    case ChartKind::Timeline:
        return QObject::tr("Latency over time");
    case ChartKind::Throughput:
        return QObject::tr("Throughput");
    case ChartKind::MessageHistogram:
        return QObject::tr("Message latency histogram");
    }
    return {};
}

QString chartFormatSuffix(ChartFormat format)
{
    switch (format) {
    case ChartFormat::Png:
        return QStringLiteral("png");
    case ChartFormat::Pdf:
        return QStringLiteral("pdf");
    case ChartFormat::Svg:
        return QStringLiteral("svg");
    }
    return {};
}

QString defaultChartTitle(const QList<const RunRecord *> &runs, ChartKind kind)
{
    QStringList names;
    for (const RunRecord *run : runs) {
        if (!run->displayName().isEmpty())
            names << run->displayName();
    }
    if (names.isEmpty())
        return chartKindName(kind);
    return chartKindName(kind) + QStringLiteral(": ")
        + names.join(names.size() == 2 ? QStringLiteral(" vs ") : QStringLiteral(", "));
}

QCustomPlot *createChartPlot(const QList<const RunRecord *> &runs, ChartKind kind, const ChartOptions &options)
{
    auto plot = std::make_unique<QCustomPlot>();
    plot->resize(options.width, options.height);
    // Long overlay names get a row each; a single run's few short entries share one.
    placeLegendBelow(plot.get(), runs.size() > 1 ? 2 : 4);
    switch (kind) {
    case ChartKind::Histogram:
        drawHistogram(plot.get(), runs);
        break;
    case ChartKind::Spectrum:
        drawSpectrum(plot.get(), runs);
        break;
    case ChartKind::Timeline:
        drawTimeline(plot.get(), runs);
        break;
    case ChartKind::Throughput:
        drawThroughput(plot.get(), runs);
        break;
    case ChartKind::MessageHistogram:
        drawHistogram(plot.get(), runs, true);
        break;
    }
    plot->legend->setVisible(plot->legend->itemCount() > 0);
    finishPlotForFile(plot.get(), options.title.isEmpty() ? defaultChartTitle(runs, kind) : options.title);
    return plot.release();
}

void finishPlotForFile(QCustomPlot *plot, const QString &title)
{
    plot->plotLayout()->insertRow(0);
    // Elided in the middle to the chart's width: a centred title wider than the chart was cut on both sides (two
    // long run names in an HTML report).
    const QFont titleFont = fileFont(17, true);
    const QString shown
        = plot->width() > 40 ? QFontMetrics(titleFont).elidedText(title, Qt::ElideMiddle, plot->width() - 24) : title;
    auto *titleElement = new QCPTextElement(plot, shown, titleFont);
    titleElement->setTextColor(kText);
    titleElement->setMargins(QMargins(8, 8, 8, 2));
    plot->plotLayout()->addElement(0, 0, titleElement);
    plot->plotLayout()->setRowStretchFactor(0, 0.001);
    applyFileStyle(plot);
    // Legend entries (a long run name with its p50 and p99) cut in the middle to their column, not by the edge.
    if (plot->legend->visible() && plot->width() > 40)
        (new LegendFitter(plot, std::max(1, plot->legend->wrap())))->fit();
}

QImage renderChartImage(const QList<const RunRecord *> &runs, ChartKind kind, const ChartOptions &options)
{
    if (runs.isEmpty())
        return {};
    std::unique_ptr<QCustomPlot> plot(createChartPlot(runs, kind, options));
    return plot->toPixmap(options.width, options.height, options.scale).toImage();
}

QByteArray renderChartSvg(const QList<const RunRecord *> &runs, ChartKind kind, const ChartOptions &options)
{
    if (runs.isEmpty())
        return {};
    std::unique_ptr<QCustomPlot> plot(createChartPlot(runs, kind, options));
    return plotToSvg(plot.get(), options, options.title.isEmpty() ? defaultChartTitle(runs, kind) : options.title);
}

QByteArray plotToSvg(QCustomPlot *plot, const ChartOptions &options, const QString &title)
{
    QBuffer buffer;
    buffer.open(QIODevice::WriteOnly);
    QSvgGenerator generator;
    generator.setOutputDevice(&buffer);
    generator.setSize(QSize(options.width, options.height));
    generator.setViewBox(QRect(0, 0, options.width, options.height));
    // Qt 6.4 writes the document title unescaped: a run named "a<b" would break the XML. A token that needs no
    // escaping stands in for it, and the escaped title replaces the token below.
    const QByteArray titleToken = "rpcscope-chart-title-placeholder";
    generator.setTitle(QString::fromLatin1(titleToken));
    generator.setDescription(QStringLiteral("rpcscope"));
    QCPPainter painter;
    if (!painter.begin(&generator))
        return {};
    painter.setMode(QCPPainter::pmVectorized);
    painter.setMode(QCPPainter::pmNonCosmetic);
    plot->toPainter(&painter, options.width, options.height);
    painter.end();
    QByteArray svg = buffer.data();
    svg.replace(titleToken, title.toHtmlEscaped().toUtf8());
    return svg;
}

QByteArray renderChartPdf(
    const QList<const RunRecord *> &runs, ChartKind kind, const ChartOptions &options, QString *error)
{
    if (runs.isEmpty()) {
        if (error)
            *error = QObject::tr("No run to draw");
        return {};
    }
    std::unique_ptr<QCustomPlot> plot(createChartPlot(runs, kind, options));
    return plotToPdf(
        plot.get(), options, options.title.isEmpty() ? defaultChartTitle(runs, kind) : options.title, error);
}

QByteArray plotToPdf(QCustomPlot *plot, const ChartOptions &options, const QString &title, QString *error)
{
    // QCustomPlot writes PDFs only to a file name: a private temporary one, read back whole.
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("chart.pdf"));
    if (!dir.isValid()
        || !plot->savePdf(path, options.width, options.height, QCP::epNoCosmetic, QStringLiteral("rpcscope"), title)) {
        if (error)
            *error = QObject::tr("Cannot render the PDF in a temporary folder");
        return {};
    }
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        if (error)
            *error = QObject::tr("Cannot read back the PDF: %1").arg(file.errorString());
        return {};
    }
    return file.readAll();
}

bool renderChart(const QList<const RunRecord *> &runs, ChartKind kind, ChartFormat format, const ChartOptions &options,
    const QString &path, QString *error)
{
    if (runs.isEmpty()) {
        if (error)
            *error = QObject::tr("No run to draw");
        return false;
    }
    QByteArray data;
    switch (format) {
    case ChartFormat::Png: {
        const QImage image = renderChartImage(runs, kind, options);
        QBuffer buffer(&data);
        buffer.open(QIODevice::WriteOnly);
        if (image.isNull() || !image.save(&buffer, "PNG")) {
            if (error)
                *error = QObject::tr("Cannot render the PNG for %1").arg(QDir::toNativeSeparators(path));
            return false;
        }
        break;
    }
    case ChartFormat::Pdf:
        data = renderChartPdf(runs, kind, options, error);
        if (data.isEmpty())
            return false;
        break;
    case ChartFormat::Svg:
        data = renderChartSvg(runs, kind, options);
        if (data.isEmpty()) {
            if (error)
                *error = QObject::tr("Cannot render the SVG for %1").arg(QDir::toNativeSeparators(path));
            return false;
        }
        break;
    }
    return writeAtomically(path, data, error);
}

} // namespace rpcscope
