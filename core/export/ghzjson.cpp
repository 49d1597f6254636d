#include "ghzjson.h"

#include <QJsonArray>
#include <QRegularExpression>

#include <algorithm>
#include <cmath>
#include <limits>

namespace rpcscope {

namespace {

using Wide = LatencyHistogram::Wide;

constexpr int kGhzPercentiles[] = { 10, 25, 50, 75, 90, 95, 99 };
constexpr int kGhzHistogramBuckets = 10; // ghz: 10 equal steps from fastest to slowest, 11 marks

// Go's codes.Code.String(), which ghz writes in statusCodeDistribution and details.
constexpr const char *kGoStatusNames[] = {
    "OK",
    "Canceled",
    "Unknown",
    "InvalidArgument",
    "DeadlineExceeded",
    "NotFound",
    "AlreadyExists",
    "PermissionDenied",
    "ResourceExhausted",
    "FailedPrecondition",
    "Aborted",
    "OutOfRange",
    "Unimplemented",
    "Internal",
    "Unavailable",
    "DataLoss",
    "Unauthenticated",
};

/// ghz's error text: grpc-go's status error, "rpc error: code = Unavailable desc = connection refused".
QString errorKey(int status, const QString &message)
{
    QString key = QStringLiteral("rpc error: code = ") + ghzStatusName(status);
    if (!message.isEmpty())
        key += QStringLiteral(" desc = ") + message;
    return key;
}

// Nanoseconds since 1970 in 64 bits, held in range: a run read from a file may carry any time (the importers refuse
// what does not fit, but a history file is read as it is). Room is left for rounding to seconds.
constexpr qint64 kLimitNs = std::numeric_limits<qint64>::max() / 2;

qint64 epochNs(const QDateTime &t)
{
    return std::clamp<qint64>(t.toMSecsSinceEpoch(), -kLimitNs / 1000000, kLimitNs / 1000000) * 1000000;
}

qint64 plus(qint64 a, qint64 b)
{
    qint64 sum = 0;
    if (__builtin_add_overflow(a, b, &sum))
        return b > 0 ? kLimitNs : -kLimitNs;
    return std::clamp<qint64>(sum, -kLimitNs, kLimitNs);
}

QString rfc3339(qint64 nanosSinceEpoch)
{
    const qint64 seconds
        = nanosSinceEpoch >= 0 ? nanosSinceEpoch / 1000000000 : (nanosSinceEpoch - 999999999) / 1000000000;
    const qint64 nanos = nanosSinceEpoch - seconds * 1000000000;
    QString text = QDateTime::fromSecsSinceEpoch(seconds, Qt::UTC).toString(QStringLiteral("yyyy-MM-dd'T'HH:mm:ss"));
    if (nanos) { // Go's RFC3339Nano: the fraction without trailing zeros, none at all when whole
        QString fraction = QStringLiteral("%1").arg(nanos, 9, 10, QLatin1Char('0'));
        while (fraction.endsWith(u'0'))
            fraction.chop(1);
        text += u'.' + fraction;
    }
    return text + u'Z';
}

/// A number from the run's scenario: the scenario document's load.KEY (a number, or text such as a rate "500"), or,
/// in runs saved before CLI runs kept their document, the value after one of @p flags.
std::optional<double> rawScenarioNumber(const QJsonObject &scenario, const QString &key, const QStringList &flags)
{
    const QJsonValue load = scenario.value(QStringLiteral("load")).toObject().value(key);
    if (load.isDouble())
        return load.toDouble();
    if (load.isString()) {
        bool ok = false;
        const double value = load.toString().toDouble(&ok);
        return ok ? std::optional(value) : std::nullopt;
    }
    const QJsonArray arguments = scenario.value(QStringLiteral("arguments")).toArray();
    for (qsizetype i = 0; i < arguments.size(); ++i) {
        const QString argument = arguments.at(i).toString();
        for (const QString &flag : flags) {
            QString text;
            if (argument == flag && i + 1 < arguments.size())
                text = arguments.at(i + 1).toString();
            else if (argument.startsWith(flag + u'='))
                text = argument.mid(flag.size() + 1);
            bool ok = false;
            const double value = text.toDouble(&ok);
            if (ok)
                return value;
        }
    }
    return std::nullopt;
}

/// A count or a rate from a saved run's scenario, when it is one: an imported file may say anything, and a value
/// beyond 1e15 (or negative, or not finite) has no integer in ghz's fields (the fuzzer gave a rate of 3e130, which the
/// conversion to qint64 turned into undefined behaviour). Left out then, as an unknown.
std::optional<double> scenarioNumber(const QJsonObject &scenario, const QString &key, const QStringList &flags)
{
    const std::optional<double> value = rawScenarioNumber(scenario, key, flags);
    if (!value || !std::isfinite(*value) || *value < 0 || *value > 1e15)
        return std::nullopt;
    return value;
}

} // namespace

QString ghzStatusName(int status)
{
    if (status == CallStatus::DecodeError || status == CallStatus::UnexpectedReply)
        return QStringLiteral("Internal");
    if (status >= 0 && status < static_cast<int>(std::size(kGoStatusNames)))
        return QString::fromLatin1(kGoStatusNames[status]);
    return QStringLiteral("Code(%1)").arg(status);
}

std::optional<int> statusFromName(const QString &name)
{
    if (const std::optional<int> status = parseCallStatus(name))
        return status;
    const QString key = name.trimmed().toUpper();
    static const QRegularExpression code(QStringLiteral("^(?:CODE\\()?(\\d+)\\)?$"));
    const QRegularExpressionMatch m = code.match(key);
    if (m.hasMatch()) {
        const int value = m.captured(1).toInt();
        if (value < CallStatus::SlotCount)
            return value;
    }
    return std::nullopt;
}

bool looksLikeGhzReport(const QJsonObject &json)
{
    if (json.contains(QStringLiteral("format")) || !json.contains(QStringLiteral("count")))
        return false;
    for (const char *key : { "statusCodeDistribution", "latencyDistribution", "details", "histogram", "fastest" }) {
        if (json.contains(QLatin1String(key)))
            return true;
    }
    return false;
}

QJsonObject runToGhzJson(const RunRecord &run)
{
    const RunSnapshot &s = run.snapshot;
    const LatencyHistogram &ok = s.latency;
    LatencyHistogram all = ok;
    all.merge(s.errorLatency);
    const qint64 elapsedNs = s.elapsed.count();

    const qint64 nowNs = epochNs(QDateTime::currentDateTimeUtc());
    const qint64 endNs = run.endedAt.isValid() ? epochNs(run.endedAt)
        : run.startedAt.isValid()              ? plus(epochNs(run.startedAt), elapsedNs)
                                               : nowNs;
    const qint64 startNs = run.startedAt.isValid() ? epochNs(run.startedAt) : plus(endNs, -elapsedNs);

    QJsonObject o;
    if (!run.name.isEmpty())
        o.insert(QStringLiteral("name"), run.name);
    QString endReason = QStringLiteral("normal");
    if (run.status == u"stopped" || run.status == u"interrupted" || s.state == RunState::Stopped)
        endReason = QStringLiteral("cancel");
    else if (s.plannedDuration.count() > 0 && (s.plannedCalls == 0 || s.callsCompleted() < s.plannedCalls))
        endReason = QStringLiteral("timeout");
    o.insert(QStringLiteral("endReason"), endReason);

    QJsonObject options { { QStringLiteral("call"), run.method }, { QStringLiteral("host"), run.target } };
    const QJsonObject connection = run.scenario.value(QStringLiteral("connection")).toObject();
    const QJsonArray arguments = run.scenario.value(QStringLiteral("arguments")).toArray(); // runs saved before
    const bool tls = connection.value(QStringLiteral("security")).toString() == u"tls"
        || connection.contains(QStringLiteral("cacert")) || connection.contains(QStringLiteral("cert"))
        || connection.value(QStringLiteral("skip_verify")).toBool() || arguments.contains(QStringLiteral("--cacert"))
        || arguments.contains(QStringLiteral("--cert"));
    options.insert(QStringLiteral("insecure"), !tls);
    if (s.plannedCalls)
        options.insert(QStringLiteral("total"), static_cast<qint64>(s.plannedCalls));
    if (const auto c = scenarioNumber(
            run.scenario, QStringLiteral("concurrency"), { QStringLiteral("-c"), QStringLiteral("--concurrency") }))
        options.insert(QStringLiteral("concurrency"), static_cast<qint64>(*c));
    if (const auto rps
        = scenarioNumber(run.scenario, QStringLiteral("rate"), { QStringLiteral("--rps"), QStringLiteral("-r") }))
        options.insert(QStringLiteral("rps"), static_cast<qint64>(*rps));
    if (s.plannedDuration.count() > 0)
        options.insert(QStringLiteral("duration"), static_cast<qint64>(s.plannedDuration.count()));
    o.insert(QStringLiteral("options"), options);

    o.insert(QStringLiteral("date"), rfc3339(endNs / 1000000000 * 1000000000)); // ghz: time.RFC3339, whole seconds
    o.insert(QStringLiteral("count"), static_cast<qint64>(s.callsCompleted()));
    o.insert(QStringLiteral("total"), elapsedNs);
    o.insert(QStringLiteral("average"), static_cast<qint64>(std::llround(all.mean())));
    o.insert(QStringLiteral("fastest"), static_cast<qint64>(ok.min()));
    o.insert(QStringLiteral("slowest"), static_cast<qint64>(ok.max()));
    o.insert(QStringLiteral("rps"), s.requestsPerSecond());

    // ghz counts every failed call under its error text; rpcscope keeps a capped list of messages, so what the
    // list does not cover is counted under the bare status.
    QJsonObject errors;
    StatusCounts covered {};
    for (const ErrorSample &e : s.errors) {
        const QString key = errorKey(e.status, e.message);
        errors.insert(key, static_cast<qint64>(errors.value(key).toInteger() + static_cast<qint64>(e.count)));
        if (e.status >= 0 && e.status < CallStatus::SlotCount)
            covered[static_cast<size_t>(e.status)] += e.count;
    }
    QJsonObject statuses;
    for (int i = 0; i < CallStatus::SlotCount; ++i) {
        const uint64_t n = s.statusCounts[static_cast<size_t>(i)];
        if (!n)
            continue;
        const QString name = ghzStatusName(i);
        statuses.insert(name, statuses.value(name).toInteger() + static_cast<qint64>(n));
        if (i != CallStatus::Ok && n > covered[static_cast<size_t>(i)]) {
            const QString key = errorKey(i, QString());
            errors.insert(
                key, errors.value(key).toInteger() + static_cast<qint64>(n - covered[static_cast<size_t>(i)]));
        }
    }
    o.insert(QStringLiteral("errorDistribution"), errors);
    o.insert(QStringLiteral("statusCodeDistribution"), statuses);

    if (ok.isEmpty()) {
        o.insert(QStringLiteral("latencyDistribution"), QJsonValue::Null);
        o.insert(QStringLiteral("histogram"), QJsonValue::Null);
    } else {
        QJsonArray distribution;
        for (const int p : kGhzPercentiles)
            distribution.append(QJsonObject { { QStringLiteral("percentage"), p },
                { QStringLiteral("latency"), static_cast<qint64>(ok.percentile(p)) } });
        o.insert(QStringLiteral("latencyDistribution"), distribution);

        const auto fastest = static_cast<double>(ok.min());
        const auto slowest = static_cast<double>(ok.max());
        const double step = (slowest - fastest) / kGhzHistogramBuckets;
        std::vector<double> marks(kGhzHistogramBuckets + 1);
        for (int i = 0; i < kGhzHistogramBuckets; ++i)
            marks[static_cast<size_t>(i)] = fastest + step * i;
        marks.back() = slowest;
        std::vector<uint64_t> counts(marks.size(), 0);
        for (const LatencyHistogram::Bucket &bucket : ok.buckets()) {
            uint64_t n = bucket.count;
            // The fastest call itself is at the first mark, as in ghz; the rest of a bucket goes by its midpoint.
            if (bucket.lowNs <= ok.min() && ok.min() <= bucket.highNs) {
                ++counts[0];
                --n;
            }
            const double mid = std::clamp(
                0.5 * (static_cast<double>(bucket.lowNs) + static_cast<double>(bucket.highNs)), fastest, slowest);
            const auto it = std::lower_bound(marks.begin(), marks.end(), mid);
            counts[static_cast<size_t>(std::min<ptrdiff_t>(it - marks.begin(), kGhzHistogramBuckets))] += n;
        }
        QJsonArray histogram;
        for (size_t i = 0; i < marks.size(); ++i)
            histogram.append(QJsonObject { { QStringLiteral("mark"), marks[i] / 1e9 },
                { QStringLiteral("count"), static_cast<qint64>(counts[i]) },
                { QStringLiteral("frequency"), static_cast<double>(counts[i]) / static_cast<double>(ok.count()) } });
        o.insert(QStringLiteral("histogram"), histogram);
    }

    if (run.rawSamples.empty()) {
        o.insert(QStringLiteral("details"), QJsonValue::Null);
    } else {
        QHash<int, QString> messages; // a sample keeps only its status: give it the most frequent message of it
        for (const ErrorSample &e : s.errors) {
            if (!messages.contains(e.status))
                messages.insert(e.status, errorKey(e.status, e.message));
        }
        QJsonArray details;
        for (const RawSample &sample : run.rawSamples) {
            const auto status = static_cast<int>(sample.status);
            details.append(QJsonObject {
                { QStringLiteral("timestamp"),
                    rfc3339(plus(startNs, static_cast<qint64>(std::min<uint64_t>(sample.sentNs, kLimitNs)))) },
                { QStringLiteral("latency"), static_cast<qint64>(sample.latencyUs) * 1000 },
                { QStringLiteral("error"),
                    status == CallStatus::Ok ? QString() : messages.value(status, errorKey(status, QString())) },
                { QStringLiteral("status"), ghzStatusName(status) },
            });
        }
        o.insert(QStringLiteral("details"), details);
    }

    QJsonObject tags { { QStringLiteral("transport"), run.transport }, { QStringLiteral("codec"), run.codec } };
    if (!run.labels.isEmpty())
        tags.insert(QStringLiteral("labels"), run.labels.join(QStringLiteral(", ")));
    o.insert(QStringLiteral("tags"), tags);
    return o;
}

} // namespace rpcscope
