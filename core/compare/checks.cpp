#include "checks.h"

#include "util/units.h"

#include <QJsonArray>
#include <QRegularExpression>

#include <cmath>

namespace rpcscope {

namespace {

const char *const kAccepted = "METRIC OP VALUE with METRIC p50, p99, p99.9 (any percentile), mean, min, max, rps, "
                              "error_rate or errors; OP <, <=, >, >= or ==; e.g. p99<10ms, rps>=5000, error_rate<0.1%";

bool isLatency(Check::Metric m)
{
    return m == Check::Metric::Percentile || m == Check::Metric::Mean || m == Check::Metric::Min
        || m == Check::Metric::Max;
}

QString metricName(const Check &check)
{
    switch (check.metric) {
    case Check::Metric::Percentile:
        return QStringLiteral("p") + QString::number(check.percentile);
    case Check::Metric::Mean:
        return QStringLiteral("mean");
    case Check::Metric::Min:
        return QStringLiteral("min");
    case Check::Metric::Max:
        return QStringLiteral("max");
    case Check::Metric::Rps:
        return QStringLiteral("rps");
    case Check::Metric::ErrorRate:
        return QStringLiteral("error_rate");
    case Check::Metric::Errors:
        return QStringLiteral("errors");
    }
    return {};
}

} // namespace

std::optional<Check> parseCheck(const QString &text, QString *error)
{
    static const QRegularExpression re(
        QStringLiteral("^\\s*([A-Za-z_][A-Za-z0-9_.]*)\\s*(<=|>=|==|<|>)\\s*(\\S+)\\s*$"));
    const QRegularExpressionMatch m = re.match(text);
    if (!m.hasMatch()) {
        *error = QStringLiteral("\"%1\": expected %2").arg(text, QLatin1String(kAccepted));
        return std::nullopt;
    }
    Check check;
    check.text = text.simplified().remove(u' ');
    const QString metric = m.captured(1).toLower();
    const QString op = m.captured(2);
    const QString value = m.captured(3);
    if (metric.startsWith(u'p') && metric.size() > 1 && (metric[1].isDigit())) {
        bool ok = false;
        check.percentile = metric.mid(1).toDouble(&ok);
        if (!ok || check.percentile <= 0 || check.percentile > 100) {
            *error = QStringLiteral("\"%1\": %2 is not a percentile (p0.1 .. p100)").arg(text, m.captured(1));
            return std::nullopt;
        }
        check.metric = Check::Metric::Percentile;
    } else if (metric == u"mean" || metric == u"avg" || metric == u"average") {
        check.metric = Check::Metric::Mean;
    } else if (metric == u"min") {
        check.metric = Check::Metric::Min;
    } else if (metric == u"max") {
        check.metric = Check::Metric::Max;
    } else if (metric == u"rps") {
        check.metric = Check::Metric::Rps;
    } else if (metric == u"error_rate") {
        check.metric = Check::Metric::ErrorRate;
    } else if (metric == u"errors") {
        check.metric = Check::Metric::Errors;
    } else {
        *error = QStringLiteral("\"%1\": unknown metric \"%2\"; expected %3")
                     .arg(text, m.captured(1), QLatin1String(kAccepted));
        return std::nullopt;
    }
    check.op = op == u"<" ? Check::Op::Less
        : op == u"<="     ? Check::Op::LessOrEqual
        : op == u">"      ? Check::Op::Greater
        : op == u">="     ? Check::Op::GreaterOrEqual
                          : Check::Op::Equal;
    if (isLatency(check.metric)) {
        QString why;
        const auto d = parseDuration(value, &why);
        if (!d) {
            *error = QStringLiteral("\"%1\": %2 needs a duration such as 10ms or 500us (%3)")
                         .arg(text, metricName(check), why);
            return std::nullopt;
        }
        check.value = static_cast<double>(d->count());
    } else if (check.metric == Check::Metric::ErrorRate) {
        const bool percent = value.endsWith(u'%');
        bool ok = false;
        const double v = (percent ? value.chopped(1) : value).toDouble(&ok);
        if (!ok || v < 0 || (percent ? v > 100 : v > 1)) {
            *error = QStringLiteral("\"%1\": error_rate needs a share such as 0.1% or 0.001").arg(text);
            return std::nullopt;
        }
        check.value = percent ? v / 100 : v;
    } else {
        bool ok = false;
        check.value = value.toDouble(&ok);
        if (!ok || check.value < 0 || !std::isfinite(check.value)) {
            *error = QStringLiteral("\"%1\": %2 needs a number, got \"%3\"").arg(text, metricName(check), value);
            return std::nullopt;
        }
    }
    return check;
}

CheckResult evaluateCheck(const Check &check, const RunSnapshot &snapshot)
{
    CheckResult r;
    r.check = check;
    const LatencyHistogram &ok = snapshot.latency;
    switch (check.metric) {
    case Check::Metric::Percentile:
        r.actual = static_cast<double>(ok.percentile(check.percentile));
        break;
    case Check::Metric::Mean:
        r.actual = ok.mean();
        break;
    case Check::Metric::Min:
        r.actual = static_cast<double>(ok.min());
        break;
    case Check::Metric::Max:
        r.actual = static_cast<double>(ok.max());
        break;
    case Check::Metric::Rps:
        r.actual = snapshot.requestsPerSecond();
        break;
    case Check::Metric::ErrorRate:
        r.actual = snapshot.callsCompleted()
            ? static_cast<double>(snapshot.callsFailed()) / static_cast<double>(snapshot.callsCompleted())
            : 0;
        r.measured = snapshot.callsCompleted() > 0;
        break;
    case Check::Metric::Errors:
        r.actual = static_cast<double>(snapshot.callsFailed());
        break;
    }
    if (isLatency(check.metric))
        r.measured = ok.count() > 0; // no OK call: no latency to hold to the bound, and that is a failure
    switch (check.op) {
    case Check::Op::Less:
        r.passed = r.actual < check.value;
        break;
    case Check::Op::LessOrEqual:
        r.passed = r.actual <= check.value;
        break;
    case Check::Op::Greater:
        r.passed = r.actual > check.value;
        break;
    case Check::Op::GreaterOrEqual:
        r.passed = r.actual >= check.value;
        break;
    case Check::Op::Equal:
        r.passed = r.actual == check.value;
        break;
    }
    r.passed = r.passed && r.measured;
    return r;
}

QStringList checksOfRun(const QJsonObject &scenario)
{
    QStringList out;
    for (const auto &v : scenario.value(QStringLiteral("checks")).toArray())
        out << v.toString();
    const QJsonArray arguments = scenario.value(QStringLiteral("arguments")).toArray();
    for (qsizetype i = 0; i < arguments.size(); ++i) {
        const QString a = arguments.at(i).toString();
        if (a == u"--check" && i + 1 < arguments.size())
            out << arguments.at(++i).toString();
        else if (a.startsWith(QStringLiteral("--check=")))
            out << a.mid(8);
    }
    out.removeAll(QString());
    return out;
}

std::vector<CheckResult> evaluateChecks(const QStringList &texts, const RunSnapshot &snapshot)
{
    std::vector<CheckResult> results;
    for (const QString &text : texts) {
        QString error;
        if (const std::optional<Check> check = parseCheck(text, &error))
            results.push_back(evaluateCheck(*check, snapshot));
    }
    return results;
}

QString formatCheckValue(const Check &check, double value)
{
    if (isLatency(check.metric))
        return formatNanos(value);
    switch (check.metric) {
    case Check::Metric::Rps:
        return QStringLiteral("%1 req/s").arg(value, 0, 'f', 1);
    case Check::Metric::ErrorRate:
        return QStringLiteral("%1%").arg(value * 100, 0, 'g', 4);
    default:
        return QString::number(value, 'f', 0);
    }
}

QString formatCheckResults(const std::vector<CheckResult> &results)
{
    QString text = QStringLiteral("Checks:\n");
    for (const CheckResult &r : results) {
        text += QStringLiteral("  %1  %2  (%3)\n")
                    .arg(r.passed ? QStringLiteral("ok  ") : QStringLiteral("FAIL"), r.check.text.leftJustified(18),
                        r.measured ? QString(metricName(r.check) + u' ' + formatCheckValue(r.check, r.actual))
                                   : QStringLiteral("not measured: no OK call"));
    }
    return text;
}

} // namespace rpcscope
