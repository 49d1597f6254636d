#pragma once

#include "compare/comparison.h"

#include <QStringList>

namespace rpcscope {
struct RunRecord;
}

namespace rpcscope::cli {

/// `compare A B`: two runs (history IDs or JSON reports), their delta table and the verdict.
int compareCommand(const QStringList &arguments);

/// "5%", "0.05", "5" (percent) as a fraction; false with @p error.
bool parseThreshold(const QString &text, double *fraction, QString *error);

/// Compares @p b against @p a (raw samples when both have them) and prints the table (text or markdown) with the
/// environment differences; returns the comparison.
Comparison printComparison(const RunRecord &a, const RunRecord &b, const CompareOptions &options, bool markdown);

} // namespace rpcscope::cli
