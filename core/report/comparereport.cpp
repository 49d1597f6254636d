#include "comparereport.h"

#include "util/units.h"

#include <QStringList>

#include <algorithm>
#include <cmath>

namespace rpcscope {

namespace {

QString intervalText(const ChangeInterval &b)
{
    QString low = formatPercentChange(b.ciLow);
    if (low.endsWith(u'%')) // "+17.0 .. +21.3%": one percent sign for the pair
        low.chop(1);
    return u'[' + low + QStringLiteral(" .. ") + formatPercentChange(b.ciHigh) + u']';
}

// The last column: what the row concludes, with its interval so the reader sees how sure it is.
QString verdictCell(const MetricRow &row)
{
    if (row.hasVerdict && (row.verdict == Verdict::TooFewSamples || !row.hasInterval))
        return verdictName(row.verdict);
    if (!row.hasInterval)
        return {};
    const QString interval = intervalText(row.interval);
    if (row.hasVerdict && row.interval.lostToCorrection()) // the interval alone excludes zero; Holm's p does not
        return verdictName(row.verdict) + u' ' + interval
            + QStringLiteral(" (Holm p %1)").arg(row.interval.pAdjusted, 0, 'f', 2);
    return row.hasVerdict ? verdictName(row.verdict) + u' ' + interval : interval;
}

QString confidenceLabel(const Comparison &comparison)
{
    return QString::number(comparison.confidence * 100, 'g', 3) + QStringLiteral("% CI");
}

// What the verdict rests on; for a per-call comparison also its rank test.
QString basisLine(const Comparison &comparison)
{
    if (!comparison.perCall) {
        QString line = QStringLiteral("Judged on: ") + comparison.basis();
        if (comparison.paired)
            line += QStringLiteral(" (Student's t on the log ratio of each pair's statistic)");
        else if (!comparison.singleRun)
            line += QStringLiteral(" (Welch's t on the log of each replicate's statistic)");
        return line;
    }
    const auto &mw = comparison.mannWhitney;
    const QString source = comparison.fromRawSamples ? QStringLiteral("raw samples") : QStringLiteral("histograms");
    if (!mw.valid)
        return QStringLiteral("Mann-Whitney: not computed (a run has no OK calls)");
    return QStringLiteral("Mann-Whitney (%1): U = %2, z = %3, %4, P(B > A) = %5")
        .arg(source, QString::number(mw.u, 'f', mw.u == std::floor(mw.u) ? 0 : 1), QString::number(mw.z, 'f', 2),
            formatPValue(mw.pValue), QString::number(mw.probabilityBGreater, 'f', 3));
}

// Reasons of verdict rows that had too few samples, unless the verdict line already gives them.
QStringList notes(const Comparison &comparison)
{
    QStringList out;
    const QString line = comparison.verdictLine();
    for (const auto &row : comparison.rows) {
        if (row.hasVerdict && row.verdict == Verdict::TooFewSamples && !row.reason.isEmpty()
            && !line.contains(row.reason) && !out.contains(row.reason))
            out << row.reason;
    }
    if (const MetricRow *server = comparison.row(MetricKind::ServerCpuPerCall);
        server && !server->hasVerdict && server->hasInterval && !server->reason.isEmpty())
        out << server->reason;
    // Processes that differ from each other are what a verdict on them is about: said, with their values.
    if (const QString spread = comparison.processSpreadNote(); !spread.isEmpty())
        out << spread;
    return out;
}

// The smallest change the row's test would have found (80% of the time): how sensitive this experiment was.
QString detectableCell(const MetricRow &row)
{
    if (!row.hasInterval || !std::isfinite(row.interval.detectable))
        return {};
    return formatPercentChange(row.interval.detectable).replace(u'+', QStringLiteral("\u00b1"));
}

struct Cells {
    QStringList header;
    QList<QStringList> rows;
};

Cells cellsOf(const Comparison &comparison, const QString &nameA, const QString &nameB)
{
    Cells cells;
    cells.header = { QStringLiteral("metric"), nameA.isEmpty() ? QStringLiteral("A") : nameA,
        nameB.isEmpty() ? QStringLiteral("B") : nameB, QStringLiteral("delta"), QStringLiteral("change"),
        QStringLiteral("detectable"), QStringLiteral("verdict ") + u'(' + confidenceLabel(comparison) + u')' };
    for (const auto &row : comparison.rows) {
        QString name = row.name;
        if (!row.lowerIsBetter)
            name += QStringLiteral(" (higher is better)");
        cells.rows.push_back({ name, formatMetricValue(row.valueA, row.unit), formatMetricValue(row.valueB, row.unit),
            formatMetricDelta(row.delta, row.unit), formatPercentChange(row.relativeChange), detectableCell(row),
            verdictCell(row) });
    }
    return cells;
}

QString escapeMarkdown(QString text)
{
    return text.replace(u'|', QStringLiteral("\\|"));
}

} // namespace

QString formatMetricValue(double value, MetricUnit unit)
{
    if (std::isnan(value))
        return QStringLiteral("-"); // not measured: unknown, never 0
    switch (unit) {
    case MetricUnit::Nanoseconds:
        return formatNanos(value);
    case MetricUnit::Microseconds:
        return formatNanos(value * 1e3);
    case MetricUnit::Bytes:
        return formatBytes(value);
    case MetricUnit::PerSecond:
        return QString::number(value, 'f', std::fabs(value) >= 100 ? 0 : 1);
    case MetricUnit::Fraction:
        return QString::number(value * 100, 'f', 2) + u'%';
    }
    return {};
}

QString formatMetricDelta(double delta, MetricUnit unit)
{
    if (std::isnan(delta))
        return QStringLiteral("-");
    const QString sign = delta < 0 ? QStringLiteral("-") : QStringLiteral("+");
    const double magnitude = std::fabs(delta);
    if (unit == MetricUnit::Fraction)
        return sign + QString::number(magnitude * 100, 'f', 2) + QStringLiteral(" pp");
    return sign + formatMetricValue(magnitude, unit);
}

QString formatComparisonTable(const Comparison &comparison, const QString &nameA, const QString &nameB)
{
    const Cells cells = cellsOf(comparison, nameA, nameB);
    std::vector<qsizetype> widths(static_cast<size_t>(cells.header.size()));
    auto widen = [&](const QStringList &line) {
        for (qsizetype i = 0; i < line.size(); ++i)
            widths[static_cast<size_t>(i)] = std::max(widths[static_cast<size_t>(i)], line[i].size());
    };
    widen(cells.header);
    for (const auto &line : cells.rows)
        widen(line);

    // Names and verdicts read left to right; numbers line up on their last digit.
    // Returning QString, not auto: a QStringBuilder would outlive the local it refers to.
    auto render = [&](const QStringList &line) -> QString {
        QString out;
        for (qsizetype i = 0; i < line.size(); ++i) {
            const int width = static_cast<int>(widths[static_cast<size_t>(i)]);
            const bool leftAligned = i == 0 || i == line.size() - 1;
            if (i > 0)
                out += QStringLiteral("  ");
            out += leftAligned ? line[i].leftJustified(width) : line[i].rightJustified(width);
        }
        while (out.endsWith(u' '))
            out.chop(1);
        return out + u'\n';
    };

    QString text = render(cells.header);
    QStringList rule;
    for (const auto w : widths)
        rule << QString(w, u'-');
    text += render(rule);
    for (const auto &line : cells.rows)
        text += render(line);
    text += u'\n' + basisLine(comparison) + u'\n';
    for (const auto &note : notes(comparison))
        text += QStringLiteral("note: ") + note + u'\n';
    text += comparison.verdictLine() + u'\n';
    return text;
}

QString formatComparisonMarkdown(const Comparison &comparison, const QString &nameA, const QString &nameB)
{
    const Cells cells = cellsOf(comparison, nameA, nameB);
    auto render = [](const QStringList &line) -> QString {
        QStringList escaped;
        for (const auto &cell : line)
            escaped << escapeMarkdown(cell);
        return QStringLiteral("| ") + escaped.join(QStringLiteral(" | ")) + QStringLiteral(" |\n");
    };
    QString text = render(cells.header);
    text += QStringLiteral("|:--|--:|--:|--:|--:|--:|:--|\n");
    for (const auto &line : cells.rows)
        text += render(line);
    text += QStringLiteral("\n**") + escapeMarkdown(comparison.verdictLine()) + QStringLiteral("**\n\n");
    text += basisLine(comparison) + u'\n';
    for (const auto &note : notes(comparison))
        text += QStringLiteral("\nNote: ") + note + u'\n';
    return text;
}

} // namespace rpcscope
