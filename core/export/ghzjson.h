#pragma once

#include "store/runrecord.h"

#include <QJsonObject>
#include <QString>

#include <optional>

namespace rpcscope {

/**
 * ghz's JSON report (`ghz -O json`, runner.Report), both ways.
 *
 * Fields: date (RFC 3339), name, endReason, options (a subset: call, host, insecure, total, concurrency, rps,
 * duration), count, total, average, fastest, slowest (Go durations: integer nanoseconds), rps, errorDistribution
 * (message -> count), statusCodeDistribution (Go's code names, "OK", "Unavailable" -> count), latencyDistribution
 * ([{percentage, latency}] at ghz's 10, 25, 50, 75, 90, 95, 99), histogram (ghz's 11 linear marks from fastest to
 * slowest: [{mark (seconds), count, frequency}], a mark counting the OK calls above the previous mark up to it),
 * details ([{timestamp, latency, error, status}], one per call) and tags.
 *
 * As in ghz, average and rps cover every call while fastest, slowest, the distribution and the histogram cover
 * the OK calls only.
 */

/**
 * @p run as ghz's report. `details` is written only when the run recorded raw samples (their timestamps are the
 * intended send times, their latencies whole microseconds); otherwise it is null, which ghz also writes for a run
 * without results. A decode error (no gRPC code) is reported as "Internal", as grpc-go reports an unparsable
 * reply. rpcscope's transport, codec and labels go into `tags`, which the import reads back.
 */
QJsonObject runToGhzJson(const RunRecord &run);

/// True when @p json has the shape of a ghz report (a `count` and ghz's distribution fields, no rpcscope `format`).
bool looksLikeGhzReport(const QJsonObject &json);

/**
 * Rebuilds a run from a ghz report. @p origin becomes the record's origin (e.g. "ghz: results.json").
 *
 * With `details` holding every call, the histograms, statuses and raw samples are exact. Without (ghz writes no
 * details past its 1,000,000-result cap, and hand-trimmed reports drop them), the OK calls' histogram is
 * approximated: the cumulative distribution is known at the fastest call (0), at ghz's seven percentiles and at
 * its eleven histogram marks, and slowest (1); between those points it is taken as linear, and the OK count is
 * spread over rpcscope's buckets accordingly. min and max are then exact, the percentiles close to ghz's, and
 * the mean exact when every call succeeded (it is set from `average`). Failed calls, of which ghz keeps no
 * latencies, all get the latency that makes the overall average match. Such a record says so: its origin ends
 * with " (approximate: no details)" and it carries the label "approximate".
 *
 * Errors name the field: "latencyDistribution[2].latency: expected a number".
 */
std::optional<RunRecord> runFromGhzJson(const QJsonObject &json, const QString &origin, QString *error);

/// Go's name of a gRPC status ("OK", "Canceled", "DeadlineExceeded"), as ghz prints it; DecodeError -> "Internal".
QString ghzStatusName(int status);

/**
 * A status name as ghz, grpcurl or rpcscope spell it ("Unavailable", "UNAVAILABLE", "unavailable", "Canceled",
 * "CANCELLED", "DECODE_ERROR") as a CallStatus value; std::nullopt when it names none.
 */
std::optional<int> statusFromName(const QString &name);

} // namespace rpcscope
