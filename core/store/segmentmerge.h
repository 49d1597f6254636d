#pragma once

#include "runrecord.h"

#include <QList>
#include <QString>

#include <optional>

namespace rpcscope {

/// One segment's report and where it came from (a file name, for messages).
struct SegmentReport {
    QString source;
    RunRecord run;
};

/**
 * The workers' reports of one split run (`run --segment I/N`) as one run, as if one process had run the whole plan:
 * histograms merged exactly (so the percentiles are the whole run's, never an average of the workers'), status
 * counts, errors, bytes and CPU summed, the time series merged interval by interval on the wall clock (each worker's
 * intervals placed by its timed phase's start; an interval's percentiles from its merged latency buckets), the
 * elapsed time from the first worker's start to the last one's end, and every worker kept in `split.workers` with
 * its own figures and environment.
 *
 * Refused, with a message naming the files: a report that is not a segment (or is already a merge), segments of
 * different plans or of different worker counts, a segment given twice, and, unless @p partial, a missing segment
 * (with @p partial the result says which are missing and carries the label "partial").
 */
std::optional<RunRecord> mergeSegments(const QList<SegmentReport> &reports, bool partial, QString *error);

/// Why a worker stands out from the others (empty when it does not): a p99 above 1.5x the workers' median p99, or a
/// throughput under 2/3 of their median. What a slow node, a noisy neighbour or a throttled pod looks like. One entry
/// per worker of @p split, in its order; nothing stands out among fewer than three workers.
QStringList outlyingWorkers(const SplitRecord &split);

} // namespace rpcscope
