#pragma once

#include "metrics/runsnapshot.h"

#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <optional>
#include <vector>

namespace rpcscope {

/**
 * A pass/fail condition on a run's numbers, as a CI job states it: "p99<10ms", "p99.9 <= 25ms", "mean<2ms",
 * "max<1s", "rps>=5000", "error_rate<0.1%", "errors==0". Latencies are the OK calls' (from the intended send
 * time in an open loop, as the report shows them); error_rate is failed / completed calls.
 */
struct Check {
    enum class Metric { Percentile, Mean, Min, Max, Rps, ErrorRate, Errors };
    enum class Op { Less, LessOrEqual, Greater, GreaterOrEqual, Equal };

    QString text; ///< as given, for the report
    Metric metric = Metric::Percentile;
    double percentile = 0; ///< for Metric::Percentile
    Op op = Op::Less;
    double value = 0; ///< nanoseconds for latencies, req/s, a fraction for error_rate, a count for errors
};

/// Parses one check; false with @p error naming the part that is wrong and what is accepted.
std::optional<Check> parseCheck(const QString &text, QString *error);

struct CheckResult {
    Check check;
    double actual = 0; ///< in the check's unit
    bool passed = false;
    bool measured = true; ///< false when the run has nothing to measure it on (no OK call for a latency)
};

CheckResult evaluateCheck(const Check &check, const RunSnapshot &snapshot);
/// The checks a stored run was given: its scenario document's "checks", or the --check flags of the CLI run
/// (stored as the scenario's "arguments"). Empty when none.
QStringList checksOfRun(const QJsonObject &scenario);
/// Parses and judges @p texts against @p snapshot; a text that no longer parses is skipped.
std::vector<CheckResult> evaluateChecks(const QStringList &texts, const RunSnapshot &snapshot);

/// "ok    p99<10ms  (p99 6.32 ms)" lines, one per check, for the text report.
QString formatCheckResults(const std::vector<CheckResult> &results);
/// The actual value in the check's unit, for people ("6.32 ms", "12345 req/s", "0.12%", "3").
QString formatCheckValue(const Check &check, double value);

} // namespace rpcscope
