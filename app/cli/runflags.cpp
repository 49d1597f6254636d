#include "runflags.h"

#include "renderedexport.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>

namespace rpcscope::cli {

namespace {

using Setter = std::function<bool(Scenario &, const QString &, QString *)>;

Setter setText(QString Scenario::*member)
{
    return [member](Scenario &s, const QString &value, QString *) {
        s.*member = value;
        return true;
    };
}

Setter addText(QStringList Scenario::*member)
{
    return [member](Scenario &s, const QString &value, QString *) {
        (s.*member) << value;
        return true;
    };
}

Setter setOn(bool Scenario::*member)
{
    return [member](Scenario &s, const QString &, QString *) {
        s.*member = true;
        return true;
    };
}

/// A schedule's field; the schedule is made (as "const") by the first of its flags.
Setter setSchedule(std::optional<ScheduleText> Scenario::*schedule, QString ScheduleText::*member)
{
    return [schedule, member](Scenario &s, const QString &value, QString *) {
        if (!(s.*schedule)) {
            ScheduleText constant;
            constant.kind = QStringLiteral("const");
            s.*schedule = constant;
        }
        (*(s.*schedule)).*member = value;
        return true;
    };
}

/// A whole number from @p low to @p high.
bool wholeNumber(const QString &value, qint64 low, qint64 high, qint64 *into, QString *why)
{
    bool isNumber = false;
    const qint64 n = value.trimmed().toLongLong(&isNumber);
    if (!isNumber || n < low || n > high) {
        *why = high == std::numeric_limits<qint64>::max()
            ? QStringLiteral("expected a number >= %1, got \"%2\"").arg(low).arg(value)
            : QStringLiteral("expected a number from %1 to %2, got \"%3\"").arg(low).arg(high).arg(value);
        return false;
    }
    *into = n;
    return true;
}

/// A whole number from @p low to @p high into @p member.
template<typename T> Setter setNumber(T Scenario::*member, qint64 low, qint64 high)
{
    return [member, low, high](Scenario &s, const QString &value, QString *why) {
        qint64 n = 0;
        if (!wholeNumber(value, low, high, &n, why))
            return false;
        s.*member = static_cast<T>(n);
        return true;
    };
}

bool setMsgpackParams(Scenario &s, const QString &value, QString *why)
{
    if (value != u"positional" && value != u"map") {
        *why = QStringLiteral("\"%1\" is not positional or map").arg(value);
        return false;
    }
    s.msgpackParamsMap = value == u"map";
    return true;
}

// The request comes one way: the flag given replaces the document's request, whichever way it came.
bool setRequestJson(Scenario &s, const QString &value, QString *)
{
    s.request = value.toUtf8();
    s.requestFile.clear();
    s.requestBinaryFile.clear();
    return true;
}

bool setRequestFile(Scenario &s, const QString &value, QString *)
{
    s.request.clear();
    s.requestFile = value;
    s.requestBinaryFile.clear();
    return true;
}

bool setRequestBinary(Scenario &s, const QString &value, QString *)
{
    s.request.clear();
    s.requestFile.clear();
    s.requestBinaryFile = value;
    return true;
}

bool setBuiltin(Scenario &s, const QString &, QString *)
{
    s.target = QStringLiteral("builtin");
    return true;
}

/// --insecure: plaintext, whatever TLS settings the document had.
bool setInsecure(Scenario &s, const QString &, QString *)
{
    s.security = QStringLiteral("plaintext");
    s.clearTlsSettings();
    return true;
}

/// A TLS flag asks for TLS, whatever the document said.
Setter setTls(QString Scenario::*member)
{
    return [member](Scenario &s, const QString &value, QString *) {
        s.*member = value;
        if (s.security == u"plaintext")
            s.security = QStringLiteral("auto");
        return true;
    };
}

bool setSkipVerify(Scenario &s, const QString &, QString *)
{
    s.skipVerify = true;
    if (s.security == u"plaintext")
        s.security = QStringLiteral("auto");
    return true;
}

bool setMetadata(Scenario &s, const QString &value, QString *why)
{
    QJsonParseError jsonError;
    const QJsonDocument doc = QJsonDocument::fromJson(value.toUtf8(), &jsonError);
    if (jsonError.error != QJsonParseError::NoError || !doc.isObject()) {
        *why = QStringLiteral("expected a JSON object of strings, e.g. '{\"key\":\"value\"}'");
        return false;
    }
    QList<QPair<QString, QString>> pairs;
    const QJsonObject object = doc.object();
    for (auto it = object.begin(); it != object.end(); ++it) {
        if (!it.value().isString()) {
            *why = QStringLiteral("the value of \"%1\" is not a string").arg(it.key());
            return false;
        }
        pairs.append({ it.key(), it.value().toString() });
    }
    s.metadata = pairs;
    return true;
}

// -O and -o come in pairs, in order: an -O adds an export, the -o after it names its file.
bool addExportFormat(Scenario &s, const QString &value, QString *)
{
    s.exports.append({ value, QString(), QString() });
    return true;
}

bool addExportFile(Scenario &s, const QString &value, QString *why)
{
    for (Scenario::Export &e : s.exports) {
        if (e.file.isEmpty()) {
            e.file = value;
            return true;
        }
    }
    *why = QStringLiteral("no -O before it (-O csv -o run.csv)");
    return false;
}

QString flagName(const QString &name)
{
    return (name.size() == 1 ? QStringLiteral("-") : QStringLiteral("--")) + name;
}

/// The flags that set the request, which exclude each other.
const QStringList kRequestFlags { QStringLiteral("d"), QStringLiteral("D"), QStringLiteral("b") };

/// What to call and how: the schema, transport, codec, method and request.
QList<RunFlag> callFlags()
{
    return {
        { { QStringLiteral("proto") }, QStringLiteral("FILE"),
            QStringLiteral(".proto file with the service (repeatable)."), QStringLiteral("schema.protos"), true,
            QStringLiteral("bench.proto"), addText(&Scenario::protos) },
        { { QStringLiteral("protoset") }, QStringLiteral("FILE"),
            QStringLiteral("Compiled descriptors (protoc --descriptor_set_out --include_imports), repeatable."),
            QStringLiteral("schema.protosets"), true, QStringLiteral("bench.protoset"), addText(&Scenario::protosets) },
        { { QStringLiteral("transport") }, QStringLiteral("KIND"),
            QStringLiteral(
                "grpc (default), h2grpc (gRPC with rpcscope's own HTTP/2 client: far less client CPU per call, "
                "every kind of method, TLS too), http, msgpack or none (no RPC, codec only)."),
            QStringLiteral("transport"), false, QStringLiteral("http"), setText(&Scenario::transport) },
        { { QStringLiteral("codec") }, QStringLiteral("CODEC"),
            QStringLiteral(
                "Body encoding: protobuf, json or msgpack (default: protobuf for grpc and none, json for http, "
                "msgpack for msgpack)."),
            QStringLiteral("codec"), false, QStringLiteral("json"), setText(&Scenario::codec) },
        { { QStringLiteral("rpc-method") }, QStringLiteral("NAME"),
            QStringLiteral("msgpack-rpc: method name to call (default: the proto method's name)."),
            QStringLiteral("rpc_method"), false, QStringLiteral("echo"), setText(&Scenario::rpcMethod) },
        { { QStringLiteral("http-path") }, QStringLiteral("/PATH"),
            QStringLiteral("http: the URL path to POST to when the target has none, as a server command's address "
                           "has not (default: the URL's own path, else /package.Service/Method)."),
            QStringLiteral("http_path"), false, QStringLiteral("/rpc"), setText(&Scenario::httpPath) },
        { { QStringLiteral("msgpack-params") }, QStringLiteral("positional|map"),
            QStringLiteral("msgpack-rpc: params as the request's fields in order (positional, default) or one map."),
            QStringLiteral("msgpack_params"), false, QStringLiteral("map"), setMsgpackParams },
        { { QStringLiteral("i"), QStringLiteral("import-paths") }, QStringLiteral("DIR"),
            QStringLiteral("Import path for .proto files (repeatable; the well-known types are built in)."),
            QStringLiteral("schema.import_paths"), true, QStringLiteral("protos"), addText(&Scenario::importPaths) },
        { { QStringLiteral("call") }, QStringLiteral("METHOD"),
            QStringLiteral("Method to call: package.Service/Method."), QStringLiteral("method"), false,
            QStringLiteral("rpcscope.bench.v1.Bench/Echo"), setText(&Scenario::method) },
        { { QStringLiteral("d"), QStringLiteral("data") }, QStringLiteral("JSON"),
            QStringLiteral("Request as JSON (proto3 JSON mapping)."), QStringLiteral("request"), false,
            QStringLiteral("{\"payload\":\"aGk=\"}"), setRequestJson },
        { { QStringLiteral("D"), QStringLiteral("data-file") }, QStringLiteral("FILE"),
            QStringLiteral("Request as JSON, from a file; an array of objects is sent round-robin."),
            QStringLiteral("request_file"), false, QStringLiteral("request.json"), setRequestFile },
        { { QStringLiteral("b"), QStringLiteral("binary-file") }, QStringLiteral("FILE"),
            QStringLiteral("Request as a serialized protobuf message, from a file."),
            QStringLiteral("request_binary_file"), false, QStringLiteral("request.bin"), setRequestBinary },
        { { QStringLiteral("fill") }, QStringLiteral("FIELD=SIZE"),
            QStringLiteral("Size knob: a bytes/string field to SIZE bytes (payload=1MiB) or a repeated field to SIZE "
                           "elements (nums=1000: a numeric one gets the values 1..1000, so a sum is 500500; another "
                           "copies of its first element, or defaults); inner.payload=1KiB reaches into messages. "
                           "Repeatable."),
            QStringLiteral("fills"), true, QStringLiteral("payload=1KiB"), addText(&Scenario::fills) },
    };
}

/// How much load and when: calls, callers, duration, warm-up, rate and its schedule, segment, sampling.
QList<RunFlag> loadFlags()
{
    return {
        { { QStringLiteral("n"), QStringLiteral("total") }, QStringLiteral("N"),
            QStringLiteral("Number of timed calls (default 200 unless -z is given)."), QStringLiteral("load.calls"),
            false, QStringLiteral("4000"), setNumber(&Scenario::calls, 1, std::numeric_limits<qint64>::max()) },
        { { QStringLiteral("c"), QStringLiteral("concurrency") }, QStringLiteral("C"),
            QStringLiteral("Concurrent callers, one call in flight each (default 50)."),
            QStringLiteral("load.concurrency"), false, QStringLiteral("7"),
            setNumber(&Scenario::concurrency, 1, 100000) },
        { { QStringLiteral("z"), QStringLiteral("duration") }, QStringLiteral("DURATION"),
            QStringLiteral("Length of the whole run, warm-up included, e.g. 10s; with -n too, whichever comes first "
                           "ends it. Calls still in flight when it is up get a short grace (3 x p99, 100 ms to 2 s), "
                           "then are cancelled and counted as CANCELLED."),
            QStringLiteral("load.duration"), false, QStringLiteral("10s"), setText(&Scenario::duration) },
        { { QStringLiteral("warmup") }, QStringLiteral("N|DURATION"),
            QStringLiteral(
                "Warm-up made first and left out of the statistics: N calls or a duration like 5s (default 0); "
                "it counts against -z."),
            QStringLiteral("load.warmup"), false, QStringLiteral("200"), setText(&Scenario::warmup) },
        { { QStringLiteral("rps") }, QStringLiteral("R"),
            QStringLiteral("Open loop: send R calls per second whatever the replies do; -c caps the calls in flight. "
                           "Latency counts from each call's intended send time."),
            QStringLiteral("load.rate"), false, QStringLiteral("500"), setText(&Scenario::rate) },
        { { QStringLiteral("load-schedule") }, QStringLiteral("const|step|line"),
            QStringLiteral("Open-loop rate schedule: const (with --rps), step or line."),
            QStringLiteral("load.rate_schedule.kind"), false, QStringLiteral("step"),
            setSchedule(&Scenario::rateSchedule, &ScheduleText::kind) },
        { { QStringLiteral("load-start") }, QStringLiteral("R"), QStringLiteral("Schedule: starting rate (calls/s)."),
            QStringLiteral("load.rate_schedule.start"), false, QStringLiteral("100"),
            setSchedule(&Scenario::rateSchedule, &ScheduleText::start) },
        { { QStringLiteral("load-step") }, QStringLiteral("R"),
            QStringLiteral(
                "Schedule: rate added every --load-step-duration (step) or every second (line); may be negative."),
            QStringLiteral("load.rate_schedule.step"), false, QStringLiteral("50"),
            setSchedule(&Scenario::rateSchedule, &ScheduleText::step) },
        { { QStringLiteral("load-end") }, QStringLiteral("R"),
            QStringLiteral("Schedule: the rate stays here once reached."), QStringLiteral("load.rate_schedule.end"),
            false, QStringLiteral("400"), setSchedule(&Scenario::rateSchedule, &ScheduleText::end) },
        { { QStringLiteral("load-step-duration") }, QStringLiteral("DURATION"),
            QStringLiteral("Schedule (step): length of each step (default 1s)."),
            QStringLiteral("load.rate_schedule.step_duration"), false, QStringLiteral("2s"),
            setSchedule(&Scenario::rateSchedule, &ScheduleText::stepDuration) },
        { { QStringLiteral("load-max-duration") }, QStringLiteral("DURATION"),
            QStringLiteral("Schedule: stop sending after this long."),
            QStringLiteral("load.rate_schedule.max_duration"), false, QStringLiteral("30s"),
            setSchedule(&Scenario::rateSchedule, &ScheduleText::maxDuration) },
        { { QStringLiteral("segment") }, QStringLiteral("I/N"),
            QStringLiteral("Run segment I (0 to N-1) of the plan split over N workers: calls I, I+N, I+2N ... of the "
                           "whole plan, at its times; callers, calls and warm-up shared out. Merge the workers' JSON "
                           "reports with `rpcscope-cli merge`."),
            QStringLiteral("load.segment"), false, QStringLiteral("1/4"), setText(&Scenario::segment) },
        { { QStringLiteral("start-at") }, QStringLiteral("TIME"),
            QStringLiteral("Start the timed phase at this wall-clock time (RFC 3339 like 2026-12-03T15:00:00Z, or "
                           "Unix seconds), after the warm-up; -z then counts from it. Lines up the workers of a "
                           "--segment run."),
            QStringLiteral("load.start_at"), false, QStringLiteral("2026-12-03T15:00:00Z"),
            setText(&Scenario::startAt) },
        { { QStringLiteral("interval") }, QStringLiteral("DURATION"),
            QStringLiteral("Time-series resolution (default 1s)."), QStringLiteral("load.interval"), false,
            QStringLiteral("250ms"), setText(&Scenario::interval) },
        { { QStringLiteral("raw-samples") }, QStringLiteral("FILE"),
            QStringLiteral("Keep every timed call and write them to FILE as CSV (sent_ns,latency_us,status); 16 bytes "
                           "per call in memory."),
            QStringLiteral("raw_samples"), false, QStringLiteral("calls.csv"), setText(&Scenario::rawSamples) },
    };
}

/// A closed loop whose number of callers changes: the concurrency schedule.
QList<RunFlag> concurrencyScheduleFlags()
{
    return {
        { { QStringLiteral("concurrency-schedule") }, QStringLiteral("const|step|line"),
            QStringLiteral(
                "Closed loop with a changing number of callers: const, step or line (with --concurrency-*)."),
            QStringLiteral("load.concurrency_schedule.kind"), false, QStringLiteral("line"),
            setSchedule(&Scenario::concurrencySchedule, &ScheduleText::kind) },
        { { QStringLiteral("concurrency-start") }, QStringLiteral("N"),
            QStringLiteral("Concurrency schedule: callers at the start."),
            QStringLiteral("load.concurrency_schedule.start"), false, QStringLiteral("1"),
            setSchedule(&Scenario::concurrencySchedule, &ScheduleText::start) },
        { { QStringLiteral("concurrency-step") }, QStringLiteral("N"),
            QStringLiteral(
                "Concurrency schedule: callers added every --concurrency-step-duration (step) or per second (line)."),
            QStringLiteral("load.concurrency_schedule.step"), false, QStringLiteral("2"),
            setSchedule(&Scenario::concurrencySchedule, &ScheduleText::step) },
        { { QStringLiteral("concurrency-end") }, QStringLiteral("N"),
            QStringLiteral("Concurrency schedule: callers stay here once reached."),
            QStringLiteral("load.concurrency_schedule.end"), false, QStringLiteral("20"),
            setSchedule(&Scenario::concurrencySchedule, &ScheduleText::end) },
        { { QStringLiteral("concurrency-step-duration") }, QStringLiteral("DURATION"),
            QStringLiteral("Concurrency schedule (step): length of each step (default 1s)."),
            QStringLiteral("load.concurrency_schedule.step_duration"), false, QStringLiteral("2s"),
            setSchedule(&Scenario::concurrencySchedule, &ScheduleText::stepDuration) },
        { { QStringLiteral("concurrency-max-duration") }, QStringLiteral("DURATION"),
            QStringLiteral("Concurrency schedule: stop after this long."),
            QStringLiteral("load.concurrency_schedule.max_duration"), false, QStringLiteral("20s"),
            setSchedule(&Scenario::concurrencySchedule, &ScheduleText::maxDuration) },
    };
}

/// How the client makes its calls: deadline, connections, threads, pinning, streams, message sizes.
QList<RunFlag> clientFlags()
{
    return {
        { { QStringLiteral("t"), QStringLiteral("timeout") }, QStringLiteral("DURATION"),
            QStringLiteral("Deadline of each call (default 20s; 0 = none)."), QStringLiteral("load.timeout"), false,
            QStringLiteral("3s"), setText(&Scenario::timeout) },
        { { QStringLiteral("connections") }, QStringLiteral("K"),
            QStringLiteral(
                "Connections; callers are spread evenly over them. grpc, msgpack: default 1, many calls each. "
                "http: default one per caller (HTTP/1.1 carries one call at a time)."),
            QStringLiteral("load.connections"), false, QStringLiteral("4"),
            setNumber(&Scenario::connections, 1, 100000) },
        { { QStringLiteral("cpus") }, QStringLiteral("N"),
            QStringLiteral("Client threads polling gRPC (default 1, one more per 64 callers up to the cores). One is "
                           "fastest when the client has a core to itself. h2grpc keeps each connection on one thread: "
                           "threads past --connections have nothing to do."),
            QStringLiteral("load.client_threads"), false, QStringLiteral("2"),
            setNumber(&Scenario::clientThreads, 1, 64) },
        { { QStringLiteral("client-cpus") }, QStringLiteral("LIST"),
            QStringLiteral("Pin rpcscope-cli (all its threads) to these CPUs, as taskset -c lists them: 0, 0,2, 1-3. "
                           "With --server-cpus, client and server stop competing for cores."),
            QStringLiteral("pinning.client_cpus"), false, QStringLiteral("0"), setText(&Scenario::clientCpus) },
        { { QStringLiteral("server-cpus") }, QStringLiteral("LIST"),
            QStringLiteral("Pin the server rpcscope starts (--builtin or a server command) to these CPUs."),
            QStringLiteral("pinning.server_cpus"), false, QStringLiteral("1"), setText(&Scenario::serverCpus) },
        { { QStringLiteral("discard-response") }, QString(),
            QStringLiteral("Count reply bytes and status but do not decode replies."),
            QStringLiteral("load.discard_response"), false, QString(), setOn(&Scenario::discardResponse) },
        { { QStringLiteral("stream-call-count") }, QStringLiteral("N"),
            QStringLiteral(
                "Streaming methods (gRPC): messages each client or bidi stream sends, cycling through the "
                "requests (default each request once); on a server stream, replies after which the client ends "
                "the call (default: read to the end)."),
            QStringLiteral("load.stream_call_count"), false, QStringLiteral("10"),
            setText(&Scenario::streamCallCount) },
        { { QStringLiteral("stream-interval") }, QStringLiteral("DURATION"),
            QStringLiteral(
                "Streaming methods: wait between the client's messages on a stream, e.g. 10ms (default none)."),
            QStringLiteral("load.stream_interval"), false, QStringLiteral("10ms"), setText(&Scenario::streamInterval) },
        { { QStringLiteral("stream-call-duration") }, QStringLiteral("DURATION"),
            QStringLiteral(
                "Streaming methods: the client ends each call after this long (a client or bidi stream closes "
                "its side, a server stream is cancelled; counted OK)."),
            QStringLiteral("load.stream_call_duration"), false, QStringLiteral("1s"),
            setText(&Scenario::streamCallDuration) },
        { { QStringLiteral("stream-ping-pong") }, QString(),
            QStringLiteral(
                "Bidi streams: send each message once the reply to the previous one is in, so each message's "
                "latency is one round trip with nothing queued before it."),
            QStringLiteral("load.stream_ping_pong"), false, QString(), setOn(&Scenario::streamPingPong) },
        { { QStringLiteral("max-recv-size") }, QStringLiteral("SIZE"),
            QStringLiteral("Largest reply accepted, e.g. 64MiB (default gRPC's 4 MiB; larger replies fail with "
                           "RESOURCE_EXHAUSTED)."),
            QStringLiteral("load.max_receive_size"), false, QStringLiteral("64MiB"),
            setText(&Scenario::maxReceiveSize) },
        { { QStringLiteral("max-send-size") }, QStringLiteral("SIZE"),
            QStringLiteral("Largest request sent, e.g. 64MiB (default unlimited)."),
            QStringLiteral("load.max_send_size"), false, QStringLiteral("64MiB"), setText(&Scenario::maxSendSize) },
        { { QStringLiteral("http2-window") }, QStringLiteral("SIZE"),
            QStringLiteral("h2grpc: the HTTP/2 flow-control window offered per stream (default 16MiB, enough for a "
                           "10 MiB reply; the connection's is 4 times it)."),
            QStringLiteral("load.http2_window"), false, QStringLiteral("4MiB"), setText(&Scenario::http2Window) },
    };
}

/// Which server and how to reach it: built-in, TLS, authority, metadata and its secrets.
QList<RunFlag> connectionFlags()
{
    return {
        { { QStringLiteral("builtin") }, QString(),
            QStringLiteral("Start the built-in server (a child process) for this run; uses the bundled bench proto "
                           "unless --proto."),
            QStringLiteral("target"), false, QString(), setBuiltin },
        { { QStringLiteral("insecure") }, QString(),
            QStringLiteral(
                "Plaintext connection (the default for loopback targets; remote ones use TLS unless this is given)."),
            QStringLiteral("connection.security"), false, QString(), setInsecure },
        { { QStringLiteral("cacert") }, QStringLiteral("FILE"),
            QStringLiteral("TLS: trust the CA certificates in this PEM file."), QStringLiteral("connection.cacert"),
            false, QStringLiteral("ca.pem"), setTls(&Scenario::caCert) },
        { { QStringLiteral("cert") }, QStringLiteral("FILE"),
            QStringLiteral("TLS: client certificate (PEM) for mutual TLS; needs --key."),
            QStringLiteral("connection.cert"), false, QStringLiteral("client.pem"), setTls(&Scenario::clientCert) },
        { { QStringLiteral("key") }, QStringLiteral("FILE"), QStringLiteral("TLS: client private key (PEM)."),
            QStringLiteral("connection.key"), false, QStringLiteral("client.key"), setTls(&Scenario::clientKey) },
        { { QStringLiteral("cname") }, QStringLiteral("NAME"),
            QStringLiteral("TLS: check the server certificate against this name instead of the host."),
            QStringLiteral("connection.cname"), false, QStringLiteral("bench.example"), setTls(&Scenario::serverName) },
        { { QStringLiteral("skipTLS") }, QString(),
            QStringLiteral("TLS: accept any server certificate (encrypted, not verified)."),
            QStringLiteral("connection.skip_verify"), false, QString(), setSkipVerify },
        { { QStringLiteral("authority") }, QStringLiteral("AUTHORITY"),
            QStringLiteral("Value of the :authority header."), QStringLiteral("connection.authority"), false,
            QStringLiteral("bench.example"), setText(&Scenario::authority) },
        { { QStringLiteral("m"), QStringLiteral("metadata") }, QStringLiteral("JSON"),
            QStringLiteral("Metadata sent with every call, as a JSON object of strings: '{\"key\":\"value\"}'."),
            QStringLiteral("metadata"), false, QStringLiteral("{\"x-run\":\"1\"}"), setMetadata },
        { { QStringLiteral("redact") }, QStringLiteral("KEY"),
            QStringLiteral("Also redact this metadata key's value in the history and reports (repeatable; "
                           "authorization, cookie, x-api-key and keys with token, secret, password or key always "
                           "are, and so are server command environment values)."),
            QStringLiteral("secrets.redact"), true, QStringLiteral("x-tenant"), addText(&Scenario::secretKeys) },
        { { QStringLiteral("keep-secrets") }, QString(),
            QStringLiteral("Store and export secret metadata and server environment values in clear (the run "
                           "records that it does)."),
            QStringLiteral("secrets.keep"), false, QString(), setOn(&Scenario::keepSecrets) },
    };
}

/// What the run leaves: the exit status on failed calls, output files and their charts.
QList<RunFlag> outputFlags()
{
    return {
        { { QStringLiteral("fail-on-error") }, QString(), QStringLiteral("Exit 1 when any call did not end OK."),
            QStringLiteral("fail_on_error"), false, QString(), setOn(&Scenario::failOnError) },
        { { QStringLiteral("O"), QStringLiteral("output-format") }, QStringLiteral("FORMAT"),
            QStringLiteral(
                "Also write the run as FORMAT to the -o that follows (repeatable): summary, csv, csv-histogram, "
                "csv-timeline, csv-raw, json, ghz-json, hgrm, markdown, folded, flamegraph (with --profile), html, "
                "png, "
                "pdf, svg."),
            QStringLiteral("output.exports"), true, QStringLiteral("csv"), addExportFormat },
        { { QStringLiteral("o"), QStringLiteral("output") }, QStringLiteral("FILE"),
            QStringLiteral("File for the -O before it ('-' = standard output). Written whole or not at all."),
            QStringLiteral("output.exports.file"), true, QStringLiteral("run.csv"), addExportFile },
        { { QStringLiteral("chart") }, QStringLiteral("CHART"),
            QStringLiteral("For -O png|pdf|svg: histogram (default), spectrum, timeline, throughput or "
                           "message-histogram (streams). After a png/pdf/svg -o, that output's chart: "
                           "-O png -o a.png --chart spectrum -O png -o b.png --chart throughput."),
            QStringLiteral("output.chart"), false, QStringLiteral("timeline"), setText(&Scenario::chart) },
        { { QStringLiteral("chart-size") }, QStringLiteral("WxH"),
            QStringLiteral("For -O png|pdf|svg: WIDTHxHEIGHT (default 1000x600)."), QStringLiteral("output.chart_size"),
            false, QStringLiteral("800x500"), setText(&Scenario::chartSize) },
        { { QStringLiteral("chart-scale") }, QStringLiteral("S"),
            QStringLiteral("For -O png: pixels per point (default 2)."), QStringLiteral("output.chart_scale"), false,
            QStringLiteral("1"), setText(&Scenario::chartScale) },
    };
}

/// Judging and keeping the run: history, baseline comparison, checks and expected replies.
QList<RunFlag> verdictAndHistoryFlags()
{
    return {
        { { QStringLiteral("save") }, QString(),
            QStringLiteral("Save the run in the history (also implied by --db, --label, --name)."),
            QStringLiteral("history.save"), false, QString(), setOn(&Scenario::saveRun) },
        { { QStringLiteral("compare-to") }, QStringLiteral("RUN"),
            QStringLiteral(
                "After the run, compare it with this baseline (a history run: ID, last, last~N, label:NAME[~N]; "
                "or a JSON report) and exit 4 on a regression beyond --compare-threshold. One run against one "
                "run cannot know run-to-run noise: the verdict is inconclusive unless the runs are A/B sides; "
                "for a gate, compare several runs a side (compare label:base label:new)."),
            QStringLiteral("history.compare_to"), false, QStringLiteral("last"), setText(&Scenario::compareTo) },
        { { QStringLiteral("check") }, QStringLiteral("EXPR"),
            QStringLiteral(
                "A condition the run must meet, else exit 4 (repeatable): p99<10ms, p99.9<=25ms, mean<2ms, max<1s, "
                "rps>=5000, error_rate<0.1%, errors==0."),
            QStringLiteral("checks"), true, QStringLiteral("p99<20ms"), addText(&Scenario::checks) },
        { { QStringLiteral("expect") }, QStringLiteral("EXPR"),
            QStringLiteral(
                "What sampled replies must hold (repeatable): FIELD OP VALUE with OP = != < <= > >= (result=500500, "
                "items.length>=10, items[0].name=\"a\", status_text!=\"\"), or a JSON object the reply must contain "
                "('{\"result\":\"6\"}'). On a stream, every message of a sampled call. A reply that fails counts "
                "as UNEXPECTED_REPLY and the first few are kept and shown. Not checked with --discard-response "
                "(replies are not decoded)."),
            QStringLiteral("expect.replies"), true, QStringLiteral("result>0"), addText(&Scenario::expect) },
        { { QStringLiteral("expect-status") }, QStringLiteral("STATUS"),
            QStringLiteral(
                "The status the calls must end with, when it is not OK (repeatable, or comma-separated: "
                "NOT_FOUND, PERMISSION_DENIED,OK, 5): to benchmark an error path. Those calls are timed as the "
                "successful ones; any other status, OK included unless listed, counts as failed. HTTP replies map "
                "as gRPC maps them (404 UNIMPLEMENTED, 403 PERMISSION_DENIED, 503 UNAVAILABLE)."),
            QStringLiteral("expect.status"), true, QStringLiteral("NOT_FOUND"), addText(&Scenario::expectStatus) },
        { { QStringLiteral("expect-first") }, QStringLiteral("N"),
            QStringLiteral("--expect checks the first N replies (default 10), then one in --expect-every."),
            QStringLiteral("expect.first"), false, QStringLiteral("5"), setText(&Scenario::expectFirst) },
        { { QStringLiteral("expect-every") }, QStringLiteral("K"),
            QStringLiteral("After the first ones, --expect checks one reply in K (default 100; 1: every reply; 0: "
                           "no more)."),
            QStringLiteral("expect.every"), false, QStringLiteral("10"), setText(&Scenario::expectEvery) },
        { { QStringLiteral("compare-threshold") }, QStringLiteral("T"),
            QStringLiteral("Smallest change --compare-to counts as a regression or improvement (default 5%)."),
            QStringLiteral("history.compare_threshold"), false, QStringLiteral("3%"),
            setText(&Scenario::compareThreshold) },
        { { QStringLiteral("db") }, QStringLiteral("PATH"),
            QStringLiteral("Run history database (default: $RPCSCOPE_DB, else ~/.local/share/rpcscope/runs.sqlite)."),
            QStringLiteral("history.db"), false, QStringLiteral("runs.sqlite"), setText(&Scenario::db) },
        { { QStringLiteral("label") }, QStringLiteral("TEXT"),
            QStringLiteral("Label for the saved run, e.g. \"protobuf 4.25.8\" (repeatable)."),
            QStringLiteral("history.labels"), true, QStringLiteral("before"), addText(&Scenario::labels) },
        { { QStringLiteral("name") }, QStringLiteral("NAME"), QStringLiteral("Name of the saved run."),
            QStringLiteral("history.name"), false, QStringLiteral("baseline"), setText(&Scenario::name) },
    };
}

/// The server command's start-up: when it is ready.
QList<RunFlag> serverCommandFlags()
{
    return {
        { { QStringLiteral("ready") }, QStringLiteral("REGEX"),
            QStringLiteral("Server command: ready when an output line matches REGEX (default: when its {port} accepts "
                           "connections)."),
            QStringLiteral("server_command.ready"), false, QStringLiteral("listening on (\\S+)"),
            setText(&Scenario::readyPattern) },
        { { QStringLiteral("ready-timeout") }, QStringLiteral("DURATION"),
            QStringLiteral("Server command: how long it may take to get ready (default 10s)."),
            QStringLiteral("server_command.ready_timeout"), false, QStringLiteral("30s"),
            setText(&Scenario::readyTimeout) },
    };
}

/// CPU profiles of the timed phase: of the server, of rpcscope's own client.
QList<RunFlag> profileFlags()
{
    return {
        { { QStringLiteral("profile") }, QString(),
            QStringLiteral("Profile the server's CPU during the timed phase (the servers rpcscope starts, or the local "
                           "process listening on the target's port) and print where its time per call goes."),
            QStringLiteral("profile.server"), false, QString(), setOn(&Scenario::profileServer) },
        { { QStringLiteral("profile-client") }, QString(),
            QStringLiteral("Profile rpcscope's own process the same way (encoding, decoding, the transport)."),
            QStringLiteral("profile.client"), false, QString(), setOn(&Scenario::profileClient) },
        { { QStringLiteral("profiler") }, QStringLiteral("NAME"),
            QStringLiteral("auto (default: perf, and rpcscope's sampler in Python server commands), perf, python, "
                           "or a command that writes folded stacks, with {pid}, {seconds} and {out}, e.g. "
                           "'py-spy record -p {pid} -d {seconds} -f raw -o {out}' (stopped by SIGINT)."),
            QStringLiteral("profile.profiler"), false, QStringLiteral("perf"), setText(&Scenario::profiler) },
        { { QStringLiteral("profile-period") }, QStringLiteral("DURATION"),
            QStringLiteral("CPU time between samples (default 10ms; 100us .. 100ms). Shorter gives more samples, and "
                           "on some virtual machines lower latency: see docs/profiling.md."),
            QStringLiteral("profile.period"), false, QStringLiteral("500us"), setText(&Scenario::profilePeriod) },
        { { QStringLiteral("profile-call-graph") }, QStringLiteral("fp|dwarf"),
            QStringLiteral("How perf finds a sample's callers: fp (frame pointers, the default: cheap, but code built "
                           "without them loses its callers) or dwarf (unwinds a copy of the stack after the run: "
                           "whole stacks for any native code, 8 KiB a sample, a slower read)."),
            QStringLiteral("profile.call_graph"), false, QStringLiteral("dwarf"),
            setText(&Scenario::profileCallGraph) },
        { { QStringLiteral("profile-keep") }, QString(),
            QStringLiteral("Keep perf's recording for hotspot (in ~/.local/share/rpcscope/perf; the profile names it, "
                           "and the window opens it in hotspot)."),
            QStringLiteral("profile.keep"), false, QString(), setOn(&Scenario::profileKeep) },
        { { QStringLiteral("profile-pid") }, QStringLiteral("PID"),
            QStringLiteral("Profile this local process (and its children) as the server, rather than the one "
                           "listening on the target's port; implies --profile. Never kept in a scenario file."),
            QStringLiteral("profile.pid"), false, QStringLiteral("1"),
            setNumber(&Scenario::profilePid, 1, std::numeric_limits<int>::max()) },
        { { QStringLiteral("client") }, QStringLiteral("COMMAND"),
            QStringLiteral("A client command makes the calls instead of rpcscope's client: your own client, in its "
                           "language and library, reporting each call as docs/client-protocol.md says ({target} "
                           "becomes the address). Closed loop, by -n or -z, -c callers. Never kept in a scenario "
                           "file."),
            QStringLiteral("client.command"), false, QStringLiteral("sh -c true"), setText(&Scenario::clientCommand) },
        { { QStringLiteral("client-env") }, QStringLiteral("NAME=VALUE"),
            QStringLiteral("An environment variable for the client command (repeatable); {target} in it becomes the "
                           "address."),
            QStringLiteral("client.env"), true, QStringLiteral("A=1"), addText(&Scenario::clientEnvironment) },
    };
}

} // namespace

const QList<RunFlag> &runFlags()
{
    static const QList<RunFlag> flags = callFlags() + loadFlags() + concurrencyScheduleFlags() + clientFlags()
        + connectionFlags() + outputFlags() + verdictAndHistoryFlags() + serverCommandFlags() + profileFlags();
    return flags;
}

QString flagFor(const QString &field)
{
    // "fills[2]" and "output.exports[0].format" are the flags of "fills" and "output.exports".
    static const QRegularExpression index(QStringLiteral("\\[[0-9]+\\]"));
    QString f = field;
    f.remove(index);
    if (f == u"output.exports.format")
        f = QStringLiteral("output.exports");
    // Fields a flag does not set one to one.
    if (f == u"connection")
        return QStringLiteral("the TLS flags (--cacert, --cert, --key, --cname, --skipTLS)");
    if (f == u"schema")
        return QStringLiteral("--proto/--protoset");
    if (f == u"load.rate_schedule")
        return QStringLiteral("--rps/--load-*");
    if (f == u"load.concurrency_schedule")
        return QStringLiteral("--concurrency-*");
    for (const RunFlag &flag : runFlags()) {
        if (flag.field == f)
            return flagName(flag.names.first());
    }
    return {};
}

bool flagReplaces(const QCommandLineParser &parser, const QString &field)
{
    static const QRegularExpression index(QStringLiteral("\\[[0-9]+\\]"));
    const QString f = QString(field).remove(index);
    for (const RunFlag &flag : runFlags()) {
        if (flag.field == f)
            return !flag.repeatable && parser.isSet(flag.names.first());
    }
    return false;
}

void addRunOptions(QCommandLineParser &parser)
{
    parser.setApplicationDescription(QStringLiteral(
        "Benchmarks one method, closed loop (-c callers) or open loop (--rps), and prints ghz's summary\n"
        "shape plus the time series, client/server CPU and RSS. Streaming methods (gRPC) count one call per stream\n"
        "and time every message too (--stream-*).\n"
        "Transports: grpc (default, target HOST:PORT), h2grpc (gRPC with rpcscope's own client on bare HTTP/2,\n"
        "nghttp2: far less client CPU per call; streams and TLS too, target HOST:PORT), http (target a URL;\n"
        "POSTs the request as JSON, msgpack or protobuf), msgpack (msgpack-rpc, target HOST:PORT), none (no RPC:\n"
        "only encode/decode, no target).\n"
        "Or --builtin to start the built-in server for the transport on a free loopback port.\n"
        "Schema: --proto or --protoset; without them the server's reflection service is asked (gRPC).\n"
        "A run in which calls fail exits 0 and shows the failures; add --fail-on-error to exit 1 instead."));
    parser.addHelpOption();
    parser.addPositionalArgument(QStringLiteral("target"),
        QStringLiteral("HOST:PORT of the server (grpc, msgpack), a URL (http), or a server command "
                       "to start and stop around the run ('./server --port {port}')."));
    for (const RunFlag &flag : runFlags())
        parser.addOption(QCommandLineOption(flag.names, flag.help, flag.valueName));
    const QList<QCommandLineOption> about {
        { { QStringLiteral("trust") },
            QStringLiteral(
                "Let --scenario start the server command it names (commands given on this command line always run).") },
        { { QStringLiteral("scenario") },
            QStringLiteral("Run a scenario document (*.rpcscope.json, as the GUI saves it); flags given too override "
                           "its values (repeatable ones such as --fill add to them)."),
            QStringLiteral("FILE") },
    };
    parser.addOptions(about);
}

std::optional<Scenario> scenarioFromFlags(const QCommandLineParser &parser, Scenario base, QString *error)
{
    auto fail = [error](const QString &why) {
        *error = why;
        return std::nullopt;
    };
    Scenario s = std::move(base);
    int requestWays = 0;
    for (const QString &name : kRequestFlags)
        requestWays += parser.isSet(name) ? 1 : 0;
    if (requestWays > 1)
        return fail(QStringLiteral("give the request with one of -d, -D or -b"));
    const bool tlsFlags = parser.isSet(QStringLiteral("cacert")) || parser.isSet(QStringLiteral("cert"))
        || parser.isSet(QStringLiteral("key")) || parser.isSet(QStringLiteral("cname"))
        || parser.isSet(QStringLiteral("skipTLS"));
    if (tlsFlags && parser.isSet(QStringLiteral("insecure")))
        return fail(
            QStringLiteral("--insecure contradicts the TLS flags (--cacert, --cert, --key, --cname, --skipTLS)"));
    const QStringList positional = parser.positionalArguments().mid(1);
    if (positional.size() > 1)
        return fail(QStringLiteral("one target expected, got: %1").arg(positional.join(u' ')));
    if (!positional.isEmpty() && parser.isSet(QStringLiteral("builtin")))
        return fail(QStringLiteral("give either a target or --builtin, not both"));
    const qsizetype exportsBefore = s.exports.size();
    const QString chartBefore = s.chart;
    for (const RunFlag &flag : runFlags()) {
        const QString &name = flag.names.first();
        if (!parser.isSet(name))
            continue;
        // A switch is on once given; a value flag's last value wins, a repeatable one's values all count.
        const QStringList values = flag.valueName.isEmpty() ? QStringList { QString() }
            : flag.repeatable                               ? parser.values(name)
                                                            : QStringList { parser.value(name) };
        for (const QString &value : values) {
            QString why;
            if (!flag.set(s, value, &why))
                return fail(
                    QStringLiteral("%1: %2").arg(name == u"m" ? QStringLiteral("-m/--metadata") : flagName(name), why));
        }
    }
    // -O alone writes to standard output; otherwise -O and -o pair up.
    const qsizetype formats = parser.values(QStringLiteral("O")).size();
    const qsizetype files = parser.values(QStringLiteral("o")).size();
    if (formats == 1 && files == 0)
        s.exports.last().file = QStringLiteral("-");
    else if (formats != files)
        return fail(QStringLiteral("-O/-o: give them in pairs (-O csv -o run.csv), got %1 -O and %2 -o")
                        .arg(formats)
                        .arg(files));
    Q_ASSERT(s.exports.size() == exportsBefore + formats);
    // --chart right after a png/pdf/svg output's -o is that output's own chart; another is the chart of every
    // rendered output without one.
    if (parser.isSet(QStringLiteral("chart"))) {
        static const QStringList rendered { QStringLiteral("png"), QStringLiteral("pdf"), QStringLiteral("svg") };
        const ChartsByOutput charts = chartsByOutput(parser);
        s.chart = charts.others.isEmpty() ? chartBefore : charts.others;
        for (auto it = charts.own.begin(); it != charts.own.end(); ++it) {
            Scenario::Export &output = s.exports[exportsBefore + it.key()];
            if (rendered.contains(output.format))
                output.chart = it.value();
            else
                s.chart = it.value(); // after a csv's -o: not that output's, so everyone's
        }
    }
    if (!positional.isEmpty())
        s.target = positional.first();
    // Defaults that depend on what was given: a run bounded by time needs no default count, and a concurrency
    // schedule without -c makes as many callers as its highest point.
    if (!parser.isSet(QStringLiteral("n"))
        && (parser.isSet(QStringLiteral("z")) || parser.isSet(QStringLiteral("load-max-duration"))
            || parser.isSet(QStringLiteral("concurrency-max-duration"))))
        s.calls = 0;
    if (!parser.isSet(QStringLiteral("c")) && parser.isSet(QStringLiteral("concurrency-schedule")))
        s.concurrency = 0;
    return s;
}

QString describeForCli(const ScenarioProblem &problem, const Scenario &scenario)
{
    // The request's own errors (a field, a JSON position) speak for themselves; a file's name them.
    if (problem.field == u"request")
        return problem.message;
    if (problem.field == u"request_file" || problem.field == u"request_binary_file") {
        const QString flag = problem.field == u"request_file" ? QStringLiteral("-D") : QStringLiteral("-b");
        const QString path = requestSourceFile(scenario);
        return problem.message.startsWith(path) ? flag + QLatin1Char(' ') + problem.message
                                                : QStringLiteral("%1 %2: %3").arg(flag, path, problem.message);
    }
    if (problem.field == u"method")
        return scenario.method.trimmed().isEmpty() ? QStringLiteral("--call is required (package.Service/Method)")
                                                   : problem.message;
    if (problem.field == u"target")
        return problem.message;
    // Another field named in the message ("needs a baseline (history.compare_to)") is its flag too.
    QString message = problem.message;
    for (const RunFlag &flag : runFlags()) {
        if (flag.field.contains(QLatin1Char('.')) && message.contains(flag.field))
            message.replace(flag.field, flagName(flag.names.first()));
    }
    const QString flag = flagFor(problem.field);
    return flag.isEmpty() ? ScenarioProblem { problem.field, message }.text() : flag + QStringLiteral(": ") + message;
}

} // namespace rpcscope::cli
