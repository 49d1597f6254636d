#include "runpage.h"

#include "charts.h"

#include "qcp.h"
#include "report/textreport.h"
#include "util/units.h"

#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

namespace rpcscope {

namespace {
constexpr int kDisplayBins = 60;
const double kMarkerPercentiles[] = {50, 90, 99, 99.9};
// p50, p90, p99, p99.9 wherever a chart shows them, so a color means the same percentile on every tab.
const QColor kMarkerColors[] = {QColor(0x2e, 0x9d, 0x4f), QColor(0xd9, 0x8c, 0x1f), QColor(0xd0, 0x3b, 0x3b),
                                QColor(0x8e, 0x44, 0xad)};
const QColor kErrorColor(0xd0, 0x3b, 0x3b);
const QColor kConcurrencyColor(0x7f, 0x8c, 0x8d);

QTableWidget *makeTable(const QStringList &headers, const QString &name)
{
    auto *table = new QTableWidget(0, static_cast<int>(headers.size()));
    table->setObjectName(name);
    table->setHorizontalHeaderLabels(headers);
    table->verticalHeader()->hide();
    table->horizontalHeader()->setStretchLastSection(true);
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    table->setAlternatingRowColors(true);
    return table;
}

// An opaque blend of two colors: translucent wide pens make Qt stroke a whole series as one path, ~3x slower.
QColor mix(const QColor &a, const QColor &b, double share)
{
    return QColor::fromRgbF(static_cast<float>(a.redF() * share + b.redF() * (1 - share)),
                            static_cast<float>(a.greenF() * share + b.greenF() * (1 - share)),
                            static_cast<float>(a.blueF() * share + b.blueF() * (1 - share)));
}

// The spectrum's x: 1/(1-p), so 90%, 99%, 99.9% are evenly spaced decades on a log axis.
double percentileKey(double percent)
{
    return 100.0 / (100.0 - percent);
}

QString formatSeconds(double seconds)
{
    // Interval ends are usually whole tenths; shorter intervals (--interval 50ms) need the second decimal.
    const bool tenths = std::abs(seconds * 10 - std::round(seconds * 10)) < 1e-6;
    return QString::number(seconds, 'f', tenths ? 1 : 2) + QStringLiteral(" s");
}

QString formatRate(double perSecond)
{
    return QString::number(perSecond, 'f', perSecond < 100 ? 1 : 0);
}

// Axis range over the positive values of a log-scale latency series, with some air above and below.
QCPRange latencyRange(double lowMs, double highMs, double air)
{
    if (!(lowMs > 0) || !(highMs >= lowMs))
        return QCPRange(0.01, 100);
    return QCPRange(lowMs / air, std::max(highMs * air, lowMs * 3));
}
} // namespace

RunPage::RunPage(QWidget *parent)
    : QWidget(parent)
    , m_charts(new QTabWidget(this))
    , m_plot(new QCustomPlot)
    , m_spectrum(new QCustomPlot)
    , m_latencyTime(new QCustomPlot)
    , m_throughput(new QCustomPlot)
    , m_summary(makeTable({tr("Metric"), tr("Value")}, QStringLiteral("summaryTable")))
    , m_status(makeTable({tr("Status"), tr("Calls"), tr("Share")}, QStringLiteral("statusTable")))
    , m_progress(new QProgressBar(this))
    , m_progressText(new QLabel(this))
{
    m_charts->setObjectName(QStringLiteral("chartTabs"));
    m_charts->setDocumentMode(true);

    // Histogram.
    setUpChart(HistogramChart, m_plot, tr("Histogram"), Qt::Horizontal);
    m_plot->setObjectName(QStringLiteral("histogramPlot"));
    m_plot->xAxis->setScaleType(QCPAxis::stLogarithmic);
    m_plot->xAxis->setLabel(tr("latency (log scale)"));
    m_plot->yAxis->setLabel(tr("calls"));
    m_plot->xAxis->setRange(0.01, 100);
    setLatencyTicks(m_plot->xAxis);
    // Zooming and panning re-label the axis.
    connect(m_plot->xAxis, qOverload<const QCPRange &>(&QCPAxis::rangeChanged), this,
            [this] { setLatencyTicks(m_plot->xAxis); });
    m_bars = m_plot->addGraph();
    m_bars->setName(tr("calls"));
    m_bars->setLineStyle(QCPGraph::lsStepLeft);
    for (int i = 0; i < 4; ++i) {
        auto *line = new QCPItemStraightLine(m_plot);
        line->setPen(QPen(kMarkerColors[i], 1.2, Qt::DashLine));
        line->setVisible(false);
        m_markers << line;
        auto *label = new QCPItemText(m_plot);
        label->setColor(kMarkerColors[i]);
        label->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
        label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
        label->setVisible(false);
        m_markerLabels << label;
    }
    m_views[HistogramChart].hover = new ChartHover(m_plot, [](const QCPGraph *graph, int index) -> QString {
        // Display bin i spans from its key to the next one; the last point only closes the outline.
        const auto data = graph->data();
        if (index + 1 >= data->size())
            return QString();
        const double count = data->at(index)->value;
        const qint64 calls = qRound64(count);
        const QString callText = calls == 0 && count > 0 ? tr("< 1 call")
                               : calls == 1              ? tr("1 call")
                                                         : tr("%1 calls").arg(calls);
        return formatNanosRange(data->at(index)->key * 1e6, data->at(index + 1)->key * 1e6) + QStringLiteral(": ")
            + callText;
    });

    // Percentile spectrum.
    setUpChart(SpectrumChart, m_spectrum, tr("Percentiles"), Qt::Horizontal | Qt::Vertical);
    m_spectrum->setObjectName(QStringLiteral("spectrumPlot"));
    m_spectrum->xAxis->setScaleType(QCPAxis::stLogarithmic);
    m_spectrum->xAxis->setLabel(tr("percentile (log scale of 1/(1-p))"));
    m_spectrum->yAxis->setScaleType(QCPAxis::stLogarithmic);
    m_spectrum->yAxis->setLabel(tr("latency (log scale)"));
    m_spectrum->xAxis->setRange(0.9, 1e4);
    m_spectrum->yAxis->setRange(0.01, 100);
    setPercentileTicks(m_spectrum->xAxis);
    setLatencyTicks(m_spectrum->yAxis);
    connect(m_spectrum->xAxis, qOverload<const QCPRange &>(&QCPAxis::rangeChanged), this,
            [this] { setPercentileTicks(m_spectrum->xAxis); });
    connect(m_spectrum->yAxis, qOverload<const QCPRange &>(&QCPAxis::rangeChanged), this,
            [this] { setLatencyTicks(m_spectrum->yAxis); });
    m_corrected = m_spectrum->addGraph();
    for (int i = 0; i < 4; ++i) {
        auto *dot = new QCPItemTracer(m_spectrum);
        dot->setStyle(QCPItemTracer::tsCircle);
        dot->setSize(7);
        dot->setPen(QPen(kMarkerColors[i], 1.5));
        dot->setBrush(kMarkerColors[i]);
        dot->setVisible(false);
        m_spectrumMarkers << dot;
    }
    m_views[SpectrumChart].hover = new ChartHover(m_spectrum, [this](const QCPGraph *graph, int index) -> QString {
        const auto data = graph->data();
        const QString percentile = index == 0                  ? tr("0% (min)")
                                 : index == data->size() - 1 ? tr("100% (max)")
                                                             : formatPercentile(100.0 - 100.0 / data->at(index)->key);
        QString text = percentile + QStringLiteral(": ") + formatNanos(data->at(index)->value * 1e6);
        if (m_uncorrected)
            text += QStringLiteral(", ") + graph->name();
        return text;
    });

    // Latency over time.
    setUpChart(LatencyTimeChart, m_latencyTime, tr("Latency over time"), Qt::Horizontal | Qt::Vertical);
    m_latencyTime->setObjectName(QStringLiteral("latencyTimePlot"));
    m_latencyTime->xAxis->setLabel(tr("time since start (s)"));
    m_latencyTime->yAxis->setScaleType(QCPAxis::stLogarithmic);
    m_latencyTime->yAxis->setLabel(tr("latency per interval (log scale)"));
    m_latencyTime->xAxis->setRange(0, 10);
    m_latencyTime->yAxis->setRange(0.01, 100);
    setLatencyTicks(m_latencyTime->yAxis);
    connect(m_latencyTime->yAxis, qOverload<const QCPRange &>(&QCPAxis::rangeChanged), this,
            [this] { setLatencyTicks(m_latencyTime->yAxis); });
    for (int i = 0; i < 3; ++i) {
        QCPGraph *graph = m_latencyTime->addGraph();
        graph->setName(QStringLiteral("p%1").arg(kMarkerPercentiles[i], 0, 'g', 4));
        graph->setPen(QPen(kMarkerColors[i], 1.8));
        graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 4));
        m_percentileGraphs[static_cast<size_t>(i)] = graph;
    }
    m_latencyTime->legend->setVisible(true);
    m_views[LatencyTimeChart].hover = new ChartHover(m_latencyTime, [](const QCPGraph *graph, int index) -> QString {
        const auto point = graph->data()->at(index);
        return graph->name() + QStringLiteral(" at ") + formatSeconds(point->key) + QStringLiteral(": ")
            + formatNanos(point->value * 1e6);
    });

    // Throughput over time.
    setUpChart(ThroughputChart, m_throughput, tr("Throughput"), Qt::Horizontal | Qt::Vertical);
    m_throughput->setObjectName(QStringLiteral("throughputTimePlot"));
    m_throughput->xAxis->setLabel(tr("time since start (s)"));
    m_throughput->yAxis->setLabel(tr("per second"));
    m_throughput->xAxis->setRange(0, 10);
    m_throughput->yAxis->setRange(0, 1);
    m_rate = m_throughput->addGraph();
    m_rate->setName(tr("requests/s"));
    m_rate->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 4));
    m_errorRate = m_throughput->addGraph();
    m_errorRate->setName(tr("errors/s"));
    m_errorRate->setPen(QPen(kErrorColor, 1.5));
    m_errorRate->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 4));
    m_throughput->legend->setVisible(true);
    // Callers or calls in flight are context for the rates: drawn under them.
    m_throughput->addLayer(QStringLiteral("behind"), m_throughput->layer(QStringLiteral("main")),
                           QCustomPlot::limBelow);
    m_views[ThroughputChart].hover = new ChartHover(m_throughput, [this](const QCPGraph *graph, int index) -> QString {
        const auto point = graph->data()->at(index);
        const QString value = graph == m_concurrency ? QString::number(point->value, 'f', 0) : formatRate(point->value);
        return graph->name() + QStringLiteral(" at ") + formatSeconds(point->key) + QStringLiteral(": ") + value;
    });

    applyPalette();
    connect(m_charts, &QTabWidget::currentChanged, this, &RunPage::refreshCurrentChart);

    auto *progressRow = new QHBoxLayout;
    m_progress->setObjectName(QStringLiteral("runProgress"));
    m_progress->setRange(0, 1000);
    m_progress->setTextVisible(false);
    m_progressText->setObjectName(QStringLiteral("progressText"));
    // A fixed size: its text changes at every snapshot, and a label that may change its size hint makes Qt
    // re-lay out and repaint the whole window each time (measured by tests/perf/gui_responsiveness.sh: 507 -> 69
    // Mpx painted in a 10 s run, GUI thread 9.7% -> 6.1% of a core, together with the status bar's labels).
    m_progressText->setFixedSize(320, m_progressText->sizeHint().height());
    progressRow->addWidget(m_progress, 1);
    progressRow->addWidget(m_progressText);

    auto *tables = new QSplitter(Qt::Vertical);
    tables->addWidget(m_summary);
    tables->addWidget(m_status);
    tables->setStretchFactor(0, 3);
    tables->setStretchFactor(1, 1);
    auto *split = new QSplitter(Qt::Horizontal);
    split->addWidget(m_charts);
    split->addWidget(tables);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(progressRow);
    layout->addWidget(split, 1);
    clear();
}

void RunPage::setUpChart(Chart chart, QCustomPlot *plot, const QString &tabTitle, Qt::Orientations zoom)
{
    plot->setMinimumSize(420, 260);
    plot->setNoAntialiasingOnDrag(true);
    // Wide antialiased lines are otherwise stroked one segment at a time: a jagged 60-point series then costs ~20 ms
    // a replot instead of ~1 ms.
    plot->setPlottingHint(QCP::phFastPolylines, true);
    plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    plot->axisRect()->setRangeZoom(zoom);
    plot->axisRect()->setRangeDrag(zoom);
    placeLegendBelow(plot, 4);
    m_views[chart].plot = plot;
    // Once the user zooms or pans, live updates keep that view; a double-click fits the data again.
    connect(plot, &QCustomPlot::mouseWheel, this, [this, chart] { m_views[chart].userRange = true; });
    connect(plot, &QCustomPlot::mouseMove, this, [this, chart](QMouseEvent *event) {
        if (event->buttons() & Qt::LeftButton)
            m_views[chart].userRange = true;
    });
    connect(plot, &QCustomPlot::mouseDoubleClick, this, [this, chart] {
        m_views[chart].userRange = false;
        m_views[chart].drawnKey.reset();
        refreshCurrentChart();
    });
    const int tab = m_charts->addTab(plot, tabTitle);
    m_charts->setTabToolTip(tab, tr("Hover for exact values; drag to pan, wheel to zoom, double-click to fit"));
}

void RunPage::applyPalette()
{
    const QPalette pal = palette();
    for (const ChartView &view : m_views)
        applyChartPalette(view.plot, pal);
    const QColor accent = pal.color(QPalette::Highlight);
    m_bars->setPen(QPen(accent, 1.5));
    QColor fill = accent;
    fill.setAlpha(90);
    m_bars->setBrush(fill);
    m_corrected->setPen(QPen(accent, 2));
    // Solid, not dashed (wide dashed pens are slow to stroke): a muted text color reads as "the other one".
    if (m_uncorrected)
        m_uncorrected->setPen(QPen(mix(pal.color(QPalette::Text), pal.color(QPalette::Base), 0.6), 1.8));
    m_rate->setPen(QPen(accent, 1.8));
    if (m_concurrency)
        m_concurrency->setPen(QPen(mix(kConcurrencyColor, pal.color(QPalette::Base), 0.7), 1.5)); // context: light
}

void RunPage::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) {
        applyPalette();
        for (const ChartView &view : m_views)
            view.plot->replot(QCustomPlot::rpQueuedReplot);
    }
}

void RunPage::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    refreshCurrentChart(); // snapshots that came while hidden drew nothing
}

void RunPage::clear()
{
    m_snapshot = RunSnapshot();
    for (ChartView &view : m_views) {
        view.drawnKey.reset();
        view.userRange = false;
        view.hover->hide();
    }
    m_summary->setRowCount(0);
    m_status->setRowCount(0);
    m_progress->setValue(0);
    m_progressText->setText(tr("Ready"));
    refreshCurrentChart();
}

size_t RunPage::chartKey(Chart chart) const
{
    // What each chart is drawn from: redraw when that changed, not on every snapshot.
    const RunSnapshot &s = m_snapshot;
    switch (chart) {
    case HistogramChart:
        return qHashMulti(0, s.generation, s.latency.count());
    case SpectrumChart:
        return qHashMulti(0, s.generation, s.latency.count(), s.serviceLatency.count(), s.openLoop);
    case LatencyTimeChart:
    case ThroughputChart:
    case ChartCount:
        break;
    }
    return qHashMulti(0, s.generation, s.timeline.size());
}

void RunPage::refreshCurrentChart()
{
    // Only the chart on screen costs anything; the others catch up when their tab is shown.
    if (!isVisible())
        return;
    const int index = m_charts->currentIndex();
    if (index < 0 || index >= ChartCount)
        return;
    const auto chart = static_cast<Chart>(index);
    ChartView &view = m_views[chart];
    const size_t key = chartKey(chart);
    if (view.drawnKey == key)
        return;
    switch (chart) {
    case HistogramChart:
        updateHistogram(m_snapshot.latency, view.userRange);
        break;
    case SpectrumChart:
        updateSpectrum(view.userRange);
        break;
    case LatencyTimeChart:
        updateLatencyTime(view.userRange);
        break;
    case ThroughputChart:
        updateThroughput(view.userRange);
        break;
    case ChartCount:
        break;
    }
    view.drawnKey = key;
    view.hover->refresh(); // a read-out under a still mouse follows the live data rather than going stale
    view.plot->replot(QCustomPlot::rpQueuedReplot);
}

void RunPage::setRow(int row, const QString &name, const QString &value)
{
    if (m_summary->rowCount() <= row)
        m_summary->setRowCount(row + 1);
    for (int column = 0; column < 2; ++column) {
        const QString &text = column == 0 ? name : value;
        QTableWidgetItem *item = m_summary->item(row, column);
        if (!item) {
            item = new QTableWidgetItem;
            if (column == 1)
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            m_summary->setItem(row, column, item);
        }
        if (item->text() != text)
            item->setText(text);
    }
}

void RunPage::showSnapshot(const RunSnapshot &s)
{
    // Progress: by count or time, with an ETA from the rate so far.
    const double p = s.progress();
    m_progress->setValue(p < 0 ? 0 : static_cast<int>(p * 1000));
    QString text = runStateName(s.state);
    text[0] = text[0].toUpper();
    text += QStringLiteral(" · %1 elapsed").arg(formatDuration(s.elapsed));
    if (!s.isFinal() && s.eta().count() >= 0)
        text += QStringLiteral(" · ETA %1").arg(formatDuration(s.eta()));
    m_progressText->setText(text);

    const LatencyHistogram &h = s.latency;
    int row = 0;
    setRow(row++, tr("Calls"), QString::number(s.callsCompleted()));
    setRow(row++, tr("Errors"),
           s.callsCompleted() ? QStringLiteral("%1 (%2%)").arg(s.callsFailed()).arg(
               100.0 * static_cast<double>(s.callsFailed()) / static_cast<double>(s.callsCompleted()), 0, 'f', 2)
                              : QStringLiteral("0"));
    setRow(row++, tr("Requests/s"), QString::number(s.requestsPerSecond(), 'f', 1));
    setRow(row++, tr("Mean"), formatNanos(h.mean()));
    setRow(row++, tr("Std dev"), formatNanos(h.stddev()));
    setRow(row++, tr("Min"), formatNanos(static_cast<double>(h.min())));
    for (double pct : reportPercentiles())
        setRow(row++, QStringLiteral("p%1").arg(pct, 0, 'g', 6), formatNanos(static_cast<double>(h.percentile(pct))));
    setRow(row++, tr("Max"), formatNanos(static_cast<double>(h.max())));
    if (s.callsCompleted()) {
        const double n = static_cast<double>(s.callsCompleted());
        setRow(row++, tr("Bytes/call sent"), formatBytes(static_cast<double>(s.bytesSent) / n));
        setRow(row++, tr("Bytes/call received"), formatBytes(static_cast<double>(s.bytesReceived) / n));
    }
    if (s.openLoop) {
        const double seconds = std::chrono::duration<double>(s.elapsed).count();
        setRow(row++, tr("Intended rate"), QStringLiteral("%1/s").arg(s.intendedRate, 0, 'f', 1));
        setRow(row++, tr("Achieved send rate"),
               QStringLiteral("%1/s").arg(seconds > 0 ? static_cast<double>(s.callsSent) / seconds : 0.0, 0, 'f', 1));
        setRow(row++, tr("Send lag p99"), formatNanos(static_cast<double>(s.sendLag.percentile(99))));
        setRow(row++, tr("Client kept up"), s.keptUp() ? tr("yes") : tr("NO: latencies include the wait to be sent"));
        setRow(row++, tr("p50 from actual send"), formatNanos(static_cast<double>(s.serviceLatency.percentile(50))));
        setRow(row++, tr("p99 from actual send"), formatNanos(static_cast<double>(s.serviceLatency.percentile(99))));
    }
    if (s.callsCompleted()) {
        setRow(row++, tr("Client CPU/call"), QStringLiteral("%1 us").arg(s.clientCpuPerCallUs(), 0, 'f', 1));
        setRow(row++, tr("Client peak RSS"), formatBytes(static_cast<double>(s.clientPeakRssBytes)));
        if (s.hasServerStats) {
            setRow(row++, tr("Server CPU/call"), QStringLiteral("%1 us").arg(s.serverCpuPerCallUs(), 0, 'f', 1));
            setRow(row++, tr("Server peak RSS"), formatBytes(static_cast<double>(s.serverPeakRssBytes)));
        }
    }
    if (s.warmupCalls)
        setRow(row++, tr("Warm-up calls (not counted)"), QString::number(s.warmupCalls));
    m_summary->setRowCount(row);

    // Status codes: every code that occurred, errors never hidden.
    int statusRow = 0;
    for (int code = 0; code < CallStatus::SlotCount; ++code) {
        const uint64_t c = s.statusCounts[static_cast<size_t>(code)];
        if (!c)
            continue;
        m_status->setRowCount(statusRow + 1);
        const QString values[] = {callStatusName(code), QString::number(c),
                                  QStringLiteral("%1%").arg(100.0 * static_cast<double>(c) / static_cast<double>(s.callsCompleted()), 0, 'f', 2)};
        for (int column = 0; column < 3; ++column) {
            // Only what changed: a new item per cell per snapshot repaints and re-lays out the table each time.
            QTableWidgetItem *item = m_status->item(statusRow, column);
            if (!item) {
                item = new QTableWidgetItem;
                m_status->setItem(statusRow, column, item);
            }
            if (item->text() != values[column])
                item->setText(values[column]);
            const QBrush color = code != CallStatus::Ok ? QBrush(QColor(0xd0, 0x3b, 0x3b)) : m_status->palette().text();
            if (item->foreground() != color)
                item->setForeground(color);
        }
        ++statusRow;
    }
    m_status->setRowCount(statusRow);

    m_snapshot = s;
    refreshCurrentChart();
}

void RunPage::updateHistogram(const LatencyHistogram &h, bool keepRange)
{
    if (h.isEmpty()) {
        m_bars->data()->clear();
        for (auto *m : std::as_const(m_markers))
            m->setVisible(false);
        for (auto *l : std::as_const(m_markerLabels))
            l->setVisible(false);
        return;
    }
    // Re-bin the fine HDR buckets into log-spaced display bins between min and max (in ms).
    const double lowMs = std::max(1e-4, static_cast<double>(h.min()) / 1e6 * 0.95);
    const double highMs = std::max(lowMs * 1.5, static_cast<double>(h.max()) / 1e6 * 1.05);
    const double logLow = std::log10(lowMs);
    const double step = (std::log10(highMs) - logLow) / kDisplayBins;
    // Each fine bucket's count is spread over the display bins it overlaps (in log space), so bins do not alias
    // against the bucket grid (which shows as a comb of false dips).
    std::vector<double> counts(kDisplayBins, 0);
    for (const auto &bucket : h.buckets()) {
        const double from = (std::log10(std::max(static_cast<double>(bucket.lowNs) / 1e6, lowMs)) - logLow) / step;
        const double to = (std::log10(std::max(static_cast<double>(bucket.highNs + 1) / 1e6, lowMs)) - logLow) / step;
        const double width = std::max(to - from, 1e-9);
        for (int bin = std::max(0, static_cast<int>(from)); bin <= std::min(kDisplayBins - 1, static_cast<int>(to)); ++bin) {
            const double overlap = std::min<double>(to, bin + 1) - std::max<double>(from, bin);
            if (overlap > 0)
                counts[static_cast<size_t>(bin)] += static_cast<double>(bucket.count) * overlap / width;
        }
        if (to >= kDisplayBins) // the max itself sits on the upper edge
            counts[kDisplayBins - 1] += static_cast<double>(bucket.count) * std::min(1.0, (to - std::max<double>(from, kDisplayBins)) / width);
    }
    QVector<double> xs;
    QVector<double> ys;
    xs.reserve(kDisplayBins + 1);
    ys.reserve(kDisplayBins + 1);
    double peak = 0;
    for (int i = 0; i < kDisplayBins; ++i) {
        xs << std::pow(10.0, logLow + i * step);
        ys << counts[static_cast<size_t>(i)];
        peak = std::max(peak, counts[static_cast<size_t>(i)]);
    }
    xs << highMs;
    ys << 0; // closes the last step
    m_bars->setData(xs, ys, true);
    if (!keepRange) {
        m_plot->xAxis->setRange(lowMs / 1.3, highMs * 1.3);
        m_plot->yAxis->setRange(0, peak * 1.18);
    }

    const QCPRange range = m_plot->xAxis->range();
    for (int i = 0; i < m_markers.size(); ++i) {
        const double pct = kMarkerPercentiles[i];
        const double x = static_cast<double>(h.percentile(pct)) / 1e6;
        m_markers[i]->point1->setCoords(x, 0);
        m_markers[i]->point2->setCoords(x, 1);
        m_markers[i]->setVisible(true);
        // Labels go right of their line, or left of it near the right edge, so none is cut off.
        const bool nearRight = std::log10(x)
            > std::log10(range.lower) + 0.75 * (std::log10(range.upper) - std::log10(range.lower));
        m_markerLabels[i]->setPositionAlignment((nearRight ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignTop);
        m_markerLabels[i]->position->setCoords(x, 0.02 + 0.06 * i);
        m_markerLabels[i]->setText(QStringLiteral(" p%1 %2 ").arg(pct, 0, 'g', 4).arg(formatNanos(x * 1e6)));
        m_markerLabels[i]->setVisible(true);
    }
}

void RunPage::updateSpectrum(bool keepRange)
{
    const RunSnapshot &s = m_snapshot;
    // Open loop: latency from the intended send time (no coordinated omission) beside the one from the actual send.
    if (s.openLoop && !m_uncorrected) {
        m_uncorrected = m_spectrum->addGraph();
        m_uncorrected->setName(tr("from actual send time (uncorrected)"));
        applyPalette();
    } else if (!s.openLoop && m_uncorrected) {
        m_spectrum->removeGraph(m_uncorrected);
        m_uncorrected = nullptr;
    }
    m_corrected->setName(s.openLoop ? tr("from intended send time (corrected)") : tr("latency"));
    m_spectrum->legend->setVisible(s.openLoop);

    double lowMs = std::numeric_limits<double>::max();
    double highMs = 0;
    double rightKey = 1;
    auto fill = [&](QCPGraph *graph, const LatencyHistogram &h) {
        const PercentileSpectrum spectrum = percentileSpectrum(h);
        QVector<double> keys;
        QVector<double> values;
        keys.reserve(spectrum.percentiles.size());
        values.reserve(spectrum.percentiles.size());
        for (qsizetype i = 0; i < spectrum.percentiles.size(); ++i) {
            // The max is p100, at infinity on this axis: it goes where fewer than one sample would lie above.
            const bool isMax = i + 1 == spectrum.percentiles.size();
            keys << (isMax ? std::max(static_cast<double>(h.count()), keys.last() * 1.12)
                           : percentileKey(spectrum.percentiles[i]));
            values << spectrum.nanos[i] / 1e6;
        }
        graph->setData(keys, values, true);
        if (!keys.isEmpty()) {
            lowMs = std::min(lowMs, values.first());
            highMs = std::max(highMs, values.last());
            rightKey = std::max(rightKey, keys.last());
        }
    };
    fill(m_corrected, s.latency);
    if (m_uncorrected)
        fill(m_uncorrected, s.serviceLatency);

    for (int i = 0; i < m_spectrumMarkers.size(); ++i) {
        const double key = percentileKey(kMarkerPercentiles[i]);
        // Past the count the percentile is the max: a dot there would float right of the curve's end.
        const bool shown = key < static_cast<double>(s.latency.count());
        m_spectrumMarkers[i]->setVisible(shown);
        if (shown)
            m_spectrumMarkers[i]->position->setCoords(
                key, static_cast<double>(s.latency.percentile(kMarkerPercentiles[i])) / 1e6);
    }
    if (!keepRange) {
        m_spectrum->xAxis->setRange(0.9, std::max(rightKey * 1.5, 1e3));
        m_spectrum->yAxis->setRange(latencyRange(lowMs, highMs, 1.5));
    }
}

void RunPage::updateLatencyTime(bool keepRange)
{
    const QList<IntervalPoint> &timeline = m_snapshot.timeline;
    QVector<double> keys;
    std::array<QVector<double>, 3> values;
    keys.reserve(timeline.size());
    for (auto &v : values)
        v.reserve(timeline.size());
    double lowMs = std::numeric_limits<double>::max();
    double highMs = 0;
    double end = 0;
    for (const IntervalPoint &point : timeline) {
        keys << point.endSeconds;
        end = std::max(end, point.endSeconds);
        const uint64_t nanos[] = {point.p50, point.p90, point.p99};
        for (size_t j = 0; j < 3; ++j) {
            // An interval without an OK call has no latency: a gap in the line, not a zero on a log axis.
            const double ms = nanos[j] ? static_cast<double>(nanos[j]) / 1e6 : std::numeric_limits<double>::quiet_NaN();
            values[j] << ms;
            if (nanos[j]) {
                lowMs = std::min(lowMs, ms);
                highMs = std::max(highMs, ms);
            }
        }
    }
    for (size_t j = 0; j < 3; ++j)
        m_percentileGraphs[j]->setData(keys, values[j], true);
    if (!keepRange) {
        m_latencyTime->xAxis->setRange(0, end > 0 ? end * 1.03 : 10);
        m_latencyTime->yAxis->setRange(latencyRange(lowMs, highMs, 1.25));
    }
}

void RunPage::updateThroughput(bool keepRange)
{
    const RunSnapshot &s = m_snapshot;
    QVector<double> keys;
    QVector<double> rates;
    QVector<double> errorRates;
    QVector<double> concurrency;
    keys.reserve(s.timeline.size());
    rates.reserve(s.timeline.size());
    errorRates.reserve(s.timeline.size());
    concurrency.reserve(s.timeline.size());
    double end = 0;
    double top = 0;
    int topConcurrency = 0;
    for (const IntervalPoint &point : s.timeline) {
        keys << point.endSeconds;
        rates << point.requestsPerSecond();
        errorRates << (point.seconds > 0 ? static_cast<double>(point.errors) / point.seconds : 0.0);
        concurrency << point.concurrency;
        end = std::max(end, point.endSeconds);
        top = std::max({top, rates.last(), errorRates.last()});
        topConcurrency = std::max(topConcurrency, point.concurrency);
    }
    m_rate->setData(keys, rates, true);
    m_errorRate->setData(keys, errorRates, true);

    if (topConcurrency > 0 && !m_concurrency) {
        m_concurrency = m_throughput->addGraph(m_throughput->xAxis, m_throughput->yAxis2);
        m_concurrency->setLayer(QStringLiteral("behind"));
        applyPalette();
        auto ticker = QSharedPointer<QCPAxisTickerFixed>::create();
        ticker->setTickStep(1); // whole callers, multiplied up for large counts
        ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
        m_throughput->yAxis2->setTicker(ticker);
        m_throughput->yAxis2->setVisible(true);
    } else if (topConcurrency == 0 && m_concurrency) {
        m_throughput->removeGraph(m_concurrency);
        m_concurrency = nullptr;
        m_throughput->yAxis2->setVisible(false);
    }
    if (m_concurrency) {
        const QString name = s.openLoop ? tr("calls in flight") : tr("callers");
        m_concurrency->setName(name);
        m_throughput->yAxis2->setLabel(name);
        m_concurrency->setData(keys, concurrency, true);
    }
    if (!keepRange) {
        m_throughput->xAxis->setRange(0, end > 0 ? end * 1.03 : 10);
        m_throughput->yAxis->setRange(0, top > 0 ? top * 1.15 : 1);
        if (m_concurrency)
            m_throughput->yAxis2->setRange(0, topConcurrency * 1.15);
    }
}

} // namespace rpcscope
