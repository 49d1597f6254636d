#include "replicatespread.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rpcscope {

namespace {

QString unitName(ReplicateUnit unit)
{
    // "1 block" -> "block": the core's own word for the unit, so the chart and the verdict line agree.
    return replicateCountText(unit, 1).section(u' ', 1);
}

double geometricMean(const std::vector<double> &values)
{
    double sum = 0;
    for (const double v : values)
        sum += std::log(v);
    return std::exp(sum / static_cast<double>(values.size()));
}

} // namespace

QList<ReplicateSpread> replicateSpreads(const Comparison &comparison)
{
    QList<ReplicateSpread> spreads;
    if (comparison.singleRun || comparison.perCall)
        return spreads;
    for (const MetricRow &row : comparison.rows) {
        // Drawn in nanoseconds: latencies as they are, CPU per call (in us) scaled; other units have no verdict.
        if (row.unit != MetricUnit::Nanoseconds && row.unit != MetricUnit::Microseconds)
            continue;
        const double toNs = row.unit == MetricUnit::Microseconds ? 1000.0 : 1.0;
        if (!row.hasVerdict || row.replicatesA.size() != static_cast<std::size_t>(comparison.replicatesA)
            || row.replicatesB.size() != static_cast<std::size_t>(comparison.replicatesB) || row.replicatesA.empty()
            || row.replicatesB.empty())
            continue;
        const auto positive = [](double v) { return std::isfinite(v) && v > 0; };
        if (!std::all_of(row.replicatesA.cbegin(), row.replicatesA.cend(), positive)
            || !std::all_of(row.replicatesB.cbegin(), row.replicatesB.cend(), positive))
            continue; // a log scale's mean of a zero or NaN means nothing
        ReplicateSpread spread;
        spread.kind = row.kind;
        spread.metric = row.name;
        spread.unitA = comparison.unitA;
        spread.unitB = comparison.unitB;
        // A CPU row's name is long already ("client CPU/call"): its title is the name alone, or it is cut in a
        // narrow panel; the chart says what a dot is.
        spread.axisTitle = row.unit == MetricUnit::Microseconds ? row.name
            : comparison.unitA == comparison.unitB
            ? QStringLiteral("%1 per %2").arg(row.name, unitName(comparison.unitA))
            : QStringLiteral("%1 per %2 / %3").arg(row.name, unitName(comparison.unitA), unitName(comparison.unitB));
        spread.a = row.replicatesA;
        spread.b = row.replicatesB;
        for (std::vector<double> *values : { &spread.a, &spread.b })
            std::transform(values->begin(), values->end(), values->begin(), [toNs](double v) { return v * toNs; });
        spread.geometricMeanA = geometricMean(spread.a);
        spread.geometricMeanB = geometricMean(spread.b);
        spread.change = row.interval.valid ? row.interval.estimate : spread.geometricMeanB / spread.geometricMeanA - 1;
        spread.verdict = row.verdict;
        spreads.push_back(std::move(spread));
    }
    return spreads;
}

QString replicateName(ReplicateUnit unit, std::size_t index)
{
    return unitName(unit) + u' ' + QString::number(index + 1);
}

double spreadJitter(std::size_t index)
{
    constexpr double kGoldenRatioConjugate = 0.6180339887498949;
    const double fraction = std::fmod(0.5 + static_cast<double>(index) * kGoldenRatioConjugate, 1.0);
    return fraction * 2 - 1;
}

std::pair<double, double> spreadRangeNs(const ReplicateSpread &spread)
{
    double low = std::numeric_limits<double>::max();
    double high = 0;
    for (const auto *side : { &spread.a, &spread.b }) {
        for (const double v : *side) {
            low = std::min(low, v);
            high = std::max(high, v);
        }
    }
    if (high <= 0)
        return { 0, 1 };
    // Some air, and never a range so narrow that rounding noise fills the panel: at least 1% of the values.
    const double air = std::max((high - low) * 0.12, high * 0.01);
    return { std::max(0.0, low - air), high + air };
}

std::pair<double, QString> latencyAxisUnit(double highNs)
{
    if (highNs < 1e3)
        return { 1, QStringLiteral("ns") };
    if (highNs < 1e6)
        return { 1e3, QStringLiteral("us") };
    if (highNs < 1e9)
        return { 1e6, QStringLiteral("ms") };
    return { 1e9, QStringLiteral("s") };
}

} // namespace rpcscope
