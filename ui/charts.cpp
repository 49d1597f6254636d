#include "charts.h"

#include "qcp.h"
#include "util/units.h"

#include <QEvent>
#include <QMouseEvent>
#include <QPalette>
#include <QToolTip>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace rpcscope {

namespace {

// 1-2-5 steps across a log range; only decades when that gives too many labels to read, and with @p finer, finer
// steps when it gives too few (a range under a decade would otherwise show two or three labels).
QList<double> logTicks(double lower, double upper, double floorValue, bool finer)
{
    const int first = static_cast<int>(std::floor(std::log10(std::max(lower, floorValue))));
    const int last = static_cast<int>(std::ceil(std::log10(std::max(upper, floorValue))));
    static const std::vector<double> steps[] = {{1, 2, 5}, {1, 2, 3, 5, 7}, {1, 2, 3, 4, 5, 6, 7, 8, 9}};
    QList<double> ticks;
    for (const auto &mantissas : steps) {
        ticks.clear();
        for (int exponent = first; exponent <= last; ++exponent) {
            for (double mantissa : mantissas) {
                const double v = mantissa * std::pow(10.0, exponent);
                if (v >= lower && v <= upper && v >= floorValue)
                    ticks << v;
            }
        }
        if (!finer || ticks.size() >= 4)
            break;
    }
    if (ticks.size() > 12) {
        QList<double> decades;
        for (double v : std::as_const(ticks))
            if (std::abs(std::log10(v) - std::round(std::log10(v))) < 1e-9)
                decades << v;
        ticks = decades;
    }
    return ticks;
}

} // namespace

void setLatencyTicks(QCPAxis *axis)
{
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    for (double v : logTicks(axis->range().lower, axis->range().upper, 0, true)) {
        // Compact labels for round tick values: "200 us", "1 ms", "10 s".
        const double ns = v * 1e6;
        const auto [scale, unit] = ns < 1e3 ? std::pair(1.0, "ns") : ns < 1e6 ? std::pair(1e3, "us")
                                 : ns < 1e9 ? std::pair(1e6, "ms") : std::pair(1e9, "s");
        ticker->addTick(v, QString::number(ns / scale, 'g', 3) + QLatin1Char(' ') + QLatin1String(unit));
    }
    axis->setTicker(ticker);
}

void setPercentileTicks(QCPAxis *axis)
{
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    // Long labels ("99.999%") crowd sooner than latency ones: past a handful, decades only.
    QList<double> ticks = logTicks(axis->range().lower, axis->range().upper, 1.0, false);
    if (ticks.size() > 7) {
        QList<double> decades;
        for (double v : std::as_const(ticks))
            if (std::abs(std::log10(v) - std::round(std::log10(v))) < 1e-9)
                decades << v;
        ticks = decades;
    }
    for (double v : std::as_const(ticks))
        ticker->addTick(v, formatPercentile(100.0 - 100.0 / v));
    axis->setTicker(ticker);
}

QString formatPercentile(double percent)
{
    if (percent <= 0)
        return QStringLiteral("0%");
    if (percent >= 100)
        return QStringLiteral("100%");
    // One significant digit of the distance to 100%, then trailing zeros dropped: 90%, 99.9%, 99.95%.
    const int decimals = std::clamp(static_cast<int>(std::ceil(-std::log10(100.0 - percent))) + 1, 0, 8);
    QString text = QString::number(percent, 'f', decimals);
    if (text.contains(QLatin1Char('.'))) {
        while (text.endsWith(QLatin1Char('0')))
            text.chop(1);
        if (text.endsWith(QLatin1Char('.')))
            text.chop(1);
    }
    return text + QLatin1Char('%');
}

QString formatNanosRange(double lowNs, double highNs)
{
    const QString low = formatNanos(lowNs);
    const QString high = formatNanos(highNs);
    const qsizetype lowSpace = low.lastIndexOf(QLatin1Char(' '));
    const qsizetype highSpace = high.lastIndexOf(QLatin1Char(' '));
    if (low.mid(lowSpace) == high.mid(highSpace))
        return low.left(lowSpace) + QLatin1Char('-') + high;
    return low + QLatin1Char('-') + high;
}

void applyChartPalette(QCustomPlot *plot, const QPalette &palette)
{
    const QColor text = palette.color(QPalette::Text);
    plot->setBackground(palette.brush(QPalette::Base));
    for (QCPAxis *axis : {plot->xAxis, plot->yAxis, plot->xAxis2, plot->yAxis2}) {
        axis->setBasePen(QPen(text));
        axis->setTickPen(QPen(text));
        axis->setSubTickPen(QPen(text));
        axis->setTickLabelColor(text);
        axis->setLabelColor(text);
        axis->grid()->setPen(QPen(palette.color(QPalette::Mid), 0, Qt::DotLine));
        axis->grid()->setZeroLinePen(Qt::NoPen);
    }
    plot->legend->setBrush(palette.brush(QPalette::Base));
    plot->legend->setTextColor(text);
}

void placeLegendBelow(QCustomPlot *plot, int columns)
{
    plot->legend->setVisible(false);
    plot->legend->setFont(plot->font());
    plot->axisRect()->insetLayout()->take(plot->legend);
    plot->plotLayout()->addElement(1, 0, plot->legend);
    plot->plotLayout()->setRowStretchFactor(1, 0.001);
    plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    plot->legend->setWrap(columns);
    plot->legend->setBorderPen(Qt::NoPen);
    plot->legend->setMargins(QMargins(4, 0, 4, 2));
}

PercentileSpectrum percentileSpectrum(const LatencyHistogram &histogram, int pointsPerDecade)
{
    PercentileSpectrum out;
    if (histogram.isEmpty())
        return out;
    const std::vector<LatencyHistogram::Bucket> buckets = histogram.buckets();
    const uint64_t count = histogram.count();
    const uint64_t min = histogram.min();
    const uint64_t max = histogram.max();
    out.percentiles << 0;
    out.nanos << static_cast<double>(min);
    // The same rank rule as LatencyHistogram::percentile(), walked once with a running sum instead of per point.
    size_t bucket = 0;
    uint64_t seen = buckets.front().count;
    for (int i = 1;; ++i) {
        const double x = std::pow(10.0, static_cast<double>(i) / pointsPerDecade);
        const double p = 100.0 - 100.0 / x;
        const auto rank = std::clamp<uint64_t>(
            static_cast<uint64_t>(std::ceil(p / 100.0 * static_cast<double>(count))), 1, count);
        if (rank >= count) // only the max is left above
            break;
        while (seen < rank && bucket + 1 < buckets.size())
            seen += buckets[++bucket].count;
        const LatencyHistogram::Bucket &b = buckets[bucket];
        const uint64_t high = b.highNs == UINT64_MAX ? max : b.highNs;
        out.percentiles << p;
        out.nanos << static_cast<double>(std::clamp(b.lowNs + (high - b.lowNs) / 2, min, max));
    }
    out.percentiles << 100;
    out.nanos << static_cast<double>(max);
    return out;
}

ChartHover::ChartHover(QCustomPlot *plot, Formatter formatter)
    : QObject(plot)
    , m_plot(plot)
    , m_tracer(new QCPItemTracer(plot))
    , m_formatter(std::move(formatter))
{
    // The marker lives on the buffered overlay layer: moving it repaints that layer, not the chart.
    m_tracer->setLayer(QStringLiteral("overlay"));
    m_tracer->setStyle(QCPItemTracer::tsCircle);
    m_tracer->setSize(9);
    m_tracer->setVisible(false);
    m_tracer->setSelectable(false);
    plot->setMouseTracking(true);
    plot->installEventFilter(this);
}

void ChartHover::hide()
{
    if (m_tracer->visible()) {
        m_tracer->setVisible(false);
        m_plot->layer(QStringLiteral("overlay"))->replot();
    }
    if (!m_text.isEmpty()) {
        QToolTip::hideText();
        m_text.clear();
    }
}

void ChartHover::refresh()
{
    if (!m_text.isEmpty())
        showAt(m_mouse);
}

bool ChartHover::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == m_plot) {
        if (event->type() == QEvent::MouseMove) {
            auto *mouse = static_cast<QMouseEvent *>(event);
            if (mouse->buttons() == Qt::NoButton)
                showAt(mouse->position().toPoint());
            else
                hide(); // dragging: the read-out would trail behind the data
        } else if (event->type() == QEvent::Leave || event->type() == QEvent::Wheel) {
            hide();
        }
    }
    return QObject::eventFilter(watched, event);
}

void ChartHover::showAt(QPoint pos)
{
    m_mouse = pos;
    if (!m_plot->axisRect()->rect().contains(pos)) {
        hide();
        return;
    }
    constexpr double kReach = 40; // px: farther than this from every point, no read-out
    QCPGraph *best = nullptr;
    int bestIndex = -1;
    double bestDistance = std::numeric_limits<double>::max();
    bool bestIsStep = false;
    for (int g = 0; g < m_plot->graphCount(); ++g) {
        QCPGraph *graph = m_plot->graph(g);
        const auto data = graph->data();
        if (!graph->visible() || data->isEmpty())
            continue;
        QCPAxis *keyAxis = graph->keyAxis();
        QCPAxis *valueAxis = graph->valueAxis();
        const double key = keyAxis->pixelToCoord(pos.x());
        const int after = static_cast<int>(data->findBegin(key, false) - data->constBegin());
        if (graph->lineStyle() == QCPGraph::lsStepLeft) {
            // A bar: the step whose span holds the mouse, however high above it the mouse is.
            const int index = after < data->size() && data->at(after)->key == key ? after : after - 1;
            if (index >= 0 && index + 1 < data->size()) {
                best = graph;
                bestIndex = index;
                bestDistance = 0;
                bestIsStep = true;
            }
            continue;
        }
        for (int index : {after - 1, after}) {
            if (index < 0 || index >= data->size() || std::isnan(data->at(index)->value))
                continue;
            const double dx = keyAxis->coordToPixel(data->at(index)->key) - pos.x();
            const double dy = valueAxis->coordToPixel(data->at(index)->value) - pos.y();
            const double distance = std::hypot(dx, dy);
            if (distance < bestDistance && distance <= kReach) {
                best = graph;
                bestIndex = index;
                bestDistance = distance;
                bestIsStep = false;
            }
        }
    }
    const QString text = best ? m_formatter(best, bestIndex) : QString();
    if (text.isEmpty()) {
        hide();
        return;
    }
    const auto point = best->data()->at(bestIndex);
    double key = point->key;
    if (bestIsStep) { // mark the top of the bar, half-way across it in pixels (log axes included)
        QCPAxis *keyAxis = best->keyAxis();
        key = keyAxis->pixelToCoord((keyAxis->coordToPixel(point->key)
                                     + keyAxis->coordToPixel(best->data()->at(bestIndex + 1)->key)) / 2);
    }
    m_tracer->position->setAxes(best->keyAxis(), best->valueAxis());
    m_tracer->position->setCoords(key, point->value);
    const QColor color = best->pen().color();
    m_tracer->setPen(QPen(color, 1.5));
    QColor fill = color;
    fill.setAlpha(120);
    m_tracer->setBrush(fill);
    m_tracer->setVisible(true);
    m_plot->layer(QStringLiteral("overlay"))->replot();
    if (text != m_text || !QToolTip::isVisible()) {
        m_text = text;
        QToolTip::showText(m_plot->mapToGlobal(pos), text, m_plot);
    }
}

} // namespace rpcscope
