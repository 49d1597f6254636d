#include "runpage.h"

#include "charts.h"

#include "qcp.h"
#include "report/textreport.h"
#include "util/units.h"

#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <cmath>

namespace rpcscope {

namespace {
constexpr int kDisplayBins = 60;
const double kMarkerPercentiles[] = {50, 90, 99, 99.9};

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
} // namespace

RunPage::RunPage(QWidget *parent)
    : QWidget(parent)
    , m_plot(new QCustomPlot(this))
    , m_summary(makeTable({tr("Metric"), tr("Value")}, QStringLiteral("summaryTable")))
    , m_status(makeTable({tr("Status"), tr("Calls"), tr("Share")}, QStringLiteral("statusTable")))
    , m_progress(new QProgressBar(this))
    , m_progressText(new QLabel(this))
{
    m_plot->setObjectName(QStringLiteral("histogramPlot"));
    m_plot->setMinimumSize(420, 260);
    m_plot->setNoAntialiasingOnDrag(true);
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    m_plot->axisRect()->setRangeZoom(Qt::Horizontal);
    m_plot->axisRect()->setRangeDrag(Qt::Horizontal);

    const QPalette pal = palette();
    const QColor text = pal.color(QPalette::WindowText);
    m_plot->setBackground(pal.brush(QPalette::Base));
    for (QCPAxis *axis : {m_plot->xAxis, m_plot->yAxis}) {
        axis->setBasePen(QPen(text));
        axis->setTickPen(QPen(text));
        axis->setSubTickPen(QPen(text));
        axis->setTickLabelColor(text);
        axis->setLabelColor(text);
        axis->grid()->setPen(QPen(pal.color(QPalette::Mid), 0, Qt::DotLine));
    }
    m_plot->xAxis->setScaleType(QCPAxis::stLogarithmic);
    m_plot->xAxis->setLabel(tr("latency (log scale)"));
    m_plot->yAxis->setLabel(tr("calls"));
    m_plot->xAxis->setRange(0.01, 100);
    setLatencyTicks(m_plot->xAxis);
    // Zooming and panning re-label the axis.
    connect(m_plot->xAxis, qOverload<const QCPRange &>(&QCPAxis::rangeChanged), this,
            [this] { setLatencyTicks(m_plot->xAxis); });

    m_bars = m_plot->addGraph();
    m_bars->setLineStyle(QCPGraph::lsStepLeft);
    const QColor accent = pal.color(QPalette::Highlight);
    m_bars->setPen(QPen(accent, 1.5));
    QColor fill = accent;
    fill.setAlpha(90);
    m_bars->setBrush(fill);

    const QColor markerColors[] = {QColor(0x2e, 0x9d, 0x4f), QColor(0xd9, 0x8c, 0x1f), QColor(0xd0, 0x3b, 0x3b),
                                   QColor(0x8e, 0x44, 0xad)};
    for (int i = 0; i < 4; ++i) {
        auto *line = new QCPItemStraightLine(m_plot);
        line->setPen(QPen(markerColors[i], 1.2, Qt::DashLine));
        line->setVisible(false);
        m_markers << line;
        auto *label = new QCPItemText(m_plot);
        label->setColor(markerColors[i]);
        label->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
        label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
        label->setVisible(false);
        m_markerLabels << label;
    }

    auto *progressRow = new QHBoxLayout;
    m_progress->setObjectName(QStringLiteral("runProgress"));
    m_progress->setRange(0, 1000);
    m_progress->setTextVisible(false);
    m_progressText->setObjectName(QStringLiteral("progressText"));
    m_progressText->setMinimumWidth(260);
    progressRow->addWidget(m_progress, 1);
    progressRow->addWidget(m_progressText);

    auto *tables = new QSplitter(Qt::Vertical);
    tables->addWidget(m_summary);
    tables->addWidget(m_status);
    tables->setStretchFactor(0, 3);
    tables->setStretchFactor(1, 1);
    auto *split = new QSplitter(Qt::Horizontal);
    split->addWidget(m_plot);
    split->addWidget(tables);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(progressRow);
    layout->addWidget(split, 1);
    clear();
}

void RunPage::clear()
{
    m_bars->data()->clear();
    for (auto *m : std::as_const(m_markers))
        m->setVisible(false);
    for (auto *l : std::as_const(m_markerLabels))
        l->setVisible(false);
    m_summary->setRowCount(0);
    m_status->setRowCount(0);
    m_progress->setValue(0);
    m_progressText->setText(tr("Ready"));
    m_plottedCount = UINT64_MAX;
    m_plot->replot(QCustomPlot::rpQueuedReplot);
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
            auto *item = new QTableWidgetItem(values[column]);
            if (code != CallStatus::Ok)
                item->setForeground(QColor(0xd0, 0x3b, 0x3b));
            m_status->setItem(statusRow, column, item);
        }
        ++statusRow;
    }
    m_status->setRowCount(statusRow);

    if (h.count() != m_plottedCount) {
        updateHistogram(h);
        m_plottedCount = h.count();
    }
}

void RunPage::updateHistogram(const LatencyHistogram &h)
{
    m_bars->data()->clear();
    if (h.isEmpty()) {
        m_plot->replot(QCustomPlot::rpQueuedReplot);
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
    double peak = 0;
    for (int i = 0; i < kDisplayBins; ++i) {
        xs << std::pow(10.0, logLow + i * step);
        ys << counts[static_cast<size_t>(i)];
        peak = std::max(peak, counts[static_cast<size_t>(i)]);
    }
    xs << highMs;
    ys << 0; // closes the last step
    m_bars->setData(xs, ys, true);
    m_plot->xAxis->setRange(lowMs / 1.3, highMs * 1.3);
    setLatencyTicks(m_plot->xAxis);
    m_plot->yAxis->setRange(0, peak * 1.18);

    for (int i = 0; i < m_markers.size(); ++i) {
        const double pct = kMarkerPercentiles[i];
        const double x = static_cast<double>(h.percentile(pct)) / 1e6;
        m_markers[i]->point1->setCoords(x, 0);
        m_markers[i]->point2->setCoords(x, 1);
        m_markers[i]->setVisible(true);
        // Labels go right of their line, or left of it near the right edge, so none is cut off.
        const bool nearRight = std::log10(x) > std::log10(m_plot->xAxis->range().lower)
                + 0.75 * (std::log10(m_plot->xAxis->range().upper) - std::log10(m_plot->xAxis->range().lower));
        m_markerLabels[i]->setPositionAlignment((nearRight ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignTop);
        m_markerLabels[i]->position->setCoords(x, 0.02 + 0.06 * i);
        m_markerLabels[i]->setText(QStringLiteral(" p%1 %2").arg(pct, 0, 'g', 4).arg(formatNanos(x * 1e6)));
        m_markerLabels[i]->setVisible(true);
    }
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace rpcscope
