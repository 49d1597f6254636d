#include "ghzjson.h"

#include <QJsonArray>
#include <QRegularExpression>

#include <algorithm>
#include <chrono>
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

/// RFC 3339 (with any fraction and a Z or +hh:mm zone) as nanoseconds since the epoch.
std::optional<qint64> parseRfc3339(const QString &text)
{
    static const QRegularExpression re(
        QStringLiteral("^(\\d{4}-\\d{2}-\\d{2})[Tt ](\\d{2}:\\d{2}:\\d{2})(?:\\.(\\d+))?([Zz]|[+-]\\d{2}:\\d{2})$"));
    const QRegularExpressionMatch m = re.match(text);
    if (!m.hasMatch())
        return std::nullopt;
    const QString zone = m.captured(4).toUpper();
    const QDateTime base = QDateTime::fromString(m.captured(1) + u'T' + m.captured(2) + zone, Qt::ISODate);
    if (!base.isValid())
        return std::nullopt;
    const QString fraction = QString(m.captured(3) + QStringLiteral("000000000")).left(9);
    return base.toSecsSinceEpoch() * 1000000000 + fraction.toLongLong();
}

/// Reads ghz's fields, keeping the first problem with the field's path.
class Fields {
public:
    explicit Fields(QString *error) : m_error(error) { }

    bool failed() const { return m_failed; }
    void fail(const QString &where, const QString &message)
    {
        if (!m_failed && m_error)
            *m_error = where + QStringLiteral(": ") + message;
        m_failed = true;
    }

    /// A number >= 0 (ghz's counts and durations never go below). Absent or null: std::nullopt, an error if required.
    std::optional<double> number(const QJsonValue &value, const QString &where, bool required = false)
    {
        if (value.isUndefined() || value.isNull()) {
            if (required)
                fail(where, QStringLiteral("missing"));
            return std::nullopt;
        }
        if (!value.isDouble()) {
            fail(where, QStringLiteral("expected a number"));
            return std::nullopt;
        }
        const double d = value.toDouble();
        if (!std::isfinite(d) || d < 0 || d > 9.2e18) {
            fail(where, QStringLiteral("expected a number >= 0"));
            return std::nullopt;
        }
        return d;
    }
    std::optional<uint64_t> whole(const QJsonValue &value, const QString &where, bool required = false)
    {
        const std::optional<double> d = number(value, where, required);
        if (!d)
            return std::nullopt;
        if (*d != std::floor(*d)) {
            fail(where, QStringLiteral("expected a whole number"));
            return std::nullopt;
        }
        return static_cast<uint64_t>(*d);
    }
    std::optional<QString> string(const QJsonValue &value, const QString &where)
    {
        if (value.isUndefined() || value.isNull())
            return std::nullopt;
        if (!value.isString()) {
            fail(where, QStringLiteral("expected a string"));
            return std::nullopt;
        }
        return value.toString();
    }
    std::optional<QJsonArray> array(const QJsonValue &value, const QString &where)
    {
        if (value.isUndefined() || value.isNull())
            return std::nullopt; // ghz writes null for a run without OK calls
        if (!value.isArray()) {
            fail(where, QStringLiteral("expected an array"));
            return std::nullopt;
        }
        return value.toArray();
    }
    std::optional<QJsonObject> object(const QJsonValue &value, const QString &where)
    {
        if (value.isUndefined() || value.isNull())
            return std::nullopt;
        if (!value.isObject()) {
            fail(where, QStringLiteral("expected an object"));
            return std::nullopt;
        }
        return value.toObject();
    }

private:
    QString *m_error;
    bool m_failed = false;
};

QString at(const QString &array, qsizetype index)
{
    return QStringLiteral("%1[%2]").arg(array).arg(index);
}

/// grpc-go's "rpc error: code = X desc = Y" split into its status and message; other texts are Unknown, whole.
ErrorSample parseErrorKey(const QString &key)
{
    static const QRegularExpression re(
        QStringLiteral("^rpc error: code = (\\S+)(?: desc = (.*))?$"), QRegularExpression::DotMatchesEverythingOption);
    ErrorSample sample;
    sample.status = CallStatus::Unknown;
    sample.message = key;
    const QRegularExpressionMatch m = re.match(key);
    if (m.hasMatch()) {
        if (const std::optional<int> status = statusFromName(m.captured(1)); status && *status != CallStatus::Ok)
            sample.status = *status;
        sample.message = m.captured(2);
    }
    return sample;
}

/// The cumulative distribution of the OK calls where ghz's report pins it, linear in between.
class PiecewiseCdf {
public:
    void add(double valueNs, double fraction) { m_knots.push_back({ valueNs, std::clamp(fraction, 0.0, 1.0) }); }
    void finish()
    {
        std::stable_sort(
            m_knots.begin(), m_knots.end(), [](const Knot &a, const Knot &b) { return a.value < b.value; });
        // Sources disagree by their rounding (a percentile's latency vs. a histogram mark): keep it non-decreasing.
        double highest = 0;
        for (Knot &knot : m_knots) {
            highest = std::max(highest, knot.fraction);
            knot.fraction = highest;
        }
    }
    double operator()(double value) const
    {
        if (m_knots.empty() || value < m_knots.front().value)
            return 0.0;
        const auto upper = std::upper_bound(
            m_knots.begin(), m_knots.end(), value, [](double v, const Knot &knot) { return v < knot.value; });
        if (upper == m_knots.end())
            return m_knots.back().fraction;
        const Knot &below = *(upper - 1);
        if (below.value == value)
            return below.fraction;
        return below.fraction
            + (upper->fraction - below.fraction) * (value - below.value) / (upper->value - below.value);
    }

private:
    struct Knot {
        double value;
        double fraction;
    };
    std::vector<Knot> m_knots;
};

/// A histogram of @p total calls all at @p valueNs (what is known of failed calls without details).
LatencyHistogram constantHistogram(uint64_t valueNs, uint64_t total)
{
    LatencyHistogram h;
    if (total)
        LatencyHistogram::restore({ { LatencyHistogram::bucketIndex(valueNs), total } }, valueNs, valueNs,
            static_cast<Wide>(valueNs) * total, static_cast<Wide>(valueNs) * valueNs * total, &h);
    return h;
}

struct LatencyPoint {
    double percentage;
    double latencyNs;
};

struct HistogramMark {
    double markNs;
    double count;
};

/// The OK calls' histogram from ghz's summary figures (see runFromGhzJson).
LatencyHistogram approximateHistogram(uint64_t okCount, uint64_t fastest, uint64_t slowest,
    std::optional<double> exactMean, const std::vector<LatencyPoint> &points, const std::vector<HistogramMark> &marks)
{
    if (okCount == 0)
        return {};
    if (okCount == 1)
        slowest = fastest;
    PiecewiseCdf cdf;
    const auto lo = static_cast<double>(fastest);
    const auto hi = static_cast<double>(slowest);
    cdf.add(lo, 0.0);
    for (const LatencyPoint &point : points)
        cdf.add(std::clamp(point.latencyNs, lo, hi), point.percentage / 100.0);
    double marked = 0;
    for (const HistogramMark &mark : marks)
        marked += mark.count;
    // Normalised by the histogram's own total: ghz builds it from at most a million kept results.
    if (marked > 0) {
        double seen = 0;
        for (const HistogramMark &mark : marks) {
            seen += mark.count;
            cdf.add(std::clamp(mark.markNs, lo, hi), seen / marked);
        }
    }
    cdf.add(hi, 1.0);
    cdf.finish();

    const int first = LatencyHistogram::bucketIndex(fastest);
    const int last = LatencyHistogram::bucketIndex(slowest);
    std::vector<uint64_t> counts(static_cast<size_t>(last - first + 1), 0);
    uint64_t assigned = 0;
    for (int b = first; b <= last; ++b) {
        const double edge = b == last ? hi : static_cast<double>(LatencyHistogram::bucketHigh(b));
        const auto cumulative = b == last
            ? okCount
            : std::min<uint64_t>(
                okCount, static_cast<uint64_t>(std::llround(static_cast<double>(okCount) * cdf(edge))));
        counts[static_cast<size_t>(b - first)] = cumulative - std::min(cumulative, assigned);
        assigned = std::max(assigned, cumulative);
    }
    // min and max are exact, so their buckets must hold a call each (restore() checks it).
    auto fill = [&](size_t target) {
        if (counts[target] > 0)
            return;
        size_t donor = counts.size();
        for (size_t i = 0; i < counts.size(); ++i) {
            const uint64_t keep = (i == 0 || i + 1 == counts.size()) ? 1 : 0;
            if (i != target && counts[i] > keep && (donor == counts.size() || counts[i] > counts[donor]))
                donor = i;
        }
        if (donor < counts.size()) {
            --counts[donor];
            ++counts[target];
        }
    };
    fill(0);
    fill(counts.size() - 1);

    std::vector<std::pair<int, uint64_t>> buckets;
    Wide sum = 0;
    Wide sumSquares = 0;
    for (size_t i = 0; i < counts.size(); ++i) {
        if (!counts[i])
            continue;
        const int b = first + static_cast<int>(i);
        buckets.emplace_back(b, counts[i]);
        const uint64_t low = LatencyHistogram::bucketLow(b);
        const uint64_t mid = std::clamp<uint64_t>(low + (LatencyHistogram::bucketHigh(b) - low) / 2, fastest, slowest);
        sum += static_cast<Wide>(mid) * counts[i];
        sumSquares += static_cast<Wide>(mid) * mid * counts[i];
    }
    if (exactMean)
        sum = static_cast<Wide>(std::llround(*exactMean)) * okCount;
    // The squares come from bucket midpoints; never let them imply a negative variance against the exact mean.
    const long double n = static_cast<long double>(okCount);
    const long double s = static_cast<long double>(sum);
    if (static_cast<long double>(sumSquares) * n < s * s)
        sumSquares = static_cast<Wide>(s * s / n) + 1;
    LatencyHistogram h;
    LatencyHistogram::restore(buckets, fastest, slowest, sum, sumSquares, &h);
    return h;
}

QString normalisedMethod(const QString &call)
{
    // ghz takes "pkg.Service.Method" as well as "pkg.Service/Method"; rpcscope names methods the second way.
    if (call.contains(u'/') || !call.contains(u'.'))
        return call;
    QString method = call;
    method[method.lastIndexOf(u'.')] = u'/';
    return method;
}

/// A number from the run's scenario: the scenario document's load.KEY, or the value after one of @p flags.
std::optional<double> scenarioNumber(const QJsonObject &scenario, const QString &key, const QStringList &flags)
{
    const QJsonValue load = scenario.value(QStringLiteral("load")).toObject().value(key);
    if (load.isDouble())
        return load.toDouble();
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

} // namespace

QString ghzStatusName(int status)
{
    if (status == CallStatus::DecodeError)
        return QStringLiteral("Internal");
    if (status >= 0 && status < static_cast<int>(std::size(kGoStatusNames)))
        return QString::fromLatin1(kGoStatusNames[status]);
    return QStringLiteral("Code(%1)").arg(status);
}

std::optional<int> statusFromName(const QString &name)
{
    QString key = name.trimmed().toUpper();
    key.remove(u'_');
    key.remove(u' ');
    if (key == u"CANCELED" || key == u"CANCELLED")
        return CallStatus::Cancelled;
    if (key == u"DECODEERROR")
        return CallStatus::DecodeError;
    for (int i = 0; i < static_cast<int>(std::size(kGoStatusNames)); ++i) {
        if (key == QString::fromLatin1(kGoStatusNames[i]).toUpper())
            return i;
    }
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

    const qint64 nowNs = QDateTime::currentMSecsSinceEpoch() * 1000000;
    const qint64 endNs = run.endedAt.isValid() ? run.endedAt.toMSecsSinceEpoch() * 1000000
        : run.startedAt.isValid()              ? run.startedAt.toMSecsSinceEpoch() * 1000000 + elapsedNs
                                               : nowNs;
    const qint64 startNs = run.startedAt.isValid() ? run.startedAt.toMSecsSinceEpoch() * 1000000 : endNs - elapsedNs;

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
    const QJsonArray arguments = run.scenario.value(QStringLiteral("arguments")).toArray();
    const bool tls = arguments.contains(QStringLiteral("--cacert")) || arguments.contains(QStringLiteral("--cert"));
    options.insert(QStringLiteral("insecure"), !tls);
    if (s.plannedCalls)
        options.insert(QStringLiteral("total"), static_cast<qint64>(s.plannedCalls));
    if (const auto c = scenarioNumber(
            run.scenario, QStringLiteral("concurrency"), { QStringLiteral("-c"), QStringLiteral("--concurrency") }))
        options.insert(QStringLiteral("concurrency"), static_cast<qint64>(*c));
    if (const auto rps
        = scenarioNumber(run.scenario, QStringLiteral("rps"), { QStringLiteral("--rps"), QStringLiteral("-r") }))
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
                { QStringLiteral("timestamp"), rfc3339(startNs + static_cast<qint64>(sample.sentNs)) },
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

std::optional<RunRecord> runFromGhzJson(const QJsonObject &json, const QString &origin, QString *error)
{
    Fields f(error);
    const std::optional<uint64_t> count = f.whole(json.value(QStringLiteral("count")), QStringLiteral("count"), true);
    const std::optional<double> total = f.number(json.value(QStringLiteral("total")), QStringLiteral("total"), true);
    const std::optional<double> average = f.number(json.value(QStringLiteral("average")), QStringLiteral("average"));
    const std::optional<double> fastest = f.number(json.value(QStringLiteral("fastest")), QStringLiteral("fastest"));
    const std::optional<double> slowest = f.number(json.value(QStringLiteral("slowest")), QStringLiteral("slowest"));
    f.number(json.value(QStringLiteral("rps")), QStringLiteral("rps")); // recomputed from count and total
    const std::optional<QString> name = f.string(json.value(QStringLiteral("name")), QStringLiteral("name"));
    const std::optional<QString> date = f.string(json.value(QStringLiteral("date")), QStringLiteral("date"));
    const std::optional<QJsonObject> options
        = f.object(json.value(QStringLiteral("options")), QStringLiteral("options"));
    const std::optional<QJsonObject> tags = f.object(json.value(QStringLiteral("tags")), QStringLiteral("tags"));
    const std::optional<QJsonObject> statusDist
        = f.object(json.value(QStringLiteral("statusCodeDistribution")), QStringLiteral("statusCodeDistribution"));
    const std::optional<QJsonObject> errorDist
        = f.object(json.value(QStringLiteral("errorDistribution")), QStringLiteral("errorDistribution"));
    const std::optional<QJsonArray> latencyDist
        = f.array(json.value(QStringLiteral("latencyDistribution")), QStringLiteral("latencyDistribution"));
    const std::optional<QJsonArray> histogram
        = f.array(json.value(QStringLiteral("histogram")), QStringLiteral("histogram"));
    const std::optional<QJsonArray> details = f.array(json.value(QStringLiteral("details")), QStringLiteral("details"));
    if (f.failed())
        return std::nullopt;

    RunRecord run;
    run.status = QString::fromUtf16(RunStatus::Imported);
    run.origin = origin;
    run.name = name.value_or(QString());
    run.transport = QStringLiteral("grpc");
    run.codec = QStringLiteral("protobuf");
    std::optional<qint64> endNs;
    if (date) {
        endNs = parseRfc3339(*date);
        if (!endNs) {
            f.fail(QStringLiteral("date"), QStringLiteral("expected an RFC 3339 time, got \"%1\"").arg(*date));
            return std::nullopt;
        }
    }
    RunSnapshot &s = run.snapshot;
    s.state = RunState::Finished;
    s.elapsed = std::chrono::nanoseconds(static_cast<qint64>(std::llround(*total)));
    if (options) {
        const QString where = QStringLiteral("options");
        run.method = normalisedMethod(
            f.string(options->value(QStringLiteral("call")), where + QStringLiteral(".call")).value_or(QString()));
        run.target
            = f.string(options->value(QStringLiteral("host")), where + QStringLiteral(".host")).value_or(QString());
        s.plannedCalls = f.whole(options->value(QStringLiteral("total")), where + QStringLiteral(".total")).value_or(0);
        s.plannedDuration = std::chrono::nanoseconds(static_cast<qint64>(
            f.number(options->value(QStringLiteral("duration")), where + QStringLiteral(".duration")).value_or(0)));
        run.scenario = QJsonObject { { QStringLiteral("ghz_options"), *options } };
    }
    if (tags) {
        for (const char *key : { "transport", "codec" }) {
            const QString text = f.string(tags->value(QLatin1String(key)), QStringLiteral("tags.") + QLatin1String(key))
                                     .value_or(QString());
            if (!text.isEmpty())
                (qstrcmp(key, "transport") == 0 ? run.transport : run.codec) = text;
        }
        const QString labels
            = f.string(tags->value(QStringLiteral("labels")), QStringLiteral("tags.labels")).value_or(QString());
        for (const QString &label : labels.split(QStringLiteral(", "), Qt::SkipEmptyParts))
            run.labels << label;
    }

    // Errors by message, and the statuses they imply when the report has no statusCodeDistribution.
    StatusCounts errorStatuses {};
    uint64_t errorTotal = 0;
    if (errorDist) {
        for (auto it = errorDist->begin(); it != errorDist->end(); ++it) {
            const std::optional<uint64_t> n
                = f.whole(it.value(), QStringLiteral("errorDistribution[\"%1\"]").arg(it.key()), true);
            if (!n)
                return std::nullopt;
            ErrorSample sample = parseErrorKey(it.key());
            sample.count = *n;
            errorStatuses[static_cast<size_t>(sample.status)] += *n;
            errorTotal += *n;
            s.errors.append(sample);
        }
        std::stable_sort(s.errors.begin(), s.errors.end(),
            [](const ErrorSample &a, const ErrorSample &b) { return a.count > b.count; });
    }
    StatusCounts statuses {};
    if (statusDist) {
        uint64_t sum = 0;
        for (auto it = statusDist->begin(); it != statusDist->end(); ++it) {
            const std::optional<uint64_t> n
                = f.whole(it.value(), QStringLiteral("statusCodeDistribution.%1").arg(it.key()), true);
            if (!n)
                return std::nullopt;
            const int status = statusFromName(it.key()).value_or(CallStatus::Unknown);
            statuses[static_cast<size_t>(status)] += *n;
            sum += *n;
        }
        if (sum != *count) {
            f.fail(QStringLiteral("statusCodeDistribution"),
                QStringLiteral("the counts add up to %1, but count is %2").arg(sum).arg(*count));
            return std::nullopt;
        }
    } else {
        if (errorTotal > *count) {
            f.fail(QStringLiteral("errorDistribution"),
                QStringLiteral("the counts add up to %1, but count is %2").arg(errorTotal).arg(*count));
            return std::nullopt;
        }
        statuses = errorStatuses;
        statuses[CallStatus::Ok] = *count - errorTotal;
    }

    const bool exact = details && static_cast<uint64_t>(details->size()) == *count && *count > 0;
    if (exact) {
        std::vector<std::pair<qint64, RawSample>> stamped;
        stamped.reserve(static_cast<size_t>(details->size()));
        bool allStamped = true;
        StatusCounts fromDetails {};
        QHash<QString, uint64_t> detailErrors;
        for (qsizetype i = 0; i < details->size(); ++i) {
            const QString where = at(QStringLiteral("details"), i);
            const std::optional<QJsonObject> d = f.object(details->at(i), where);
            if (!d) {
                f.fail(where, QStringLiteral("expected an object"));
                return std::nullopt;
            }
            const std::optional<double> latency
                = f.number(d->value(QStringLiteral("latency")), where + QStringLiteral(".latency"), true);
            const QString errorText
                = f.string(d->value(QStringLiteral("error")), where + QStringLiteral(".error")).value_or(QString());
            const std::optional<QString> statusText
                = f.string(d->value(QStringLiteral("status")), where + QStringLiteral(".status"));
            const std::optional<QString> stampText
                = f.string(d->value(QStringLiteral("timestamp")), where + QStringLiteral(".timestamp"));
            if (f.failed())
                return std::nullopt;
            int status = errorText.isEmpty() ? CallStatus::Ok : CallStatus::Unknown;
            if (statusText && !statusText->isEmpty())
                status = statusFromName(*statusText).value_or(CallStatus::Unknown);
            if (status == CallStatus::Ok && !errorText.isEmpty())
                status = CallStatus::Unknown; // ghz counts a call with an error as failed whatever its status says
            const auto ns = static_cast<uint64_t>(std::llround(*latency));
            (status == CallStatus::Ok ? s.latency : s.errorLatency).record(ns);
            ++fromDetails[static_cast<size_t>(status)];
            if (!errorText.isEmpty())
                ++detailErrors[errorText];
            qint64 stamp = 0;
            if (stampText) {
                const std::optional<qint64> parsed = parseRfc3339(*stampText);
                if (!parsed) {
                    f.fail(where + QStringLiteral(".timestamp"),
                        QStringLiteral("expected an RFC 3339 time, got \"%1\"").arg(*stampText));
                    return std::nullopt;
                }
                stamp = *parsed;
            } else {
                allStamped = false;
            }
            const uint64_t us = std::min<uint64_t>((ns + 500) / 1000, std::numeric_limits<uint32_t>::max());
            stamped.push_back({ stamp, RawSample { 0, static_cast<uint32_t>(us), static_cast<uint32_t>(status) } });
        }
        s.statusCounts = fromDetails;
        if (!errorDist) {
            for (auto it = detailErrors.cbegin(); it != detailErrors.cend(); ++it) {
                ErrorSample sample = parseErrorKey(it.key());
                sample.count = it.value();
                s.errors.append(sample);
            }
            std::stable_sort(s.errors.begin(), s.errors.end(),
                [](const ErrorSample &a, const ErrorSample &b) { return a.count > b.count; });
        }
        if (allStamped) {
            std::stable_sort(
                stamped.begin(), stamped.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
            const qint64 first = stamped.front().first;
            run.rawSamples.reserve(stamped.size());
            for (auto &[stamp, sample] : stamped) {
                sample.sentNs = static_cast<uint64_t>(stamp - first);
                run.rawSamples.push_back(sample);
            }
            if (!endNs)
                endNs = first + s.elapsed.count();
        }
    } else {
        s.statusCounts = statuses;
        const uint64_t okCount = statuses[CallStatus::Ok];
        const uint64_t failedCount = *count - okCount;
        if (okCount > 0) {
            if (!fastest || !slowest) {
                f.fail(fastest ? QStringLiteral("slowest") : QStringLiteral("fastest"),
                    QStringLiteral("missing (needed to rebuild the latency histogram without details)"));
                return std::nullopt;
            }
            if (*slowest < *fastest) {
                f.fail(QStringLiteral("slowest"), QStringLiteral("less than fastest"));
                return std::nullopt;
            }
            std::vector<LatencyPoint> points;
            if (latencyDist) {
                for (qsizetype i = 0; i < latencyDist->size(); ++i) {
                    const QString where = at(QStringLiteral("latencyDistribution"), i);
                    const std::optional<QJsonObject> item = f.object(latencyDist->at(i), where);
                    if (!item) {
                        f.fail(where, QStringLiteral("expected an object"));
                        return std::nullopt;
                    }
                    const auto p = f.number(
                        item->value(QStringLiteral("percentage")), where + QStringLiteral(".percentage"), true);
                    const auto latency
                        = f.number(item->value(QStringLiteral("latency")), where + QStringLiteral(".latency"), true);
                    if (f.failed())
                        return std::nullopt;
                    if (*p > 100) {
                        f.fail(where + QStringLiteral(".percentage"), QStringLiteral("expected 0 to 100"));
                        return std::nullopt;
                    }
                    if (*p > 0 && *latency > 0) // ghz leaves {0, 0} where a percentile came out as 0
                        points.push_back({ *p, *latency });
                }
            }
            std::vector<HistogramMark> marks;
            if (histogram) {
                for (qsizetype i = 0; i < histogram->size(); ++i) {
                    const QString where = at(QStringLiteral("histogram"), i);
                    const std::optional<QJsonObject> item = f.object(histogram->at(i), where);
                    if (!item) {
                        f.fail(where, QStringLiteral("expected an object"));
                        return std::nullopt;
                    }
                    const auto mark
                        = f.number(item->value(QStringLiteral("mark")), where + QStringLiteral(".mark"), true);
                    const auto n
                        = f.whole(item->value(QStringLiteral("count")), where + QStringLiteral(".count"), true);
                    f.number(item->value(QStringLiteral("frequency")), where + QStringLiteral(".frequency"));
                    if (f.failed())
                        return std::nullopt;
                    marks.push_back({ *mark * 1e9, static_cast<double>(*n) });
                }
            }
            const auto lo = static_cast<uint64_t>(std::llround(*fastest));
            const auto hi = static_cast<uint64_t>(std::llround(*slowest));
            std::optional<double> okMean;
            if (failedCount == 0 && average && *average >= *fastest && *average <= *slowest)
                okMean = *average;
            s.latency = approximateHistogram(okCount, lo, hi, okMean, points, marks);
        }
        if (failedCount > 0) {
            // ghz keeps no latencies of failed calls; give them all the one latency that keeps ghz's average.
            double value = s.latency.isEmpty() ? 0.0 : s.latency.mean();
            if (average) {
                const double okSum = s.latency.mean() * static_cast<double>(okCount);
                value = std::max(
                    0.0, (*average * static_cast<double>(*count) - okSum) / static_cast<double>(failedCount));
            }
            s.errorLatency = constantHistogram(static_cast<uint64_t>(std::llround(value)), failedCount);
        }
        if (*count > 0) {
            run.origin += details && !details->isEmpty()
                ? QStringLiteral(" (approximate: details cover %1 of %2 calls)").arg(details->size()).arg(*count)
                : QStringLiteral(" (approximate: no details)");
            if (!run.labels.contains(u"approximate"))
                run.labels << QStringLiteral("approximate");
        }
    }
    if (!endNs)
        endNs = QDateTime::currentMSecsSinceEpoch() * 1000000;
    run.endedAt = QDateTime::fromMSecsSinceEpoch(*endNs / 1000000, Qt::UTC);
    run.startedAt = QDateTime::fromMSecsSinceEpoch((*endNs - s.elapsed.count()) / 1000000, Qt::UTC);
    return run;
}

} // namespace rpcscope
