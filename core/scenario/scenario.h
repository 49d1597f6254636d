#pragma once

#include <QByteArray>
#include <QList>
#include <QPair>
#include <QString>
#include <QStringList>

#include <optional>

namespace rpcscope {

/**
 * What is wrong with a Scenario, named by its field as the document spells it ("load.concurrency", "request",
 * "fills[1]", "connection.cert"), so each front end can word it in its own terms: the CLI names the flag behind the
 * field (-c), the GUI the widget.
 */
struct ScenarioProblem {
    QString field;
    QString message;
    /// Not the input's fault: the work could not be done (a server did not answer). The CLI exits 3, not 2.
    bool runtime = false;
    /// "field: message", as a document reader words it.
    QString text() const { return field.isEmpty() ? message : field + QStringLiteral(": ") + message; }
};

/// How much Scenario::fromJson() checks: the values too (what runs a document), or its shape only (what opens a
/// draft in the editor, which shows the values' problems as it validates).
enum class DocumentCheck { Values, ShapeOnly };

/// A schedule as the user wrote it (CLI flags, GUI fields): values are text, checked when a run is prepared.
struct ScheduleText {
    QString kind = QStringLiteral("step"); ///< const, step or line
    QString start;
    QString step;
    QString end;
    QString stepDuration;
    QString maxDuration;
    bool operator==(const ScheduleText &) const = default;
};

/**
 * A benchmark scenario as a document (`*.rpcscope.json`): what the GUI's scenario editor holds and what
 * `rpcscope-cli run --scenario FILE` runs. Values are kept as the user wrote them (durations like "10s", sizes
 * like "4MiB"), so a document round-trips exactly; they are checked when a run is prepared (prepareRun() in
 * runspec.h), whichever front end it came from: `run`'s flags map onto its fields one to one (app/cli/runflags). The
 * request is kept as text, never re-serialized (64-bit integers and templates survive).
 */
struct Scenario {
    static constexpr int kFormatVersion = 1;

    // Schema: .proto files (with import paths) or protosets; none = the built-in bench schema, or the server's
    // reflection for a gRPC target that is not built in. Relative paths are relative to the document's folder.
    QStringList protos;
    QStringList importPaths;
    QStringList protosets;

    QString method; ///< "package.Service/Method"
    QString transport = QStringLiteral("grpc"); ///< grpc, http, msgpack, none
    QString codec; ///< empty = the transport's default
    QString rpcMethod; ///< msgpack-rpc method name; empty = the proto method's name
    /// HTTP: the URL path to POST to when the target gives none (a server command, a URL without a path); empty =
    /// the URL's own path, else /package.Service/Method as the built-in server expects.
    QString httpPath;
    bool msgpackParamsMap = false;
    QString target = QStringLiteral("builtin"); ///< "builtin" (the built-in server for the transport) or an address/URL

    QByteArray request; ///< JSON text (an object, an array, or a template)
    QStringList fills; ///< "payload=1KiB"
    QList<QPair<QString, QString>> metadata; ///< sent with every call (gRPC metadata, HTTP headers)

    // Load.
    quint64 calls = 200; ///< 0 = bounded by duration only
    int concurrency = 50; ///< 0 with a concurrency schedule: as many callers as its highest point
    QString duration; ///< empty = by count
    QString rate; ///< empty = closed loop
    QString warmup = QStringLiteral("0"); ///< calls or a duration
    QString timeout = QStringLiteral("20s");
    int connections = -1; ///< -1 = the transport's default
    bool discardResponse = false;
    QString maxReceiveSize; ///< empty = default
    QString maxSendSize;
    QString http2Window; ///< h2grpc's per-stream flow-control window; empty = default
    std::optional<ScheduleText> rateSchedule;
    std::optional<ScheduleText> concurrencySchedule;
    // Streaming methods (gRPC): --stream-call-count, --stream-interval, --stream-call-duration; empty = default.
    QString streamCallCount;
    QString streamInterval;
    QString streamCallDuration;
    bool streamPingPong = false; ///< --stream-ping-pong
    /// A plan split over workers (--segment I/N, load/segment.h): this run sends segment I's share; empty = all of it.
    QString segment;
    /// --start-at: the timed phase starts at this wall-clock time (RFC 3339, or Unix seconds); empty = at once.
    QString startAt;

    // Connection (gRPC). TLS in ghz's terms; file paths are relative to the document's folder, like the protos.
    /// "auto" (loopback targets plaintext, others TLS, as the CLI), "plaintext" (--insecure) or "tls". Any TLS
    /// setting below means TLS, as its flag does.
    QString security = QStringLiteral("auto");
    QString caCert; ///< --cacert: trust these CAs (PEM); empty = the system's
    QString clientCert; ///< --cert: mutual TLS; needs clientKey
    QString clientKey; ///< --key
    QString serverName; ///< --cname: the name checked against the server's certificate
    bool skipVerify = false; ///< --skipTLS
    QString authority; ///< --authority: the :authority header; empty = from the target

    // Advanced.
    int clientThreads = 0; ///< --cpus: gRPC client threads; 0 = automatic
    QString interval; ///< --interval: time-series resolution; empty = 1s
    QString rawSamples; ///< --raw-samples: CSV of every timed call, written when the run ends; empty = none
    QString requestBinaryFile; ///< -b: the request as a serialized message from this file, instead of `request`
    QString requestFile; ///< -D: the request as JSON from this file (read when the run is prepared), not `request`
    QStringList checks; ///< --check: bounds the run must meet ("p99<20ms", "error_rate<0.1%"); see compare/checks.h
    /// --expect: what sampled replies must hold ("result=500500", "items.length>=10", a JSON object); see
    /// engine/expectations.h. expectFirst/expectEvery (--expect-first, --expect-every): which replies are checked, the
    /// first N then one in K (empty: 10 and 100).
    QStringList expect;
    QString expectFirst;
    QString expectEvery;
    /// --expect-status: the statuses that count as success, by name or number ("NOT_FOUND"); empty: OK.
    QStringList expectStatus;
    bool failOnError = false; ///< --fail-on-error: a run in which any call failed counts as failed (CLI: exit 1)

    // A target that is a server command: when it is ready.
    QString readyPattern; ///< --ready: an output line matching this regular expression; empty = its port accepts
    QString readyTimeout; ///< --ready-timeout: how long it may take; empty = 10s

    // CPU pinning, as taskset -c lists CPUs ("0", "0,2", "1-3"); empty = not pinned.
    QString clientCpus; ///< --client-cpus: rpcscope's own threads
    QString serverCpus; ///< --server-cpus: the server rpcscope starts (built-in or a command)

    // CPU profiles of the timed phase (profile/profiler.h).
    bool profileServer = false; ///< --profile: the server's processes (started by rpcscope, or listening locally)
    bool profileClient = false; ///< --profile-client: rpcscope's own process
    /// --profiler: auto, perf or python; a command ({pid}, {seconds}, {out}) only from the command line or the
    /// window: a shared document may not run one. Empty = auto.
    QString profiler;
    QString profilePeriod; ///< --profile-period: CPU time between samples; empty = 10ms
    QString profileCallGraph; ///< --profile-call-graph: how perf finds callers, fp or dwarf; empty = fp
    bool profileKeep = false; ///< --profile-keep: perf's recording kept for hotspot (perfKeepDir())
    /// --profile-pid: the local server to profile, by process id (and its children). The command line's alone: a
    /// document never carries one (a process id means nothing on another machine, and a shared file must not
    /// point the profiler at the reader's own processes).
    qint64 profilePid = 0;

    /// --client: a client command makes the calls (client/clientcommand.h, issue 36), not rpcscope's own client;
    /// empty = rpcscope's. The command line's or the window's alone: a document never names one (it would run it).
    QString clientCommand;
    QStringList clientEnvironment; ///< --client-env: NAME=VALUE for the client command, in order

    // Outputs written when the run ends.
    struct Export {
        QString format; ///< an exportFormatNames() name, or png, pdf, svg
        QString file; ///< "-" = standard output
        QString chart; ///< png/pdf/svg: this output's chart (--chart after its -o); empty = `chart` below
        bool operator==(const Export &) const = default;
    };
    QList<Export> exports; ///< -O FORMAT -o FILE
    QString chart; ///< --chart: the chart of png/pdf/svg exports without one of their own; empty = histogram
    QString chartSize; ///< --chart-size WIDTHxHEIGHT; empty = 1000x600
    QString chartScale; ///< --chart-scale; empty = 2

    // The run history.
    bool saveRun = false; ///< --save; also implied by db, labels and name
    QString db; ///< --db: the history database; empty = RunStore::chosenPath()
    QStringList labels; ///< --label
    QString name; ///< --name
    QString compareTo; ///< --compare-to: a baseline (history run or JSON report) compared with when the run ends
    QString compareThreshold; ///< --compare-threshold; empty = 5%

    // How an A/B comparison of this scenario is run (`ab`, Run > Compare A/B); its two targets are given there, never
    // here, so a shared document cannot start programs through them.
    QString abBlock; ///< --block: calls or a duration per block; empty = automatic
    int abRestarts = 0; ///< --restarts: server processes per command side over the run; 0 = automatic
    QString abConnection; ///< --connection: "kept" or "per-block"; empty = kept
    QString abThreshold; ///< --threshold: the smallest change that counts; empty = 5%
    bool abUntilDecided = false; ///< --until-decided: judge every pair of blocks, stop once decided
    QString abMaxDuration; ///< --max-duration: a wall-clock limit for the whole A/B run; empty = none

    // Secrets (store/secrets.h): what the history and reports keep of metadata values and server environments.
    QStringList secretKeys; ///< --redact: metadata keys redacted besides the usual ones (authorization, *token* ...)
    bool keepSecrets = false; ///< --keep-secrets: store and export them in clear (the run says so)

    /// True when any TLS setting is given (which alone asks for TLS, as the CLI's flags do).
    bool hasTlsSettings() const;
    /**
     * The first problem with the values alone (no file read, no schema): transport and codec names, the security
     * mode and its settings, check syntax, the A/B connection. prepareRun() starts with it; fromJson() uses it.
     */
    std::optional<ScenarioProblem> valueProblem() const;
    /// Clears the TLS settings (CA, client certificate and key, server name, skip verification).
    void clearTlsSettings();
    /// True when the run is to be kept in the history (save, or a db, label or name given).
    bool savesRun() const { return saveRun || !db.isEmpty() || !labels.isEmpty() || !name.isEmpty(); }

    bool operator==(const Scenario &) const = default;

    /**
     * What the whole plan is, as 16 hex digits: a hash of the document without what only one worker or the outputs
     * change (segment, start time, exports, history, checks, comparison). The segments of one split run share it.
     */
    QString planFingerprint() const;

    QByteArray toJson() const;
    /// Parses a document; std::nullopt with @p error naming the line/column of a syntax error or the field
    /// ("load.concurrency: expected a whole number from 1 to 100000").
    static std::optional<Scenario> fromJson(
        const QByteArray &json, QString *error, DocumentCheck check = DocumentCheck::Values);

    /// Reads @p path; relative schema paths are resolved against its folder. Errors start with the path.
    static std::optional<Scenario> load(
        const QString &path, QString *error, DocumentCheck check = DocumentCheck::Values);
    /// Writes @p path atomically (a temporary file renamed over it: never half-written); schema paths under the
    /// document's folder are stored relative to it. False with @p error naming the path.
    bool save(const QString &path, QString *error) const;

private:
    /// Every file path the document holds (schema, TLS files, raw samples), for making them relative and back.
    QList<QString *> filePaths();
};

/// True for localhost, 127.x.x.x and ::1 (with or without a port): what "auto" security dials in plaintext.
bool isLoopbackAddress(const QString &address);

} // namespace rpcscope
