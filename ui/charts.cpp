#include "charts.h"

#include "qcp.h"
#include "util/units.h"

#include <QEvent>
#include <QFontMetricsF>
#include <QMouseEvent>
#include <QPalette>
#include <QToolTip>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace rpcscope {

namespace {

// 1-2-5 steps across a log range; only decades when that gives more than @p maxLabels, every other (third...) decade
// when even those are too many, and with @p finer, finer steps when it gives too few (a range under a decade would
// otherwise show two or three labels).
QList<double> logTicks(double lower, double upper, double floorValue, bool finer, int maxLabels = 12)
{
    const int first = static_cast<int>(std::floor(std::log10(std::max(lower, floorValue))));
    const int last = static_cast<int>(std::ceil(std::log10(std::max(upper, floorValue))));
    static const std::vector<double> steps[] = { { 1, 2, 5 }, { 1, 2, 3, 5, 7 }, { 1, 2, 3, 4, 5, 6, 7, 8, 9 } };
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
        if (!finer || ticks.size() >= 4 || ticks.size() >= maxLabels)
            break;
    }
    if (ticks.size() > maxLabels) {
        QList<double> decades;
        for (double v : std::as_const(ticks))
            if (std::abs(std::log10(v) - std::round(std::log10(v))) < 1e-9)
                decades << v;
        const qsizetype every = (decades.size() + maxLabels - 1) / std::max(1, maxLabels);
        ticks.clear();
        for (qsizetype i = 0; i < decades.size(); i += std::max<qsizetype>(1, every))
            ticks << decades[i];
    }
    return ticks;
}

/// "200 us", "1 ms", "10 s" for a tick at @p ms milliseconds.
QString latencyTickLabel(double ms)
{
    const double ns = ms * 1e6;
    const auto [scale, unit] = ns < 1e3 ? std::pair(1.0, "ns")
        : ns < 1e6                      ? std::pair(1e3, "us")
        : ns < 1e9                      ? std::pair(1e6, "ms")
                                        : std::pair(1e9, "s");
    return QString::number(ns / scale, 'g', 3) + QLatin1Char(' ') + QLatin1String(unit);
}

/**
 * Latency ticks worked out at every layout from the axis's range and its length on screen: a narrow chart gets
 * fewer labels (decades, then every other decade) instead of labels printed over each other.
 */
class LatencyTicker final : public QCPAxisTicker {
public:
    explicit LatencyTicker(QCPAxis *axis) : m_axis(axis) { }

protected:
    QVector<double> createTickVector(double /*tickStep*/, const QCPRange &range) override
    {
        // From the plot's size, not the axis rect's: ticks are made before the layout sizes the rect, so a chart
        // drawn once (into a file) would get the labels of the size it had before.
        const QRect view = m_axis->parentPlot()->viewport();
        const int pixels = (m_axis->orientation() == Qt::Horizontal ? view.width() : view.height()) - 90;
        // A label ("200 us") takes about 45 px across and a line of text down; room around it keeps them apart.
        const int room = m_axis->orientation() == Qt::Horizontal ? 62 : 28;
        const int maxLabels = std::clamp(pixels / room, 2, 12);
        const QList<double> ticks = logTicks(range.lower, range.upper, 0, true, maxLabels);
        return { ticks.begin(), ticks.end() };
    }
    QVector<double> createSubTickVector(int, const QVector<double> &) override { return {}; }
    QString getTickLabel(double tick, const QLocale &, QChar, int) override { return latencyTickLabel(tick); }

private:
    QCPAxis *m_axis;
};

} // namespace

void setLatencyTicks(QCPAxis *axis)
{
    // The ticker follows zooming and resizing by itself: set it once per axis.
    if (!axis->ticker().dynamicCast<LatencyTicker>())
        axis->setTicker(QSharedPointer<LatencyTicker>::create(axis));
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
    // The median (x = 2) keeps its label when the rest are decades: "50%" is the first number people look for.
    if (!ticks.contains(2.0) && axis->range().contains(2.0))
        ticks << 2.0;
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

void applyAxisPalette(QCPAxis *axis, const QPalette &palette)
{
    const QColor text = palette.color(QPalette::Text);
    axis->setBasePen(QPen(text));
    axis->setTickPen(QPen(text));
    axis->setSubTickPen(QPen(text));
    axis->setTickLabelColor(text);
    axis->setLabelColor(text);
    axis->grid()->setPen(QPen(palette.color(QPalette::Mid), 0, Qt::DotLine));
    axis->grid()->setZeroLinePen(Qt::NoPen);
}

void applyChartPalette(QCustomPlot *plot, const QPalette &palette)
{
    const QColor text = palette.color(QPalette::Text);
    plot->setBackground(palette.brush(QPalette::Base));
    for (QCPAxis *axis : { plot->xAxis, plot->yAxis, plot->xAxis2, plot->yAxis2 })
        applyAxisPalette(axis, palette);
    plot->legend->setBrush(palette.brush(QPalette::Base));
    plot->legend->setTextColor(text);
    // Marker labels get a backing in the background color: where one crosses a line or another curve, the text
    // stays readable.
    QColor backing = palette.color(QPalette::Base);
    backing.setAlpha(215);
    for (int i = 0; i < plot->itemCount(); ++i) {
        if (auto *label = qobject_cast<QCPItemText *>(plot->item(i)))
            label->setBrush(backing);
    }
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

LegendFitter::LegendFitter(QCustomPlot *plot, int columns)
    : QObject(plot), m_plot(plot), m_columns(std::max(1, columns))
{
    plot->installEventFilter(this);
}

void LegendFitter::fit()
{
    const QFontMetrics metrics(m_plot->legend->font());
    // A column's share of the width, less the item's icon, the gap after it and the legend's margins.
    const int room = std::max(48,
        (m_plot->width() - 8) / m_columns - m_plot->legend->iconSize().width() - m_plot->legend->iconTextPadding()
            - 2 * m_plot->legend->rowSpacing() - 8);
    for (int i = 0; i < m_plot->plottableCount(); ++i) {
        QCPAbstractPlottable *plottable = m_plot->plottable(i);
        QString whole = plottable->property("fullName").toString();
        if (whole.isEmpty()) {
            whole = plottable->name();
            plottable->setProperty("fullName", whole);
        }
        plottable->setName(metrics.elidedText(whole, Qt::ElideMiddle, room));
    }
}

bool LegendFitter::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == m_plot && event->type() == QEvent::Resize) {
        fit();
        m_plot->replot(QCustomPlot::rpQueuedReplot);
    }
    return false;
}

QColor markerColor(int index)
{
    static const QColor colors[]
        = { QColor(0x2e, 0x9d, 0x4f), QColor(0xd9, 0x8c, 0x1f), QColor(0xd0, 0x3b, 0x3b), QColor(0x8e, 0x44, 0xad) };
    return colors[std::clamp(index, 0, 3)];
}

QColor errorColor()
{
    return { 0xd0, 0x3b, 0x3b };
}

QColor concurrencyColor()
{
    return { 0x7f, 0x8c, 0x8d };
}

QColor mixColors(const QColor &a, const QColor &b, double share)
{
    return QColor::fromRgbF(static_cast<float>(a.redF() * share + b.redF() * (1 - share)),
        static_cast<float>(a.greenF() * share + b.greenF() * (1 - share)),
        static_cast<float>(a.blueF() * share + b.blueF() * (1 - share)));
}

double percentileKey(double percent)
{
    return 100.0 / (100.0 - percent);
}

QCPRange latencyRange(double lowMs, double highMs, double air)
{
    if (!(lowMs > 0) || !(highMs >= lowMs))
        return { 0.01, 100 };
    return { lowMs / air, std::max(highMs * air, lowMs * 3) };
}

std::pair<double, double> histogramSpanMs(const LatencyHistogram &h)
{
    const double lowMs = std::max(1e-4, static_cast<double>(h.min()) / 1e6 * 0.95);
    const double highMs = std::max(lowMs * 1.5, static_cast<double>(h.max()) / 1e6 * 1.05);
    return { lowMs, highMs };
}

HistogramBins histogramBins(const LatencyHistogram &h, double lowMs, double highMs, int bins)
{
    HistogramBins out;
    const double logLow = std::log10(lowMs);
    const double step = (std::log10(highMs) - logLow) / bins;
    // Each fine bucket's count is spread over the display bins it overlaps (in log space), so bins do not alias
    // against the bucket grid (which shows as a comb of false dips).
    std::vector<double> counts(static_cast<size_t>(bins), 0);
    for (const auto &bucket : h.buckets()) {
        const double from = (std::log10(std::max(static_cast<double>(bucket.lowNs) / 1e6, lowMs)) - logLow) / step;
        const double to = (std::log10(std::max(static_cast<double>(bucket.highNs + 1) / 1e6, lowMs)) - logLow) / step;
        const double width = std::max(to - from, 1e-9);
        for (int bin = std::max(0, static_cast<int>(from)); bin <= std::min(bins - 1, static_cast<int>(to)); ++bin) {
            const double overlap = std::min<double>(to, bin + 1) - std::max<double>(from, bin);
            if (overlap > 0)
                counts[static_cast<size_t>(bin)] += static_cast<double>(bucket.count) * overlap / width;
        }
        if (to >= bins) // the max itself sits on the upper edge (and, in a shared span, samples past it)
            counts[static_cast<size_t>(bins - 1)]
                += static_cast<double>(bucket.count) * std::min(1.0, (to - std::max<double>(from, bins)) / width);
    }
    out.edgesMs.reserve(bins + 1);
    out.counts.reserve(bins + 1);
    for (int i = 0; i < bins; ++i) {
        out.edgesMs << std::pow(10.0, logLow + i * step);
        out.counts << counts[static_cast<size_t>(i)];
        out.peak = std::max(out.peak, counts[static_cast<size_t>(i)]);
    }
    out.edgesMs << highMs;
    out.counts << 0; // closes the last step
    return out;
}

SpectrumCurve spectrumCurve(const LatencyHistogram &h)
{
    const PercentileSpectrum spectrum = percentileSpectrum(h);
    SpectrumCurve out;
    out.keys.reserve(spectrum.percentiles.size());
    out.ms.reserve(spectrum.percentiles.size());
    for (qsizetype i = 0; i < spectrum.percentiles.size(); ++i) {
        // The max is p100, at infinity on this axis: it goes where fewer than one sample would lie above.
        const bool isMax = i + 1 == spectrum.percentiles.size();
        out.keys << (isMax ? std::max(static_cast<double>(h.count()), out.keys.last() * 1.12)
                           : percentileKey(spectrum.percentiles[i]));
        out.ms << spectrum.nanos[i] / 1e6;
    }
    return out;
}

TimelineSeries timelineSeries(const QList<IntervalPoint> &timeline, bool messages)
{
    TimelineSeries out;
    const auto n = timeline.size();
    out.seconds.reserve(n);
    for (auto &v : out.latencyMs)
        v.reserve(n);
    out.rates.reserve(n);
    out.errorRates.reserve(n);
    out.concurrency.reserve(n);
    double lowMs = std::numeric_limits<double>::max();
    for (const IntervalPoint &point : timeline) {
        out.seconds << point.endSeconds;
        out.endSeconds = std::max(out.endSeconds, point.endSeconds);
        const uint64_t nanos[] = { messages ? point.messageP50 : point.p50, messages ? point.messageP90 : point.p90,
            messages ? point.messageP99 : point.p99 };
        for (size_t j = 0; j < 3; ++j) {
            // An interval without an OK call has no latency: a gap in the line, not a zero on a log axis.
            const double ms = nanos[j] ? static_cast<double>(nanos[j]) / 1e6 : std::numeric_limits<double>::quiet_NaN();
            out.latencyMs[j] << ms;
            if (nanos[j]) {
                lowMs = std::min(lowMs, ms);
                out.highMs = std::max(out.highMs, ms);
            }
        }
        // Calls that ended as expected: the errors are the other series, never throughput.
        out.rates << (messages
                ? point.messagesPerSecond()
                : (point.seconds > 0
                        ? static_cast<double>(point.calls - std::min(point.errors, point.calls)) / point.seconds
                        : 0.0));
        out.errorRates << (point.seconds > 0 ? static_cast<double>(point.errors) / point.seconds : 0.0);
        out.concurrency << point.concurrency;
        out.topRate = std::max({ out.topRate, out.rates.last(), out.errorRates.last() });
        out.topConcurrency = std::max(out.topConcurrency, point.concurrency);
        out.hasErrors = out.hasErrors || point.errors > 0;
    }
    out.lowMs = out.highMs > 0 ? lowMs : 0;
    return out;
}

void setUpHistogramAxes(QCustomPlot *plot, const QString &valueLabel)
{
    plot->xAxis->setScaleType(QCPAxis::stLogarithmic);
    plot->xAxis->setLabel(QObject::tr("latency (log scale)"));
    plot->yAxis->setLabel(valueLabel);
    plot->xAxis->setRange(0.01, 100);
    setLatencyTicks(plot->xAxis);
}

void setUpSpectrumAxes(QCustomPlot *plot)
{
    plot->xAxis->setScaleType(QCPAxis::stLogarithmic);
    plot->xAxis->setLabel(QObject::tr("percentile (log scale of 1/(1-p))"));
    plot->yAxis->setScaleType(QCPAxis::stLogarithmic);
    plot->yAxis->setLabel(QObject::tr("latency (log scale)"));
    plot->xAxis->setRange(0.9, 1e4);
    plot->yAxis->setRange(0.01, 100);
    setPercentileTicks(plot->xAxis);
    setLatencyTicks(plot->yAxis);
    QObject::connect(plot->xAxis, qOverload<const QCPRange &>(&QCPAxis::rangeChanged), plot->xAxis,
        [axis = plot->xAxis] { setPercentileTicks(axis); });
}

void setUpLatencyTimeAxes(QCustomPlot *plot)
{
    plot->xAxis->setLabel(QObject::tr("time since start (s)"));
    plot->yAxis->setScaleType(QCPAxis::stLogarithmic);
    plot->yAxis->setLabel(QObject::tr("latency per interval (log scale)"));
    plot->xAxis->setRange(0, 10);
    plot->yAxis->setRange(0.01, 100);
    setLatencyTicks(plot->yAxis);
}

void setUpThroughputAxes(QCustomPlot *plot)
{
    plot->xAxis->setLabel(QObject::tr("time since start (s)"));
    plot->yAxis->setLabel(QObject::tr("calls per second (1/s)"));
    plot->xAxis->setRange(0, 10);
    plot->yAxis->setRange(0, 1);
}

namespace {

// Percentile markers on a layer of their own above the series: a curve added later (the open loop's second one)
// would otherwise be drawn over their labels.
QCPLayer *markerLayer(QCustomPlot *plot)
{
    const QString name = QStringLiteral("markers");
    if (!plot->layer(name))
        plot->addLayer(name, plot->layer(QStringLiteral("main")), QCustomPlot::limAbove);
    return plot->layer(name);
}

} // namespace

HistogramMarkers::HistogramMarkers(QCustomPlot *plot) : m_plot(plot)
{
    for (int i = 0; i < static_cast<int>(kMarkerPercentiles.size()); ++i) {
        auto *line = new QCPItemStraightLine(plot);
        line->setPen(QPen(markerColor(i), 1.2, Qt::DashLine));
        line->setLayer(markerLayer(plot));
        line->setVisible(false);
        m_lines << line;
        auto *label = new QCPItemText(plot);
        label->setColor(markerColor(i));
        label->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
        label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
        label->setLayer(markerLayer(plot));
        label->setVisible(false);
        m_labels << label;
    }
}

void HistogramMarkers::update(const LatencyHistogram &h)
{
    if (h.isEmpty()) {
        hide();
        return;
    }
    const QCPRange range = m_plot->xAxis->range();
    // A label's row: 6% of the plot's height, or a line of text where the plot is short (each label its own row). A
    // plot not laid out yet (a chart drawn for a file, before its first replot) has no height to go by.
    const double rowHeight = QFontMetricsF(m_labels.front()->font()).height() + 2;
    const int height = m_plot->axisRect()->height();
    const double step = height > 4 * rowHeight ? std::max(0.06, rowHeight / height) : 0.06;
    for (int i = 0; i < m_lines.size(); ++i) {
        const double pct = kMarkerPercentiles[static_cast<size_t>(i)];
        const double x = static_cast<double>(h.percentile(pct)) / 1e6;
        m_lines[i]->point1->setCoords(x, 0);
        m_lines[i]->point2->setCoords(x, 1);
        m_lines[i]->setVisible(true);
        // Labels go right of their line, or left of it near the right edge, so none is cut off.
        const bool nearRight
            = std::log10(x) > std::log10(range.lower) + 0.75 * (std::log10(range.upper) - std::log10(range.lower));
        m_labels[i]->setPositionAlignment((nearRight ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignTop);
        m_labels[i]->position->setCoords(x, 0.02 + step * i);
        m_labels[i]->setText(QStringLiteral(" p%1 %2 ").arg(pct, 0, 'g', 4).arg(formatNanos(x * 1e6)));
        m_labels[i]->setVisible(true);
    }
}

void HistogramMarkers::hide()
{
    for (auto *line : std::as_const(m_lines))
        line->setVisible(false);
    for (auto *label : std::as_const(m_labels))
        label->setVisible(false);
}

SpectrumMarkers::SpectrumMarkers(QCustomPlot *plot) : m_plot(plot)
{
    for (int i = 0; i < static_cast<int>(kMarkerPercentiles.size()); ++i) {
        auto *dot = new QCPItemTracer(plot);
        dot->setStyle(QCPItemTracer::tsCircle);
        dot->setSize(7);
        dot->setPen(QPen(markerColor(i), 1.5));
        dot->setBrush(markerColor(i));
        dot->setLayer(markerLayer(plot));
        dot->setVisible(false);
        m_dots << dot;
        // Hung from the dot, in pixels: below and right of it, which on a rising curve is empty space.
        auto *label = new QCPItemText(plot);
        label->setColor(markerColor(i));
        label->position->setParentAnchor(dot->position);
        label->position->setType(QCPItemPosition::ptAbsolute);
        label->setLayer(markerLayer(plot));
        label->setVisible(false);
        m_labels << label;
    }
}

void SpectrumMarkers::update(const LatencyHistogram &h)
{
    const QCPRange range = m_plot->xAxis->range();
    for (int i = 0; i < m_dots.size(); ++i) {
        const double pct = kMarkerPercentiles[static_cast<size_t>(i)];
        const double key = percentileKey(pct);
        // Past the count the percentile is the max: a dot there would float right of the curve's end.
        const bool shown = key < static_cast<double>(h.count());
        m_dots[i]->setVisible(shown);
        m_labels[i]->setVisible(shown);
        if (!shown)
            continue;
        const auto nanos = static_cast<double>(h.percentile(pct));
        m_dots[i]->position->setCoords(key, nanos / 1e6);
        // Near the right edge the label goes left of the dot (still under the curve there: it has risen).
        const bool nearRight = range.lower > 0
            && std::log10(key) > std::log10(range.lower) + 0.8 * (std::log10(range.upper) - std::log10(range.lower));
        m_labels[i]->setPositionAlignment((nearRight ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignTop);
        m_labels[i]->position->setCoords(nearRight ? -4 : 6, 6);
        m_labels[i]->setText(QStringLiteral("p%1 %2").arg(pct, 0, 'g', 4).arg(formatNanos(nanos)));
    }
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
        const auto rank
            = std::clamp<uint64_t>(static_cast<uint64_t>(std::ceil(p / 100.0 * static_cast<double>(count))), 1, count);
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
    : QObject(plot), m_plot(plot), m_tracer(new QCPItemTracer(plot)), m_formatter(std::move(formatter))
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
        for (int index : { after - 1, after }) {
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
        key = keyAxis->pixelToCoord(
            (keyAxis->coordToPixel(point->key) + keyAxis->coordToPixel(best->data()->at(bestIndex + 1)->key)) / 2);
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
