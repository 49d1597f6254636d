#pragma once

#include "store/runrecord.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>

#include <vector>

namespace rpcscope {

/**
 * CSV writers for spreadsheets and pandas: RFC 4180 (fields with a comma, a double quote, CR or LF are quoted,
 * quotes doubled), '\n' line ends, UTF-8, one header row of stable snake_case names that carry the unit
 * (`p50_ms`, `rps`, `client_cpu_per_call_us`), and numbers with a '.' decimal point whatever the locale. Each file
 * holds a single table so LibreOffice and pandas.read_csv read it without options; a value that is not known is
 * an empty field.
 */

/// @p text as one CSV field: unchanged, or quoted with its quotes doubled when it holds `,` `"` CR or LF.
QString csvField(const QString &text);

/**
 * The summary table's column names: id, name, labels, status, started_at, method, transport, codec, target,
 * count, ok, failed, duration_s, rps, mean_ms, stddev_ms, min_ms, p10_ms, p25_ms, p50_ms, p75_ms, p90_ms, p95_ms,
 * p99_ms, p99_9_ms, p99_99_ms, max_ms, client_cpu_per_call_us, server_cpu_per_call_us, client_peak_rss_bytes,
 * server_peak_rss_bytes, bytes_sent, bytes_received. Latency columns are the OK calls'; labels are joined with ';'.
 */
QStringList summaryCsvColumns();

/// One row per run (a history selection or both sides of a comparison), under summaryCsvColumns().
QByteArray runsSummaryCsv(const QList<RunRecord> &runs);

/// The non-empty buckets of @p histogram: `low_ns,high_ns,count,cumulative_fraction` (bounds inclusive).
QByteArray histogramCsv(const LatencyHistogram &histogram);

/// The time series: `end_s,seconds,calls,errors,rps,p50_ms,p90_ms,p99_ms,concurrency`, one interval a row.
QByteArray timelineCsv(const QList<IntervalPoint> &timeline);

/// Every recorded call: `sent_ns,latency_us,status` (the status by name, e.g. OK), as `--raw-samples` writes it.
QByteArray rawSamplesCsv(const std::vector<RawSample> &samples);

} // namespace rpcscope
