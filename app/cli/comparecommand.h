#pragma once

#include "compare/comparison.h"

#include <QList>
#include <QStringList>

#include <optional>

namespace rpcscope {
class RunStore;
}

#include "store/runrecord.h"

namespace rpcscope::cli {

/// `compare A B`: two runs (history IDs or JSON reports), their delta table and the verdict.
int compareCommand(const QStringList &arguments);

/**
 * A run named on the command line: a history reference (an ID, last, last~N, label:NAME[~N]; @p store is opened
 * read-only at @p storePath when it is not open yet) or an rpcscope JSON report file. Errors name the reference or
 * file.
 */
std::optional<RunRecord> loadRun(RunStore &store, const QString &storePath, const QString &text, QString *error);

/**
 * One side of `compare`: a run, a comma list of runs ("3,4,5", "last~2,last~1,last") or label:NAME, every run with
 * that label (label:NAME~N stays the one run). Errors name the part that failed.
 */
std::optional<QList<RunRecord>> loadRunGroup(
    RunStore &store, const QString &storePath, const QString &text, QString *error);

/// Compares @p b against @p a and prints the table (text or markdown) with the environment differences; returns the
/// comparison. One run a side is judged on its blocks (an A/B side), else per call when asked, else inconclusive;
/// several runs a side are judged run against run.
Comparison printComparison(
    const QList<RunRecord> &a, const QList<RunRecord> &b, const CompareOptions &options, bool markdown);
Comparison printComparison(const RunRecord &a, const RunRecord &b, const CompareOptions &options, bool markdown);

} // namespace rpcscope::cli
