#pragma once

#include "runrecord.h"

#include <QJsonObject>

#include <optional>

namespace rpcscope {

/**
 * rpcscope's JSON report ("rpcscope-run", schema_version 1): a run as JSON, lossless, so percentiles, means and
 * every chart can be recomputed from it and `rpcscope-cli import` reads it back into history.
 *
 * Top level: format ("rpcscope-run"), schema_version, name, labels, status, started_at/ended_at (ISO 8601 UTC),
 * method, transport, codec, target, origin, scenario, environment, server, summary (derived figures for readers
 * that do not want to recompute: count, ok, failed, rps, mean_ns, stddev_ns, min_ns, max_ns, p50_ns .. p99_99_ns,
 * client_cpu_per_call_us, server_cpu_per_call_us), snapshot (below) and raw_samples ([sent_ns, latency_us,
 * status] triples, only when recorded).
 *
 * A histogram is {count, min_ns, max_ns, sum_ns, sum_squares_ns2, buckets: [[low_ns, count], ...]}: the exact
 * sums are decimal strings (they outgrow 64 bits) and each bucket is named by its lower bound, which fixes the
 * bucket (see LatencyHistogram) so a reader needs no knowledge of the bucket layout to plot it.
 */
inline constexpr int kRunJsonSchemaVersion = 1;

QJsonObject histogramToJson(const LatencyHistogram &histogram);
/// @p where names the field in errors ("snapshot.latency").
std::optional<LatencyHistogram> histogramFromJson(const QJsonObject &json, const QString &where, QString *error);

/// The snapshot; @p withTimeline false leaves the time series out (the run store keeps it in its own table).
QJsonObject snapshotToJson(const RunSnapshot &snapshot, bool withTimeline = true);
std::optional<RunSnapshot> snapshotFromJson(const QJsonObject &json, const QString &where, QString *error);

QJsonObject intervalToJson(const IntervalPoint &point);
std::optional<IntervalPoint> intervalFromJson(const QJsonObject &json, const QString &where, QString *error);

/// Derived figures of a snapshot (the "summary" object).
QJsonObject summaryToJson(const RunSnapshot &snapshot);

/**
 * What makes @p snapshot inconsistent, named by its field as the JSON report spells it ("snapshot.status_counts"), for
 * reports from elsewhere (an import): status counts that do not add up to the calls the histograms hold, more errors
 * than failed calls, negative CPU times, blocks with more failures than calls. Empty when it is consistent.
 */
QString snapshotInconsistency(const RunSnapshot &snapshot, const QString &where = QStringLiteral("snapshot"));

/// A split run's record (the report's "split" object): its plan, start time and workers.
QJsonObject splitToJson(const SplitRecord &split);
std::optional<SplitRecord> splitFromJson(const QJsonObject &json, const QString &where, QString *error);

QJsonObject runToJson(const RunRecord &given);
/// Reads a report; errors name the field ("snapshot.latency.buckets[3]: expected [low_ns, count]").
std::optional<RunRecord> runFromJson(const QJsonObject &json, QString *error);

} // namespace rpcscope
