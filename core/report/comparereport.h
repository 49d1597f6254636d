#pragma once

#include "compare/comparison.h"

#include <QString>

namespace rpcscope {

/**
 * A comparison as aligned plain text for a terminal: one row per metric with A, B, the delta, the change in
 * percent and, for latencies, the verdict and confidence interval; then Mann-Whitney's numbers and the verdict line.
 * @p nameA and @p nameB head the value columns ("A" and "B" when empty).
 */
QString formatComparisonTable(const Comparison &comparison, const QString &nameA, const QString &nameB);

/// The same as a GitHub Markdown table followed by the verdict line, ready to paste into an issue.
QString formatComparisonMarkdown(const Comparison &comparison, const QString &nameA, const QString &nameB);

/// A metric's value in its unit: "1.23 ms", "12.3 us", "4.0 MiB", "1520" (req/s), "0.50%" (error rate).
QString formatMetricValue(double value, MetricUnit unit);
/// A signed difference in the metric's unit: "+190 us", "-1.0 MiB", "+0.10 pp" (error rate, percentage points).
QString formatMetricDelta(double delta, MetricUnit unit);

} // namespace rpcscope
