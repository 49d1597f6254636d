#include "replicatechart.h"

#include "charts.h"
#include "util/units.h"

#include <QEvent>
#include <QMouseEvent>
#include <QToolTip>

#include <algorithm>
#include <cmath>
#include <limits>

namespace rpcscope {

namespace {

// In key units, with A's column at 1 and B's at 2: the dots spread over +-0.2, the mean bar reaches past them so
// its ends show even under a crowd of dots.
constexpr double kJitter = 0.2;
constexpr double kMeanHalfWidth = 0.32;
constexpr double kDotSize = 7;
// Narrower than this, a panel's two columns of dots run into each other. Panels on a second row would be too short
// for their axis titles: the less telling metrics are left out instead (their numbers are in the table).
constexpr int kMinPanelWidth = 110;

// Which metrics keep a panel when not all fit: the median first, then the tail the threshold speaks of, the mean.
int panelPriority(MetricKind kind)
{
    switch (kind) {
    case MetricKind::P50:
        return 0;
    case MetricKind::P95:
        return 1;
    case MetricKind::Mean:
        return 2;
    case MetricKind::P99:
        return 3;
    case MetricKind::MessageP50:
        return 4;
    default:
        return 5;
    }
}

// The verdict's colours of the page's verdict line, dark enough for text on either theme's background.
const QColor kRegressionText(0xc0, 0x39, 0x2b);
const QColor kImprovementText(0x1e, 0x84, 0x49);

} // namespace

ReplicateChart::ReplicateChart(QWidget *parent)
    : QCustomPlot(parent), m_panels(new QCPLayoutGrid), m_margins(new QCPMarginGroup(this))
{
    setObjectName(QStringLiteral("replicateChart"));
    setMouseTracking(true);
    // Panels side by side over a shared legend: the default axis rect goes, the legend stays (taken out of it first,
    // or the rect would delete it).
    axisRect()->insetLayout()->take(legend);
    plotLayout()->clear();
    plotLayout()->addElement(0, 0, m_panels);
    plotLayout()->addElement(1, 0, legend);
    plotLayout()->setRowStretchFactor(1, 0.001);
    m_panels->setColumnSpacing(6);
    legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    legend->setBorderPen(Qt::NoPen);
    legend->setMargins(QMargins(4, 0, 4, 2));
    legend->setVisible(false);
    setAccessibleName(tr("Spread of the replicates"));
    rebuild();
}

QString ReplicateChart::noReplicatesText()
{
    return tr("One run per side: no replicates to show (use A/B, or compare several runs)");
}

void ReplicateChart::setComparison(const Comparison &comparison, const Side &a, const Side &b)
{
    m_spreads = replicateSpreads(comparison);
    m_a = a;
    m_b = b;
    m_compared = true;
    m_singleRun = comparison.singleRun || comparison.perCall;
    rebuild();
}

void ReplicateChart::clearComparison()
{
    m_spreads.clear();
    m_compared = false;
    m_singleRun = false;
    rebuild();
}

ReplicateChart::Fit ReplicateChart::fitFor(int width) const
{
    Fit fit;
    fit.panels = std::clamp(width / kMinPanelWidth, 1, std::max(1, static_cast<int>(m_spreads.size())));
    // A and B on one row (the mean bar's entry under them) when both entries fit half the width, else one entry a
    // row with long names shortened: a legend wider than the chart would be clipped. About 7 px a character, and
    // the symbol and the replicate count ("A ...: 10 blocks") besides the name.
    const auto entryWidth = [](const QString &name) { return 7 * static_cast<int>(name.size()) + 110; };
    fit.legendColumns = std::max(entryWidth(m_a.name), entryWidth(m_b.name)) <= width / 2 ? 2 : 1;
    fit.nameChars = std::max(10, (width / fit.legendColumns - 130) / 7);
    return fit;
}

void ReplicateChart::rebuild()
{
    QToolTip::hideText();
    m_marks.clear();
    clearGraphs();
    clearItems();
    m_panels->clear(); // deletes the panels' axis rects, with their axes
    m_message.clear();
    const QPalette pal = palette();
    const QColor text = pal.color(QPalette::Text);
    setBackground(pal.brush(QPalette::Base));
    legend->setBrush(pal.brush(QPalette::Base));
    legend->setTextColor(text);
    legend->setFont(font());
    legend->setVisible(!m_spreads.isEmpty());
    m_fit = fitFor(width());
    legend->setWrap(m_fit.legendColumns);
    pickShown();

    if (m_spreads.isEmpty()) {
        drawBlank(pal);
        replot();
        return;
    }

    bool first = true;
    int column = 0;
    for (const ReplicateSpread &spread : std::as_const(m_shown)) {
        addPanel(spread, column++, first, pal);
        first = false;
    }
    replot();
}

void ReplicateChart::pickShown()
{
    m_shown.clear();
    QList<qsizetype> order;
    for (qsizetype i = 0; i < m_spreads.size(); ++i)
        order << i;
    std::stable_sort(order.begin(), order.end(), [this](qsizetype l, qsizetype r) {
        return panelPriority(m_spreads[l].kind) < panelPriority(m_spreads[r].kind);
    });
    order.resize(std::min<qsizetype>(order.size(), m_fit.panels));
    std::sort(order.begin(), order.end());
    for (const qsizetype i : std::as_const(order))
        m_shown << m_spreads[i];
}

void ReplicateChart::drawBlank(const QPalette &pal)
{
    const QColor text = pal.color(QPalette::Text);
    // An empty panel with nothing drawn: QCustomPlot expects an axis rect to be there (mouse events, items).
    auto *blank = new QCPAxisRect(this);
    m_panels->addElement(0, 0, blank);
    for (QCPAxis *axis : blank->axes()) {
        axis->setVisible(false);
        axis->grid()->setVisible(false);
    }
    if (m_compared) {
        m_message = m_singleRun ? noReplicatesText()
                                : tr("Too few calls in a replicate for every tested metric (use longer blocks or "
                                     "more calls)");
        auto *label = new QCPItemText(this);
        label->setClipToAxisRect(false);
        label->position->setType(QCPItemPosition::ptViewportRatio);
        label->position->setCoords(0.5, 0.5);
        label->setPositionAlignment(Qt::AlignCenter);
        label->setTextAlignment(Qt::AlignCenter);
        // Short lines: the chart is narrow beside the overlays, and the advice reads better on a line of its own.
        QString shown = m_message;
        const qsizetype paren = shown.indexOf(QStringLiteral(" ("));
        if (paren > 0)
            shown.replace(paren, 1, u'\n');
        if (const qsizetype colon = shown.indexOf(QStringLiteral(": ")); colon > 0 && colon < paren)
            shown.replace(colon + 1, 1, u'\n');
        label->setText(shown);
        label->setColor(mixColors(text, pal.color(QPalette::Base), 0.75)); // a note, quieter than data
        label->setFont(font());
    }
}

void ReplicateChart::addPanel(const ReplicateSpread &spread, int column, bool first, const QPalette &pal)
{
    auto *rect = new QCPAxisRect(this);
    m_panels->addElement(0, column, rect);
    // Every panel's plot the same size, whatever its tick labels.
    rect->setMarginGroup(QCP::msLeft | QCP::msTop | QCP::msBottom, m_margins);
    // Only the left (tick labels, title) and bottom (A, B, the change) need room: the hidden top and right axes
    // would otherwise take a strip of each narrow panel.
    rect->setAutoMargins(QCP::msLeft | QCP::msBottom);
    rect->setMargins(QMargins(0, 10, 4, 0));
    QCPAxis *x = rect->axis(QCPAxis::atBottom);
    QCPAxis *y = rect->axis(QCPAxis::atLeft);
    applyAxisPalette(x, pal);
    applyAxisPalette(y, pal);
    x->grid()->setVisible(false);

    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    ticker->addTick(1, QStringLiteral("A"));
    ticker->addTick(2, QStringLiteral("B"));
    x->setTicker(ticker);
    x->setSubTicks(false);
    x->setRange(0.4, 2.6);
    // The change the verdict rests on (B against A), under the dots it comes from; its colour repeats the
    // verdict's. Only the number: the panels are narrow, and the A and B under the columns say what it compares.
    x->setLabel(formatPercentChange(spread.change));
    if (spread.verdict == Verdict::Regression)
        x->setLabelColor(kRegressionText);
    else if (spread.verdict == Verdict::Improvement)
        x->setLabelColor(kImprovementText);

    const auto [lowNs, highNs] = spreadRangeNs(spread);
    const auto [scale, unit] = latencyAxisUnit(highNs);
    y->setRange(lowNs / scale, highNs / scale);
    // Short titles: a long metric name ("client CPU/call") takes its unit on a line of its own, or it is cut.
    const QString title = m_shortTitles ? spread.metric : spread.axisTitle;
    y->setLabel(QStringLiteral("%1%2(%3)")
                    .arg(title, m_shortTitles && title.size() > 10 ? QStringLiteral("\n") : QStringLiteral(" "), unit));
    y->setNumberFormat(QStringLiteral("g"));
    y->setNumberPrecision(4);
    y->ticker()->setTickCount(5);

    drawReplicates(spread, rect, x, y, scale, first, pal.color(QPalette::Text));
}

void ReplicateChart::drawReplicates(const ReplicateSpread &spread, QCPAxisRect *rect, QCPAxis *x, QCPAxis *y,
    double scale, bool first, const QColor &text)
{
    const struct {
        const Side &side;
        const std::vector<double> &values;
        double mean;
        double center;
        ReplicateUnit unit;
        QString role;
    } sides[] = { { m_a, spread.a, spread.geometricMeanA, 1, spread.unitA, QStringLiteral("A") },
        { m_b, spread.b, spread.geometricMeanB, 2, spread.unitB, QStringLiteral("B") } };
    for (const auto &s : sides) {
        QVector<double> keys;
        QVector<double> values;
        for (std::size_t i = 0; i < s.values.size(); ++i) {
            const double key = s.center + kJitter * spreadJitter(i);
            keys << key;
            values << s.values[i] / scale;
            m_marks.append({ x, y, key, s.values[i] / scale,
                tr("%1, %2: %3 %4").arg(s.role, replicateName(s.unit, i), spread.metric, formatNanos(s.values[i])) });
        }
        QCPGraph *dots = addGraph(x, y);
        dots->setLineStyle(QCPGraph::lsNone);
        QColor fill = s.side.color;
        fill.setAlpha(200); // dots on top of each other still show as darker
        dots->setScatterStyle(
            QCPScatterStyle(QCPScatterStyle::ssDisc, QPen(s.side.color.darker(115), 1), fill, kDotSize));
        dots->setData(keys, values); // sorts by key: the hover marks keep each dot's own replicate
        const QString name = s.side.name.size() > m_fit.nameChars
            ? s.side.name.left(m_fit.nameChars - 1) + QChar(0x2026)
            : s.side.name;
        dots->setName(
            QStringLiteral("%1: %2").arg(name, replicateCountText(s.unit, static_cast<qint64>(s.values.size()))));
        if (!first)
            dots->removeFromLegend();

        auto *bar = new QCPItemLine(this);
        bar->setClipAxisRect(rect);
        bar->setClipToAxisRect(true);
        for (QCPItemPosition *end : { bar->start, bar->end })
            end->setAxes(x, y);
        bar->start->setCoords(s.center - kMeanHalfWidth, s.mean / scale);
        bar->end->setCoords(s.center + kMeanHalfWidth, s.mean / scale);
        // In the text colour: a bar in the dots' own colour vanishes among them.
        bar->setPen(QPen(text, 2.5, Qt::SolidLine, Qt::FlatCap));
        m_marks.append({ x, y, s.center + kMeanHalfWidth * 0.9, s.mean / scale,
            tr("%1 geometric mean: %2 %3").arg(s.role, spread.metric, formatNanos(s.mean)) });
    }
    if (first) {
        // A legend entry for the bars: an empty graph drawn only in the legend.
        QCPGraph *meanEntry = addGraph(x, y);
        meanEntry->setPen(QPen(text, 2.5));
        meanEntry->setName(tr("geometric mean"));
    }
}

void ReplicateChart::changeEvent(QEvent *event)
{
    QCustomPlot::changeEvent(event);
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::FontChange)
        rebuild();
}

void ReplicateChart::resizeEvent(QResizeEvent *event)
{
    QCustomPlot::resizeEvent(event);
    if (!m_spreads.isEmpty() && fitFor(width()) != m_fit)
        rebuild();
}

void ReplicateChart::mouseMoveEvent(QMouseEvent *event)
{
    QCustomPlot::mouseMoveEvent(event);
    constexpr double kReach = 10; // px
    const QPointF pos = event->position();
    const Mark *best = nullptr;
    double bestDistance = kReach;
    for (const Mark &mark : std::as_const(m_marks)) {
        const double d = std::hypot(
            mark.keyAxis->coordToPixel(mark.key) - pos.x(), mark.valueAxis->coordToPixel(mark.value) - pos.y());
        if (d <= bestDistance) {
            best = &mark;
            bestDistance = d;
        }
    }
    if (best)
        QToolTip::showText(event->globalPosition().toPoint(), best->text, this);
    else
        QToolTip::hideText();
}

void ReplicateChart::leaveEvent(QEvent *event)
{
    QCustomPlot::leaveEvent(event);
    QToolTip::hideText();
}

} // namespace rpcscope
