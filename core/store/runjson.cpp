#include "runjson.h"
#include "secrets.h"

#include "load/segment.h"

#include <QJsonArray>

#include <cmath>
#include <cstdlib>
#include <limits>

namespace rpcscope {

namespace {

using Wide = LatencyHistogram::Wide;

QString wideToString(Wide value)
{
    if (value == 0)
        return QStringLiteral("0");
    QString digits;
    while (value > 0) {
        digits.prepend(QChar(u'0' + static_cast<int>(value % 10)));
        value /= 10;
    }
    return digits;
}

std::optional<Wide> wideFromString(const QString &text)
{
    if (text.isEmpty() || text.size() > 39)
        return std::nullopt;
    Wide value = 0;
    for (const QChar c : text) {
        if (c < u'0' || c > u'9')
            return std::nullopt;
        const Wide next = value * 10 + static_cast<Wide>(c.unicode() - u'0');
        if (next / 10 != value)
            return std::nullopt;
        value = next;
    }
    return value;
}

/// Reads fields of one JSON object, remembering the first problem with the field's path.
class Reader {
public:
    Reader(QJsonObject object, QString where, QString *error)
        : m_object(std::move(object)), m_where(std::move(where)), m_error(error)
    {
    }

    bool ok() const { return !m_failed; }
    QString path(const QString &key) const { return m_where.isEmpty() ? key : m_where + u'.' + key; }
    bool fail(const QString &key, const QString &message)
    {
        if (!m_failed && m_error)
            *m_error = path(key) + QStringLiteral(": ") + message;
        m_failed = true;
        return false;
    }

    /// Non-negative whole number (JSON numbers are doubles: exact up to 2^53).
    uint64_t count(const QString &key, bool required = false)
    {
        const QJsonValue v = m_object.value(key);
        if (v.isUndefined()) {
            if (required)
                fail(key, QStringLiteral("missing"));
            return 0;
        }
        const double d = v.toDouble(-1);
        if (!v.isDouble() || d < 0 || d != std::floor(d) || d > 9007199254740992.0) {
            fail(key, QStringLiteral("expected a whole number >= 0"));
            return 0;
        }
        return static_cast<uint64_t>(d);
    }
    double number(const QString &key)
    {
        const QJsonValue v = m_object.value(key);
        if (v.isUndefined())
            return 0;
        if (!v.isDouble()) {
            fail(key, QStringLiteral("expected a number"));
            return 0;
        }
        return v.toDouble();
    }
    bool boolean(const QString &key)
    {
        const QJsonValue v = m_object.value(key);
        if (!v.isUndefined() && !v.isBool())
            fail(key, QStringLiteral("expected true or false"));
        return v.toBool();
    }
    QString string(const QString &key, bool required = false)
    {
        const QJsonValue v = m_object.value(key);
        if (v.isUndefined()) {
            if (required)
                fail(key, QStringLiteral("missing"));
            return {};
        }
        if (!v.isString())
            fail(key, QStringLiteral("expected a string"));
        return v.toString();
    }
    QJsonObject object(const QString &key, bool required = false)
    {
        const QJsonValue v = m_object.value(key);
        if (v.isUndefined()) {
            if (required)
                fail(key, QStringLiteral("missing"));
            return {};
        }
        if (!v.isObject())
            fail(key, QStringLiteral("expected an object"));
        return v.toObject();
    }
    QJsonArray array(const QString &key)
    {
        const QJsonValue v = m_object.value(key);
        if (!v.isUndefined() && !v.isArray())
            fail(key, QStringLiteral("expected an array"));
        return v.toArray();
    }
    QDateTime time(const QString &key)
    {
        const QString text = string(key);
        if (text.isEmpty())
            return {};
        QDateTime t = QDateTime::fromString(text, Qt::ISODateWithMs);
        if (!t.isValid()) {
            fail(key, QStringLiteral("\"%1\" is not an ISO 8601 time").arg(text));
            return {};
        }
        // Exports count time in nanoseconds since 1970 in 64 bits (ghz's JSON does): years 1678 to 2261.
        constexpr qint64 kMaxMs = std::numeric_limits<qint64>::max() / 1000000 - 1000;
        if (std::abs(t.toMSecsSinceEpoch()) > kMaxMs) {
            fail(key, QStringLiteral("%1 is out of range (years 1678 to 2261)").arg(text));
            return {};
        }
        return t.toUTC();
    }
    void take(const QString &key, const std::function<bool(const QJsonObject &, const QString &, QString *)> &read)
    {
        if (!m_object.contains(key) || m_failed)
            return;
        QString why;
        if (!read(object(key), path(key), &why)) {
            if (m_error)
                *m_error = why;
            m_failed = true;
        }
    }

private:
    QJsonObject m_object;
    QString m_where;
    QString *m_error;
    bool m_failed = false;
};

QString timeText(const QDateTime &t)
{
    return t.isValid() ? t.toUTC().toString(Qt::ISODateWithMs) : QString();
}

std::optional<RunState> parseRunState(const QString &name)
{
    for (RunState s :
        { RunState::Idle, RunState::WarmingUp, RunState::Running, RunState::Finished, RunState::Stopped }) {
        if (runStateName(s) == name)
            return s;
    }
    return std::nullopt;
}

int statusFromName(const QString &name)
{
    for (int i = 0; i < CallStatus::SlotCount; ++i) {
        if (callStatusName(i) == name)
            return i;
    }
    return -1;
}

} // namespace

/// Buckets as [[low_ns, count], ...]: each named by its lower bound, which fixes it.
QJsonArray bucketsToJson(const std::vector<std::pair<int, uint64_t>> &counts)
{
    QJsonArray buckets;
    for (const auto &[index, count] : counts)
        buckets.append(
            QJsonArray { static_cast<double>(LatencyHistogram::bucketLow(index)), static_cast<double>(count) });
    return buckets;
}

/// Reads what bucketsToJson() wrote, adding the counts up in @p total; std::nullopt (and @p r failed) when malformed.
std::optional<std::vector<std::pair<int, uint64_t>>> bucketsFromJson(
    Reader &r, const QString &field, const QJsonArray &buckets, uint64_t *total)
{
    std::vector<std::pair<int, uint64_t>> counts;
    *total = 0;
    for (qsizetype i = 0; i < buckets.size(); ++i) {
        const QString key = field + QStringLiteral("[%1]").arg(i);
        const QJsonArray pair = buckets.at(i).toArray();
        const double low = pair.at(0).toDouble(-1);
        const double n = pair.at(1).toDouble(-1);
        if (pair.size() != 2 || low < 0 || n < 1 || low != std::floor(low) || n != std::floor(n) || low > 9.2e18
            || n > 9007199254740992.0)
            return r.fail(key, QStringLiteral("expected [low_ns, count]")), std::nullopt;
        const int index = LatencyHistogram::bucketIndex(static_cast<uint64_t>(low));
        if (LatencyHistogram::bucketLow(index) != static_cast<uint64_t>(low))
            return r.fail(key, QStringLiteral("%1 ns is not the lower bound of a bucket").arg(low)), std::nullopt;
        if (*total + static_cast<uint64_t>(n) > (uint64_t(1) << 53))
            return r.fail(key, QStringLiteral("the counts add up past 2^53")), std::nullopt;
        counts.emplace_back(index, static_cast<uint64_t>(n));
        *total += static_cast<uint64_t>(n);
    }
    return counts;
}

QJsonObject histogramToJson(const LatencyHistogram &h)
{
    const QJsonArray buckets = bucketsToJson(h.bucketCounts());
    return QJsonObject {
        { QStringLiteral("count"), static_cast<double>(h.count()) },
        { QStringLiteral("min_ns"), static_cast<double>(h.min()) },
        { QStringLiteral("max_ns"), static_cast<double>(h.max()) },
        { QStringLiteral("sum_ns"), wideToString(h.exactSum()) },
        { QStringLiteral("sum_squares_ns2"), wideToString(h.exactSumOfSquares()) },
        { QStringLiteral("buckets"), buckets },
    };
}

std::optional<LatencyHistogram> histogramFromJson(const QJsonObject &json, const QString &where, QString *error)
{
    Reader r(json, where, error);
    const uint64_t count = r.count(QStringLiteral("count"));
    const uint64_t min = r.count(QStringLiteral("min_ns"));
    const uint64_t max = r.count(QStringLiteral("max_ns"));
    const auto sum = wideFromString(r.string(QStringLiteral("sum_ns")));
    const auto squares = wideFromString(r.string(QStringLiteral("sum_squares_ns2")));
    const QJsonArray buckets = r.array(QStringLiteral("buckets"));
    if (!r.ok())
        return std::nullopt;
    if (!sum)
        return r.fail(QStringLiteral("sum_ns"), QStringLiteral("expected a decimal string")), std::nullopt;
    if (!squares)
        return r.fail(QStringLiteral("sum_squares_ns2"), QStringLiteral("expected a decimal string")), std::nullopt;
    uint64_t total = 0;
    const auto counts = bucketsFromJson(r, QStringLiteral("buckets"), buckets, &total);
    if (!counts)
        return std::nullopt;
    if (total != count)
        return r.fail(QStringLiteral("count"), QStringLiteral("%1, but the buckets hold %2").arg(count).arg(total)),
               std::nullopt;
    LatencyHistogram h;
    if (!LatencyHistogram::restore(*counts, min, max, *sum, *squares, &h))
        return r.fail(QStringLiteral("min_ns"), QStringLiteral("min/max do not match the buckets")), std::nullopt;
    return h;
}

QJsonObject intervalToJson(const IntervalPoint &p)
{
    QJsonObject o {
        { QStringLiteral("end_s"), p.endSeconds },
        { QStringLiteral("seconds"), p.seconds },
        { QStringLiteral("calls"), static_cast<double>(p.calls) },
        { QStringLiteral("errors"), static_cast<double>(p.errors) },
        { QStringLiteral("p50_ns"), static_cast<double>(p.p50) },
        { QStringLiteral("p90_ns"), static_cast<double>(p.p90) },
        { QStringLiteral("p99_ns"), static_cast<double>(p.p99) },
        { QStringLiteral("concurrency"), p.concurrency },
    };
    if (p.messages) { // streams only, so unary runs' documents stay as they were
        o.insert(QStringLiteral("messages"), static_cast<double>(p.messages));
        o.insert(QStringLiteral("message_p50_ns"), static_cast<double>(p.messageP50));
        o.insert(QStringLiteral("message_p90_ns"), static_cast<double>(p.messageP90));
        o.insert(QStringLiteral("message_p99_ns"), static_cast<double>(p.messageP99));
    }
    if (!p.okBuckets.empty()) { // split runs only
        o.insert(QStringLiteral("ok_buckets"), bucketsToJson(p.okBuckets));
        o.insert(QStringLiteral("ok_min_ns"), static_cast<double>(p.okMinNs));
        o.insert(QStringLiteral("ok_max_ns"), static_cast<double>(p.okMaxNs));
    }
    return o;
}

std::optional<IntervalPoint> intervalFromJson(const QJsonObject &json, const QString &where, QString *error)
{
    Reader r(json, where, error);
    IntervalPoint p;
    p.endSeconds = r.number(QStringLiteral("end_s"));
    p.seconds = r.number(QStringLiteral("seconds"));
    p.calls = r.count(QStringLiteral("calls"));
    p.errors = r.count(QStringLiteral("errors"));
    p.p50 = r.count(QStringLiteral("p50_ns"));
    p.p90 = r.count(QStringLiteral("p90_ns"));
    p.p99 = r.count(QStringLiteral("p99_ns"));
    p.concurrency = static_cast<int>(r.count(QStringLiteral("concurrency")));
    p.messages = r.count(QStringLiteral("messages"));
    p.messageP50 = r.count(QStringLiteral("message_p50_ns"));
    p.messageP90 = r.count(QStringLiteral("message_p90_ns"));
    p.messageP99 = r.count(QStringLiteral("message_p99_ns"));
    const QJsonArray okBuckets = r.array(QStringLiteral("ok_buckets"));
    if (!okBuckets.isEmpty() && r.ok()) {
        uint64_t total = 0;
        const auto counts = bucketsFromJson(r, QStringLiteral("ok_buckets"), okBuckets, &total);
        if (!counts)
            return std::nullopt;
        p.okMinNs = r.count(QStringLiteral("ok_min_ns"), true);
        p.okMaxNs = r.count(QStringLiteral("ok_max_ns"), true);
        LatencyHistogram check;
        if (r.ok() && !LatencyHistogram::restore(*counts, p.okMinNs, p.okMaxNs, 0, 0, &check))
            r.fail(QStringLiteral("ok_min_ns"), QStringLiteral("min/max do not match the buckets"));
        else if (r.ok() && total > p.calls)
            r.fail(QStringLiteral("ok_buckets"),
                QStringLiteral("%1 latencies in an interval of %2 calls").arg(total).arg(p.calls));
        p.okBuckets = *counts;
    }
    if (!r.ok())
        return std::nullopt;
    return p;
}

QJsonObject snapshotToJson(const RunSnapshot &s, bool withTimeline)
{
    QJsonObject o {
        { QStringLiteral("state"), runStateName(s.state) },
        { QStringLiteral("latency"), histogramToJson(s.latency) },
        { QStringLiteral("error_latency"), histogramToJson(s.errorLatency) },
        { QStringLiteral("open_loop"), s.openLoop },
        { QStringLiteral("client_cpu_s"), s.clientCpuSeconds },
        { QStringLiteral("client_peak_rss_bytes"), static_cast<double>(s.clientPeakRssBytes) },
        { QStringLiteral("has_server_stats"), s.hasServerStats },
        { QStringLiteral("server_cpu_s"), s.serverCpuSeconds },
        { QStringLiteral("server_peak_rss_bytes"), static_cast<double>(s.serverPeakRssBytes) },
        { QStringLiteral("warmup_calls"), static_cast<double>(s.warmupCalls) },
        { QStringLiteral("bytes_sent"), static_cast<double>(s.bytesSent) },
        { QStringLiteral("bytes_received"), static_cast<double>(s.bytesReceived) },
        { QStringLiteral("elapsed_ns"), static_cast<double>(s.elapsed.count()) },
        { QStringLiteral("planned_calls"), static_cast<double>(s.plannedCalls) },
        { QStringLiteral("planned_duration_ns"), static_cast<double>(s.plannedDuration.count()) },
    };
    if (s.timedStartUnixUs > 0)
        o.insert(QStringLiteral("timed_start_unix_us"), static_cast<double>(s.timedStartUnixUs));
    if (s.serverNotifications)
        o.insert(QStringLiteral("server_notifications"), static_cast<double>(s.serverNotifications));
    if (s.repliesChecked)
        o.insert(QStringLiteral("replies_checked"), static_cast<double>(s.repliesChecked));
    if (!s.unexpectedReplies.empty()) {
        QJsonArray kept;
        for (const UnexpectedReply &u : s.unexpectedReplies)
            kept.append(QJsonObject { { QStringLiteral("expectation"), u.expectation },
                { QStringLiteral("got"), u.got }, { QStringLiteral("reply"), QString::fromUtf8(u.reply) } });
        o.insert(QStringLiteral("unexpected_replies"), kept);
    }
    if (s.openLoop) {
        o.insert(QStringLiteral("service_latency"), histogramToJson(s.serviceLatency));
        o.insert(QStringLiteral("send_lag"), histogramToJson(s.sendLag));
        o.insert(QStringLiteral("calls_sent"), static_cast<double>(s.callsSent));
        o.insert(QStringLiteral("late_sends"), static_cast<double>(s.lateSends));
        o.insert(QStringLiteral("intended_rate"), s.intendedRate);
        o.insert(QStringLiteral("intended_calls"), s.intendedCalls);
    }
    if (s.hasStreams()) {
        o.insert(QStringLiteral("messages_sent"), static_cast<double>(s.messagesSent));
        o.insert(QStringLiteral("messages_received"), static_cast<double>(s.messagesReceived));
        o.insert(QStringLiteral("message_latency"), histogramToJson(s.messageLatency));
        if (!s.firstMessageLatency.isEmpty())
            o.insert(QStringLiteral("first_message_latency"), histogramToJson(s.firstMessageLatency));
    }
    QJsonObject statuses;
    for (int i = 0; i < CallStatus::SlotCount; ++i) {
        if (s.statusCounts[i])
            statuses.insert(callStatusName(i), static_cast<double>(s.statusCounts[i]));
    }
    o.insert(QStringLiteral("status_counts"), statuses);
    if (s.serverCpuInTicks)
        o.insert(QStringLiteral("server_cpu_in_ticks"), true);
    if (!s.expectedStatuses.onlyOk())
        o.insert(QStringLiteral("expected_statuses"), QJsonArray::fromStringList(s.expectedStatuses.names()));
    QJsonArray errors;
    for (const ErrorSample &e : s.errors) {
        errors.append(QJsonObject { { QStringLiteral("status"), callStatusName(e.status) },
            { QStringLiteral("message"), e.message }, { QStringLiteral("count"), static_cast<double>(e.count) } });
    }
    o.insert(QStringLiteral("errors"), errors);
    if (!s.blocks.empty()) {
        QJsonArray blocks;
        for (const RunBlock &b : s.blocks) {
            QJsonObject block { { QStringLiteral("round"), b.round }, { QStringLiteral("process"), b.process },
                { QStringLiteral("elapsed_ns"), static_cast<double>(b.elapsed.count()) },
                { QStringLiteral("calls"), static_cast<double>(b.calls) },
                { QStringLiteral("failed"), static_cast<double>(b.failed) },
                { QStringLiteral("latency"), histogramToJson(b.latency) } };
            if (!b.messageLatency.isEmpty())
                block.insert(QStringLiteral("message_latency"), histogramToJson(b.messageLatency));
            if (b.serverCpuSeconds >= 0)
                block.insert(QStringLiteral("server_cpu_s"), b.serverCpuSeconds);
            if (b.clientCpuSeconds >= 0)
                block.insert(QStringLiteral("client_cpu_s"), b.clientCpuSeconds);
            blocks.append(block);
        }
        o.insert(QStringLiteral("blocks"), blocks);
        o.insert(QStringLiteral("blocks_connection"), s.blocksConnection);
        if (s.blocksByClient)
            o.insert(QStringLiteral("blocks_by_client"), true);
        if (!s.abRunId.isEmpty())
            o.insert(QStringLiteral("ab_run"), s.abRunId);
    }
    if (withTimeline) {
        QJsonArray timeline;
        for (const IntervalPoint &p : s.timeline)
            timeline.append(intervalToJson(p));
        o.insert(QStringLiteral("timeline"), timeline);
    }
    return o;
}

std::optional<RunSnapshot> snapshotFromJson(const QJsonObject &json, const QString &where, QString *error)
{
    Reader r(json, where, error);
    RunSnapshot s;
    const QString state = r.string(QStringLiteral("state"));
    if (const auto parsed = parseRunState(state))
        s.state = *parsed;
    else if (!state.isEmpty())
        r.fail(QStringLiteral("state"), QStringLiteral("\"%1\" is not a run state").arg(state));
    auto histogram = [&r](const QString &key, LatencyHistogram *into) {
        r.take(key, [into](const QJsonObject &o, const QString &path, QString *why) {
            const auto h = histogramFromJson(o, path, why);
            if (h)
                *into = *h;
            return h.has_value();
        });
    };
    histogram(QStringLiteral("latency"), &s.latency);
    histogram(QStringLiteral("error_latency"), &s.errorLatency);
    histogram(QStringLiteral("service_latency"), &s.serviceLatency);
    histogram(QStringLiteral("send_lag"), &s.sendLag);
    histogram(QStringLiteral("message_latency"), &s.messageLatency);
    histogram(QStringLiteral("first_message_latency"), &s.firstMessageLatency);
    s.messagesSent = r.count(QStringLiteral("messages_sent"));
    s.messagesReceived = r.count(QStringLiteral("messages_received"));
    s.openLoop = r.boolean(QStringLiteral("open_loop"));
    s.callsSent = r.count(QStringLiteral("calls_sent"));
    s.lateSends = r.count(QStringLiteral("late_sends"));
    s.intendedRate = r.number(QStringLiteral("intended_rate"));
    s.intendedCalls = r.number(QStringLiteral("intended_calls"));
    s.clientCpuSeconds = r.number(QStringLiteral("client_cpu_s"));
    s.clientPeakRssBytes = r.count(QStringLiteral("client_peak_rss_bytes"));
    s.hasServerStats = r.boolean(QStringLiteral("has_server_stats"));
    s.serverCpuInTicks = r.boolean(QStringLiteral("server_cpu_in_ticks"));
    s.serverCpuSeconds = r.number(QStringLiteral("server_cpu_s"));
    s.serverPeakRssBytes = r.count(QStringLiteral("server_peak_rss_bytes"));
    s.warmupCalls = r.count(QStringLiteral("warmup_calls"));
    s.bytesSent = r.count(QStringLiteral("bytes_sent"));
    s.bytesReceived = r.count(QStringLiteral("bytes_received"));
    s.serverNotifications = r.count(QStringLiteral("server_notifications"));
    s.repliesChecked = r.count(QStringLiteral("replies_checked"));
    const QJsonArray unexpected = r.array(QStringLiteral("unexpected_replies"));
    if (unexpected.size() > qsizetype(kKeptUnexpectedReplies))
        return r.fail(QStringLiteral("unexpected_replies"),
                   QStringLiteral("%1 entries; a run keeps at most %2")
                       .arg(unexpected.size())
                       .arg(kKeptUnexpectedReplies)),
               std::nullopt;
    for (qsizetype i = 0; i < unexpected.size() && r.ok(); ++i) {
        Reader u(unexpected.at(i).toObject(), r.path(QStringLiteral("unexpected_replies[%1]").arg(i)), error);
        UnexpectedReply kept;
        kept.expectation = u.string(QStringLiteral("expectation"), true);
        kept.got = u.string(QStringLiteral("got"));
        kept.reply = u.string(QStringLiteral("reply")).toUtf8();
        if (!u.ok())
            return std::nullopt;
        if (kept.reply.size() > kUnexpectedReplyBytes + 64 || kept.got.size() > kUnexpectedReplyBytes
            || kept.expectation.size() > kUnexpectedReplyBytes)
            return u.fail(QStringLiteral("reply"), QStringLiteral("longer than a run keeps (4 KiB)")), std::nullopt;
        s.unexpectedReplies.push_back(kept);
    }
    s.elapsed = std::chrono::nanoseconds(r.count(QStringLiteral("elapsed_ns")));
    s.plannedCalls = r.count(QStringLiteral("planned_calls"));
    s.timedStartUnixUs = static_cast<int64_t>(r.count(QStringLiteral("timed_start_unix_us")));
    s.plannedDuration = std::chrono::nanoseconds(r.count(QStringLiteral("planned_duration_ns")));
    const QJsonObject statuses = r.object(QStringLiteral("status_counts"));
    for (auto it = statuses.begin(); it != statuses.end() && r.ok(); ++it) {
        const int status = statusFromName(it.key());
        const double n = it.value().toDouble(-1);
        if (status < 0)
            r.fail(QStringLiteral("status_counts.") + it.key(), QStringLiteral("not a status name"));
        else if (n < 0 || n != std::floor(n))
            r.fail(QStringLiteral("status_counts.") + it.key(), QStringLiteral("expected a whole number >= 0"));
        else if (n > 9007199254740992.0) // not a count JSON carries exactly (and past uint64 for 1e300)
            r.fail(QStringLiteral("status_counts.") + it.key(), QStringLiteral("%1 is out of range").arg(n));
        else
            s.statusCounts[status] = static_cast<uint64_t>(n);
    }
    QStringList expected;
    for (const auto &name : r.array(QStringLiteral("expected_statuses"))) {
        if (!name.isString()) {
            r.fail(QStringLiteral("expected_statuses"), QStringLiteral("expected an array of status names"));
            break;
        }
        expected << name.toString();
    }
    QString why;
    if (const auto statuses = ExpectedStatuses::parse(expected, &why))
        s.expectedStatuses = *statuses;
    else
        r.fail(QStringLiteral("expected_statuses"), why);
    const QJsonArray errors = r.array(QStringLiteral("errors"));
    for (qsizetype i = 0; i < errors.size() && r.ok(); ++i) {
        Reader e(errors.at(i).toObject(), r.path(QStringLiteral("errors[%1]").arg(i)), error);
        ErrorSample sample;
        sample.status = statusFromName(e.string(QStringLiteral("status")));
        sample.message = e.string(QStringLiteral("message"));
        sample.count = e.count(QStringLiteral("count"));
        if (!e.ok())
            return std::nullopt;
        if (sample.status < 0)
            return e.fail(QStringLiteral("status"), QStringLiteral("not a status name")), std::nullopt;
        s.errors.append(sample);
    }
    const QJsonArray blocks = r.array(QStringLiteral("blocks"));
    for (qsizetype i = 0; i < blocks.size() && r.ok(); ++i) {
        Reader b(blocks.at(i).toObject(), r.path(QStringLiteral("blocks[%1]").arg(i)), error);
        RunBlock block;
        block.round = static_cast<int>(b.count(QStringLiteral("round")));
        block.process = static_cast<int>(b.count(QStringLiteral("process")));
        block.elapsed = std::chrono::nanoseconds(b.count(QStringLiteral("elapsed_ns")));
        block.calls = b.count(QStringLiteral("calls"));
        block.failed = b.count(QStringLiteral("failed"));
        for (const auto &[key, into] : { std::pair(QStringLiteral("server_cpu_s"), &block.serverCpuSeconds),
                 std::pair(QStringLiteral("client_cpu_s"), &block.clientCpuSeconds) }) {
            if (blocks.at(i).toObject().contains(key))
                *into = b.number(key);
        }
        for (const auto &[key, into] : { std::pair(QStringLiteral("latency"), &block.latency),
                 std::pair(QStringLiteral("message_latency"), &block.messageLatency) }) {
            // An init-capture: clang 14 (the fuzz preset) cannot capture a structured binding by name.
            b.take(key, [into = into](const QJsonObject &o, const QString &path, QString *why) {
                const auto h = histogramFromJson(o, path, why);
                if (h)
                    *into = *h;
                return h.has_value();
            });
        }
        if (!b.ok())
            return std::nullopt;
        s.blocks.push_back(block);
    }
    s.blocksConnection = r.string(QStringLiteral("blocks_connection"));
    s.blocksByClient = r.boolean(QStringLiteral("blocks_by_client"));
    s.abRunId = r.string(QStringLiteral("ab_run"));
    const QJsonArray timeline = r.array(QStringLiteral("timeline"));
    for (qsizetype i = 0; i < timeline.size() && r.ok(); ++i) {
        const auto p
            = intervalFromJson(timeline.at(i).toObject(), r.path(QStringLiteral("timeline[%1]").arg(i)), error);
        if (!p)
            return std::nullopt;
        s.timeline.append(*p);
    }
    if (!r.ok())
        return std::nullopt;
    return s;
}

QString snapshotInconsistency(const RunSnapshot &s, const QString &where)
{
    auto at = [&where](const QString &field, const QString &message) -> QString { // not a QStringBuilder of temporaries
        return where + QLatin1Char('.') + field + QStringLiteral(": ") + message;
    };
    uint64_t counted = 0;
    for (uint64_t n : s.statusCounts) {
        if (n > (uint64_t(1) << 53) || counted + n < counted)
            return at(QStringLiteral("status_counts"), QStringLiteral("a count is out of range"));
        counted += n;
    }
    const uint64_t ok = s.latency.count();
    const uint64_t failed = s.errorLatency.count();
    if (s.callsOk() != ok && s.expectedStatuses.onlyOk())
        return at(QStringLiteral("status_counts.OK"),
            QStringLiteral("%1 OK calls, but the latency histogram holds %2").arg(s.callsOk()).arg(ok));
    if (s.callsOk() != ok)
        return at(QStringLiteral("status_counts"),
            QStringLiteral("%1 calls ended %2 (expected_statuses), but the latency histogram holds %3")
                .arg(s.callsOk())
                .arg(s.expectedStatuses.names().join(QStringLiteral(" or ")))
                .arg(ok));
    if (counted != ok + failed)
        return at(QStringLiteral("status_counts"),
            QStringLiteral("%1 calls, but the latency histograms hold %2 (%3 OK, %4 failed)")
                .arg(counted)
                .arg(ok + failed)
                .arg(ok)
                .arg(failed));
    const uint64_t unexpected = s.statusCounts[CallStatus::UnexpectedReply];
    if (s.repliesChecked > ok + unexpected)
        return at(QStringLiteral("replies_checked"),
            QStringLiteral("%1 replies checked, more than the %2 calls that had one")
                .arg(s.repliesChecked)
                .arg(ok + unexpected));
    if (unexpected > s.repliesChecked || s.unexpectedReplies.size() > unexpected)
        return at(QStringLiteral("unexpected_replies"),
            QStringLiteral("%1 kept and %2 counted, of %3 replies checked")
                .arg(s.unexpectedReplies.size())
                .arg(unexpected)
                .arg(s.repliesChecked));
    uint64_t errors = 0;
    for (const ErrorSample &e : s.errors)
        errors += e.count;
    if (errors > failed)
        return at(QStringLiteral("errors"),
            QStringLiteral("their counts add up to %1, more than the %2 failed calls").arg(errors).arg(failed));
    for (const auto &[field, value] : { std::pair(QStringLiteral("client_cpu_s"), s.clientCpuSeconds),
             std::pair(QStringLiteral("server_cpu_s"), s.serverCpuSeconds),
             std::pair(QStringLiteral("intended_rate"), s.intendedRate),
             std::pair(QStringLiteral("intended_calls"), s.intendedCalls) }) {
        if (!std::isfinite(value) || value < 0)
            return at(field, QStringLiteral("expected a number >= 0, got %1").arg(value));
    }
    for (size_t i = 0; i < s.blocks.size(); ++i) {
        const RunBlock &b = s.blocks[i];
        if (b.failed > b.calls || b.latency.count() > b.calls - b.failed)
            return at(QStringLiteral("blocks[%1]").arg(i),
                QStringLiteral("%1 calls, %2 failed and %3 OK latencies do not add up")
                    .arg(b.calls)
                    .arg(b.failed)
                    .arg(b.latency.count()));
        for (const auto &[field, value] : { std::pair(QStringLiteral("server_cpu_s"), b.serverCpuSeconds),
                 std::pair(QStringLiteral("client_cpu_s"), b.clientCpuSeconds) }) {
            // Absent is -1 (not measured); what a file gives must be a time.
            if (!std::isfinite(value) || (value < 0 && value != -1))
                return at(QStringLiteral("blocks[%1].%2").arg(i).arg(field),
                    QStringLiteral("expected a number >= 0, got %1").arg(value));
        }
    }
    for (qsizetype i = 0; i < s.timeline.size(); ++i) {
        if (s.timeline[i].errors > s.timeline[i].calls)
            return at(QStringLiteral("timeline[%1]").arg(i), QStringLiteral("more errors than calls"));
    }
    return {};
}

QJsonObject summaryToJson(const RunSnapshot &s)
{
    QJsonObject o {
        { QStringLiteral("count"), static_cast<double>(s.callsCompleted()) },
        { QStringLiteral("ok"), static_cast<double>(s.callsOk()) },
        { QStringLiteral("failed"), static_cast<double>(s.callsFailed()) },
        { QStringLiteral("elapsed_s"), std::chrono::duration<double>(s.elapsed).count() },
        { QStringLiteral("rps"), s.requestsPerSecond() },
        { QStringLiteral("mean_ns"), s.latency.mean() },
        { QStringLiteral("stddev_ns"), s.latency.stddev() },
        { QStringLiteral("min_ns"), static_cast<double>(s.latency.min()) },
        { QStringLiteral("max_ns"), static_cast<double>(s.latency.max()) },
        { QStringLiteral("client_cpu_per_call_us"), s.clientCpuPerCallUs() },
    };
    static const std::pair<const char *, double> percentiles[] = { { "p50_ns", 50 }, { "p75_ns", 75 }, { "p90_ns", 90 },
        { "p95_ns", 95 }, { "p99_ns", 99 }, { "p99_9_ns", 99.9 }, { "p99_99_ns", 99.99 } };
    for (const auto &[key, p] : percentiles)
        o.insert(QLatin1String(key), static_cast<double>(s.latency.percentile(p)));
    if (s.hasServerStats)
        o.insert(QStringLiteral("server_cpu_per_call_us"), s.serverCpuPerCallUs());
    return o;
}

namespace {
QString clockName(WorkerRecord::Clock clock)
{
    switch (clock) {
    case WorkerRecord::Clock::Synchronized:
        return QStringLiteral("synchronized");
    case WorkerRecord::Clock::Unsynchronized:
        return QStringLiteral("unsynchronized");
    case WorkerRecord::Clock::Unknown:
        break;
    }
    return QStringLiteral("unknown");
}
} // namespace

QJsonObject splitToJson(const SplitRecord &split)
{
    QJsonArray workers;
    for (const WorkerRecord &w : split.workers) {
        QJsonObject o { { QStringLiteral("index"), w.index }, { QStringLiteral("host"), w.host },
            { QStringLiteral("timed_start_unix_us"), static_cast<double>(w.timedStartUnixUs) },
            { QStringLiteral("clock"), clockName(w.clock) }, { QStringLiteral("calls"), static_cast<double>(w.calls) },
            { QStringLiteral("failed"), static_cast<double>(w.failed) }, { QStringLiteral("seconds"), w.seconds },
            { QStringLiteral("p50_ns"), static_cast<double>(w.p50Ns) },
            { QStringLiteral("p99_ns"), static_cast<double>(w.p99Ns) },
            { QStringLiteral("client_cpu_s"), w.clientCpuSeconds },
            { QStringLiteral("client_peak_rss_bytes"), static_cast<double>(w.clientPeakRssBytes) } };
        if (w.clockErrorUs >= 0)
            o.insert(QStringLiteral("clock_error_us"), w.clockErrorUs);
        if (!w.environment.isEmpty())
            o.insert(QStringLiteral("environment"), w.environment);
        workers.append(o);
    }
    QJsonObject o { { QStringLiteral("count"), split.count }, { QStringLiteral("plan_id"), split.planId },
        { QStringLiteral("workers"), workers } };
    if (!split.startAt.isEmpty())
        o.insert(QStringLiteral("start_at"), split.startAt);
    if (split.partial) {
        o.insert(QStringLiteral("partial"), true);
        QJsonArray missing;
        for (int index : split.missing)
            missing.append(index);
        o.insert(QStringLiteral("missing"), missing);
    }
    return o;
}

std::optional<SplitRecord> splitFromJson(const QJsonObject &json, const QString &where, QString *error)
{
    Reader r(json, where, error);
    SplitRecord split;
    const uint64_t count = r.count(QStringLiteral("count"), true);
    if (r.ok() && (count < 1 || count > uint64_t(Segment::kMaxCount)))
        r.fail(QStringLiteral("count"), QStringLiteral("expected 1 to %1 workers").arg(Segment::kMaxCount));
    split.count = static_cast<int>(count);
    split.planId = r.string(QStringLiteral("plan_id"));
    split.startAt = r.string(QStringLiteral("start_at"));
    split.partial = r.boolean(QStringLiteral("partial"));
    for (const auto &v : r.array(QStringLiteral("missing"))) {
        const double index = v.toDouble(-1);
        if (!r.ok() || index < 0 || index >= split.count || index != std::floor(index)) {
            r.fail(QStringLiteral("missing"), QStringLiteral("expected segment numbers 0 to %1").arg(split.count - 1));
            break;
        }
        split.missing << static_cast<int>(index);
    }
    const QJsonArray workers = r.array(QStringLiteral("workers"));
    for (qsizetype i = 0; i < workers.size() && r.ok(); ++i) {
        Reader w(workers.at(i).toObject(), r.path(QStringLiteral("workers[%1]").arg(i)), error);
        WorkerRecord worker;
        const uint64_t index = w.count(QStringLiteral("index"), true);
        if (w.ok() && index >= count)
            return w.fail(QStringLiteral("index"), QStringLiteral("%1 is not a segment of %2").arg(index).arg(count)),
                   std::nullopt;
        worker.index = static_cast<int>(index);
        worker.host = w.string(QStringLiteral("host"));
        worker.timedStartUnixUs = static_cast<int64_t>(w.count(QStringLiteral("timed_start_unix_us")));
        const QString clock = w.string(QStringLiteral("clock"));
        worker.clock = clock == u"synchronized" ? WorkerRecord::Clock::Synchronized
            : clock == u"unsynchronized"        ? WorkerRecord::Clock::Unsynchronized
                                                : WorkerRecord::Clock::Unknown;
        worker.clockErrorUs = workers.at(i).toObject().contains(QStringLiteral("clock_error_us"))
            ? w.number(QStringLiteral("clock_error_us"))
            : -1; // unknown is not zero
        worker.calls = w.count(QStringLiteral("calls"));
        worker.failed = w.count(QStringLiteral("failed"));
        worker.seconds = w.number(QStringLiteral("seconds"));
        worker.p50Ns = w.count(QStringLiteral("p50_ns"));
        worker.p99Ns = w.count(QStringLiteral("p99_ns"));
        worker.clientCpuSeconds = w.number(QStringLiteral("client_cpu_s"));
        worker.clientPeakRssBytes = w.count(QStringLiteral("client_peak_rss_bytes"));
        worker.environment = w.object(QStringLiteral("environment"));
        if (!w.ok())
            return std::nullopt;
        if (worker.failed > worker.calls || !std::isfinite(worker.seconds) || worker.seconds < 0
            || !std::isfinite(worker.clientCpuSeconds) || worker.clientCpuSeconds < 0
            || !std::isfinite(worker.clockErrorUs))
            return w.fail(QStringLiteral("calls"), QStringLiteral("figures out of range")), std::nullopt;
        split.workers << worker;
    }
    if (!r.ok())
        return std::nullopt;
    return split;
}

QJsonObject runToJson(const RunRecord &given)
{
    RunRecord run = given; // a report never holds a secret in clear
    redactSecrets(&run);
    QJsonObject o {
        { QStringLiteral("format"), QStringLiteral("rpcscope-run") },
        { QStringLiteral("schema_version"), kRunJsonSchemaVersion },
        { QStringLiteral("name"), run.name },
        { QStringLiteral("labels"), QJsonArray::fromStringList(run.labels) },
        { QStringLiteral("status"), run.status },
        { QStringLiteral("started_at"), timeText(run.startedAt) },
        { QStringLiteral("ended_at"), timeText(run.endedAt) },
        { QStringLiteral("method"), run.method },
        { QStringLiteral("transport"), run.transport },
        { QStringLiteral("codec"), run.codec },
        { QStringLiteral("target"), run.target },
        { QStringLiteral("origin"), run.origin },
        { QStringLiteral("scenario"), run.scenario },
        { QStringLiteral("environment"), run.environment },
        { QStringLiteral("server"), run.server },
        { QStringLiteral("summary"), summaryToJson(run.snapshot) },
        { QStringLiteral("snapshot"), snapshotToJson(run.snapshot) },
    };
    if (run.split.isSplit())
        o.insert(QStringLiteral("split"), splitToJson(run.split));
    if (!run.rawSamples.empty()) {
        QJsonArray raw;
        for (const RawSample &sample : run.rawSamples)
            raw.append(QJsonArray { static_cast<double>(sample.sentNs), static_cast<double>(sample.latencyUs),
                callStatusName(static_cast<int>(sample.status)) });
        o.insert(QStringLiteral("raw_samples"), raw);
    }
    if (run.serverProfile)
        o.insert(QStringLiteral("server_profile"), profileToJson(*run.serverProfile));
    if (run.clientProfile)
        o.insert(QStringLiteral("client_profile"), profileToJson(*run.clientProfile));
    return o;
}

std::optional<RunRecord> runFromJson(const QJsonObject &json, QString *error)
{
    Reader r(json, QString(), error);
    if (r.string(QStringLiteral("format"), true) != u"rpcscope-run") {
        if (r.ok())
            r.fail(QStringLiteral("format"), QStringLiteral("expected \"rpcscope-run\""));
        return std::nullopt;
    }
    const uint64_t version = r.count(QStringLiteral("schema_version"), true);
    if (r.ok() && (version < 1 || version > kRunJsonSchemaVersion))
        r.fail(QStringLiteral("schema_version"),
            QStringLiteral("%1 is not supported (this rpcscope reads 1..%2)").arg(version).arg(kRunJsonSchemaVersion));
    RunRecord run;
    run.name = r.string(QStringLiteral("name"));
    for (const auto &label : r.array(QStringLiteral("labels")))
        run.labels << label.toString();
    run.status = r.string(QStringLiteral("status"));
    if (run.status.isEmpty())
        run.status = QString::fromUtf16(RunStatus::Finished);
    run.startedAt = r.time(QStringLiteral("started_at"));
    run.endedAt = r.time(QStringLiteral("ended_at"));
    run.method = r.string(QStringLiteral("method"));
    run.transport = r.string(QStringLiteral("transport"));
    run.codec = r.string(QStringLiteral("codec"));
    run.target = r.string(QStringLiteral("target"));
    run.origin = r.string(QStringLiteral("origin"));
    run.scenario = r.object(QStringLiteral("scenario"));
    run.environment = r.object(QStringLiteral("environment"));
    run.server = r.object(QStringLiteral("server"));
    if (!r.object(QStringLiteral("snapshot"), true).isEmpty() || r.ok()) {
        r.take(QStringLiteral("snapshot"), [&run](const QJsonObject &o, const QString &path, QString *why) {
            const auto s = snapshotFromJson(o, path, why);
            if (s)
                run.snapshot = *s;
            return s.has_value();
        });
    }
    r.take(QStringLiteral("split"), [&run](const QJsonObject &o, const QString &path, QString *why) {
        const auto split = splitFromJson(o, path, why);
        if (split)
            run.split = *split;
        return split.has_value();
    });
    for (const auto &[field, into] : { std::pair(QStringLiteral("server_profile"), &run.serverProfile),
             std::pair(QStringLiteral("client_profile"), &run.clientProfile) }) {
        r.take(field, [into = into](const QJsonObject &o, const QString &path, QString *why) {
            *into = profileFromJson(o, path, why);
            return into->has_value();
        });
    }
    const QJsonArray raw = r.array(QStringLiteral("raw_samples"));
    run.rawSamples.reserve(static_cast<size_t>(raw.size()));
    for (qsizetype i = 0; i < raw.size() && r.ok(); ++i) {
        const QJsonArray t = raw.at(i).toArray();
        const double sent = t.at(0).toDouble(-1);
        const double latency = t.at(1).toDouble(-1);
        const int status = statusFromName(t.at(2).toString());
        if (t.size() != 3 || sent < 0 || latency < 0 || latency > 4294967295.0 || status < 0)
            return r.fail(QStringLiteral("raw_samples[%1]").arg(i),
                       QStringLiteral("expected [sent_ns, latency_us, status]")),
                   std::nullopt;
        run.rawSamples.push_back(
            { static_cast<uint64_t>(sent), static_cast<uint32_t>(latency), static_cast<uint32_t>(status) });
    }
    if (!r.ok())
        return std::nullopt;
    return run;
}

} // namespace rpcscope
