// ghz's JSON report read back as a run (see ghzjson.h); the writing side is ghzjson.cpp.
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

/// RFC 3339 (with any fraction and a Z or +hh:mm zone) as nanoseconds since the epoch; std::nullopt with @p why
/// when it is not one or is out of range.
std::optional<qint64> parseRfc3339(const QString &text, QString *why)
{
    *why = QStringLiteral("expected an RFC 3339 time, got \"%1\"").arg(text);
    static const QRegularExpression re(
        QStringLiteral("^(\\d{4}-\\d{2}-\\d{2})[Tt ](\\d{2}:\\d{2}:\\d{2})(?:\\.(\\d+))?([Zz]|[+-]\\d{2}:\\d{2})$"));
    const QRegularExpressionMatch m = re.match(text);
    if (!m.hasMatch())
        return std::nullopt;
    const QString zone = m.captured(4).toUpper();
    const QDateTime base = QDateTime::fromString(m.captured(1) + u'T' + m.captured(2) + zone, Qt::ISODate);
    if (!base.isValid())
        return std::nullopt;
    // Nanoseconds in 64 bits reach from 1677 to 2262; Go's times (ghz's) reach further.
    constexpr qint64 kMaxSeconds = std::numeric_limits<qint64>::max() / 1000000000 - 1;
    const qint64 seconds = base.toSecsSinceEpoch();
    if (seconds > kMaxSeconds || seconds < -kMaxSeconds) {
        *why = QStringLiteral("%1 is out of range (years 1678 to 2261)").arg(text);
        return std::nullopt;
    }
    const QString fraction = QString(m.captured(3) + QStringLiteral("000000000")).left(9);
    return seconds * 1000000000 + fraction.toLongLong();
}

/// The largest latency (ns) and count an import accepts: what a JSON number (and so rpcscope's own report) carries
/// exactly.
constexpr double kTwoTo53 = 9007199254740992.0;

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
        if (d < 0) {
            fail(where, QStringLiteral("expected a number >= 0, got %1").arg(d));
            return std::nullopt;
        }
        if (!std::isfinite(d) || d > 9.2e18) { // ghz's values are int64 nanoseconds and counts
            fail(where, QStringLiteral("%1 is out of range (at most 9.2e18)").arg(d));
            return std::nullopt;
        }
        return d;
    }
    /// A latency in nanoseconds: a number >= 0 up to 2^53 ns (104 days), the most rpcscope's own report carries
    /// exactly.
    std::optional<double> latency(const QJsonValue &value, const QString &where, bool required = false)
    {
        const std::optional<double> d = number(value, where, required);
        if (d && *d > kTwoTo53) {
            fail(where, QStringLiteral("%1 ns is out of range for a latency (at most 2^53 ns, 104 days)").arg(*d));
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
        // Counts and sums the store keeps as 64-bit integers and reports carry as JSON numbers: exact up to 2^53.
        if (*d > kTwoTo53) {
            fail(where,
                QStringLiteral("%1 is out of range (at most 2^53, the largest whole number JSON carries exactly)")
                    .arg(*d));
            return std::nullopt;
        }
        return static_cast<uint64_t>(*d);
    }
    /// Adds @p n to @p total, false (naming @p where) when the sum passes 2^53: a report's counts must add up to a
    /// count it could carry.
    bool add(uint64_t *total, uint64_t n, const QString &where)
    {
        if (n > static_cast<uint64_t>(kTwoTo53) - *total) {
            fail(where, QStringLiteral("the counts add up to more than 2^53"));
            return false;
        }
        *total += n;
        return true;
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
    const auto n = static_cast<long double>(okCount);
    const auto s = static_cast<long double>(sum);
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

/// ghz's top-level fields, each checked for its type (count and total must be there).
struct GhzReport {
    std::optional<uint64_t> count;
    std::optional<double> total;
    std::optional<double> average;
    std::optional<double> fastest;
    std::optional<double> slowest;
    std::optional<QString> name;
    std::optional<QString> date;
    std::optional<QJsonObject> options;
    std::optional<QJsonObject> tags;
    std::optional<QJsonObject> statusDist;
    std::optional<QJsonObject> errorDist;
    std::optional<QJsonArray> latencyDist;
    std::optional<QJsonArray> histogram;
    std::optional<QJsonArray> details;
};

/// Reads ghz's top-level fields; a problem is left in @p f.
GhzReport readReport(Fields &f, const QJsonObject &json)
{
    GhzReport g;
    g.count = f.whole(json.value(QStringLiteral("count")), QStringLiteral("count"), true);
    g.total = f.number(json.value(QStringLiteral("total")), QStringLiteral("total"), true);
    g.average = f.latency(json.value(QStringLiteral("average")), QStringLiteral("average"));
    g.fastest = f.latency(json.value(QStringLiteral("fastest")), QStringLiteral("fastest"));
    g.slowest = f.latency(json.value(QStringLiteral("slowest")), QStringLiteral("slowest"));
    f.number(json.value(QStringLiteral("rps")), QStringLiteral("rps")); // recomputed from count and total
    g.name = f.string(json.value(QStringLiteral("name")), QStringLiteral("name"));
    g.date = f.string(json.value(QStringLiteral("date")), QStringLiteral("date"));
    g.options = f.object(json.value(QStringLiteral("options")), QStringLiteral("options"));
    g.tags = f.object(json.value(QStringLiteral("tags")), QStringLiteral("tags"));
    g.statusDist
        = f.object(json.value(QStringLiteral("statusCodeDistribution")), QStringLiteral("statusCodeDistribution"));
    g.errorDist = f.object(json.value(QStringLiteral("errorDistribution")), QStringLiteral("errorDistribution"));
    g.latencyDist = f.array(json.value(QStringLiteral("latencyDistribution")), QStringLiteral("latencyDistribution"));
    g.histogram = f.array(json.value(QStringLiteral("histogram")), QStringLiteral("histogram"));
    g.details = f.array(json.value(QStringLiteral("details")), QStringLiteral("details"));
    return g;
}

/// The run's method, target and plan from ghz's "options", kept whole as the run's scenario.
void readOptions(Fields &f, const QJsonObject &options, RunRecord &run)
{
    RunSnapshot &s = run.snapshot;
    const QString where = QStringLiteral("options");
    run.method = normalisedMethod(
        f.string(options.value(QStringLiteral("call")), where + QStringLiteral(".call")).value_or(QString()));
    run.target = f.string(options.value(QStringLiteral("host")), where + QStringLiteral(".host")).value_or(QString());
    s.plannedCalls = f.whole(options.value(QStringLiteral("total")), where + QStringLiteral(".total")).value_or(0);
    s.plannedDuration = std::chrono::nanoseconds(static_cast<qint64>(
        f.number(options.value(QStringLiteral("duration")), where + QStringLiteral(".duration")).value_or(0)));
    run.scenario = QJsonObject { { QStringLiteral("ghz_options"), options } };
}

/// The run's transport, codec and labels from ghz's "tags".
void readTags(Fields &f, const QJsonObject &tags, RunRecord &run)
{
    for (const char *key : { "transport", "codec" }) {
        const QString text = f.string(tags.value(QLatin1String(key)), QStringLiteral("tags.") + QLatin1String(key))
                                 .value_or(QString());
        if (!text.isEmpty())
            (qstrcmp(key, "transport") == 0 ? run.transport : run.codec) = text;
    }
    const QString labels
        = f.string(tags.value(QStringLiteral("labels")), QStringLiteral("tags.labels")).value_or(QString());
    for (const QString &label : labels.split(QStringLiteral(", "), Qt::SkipEmptyParts))
        run.labels << label;
}

/// Reads "errorDistribution" into @p s's errors, adding up their counts and the statuses they imply; false on a bad
/// count.
bool readErrorDistribution(
    Fields &f, const QJsonObject &errorDist, RunSnapshot &s, StatusCounts &errorStatuses, uint64_t &errorTotal)
{
    for (auto it = errorDist.begin(); it != errorDist.end(); ++it) {
        const std::optional<uint64_t> n
            = f.whole(it.value(), QStringLiteral("errorDistribution[\"%1\"]").arg(it.key()), true);
        if (!n)
            return false;
        ErrorSample sample = parseErrorKey(it.key());
        sample.count = *n;
        if (!f.add(&errorTotal, *n, QStringLiteral("errorDistribution")))
            return false;
        errorStatuses[static_cast<size_t>(sample.status)] += *n; // at most errorTotal
        s.errors.append(sample);
    }
    std::stable_sort(
        s.errors.begin(), s.errors.end(), [](const ErrorSample &a, const ErrorSample &b) { return a.count > b.count; });
    return true;
}

/// The calls' statuses: "statusCodeDistribution" (checked against count and the errors), else what the errors imply.
std::optional<StatusCounts> callStatuses(
    Fields &f, const GhzReport &g, const StatusCounts &errorStatuses, uint64_t errorTotal)
{
    StatusCounts statuses {};
    if (g.statusDist) {
        uint64_t sum = 0;
        for (auto it = g.statusDist->begin(); it != g.statusDist->end(); ++it) {
            const std::optional<uint64_t> n
                = f.whole(it.value(), QStringLiteral("statusCodeDistribution.%1").arg(it.key()), true);
            if (!n)
                return std::nullopt;
            const int status = statusFromName(it.key()).value_or(CallStatus::Unknown);
            if (!f.add(&sum, *n, QStringLiteral("statusCodeDistribution")))
                return std::nullopt;
            statuses[static_cast<size_t>(status)] += *n; // at most sum
        }
        if (sum != *g.count) {
            f.fail(QStringLiteral("statusCodeDistribution"),
                QStringLiteral("the counts add up to %1, but count is %2").arg(sum).arg(*g.count));
            return std::nullopt;
        }
        // Each error is a failed call: more errors than failures cannot be (and rpcscope's own report refuses it).
        const uint64_t failed = *g.count - statuses[CallStatus::Ok];
        if (errorTotal > failed) {
            f.fail(QStringLiteral("errorDistribution"),
                QStringLiteral("the counts add up to %1, more than the %2 failed calls in statusCodeDistribution")
                    .arg(errorTotal)
                    .arg(failed));
            return std::nullopt;
        }
    } else {
        if (errorTotal > *g.count) {
            f.fail(QStringLiteral("errorDistribution"),
                QStringLiteral("the counts add up to %1, but count is %2").arg(errorTotal).arg(*g.count));
            return std::nullopt;
        }
        statuses = errorStatuses;
        statuses[CallStatus::Ok] = *g.count - errorTotal;
    }
    return statuses;
}

/// What ghz's details add up to: each call's send time and raw sample, the statuses and the errors.
struct DetailTally {
    std::vector<std::pair<qint64, RawSample>> stamped;
    bool allStamped = true;
    StatusCounts fromDetails {};
    QHash<QString, uint64_t> detailErrors;
};

/// Reads details[@p i] into @p s's latencies and @p tally; false when it is not a call ghz would write.
bool readDetail(Fields &f, const QJsonArray &details, qsizetype i, RunSnapshot &s, DetailTally &tally)
{
    const QString where = at(QStringLiteral("details"), i);
    const std::optional<QJsonObject> d = f.object(details.at(i), where);
    if (!d) {
        f.fail(where, QStringLiteral("expected an object"));
        return false;
    }
    const std::optional<double> latency
        = f.latency(d->value(QStringLiteral("latency")), where + QStringLiteral(".latency"), true);
    const QString errorText
        = f.string(d->value(QStringLiteral("error")), where + QStringLiteral(".error")).value_or(QString());
    const std::optional<QString> statusText
        = f.string(d->value(QStringLiteral("status")), where + QStringLiteral(".status"));
    const std::optional<QString> stampText
        = f.string(d->value(QStringLiteral("timestamp")), where + QStringLiteral(".timestamp"));
    if (f.failed())
        return false;
    int status = errorText.isEmpty() ? CallStatus::Ok : CallStatus::Unknown;
    if (statusText && !statusText->isEmpty())
        status = statusFromName(*statusText).value_or(CallStatus::Unknown);
    if (status == CallStatus::Ok && !errorText.isEmpty())
        status = CallStatus::Unknown; // ghz counts a call with an error as failed whatever its status says
    const auto ns = static_cast<uint64_t>(std::llround(*latency));
    (status == CallStatus::Ok ? s.latency : s.errorLatency).record(ns);
    ++tally.fromDetails[static_cast<size_t>(status)];
    if (!errorText.isEmpty())
        ++tally.detailErrors[errorText];
    qint64 stamp = 0;
    if (stampText) {
        QString why;
        const std::optional<qint64> parsed = parseRfc3339(*stampText, &why);
        if (!parsed) {
            f.fail(where + QStringLiteral(".timestamp"), why);
            return false;
        }
        stamp = *parsed;
    } else {
        tally.allStamped = false;
    }
    const uint64_t us = std::min<uint64_t>((ns + 500) / 1000, std::numeric_limits<uint32_t>::max());
    tally.stamped.emplace_back(stamp, RawSample { 0, static_cast<uint32_t>(us), static_cast<uint32_t>(status) });
    return true;
}

/// Gives the calls their send times from their timestamps (the first at 0) and, without a date, ends the run that
/// long after the first; false when that end is past what nanoseconds hold.
bool placeStampedCalls(Fields &f, std::vector<std::pair<qint64, RawSample>> &stamped, double total, RunRecord &run,
    std::optional<qint64> &endNs)
{
    const RunSnapshot &s = run.snapshot;
    std::stable_sort(stamped.begin(), stamped.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
    const qint64 first = stamped.front().first;
    run.rawSamples.reserve(stamped.size());
    for (auto &[stamp, sample] : stamped) {
        // In unsigned arithmetic: the times may be centuries apart, more than an int64 difference holds.
        sample.sentNs = static_cast<uint64_t>(stamp) - static_cast<uint64_t>(first);
        run.rawSamples.push_back(sample);
    }
    if (!endNs) {
        qint64 end = 0;
        if (__builtin_add_overflow(first, s.elapsed.count(), &end)) {
            f.fail(QStringLiteral("total"),
                QStringLiteral("%1 ns after the first call's timestamp is past the year 2262").arg(total));
            return false;
        }
        endNs = end;
    }
    return true;
}

/// The exact run from ghz's details, one per call: latencies, statuses, errors and, when all are timestamped, raw
/// samples.
bool runFromDetails(Fields &f, const GhzReport &g, uint64_t errorTotal, RunRecord &run, std::optional<qint64> &endNs)
{
    RunSnapshot &s = run.snapshot;
    DetailTally tally;
    tally.stamped.reserve(static_cast<size_t>(g.details->size()));
    for (qsizetype i = 0; i < g.details->size(); ++i) {
        if (!readDetail(f, *g.details, i, s, tally))
            return false;
    }
    s.statusCounts = tally.fromDetails;
    // The details decide which calls failed: errorDistribution may not name more errors than that.
    if (const uint64_t failed = *g.count - tally.fromDetails[CallStatus::Ok]; errorTotal > failed) {
        f.fail(QStringLiteral("errorDistribution"),
            QStringLiteral("the counts add up to %1, more than the %2 failed calls in details")
                .arg(errorTotal)
                .arg(failed));
        return false;
    }
    if (!g.errorDist) {
        for (auto it = tally.detailErrors.cbegin(); it != tally.detailErrors.cend(); ++it) {
            ErrorSample sample = parseErrorKey(it.key());
            sample.count = it.value();
            s.errors.append(sample);
        }
        std::stable_sort(s.errors.begin(), s.errors.end(),
            [](const ErrorSample &a, const ErrorSample &b) { return a.count > b.count; });
    }
    if (tally.allStamped && !placeStampedCalls(f, tally.stamped, *g.total, run, endNs))
        return false;
    return true;
}

/// The percentiles of "latencyDistribution" (those ghz computed); std::nullopt on a bad entry.
std::optional<std::vector<LatencyPoint>> readLatencyPoints(Fields &f, const std::optional<QJsonArray> &latencyDist)
{
    std::vector<LatencyPoint> points;
    if (latencyDist) {
        for (qsizetype i = 0; i < latencyDist->size(); ++i) {
            const QString where = at(QStringLiteral("latencyDistribution"), i);
            const std::optional<QJsonObject> item = f.object(latencyDist->at(i), where);
            if (!item) {
                f.fail(where, QStringLiteral("expected an object"));
                return std::nullopt;
            }
            const auto p
                = f.number(item->value(QStringLiteral("percentage")), where + QStringLiteral(".percentage"), true);
            const auto latency
                = f.latency(item->value(QStringLiteral("latency")), where + QStringLiteral(".latency"), true);
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
    return points;
}

/// The marks of "histogram" in nanoseconds, with their counts; std::nullopt on a bad entry.
std::optional<std::vector<HistogramMark>> readHistogramMarks(Fields &f, const std::optional<QJsonArray> &histogram)
{
    std::vector<HistogramMark> marks;
    if (histogram) {
        for (qsizetype i = 0; i < histogram->size(); ++i) {
            const QString where = at(QStringLiteral("histogram"), i);
            const std::optional<QJsonObject> item = f.object(histogram->at(i), where);
            if (!item) {
                f.fail(where, QStringLiteral("expected an object"));
                return std::nullopt;
            }
            const auto mark = f.number(item->value(QStringLiteral("mark")), where + QStringLiteral(".mark"), true);
            const auto n = f.whole(item->value(QStringLiteral("count")), where + QStringLiteral(".count"), true);
            f.number(item->value(QStringLiteral("frequency")), where + QStringLiteral(".frequency"));
            if (f.failed())
                return std::nullopt;
            marks.push_back({ *mark * 1e9, static_cast<double>(*n) });
        }
    }
    return marks;
}

/// Rebuilds the OK calls' histogram from fastest, slowest, the percentiles and ghz's histogram; false when those are
/// missing or do not fit.
bool approximateOkLatency(Fields &f, const GhzReport &g, uint64_t okCount, uint64_t failedCount, RunSnapshot &s)
{
    if (!g.fastest || !g.slowest) {
        f.fail(g.fastest ? QStringLiteral("slowest") : QStringLiteral("fastest"),
            QStringLiteral("missing (needed to rebuild the latency histogram without details)"));
        return false;
    }
    if (*g.slowest < *g.fastest) {
        f.fail(QStringLiteral("slowest"), QStringLiteral("less than fastest"));
        return false;
    }
    const std::optional<std::vector<LatencyPoint>> points = readLatencyPoints(f, g.latencyDist);
    if (!points)
        return false;
    const std::optional<std::vector<HistogramMark>> marks = readHistogramMarks(f, g.histogram);
    if (!marks)
        return false;
    const auto lo = static_cast<uint64_t>(std::llround(*g.fastest));
    const auto hi = static_cast<uint64_t>(std::llround(*g.slowest));
    std::optional<double> okMean;
    if (failedCount == 0 && g.average && *g.average >= *g.fastest && *g.average <= *g.slowest)
        okMean = *g.average;
    s.latency = approximateHistogram(okCount, lo, hi, okMean, *points, *marks);
    return true;
}

/// The approximate run from ghz's summary figures, without a detail for every call: its histograms rebuilt, and
/// labelled approximate.
bool runFromSummary(Fields &f, const GhzReport &g, const StatusCounts &statuses, RunRecord &run)
{
    RunSnapshot &s = run.snapshot;
    s.statusCounts = statuses;
    const uint64_t okCount = statuses[CallStatus::Ok];
    const uint64_t failedCount = *g.count - okCount;
    if (okCount > 0 && !approximateOkLatency(f, g, okCount, failedCount, s))
        return false;
    if (failedCount > 0) {
        // ghz keeps no latencies of failed calls; give them all the one latency that keeps ghz's average.
        double value = s.latency.isEmpty() ? 0.0 : s.latency.mean();
        if (g.average) {
            const double okSum = s.latency.mean() * static_cast<double>(okCount);
            value = std::clamp((*g.average * static_cast<double>(*g.count) - okSum) / static_cast<double>(failedCount),
                0.0, kTwoTo53); // a made-up average must not make up a latency past what a report holds
        }
        s.errorLatency = constantHistogram(static_cast<uint64_t>(std::llround(value)), failedCount);
    }
    if (*g.count > 0) {
        run.origin += g.details && !g.details->isEmpty()
            ? QStringLiteral(" (approximate: details cover %1 of %2 calls)").arg(g.details->size()).arg(*g.count)
            : QStringLiteral(" (approximate: no details)");
        if (!run.labels.contains(u"approximate"))
            run.labels << QStringLiteral("approximate");
    }
    return true;
}

} // namespace

std::optional<RunRecord> runFromGhzJson(const QJsonObject &json, const QString &origin, QString *error)
{
    Fields f(error);
    const GhzReport g = readReport(f, json);
    if (f.failed())
        return std::nullopt;

    RunRecord run;
    run.status = QString::fromUtf16(RunStatus::Imported);
    run.origin = origin;
    run.name = g.name.value_or(QString());
    run.transport = QStringLiteral("grpc");
    run.codec = QStringLiteral("protobuf");
    std::optional<qint64> endNs;
    if (g.date) {
        QString why;
        endNs = parseRfc3339(*g.date, &why);
        if (!endNs) {
            f.fail(QStringLiteral("date"), why);
            return std::nullopt;
        }
    }
    RunSnapshot &s = run.snapshot;
    s.state = RunState::Finished;
    s.elapsed = std::chrono::nanoseconds(static_cast<qint64>(std::llround(*g.total)));
    if (g.options)
        readOptions(f, *g.options, run);
    if (g.tags)
        readTags(f, *g.tags, run);

    // Errors by message, and the statuses they imply when the report has no statusCodeDistribution.
    StatusCounts errorStatuses {};
    uint64_t errorTotal = 0;
    if (g.errorDist && !readErrorDistribution(f, *g.errorDist, s, errorStatuses, errorTotal))
        return std::nullopt;
    const std::optional<StatusCounts> statuses = callStatuses(f, g, errorStatuses, errorTotal);
    if (!statuses)
        return std::nullopt;

    const bool exact = g.details && static_cast<uint64_t>(g.details->size()) == *g.count && *g.count > 0;
    if (exact) {
        if (!runFromDetails(f, g, errorTotal, run, endNs))
            return std::nullopt;
    } else if (!runFromSummary(f, g, *statuses, run)) {
        return std::nullopt;
    }
    if (!endNs)
        endNs = QDateTime::currentMSecsSinceEpoch() * 1000000;
    run.endedAt = QDateTime::fromMSecsSinceEpoch(*endNs / 1000000, Qt::UTC);
    qint64 startNs = 0;
    if (__builtin_sub_overflow(*endNs, s.elapsed.count(), &startNs)) {
        f.fail(QStringLiteral("total"), QStringLiteral("%1 ns before the date is before the year 1678").arg(*g.total));
        return std::nullopt;
    }
    run.startedAt = QDateTime::fromMSecsSinceEpoch(startNs / 1000000, Qt::UTC);
    return run;
}

} // namespace rpcscope
