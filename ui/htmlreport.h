#pragma once

// Runs as one self-contained HTML file: no network, no external CSS, scripts or fonts; charts as inline SVG.

#include <QByteArray>
#include <QList>

namespace rpcscope {

struct Comparison;
struct RunRecord;

/**
 * One run as an HTML page (UTF-8): the title, the scenario (method, transport and codec, target, load settings),
 * the summary (count, req/s, mean, stddev, min, percentiles, max, client and server CPU per call, RSS), status
 * codes, errors, the four charts and the environment. Every text from the run is escaped. Prints on A4 without
 * tables or charts split across pages.
 */
QByteArray htmlReport(const RunRecord &run);

/**
 * Several runs compared, the first the baseline: the runs, the verdict line of @p comparisonOfFirstTwo (the second
 * run against the first) highlighted (regression red, improvement green, otherwise neutral), its delta table, the
 * four charts with every run overlaid, the summaries side by side, status codes, errors, and what differs in the
 * environments.
 */
QByteArray htmlComparisonReport(const QList<const RunRecord *> &runs, const Comparison &comparisonOfFirstTwo);

} // namespace rpcscope
