#include "runpage.h"

#include "charts.h"
#include "layoutmemory.h"
#include "profilepanel.h"

#include "qcp.h"
#include "report/textreport.h"
#include "store/runrecord.h"
#include "store/segmentmerge.h"
#include "util/units.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QProgressBar>
#include <QRegularExpression>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

namespace rpcscope {

namespace {

/// The UNEXPECTED_REPLY row's tooltip: the replies kept of those that failed an --expect (plain text: a reply is
/// the server's, not markup).
QString unexpectedRepliesTip(const RunSnapshot &s)
{
    if (s.unexpectedReplies.empty())
        return {};
    QString tip = QCoreApplication::translate("RunPage", "The first replies that failed an expectation:");
    for (const UnexpectedReply &kept : s.unexpectedReplies)
        tip += QStringLiteral("\n\n")
            + QCoreApplication::translate("RunPage", "%1: got %2\n%3")
                  .arg(kept.expectation, kept.got, QString::fromUtf8(kept.reply.left(600)));
    return tip.toHtmlEscaped().prepend(QStringLiteral("<pre>")).append(QStringLiteral("</pre>"));
}

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
    // One line a row, as tight as the font allows: the summary's two dozen rows fit a 1400x900 window whole.
    table->setWordWrap(false);
    table->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    table->verticalHeader()->setDefaultSectionSize(table->fontMetrics().height() + 6);
    table->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    return table;
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

} // namespace

RunPage::RunPage(QWidget *parent)
    : QWidget(parent)
    , m_charts(new QTabWidget(this))
    , m_plot(new QCustomPlot)
    , m_spectrum(new QCustomPlot)
    , m_latencyTime(new QCustomPlot)
    , m_throughput(new QCustomPlot)
    , m_summary(makeTable({ tr("Metric"), tr("Value") }, QStringLiteral("summaryTable")))
    , m_status(makeTable({ tr("Status"), tr("Calls"), tr("Share") }, QStringLiteral("statusTable")))
    , m_workers(makeTable({ tr("Segment"), tr("Host"), tr("Calls"), tr("Failed"), tr("Req/s"), tr("p50"), tr("p99"),
                              tr("Start"), tr("Clock") },
          QStringLiteral("workersTable")))
    , m_progress(new QProgressBar(this))
    , m_progressText(new QLabel(this))
    , m_latencyOf(new QComboBox(this))
    , m_checks(new QLabel(this))
    , m_failures(new QLabel(this))
{
    m_charts->setObjectName(QStringLiteral("chartTabs"));
    m_charts->setDocumentMode(true);

    buildHistogramChart();
    buildSpectrumChart();
    buildLatencyTimeChart();
    buildThroughputChart();

    applyPalette();
    connect(m_charts, &QTabWidget::currentChanged, this, &RunPage::refreshCurrentChart);

    QHBoxLayout *progressRow = makeProgressRow();
    QSplitter *split = makeTablesSplit();
    layOutPage(progressRow, split);
    clear();
}

void RunPage::buildHistogramChart()
{
    // Histogram.
    setUpChart(HistogramChart, m_plot, tr("Histogram"), Qt::Horizontal);
    m_plot->setObjectName(QStringLiteral("histogramPlot"));
    setUpHistogramAxes(m_plot, tr("calls per bin"));
    m_bars = m_plot->addGraph();
    m_bars->setName(tr("calls"));
    m_bars->setLineStyle(QCPGraph::lsStepLeft);
    m_histogramMarkers = std::make_unique<HistogramMarkers>(m_plot);
    m_views[HistogramChart].hover = new ChartHover(m_plot, [this](const QCPGraph *graph, int index) -> QString {
        // Display bin i spans from its key to the next one; the last point only closes the outline.
        const auto data = graph->data();
        if (index + 1 >= data->size())
            return {};
        const double count = data->at(index)->value;
        const qint64 calls = qRound64(count);
        const bool messages = showsMessages();
        const QString callText = calls == 0 && count > 0 ? (messages ? tr("< 1 message") : tr("< 1 call"))
            : calls == 1                                 ? (messages ? tr("1 message") : tr("1 call"))
                                                         : (messages ? tr("%1 messages") : tr("%1 calls")).arg(calls);
        return formatNanosRange(data->at(index)->key * 1e6, data->at(index + 1)->key * 1e6) + QStringLiteral(": ")
            + callText;
    });
}

void RunPage::buildSpectrumChart()
{
    // Percentile spectrum.
    setUpChart(SpectrumChart, m_spectrum, tr("Percentiles"), Qt::Horizontal | Qt::Vertical);
    m_spectrum->setObjectName(QStringLiteral("spectrumPlot"));
    setUpSpectrumAxes(m_spectrum);
    m_corrected = m_spectrum->addGraph();
    m_spectrumMarkers = std::make_unique<SpectrumMarkers>(m_spectrum);
    m_views[SpectrumChart].hover = new ChartHover(m_spectrum, [this](const QCPGraph *graph, int index) -> QString {
        const auto data = graph->data();
        const QString percentile = index == 0 ? tr("0% (min)")
            : index == data->size() - 1       ? tr("100% (max)")
                                              : formatPercentile(100.0 - 100.0 / data->at(index)->key);
        QString text = percentile + QStringLiteral(": ") + formatNanos(data->at(index)->value * 1e6);
        if (m_uncorrected)
            text += QStringLiteral(", ") + graph->name();
        return text;
    });
}

void RunPage::buildLatencyTimeChart()
{
    // Latency over time.
    setUpChart(LatencyTimeChart, m_latencyTime, tr("Latency over time"), Qt::Horizontal | Qt::Vertical);
    m_latencyTime->setObjectName(QStringLiteral("latencyTimePlot"));
    setUpLatencyTimeAxes(m_latencyTime);
    for (int i = 0; i < 3; ++i) {
        QCPGraph *graph = m_latencyTime->addGraph();
        graph->setName(QStringLiteral("p%1").arg(kMarkerPercentiles[static_cast<size_t>(i)], 0, 'g', 4));
        graph->setPen(QPen(markerColor(i), 1.8));
        graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 4));
        m_percentileGraphs[static_cast<size_t>(i)] = graph;
    }
    m_latencyTime->legend->setVisible(true);
    m_views[LatencyTimeChart].hover = new ChartHover(m_latencyTime, [](const QCPGraph *graph, int index) -> QString {
        const auto point = graph->data()->at(index);
        return graph->name() + QStringLiteral(" at ") + formatSeconds(point->key) + QStringLiteral(": ")
            + formatNanos(point->value * 1e6);
    });
}

void RunPage::buildThroughputChart()
{
    // Throughput over time.
    setUpChart(ThroughputChart, m_throughput, tr("Throughput"), Qt::Horizontal | Qt::Vertical);
    m_throughput->setObjectName(QStringLiteral("throughputTimePlot"));
    setUpThroughputAxes(m_throughput);
    m_rate = m_throughput->addGraph();
    m_rate->setName(tr("OK calls/s"));
    m_rate->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 4));
    m_errorRate = m_throughput->addGraph();
    m_errorRate->setName(tr("errors/s"));
    m_errorRate->setPen(QPen(errorColor(), 1.5));
    m_errorRate->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 4));
    m_throughput->legend->setVisible(true);
    // Callers or calls in flight are context for the rates: drawn under them.
    m_throughput->addLayer(
        QStringLiteral("behind"), m_throughput->layer(QStringLiteral("main")), QCustomPlot::limBelow);
    m_views[ThroughputChart].hover = new ChartHover(m_throughput, [this](const QCPGraph *graph, int index) -> QString {
        const auto point = graph->data()->at(index);
        const QString value = graph == m_concurrency ? QString::number(point->value, 'f', 0) : formatRate(point->value);
        return graph->name() + QStringLiteral(" at ") + formatSeconds(point->key) + QStringLiteral(": ") + value;
    });
}

QHBoxLayout *RunPage::makeProgressRow()
{
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
    // A stream is one call: its latency is the whole stream's, and what each message took is the other view.
    m_latencyOf->setObjectName(QStringLiteral("latencyOfCombo"));
    m_latencyOf->addItem(tr("Charts per message"));
    m_latencyOf->addItem(tr("Charts per call (whole stream)"));
    m_latencyOf->setToolTip(tr("A streaming run: the charts show each received message (its latency: a server "
                               "stream's gaps after its first message, a bidi stream's round trips; messages/s over "
                               "time) or each call, the whole stream."));
    m_latencyOf->hide();
    connect(m_latencyOf, &QComboBox::currentIndexChanged, this, [this] {
        // The other view has other ranges: fit them afresh.
        for (ChartView &view : m_views)
            view.userRange = false;
        m_plot->yAxis->setLabel(showsMessages() ? tr("messages per bin") : tr("calls per bin"));
        refreshCurrentChart();
    });
    progressRow->addWidget(m_latencyOf);
    return progressRow;
}

QSplitter *RunPage::makeTablesSplit()
{
    auto *tables = new QSplitter(Qt::Vertical);
    tables->addWidget(m_summary);
    // Status names are long (UNEXPECTED_REPLY, RESOURCE_EXHAUSTED): never cut to "UNEXPECTED..."
    m_status->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    tables->addWidget(m_status);
    // A split run's workers get a tab of their own after the charts (showWorkers()), the width to show every column.
    m_workers->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_workers->setParent(this); // owned here while no tab holds it (the tab's stack takes it over when one does)
    m_workers->hide();
    for (size_t i = 0; i < m_profilePanels.size(); ++i) {
        m_profilePanels[i] = new ProfilePanel(this); // owned here while no tab holds it, as the workers' table
        m_profilePanels[i]->setObjectName(i == 0 ? QStringLiteral("serverProfile") : QStringLiteral("clientProfile"));
        m_profilePanels[i]->hide();
    }
    tables->setMinimumWidth(240); // "Value" whole beside "Bytes/call received"
    tables->setStretchFactor(0, 4);
    tables->setStretchFactor(1, 1);
    auto *split = new QSplitter(Qt::Horizontal);
    split->addWidget(m_charts);
    split->addWidget(tables);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    rememberSplitter(tables, QStringLiteral("run/tables"));
    rememberSplitter(split, QStringLiteral("run/charts"));
    return split;
}

void RunPage::layOutPage(QHBoxLayout *progressRow, QSplitter *split)
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(progressRow);
    m_checks->setObjectName(QStringLiteral("checksLabel"));
    m_checks->setTextFormat(Qt::RichText);
    m_checks->setWordWrap(true);
    m_checks->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_checks);
    m_failures->setObjectName(QStringLiteral("failuresBanner"));
    m_failures->setWordWrap(true);
    m_failures->setTextFormat(Qt::PlainText);
    m_failures->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_failures->hide();
    layout->addWidget(m_failures);
    layout->addWidget(split, 1);
}

RunPage::~RunPage() = default;

void RunPage::setUpChart(Chart chart, QCustomPlot *plot, const QString &tabTitle, Qt::Orientations zoom)
{
    plot->setMinimumSize(300, 200); // small enough for a 1280x720 laptop beside the editor (tests/tst_layout)
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
    m_charts->setTabToolTip(tab,
        tr("Hover for exact values; drag to pan, wheel to zoom, double-click to fit; right-click to copy or save"));
    addChartActions(chart, plot);
}

void RunPage::addChartActions(Chart chart, QCustomPlot *plot)
{
    // The widget's own actions make its context menu: tests and accessibility tools see them without a popup.
    plot->setContextMenuPolicy(Qt::ActionsContextMenu);
    auto *copy = new QAction(tr("Copy chart"), plot);
    copy->setObjectName(QStringLiteral("copyChart"));
    connect(copy, &QAction::triggered, this, [this, chart] { copyChart(chart); });
    plot->addAction(copy);
    const std::pair<ChartFormat, QString> saves[] = { { ChartFormat::Png, tr("Save chart as PNG...") },
        { ChartFormat::Pdf, tr("Save chart as PDF...") }, { ChartFormat::Svg, tr("Save chart as SVG...") } };
    for (const auto &[format, text] : saves) {
        auto *save = new QAction(text, plot);
        save->setObjectName(QStringLiteral("saveChart") + chartFormatSuffix(format).toUpper());
        connect(
            save, &QAction::triggered, this, [this, chart, format = format] { saveChartWithDialog(chart, format); });
        plot->addAction(save);
    }
}

ChartKind RunPage::chartKind(Chart chart)
{
    switch (chart) {
    case HistogramChart:
        return ChartKind::Histogram;
    case SpectrumChart:
        return ChartKind::Spectrum;
    case LatencyTimeChart:
        return ChartKind::Timeline;
    case ThroughputChart:
    case ChartCount:
        break;
    }
    return ChartKind::Throughput;
}

namespace {
// Files and copies are drawn afresh at a size fit for a slide, whatever the window's size; images at twice the
// pixels, so they stay sharp on high-density screens and projectors.
ChartOptions fileChartOptions(ChartFormat format)
{
    ChartOptions options;
    options.width = 1000;
    options.height = 600;
    options.scale = format == ChartFormat::Png ? 2.0 : 1.0;
    return options;
}
} // namespace

QImage RunPage::chartImage(Chart chart) const
{
    RunRecord run;
    run.name = m_runName;
    run.snapshot = m_snapshot;
    return renderChartImage({ &run }, chartKind(chart), fileChartOptions(ChartFormat::Png));
}

void RunPage::copyChart(Chart chart)
{
    QApplication::clipboard()->setImage(chartImage(chart));
}

bool RunPage::saveChart(Chart chart, ChartFormat format, const QString &path, QString *error)
{
    RunRecord run;
    run.name = m_runName;
    run.snapshot = m_snapshot;
    return renderChart({ &run }, chartKind(chart), format, fileChartOptions(format), path, error);
}

void RunPage::saveChartWithDialog(Chart chart, ChartFormat format)
{
    const QString suffix = chartFormatSuffix(format);
    QString base = chartKindName(chartKind(chart)).toLower().replace(u' ', u'-');
    if (!m_runName.isEmpty()) {
        // A run name is free text: only what is safe in a file name on every system goes into the suggestion.
        static const QRegularExpression unsafe(QStringLiteral("[^A-Za-z0-9._-]+"));
        base = QString(m_runName).replace(unsafe, QStringLiteral("-")) + u'-' + base;
    }
    const QString path = QFileDialog::getSaveFileName(this, tr("Save chart as %1").arg(suffix.toUpper()),
        QDir::home().filePath(base + u'.' + suffix), tr("%1 files (*.%2)").arg(suffix.toUpper(), suffix));
    if (path.isEmpty())
        return;
    QString error;
    if (!saveChart(chart, format, path, &error))
        QMessageBox::warning(this, tr("Save chart"), error);
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
        m_uncorrected->setPen(QPen(mixColors(pal.color(QPalette::Text), pal.color(QPalette::Base), 0.6), 1.8));
    m_rate->setPen(QPen(accent, 1.8));
    if (m_concurrency)
        m_concurrency->setPen(
            QPen(mixColors(concurrencyColor(), pal.color(QPalette::Base), 0.7), 1.5)); // context: light
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
    showWorkers(SplitRecord {});
    showProfiles(std::nullopt, std::nullopt);
    m_progress->setValue(0);
    m_progressText->setText(tr("Ready"));
    m_checks->clear();
    m_checks->hide();
    m_failures->clear();
    m_failures->hide();
    refreshCurrentChart();
}

void RunPage::setProfileTabShown(int panel, bool shown)
{
    ProfilePanel *widget = m_profilePanels[static_cast<size_t>(panel)];
    const int tab = m_charts->indexOf(widget);
    if (!shown) {
        if (tab >= 0)
            m_charts->removeTab(tab);
        widget->hide();
        return;
    }
    if (tab >= 0)
        return;
    // The server's tab before the client's, both after the charts and the workers.
    const int at = panel == 0 && m_charts->indexOf(m_profilePanels[1]) >= 0 ? m_charts->indexOf(m_profilePanels[1])
                                                                            : m_charts->count();
    const int added = m_charts->insertTab(at, widget, panel == 0 ? tr("Server profile") : tr("Client profile"));
    m_charts->setTabToolTip(added,
        panel == 0 ? tr("Where the server's CPU went during the timed phase, in µs per call (run with --profile).")
                   : tr("Where rpcscope's own CPU went during the timed phase, in µs per call (--profile-client)."));
}

void RunPage::showProfiles(const std::optional<Profile> &server, const std::optional<Profile> &client)
{
    const std::array<const std::optional<Profile> *, 2> profiles { &server, &client };
    for (int i = 0; i < 2; ++i) {
        const std::optional<Profile> &profile = *profiles[static_cast<size_t>(i)];
        setProfileTabShown(i, profile.has_value());
        if (profile)
            m_profilePanels[static_cast<size_t>(i)]->showProfile(
                *profile, QStringLiteral("%1, %2").arg(m_runName, i == 0 ? tr("server CPU") : tr("client CPU")));
    }
}

void RunPage::showProfilesPending(bool server, bool client)
{
    const std::array<bool, 2> pending { server, client };
    for (int i = 0; i < 2; ++i) {
        setProfileTabShown(i, pending[static_cast<size_t>(i)]);
        if (pending[static_cast<size_t>(i)])
            m_profilePanels[static_cast<size_t>(i)]->clear(
                tr("Profiling the timed phase; the profile is read when the run ends."));
    }
}

void RunPage::showWorkers(const SplitRecord &split)
{
    m_workers->setRowCount(0);
    const int tab = m_charts->indexOf(m_workers);
    if (!split.isSplit()) {
        if (tab >= 0)
            m_charts->removeTab(tab);
        m_workers->hide();
        return;
    }
    if (tab < 0) {
        const int added = m_charts->addTab(m_workers, tr("Workers (%1)").arg(split.workers.size()));
        m_charts->setTabToolTip(added,
            tr("The workers of this split run (rpcscope-cli run --segment), each with its own figures; one that "
               "stands out from the others is in red."));
    } else {
        m_charts->setTabText(tab, tr("Workers (%1)").arg(split.workers.size()));
    }
    const int64_t first = split.firstStartUnixUs();
    const QStringList outlying = outlyingWorkers(split);
    for (qsizetype i = 0; i < split.workers.size(); ++i) {
        const WorkerRecord &w = split.workers[i];
        const bool timed = w.calls > w.failed;
        QString clock = w.clock == WorkerRecord::Clock::Synchronized ? tr("synced")
            : w.clock == WorkerRecord::Clock::Unsynchronized         ? tr("not synced")
                                                                     : QStringLiteral("-");
        if (w.clockErrorUs >= 0)
            clock += QStringLiteral(" ±")
                + formatDuration(std::chrono::microseconds(static_cast<int64_t>(w.clockErrorUs)));
        const QStringList cells { QStringLiteral("%1/%2").arg(w.index).arg(split.count), w.host,
            QString::number(w.calls), QString::number(w.failed), formatRate(w.requestsPerSecond()),
            timed ? formatNanos(static_cast<double>(w.p50Ns)) : QStringLiteral("-"),
            timed ? formatNanos(static_cast<double>(w.p99Ns)) : QStringLiteral("-"),
            w.timedStartUnixUs > 0 && first > 0
                ? QStringLiteral("+") + formatDuration(std::chrono::microseconds(w.timedStartUnixUs - first))
                : QStringLiteral("-"),
            clock };
        const int row = m_workers->rowCount();
        m_workers->insertRow(row);
        for (int column = 0; column < cells.size(); ++column) {
            auto *item = new QTableWidgetItem(cells[column]);
            if (column >= 2 && column <= 7)
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            if (!outlying[i].isEmpty()) {
                // Red reads on light and dark palettes alike; the tooltip says why.
                item->setForeground(QColor(0xd0, 0x30, 0x30));
                item->setToolTip(tr("This worker stands out: %1").arg(outlying[i]));
            }
            m_workers->setItem(row, column, item);
        }
    }
    for (int missing : split.missing) {
        const int row = m_workers->rowCount();
        m_workers->insertRow(row);
        m_workers->setItem(row, 0, new QTableWidgetItem(QStringLiteral("%1/%2").arg(missing).arg(split.count)));
        m_workers->setItem(row, 1, new QTableWidgetItem(tr("missing: not in this merge")));
    }
}

void RunPage::showChecks(const std::vector<CheckResult> &results)
{
    if (results.empty()) {
        m_checks->clear();
        m_checks->hide();
        return;
    }
    const auto failed = std::count_if(results.cbegin(), results.cend(), [](const CheckResult &r) { return !r.passed; });
    // Colours that read on light and dark palettes alike; the words say it too.
    QString text = failed ? tr("<b style=\"color:#e53935\">Checks: %1 of %2 failed</b>").arg(failed).arg(results.size())
                          : tr("<b style=\"color:#43a047\">Checks: all %1 met</b>").arg(results.size());
    for (const CheckResult &r : results) {
        const QString actual = r.measured ? formatCheckValue(r.check, r.actual) : tr("not measured: no OK call");
        text += QStringLiteral(" &nbsp;&middot;&nbsp; %1 %2 (%3)")
                    .arg(r.passed ? tr("ok") : QStringLiteral("<b>%1</b>").arg(tr("FAIL")),
                        r.check.text.toHtmlEscaped(), actual.toHtmlEscaped());
    }
    m_checks->setText(text);
    m_checks->show();
}

size_t RunPage::chartKey(Chart chart) const
{
    // What each chart is drawn from: redraw when that changed, not on every snapshot.
    const RunSnapshot &s = m_snapshot;
    switch (chart) {
    case HistogramChart:
        return qHashMulti(0, s.generation, s.latency.count(), showsMessages(), s.messageLatency.count());
    case SpectrumChart:
        return qHashMulti(0, s.generation, s.latency.count(), s.serviceLatency.count(), s.openLoop, showsMessages(),
            s.messageLatency.count());
    case LatencyTimeChart:
    case ThroughputChart:
    case ChartCount:
        break;
    }
    return qHashMulti(0, s.generation, s.timeline.size(), showsMessages());
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
        updateHistogram(shownLatency(), view.userRange);
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

bool RunPage::showsMessages() const
{
    return !m_latencyOf->isHidden() && m_latencyOf->currentIndex() == 0;
}

const LatencyHistogram &RunPage::shownLatency() const
{
    return showsMessages() ? m_snapshot.messageLatency : m_snapshot.latency;
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
        s.callsCompleted()
            ? QStringLiteral("%1 (%2%)")
                  .arg(s.callsFailed())
                  .arg(
                      100.0 * static_cast<double>(s.callsFailed()) / static_cast<double>(s.callsCompleted()), 0, 'f', 2)
            : QStringLiteral("0"));
    // Throughput counts the calls that ended as expected; failed calls are counted as such, above, never here.
    setRow(row++, tr("OK calls/s"), QString::number(s.okPerSecond(), 'f', 1));
    if (s.hasStreams()) {
        // A stream is one call; its messages, and what each took, come beside the calls.
        setRow(row++, tr("Messages sent"), QString::number(s.messagesSent));
        setRow(row++, tr("Messages received"), QString::number(s.messagesReceived));
        setRow(row++, tr("Messages received/s"), QString::number(s.messagesReceivedPerSecond(), 'f', 1));
        const LatencyHistogram &first = s.firstMessageLatency;
        if (!first.isEmpty()) { // a server stream: its first message apart from the gaps after it
            for (double pct : { 50.0, 99.0 })
                setRow(row++, tr("First message p%1").arg(pct, 0, 'g', 6),
                    formatNanos(static_cast<double>(first.percentile(pct))));
        }
        const LatencyHistogram &m = s.messageLatency;
        if (!m.isEmpty()) {
            const QString what = first.isEmpty() ? tr("Per message") : tr("Later gaps");
            for (double pct : { 50.0, 90.0, 99.0 })
                setRow(row++, QStringLiteral("%1 p%2").arg(what).arg(pct, 0, 'g', 6),
                    formatNanos(static_cast<double>(m.percentile(pct))));
            setRow(row++, QStringLiteral("%1 mean").arg(what), formatNanos(m.mean()));
            setRow(row++, QStringLiteral("%1 max").arg(what), formatNanos(static_cast<double>(m.max())));
            if (const auto backToBack = backToBackGaps(s))
                setRow(row++, tr("Back-to-back gaps"),
                    tr("%1% under %2: read together, they time rpcscope's reads; the mean is the pace")
                        .arg(backToBack->share * 100, 0, 'f', 0)
                        .arg(formatNanos(static_cast<double>(backToBack->thresholdNs))));
        }
    }
    // Latency is of the calls that ended as expected: with none, it was not measured ("-", never 0).
    auto latency = [&h](double nanos) { return h.isEmpty() ? QStringLiteral("-") : formatNanos(nanos); };
    setRow(row++, tr("Mean"), latency(h.mean()));
    setRow(row++, tr("Std dev"), latency(h.stddev()));
    setRow(row++, tr("Min"), latency(static_cast<double>(h.min())));
    for (double pct : reportPercentiles())
        setRow(row++, QStringLiteral("p%1").arg(pct, 0, 'g', 6), latency(static_cast<double>(h.percentile(pct))));
    setRow(row++, tr("Max"), latency(static_cast<double>(h.max())));
    if (s.callsCompleted()) {
        const auto n = static_cast<double>(s.callsCompleted());
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
        // Unknown for an imported report: "-", not 0.
        setRow(row++, tr("Client CPU/call"),
            s.hasClientStats() ? QStringLiteral("%1 us").arg(s.clientCpuPerCallUs(), 0, 'f', 1) : QStringLiteral("-"));
        setRow(row++, tr("Client peak RSS"),
            s.hasClientStats() ? formatBytes(static_cast<double>(s.clientPeakRssBytes)) : QStringLiteral("-"));
        if (s.hasServerStats) {
            setRow(row++, tr("Server CPU/call"), QStringLiteral("%1 us").arg(s.serverCpuPerCallUs(), 0, 'f', 1));
            setRow(row++, tr("Server peak RSS"), formatBytes(static_cast<double>(s.serverPeakRssBytes)));
        }
    }
    if (s.warmupCalls)
        setRow(row++, tr("Warm-up calls (not counted)"), QString::number(s.warmupCalls));
    if (s.repliesChecked)
        setRow(row++, tr("Replies checked (expect)"),
            tr("%1, %2 unexpected").arg(s.repliesChecked).arg(s.statusCounts[CallStatus::UnexpectedReply]));
    m_summary->setRowCount(row);

    // Status codes: every code that occurred, errors never hidden.
    int statusRow = 0;
    for (int code = 0; code < CallStatus::SlotCount; ++code) {
        const uint64_t c = s.statusCounts[static_cast<size_t>(code)];
        if (!c)
            continue;
        m_status->setRowCount(statusRow + 1);
        const bool expected = s.expectedStatuses.has(code);
        const QString values[]
            = { !expected || s.expectedStatuses.onlyOk() ? callStatusName(code)
                                                         : tr("%1 (expected)").arg(callStatusName(code)),
                  QString::number(c),
                  QStringLiteral("%1%").arg(
                      100.0 * static_cast<double>(c) / static_cast<double>(s.callsCompleted()), 0, 'f', 2) };
        for (int column = 0; column < 3; ++column) {
            // Only what changed: a new item per cell per snapshot repaints and re-lays out the table each time.
            QTableWidgetItem *item = m_status->item(statusRow, column);
            if (!item) {
                item = new QTableWidgetItem;
                m_status->setItem(statusRow, column, item);
            }
            if (item->text() != values[column])
                item->setText(values[column]);
            const QBrush color = !expected ? QBrush(QColor(0xd0, 0x3b, 0x3b)) : m_status->palette().text();
            if (item->foreground() != color)
                item->setForeground(color);
            // Replies that failed an expectation: the first ones kept, on hover.
            const QString tip = code == CallStatus::UnexpectedReply ? unexpectedRepliesTip(s) : QString();
            if (item->toolTip() != tip)
                item->setToolTip(tip);
        }
        ++statusRow;
    }
    m_status->setRowCount(statusRow);

    // Streaming runs with timed messages offer the per-message view (and open on it); others have calls only.
    const bool messages = s.messageLatency.count() > 0;
    if (messages == m_latencyOf->isHidden()) {
        m_latencyOf->setVisible(messages);
        m_plot->yAxis->setLabel(
            messages && m_latencyOf->currentIndex() == 0 ? tr("messages per bin") : tr("calls per bin"));
    }
    showFailures(s);
    m_snapshot = s;
    refreshCurrentChart();
}

void RunPage::showFailures(const RunSnapshot &s)
{
    // What failed, named where nobody can miss it: a run with no OK call is not a measurement.
    const QString failures = failureSummary(s);
    if (failures.isEmpty()) {
        if (!m_failures->isHidden())
            m_failures->hide();
        return;
    }
    const bool none = s.callsOk() == 0;
    QString text = failures;
    text[0] = text[0].toUpper();
    if (none && s.isFinal()) {
        // One stop after the message, whether it ends in a full stop, an ellipsis (cut short) or neither.
        if (text.endsWith(u'.') && !text.endsWith(QChar(0x2026)))
            text.chop(1);
        text += (text.endsWith(QChar(0x2026)) ? QStringLiteral(" ") : QStringLiteral(". "))
            + tr("No latency or throughput was measured.");
    }
    if (m_failures->text() != text)
        m_failures->setText(text);
    const QString style = none ? QStringLiteral("background:#fde2e1; color:#8a1c1c; border:1px solid #d03b3b;")
                               : QStringLiteral("background:#fff4d6; color:#6b4a00; border:1px solid #d9a400;");
    if (m_failures->styleSheet() != style + QStringLiteral(" padding:4px;"))
        m_failures->setStyleSheet(style + QStringLiteral(" padding:4px;"));
    if (m_failures->isHidden())
        m_failures->show();
}

void RunPage::updateHistogram(const LatencyHistogram &h, bool keepRange)
{
    if (h.isEmpty()) {
        m_bars->data()->clear();
        m_histogramMarkers->hide();
        return;
    }
    const auto [lowMs, highMs] = histogramSpanMs(h);
    const HistogramBins bins = histogramBins(h, lowMs, highMs);
    m_bars->setData(bins.edgesMs, bins.counts, true);
    if (!keepRange) {
        m_plot->xAxis->setRange(lowMs / 1.3, highMs * 1.3);
        m_plot->yAxis->setRange(0, bins.peak * 1.18);
    }
    m_histogramMarkers->update(h);
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
    m_corrected->setName(showsMessages() ? tr("per message")
            : s.openLoop                 ? tr("from intended send time (corrected)")
                                         : tr("latency"));
    m_spectrum->legend->setVisible(s.openLoop);

    double lowMs = std::numeric_limits<double>::max();
    double highMs = 0;
    double rightKey = 1;
    auto fill = [&](QCPGraph *graph, const LatencyHistogram &h) {
        const SpectrumCurve curve = spectrumCurve(h);
        graph->setData(curve.keys, curve.ms, true);
        if (!curve.keys.isEmpty()) {
            lowMs = std::min(lowMs, curve.ms.first());
            highMs = std::max(highMs, curve.ms.last());
            rightKey = std::max(rightKey, curve.keys.last());
        }
    };
    fill(m_corrected, shownLatency());
    if (m_uncorrected) // the open loop's two views are of calls
        fill(m_uncorrected, showsMessages() ? LatencyHistogram() : s.serviceLatency);
    if (!keepRange) {
        m_spectrum->xAxis->setRange(0.9, std::max(rightKey * 1.5, 1e3));
        m_spectrum->yAxis->setRange(latencyRange(lowMs, highMs, 1.5));
    }
    m_spectrumMarkers->update(shownLatency());
}

void RunPage::sayWhenTooShort(QCustomPlot *plot, QCPItemText **note)
{
    const RunSnapshot &s = m_snapshot;
    const bool tooShort = s.isFinal() && s.timeline.size() < 2 && s.elapsed.count() > 0;
    if (!tooShort) {
        if (*note)
            (*note)->setVisible(false);
        return;
    }
    if (!*note) {
        *note = new QCPItemText(plot);
        (*note)->position->setType(QCPItemPosition::ptAxisRectRatio);
        (*note)->position->setCoords(0.5, 0.5);
        (*note)->setPositionAlignment(Qt::AlignCenter);
        (*note)->setTextAlignment(Qt::AlignCenter);
        (*note)->setClipToAxisRect(false);
    }
    (*note)->setColor(palette().color(QPalette::WindowText));
    (*note)->setText(tr("This run took %1, less than one interval of the time series:\nnothing to draw over time. "
                        "A shorter interval (Advanced > Interval, e.g. 50ms) draws one.")
                         .arg(formatDuration(s.elapsed)));
    (*note)->setVisible(true);
}

void RunPage::updateLatencyTime(bool keepRange)
{
    sayWhenTooShort(m_latencyTime, &m_tooShort[0]);
    const TimelineSeries series = timelineSeries(m_snapshot.timeline, showsMessages());
    for (size_t j = 0; j < 3; ++j)
        m_percentileGraphs[j]->setData(series.seconds, series.latencyMs[j], true);
    if (!keepRange) {
        m_latencyTime->xAxis->setRange(0, series.endSeconds > 0 ? series.endSeconds * 1.03 : 10);
        m_latencyTime->yAxis->setRange(latencyRange(series.lowMs, series.highMs, 1.25));
    }
}

void RunPage::updateThroughput(bool keepRange)
{
    const RunSnapshot &s = m_snapshot;
    sayWhenTooShort(m_throughput, &m_tooShort[1]);
    const TimelineSeries series = timelineSeries(s.timeline, showsMessages());
    const QString rateName = showsMessages() ? tr("messages/s") : tr("OK calls/s");
    if (m_rate->name() != rateName) {
        m_rate->setName(rateName);
        m_throughput->yAxis->setLabel(showsMessages() ? tr("per second (1/s)") : tr("calls per second (1/s)"));
    }
    m_rate->setData(series.seconds, series.rates, true);
    m_errorRate->setData(series.seconds, series.errorRates, true);
    const int topConcurrency = series.topConcurrency;

    if (topConcurrency > 0 && !m_concurrency) {
        m_concurrency = m_throughput->addGraph(m_throughput->xAxis, m_throughput->yAxis2);
        m_concurrency->setLayer(QStringLiteral("behind"));
        // Callers change in steps, each value held over the interval it ends: not a diagonal between two points.
        m_concurrency->setLineStyle(QCPGraph::lsStepRight);
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
        m_concurrency->setData(series.seconds, series.concurrency, true);
    }
    if (!keepRange) {
        m_throughput->xAxis->setRange(0, series.endSeconds > 0 ? series.endSeconds * 1.03 : 10);
        m_throughput->yAxis->setRange(0, series.topRate > 0 ? series.topRate * 1.15 : 1);
        if (m_concurrency)
            m_throughput->yAxis2->setRange(0, topConcurrency * 1.15);
    }
}

} // namespace rpcscope
