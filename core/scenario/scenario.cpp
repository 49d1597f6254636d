#include "scenario.h"

#include "codec/codec.h"
#include "compare/checks.h"
#include "engine/expectations.h"
#include "transport/transports.h"
#include "util/inputfile.h"
#include "util/outputfile.h"
#include "util/printable.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace rpcscope {

namespace {

QJsonArray stringArray(const QStringList &list)
{
    QJsonArray array;
    for (const QString &s : list)
        array.append(s);
    return array;
}

QJsonObject scheduleJson(const ScheduleText &s)
{
    return QJsonObject { { QStringLiteral("kind"), s.kind }, { QStringLiteral("start"), s.start },
        { QStringLiteral("step"), s.step }, { QStringLiteral("end"), s.end },
        { QStringLiteral("step_duration"), s.stepDuration }, { QStringLiteral("max_duration"), s.maxDuration } };
}

/// Line and column (1-based) of a byte offset, for syntax errors.
QString position(const QByteArray &text, qsizetype offset)
{
    int line = 1;
    qsizetype lineStart = 0;
    for (qsizetype i = 0; i < std::min(offset, text.size()); ++i) {
        if (text[i] == '\n') {
            ++line;
            lineStart = i + 1;
        }
    }
    return QStringLiteral("line %1, column %2").arg(line).arg(offset - lineStart + 1);
}

/// Reads typed fields out of an object, remembering the first problem with its path.
class Reader {
public:
    Reader(QJsonObject object, QString path, QString *error)
        : m_object(std::move(object)), m_path(std::move(path)), m_error(error)
    {
    }

    bool ok() const { return m_ok; }
    QString where(const QString &key) const { return m_path.isEmpty() ? key : m_path + QLatin1Char('.') + key; }

    void fail(const QString &key, const QString &what)
    {
        if (m_ok && m_error)
            *m_error = where(key) + QStringLiteral(": ") + what;
        m_ok = false;
    }

    void string(const QString &key, QString *into)
    {
        const QJsonValue v = m_object.value(key);
        if (v.isUndefined() || v.isNull())
            return;
        if (!v.isString())
            return fail(key, QStringLiteral("expected a string"));
        *into = v.toString();
    }

    void boolean(const QString &key, bool *into)
    {
        const QJsonValue v = m_object.value(key);
        if (v.isUndefined() || v.isNull())
            return;
        if (!v.isBool())
            return fail(key, QStringLiteral("expected true or false"));
        *into = v.toBool();
    }

    template<typename T> void integer(const QString &key, T *into, double min, double max)
    {
        const QJsonValue v = m_object.value(key);
        if (v.isUndefined() || v.isNull())
            return;
        const double d = v.toDouble(-1e300);
        if (!v.isDouble() || d != std::floor(d) || d < min || d > max)
            return fail(
                key, QStringLiteral("expected a whole number from %1 to %2").arg(min, 0, 'f', 0).arg(max, 0, 'f', 0));
        *into = static_cast<T>(d);
    }

    void strings(const QString &key, QStringList *into)
    {
        const QJsonValue v = m_object.value(key);
        if (v.isUndefined() || v.isNull())
            return;
        if (!v.isArray())
            return fail(key, QStringLiteral("expected an array of strings"));
        QStringList list;
        const QJsonArray array = v.toArray();
        for (qsizetype i = 0; i < array.size(); ++i) {
            if (!array[i].isString())
                return fail(QStringLiteral("%1[%2]").arg(key).arg(i), QStringLiteral("expected a string"));
            list << array[i].toString();
        }
        *into = list;
    }

    std::optional<QJsonObject> object(const QString &key)
    {
        const QJsonValue v = m_object.value(key);
        if (v.isUndefined() || v.isNull())
            return std::nullopt;
        if (!v.isObject()) {
            fail(key, QStringLiteral("expected an object"));
            return std::nullopt;
        }
        return v.toObject();
    }

    /// Keys this reader does not know: a typo would otherwise be silently ignored.
    void rejectUnknown(const QStringList &known)
    {
        for (auto it = m_object.begin(); it != m_object.end(); ++it) {
            if (!known.contains(it.key()))
                return fail(
                    it.key(), QStringLiteral("unknown field (known: %1)").arg(known.join(QStringLiteral(", "))));
        }
    }

    std::optional<ScheduleText> schedule(const QString &key)
    {
        const std::optional<QJsonObject> o = object(key);
        if (!o)
            return std::nullopt;
        QString error;
        Reader r(*o, where(key), &error);
        ScheduleText s;
        r.rejectUnknown({ QStringLiteral("kind"), QStringLiteral("start"), QStringLiteral("step"),
            QStringLiteral("end"), QStringLiteral("step_duration"), QStringLiteral("max_duration") });
        r.string(QStringLiteral("kind"), &s.kind);
        r.string(QStringLiteral("start"), &s.start);
        r.string(QStringLiteral("step"), &s.step);
        r.string(QStringLiteral("end"), &s.end);
        r.string(QStringLiteral("step_duration"), &s.stepDuration);
        r.string(QStringLiteral("max_duration"), &s.maxDuration);
        if (r.ok() && s.kind != u"const" && s.kind != u"step" && s.kind != u"line")
            r.fail(QStringLiteral("kind"), QStringLiteral("\"%1\" is not const, step or line").arg(s.kind));
        if (!r.ok()) {
            if (m_ok && m_error)
                *m_error = error;
            m_ok = false;
            return std::nullopt;
        }
        return s;
    }

    Reader child(const QJsonObject &object, const QString &key) const { return { object, where(key), m_error }; }
    void adopt(const Reader &child) { m_ok = m_ok && child.ok(); }

private:
    QJsonObject m_object;
    QString m_path;
    QString *m_error;
    bool m_ok = true;
};

} // namespace

QString Scenario::planFingerprint() const
{
    Scenario plan = *this;
    plan.segment.clear();
    plan.startAt.clear();
    plan.exports.clear();
    plan.chart.clear();
    plan.chartSize.clear();
    plan.chartScale.clear();
    plan.rawSamples.clear();
    plan.saveRun = false;
    plan.db.clear();
    plan.labels.clear();
    plan.name.clear();
    plan.compareTo.clear();
    plan.compareThreshold.clear();
    plan.checks.clear();
    plan.failOnError = false;
    return QString::fromLatin1(QCryptographicHash::hash(plan.toJson(), QCryptographicHash::Sha256).toHex().left(16));
}

QByteArray Scenario::toJson() const
{
    QJsonObject schema { { QStringLiteral("protos"), stringArray(protos) },
        { QStringLiteral("import_paths"), stringArray(importPaths) },
        { QStringLiteral("protosets"), stringArray(protosets) } };
    QJsonObject meta;
    QJsonArray metadataArray;
    for (const auto &[key, value] : metadata)
        metadataArray.append(QJsonArray { key, value });
    QJsonObject load { { QStringLiteral("calls"), static_cast<double>(calls) },
        { QStringLiteral("concurrency"), concurrency }, { QStringLiteral("duration"), duration },
        { QStringLiteral("rate"), rate }, { QStringLiteral("warmup"), warmup }, { QStringLiteral("timeout"), timeout },
        { QStringLiteral("discard_response"), discardResponse }, { QStringLiteral("max_receive_size"), maxReceiveSize },
        { QStringLiteral("max_send_size"), maxSendSize } };
    if (!http2Window.isEmpty())
        load.insert(QStringLiteral("http2_window"), http2Window);
    if (connections >= 0)
        load.insert(QStringLiteral("connections"), connections);
    if (rateSchedule)
        load.insert(QStringLiteral("rate_schedule"), scheduleJson(*rateSchedule));
    if (concurrencySchedule)
        load.insert(QStringLiteral("concurrency_schedule"), scheduleJson(*concurrencySchedule));
    // Fields added after the first release are written only when set, so such documents still open in it.
    if (clientThreads > 0)
        load.insert(QStringLiteral("client_threads"), clientThreads);
    if (!interval.isEmpty())
        load.insert(QStringLiteral("interval"), interval);
    for (const auto &[key, value] : { std::pair(QStringLiteral("stream_call_count"), &streamCallCount),
             std::pair(QStringLiteral("stream_interval"), &streamInterval),
             std::pair(QStringLiteral("stream_call_duration"), &streamCallDuration) }) {
        if (!value->isEmpty())
            load.insert(key, *value);
    }
    if (streamPingPong)
        load.insert(QStringLiteral("stream_ping_pong"), true);
    if (!segment.isEmpty())
        load.insert(QStringLiteral("segment"), segment);
    if (!startAt.isEmpty())
        load.insert(QStringLiteral("start_at"), startAt);
    QJsonObject connection;
    if (security != u"auto")
        connection.insert(QStringLiteral("security"), security);
    for (const auto &[key, value] : { std::pair(QStringLiteral("cacert"), &caCert),
             std::pair(QStringLiteral("cert"), &clientCert), std::pair(QStringLiteral("key"), &clientKey),
             std::pair(QStringLiteral("cname"), &serverName), std::pair(QStringLiteral("authority"), &authority) }) {
        if (!value->isEmpty())
            connection.insert(key, *value);
    }
    if (skipVerify)
        connection.insert(QStringLiteral("skip_verify"), true);
    QJsonObject root { { QStringLiteral("rpcscope_scenario"), kFormatVersion }, { QStringLiteral("schema"), schema },
        { QStringLiteral("method"), method }, { QStringLiteral("transport"), transport },
        { QStringLiteral("codec"), codec }, { QStringLiteral("rpc_method"), rpcMethod },
        { QStringLiteral("msgpack_params"), msgpackParamsMap ? QStringLiteral("map") : QStringLiteral("positional") },
        { QStringLiteral("target"), target }, { QStringLiteral("request"), QString::fromUtf8(request) },
        { QStringLiteral("fills"), stringArray(fills) }, { QStringLiteral("metadata"), metadataArray },
        { QStringLiteral("load"), load } };
    if (!httpPath.isEmpty())
        root.insert(QStringLiteral("http_path"), httpPath);
    if (!connection.isEmpty())
        root.insert(QStringLiteral("connection"), connection);
    if (!rawSamples.isEmpty())
        root.insert(QStringLiteral("raw_samples"), rawSamples);
    if (!requestBinaryFile.isEmpty())
        root.insert(QStringLiteral("request_binary_file"), requestBinaryFile);
    if (!checks.isEmpty())
        root.insert(QStringLiteral("checks"), QJsonArray::fromStringList(checks));
    // Sections added later, each written only when it holds something.
    if (!requestFile.isEmpty())
        root.insert(QStringLiteral("request_file"), requestFile);
    if (failOnError)
        root.insert(QStringLiteral("fail_on_error"), true);
    auto section = [&root](const QString &name, std::initializer_list<std::pair<QString, QJsonValue>> fields) {
        QJsonObject object;
        for (const auto &[key, value] : fields) {
            const bool unset = (value.isString() && value.toString().isEmpty()) || (value.isBool() && !value.toBool())
                || (value.isArray() && value.toArray().isEmpty());
            if (!unset)
                object.insert(key, value);
        }
        if (!object.isEmpty())
            root.insert(name, object);
    };
    section(QStringLiteral("server_command"),
        { { QStringLiteral("ready"), readyPattern }, { QStringLiteral("ready_timeout"), readyTimeout } });
    section(QStringLiteral("pinning"),
        { { QStringLiteral("client_cpus"), clientCpus }, { QStringLiteral("server_cpus"), serverCpus } });
    section(QStringLiteral("profile"),
        { { QStringLiteral("server"), profileServer }, { QStringLiteral("client"), profileClient },
            // a profiler command is the user's own say-so, never a document's (it would run it)
            { QStringLiteral("profiler"),
                profiler == u"perf" || profiler == u"python" || profiler == u"auto" ? profiler : QString() },
            { QStringLiteral("period"), profilePeriod }, { QStringLiteral("call_graph"), profileCallGraph },
            { QStringLiteral("keep"), profileKeep } });
    QJsonArray exportList;
    for (const Export &e : exports) {
        QJsonObject entry { { QStringLiteral("format"), e.format }, { QStringLiteral("file"), e.file } };
        if (!e.chart.isEmpty())
            entry.insert(QStringLiteral("chart"), e.chart);
        exportList.append(entry);
    }
    section(QStringLiteral("output"),
        { { QStringLiteral("exports"), exportList }, { QStringLiteral("chart"), chart },
            { QStringLiteral("chart_size"), chartSize }, { QStringLiteral("chart_scale"), chartScale } });
    QJsonObject ab;
    if (!abBlock.isEmpty())
        ab.insert(QStringLiteral("block"), abBlock);
    if (abRestarts > 0)
        ab.insert(QStringLiteral("restarts"), abRestarts);
    if (!abConnection.isEmpty())
        ab.insert(QStringLiteral("connection"), abConnection);
    if (!abThreshold.isEmpty())
        ab.insert(QStringLiteral("threshold"), abThreshold);
    if (abUntilDecided)
        ab.insert(QStringLiteral("until_decided"), true);
    if (!abMaxDuration.isEmpty())
        ab.insert(QStringLiteral("max_duration"), abMaxDuration);
    if (!ab.isEmpty())
        root.insert(QStringLiteral("ab"), ab);
    section(QStringLiteral("expect"),
        { { QStringLiteral("replies"), QJsonArray::fromStringList(expect) }, { QStringLiteral("first"), expectFirst },
            { QStringLiteral("every"), expectEvery },
            { QStringLiteral("status"), QJsonArray::fromStringList(expectStatus) } });
    section(QStringLiteral("secrets"),
        { { QStringLiteral("redact"), QJsonArray::fromStringList(secretKeys) },
            { QStringLiteral("keep"), keepSecrets } });
    section(QStringLiteral("history"),
        { { QStringLiteral("save"), saveRun }, { QStringLiteral("db"), db },
            { QStringLiteral("labels"), QJsonArray::fromStringList(labels) }, { QStringLiteral("name"), name },
            { QStringLiteral("compare_to"), compareTo }, { QStringLiteral("compare_threshold"), compareThreshold } });
    return QJsonDocument(root).toJson(QJsonDocument::Indented);
}

namespace {

/// The document's top-level object; std::nullopt with @p error on a syntax error or a document that is no scenario.
std::optional<QJsonObject> scenarioObject(const QByteArray &json, QString *error)
{
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &parseError);
    if (parseError.error != QJsonParseError::NoError) {
        if (error)
            *error = position(json, parseError.offset) + QStringLiteral(": ") + parseError.errorString();
        return std::nullopt;
    }
    if (!doc.isObject()) {
        if (error)
            *error = QStringLiteral("not a scenario: expected a JSON object");
        return std::nullopt;
    }
    const QJsonObject root = doc.object();
    if (!root.contains(QStringLiteral("rpcscope_scenario"))) {
        if (error)
            *error = QStringLiteral("not a scenario: no \"rpcscope_scenario\" version field");
        return std::nullopt;
    }
    return root;
}

/// Reads the "schema" section: the protos, their import paths and the protosets.
void readSchema(Reader &r, Scenario &s)
{
    if (const auto schema = r.object(QStringLiteral("schema"))) {
        Reader sr = r.child(*schema, QStringLiteral("schema"));
        sr.rejectUnknown({ QStringLiteral("protos"), QStringLiteral("import_paths"), QStringLiteral("protosets") });
        sr.strings(QStringLiteral("protos"), &s.protos);
        sr.strings(QStringLiteral("import_paths"), &s.importPaths);
        sr.strings(QStringLiteral("protosets"), &s.protosets);
        r.adopt(sr);
    }
}

/// Reads what is called and with what: method, transport, codec, target, the request and its fills.
void readCall(Reader &r, const QJsonObject &root, Scenario &s)
{
    r.string(QStringLiteral("method"), &s.method);
    r.string(QStringLiteral("transport"), &s.transport);
    r.string(QStringLiteral("codec"), &s.codec);
    r.string(QStringLiteral("rpc_method"), &s.rpcMethod);
    r.string(QStringLiteral("http_path"), &s.httpPath);
    QString params = QStringLiteral("positional");
    r.string(QStringLiteral("msgpack_params"), &params);
    if (r.ok() && params != u"positional" && params != u"map")
        r.fail(QStringLiteral("msgpack_params"), QStringLiteral("\"%1\" is not positional or map").arg(params));
    s.msgpackParamsMap = params == u"map";
    r.string(QStringLiteral("target"), &s.target);
    QString request;
    const QJsonValue requestValue = root.value(QStringLiteral("request"));
    if (requestValue.isObject() || requestValue.isArray()) // hand-written documents may give the JSON itself
        request = QString::fromUtf8(requestValue.isObject()
                ? QJsonDocument(requestValue.toObject()).toJson(QJsonDocument::Compact)
                : QJsonDocument(requestValue.toArray()).toJson(QJsonDocument::Compact));
    else
        r.string(QStringLiteral("request"), &request);
    s.request = request.toUtf8();
    r.strings(QStringLiteral("fills"), &s.fills);
}

/// Reads "metadata", given as [key, value] pairs or as an object of strings.
void readMetadata(Reader &r, const QJsonObject &root, Scenario &s)
{
    const QJsonValue metadata = root.value(QStringLiteral("metadata"));
    if (metadata.isArray()) {
        const QJsonArray pairs = metadata.toArray();
        for (qsizetype i = 0; i < pairs.size(); ++i) {
            const QJsonArray pair = pairs[i].toArray();
            if (!pairs[i].isArray() || pair.size() != 2 || !pair[0].isString() || !pair[1].isString()) {
                r.fail(QStringLiteral("metadata[%1]").arg(i), QStringLiteral("expected [\"key\", \"value\"]"));
                break;
            }
            s.metadata.append({ pair[0].toString(), pair[1].toString() });
        }
    } else if (metadata.isObject()) {
        const QJsonObject object = metadata.toObject();
        for (auto it = object.begin(); it != object.end(); ++it) {
            if (!it.value().isString()) {
                r.fail(QStringLiteral("metadata.") + it.key(), QStringLiteral("expected a string"));
                break;
            }
            s.metadata.append({ it.key(), it.value().toString() });
        }
    } else if (!metadata.isUndefined() && !metadata.isNull()) {
        r.fail(QStringLiteral("metadata"), QStringLiteral("expected an array of [key, value] pairs"));
    }
}

/// Fails on the first metadata key or value that holds a line break or a control character.
void rejectControlCharacters(Reader &r, const Scenario &s)
{
    // A shared document must not smuggle headers (CR LF) or abort gRPC: line breaks and control characters are
    // refused here, naming the file; what each transport allows beyond that is checked when the run is prepared.
    for (const auto &[key, value] : std::as_const(s.metadata)) {
        const auto control = [](const QString &text) {
            return std::any_of(text.begin(), text.end(),
                [](QChar c) { return (c.unicode() < 0x20 && c != u'\t') || c.unicode() == 0x7f; });
        };
        if (control(key) || control(value)) {
            r.fail(QStringLiteral("metadata.") + printable(key),
                QStringLiteral("the %1 holds a line break or a control character (it would start a header of its "
                               "own)")
                    .arg(control(key) ? QStringLiteral("key") : QStringLiteral("value")));
            break;
        }
    }
}

/// Reads the "load" section: how many calls, how fast, how long, and the streams' pace.
void readLoad(Reader &r, Scenario &s)
{
    if (const auto load = r.object(QStringLiteral("load"))) {
        Reader lr = r.child(*load, QStringLiteral("load"));
        lr.rejectUnknown({ QStringLiteral("calls"), QStringLiteral("concurrency"), QStringLiteral("duration"),
            QStringLiteral("rate"), QStringLiteral("warmup"), QStringLiteral("timeout"), QStringLiteral("connections"),
            QStringLiteral("discard_response"), QStringLiteral("max_receive_size"), QStringLiteral("max_send_size"),
            QStringLiteral("rate_schedule"), QStringLiteral("concurrency_schedule"), QStringLiteral("client_threads"),
            QStringLiteral("interval"), QStringLiteral("stream_call_count"), QStringLiteral("stream_interval"),
            QStringLiteral("stream_call_duration"), QStringLiteral("stream_ping_pong"), QStringLiteral("segment"),
            QStringLiteral("start_at"), QStringLiteral("http2_window") });
        lr.integer(QStringLiteral("calls"), &s.calls, 0, 9e15);
        lr.integer(QStringLiteral("concurrency"), &s.concurrency, 0, 100000);
        lr.string(QStringLiteral("duration"), &s.duration);
        lr.string(QStringLiteral("rate"), &s.rate);
        lr.string(QStringLiteral("warmup"), &s.warmup);
        lr.string(QStringLiteral("timeout"), &s.timeout);
        lr.integer(QStringLiteral("connections"), &s.connections, 0, 100000);
        lr.boolean(QStringLiteral("discard_response"), &s.discardResponse);
        lr.string(QStringLiteral("max_receive_size"), &s.maxReceiveSize);
        lr.string(QStringLiteral("max_send_size"), &s.maxSendSize);
        lr.string(QStringLiteral("http2_window"), &s.http2Window);
        s.rateSchedule = lr.schedule(QStringLiteral("rate_schedule"));
        s.concurrencySchedule = lr.schedule(QStringLiteral("concurrency_schedule"));
        lr.integer(QStringLiteral("client_threads"), &s.clientThreads, 0, 64);
        lr.string(QStringLiteral("interval"), &s.interval);
        lr.string(QStringLiteral("stream_call_count"), &s.streamCallCount);
        lr.string(QStringLiteral("stream_interval"), &s.streamInterval);
        lr.string(QStringLiteral("stream_call_duration"), &s.streamCallDuration);
        lr.boolean(QStringLiteral("stream_ping_pong"), &s.streamPingPong);
        lr.string(QStringLiteral("segment"), &s.segment);
        lr.string(QStringLiteral("start_at"), &s.startAt);
        r.adopt(lr);
    }
}

/// Reads the "connection" section: the security mode and the TLS settings.
void readConnection(Reader &r, Scenario &s)
{
    if (const auto connection = r.object(QStringLiteral("connection"))) {
        Reader cr = r.child(*connection, QStringLiteral("connection"));
        cr.rejectUnknown(
            { QStringLiteral("security"), QStringLiteral("cacert"), QStringLiteral("cert"), QStringLiteral("key"),
                QStringLiteral("cname"), QStringLiteral("skip_verify"), QStringLiteral("authority") });
        cr.string(QStringLiteral("security"), &s.security);
        cr.string(QStringLiteral("cacert"), &s.caCert);
        cr.string(QStringLiteral("cert"), &s.clientCert);
        cr.string(QStringLiteral("key"), &s.clientKey);
        cr.string(QStringLiteral("cname"), &s.serverName);
        cr.boolean(QStringLiteral("skip_verify"), &s.skipVerify);
        cr.string(QStringLiteral("authority"), &s.authority);
        r.adopt(cr);
    }
}

/// Reads the "server_command" section: what says the server is ready, and how long to wait for it.
void readServerCommand(Reader &r, Scenario &s)
{
    if (const auto server = r.object(QStringLiteral("server_command"))) {
        Reader sr = r.child(*server, QStringLiteral("server_command"));
        sr.rejectUnknown({ QStringLiteral("ready"), QStringLiteral("ready_timeout") });
        sr.string(QStringLiteral("ready"), &s.readyPattern);
        sr.string(QStringLiteral("ready_timeout"), &s.readyTimeout);
        r.adopt(sr);
    }
}

/// Reads the "pinning" section: the CPUs the client and the server run on.
void readPinning(Reader &r, Scenario &s)
{
    if (const auto pinning = r.object(QStringLiteral("pinning"))) {
        Reader pr = r.child(*pinning, QStringLiteral("pinning"));
        pr.rejectUnknown({ QStringLiteral("client_cpus"), QStringLiteral("server_cpus") });
        pr.string(QStringLiteral("client_cpus"), &s.clientCpus);
        pr.string(QStringLiteral("server_cpus"), &s.serverCpus);
        r.adopt(pr);
    }
}

/// Reads the "profile" section: what is profiled during the timed phase, and with what.
void readProfile(Reader &r, Scenario &s)
{
    if (const auto profile = r.object(QStringLiteral("profile"))) {
        Reader pr = r.child(*profile, QStringLiteral("profile"));
        pr.rejectUnknown({ QStringLiteral("server"), QStringLiteral("client"), QStringLiteral("profiler"),
            QStringLiteral("period"), QStringLiteral("call_graph"), QStringLiteral("keep") });
        pr.boolean(QStringLiteral("server"), &s.profileServer);
        pr.boolean(QStringLiteral("client"), &s.profileClient);
        pr.string(QStringLiteral("profiler"), &s.profiler);
        pr.string(QStringLiteral("period"), &s.profilePeriod);
        pr.string(QStringLiteral("call_graph"), &s.profileCallGraph);
        pr.boolean(QStringLiteral("keep"), &s.profileKeep);
        if (!s.profiler.isEmpty() && s.profiler != u"auto" && s.profiler != u"perf" && s.profiler != u"python")
            pr.fail(QStringLiteral("profiler"),
                QStringLiteral("\"%1\" is not auto, perf or python: a document may not name a command to run (give "
                               "it with --profiler or in the window)")
                    .arg(s.profiler));
        r.adopt(pr);
    }
}

/// Reads the "output" section: the exports and the chart's settings.
void readOutput(Reader &r, Scenario &s)
{
    if (const auto output = r.object(QStringLiteral("output"))) {
        Reader orr = r.child(*output, QStringLiteral("output"));
        orr.rejectUnknown({ QStringLiteral("exports"), QStringLiteral("chart"), QStringLiteral("chart_size"),
            QStringLiteral("chart_scale") });
        orr.string(QStringLiteral("chart"), &s.chart);
        orr.string(QStringLiteral("chart_size"), &s.chartSize);
        orr.string(QStringLiteral("chart_scale"), &s.chartScale);
        const QJsonValue list = output->value(QStringLiteral("exports"));
        if (!list.isUndefined() && !list.isNull() && !list.isArray())
            orr.fail(QStringLiteral("exports"), QStringLiteral("expected a list of {\"format\", \"file\"}"));
        const QJsonArray exports = list.toArray();
        for (qsizetype i = 0; orr.ok() && i < exports.size(); ++i) {
            const QJsonObject e = exports.at(i).toObject();
            const bool chart = e.contains(QStringLiteral("chart"));
            if (!exports.at(i).isObject() || !e.value(QStringLiteral("format")).isString()
                || !e.value(QStringLiteral("file")).isString()
                || (chart && !e.value(QStringLiteral("chart")).isString()) || e.size() != (chart ? 3 : 2)) {
                orr.fail(QStringLiteral("exports[%1]").arg(i),
                    QStringLiteral("expected {\"format\": \"png\", \"file\": \"run.png\"} and, for a chart, "
                                   "\"chart\": \"spectrum\""));
                break;
            }
            s.exports.append({ e.value(QStringLiteral("format")).toString(), e.value(QStringLiteral("file")).toString(),
                e.value(QStringLiteral("chart")).toString() });
        }
        r.adopt(orr);
    }
}

/// Reads the "ab" section: how an A/B comparison is run and decided.
void readAb(Reader &r, Scenario &s)
{
    if (const auto ab = r.object(QStringLiteral("ab"))) {
        Reader ar = r.child(*ab, QStringLiteral("ab"));
        ar.rejectUnknown({ QStringLiteral("block"), QStringLiteral("restarts"), QStringLiteral("connection"),
            QStringLiteral("threshold"), QStringLiteral("until_decided"), QStringLiteral("max_duration") });
        ar.string(QStringLiteral("block"), &s.abBlock);
        ar.integer(QStringLiteral("restarts"), &s.abRestarts, 0, 1000);
        ar.string(QStringLiteral("connection"), &s.abConnection);
        ar.string(QStringLiteral("threshold"), &s.abThreshold);
        ar.boolean(QStringLiteral("until_decided"), &s.abUntilDecided);
        ar.string(QStringLiteral("max_duration"), &s.abMaxDuration);
        r.adopt(ar);
    }
}

/// Reads the "history" section: whether and where the run is saved, and what it is compared to.
void readHistory(Reader &r, Scenario &s)
{
    if (const auto history = r.object(QStringLiteral("history"))) {
        Reader hr = r.child(*history, QStringLiteral("history"));
        hr.rejectUnknown({ QStringLiteral("save"), QStringLiteral("db"), QStringLiteral("labels"),
            QStringLiteral("name"), QStringLiteral("compare_to"), QStringLiteral("compare_threshold") });
        hr.boolean(QStringLiteral("save"), &s.saveRun);
        hr.string(QStringLiteral("db"), &s.db);
        hr.strings(QStringLiteral("labels"), &s.labels);
        hr.string(QStringLiteral("name"), &s.name);
        hr.string(QStringLiteral("compare_to"), &s.compareTo);
        hr.string(QStringLiteral("compare_threshold"), &s.compareThreshold);
        r.adopt(hr);
    }
}

/// Reads the "expect" section: the replies and statuses expected.
void readExpect(Reader &r, Scenario &s)
{
    if (const auto expect = r.object(QStringLiteral("expect"))) {
        Reader er = r.child(*expect, QStringLiteral("expect"));
        er.rejectUnknown(
            { QStringLiteral("replies"), QStringLiteral("first"), QStringLiteral("every"), QStringLiteral("status") });
        er.strings(QStringLiteral("replies"), &s.expect);
        er.strings(QStringLiteral("status"), &s.expectStatus);
        er.string(QStringLiteral("first"), &s.expectFirst);
        er.string(QStringLiteral("every"), &s.expectEvery);
        r.adopt(er);
    }
}

/// Reads the "secrets" section: what is redacted, or that secrets are kept.
void readSecrets(Reader &r, Scenario &s)
{
    if (const auto secrets = r.object(QStringLiteral("secrets"))) {
        Reader sr = r.child(*secrets, QStringLiteral("secrets"));
        sr.rejectUnknown({ QStringLiteral("redact"), QStringLiteral("keep") });
        sr.strings(QStringLiteral("redact"), &s.secretKeys);
        sr.boolean(QStringLiteral("keep"), &s.keepSecrets);
        r.adopt(sr);
    }
}

/// Reads "checks": the pass/fail conditions, each a string.
void readChecks(Reader &r, const QJsonObject &root, Scenario &s)
{
    if (r.ok() && root.contains(QStringLiteral("checks"))) {
        const QJsonValue checks = root.value(QStringLiteral("checks"));
        if (!checks.isArray())
            r.fail(QStringLiteral("checks"),
                QStringLiteral("expected a list such as [\"p99<20ms\", \"error_rate<0.1%\"]"));
        const QJsonArray list = checks.toArray();
        for (qsizetype i = 0; r.ok() && i < list.size(); ++i) {
            const QString field = QStringLiteral("checks[%1]").arg(i);
            if (!list.at(i).isString())
                r.fail(field, QStringLiteral("expected a string such as \"p99<20ms\""));
            else
                s.checks << list.at(i).toString();
        }
    }
}

} // namespace

std::optional<Scenario> Scenario::fromJson(const QByteArray &json, QString *error, DocumentCheck check)
{
    const std::optional<QJsonObject> object = scenarioObject(json, error);
    if (!object)
        return std::nullopt;
    const QJsonObject &root = *object;
    Scenario s;
    Reader r(root, QString(), error);
    int version = 0;
    r.integer(QStringLiteral("rpcscope_scenario"), &version, 1, 1000);
    if (r.ok() && version > kFormatVersion) {
        if (error)
            *error = QStringLiteral("rpcscope_scenario: version %1 is newer than this rpcscope understands (%2)")
                         .arg(version)
                         .arg(kFormatVersion);
        return std::nullopt;
    }
    // A run's record keeps the client command that made its calls; a document never runs one (a shared file).
    for (const QString &key : { QStringLiteral("client_command"), QStringLiteral("client") }) {
        if (root.contains(key))
            r.fail(key,
                QStringLiteral("a document may not name a client command to run (give it with --client or in the "
                               "window)"));
    }
    r.rejectUnknown({ QStringLiteral("rpcscope_scenario"), QStringLiteral("schema"), QStringLiteral("method"),
        QStringLiteral("transport"), QStringLiteral("codec"), QStringLiteral("rpc_method"), QStringLiteral("http_path"),
        QStringLiteral("msgpack_params"), QStringLiteral("target"), QStringLiteral("request"), QStringLiteral("fills"),
        QStringLiteral("metadata"), QStringLiteral("load"), QStringLiteral("connection"), QStringLiteral("raw_samples"),
        QStringLiteral("request_binary_file"), QStringLiteral("checks"), QStringLiteral("request_file"),
        QStringLiteral("fail_on_error"), QStringLiteral("server_command"), QStringLiteral("pinning"),
        QStringLiteral("output"), QStringLiteral("history"), QStringLiteral("ab"), QStringLiteral("secrets"),
        QStringLiteral("expect"), QStringLiteral("profile") });
    readSchema(r, s);
    readCall(r, root, s);
    readMetadata(r, root, s);
    rejectControlCharacters(r, s);
    readLoad(r, s);
    readConnection(r, s);
    r.string(QStringLiteral("raw_samples"), &s.rawSamples);
    r.string(QStringLiteral("request_binary_file"), &s.requestBinaryFile);
    r.string(QStringLiteral("request_file"), &s.requestFile);
    r.boolean(QStringLiteral("fail_on_error"), &s.failOnError);
    readServerCommand(r, s);
    readPinning(r, s);
    readProfile(r, s);
    readOutput(r, s);
    readAb(r, s);
    readHistory(r, s);
    readExpect(r, s);
    readSecrets(r, s);
    readChecks(r, root, s);
    if (!r.ok())
        return std::nullopt;
    // The values, checked by the same rules prepareRun() applies, so a document's own mistakes name its field.
    if (check == DocumentCheck::Values) {
        if (const std::optional<ScenarioProblem> problem = s.valueProblem()) {
            if (error)
                *error = problem->text();
            return std::nullopt;
        }
    }
    return s;
}

bool isLoopbackAddress(const QString &address)
{
    QString host = address;
    if (host.startsWith(QLatin1Char('[')))
        host = host.mid(1, host.indexOf(QLatin1Char(']')) - 1);
    else if (host.count(QLatin1Char(':')) == 1)
        host = host.left(host.indexOf(QLatin1Char(':')));
    return host == u"localhost" || host.startsWith(QStringLiteral("127.")) || host == u"::1";
}

bool Scenario::hasTlsSettings() const
{
    return !caCert.isEmpty() || !clientCert.isEmpty() || !clientKey.isEmpty() || !serverName.isEmpty() || skipVerify;
}

std::optional<ScenarioProblem> Scenario::valueProblem() const
{
    auto problem = [](const QString &field, const QString &message) {
        return std::optional<ScenarioProblem>(ScenarioProblem { field, message });
    };
    if (!parseTransport(transport))
        return problem(QStringLiteral("transport"),
            QStringLiteral("\"%1\" is not grpc, h2grpc, http, msgpack or none").arg(transport));
    if (!codec.isEmpty() && !parseCodec(codec))
        return problem(QStringLiteral("codec"), QStringLiteral("\"%1\" is not protobuf, json or msgpack").arg(codec));
    if (security != u"auto" && security != u"plaintext" && security != u"tls")
        return problem(QStringLiteral("connection.security"),
            QStringLiteral("\"%1\" is not auto, plaintext or tls").arg(security));
    if (hasTlsSettings() && security == u"plaintext")
        return problem(QStringLiteral("connection.security"),
            QStringLiteral("plaintext contradicts the TLS settings (cacert, cert, key, cname, skip_verify)"));
    if (clientCert.isEmpty() != clientKey.isEmpty())
        return problem(clientKey.isEmpty() ? QStringLiteral("connection.key") : QStringLiteral("connection.cert"),
            QStringLiteral("a client certificate and its key go together"));
    if (transport != u"grpc" && transport != u"h2grpc" && (hasTlsSettings() || security == u"tls"))
        return problem(QStringLiteral("connection"),
            QStringLiteral("the TLS settings are for the gRPC transports (grpc, h2grpc)"));
    for (qsizetype i = 0; i < checks.size(); ++i) {
        if (QString why; !parseCheck(checks.at(i), &why))
            return problem(QStringLiteral("checks[%1]").arg(i), why);
    }
    for (qsizetype i = 0; i < expect.size(); ++i) {
        if (QString why; !Expectation::parse(expect.at(i), nullptr, &why))
            return problem(QStringLiteral("expect.replies[%1]").arg(i), why);
    }
    if (!abConnection.isEmpty() && abConnection != u"kept" && abConnection != u"per-block")
        return problem(
            QStringLiteral("ab.connection"), QStringLiteral("\"%1\" is not kept or per-block").arg(abConnection));
    return std::nullopt;
}

void Scenario::clearTlsSettings()
{
    caCert.clear();
    clientCert.clear();
    clientKey.clear();
    serverName.clear();
    skipVerify = false;
}

QList<QString *> Scenario::filePaths()
{
    QList<QString *> paths;
    for (QStringList *list : { &protos, &importPaths, &protosets }) {
        for (QString &p : *list)
            paths << &p;
    }
    for (QString *p : { &caCert, &clientCert, &clientKey, &rawSamples, &requestBinaryFile, &requestFile, &db }) {
        if (!p->isEmpty()) // empty means unset, not the document's folder
            paths << p;
    }
    for (Export &e : exports) {
        if (e.file != u"-") // standard output is not a file
            paths << &e.file;
    }
    return paths;
}

std::optional<Scenario> Scenario::load(const QString &path, QString *error, DocumentCheck check)
{
    QString why;
    const std::optional<QByteArray> text = readInputFile(path, inputlimits::kDocument, &why);
    if (!text) {
        if (error)
            *error = path + QStringLiteral(": ") + why;
        return std::nullopt;
    }
    std::optional<Scenario> s = fromJson(*text, &why, check);
    if (!s) {
        if (error)
            *error = path + QStringLiteral(": ") + why;
        return std::nullopt;
    }
    const QDir folder = QFileInfo(path).absoluteDir();
    for (QString *p : s->filePaths())
        *p = QDir::cleanPath(folder.absoluteFilePath(*p));
    return s;
}

bool Scenario::save(const QString &path, QString *error) const
{
    Scenario relative = *this;
    const QDir folder = QFileInfo(path).absoluteDir();
    for (QString *p : relative.filePaths()) {
        const QString rel = folder.relativeFilePath(*p);
        if (!rel.startsWith(QStringLiteral("..")) && !QDir::isAbsolutePath(rel))
            *p = rel; // the document and its protos move together (a repository)
    }
    return writeOutputFile(path, relative.toJson(), error);
}

} // namespace rpcscope
