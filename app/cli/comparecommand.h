#pragma once

#include "compare/comparison.h"

#include <QStringList>

#include <optional>

namespace rpcscope {
class RunStore;
struct RunRecord;
}

namespace rpcscope::cli {

/// `compare A B`: two runs (history IDs or JSON reports), their delta table and the verdict.
int compareCommand(const QStringList &arguments);

/**
 * A run named on the command line: a history reference (an ID, last, last~N, label:NAME[~N]; @p store is opened
 * at @p storePath when it is not open yet) or an rpcscope JSON report file. Errors name the reference or file.
 */
std::optional<RunRecord> loadRun(RunStore &store, const QString &storePath, const QString &text, QString *error);

/// "5%", "0.05", "5" (percent) as a fraction; false with @p error.
bool parseThreshold(const QString &text, double *fraction, QString *error);

/// Compares @p b against @p a (raw samples when both have them) and prints the table (text or markdown) with the
/// environment differences; returns the comparison.
Comparison printComparison(const RunRecord &a, const RunRecord &b, const CompareOptions &options, bool markdown);

} // namespace rpcscope::cli
