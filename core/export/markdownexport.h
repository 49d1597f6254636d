#pragma once

#include "compare/comparison.h"
#include "store/runrecord.h"

#include <QList>
#include <QString>

namespace rpcscope {

/**
 * A GitHub Markdown table of @p runs, one row each, ready to paste into an issue:
 * | Run | Labels | Version | Count | req/s | p50 | p95 | p99 | Mean | Errors |
 * Run is "#ID name" (or the run's display name), Version the rpcscope and protobuf versions it ran with (from the
 * environment fingerprint; empty for imports), latencies of the OK calls in readable units, Errors "N (x.xx%)".
 * Cells are escaped (`|` and line breaks), so any run name is safe. A run with an approximate histogram (an
 * import without details) gets a note under the table.
 */
QString runsMarkdownTable(const QList<RunRecord> &runs);

/**
 * Both runs' rows, then formatComparisonMarkdown() of B against A (from raw samples when both have them, as
 * `rpcscope-cli compare` does).
 */
QString comparisonMarkdown(const RunRecord &a, const RunRecord &b, const CompareOptions &options = {});

} // namespace rpcscope
