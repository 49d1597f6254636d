#include "runoptions.h"

namespace rpcscope::cli {

void addRunOptions(QCommandLineParser &parser)
{
    parser.setApplicationDescription(QStringLiteral(
        "Benchmarks one method, closed loop (-c callers) or open loop (--rps), and prints ghz's summary\n"
        "shape plus the time series, client/server CPU and RSS. Streaming methods (gRPC) count one call per stream\n"
        "and time every message too (--stream-*).\n"
        "Transports: grpc (default, target HOST:PORT), http (target a URL; POSTs the request as JSON, msgpack or\n"
        "protobuf), msgpack (msgpack-rpc, target HOST:PORT), none (no RPC: only encode/decode, no target).\n"
        "Or --builtin to start the built-in server for the transport on a free loopback port.\n"
        "Schema: --proto or --protoset; without them the server's reflection service is asked (gRPC).\n"
        "A run in which calls fail exits 0 and shows the failures; add --fail-on-error to exit 1 instead."));
    parser.addHelpOption();
    parser.addPositionalArgument(QStringLiteral("target"),
        QStringLiteral("HOST:PORT of the server (grpc, msgpack), a URL (http), or a server command "
                       "to start and stop around the run ('./server --port {port}')."));
    const QList<QCommandLineOption> options {
        { QStringLiteral("proto"), QStringLiteral(".proto file with the service (repeatable)."),
            QStringLiteral("FILE") },
        { QStringLiteral("protoset"),
            QStringLiteral("Compiled descriptors (protoc --descriptor_set_out --include_imports), repeatable."),
            QStringLiteral("FILE") },
        { QStringLiteral("transport"), QStringLiteral("grpc (default), http, msgpack or none (no RPC, codec only)."),
            QStringLiteral("KIND") },
        { QStringLiteral("codec"),
            QStringLiteral(
                "Body encoding: protobuf, json or msgpack (default: protobuf for grpc and none, json for http, "
                "msgpack for msgpack)."),
            QStringLiteral("CODEC") },
        { QStringLiteral("rpc-method"),
            QStringLiteral("msgpack-rpc: method name to call (default: the proto method's name)."),
            QStringLiteral("NAME") },
        { QStringLiteral("msgpack-params"),
            QStringLiteral("msgpack-rpc: params as the request's fields in order (positional, default) or one map."),
            QStringLiteral("positional|map") },
        { { QStringLiteral("i"), QStringLiteral("import-paths") },
            QStringLiteral("Import path for .proto files (repeatable; the well-known types are built in)."),
            QStringLiteral("DIR") },
        { QStringLiteral("call"), QStringLiteral("Method to call: package.Service/Method."), QStringLiteral("METHOD") },
        { { QStringLiteral("d"), QStringLiteral("data") }, QStringLiteral("Request as JSON (proto3 JSON mapping)."),
            QStringLiteral("JSON") },
        { { QStringLiteral("D"), QStringLiteral("data-file") },
            QStringLiteral("Request as JSON, from a file; an array of objects is sent round-robin."),
            QStringLiteral("FILE") },
        { { QStringLiteral("b"), QStringLiteral("binary-file") },
            QStringLiteral("Request as a serialized protobuf message, from a file."), QStringLiteral("FILE") },
        { QStringLiteral("fill"),
            QStringLiteral("Size knob: a bytes/string field to SIZE bytes (payload=1MiB) or a repeated field to SIZE "
                           "elements (nums=1000). Repeatable."),
            QStringLiteral("FIELD=SIZE") },
        { { QStringLiteral("n"), QStringLiteral("total") },
            QStringLiteral("Number of timed calls (default 200 unless -z is given)."), QStringLiteral("N") },
        { { QStringLiteral("c"), QStringLiteral("concurrency") },
            QStringLiteral("Concurrent callers, one call in flight each (default 50)."), QStringLiteral("C") },
        { { QStringLiteral("z"), QStringLiteral("duration") },
            QStringLiteral("Length of the timed phase, e.g. 10s; with -n too, whichever comes first ends the run."),
            QStringLiteral("DURATION") },
        { QStringLiteral("warmup"),
            QStringLiteral(
                "Warm-up made first and left out of the statistics: N calls or a duration like 5s (default 0)."),
            QStringLiteral("N|DURATION") },
        { QStringLiteral("rps"),
            QStringLiteral("Open loop: send R calls per second whatever the replies do; -c caps the calls in flight. "
                           "Latency counts from each call's intended send time."),
            QStringLiteral("R") },
        { QStringLiteral("load-schedule"), QStringLiteral("Open-loop rate schedule: const (with --rps), step or line."),
            QStringLiteral("const|step|line") },
        { QStringLiteral("load-start"), QStringLiteral("Schedule: starting rate (calls/s)."), QStringLiteral("R") },
        { QStringLiteral("load-step"),
            QStringLiteral(
                "Schedule: rate added every --load-step-duration (step) or every second (line); may be negative."),
            QStringLiteral("R") },
        { QStringLiteral("load-end"), QStringLiteral("Schedule: the rate stays here once reached."),
            QStringLiteral("R") },
        { QStringLiteral("load-step-duration"), QStringLiteral("Schedule (step): length of each step (default 1s)."),
            QStringLiteral("DURATION") },
        { QStringLiteral("load-max-duration"), QStringLiteral("Schedule: stop sending after this long."),
            QStringLiteral("DURATION") },
        { QStringLiteral("interval"), QStringLiteral("Time-series resolution (default 1s)."),
            QStringLiteral("DURATION") },
        { QStringLiteral("raw-samples"),
            QStringLiteral("Keep every timed call and write them to FILE as CSV (sent_ns,latency_us,status); 16 bytes "
                           "per call in memory."),
            QStringLiteral("FILE") },
        { QStringLiteral("concurrency-schedule"),
            QStringLiteral(
                "Closed loop with a changing number of callers: const, step or line (with --concurrency-*)."),
            QStringLiteral("const|step|line") },
        { QStringLiteral("concurrency-start"), QStringLiteral("Concurrency schedule: callers at the start."),
            QStringLiteral("N") },
        { QStringLiteral("concurrency-step"),
            QStringLiteral(
                "Concurrency schedule: callers added every --concurrency-step-duration (step) or per second (line)."),
            QStringLiteral("N") },
        { QStringLiteral("concurrency-end"), QStringLiteral("Concurrency schedule: callers stay here once reached."),
            QStringLiteral("N") },
        { QStringLiteral("concurrency-step-duration"),
            QStringLiteral("Concurrency schedule (step): length of each step (default 1s)."),
            QStringLiteral("DURATION") },
        { QStringLiteral("concurrency-max-duration"), QStringLiteral("Concurrency schedule: stop after this long."),
            QStringLiteral("DURATION") },
        { { QStringLiteral("t"), QStringLiteral("timeout") },
            QStringLiteral("Deadline of each call (default 20s; 0 = none)."), QStringLiteral("DURATION") },
        { QStringLiteral("connections"),
            QStringLiteral(
                "Connections; callers are spread evenly over them. grpc, msgpack: default 1, many calls each. "
                "http: default one per caller (HTTP/1.1 carries one call at a time)."),
            QStringLiteral("K") },
        { QStringLiteral("cpus"),
            QStringLiteral("Client threads polling gRPC (default 1, one more per 64 callers up to the cores). One is "
                           "fastest when the client has a core to itself."),
            QStringLiteral("N") },
        { QStringLiteral("client-cpus"),
            QStringLiteral("Pin rpcscope-cli (all its threads) to these CPUs, as taskset -c lists them: 0, 0,2, 1-3. "
                           "With --server-cpus, client and server stop competing for cores."),
            QStringLiteral("LIST") },
        { QStringLiteral("server-cpus"),
            QStringLiteral("Pin the server rpcscope starts (--builtin or a server command) to these CPUs."),
            QStringLiteral("LIST") },
        { QStringLiteral("discard-response"),
            QStringLiteral("Count reply bytes and status but do not decode replies.") },
        { QStringLiteral("stream-call-count"),
            QStringLiteral(
                "Streaming methods (gRPC): messages each client or bidi stream sends, cycling through the "
                "requests (default each request once); on a server stream, replies after which the client ends "
                "the call (default: read to the end)."),
            QStringLiteral("N") },
        { QStringLiteral("stream-interval"),
            QStringLiteral(
                "Streaming methods: wait between the client's messages on a stream, e.g. 10ms (default none)."),
            QStringLiteral("DURATION") },
        { QStringLiteral("stream-call-duration"),
            QStringLiteral(
                "Streaming methods: the client ends each call after this long (a client or bidi stream closes "
                "its side, a server stream is cancelled; counted OK)."),
            QStringLiteral("DURATION") },
        { QStringLiteral("stream-ping-pong"),
            QStringLiteral(
                "Bidi streams: send each message once the reply to the previous one is in, so each message's "
                "latency is one round trip with nothing queued before it.") },
        { QStringLiteral("max-recv-size"),
            QStringLiteral("Largest reply accepted, e.g. 64MiB (default gRPC's 4 MiB; larger replies fail with "
                           "RESOURCE_EXHAUSTED)."),
            QStringLiteral("SIZE") },
        { QStringLiteral("max-send-size"), QStringLiteral("Largest request sent, e.g. 64MiB (default unlimited)."),
            QStringLiteral("SIZE") },
        { QStringLiteral("builtin"),
            QStringLiteral("Start the built-in server (a child process) for this run; uses the bundled bench proto "
                           "unless --proto.") },
        { QStringLiteral("insecure"),
            QStringLiteral(
                "Plaintext connection (the default for loopback targets; remote ones use TLS unless this is given).") },
        { QStringLiteral("cacert"), QStringLiteral("TLS: trust the CA certificates in this PEM file."),
            QStringLiteral("FILE") },
        { QStringLiteral("cert"), QStringLiteral("TLS: client certificate (PEM) for mutual TLS; needs --key."),
            QStringLiteral("FILE") },
        { QStringLiteral("key"), QStringLiteral("TLS: client private key (PEM)."), QStringLiteral("FILE") },
        { QStringLiteral("cname"),
            QStringLiteral("TLS: check the server certificate against this name instead of the host."),
            QStringLiteral("NAME") },
        { QStringLiteral("skipTLS"), QStringLiteral("TLS: accept any server certificate (encrypted, not verified).") },
        { QStringLiteral("authority"), QStringLiteral("Value of the :authority header."), QStringLiteral("AUTHORITY") },
        { { QStringLiteral("m"), QStringLiteral("metadata") },
            QStringLiteral("Metadata sent with every call, as a JSON object of strings: '{\"key\":\"value\"}'."),
            QStringLiteral("JSON") },
        { QStringLiteral("fail-on-error"), QStringLiteral("Exit 1 when any call did not end OK.") },
        { { QStringLiteral("O"), QStringLiteral("output-format") },
            QStringLiteral(
                "Also write the run as FORMAT to the -o that follows (repeatable): summary, csv, csv-histogram, "
                "csv-timeline, csv-raw, json, ghz-json, hgrm, markdown, html, png, pdf, svg."),
            QStringLiteral("FORMAT") },
        { { QStringLiteral("o"), QStringLiteral("output") },
            QStringLiteral("File for the -O before it ('-' = standard output). Written whole or not at all."),
            QStringLiteral("FILE") },
        { QStringLiteral("chart"),
            QStringLiteral("For -O png|pdf|svg: histogram (default), spectrum, timeline, throughput or "
                           "message-histogram (streams)."),
            QStringLiteral("CHART") },
        { QStringLiteral("chart-size"), QStringLiteral("For -O png|pdf|svg: WIDTHxHEIGHT (default 1000x600)."),
            QStringLiteral("WxH") },
        { QStringLiteral("chart-scale"), QStringLiteral("For -O png: pixels per point (default 2)."),
            QStringLiteral("S") },
        { QStringLiteral("save"),
            QStringLiteral("Save the run in the history (also implied by --db, --label, --name).") },
        { QStringLiteral("compare-to"),
            QStringLiteral(
                "After the run, compare it with this baseline (a history run: ID, last, last~N, label:NAME[~N]; "
                "or a JSON report) and exit 4 on a regression beyond --compare-threshold. One run against one "
                "run cannot know run-to-run noise: the verdict is inconclusive unless the runs are A/B sides; "
                "for a gate, compare several runs a side (compare label:base label:new)."),
            QStringLiteral("RUN") },
        { QStringLiteral("check"),
            QStringLiteral(
                "A condition the run must meet, else exit 4 (repeatable): p99<10ms, p99.9<=25ms, mean<2ms, max<1s, "
                "rps>=5000, error_rate<0.1%, errors==0."),
            QStringLiteral("EXPR") },
        { QStringLiteral("compare-threshold"),
            QStringLiteral("Smallest change --compare-to counts as a regression or improvement (default 5%)."),
            QStringLiteral("T"), QStringLiteral("5%") },
        { QStringLiteral("db"), QStringLiteral("Run history database (default ~/.local/share/rpcscope/runs.sqlite)."),
            QStringLiteral("PATH") },
        { QStringLiteral("label"), QStringLiteral("Label for the saved run, e.g. \"protobuf 4.25.8\" (repeatable)."),
            QStringLiteral("TEXT") },
        { QStringLiteral("name"), QStringLiteral("Name of the saved run."), QStringLiteral("NAME") },
        { QStringLiteral("trust"),
            QStringLiteral(
                "Let --scenario start the server command it names (commands given on this command line always run).") },
        { QStringLiteral("ready"),
            QStringLiteral("Server command: ready when an output line matches REGEX (default: when its {port} accepts "
                           "connections)."),
            QStringLiteral("REGEX") },
        { QStringLiteral("ready-timeout"),
            QStringLiteral("Server command: how long it may take to get ready (default 10s)."),
            QStringLiteral("DURATION") },
        { QStringLiteral("scenario"),
            QStringLiteral("Run a scenario document (*.rpcscope.json, as the GUI saves it); flags given too override "
                           "its values (repeatable ones such as --fill add to them)."),
            QStringLiteral("FILE") },
    };
    parser.addOptions(options);
}

} // namespace rpcscope::cli
