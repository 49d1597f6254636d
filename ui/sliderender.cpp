#include "sliderender.h"

#include "charts.h"
#include "comparepage.h"
#include "export/flamegraphsvg.h"
#include "qcp.h"
#include "replicatechart.h"
#include "report/comparereport.h"
#include "report/profilereport.h"
#include "store/environment.h"
#include "util/outputfile.h"

#include <QBuffer>
#include <QDir>
#include <QFileInfo>
#include <QFontMetricsF>
#include <QPageSize>
#include <QPdfWriter>
#include <QRegularExpression>
#include <QSvgRenderer>

#include <algorithm>
#include <cmath>

namespace rpcscope {

namespace {

// Sizes in pixels of the 1920x1080 slide. Type that reads from the back of a room: the headline at 76 px (about 7% of
// the height), the key numbers at 44 px, nothing under 24 px.
constexpr double kMargin = 72;
constexpr double kTop = 44;
constexpr double kBottom = 36;
constexpr double kGap = 28;
constexpr double kFiguresHeight = 176;
constexpr double kCaptionHeight = 44;
// The type of the "where B's time went" lines: its lead, and a line per change.
constexpr int kProfileLead = 28;
constexpr int kProfileLine = 26;
constexpr int kProfilePageLine = 30; // a change on the profile page, under the graph
constexpr double kSideLabel = 38; // the "A" and "B" before a key number
// The charts are drawn at 1/kChartScale of their size on the slide and scaled up: their fonts (13 px in files) and
// lines grow with them, to 22 px and 3 px.
constexpr double kChartScale = 1.7;

const QColor kText(0x20, 0x20, 0x20);
const QColor kMuted(0x5f, 0x63, 0x68);
const QColor kPanel(0xf1, 0xf3, 0xf5);
// Darker than the run colours: text on white must stay readable from afar (and the words say it too).
const QColor kWorse(0xb0, 0x26, 0x1e);
const QColor kBetter(0x1b, 0x74, 0x33);

// Judged but not significant: the direction's colour, faint (still readable on the panel).
const QColor kWorseFaint(0xc9, 0x7b, 0x74);
const QColor kBetterFaint(0x6f, 0xa5, 0x7e);

bool isLatency(const MetricRow &row)
{
    return row.unit == MetricUnit::Nanoseconds;
}

double estimateOf(const MetricRow &row)
{
    return row.hasInterval && row.interval.valid ? row.interval.estimate : row.relativeChange;
}

// Whole percents read best from afar; under 10% a decimal says whether 4% is 3.6 or 4.4.
int decimalsFor(double a, double b = 0)
{
    return std::max(std::fabs(a), std::fabs(b)) < 0.095 ? 1 : 0;
}

QString percentText(double fraction)
{
    return std::isfinite(fraction) ? formatPercentChange(fraction, decimalsFor(fraction)) : QStringLiteral("-");
}

QString thresholdText(double threshold)
{
    return QString::number(threshold * 100, 'g', 3) + u'%';
}

// "95% CI +17 .. +21%"; empty without an interval.
QString intervalText(const MetricRow &row)
{
    if (!row.hasInterval || !row.interval.valid)
        return {};
    const ChangeInterval &i = row.interval;
    const int decimals = decimalsFor(i.ciLow, i.ciHigh);
    QString low = formatPercentChange(i.ciLow, decimals);
    low.chop(1); // the unit once, at the end
    return QStringLiteral("%1% CI %2 .. %3")
        .arg(QString::number(i.confidence * 100, 'g', 3), low, formatPercentChange(i.ciHigh, decimals));
}

// "p50 +19% slower".
QString changeText(const MetricRow &row)
{
    const double change = estimateOf(row);
    if (!std::isfinite(change))
        return row.name;
    QString text = row.name + u' ' + formatPercentChange(change, decimalsFor(change));
    const bool cpu = row.unit == MetricUnit::Microseconds; // CPU per call: spent, not waited
    if (change > 0)
        text += cpu ? QObject::tr(" more") : row.lowerIsBetter ? QObject::tr(" slower") : QObject::tr(" higher");
    else if (change < 0)
        text += cpu ? QObject::tr(" less") : row.lowerIsBetter ? QObject::tr(" faster") : QObject::tr(" lower");
    return text;
}

// The p50 speaks for the run, unless the verdict rests on other rows (a p99 regression with p50 unchanged).
const MetricRow *headlineRow(const Comparison &comparison)
{
    const MetricRow *p50 = comparison.row(MetricKind::P50);
    const QStringList *deciding = comparison.overall == Verdict::Regression ? &comparison.regressions
        : comparison.overall == Verdict::Improvement                        ? &comparison.improvements
                                                                            : nullptr;
    if (deciding && !deciding->isEmpty() && !(p50 && deciding->contains(p50->name))) {
        for (const MetricRow &row : comparison.rows) {
            if (row.name == deciding->first())
                return &row;
        }
    }
    return p50;
}

// "10 vs 10 blocks", "one run per side": what the verdict rests on, without the statistician's part.
QString shortBasis(const Comparison &c)
{
    if (c.perCall)
        return QObject::tr("one run per side, each call a sample");
    if (c.singleRun)
        return QObject::tr("one run per side");
    if (c.unitA == c.unitB)
        return QStringLiteral("%1 vs %2").arg(c.replicatesA).arg(replicateCountText(c.unitB, c.replicatesB));
    return replicateCountText(c.unitA, c.replicatesA) + QObject::tr(" vs ")
        + replicateCountText(c.unitB, c.replicatesB);
}

// A run's name for the subline: without an A/B side's letter (the sentence says which side it is), elided in the
// middle, never cut.
QString shortName(QString name, int chars = 48)
{
    static const QRegularExpression side(QStringLiteral(" \\([AB]\\)$"));
    name.remove(side);
    if (name.size() <= chars)
        return name;
    const int head = (chars - 1) / 2;
    return name.left(head) + QChar(0x2026) + name.right(chars - 1 - head);
}

QString subline(const SlideSpec &spec)
{
    const Comparison &c = spec.comparison;
    const MetricRow *row = headlineRow(c);
    const QString threshold = thresholdText(c.threshold);
    QString verdict;
    switch (c.overall) {
    case Verdict::Regression:
        verdict = QObject::tr("Regression beyond the %1 threshold.").arg(threshold);
        break;
    case Verdict::Improvement:
        verdict = QObject::tr("Improvement beyond the %1 threshold.").arg(threshold);
        break;
    case Verdict::WithinThreshold:
        verdict = QObject::tr("A real change, smaller than the %1 threshold.").arg(threshold);
        break;
    case Verdict::NoSignificantChange:
        verdict = row && row->hasInterval && std::isfinite(row->interval.detectable)
            ? QObject::tr("A change above %1%2 would have shown.")
                  .arg(QChar(0x00b1), formatPercentChange(row->interval.detectable).mid(1))
            : QObject::tr("No change beyond the noise.");
        break;
    case Verdict::Inconclusive:
        verdict = c.singleRun && !c.perCall
            ? QObject::tr("One run per side: the change may be run-to-run noise (an A/B run would tell).")
            : QObject::tr("The noise was too high to see a %1 change: %2 would narrow it.")
                  .arg(threshold, c.narrowedBy());
        break;
    case Verdict::TooFewSamples:
        verdict = row && !row->reason.isEmpty() ? QString(row->reason + u'.') : QObject::tr("Too few calls to judge.");
        break;
    case Verdict::NotTested:
        break;
    }
    // One run per side is said once: by the verdict's sentence when it explains the verdict.
    const bool basisSaid = c.overall == Verdict::Inconclusive && c.singleRun && !c.perCall;
    const QString who = basisSaid
        ? QObject::tr("B “%1” against A “%2”.")
              .arg(shortName(spec.candidate.displayName()), shortName(spec.baseline.displayName()))
        : QObject::tr("B “%1” against A “%2”, %3.")
              .arg(shortName(spec.candidate.displayName()), shortName(spec.baseline.displayName()), shortBasis(c));
    return verdict.isEmpty() ? who : QString(verdict + u' ' + who);
}

QString whenAndWhere(const RunRecord &a, const RunRecord &b)
{
    auto when = [](const RunRecord &r) {
        return r.startedAt.isValid() ? r.startedAt.toLocalTime().toString(QStringLiteral("d MMM yyyy HH:mm"))
                                     : QObject::tr("at an unknown time");
    };
    auto host = [](const RunRecord &r) { return r.environment.value(QStringLiteral("hostname")).toString(); };
    auto origin = [](const RunRecord &r) {
        return r.origin.isEmpty() || r.origin == u"rpcscope" ? QString() : QStringLiteral(" (%1)").arg(r.origin);
    };
    if (!host(a).isEmpty() && host(a) == host(b))
        return QObject::tr("A ran %1%2, B %3%4, both on %5.").arg(when(a), origin(a), when(b), origin(b), host(a));
    auto on = [&host](const RunRecord &r) {
        return host(r).isEmpty() ? QObject::tr(" on an unnamed machine") : QObject::tr(" on %1").arg(host(r));
    };
    return QObject::tr("A ran %1%2%3; B %4%5%6.").arg(when(a), on(a), origin(a), when(b), on(b), origin(b));
}

} // namespace

QColor SlideText::Figure::changeColor() const
{
    if (change == u"-" || !judged)
        return kMuted;
    if (tone != 0)
        return tone < 0 ? kWorse : kBetter;
    return direction < 0 ? kWorseFaint : direction > 0 ? kBetterFaint : kText;
}

namespace {

SlideText::Figure figure(const QString &name, const MetricRow *row, const RunSnapshot &a, const RunSnapshot &b)
{
    SlideText::Figure f;
    f.name = name;
    f.a = f.b = f.change = QStringLiteral("-");
    if (!row)
        return f;
    // Not measured shows as unknown, never as 0: a side without OK calls has no latency, one without calls no rate.
    auto measured = [row](const RunSnapshot &s, double value) {
        if (std::isnan(value))
            return false;
        if (isLatency(*row))
            return !s.latency.isEmpty();
        if (row->unit == MetricUnit::PerSecond)
            return s.callsCompleted() > 0;
        return true;
    };
    const bool hasA = measured(a, row->valueA);
    const bool hasB = measured(b, row->valueB);
    if (hasA)
        f.a = formatMetricValue(row->valueA, row->unit);
    if (hasB)
        f.b = formatMetricValue(row->valueB, row->unit);
    if (hasA && hasB)
        f.change = percentText(estimateOf(*row));
    if (row->verdict == Verdict::Regression)
        f.tone = -1;
    else if (row->verdict == Verdict::Improvement)
        f.tone = 1;
    const double estimate = estimateOf(*row);
    if (hasA && hasB && std::isfinite(estimate) && estimate != 0)
        f.direction = (estimate > 0) == row->lowerIsBetter ? -1 : 1;
    f.judged = row->hasVerdict;
    if (!hasA || !hasB)
        f.note = QObject::tr("not measured");
    else if (!row->hasVerdict)
        f.note = QObject::tr("not judged");
    else if (row->verdict == Verdict::NoSignificantChange || row->verdict == Verdict::Inconclusive)
        f.note = QObject::tr("not significant");
    else
        f.note = verdictName(row->verdict);
    return f;
}

// The longest run of whole words of @p text, then an ellipsis, that fits @p lines lines of @p width in @p font.
QString fitWords(const QString &text, const QFont &font, double width, int lines)
{
    const QFontMetricsF metrics(font);
    auto fits = [&](const QString &t) {
        return metrics.boundingRect(QRectF(0, 0, width, 1e6), Qt::TextWordWrap, t).height()
            <= lines * metrics.lineSpacing() + 1;
    };
    if (fits(text))
        return text;
    QStringList words = text.split(u' ');
    while (words.size() > 1) {
        words.removeLast();
        QString shorter = words.join(u' ') + QChar(0x2026);
        if (fits(shorter))
            return shorter;
    }
    return metrics.elidedText(text, Qt::ElideRight, width);
}

// The largest font from @p largest down to @p smallest in which @p text fits one line of @p width, else the largest
// from @p twoLines down in which it fits two; @p height gets the height it takes.
QFont fitFont(const QString &text, double width, int largest, int smallest, int twoLines, bool bold, double *height)
{
    for (int lines = 1; lines <= 2; ++lines) {
        for (int px = lines == 1 ? largest : twoLines; px >= smallest; px -= 2) {
            const QFont font = chartFileFont(px, bold);
            const QFontMetricsF metrics(font);
            const double h = metrics.boundingRect(QRectF(0, 0, width, 1e6), Qt::TextWordWrap, text).height();
            if (h <= lines * metrics.lineSpacing() + 1) {
                *height = h;
                return font;
            }
        }
    }
    const QFont font = chartFileFont(smallest, bold);
    *height = 2 * QFontMetricsF(font).lineSpacing();
    return font;
}

// The largest font from @p largest down to @p smallest in which each of @p texts fits @p width on one line.
QFont largestFitting(const QStringList &texts, double width, int largest, int smallest, bool bold)
{
    for (int px = largest; px > smallest; px -= 2) {
        const QFont font = chartFileFont(px, bold);
        const QFontMetricsF metrics(font);
        if (std::all_of(
                texts.cbegin(), texts.cend(), [&](const QString &t) { return metrics.horizontalAdvance(t) <= width; }))
            return font;
    }
    return chartFileFont(smallest, bold);
}

// The file theme's fonts, larger for the room's sake only through kChartScale.
void styleDistribution(QCustomPlot *plot, const SlideSpec &spec)
{
    // The title row goes: the slide writes its own caption, in the slide's type.
    if (plot->plotLayout()->rowCount() > 0 && qobject_cast<QCPTextElement *>(plot->plotLayout()->element(0, 0))) {
        plot->plotLayout()->removeAt(0);
        plot->plotLayout()->simplify();
    }
    const QColor colors[] = { spec.colorA, spec.colorB };
    // Each name elided in the middle to its half of the legend row (the two sit side by side): at 40 characters the
    // legend cut them off mid-word ("no RPCSCOPE_S").
    const QFontMetricsF legendMetrics(plot->legend->font());
    const double nameWidth = plot->width() / 2.0 - plot->legend->iconSize().width() - plot->legend->iconTextPadding()
        - 3.0 * legendMetrics.averageCharWidth();
    const auto legendName = [&](const QString &letter, const RunRecord &run) {
        return legendMetrics.elidedText(letter + QStringLiteral(": ") + shortName(run.displayName(), 200),
            Qt::ElideMiddle, std::max(nameWidth, 10 * legendMetrics.averageCharWidth()));
    };
    const QString names[]
        = { legendName(QStringLiteral("A"), spec.baseline), legendName(QStringLiteral("B"), spec.candidate) };
    for (int i = 0; i < std::min(plot->graphCount(), 2); ++i) {
        QCPGraph *graph = plot->graph(i);
        QPen pen = graph->pen();
        pen.setColor(colors[i]);
        pen.setWidthF(std::max(pen.widthF(), 2.0));
        graph->setPen(pen);
        if (graph->brush().style() != Qt::NoBrush) {
            QColor fill = colors[i];
            fill.setAlpha(45);
            graph->setBrush(fill);
        }
        graph->setName(names[i]);
    }
    plot->legend->setWrap(1);
    plot->legend->setVisible(plot->graphCount() > 0);
}

void drawPlot(QCPPainter *painter, QCustomPlot *plot, const QRectF &rect)
{
    painter->save();
    painter->translate(rect.topLeft());
    painter->scale(kChartScale, kChartScale);
    plot->toPainter(painter, plot->width(), plot->height());
    painter->restore();
}

} // namespace

QString slideHeadline(const Comparison &comparison)
{
    const MetricRow *row = headlineRow(comparison);
    if (!row)
        return QObject::tr("No latency to compare");
    const QString interval = intervalText(*row);
    QString withInterval = interval.isEmpty() ? changeText(*row) : changeText(*row) + QStringLiteral(", ") + interval;
    switch (comparison.overall) {
    case Verdict::Regression:
    case Verdict::Improvement:
        return withInterval;
    case Verdict::WithinThreshold:
        return QObject::tr("%1, within the %2 threshold").arg(changeText(*row), thresholdText(comparison.threshold));
    case Verdict::NoSignificantChange:
    case Verdict::Inconclusive:
        if (row->interval.lostToCorrection()) // an interval beyond zero beside no verdict: say why
            return QObject::tr("%1: %2, not significant once %3 metrics are judged together")
                .arg(comparison.overall == Verdict::Inconclusive ? QObject::tr("Inconclusive")
                                                                 : QObject::tr("No significant change"),
                    withInterval)
                .arg(comparison.testedMetrics);
        if (comparison.overall == Verdict::Inconclusive)
            return QObject::tr("Inconclusive: %1").arg(withInterval);
        return interval.isEmpty() ? QObject::tr("No significant change in %1").arg(row->name)
                                  : QObject::tr("No significant change in %1, %2").arg(row->name, interval);
    case Verdict::TooFewSamples:
        return QObject::tr("Too few calls to judge %1").arg(row->name);
    case Verdict::NotTested:
        break;
    }
    return changeText(*row);
}

namespace {

/// The profiles a slide compares: both runs' server profiles or both client profiles, whichever changed more per
/// call (a client command's A/B is about its client); nulls when neither pair has samples on both sides.
std::pair<const Profile *, const Profile *> profilePair(const SlideSpec &spec)
{
    const std::array<std::pair<const std::optional<Profile> *, const std::optional<Profile> *>, 2> sides {
        std::pair(&spec.baseline.serverProfile, &spec.candidate.serverProfile),
        std::pair(&spec.baseline.clientProfile, &spec.candidate.clientProfile)
    };
    std::pair<const Profile *, const Profile *> chosen { nullptr, nullptr };
    double largest = -1;
    for (const auto &[a, b] : sides) {
        if (!*a || !*b || (*a)->isEmpty() || (*b)->isEmpty() || (*a)->calls() <= 0 || (*b)->calls() <= 0)
            continue;
        const double change = std::fabs((*b)->totalUsPerCall() - (*a)->totalUsPerCall());
        if (change > largest) {
            largest = change;
            chosen = { &**a, &**b };
        }
    }
    return chosen;
}

/// SlideText's profile lines of @p spec's runs.
void profileText(const SlideSpec &spec, SlideText *text)
{
    const auto [a, b] = profilePair(spec);
    if (!a)
        return;
    const ProfileDiff diff = diffProfiles(*a, *b);
    text->profileTitle = QObject::tr("Where B's %1 time went")
                             .arg(b->scope == u"client" ? QObject::tr("client") : QObject::tr("server"));
    text->profileSummary
        = QObject::tr("%1 → %2 us CPU per call (%3, %4% CI %5 .. %6)")
              .arg(formatUsPerCall(diff.totalA), formatUsPerCall(diff.totalB),
                  formatUsPerCall(diff.totalB - diff.totalA, true))
              .arg(diff.confidence * 100, 0, 'f', 0)
              .arg(formatUsPerCall(diff.totalDiff.low, true), formatUsPerCall(diff.totalDiff.high, true));
    text->profileLead = text->profileTitle + QStringLiteral(": ") + text->profileSummary;
    for (const FunctionChange &change : diff.ownChanges(3))
        text->profileChanges << profileChangeSentence(change, diff.confidence);
    if (text->profileChanges.isEmpty())
        text->profileChanges << QObject::tr("No function changed beyond noise (changes under %1 us per call are "
                                            "not flagged)")
                                    .arg(formatUsPerCall(diff.minChangeUs));
}

/**
 * B's profile against A's as a differential flame graph for a @p room sized area: at least 1200 wide, wider when
 * the graph is deep, so that its proportions are the room's and it fills it (its height follows its depth alone).
 */
QByteArray slideFlameGraph(const Profile &a, const Profile &b, const SlideSpec &spec, const QSizeF &room)
{
    const ProfileDiff diff = diffProfiles(a, b);
    const FlameNode tree = buildDiffFlameTree(a.usPerCall(), b.usPerCall(), diff, QStringLiteral("all"));
    FlameGraphSvgOptions options;
    options.differential = true;
    options.interactive = false;
    options.title = QObject::tr("%1 CPU per call, B: %2 against A: %3")
                        .arg(b.scope == u"client" ? QObject::tr("Client") : QObject::tr("Server"),
                            spec.candidate.displayName(), spec.baseline.displayName());
    QString svg = flameGraphSvg(tree, options);
    QSvgRenderer probe(svg.toUtf8());
    const QSize size = probe.defaultSize();
    if (size.height() > 0 && room.height() > 0 && size.width() / double(size.height()) < room.width() / room.height()) {
        options.width = static_cast<int>(std::lround(size.height() * room.width() / room.height()));
        svg = flameGraphSvg(tree, options);
    }
    return svg.toUtf8();
}

} // namespace

SlideText slideText(const SlideSpec &spec)
{
    const Comparison &c = spec.comparison;
    SlideText text;
    text.verdict = c.overall;
    text.headline = spec.headline.isEmpty() ? slideHeadline(c) : spec.headline;
    text.subline = spec.headline.isEmpty() && spec.subline.isEmpty() ? subline(spec) : spec.subline;
    const RunSnapshot &a = spec.baseline.snapshot;
    const RunSnapshot &b = spec.candidate.snapshot;
    text.figures = { figure(QObject::tr("p50 latency"), c.row(MetricKind::P50), a, b),
        figure(QObject::tr("p99 latency"), c.row(MetricKind::P99), a, b),
        figure(QObject::tr("Throughput (req/s)"), c.row(MetricKind::RequestsPerSecond), a, b),
        figure(QObject::tr("Client CPU per call"), c.row(MetricKind::ClientCpuPerCall), a, b) };
    text.differences = runDifferences(spec.baseline, spec.candidate);
    text.runs = whenAndWhere(spec.baseline, spec.candidate);
    profileText(spec, &text);
    text.nameA = QObject::tr("A: %1").arg(spec.baseline.displayName());
    text.nameB = QObject::tr("B: %1").arg(spec.candidate.displayName());
    return text;
}

void leadWithSequentialVerdict(SlideSpec *spec, const QString &verdictLine)
{
    if (verdictLine.isEmpty())
        return;
    // The verdict and its interval on top; what it rests on ("judged on 5 processes a side ...", or the caveat of
    // two unpinned processes) leads the sub-line, which says how it was judged.
    const qsizetype basis = verdictLine.indexOf(QStringLiteral("; "));
    const QString verdict = basis < 0 ? verdictLine : verdictLine.left(basis);
    QString rest = basis < 0 ? QString() : verdictLine.mid(basis + 2);
    spec->headline = verdict.left(1).toUpper() + verdict.mid(1);
    if (!rest.isEmpty())
        rest = rest.left(1).toUpper() + rest.mid(1) + QStringLiteral(". ");
    spec->subline = rest
        + QStringLiteral("An anytime-valid 95% confidence sequence, looked at after every pair: stopping once it was "
                         "decided does not make a false verdict more likely");
}

SlideSpec makeSlideSpec(const RunRecord &baseline, const RunRecord &candidate, const Comparison &comparison)
{
    SlideSpec spec;
    spec.baseline = baseline;
    spec.baseline.rawSamples.clear();
    spec.candidate = candidate;
    spec.candidate.rawSamples.clear();
    spec.comparison = comparison;
    spec.colorA = ComparePage::runColor(0);
    spec.colorB = ComparePage::runColor(1);
    return spec;
}

/// Where everything goes, worked out once: the charts must know their size before they are built.
struct Slide::Layout {
    QRectF headline;
    QFont headlineFont;
    QRectF subline;
    QFont sublineFont;
    QString sublineText;
    QRectF distributionCaption;
    QRectF distribution;
    QRectF replicatesCaption;
    QRectF replicates;
    QList<QRectF> figures;
    QRectF profile; ///< where B's CPU went: empty when the runs were not profiled
    // The profile page: its headline and sub-line, the graph, the changes under it.
    QRectF profileTitle;
    QFont profileTitleFont;
    QRectF profileSummary;
    QFont profileSummaryFont;
    QRectF flameGraph;
    QRectF profileChanges;
    QRectF differences;
    QString differencesText;
    QRectF runs;
};

Slide::Slide(SlideSpec spec) : m_spec(std::move(spec)), m_text(slideText(m_spec)), m_layout(std::make_unique<Layout>())
{
    if (!m_spec.colorA.isValid())
        m_spec.colorA = ComparePage::runColor(0);
    if (!m_spec.colorB.isValid())
        m_spec.colorB = ComparePage::runColor(1);
    if (m_spec.distribution != ChartKind::Spectrum)
        m_spec.distribution = ChartKind::Histogram;
    Layout &l = *m_layout;
    const double width = kWidth - 2 * kMargin;

    // Top down: the headline (one line if it can, else two), the sub-line under it.
    double height = 0;
    l.headlineFont = fitFont(m_text.headline, width, 76, 48, 68, true, &height);
    l.headline = QRectF(kMargin, kTop, width, height);
    double y = l.headline.bottom() + 10;
    l.sublineFont = fitFont(m_text.subline, width, 32, 24, 30, false, &height);
    l.sublineText = fitWords(m_text.subline, l.sublineFont, width, 2);
    l.subline = QRectF(kMargin, y, width, height);
    const double chartsTop = l.subline.bottom() + kGap;

    // Bottom up: when and where, what differs, the key numbers; the charts take what is left.
    const QFont small = chartFileFont(24);
    const double line = QFontMetricsF(small).lineSpacing();
    l.runs = QRectF(kMargin, kHeight - kBottom - line, width, line);
    if (m_text.differences.isEmpty()) {
        l.differencesText = QObject::tr("Same method, stack, target and environment.");
    } else {
        // As many differences as two lines hold, then how many more there are.
        const QString lead = QObject::tr("What differs: ");
        const qsizetype all = m_text.differences.size();
        for (qsizetype shown = all; shown >= 1; --shown) {
            QString text = lead + m_text.differences.mid(0, shown).join(QStringLiteral("; "));
            if (shown < all)
                text += QObject::tr("; and %1 more").arg(all - shown);
            l.differencesText = fitWords(text, small, width, 2);
            if (l.differencesText == text)
                break;
        }
    }
    const double differencesHeight
        = QFontMetricsF(small).boundingRect(QRectF(0, 0, width, 1e6), Qt::TextWordWrap, l.differencesText).height();
    l.differences = QRectF(kMargin, l.runs.top() - 4 - differencesHeight, width, differencesHeight);
    const double figuresTop = l.differences.top() - kGap - kFiguresHeight;
    const double boxWidth = (width - 3 * kGap) / 4;
    for (int i = 0; i < 4; ++i)
        l.figures << QRectF(kMargin + i * (boxWidth + kGap), figuresTop, boxWidth, kFiguresHeight);
    double chartsBottom = figuresTop - kGap;
    if (!m_text.profileLead.isEmpty()) {
        // Above the key numbers: the lead in bold and a line per change.
        const double height = QFontMetricsF(chartFileFont(kProfileLead, true)).lineSpacing()
            + m_text.profileChanges.size() * QFontMetricsF(chartFileFont(kProfileLine)).lineSpacing() + 8;
        l.profile = QRectF(kMargin, chartsBottom - height, width, height);
        chartsBottom = l.profile.top() - kGap;
    }

    m_distribution.reset(createChartPlot({ &m_spec.baseline, &m_spec.candidate }, m_spec.distribution, {}));
    m_replicates = std::make_unique<ReplicateChart>();
    m_replicates->setShortAxisTitles(true); // the caption above says what a dot is
    m_replicates->setPalette(chartFilePalette());
    m_replicates->setFont(chartFileFont(13));
    // One run per side has no dots: the distribution takes the width, and the sub-line says why there is no verdict.
    const bool dots = !replicateSpreads(m_spec.comparison).isEmpty();
    const double distributionWidth = dots ? std::round(width * 0.56) : width;
    l.distributionCaption = QRectF(kMargin, chartsTop, distributionWidth, kCaptionHeight);
    l.distribution = QRectF(kMargin, chartsTop + kCaptionHeight, distributionWidth,
        std::max(120.0, chartsBottom - chartsTop - kCaptionHeight));
    m_distribution->resize(static_cast<int>(l.distribution.width() / kChartScale),
        static_cast<int>(l.distribution.height() / kChartScale));
    styleDistribution(m_distribution.get(), m_spec); // at its size: the legend's names are fitted to it
    if (dots) {
        const double left = kMargin + distributionWidth + kGap * 1.5;
        l.replicatesCaption = QRectF(left, chartsTop, kWidth - kMargin - left, kCaptionHeight);
        l.replicates = QRectF(left, l.distribution.top(), l.replicatesCaption.width(), l.distribution.height());
        // Sized first: how many panels the chart draws follows its width.
        m_replicates->resize(static_cast<int>(l.replicates.width() / kChartScale),
            static_cast<int>(l.replicates.height() / kChartScale));
        m_replicates->setComparison(
            m_spec.comparison, { QStringLiteral("A"), m_spec.colorA }, { QStringLiteral("B"), m_spec.colorB });
    }
    layOutProfilePage();
}

void Slide::layOutProfilePage()
{
    const auto [a, b] = profilePair(m_spec);
    if (!a)
        return;
    Layout &l = *m_layout;
    const double width = kWidth - 2 * kMargin;
    // Top down: the headline and the totals' change; bottom up: when and where, the changes in words; the graph
    // takes what is left.
    double height = 0;
    l.profileTitleFont = fitFont(m_text.profileTitle, width, 76, 48, 68, true, &height);
    l.profileTitle = QRectF(kMargin, kTop, width, height);
    l.profileSummaryFont = fitFont(m_text.profileSummary, width, 32, 24, 30, false, &height);
    l.profileSummary = QRectF(kMargin, l.profileTitle.bottom() + 10, width, height);
    const double line = QFontMetricsF(chartFileFont(kProfilePageLine)).lineSpacing();
    const auto changes = static_cast<double>(m_text.profileChanges.size());
    l.profileChanges = QRectF(kMargin, l.runs.top() - kGap - changes * line, width, changes * line);
    const double top = l.profileSummary.bottom() + kGap;
    l.flameGraph = QRectF(kMargin, top, width, std::max(120.0, l.profileChanges.top() - kGap - top));
    m_flameGraph = std::make_unique<QSvgRenderer>(slideFlameGraph(*a, *b, m_spec, l.flameGraph.size()));
    if (!m_flameGraph->isValid())
        m_flameGraph.reset();
}

int Slide::pageCount() const
{
    return m_flameGraph ? 2 : 1;
}

void Slide::paintProfilePage(QCPPainter *painter) const
{
    const Layout &l = *m_layout;
    painter->save();
    painter->setRenderHint(QPainter::Antialiasing);
    painter->setRenderHint(QPainter::TextAntialiasing);
    painter->fillRect(QRectF(0, 0, kWidth, kHeight), Qt::white);
    painter->setPen(kText);
    painter->setFont(l.profileTitleFont);
    painter->drawText(l.profileTitle, Qt::TextWordWrap | Qt::AlignLeft | Qt::AlignTop, m_text.profileTitle);
    painter->setPen(kMuted);
    painter->setFont(l.profileSummaryFont);
    painter->drawText(l.profileSummary, Qt::TextWordWrap | Qt::AlignLeft | Qt::AlignTop, m_text.profileSummary);

    // The graph as large as its room holds it, its proportions kept, centred under the headline.
    const QSizeF size = QSizeF(m_flameGraph->defaultSize()).scaled(l.flameGraph.size(), Qt::KeepAspectRatio);
    const QRectF graph(l.flameGraph.left() + (l.flameGraph.width() - size.width()) / 2, l.flameGraph.top(),
        size.width(), size.height());
    m_flameGraph->render(painter, graph);

    const QFont font = chartFileFont(kProfilePageLine);
    const double line = QFontMetricsF(font).lineSpacing();
    painter->setFont(font);
    painter->setPen(kText);
    double y = l.profileChanges.top();
    for (const QString &change : m_text.profileChanges) {
        painter->drawText(QRectF(l.profileChanges.left(), y, l.profileChanges.width(), line),
            Qt::AlignLeft | Qt::AlignVCenter,
            QFontMetricsF(font).elidedText(QStringLiteral("• ") + change, Qt::ElideMiddle, l.profileChanges.width()));
        y += line;
    }
    painter->setFont(chartFileFont(24));
    painter->setPen(kMuted);
    painter->drawText(l.runs, Qt::AlignLeft | Qt::AlignVCenter, m_text.runs);
    painter->restore();
}

Slide::~Slide() = default;

bool Slide::showsReplicates() const
{
    return !m_layout->replicates.isEmpty();
}

void Slide::paint(QCPPainter *painter, int page) const
{
    if (page == 1 && m_flameGraph) {
        paintProfilePage(painter);
        return;
    }
    const Layout &l = *m_layout;
    painter->save();
    painter->setRenderHint(QPainter::Antialiasing);
    painter->setRenderHint(QPainter::TextAntialiasing);
    painter->fillRect(QRectF(0, 0, kWidth, kHeight), Qt::white);

    // The verdict's colour carries its meaning; the words say it too, for anyone who cannot see the colour.
    painter->setPen(m_text.verdict == Verdict::Regression ? kWorse
            : m_text.verdict == Verdict::Improvement      ? kBetter
                                                          : kText);
    painter->setFont(l.headlineFont);
    painter->drawText(l.headline, Qt::TextWordWrap | Qt::AlignLeft | Qt::AlignTop, m_text.headline);
    painter->setPen(kMuted);
    painter->setFont(l.sublineFont);
    painter->drawText(l.subline, Qt::TextWordWrap | Qt::AlignLeft | Qt::AlignTop, l.sublineText);

    const QFont caption = chartFileFont(28, true);
    painter->setFont(caption);
    painter->setPen(kText);
    painter->drawText(l.distributionCaption, Qt::AlignLeft | Qt::AlignVCenter,
        m_spec.distribution == ChartKind::Spectrum ? QObject::tr("Latency by percentile, A and B")
                                                   : QObject::tr("Latency distribution, A and B"));
    drawPlot(painter, m_distribution.get(), l.distribution);
    if (showsReplicates()) {
        // "server process" is long: the caption says less rather than run off the slide.
        const QString unit = replicateName(m_spec.comparison.unitB, 0).section(u' ', 0, -2);
        const double width = l.replicatesCaption.width();
        QString text = QObject::tr("One dot per %1: what the verdict compares").arg(unit);
        QFont font = largestFitting({ text }, width, 28, 24, true);
        if (QFontMetricsF(font).horizontalAdvance(text) > width) {
            text = QObject::tr("One dot per %1").arg(unit);
            font = largestFitting({ text }, width, 28, 22, true);
        }
        painter->setPen(kText);
        painter->setFont(font);
        painter->drawText(l.replicatesCaption, Qt::AlignLeft | Qt::AlignVCenter,
            QFontMetricsF(font).elidedText(text, Qt::ElideRight, width));
        drawPlot(painter, m_replicates.get(), l.replicates);
    }

    const QFont figureName = chartFileFont(26, true);
    const QFont side = chartFileFont(34, true);
    // One size for every change and one for every value, so the boxes read as a row: the changes take the width
    // they need, the values the rest; both shrink a little before anything is cut.
    QStringList changes;
    QStringList values;
    for (const SlideText::Figure &f : m_text.figures) {
        changes << f.change;
        values << f.a << f.b;
    }
    const double innerWidth = l.figures.isEmpty() ? 0 : l.figures.first().width() - 48;
    const QFont change = largestFitting(changes, innerWidth * 0.42, 46, 34, true);
    double changesWidth = 0;
    for (const QString &c : std::as_const(changes))
        changesWidth = std::max(changesWidth, QFontMetricsF(change).horizontalAdvance(c) + 4);
    const QFont value = largestFitting(values, innerWidth - changesWidth - kSideLabel - 12, 44, 32, false);
    for (qsizetype i = 0; i < l.figures.size() && i < m_text.figures.size(); ++i) {
        const QRectF box = l.figures[i];
        const SlideText::Figure &f = m_text.figures[i];
        painter->setPen(Qt::NoPen);
        painter->setBrush(kPanel);
        painter->drawRoundedRect(box, 14, 14);
        painter->setBrush(Qt::NoBrush);
        const QRectF inner = box.adjusted(24, 14, -24, -14);
        painter->setFont(figureName);
        painter->setPen(kMuted);
        painter->drawText(
            QRectF(inner.left(), inner.top(), inner.width(), 36), Qt::AlignLeft | Qt::AlignVCenter, f.name);
        const double rowHeight = (inner.height() - 40) / 2;
        const double changeWidth = changesWidth;
        const struct {
            QString label;
            QColor color;
            QString text;
        } rows[] = { { QStringLiteral("A"), m_spec.colorA, f.a }, { QStringLiteral("B"), m_spec.colorB, f.b } };
        for (int r = 0; r < 2; ++r) {
            const QRectF row(inner.left(), inner.top() + 40 + r * rowHeight, inner.width() - changeWidth, rowHeight);
            painter->setFont(side);
            painter->setPen(rows[r].color);
            painter->drawText(QRectF(row.left(), row.top(), kSideLabel, row.height()), Qt::AlignLeft | Qt::AlignVCenter,
                rows[r].label);
            painter->setFont(value);
            painter->setPen(kText);
            const QRectF valueRect = row.adjusted(kSideLabel, 0, 0, 0);
            painter->drawText(valueRect, Qt::AlignLeft | Qt::AlignVCenter,
                QFontMetricsF(value).elidedText(rows[r].text, Qt::ElideRight, valueRect.width()));
        }
        // The change, and under it its colour's meaning in words: nobody has to know what faint red means.
        const QFont noteFont = chartFileFont(20);
        const double noteHeight = QFontMetricsF(noteFont).lineSpacing();
        painter->setFont(change);
        painter->setPen(f.changeColor());
        painter->drawText(
            QRectF(inner.right() - changeWidth, inner.top() + 40, changeWidth, inner.height() - 40 - noteHeight),
            Qt::AlignRight | Qt::AlignVCenter, f.change);
        painter->setFont(noteFont);
        painter->setPen(f.changeColor() == kText ? kMuted : f.changeColor());
        painter->drawText(QRectF(inner.left(), inner.bottom() - noteHeight, inner.width(), noteHeight),
            Qt::AlignRight | Qt::AlignVCenter, f.note);
    }

    if (!l.profile.isEmpty()) {
        const QFont lead = chartFileFont(kProfileLead, true);
        const QFont line = chartFileFont(kProfileLine);
        double y = l.profile.top();
        painter->setFont(lead);
        painter->setPen(kText);
        const double leadHeight = QFontMetricsF(lead).lineSpacing();
        painter->drawText(QRectF(l.profile.left(), y, l.profile.width(), leadHeight), Qt::AlignLeft | Qt::AlignVCenter,
            QFontMetricsF(lead).elidedText(m_text.profileLead, Qt::ElideRight, l.profile.width()));
        y += leadHeight + 8;
        painter->setFont(line);
        const double lineHeight = QFontMetricsF(line).lineSpacing();
        for (const QString &change : m_text.profileChanges) {
            painter->drawText(QRectF(l.profile.left() + 24, y, l.profile.width() - 24, lineHeight),
                Qt::AlignLeft | Qt::AlignVCenter,
                QFontMetricsF(line).elidedText(QStringLiteral("• ") + change, Qt::ElideMiddle, l.profile.width() - 24));
            y += lineHeight;
        }
    }

    painter->setFont(chartFileFont(24));
    painter->setPen(kText);
    painter->drawText(l.differences, Qt::TextWordWrap | Qt::AlignLeft | Qt::AlignTop, l.differencesText);
    painter->setPen(kMuted);
    painter->drawText(l.runs, Qt::AlignLeft | Qt::AlignVCenter, m_text.runs);
    painter->restore();
}

QImage Slide::toImage(double scale, int page) const
{
    QImage image(QSize(static_cast<int>(std::lround(kWidth * scale)), static_cast<int>(std::lround(kHeight * scale))),
        QImage::Format_ARGB32_Premultiplied);
    image.setDevicePixelRatio(scale);
    image.fill(Qt::white);
    QCPPainter painter(&image);
    paint(&painter, page);
    painter.end();
    return image;
}

QByteArray Slide::toPng(double scale, QString *error, int page) const
{
    QByteArray png;
    QBuffer buffer(&png);
    buffer.open(QIODevice::WriteOnly);
    if (!toImage(scale, page).save(&buffer, "PNG")) {
        if (error)
            *error = QObject::tr("the slide could not be drawn as PNG");
        return {};
    }
    return png;
}

QByteArray Slide::toPdf(QString *error) const
{
    QByteArray pdf;
    QBuffer buffer(&pdf);
    buffer.open(QIODevice::WriteOnly);
    {
        QPdfWriter writer(&buffer);
        // A widescreen slide's page (13.33 x 7.5 in), at the resolution that makes it 1920 pixels wide.
        writer.setPageSize(
            QPageSize(QSizeF(kWidth * 0.5, kHeight * 0.5), QPageSize::Point, QString(), QPageSize::ExactMatch));
        writer.setPageMargins(QMarginsF(0, 0, 0, 0));
        writer.setResolution(144);
        writer.setTitle(m_text.headline);
        writer.setCreator(QStringLiteral("rpcscope"));
        QCPPainter painter;
        if (!painter.begin(&writer)) {
            if (error)
                *error = QObject::tr("the slide could not be drawn as PDF");
            return {};
        }
        painter.setMode(QCPPainter::pmVectorized);
        painter.setMode(QCPPainter::pmNonCosmetic);
        painter.scale(writer.width() / double(kWidth), writer.height() / double(kHeight));
        for (int page = 0; page < pageCount(); ++page) {
            if (page > 0 && !writer.newPage()) {
                if (error)
                    *error = QObject::tr("the slide's page %1 could not be added to the PDF").arg(page + 1);
                return {};
            }
            paint(&painter, page);
        }
        painter.end();
    }
    return pdf;
}

bool Slide::save(const QString &path, SlideFormat format, double scale, QString *error) const
{
    const QByteArray data = format == SlideFormat::Pdf ? toPdf(error) : toPng(scale, error);
    if (data.isEmpty())
        return false;
    QByteArray profilePage;
    if (format == SlideFormat::Png && pageCount() > 1) {
        profilePage = toPng(scale, error, 1);
        if (profilePage.isEmpty())
            return false;
    }
    // Whole or nothing: no half-written slide in the deck's folder.
    if (!writeOutputFile(path, data, error))
        return false;
    return profilePage.isEmpty() || writeOutputFile(profilePagePath(path), profilePage, error);
}

QString Slide::profilePagePath(const QString &path)
{
    const QFileInfo info(path);
    const QString suffix = info.suffix();
    const QString stem = suffix.isEmpty() ? path : path.left(path.size() - suffix.size() - 1);
    return stem + QStringLiteral("-profile") + (suffix.isEmpty() ? QString() : u'.' + suffix);
}

} // namespace rpcscope
