#include "profilereport.h"

#include "util/units.h"

#include <QRegularExpression>
#include <QTextStream>

#include <cmath>

namespace rpcscope {

namespace {

QString us(double value, bool sign = false)
{
    return formatUsPerCall(value, sign);
}

/// A function name short enough for a terminal line: templates and arguments kept only when short.
QString shortName(const QString &name, int width = 90)
{
    return name.size() <= width ? name : name.left(width - 3) + QStringLiteral("...");
}

} // namespace

QString formatProfileSummary(const Profile &profile, int top)
{
    QString text;
    QTextStream out(&text);
    const QString title
        = profile.scope == u"client" ? QStringLiteral("Client profile") : QStringLiteral("Server profile");
    if (profile.isEmpty() || profile.calls() <= 0) {
        out << title << ": no samples";
        if (!profile.notes.isEmpty())
            out << " (" << profile.notes.join(QStringLiteral("; ")) << ')';
        else if (const QString hint = noSamplesHint(profile); !hint.isEmpty())
            out << ": " << hint;
        out << '\n';
        return text;
    }
    const double total = profile.totalUsPerCall();
    out << title << ": " << us(total) << " us CPU per call over " << QString::number(profile.calls(), 'f', 0)
        << " calls, " << profile.processes.size() << (profile.processes.size() == 1 ? " process" : " processes");
    if (const QString samples = profileSamplesText(profile); !samples.isEmpty())
        out << ", " << samples;
    if (profile.profilerCpuSeconds >= 0)
        out << ", profiler's own CPU " << profilerCpuText(profile);
    out << '\n';
    if (!profile.how.isEmpty())
        out << "  recorded with " << profile.how << '\n';
    for (const QString &note : profile.notes)
        out << "  note: " << note << '\n';
    if (!profile.perfData.isEmpty())
        out << "  perf's recording: " << profile.perfData << " (hotspot opens it)\n";
    out << QStringLiteral("  %1  %2  %3  function\n")
               .arg(QStringLiteral("self us/call"), 12)
               .arg(QStringLiteral("total us/call"), 13)
               .arg(QStringLiteral("share"), 6);
    const std::vector<FunctionCost> costs = functionCosts(profile.usPerCall());
    int shown = 0;
    for (const FunctionCost &cost : costs) {
        if (shown++ >= top)
            break;
        out << QStringLiteral("  %1  %2  %3  %4\n")
                   .arg(us(cost.self), 12)
                   .arg(us(cost.total), 13)
                   .arg(total > 0 ? QString::number(100.0 * cost.self / total, 'f', 1) + QLatin1Char('%')
                                  : QStringLiteral("-"),
                       6)
                   .arg(shortName(cost.name));
    }
    return text;
}

QString profilerCpuText(const Profile &profile)
{
    if (profile.profilerCpuSeconds < 0)
        return {};
    QString text = formatNanos(profile.profilerCpuSeconds * 1e9);
    if (profile.calls() > 0)
        text += QStringLiteral(" (%1 us per call)")
                    .arg(formatUsPerCall(profile.profilerCpuSeconds * 1e6 / profile.calls(), false, true));
    return text;
}

QString formatUsPerCall(double value, bool sign, bool fine)
{
    const double size = std::fabs(value);
    const QString text = QString::number(value, 'f', size >= 100 ? 0 : size >= 1 || !fine ? 1 : 2);
    return sign && value >= 0 ? QLatin1Char('+') + text : text;
}

QString profileChangeVerdict(const FunctionChange &change, const QString &newName)
{
    if (!change.changed)
        return QStringLiteral("within noise");
    const double delta = changeToldByTotal(change) ? change.totalChange() : change.selfChange();
    return (delta > 0 ? QStringLiteral("slower in %1") : QStringLiteral("faster in %1")).arg(newName)
        + (change.explainedByCallee ? QStringLiteral(" (a callee's change)") : QString());
}

bool changeToldByTotal(const FunctionChange &change)
{
    return change.totalDiff.excludesZero() || !change.selfDiff.excludesZero();
}

QString profileChangeSentence(const FunctionChange &change, double confidence, const QString &newName)
{
    const bool total = changeToldByTotal(change);
    const double delta = total ? change.totalChange() : change.selfChange();
    const DiffInterval interval = total ? change.totalDiff : change.selfDiff;
    const bool callsOthers = total && std::fabs(change.totalB - change.selfB) > 0.05 * std::fabs(change.totalB);
    return QStringLiteral("%1 spends %2 us per call %3 in %4%5 (%6% CI %7 .. %8)")
        .arg(newName, us(delta, true), delta >= 0 ? QStringLiteral("more") : QStringLiteral("less"),
            shortName(change.name, 60), callsOthers ? QStringLiteral(" and what it calls") : QString())
        .arg(QString::number(confidence * 100, 'f', 0), us(interval.low, true), us(interval.high, true));
}

QString formatProfileChanges(const ProfileDiff &diff, const QString &scope, int top)
{
    QString text;
    QTextStream out(&text);
    out << "Where B's " << (scope == u"client" ? "client" : "server") << " time went: " << us(diff.totalA) << " -> "
        << us(diff.totalB) << " us CPU per call (" << us(diff.totalB - diff.totalA, true) << ", "
        << QString::number(diff.confidence * 100, 'f', 0) << "% CI " << us(diff.totalDiff.low, true) << " .. "
        << us(diff.totalDiff.high, true) << "), judged " << diff.method << '\n';
    const std::vector<FunctionChange> changes = diff.topChanges(top);
    if (changes.empty()) {
        out << "  no function changed beyond noise (changes under " << us(diff.minChangeUs)
            << " us per call are not flagged)\n";
        return text;
    }
    out << "  us per call, a function with what it calls (self: its own code alone); intervals adjusted for the "
        << diff.functions.size() << " functions compared\n";
    out << QStringLiteral("  %1  %2  %3  %4  %5  function\n")
               .arg(QStringLiteral("A"), 7)
               .arg(QStringLiteral("B"), 7)
               .arg(QStringLiteral("B - A"), 7)
               .arg(QStringLiteral("interval"), 17)
               .arg(QStringLiteral("self B - A"), 10);
    for (const FunctionChange &change : changes) {
        const bool total = changeToldByTotal(change);
        const DiffInterval interval = total ? change.totalDiff : change.selfDiff;
        out << QStringLiteral("  %1  %2  %3  %4  %5  %6%7\n")
                   .arg(us(total ? change.totalA : change.selfA), 7)
                   .arg(us(total ? change.totalB : change.selfB), 7)
                   .arg(us(total ? change.totalChange() : change.selfChange(), true), 7)
                   .arg(us(interval.low, true) + QStringLiteral(" .. ") + us(interval.high, true), 17)
                   .arg(us(change.selfChange(), true), 10)
                   .arg(shortName(change.name),
                       change.explainedByCallee ? QStringLiteral(" (its callee's change)") : QString());
    }
    return text;
}

QString noSamplesHint(const Profile &profile)
{
    if (profile.how.isEmpty() || !profile.notes.isEmpty() || !(profile.isEmpty() || profile.calls() <= 0))
        return {};
    // "one sample per 10000 us of CPU" in perf's description
    static const QRegularExpression perSample(QStringLiteral("one sample per (\\d+) us of CPU"));
    const QRegularExpressionMatch match = perSample.match(profile.how);
    const QString period = match.hasMatch()
        ? QStringLiteral(" (one per %1 of CPU)").arg(formatNanos(match.captured(1).toDouble() * 1000))
        : QString();
    return QStringLiteral("the run used less CPU than one sample takes%1: run more calls, or sample more often "
                          "(--profile-period)")
        .arg(period);
}

QString profileSamplesText(const Profile &profile)
{
    // A function's share of n samples has a relative sampling error of about 1/sqrt(its samples): under 200 in
    // all, one at a tenth of the CPU stands on fewer than 20 (+-22% and more).
    constexpr double kFew = 200;
    const double samples = profile.samples();
    if (samples < 0)
        return {};
    QString count = QStringLiteral("%1 %2").arg(QString::number(samples, 'f', 0),
        std::lround(samples) == 1 ? QStringLiteral("sample") : QStringLiteral("samples"));
    if (samples >= kFew)
        return count;
    return count + QStringLiteral(" (few: the figures per function are rough; a longer run gives more)");
}

} // namespace rpcscope
