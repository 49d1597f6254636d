#pragma once

// What the "spread of the replicates" charts draw, worked out once for the Compare runs page and the HTML report:
// both must show the same dots at the same places.

#include "compare/comparison.h"

#include <QList>
#include <QString>

#include <cstddef>
#include <utility>
#include <vector>

namespace rpcscope {

/// One latency row's replicates, side by side: one dot per block (server process, run) and each side's mean.
struct ReplicateSpread {
    MetricKind kind = MetricKind::P50;
    QString metric; ///< the row's name: "p50"
    QString axisTitle; ///< "p50 per block"
    ReplicateUnit unitA = ReplicateUnit::Block;
    ReplicateUnit unitB = ReplicateUnit::Block;
    std::vector<double> a; ///< ns, one per replicate, in order
    std::vector<double> b;
    double geometricMeanA = 0; ///< ns: what the verdict compares (its estimate is B's over A's, minus 1)
    double geometricMeanB = 0;
    double change = 0; ///< B / A - 1 of the geometric means (the row's estimate)
    Verdict verdict = Verdict::NotTested;
};

/**
 * The verdict rows of @p comparison (p50, p95, p99, mean; a stream's message p50 and p99) whose every replicate has
 * a value on both sides, in the table's order. Empty when there are no replicates (one run per side), and without a
 * row whose replicates were too small for it (a partial set of dots would misstate the spread).
 */
QList<ReplicateSpread> replicateSpreads(const Comparison &comparison);

/// "block 3", "server process 2", "run 5": replicate @p index (from 0) of @p unit.
QString replicateName(ReplicateUnit unit, std::size_t index);

/**
 * The horizontal offset of dot @p index from its column's centre, in -1..1: the golden-ratio sequence, which spreads
 * any number of dots evenly without two neighbours landing together, and puts them at the same places every time.
 */
double spreadJitter(std::size_t index);

/// The value axis of @p spread in ns: every dot with some air above and below.
std::pair<double, double> spreadRangeNs(const ReplicateSpread &spread);

/// The unit the value axis is labelled in for values up to @p highNs: {1e6, "ms"}, {1e3, "us"}...
std::pair<double, QString> latencyAxisUnit(double highNs);

} // namespace rpcscope
