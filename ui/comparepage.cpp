#include "comparepage.h"

#include "charts.h"
#include "compare/sequentialab.h"
#include "layoutmemory.h"
#include "presentationview.h"
#include "profilepanel.h"
#include "qcp.h"
#include "replicatechart.h"
#include "report/comparereport.h"
#include "store/environment.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSettings>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>

#include <cmath>
#include <utility>

namespace rpcscope {

namespace {

enum Chart { HistogramChart, SpectrumChart, LatencyTimeChart, ThroughputChart };
enum Column { MetricColumn, AColumn, BColumn, DeltaColumn, ChangeColumn, DetectableColumn, VerdictColumn, ColumnCount };

// The basis is a footnote to the verdict: the text colour toned towards the background, in either theme.
void muteLabel(QLabel *label, const QPalette &palette)
{
    QPalette muted = label->palette();
    muted.setColor(
        QPalette::WindowText, mixColors(palette.color(QPalette::WindowText), palette.color(QPalette::Window), 0.7));
    label->setPalette(muted);
}

QString runLabel(const RunRecord &r, int index)
{
    // The letter once: an A/B run's sides already end with theirs ("built-in server (A)").
    const QChar letter(u'A' + std::min(index, 25));
    QString name = r.displayName();
    if (name.endsWith(QStringLiteral(" (%1)").arg(letter)) || name.startsWith(QStringLiteral("%1: ").arg(letter)))
        return name;
    return QStringLiteral("%1 %2").arg(letter, name);
}

} // namespace

QColor ComparePage::runColor(int index)
{
    // Distinct in light and dark themes and for the common colour-vision deficiencies (blue/orange first).
    static const QColor colors[]
        = { QColor(0x1f, 0x77, 0xb4), QColor(0xff, 0x7f, 0x0e), QColor(0x2c, 0xa0, 0x2c), QColor(0xd6, 0x27, 0x28),
              QColor(0x94, 0x67, 0xbd), QColor(0x8c, 0x56, 0x4b), QColor(0xe3, 0x77, 0xc2), QColor(0x17, 0xbe, 0xcf) };
    return colors[index % 8];
}

ComparePage::ComparePage(QWidget *parent) : QWidget(parent)
{
    auto *layout = new QVBoxLayout(this);
    auto *controls = new QHBoxLayout;
    m_baseline = new QComboBox;
    m_baseline->setObjectName(QStringLiteral("compareBaseline"));
    m_baseline->setToolTip(tr("The baseline: the run the others are measured against (A)."));
    m_candidate = new QComboBox;
    m_candidate->setObjectName(QStringLiteral("compareCandidate"));
    m_candidate->setToolTip(tr("The run compared against the baseline in the table and the verdict (B)."));
    // Long run names do not set the window's minimum width: the boxes shrink to a few words, the list stays whole.
    for (QComboBox *box : { m_baseline, m_candidate }) {
        box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        box->setMinimumContentsLength(8);
    }
    m_threshold = new QDoubleSpinBox;
    m_threshold->setObjectName(QStringLiteral("compareThreshold"));
    m_threshold->setRange(0.1, 90);
    m_threshold->setDecimals(1);
    m_threshold->setSuffix(QStringLiteral(" %"));
    m_threshold->setToolTip(tr("The smallest significant change of p50, p95 or p99 that counts as a regression or an "
                               "improvement; smaller significant changes are reported as within the threshold."));
    m_threshold->setValue(QSettings().value(QStringLiteral("compare/threshold"), 5.0).toDouble());
    // "A" and "B", as every chart, table and verdict on the page names them: at 1366x768 with the docks and the
    // scenario open, "Baseline (A):" and "Compared (B):" made the page 110 px wider than its room, and it was cut.
    auto *baselineLabel = new QLabel(tr("A:"));
    baselineLabel->setToolTip(m_baseline->toolTip());
    auto *candidateLabel = new QLabel(tr("B:"));
    candidateLabel->setToolTip(m_candidate->toolTip());
    controls->addWidget(baselineLabel);
    controls->addWidget(m_baseline, 1);
    controls->addWidget(candidateLabel);
    controls->addWidget(m_candidate, 1);
    auto *thresholdLabel = new QLabel(tr("Threshold:"));
    thresholdLabel->setToolTip(m_threshold->toolTip());
    controls->addWidget(thresholdLabel);
    controls->addWidget(m_threshold);
    auto *present = new QPushButton(tr("Present"));
    present->setObjectName(QStringLiteral("comparePresent"));
    present->setToolTip(tr("Show the comparison full screen as slides, for a room (F11; Esc leaves)."));
    connect(present, &QPushButton::clicked, this, [this] { PresentationView::present(this); });
    controls->addWidget(present);
    layout->addLayout(controls);

    m_sequential = new QLabel;
    m_sequential->setObjectName(QStringLiteral("compareSequential"));
    m_sequential->setWordWrap(true);
    m_sequential->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_sequential->setMargin(8);
    m_sequential->setToolTip(tr("Judged after every pair of blocks (A_i, B_i), or of server processes when the servers "
                                "were started anew while it ran, with an anytime-valid 95% confidence sequence: it "
                                "may be looked at, and the run stopped, at any pair without inflating false verdicts. "
                                "The p50 and, where it was measured, the server's CPU per call are judged, each at "
                                "97.5% (docs/sequential.md)."));
    m_sequential->hide();
    layout->addWidget(m_sequential);
    m_verdict = new QLabel;
    m_verdict->setObjectName(QStringLiteral("compareVerdict"));
    m_verdict->setWordWrap(true);
    m_verdict->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_verdict->setMargin(6);
    layout->addWidget(m_verdict);
    m_basis = new QLabel;
    m_basis->setObjectName(QStringLiteral("compareBasis"));
    m_basis->setWordWrap(true);
    m_basis->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_basis->setContentsMargins(6, 0, 6, 0);
    m_basis->setToolTip(tr("What the verdict rests on: the replicates of each side (blocks of an A/B run, server "
                           "processes, or whole runs) and how many metrics the p values are adjusted over."));
    QFont small = m_basis->font();
    small.setPointSizeF(small.pointSizeF() * 0.9);
    m_basis->setFont(small);
    muteLabel(m_basis, palette());
    layout->addWidget(m_basis);

    m_empty = new QLabel(tr("Select two or more runs in the History and choose Compare, or run Compare A/B."));
    m_empty->setAlignment(Qt::AlignCenter);
    m_empty->setWordWrap(true); // one line of it held the page 490 px wide
    layout->addWidget(m_empty);

    m_body = new QSplitter(Qt::Vertical);
    // The overlays and, beside them, the replicates the verdict compares: both at the height of the charts, which
    // suits the spread's tall, narrow strips of dots.
    m_top = new QSplitter(Qt::Horizontal);
    m_charts = new QTabWidget;
    for (const QString &title : { tr("Histogram"), tr("Percentiles"), tr("Latency over time"), tr("Throughput") })
        m_plots << addChart(title);
    setUpHistogramAxes(m_plots[HistogramChart], tr("share of calls (%)"));
    setUpSpectrumAxes(m_plots[SpectrumChart]);
    setUpLatencyTimeAxes(m_plots[LatencyTimeChart]);
    setUpThroughputAxes(m_plots[ThroughputChart]);
    m_top->addWidget(m_charts);
    m_spread = new ReplicateChart;
    m_spread->setMinimumWidth(200);
    m_top->addWidget(m_spread);
    m_top->setChildrenCollapsible(false);
    m_top->setSizes({ 550, 450 }); // proportions: the splitter scales them to its width
    m_body->addWidget(m_top);
    auto *bottom = new QWidget;
    m_bottom = bottom;
    auto *bottomLayout = new QVBoxLayout(bottom);
    bottomLayout->setContentsMargins(0, 0, 0, 0);
    m_table = new QTableWidget(0, ColumnCount);
    m_table->setObjectName(QStringLiteral("compareTable"));
    m_table->setHorizontalHeaderLabels(
        { tr("Metric"), tr("A"), tr("B"), tr("Delta"), tr("Change"), tr("Detectable"), tr("Verdict (CI)") });
    // One estimate per metric: a row the verdict judges on replicates shows what the verdict compares.
    for (int column : { AColumn, BColumn, DeltaColumn, ChangeColumn })
        m_table->horizontalHeaderItem(column)->setToolTip(
            tr("A latency row judged on replicates (blocks, server processes or runs) shows what its verdict "
               "compares: the geometric mean of each side's replicates, and their change, the verdict's estimate. "
               "The value of all of a side's calls pooled is in the cell's tooltip, labelled as pooled. Other rows "
               "pool every call of a side."));
    m_table->horizontalHeaderItem(DetectableColumn)
        ->setToolTip(tr("The minimum detectable change: the smallest change this comparison finds 80% of the time at "
                        "the noise measured between replicates. A smaller change can hide in the noise."));
    m_table->verticalHeader()->hide();
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setAlternatingRowColors(true);
    // One line a row, as the Run page's tables: every metric shows at 1400x900 without scrolling.
    m_table->setWordWrap(false);
    m_table->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    bottomLayout->addWidget(m_table);
    m_differences = new QLabel;
    m_differences->setWordWrap(true);
    m_differences->setTextInteractionFlags(Qt::TextSelectableByMouse);
    bottomLayout->addWidget(m_differences);
    m_body->addWidget(bottom);
    m_body->setStretchFactor(0, 3);
    m_body->setStretchFactor(1, 2);
    layout->addWidget(m_body, 1);
    rememberSplitter(m_body, QStringLiteral("compare/body"));

    setUpProfilePanels();
    connect(m_baseline, &QComboBox::currentIndexChanged, this, &ComparePage::recompute);
    connect(m_candidate, &QComboBox::currentIndexChanged, this, &ComparePage::recompute);
    connect(m_threshold, &QDoubleSpinBox::valueChanged, this, [this](double value) {
        QSettings().setValue(QStringLiteral("compare/threshold"), value);
        recompute();
    });
    setRuns({});
}

QCustomPlot *ComparePage::addChart(const QString &title)
{
    auto *plot = new QCustomPlot;
    // Not the legend's width (two long run names side by side): the page fits beside the editor in 1400 pixels.
    plot->setMinimumSize(260, 180); // with the dots beside them, the page fits beside the editor at 1366 px
    plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    applyChartPalette(plot, palette());
    placeLegendBelow(plot, 2);
    plot->legend->setVisible(true);
    new LegendFitter(plot, 2); // long run names are cut to their column, not clipped by the chart's edge
    m_charts->addTab(plot, title);
    return plot;
}

void ComparePage::setUpProfilePanels()
{
    for (size_t i = 0; i < m_profilePanels.size(); ++i) {
        m_profilePanels[i] = new ProfilePanel(this); // owned here while no tab holds it
        m_profilePanels[i]->setObjectName(
            i == 0 ? QStringLiteral("compareServerProfile") : QStringLiteral("compareClientProfile"));
        m_profilePanels[i]->hide();
    }
    // A flame graph takes the page: the replicates' dots and the latency table, which belong to the overlays'
    // metrics, step aside while it shows (the verdict stays above it).
    connect(m_charts, &QTabWidget::currentChanged, this, [this](int index) {
        const bool chart = m_plots.contains(qobject_cast<QCustomPlot *>(m_charts->widget(index)));
        m_spread->setVisible(chart);
        m_bottom->setVisible(chart);
    });
}

int ComparePage::currentChart() const
{
    const int index = m_plots.indexOf(qobject_cast<QCustomPlot *>(m_charts->currentWidget()));
    return index < 0 ? 0 : index;
}

void ComparePage::updateProfiles()
{
    const RunRecord *a = baseline();
    const RunRecord *b = candidate();
    for (int i = 0; i < 2; ++i) {
        ProfilePanel *panel = m_profilePanels[static_cast<size_t>(i)];
        const auto profileOf = [i](const RunRecord *run) -> const std::optional<Profile> * {
            if (!run)
                return nullptr;
            const std::optional<Profile> &profile = i == 0 ? run->serverProfile : run->clientProfile;
            return profile ? &profile : nullptr;
        };
        const std::optional<Profile> *pa = profileOf(a);
        const std::optional<Profile> *pb = profileOf(b);
        const int tab = m_charts->indexOf(panel);
        if (!pa || !pb) {
            if (tab >= 0)
                m_charts->removeTab(tab);
            panel->hide();
            continue;
        }
        if (tab < 0) {
            const int at = i == 0 && m_charts->indexOf(m_profilePanels[1]) >= 0 ? m_charts->indexOf(m_profilePanels[1])
                                                                                : m_charts->count();
            const int added = m_charts->insertTab(at, panel, i == 0 ? tr("Server profile") : tr("Client profile"));
            m_charts->setTabToolTip(added,
                tr("Where B's %1 CPU per call went against A's: widths are B's time, red slower, blue faster, grey "
                   "within noise (judged per server process, as the verdict is).")
                    .arg(i == 0 ? tr("server") : tr("client")));
        }
        panel->showDiff(**pa, **pb, QStringLiteral("A"), QStringLiteral("B"),
            tr("%1 CPU per call: %2 against %3")
                .arg(i == 0 ? tr("Server") : tr("Client"), b->displayName(), a->displayName()));
    }
}

QCustomPlot *ComparePage::plot(int index) const
{
    return m_plots.value(index);
}

void ComparePage::setRuns(const QList<RunRecord> &runs)
{
    m_runs = runs;
    const QSignalBlocker blockA(m_baseline);
    const QSignalBlocker blockB(m_candidate);
    m_baseline->clear();
    m_candidate->clear();
    for (int i = 0; i < m_runs.size(); ++i) {
        m_baseline->addItem(runLabel(m_runs[i], i));
        m_candidate->addItem(runLabel(m_runs[i], i));
    }
    m_baseline->setCurrentIndex(m_runs.isEmpty() ? -1 : 0);
    m_candidate->setCurrentIndex(m_runs.size() > 1 ? 1 : -1);
    const bool enough = m_runs.size() >= 2;
    m_empty->setVisible(!enough && !m_live);
    m_body->setVisible(enough);
    m_verdict->setVisible(enough && !m_live);
    m_basis->setVisible(enough);
    recompute();
    redraw();
}

const RunRecord *ComparePage::baseline() const
{
    const int i = m_baseline->currentIndex();
    return i >= 0 && i < m_runs.size() ? &m_runs[i] : nullptr;
}

const RunRecord *ComparePage::candidate() const
{
    const int i = m_candidate->currentIndex();
    return i >= 0 && i < m_runs.size() ? &m_runs[i] : nullptr;
}

void ComparePage::setThreshold(double fraction)
{
    m_threshold->setValue(fraction * 100);
}

double ComparePage::threshold() const
{
    return m_threshold->value() / 100;
}

const Comparison &ComparePage::comparison()
{
    settle();
    return m_comparison;
}

QString ComparePage::verdictText()
{
    settle();
    return m_verdict->text();
}

QString ComparePage::basisText() const
{
    return m_basis->text();
}

QString ComparePage::differencesText() const
{
    return m_differences->text();
}

void ComparePage::setLiveSequentialVerdict(const QString &line, SequentialDecision decision)
{
    const bool wasLive = std::exchange(m_live, !line.isEmpty());
    m_verdict->setVisible(m_runs.size() >= 2 && !m_live);
    m_empty->setVisible(m_runs.size() < 2 && !m_live);
    if (m_live)
        showSequential(tr("Live A/B: ") + line, decision);
    else if (wasLive)
        recompute(); // the saved pair's own sequential verdict, if it has one
}

QString ComparePage::sequentialText() const
{
    return m_sequential->isHidden() ? QString() : m_sequential->text();
}

void ComparePage::showSequential(const QString &line, SequentialDecision decision)
{
    m_sequential->setText(line);
    m_sequential->setVisible(!line.isEmpty());
    QColor background = palette().color(QPalette::AlternateBase);
    if (decision == SequentialDecision::Regression)
        background = QColor(0xf8, 0xd7, 0xda);
    else if (decision == SequentialDecision::Improvement)
        background = QColor(0xd4, 0xed, 0xda);
    else if (decision == SequentialDecision::NoChangeBeyondThreshold)
        background = QColor(0xdd, 0xe8, 0xf4);
    QFont big = font();
    big.setPointSizeF(big.pointSizeF() * 1.35);
    big.setBold(true);
    m_sequential->setFont(big);
    m_sequential->setStyleSheet(
        QStringLiteral("QLabel { background: %1; color: black; border-radius: 4px; }").arg(background.name()));
}

QTableWidget *ComparePage::table()
{
    settle();
    return m_table;
}

void ComparePage::settle()
{
    m_comparisons.waitForNewest();
}

void ComparePage::recompute()
{
    const RunRecord *a = baseline();
    const RunRecord *b = candidate();
    m_table->setRowCount(0);
    m_differences->clear();
    m_basis->clear();
    m_spread->clearComparison(); // the dots of the pair shown before are not this pair's
    m_comparisons.cancel(); // what was computing is not for this pair
    if (!m_live) {
        // A saved pair of A/B runs judged until decided: their verdict, judged again from their blocks.
        const std::optional<SequentialAb> judged = a && b ? sequentialVerdictOf(*a, *b) : std::nullopt;
        if (judged) {
            showSequential(tr("Judged until decided: ") + judged->verdictLine(tr("the run ended")), judged->decision());
        } else {
            showSequential(QString(), SequentialDecision::Undecided);
        }
    }
    updateProfiles();
    if (!a || !b) {
        m_comparison = {};
        m_verdict->clear();
        Q_EMIT comparisonChanged();
        return;
    }
    CompareOptions options;
    options.threshold = threshold();
    m_verdict->setText(tr("Comparing ..."));
    m_verdict->setStyleSheet(QString());
    // Copies: the runs may be replaced while the pool works on these. A result older than the newest computation is
    // dropped.
    m_comparisons.run(
        [snapshotA = a->snapshot, snapshotB = b->snapshot,
            rawA = okLatenciesUs(a->rawSamples, a->snapshot.expectedStatuses),
            rawB = okLatenciesUs(b->rawSamples, b->snapshot.expectedStatuses), options] {
            return !rawA.empty() && !rawB.empty() ? compareRuns(snapshotA, snapshotB, rawA, rawB, options)
                                                  : compareRuns(snapshotA, snapshotB, options);
        },
        [this](Comparison comparison) { showComparison(std::move(comparison)); });
}

void ComparePage::showComparison(Comparison comparison)
{
    m_comparison = std::move(comparison);
    const RunRecord *a = baseline();
    const RunRecord *b = candidate();
    if (!a || !b)
        return;
    QString line = a == b ? tr("Pick two different runs.") : m_comparison.verdictLine();
    // The basis has a line of its own under the verdict: not twice.
    const QString basisTail = QStringLiteral(" [") + m_comparison.basis() + u']';
    if (line.endsWith(basisTail))
        line.chop(basisTail.size());
    if (!m_sequential->isHidden() && a != b)
        line = tr("Fixed-sample detail (its intervals assume a run of planned length): ") + line;
    m_verdict->setText(line);
    // The verdict's colour carries its meaning; the text says it too, for anyone who cannot see the colour.
    QColor background = palette().color(QPalette::AlternateBase);
    if (m_comparison.overall == Verdict::Regression)
        background = QColor(0xf8, 0xd7, 0xda);
    else if (m_comparison.overall == Verdict::Improvement)
        background = QColor(0xd4, 0xed, 0xda);
    m_verdict->setStyleSheet(
        QStringLiteral("QLabel { background: %1; color: black; border-radius: 4px; font-weight: bold; }")
            .arg(background.name()));
    m_basis->setText(tr("Judged on %1.").arg(m_comparison.basis()));
    const int indexA = m_baseline->currentIndex();
    const int indexB = m_candidate->currentIndex();
    m_spread->setComparison(
        m_comparison, { runLabel(*a, indexA), runColor(indexA) }, { runLabel(*b, indexB), runColor(indexB) });
    // A panel per tested metric needs room; the note of a comparison without replicates needs little. Resized only
    // when that changes, so a width the user picked stays while they step through comparisons of one kind.
    const bool dots = !m_spread->spreads().isEmpty();
    if (dots != std::exchange(m_spreadHasDots, dots))
        m_top->setSizes(dots ? QList<int> { 550, 450 } : QList<int> { 750, 250 });
    m_table->setRowCount(static_cast<int>(m_comparison.rows.size()));
    int row = 0;
    for (const MetricRow &r : m_comparison.rows) {
        auto set = [&](int column, const QString &text, bool right) {
            auto *item = new QTableWidgetItem(text);
            if (right)
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            m_table->setItem(row, column, item);
        };
        set(MetricColumn, r.name + (r.lowerIsBetter ? QString() : tr(" (higher is better)")), false);
        set(AColumn, formatMetricValue(r.valueA, r.unit), true);
        set(BColumn, formatMetricValue(r.valueB, r.unit), true);
        if (r.judgedOnReplicates()) {
            auto tip = [&](const QString &side, ReplicateUnit unit, size_t count, double pooled) {
                return tr("Geometric mean of the %1 of %2's %3 (what the verdict compares); pooled over all of %2's "
                          "calls: %4")
                    .arg(r.name, side, replicateCountText(unit, static_cast<qint64>(count)),
                        formatMetricValue(pooled, r.unit));
            };
            m_table->item(row, AColumn)
                ->setToolTip(tip(QStringLiteral("A"), m_comparison.unitA, r.replicatesA.size(), r.pooledA));
            m_table->item(row, BColumn)
                ->setToolTip(tip(QStringLiteral("B"), m_comparison.unitB, r.replicatesB.size(), r.pooledB));
        }
        set(DeltaColumn, formatMetricDelta(r.delta, r.unit), true);
        set(ChangeColumn, formatPercentChange(r.relativeChange), true);
        // A size either way: "+-4.2%" without the sign formatPercentChange puts first.
        set(DetectableColumn,
            std::isfinite(r.interval.detectable) ? QChar(0x00b1) + formatPercentChange(r.interval.detectable).mid(1)
                                                 : QString(),
            true);
        QString verdict;
        if (r.hasVerdict && m_live)
            // While an A/B runs, the headline's sequential verdict is the one verdict: a fixed-sample verdict per row,
            // looked at after every block, would be a second (and would inflate false verdicts).
            verdict = tr("judged when the run ends (the headline judges it pair by pair now)");
        else if (r.hasVerdict)
            verdict = m_comparison.verdictText(r);
        else if (r.hasInterval)
            verdict
                = tr("CI %1 .. %2").arg(formatPercentChange(r.interval.ciLow), formatPercentChange(r.interval.ciHigh));
        else if (!r.reason.isEmpty())
            verdict = r.reason;
        set(VerdictColumn, verdict, false);
        m_table->item(row, VerdictColumn)->setToolTip(verdict); // whole, when the column is too narrow for it
        if (!m_live && (r.verdict == Verdict::Regression || r.verdict == Verdict::Improvement)) {
            QFont bold = m_table->font();
            bold.setBold(true);
            for (int c = 0; c < ColumnCount; ++c)
                m_table->item(row, c)->setFont(bold);
        }
        ++row;
    }
    const QStringList differences = runDifferences(*a, *b);
    m_differences->setText(differences.isEmpty() ? tr("Same method, stack, target and environment.")
                                                 : tr("What differs: ") + differences.join(QStringLiteral("; ")));
    Q_EMIT comparisonChanged();
}

void ComparePage::redraw()
{
    for (QCustomPlot *plot : m_plots)
        plot->clearGraphs();
    if (m_runs.size() < 2) {
        for (QCustomPlot *plot : m_plots)
            plot->replot();
        return;
    }
    // One span for every histogram, so their bins line up.
    double lowMs = std::numeric_limits<double>::max();
    double highMs = 0;
    for (const RunRecord &r : m_runs) {
        if (r.snapshot.latency.isEmpty())
            continue;
        const auto [low, high] = histogramSpanMs(r.snapshot.latency);
        lowMs = std::min(lowMs, low);
        highMs = std::max(highMs, high);
    }
    double peak = 0;
    double spectrumLow = std::numeric_limits<double>::max();
    double spectrumHigh = 0;
    double spectrumRight = 10;
    double timeEnd = 1;
    double timeLow = std::numeric_limits<double>::max();
    double timeHigh = 0;
    double topRate = 0;
    for (int i = 0; i < m_runs.size(); ++i) {
        const RunRecord &r = m_runs[i];
        const QString name = runLabel(r, i);
        QPen pen(runColor(i), 2);
        if (!r.snapshot.latency.isEmpty() && highMs > 0) {
            const HistogramBins bins = histogramBins(r.snapshot.latency, lowMs, highMs);
            QVector<double> share = bins.counts;
            const auto total = static_cast<double>(r.snapshot.latency.count());
            for (double &v : share)
                v = v * 100.0 / total;
            QCPGraph *g = m_plots[HistogramChart]->addGraph();
            g->setName(name);
            g->setPen(pen);
            g->setLineStyle(QCPGraph::lsStepLeft);
            g->setData(bins.edgesMs, share, true);
            for (double v : share)
                peak = std::max(peak, v);

            const SpectrumCurve curve = spectrumCurve(r.snapshot.latency);
            QCPGraph *s = m_plots[SpectrumChart]->addGraph();
            s->setName(name);
            s->setPen(pen);
            s->setData(curve.keys, curve.ms, true);
            for (double v : curve.ms) {
                if (v > 0) {
                    spectrumLow = std::min(spectrumLow, v);
                    spectrumHigh = std::max(spectrumHigh, v);
                }
            }
            if (!curve.keys.isEmpty())
                spectrumRight = std::max(spectrumRight, curve.keys.last() * 1.5);
        }
        const TimelineSeries series = timelineSeries(r.snapshot.timeline);
        QCPGraph *t = m_plots[LatencyTimeChart]->addGraph();
        t->setName(name + tr(" p50"));
        t->setPen(pen);
        t->setData(series.seconds, series.latencyMs[0], true);
        QCPGraph *t99 = m_plots[LatencyTimeChart]->addGraph();
        t99->setName(name + tr(" p99"));
        QPen dashed = pen;
        dashed.setStyle(Qt::DashLine);
        dashed.setWidthF(1.2);
        t99->setPen(dashed);
        t99->setData(series.seconds, series.latencyMs[2], true);
        QCPGraph *rate = m_plots[ThroughputChart]->addGraph();
        rate->setName(name);
        rate->setPen(pen);
        rate->setData(series.seconds, series.rates, true);
        timeEnd = std::max(timeEnd, series.endSeconds);
        if (series.highMs > 0) {
            timeLow = std::min(timeLow, series.lowMs);
            timeHigh = std::max(timeHigh, series.highMs);
        }
        topRate = std::max(topRate, series.topRate);
    }
    if (highMs > 0) {
        m_plots[HistogramChart]->xAxis->setRange(lowMs, highMs);
        m_plots[HistogramChart]->yAxis->setRange(0, std::max(peak * 1.1, 1.0));
    }
    if (spectrumHigh > 0) {
        m_plots[SpectrumChart]->xAxis->setRange(0.9, spectrumRight);
        m_plots[SpectrumChart]->yAxis->setRange(latencyRange(spectrumLow, spectrumHigh, 1.3));
    }
    m_plots[LatencyTimeChart]->xAxis->setRange(0, timeEnd * 1.02);
    if (timeHigh > 0)
        m_plots[LatencyTimeChart]->yAxis->setRange(latencyRange(timeLow, timeHigh, 1.3));
    m_plots[ThroughputChart]->xAxis->setRange(0, timeEnd * 1.02);
    m_plots[ThroughputChart]->yAxis->setRange(0, std::max(topRate * 1.1, 1.0));
    for (QCustomPlot *plot : m_plots) {
        plot->findChild<LegendFitter *>()->fit();
        plot->replot();
    }
}

void ComparePage::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) {
        muteLabel(m_basis, palette());
        for (QCustomPlot *plot : m_plots) {
            applyChartPalette(plot, palette());
            plot->replot();
        }
    }
}

} // namespace rpcscope
