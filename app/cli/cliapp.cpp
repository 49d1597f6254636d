#include "cliapp.h"
#include "abcommand.h"
#include "codecscommand.h"
#include "comparecommand.h"
#include "exportcommand.h"
#include "historycommand.h"
#include "matrixcommand.h"
#include "renderedexport.h"
#include "runoptions.h"
#include "servecommand.h"

#include "compare/checks.h"
#include "engine/callsetup.h"
#include "engine/loadengine.h"
#include "export/exporter.h"
#include "report/rawsamples.h"
#include "report/textreport.h"
#include "scenario/scenario.h"
#include "schema/schema.h"
#include "server/builtingrpcserver.h"
#include "server/builtinhttpserver.h"
#include "server/servercommand.h"
#include "server/serverprocess.h"
#include "store/environment.h"
#include "store/runstore.h"
#include "transport/transports.h"
#include "util/buildinfo.h"
#include "util/cpuset.h"
#include "util/units.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDateTime>
#include <QFile>
#include <QFileInfo>
#include <QGuiApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>
#include <QMap>
#include <QSaveFile>
#include <QTextStream>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <functional>
#include <limits>
#include <pthread.h>
#include <thread>

namespace rpcscope::cli {

QTextStream &out()
{
    static QTextStream stream(stdout);
    return stream;
}

QTextStream &err()
{
    static QTextStream stream(stderr);
    return stream;
}

QString historyPath(const QCommandLineParser &parser)
{
    return parser.isSet(QStringLiteral("db")) ? parser.value(QStringLiteral("db")) : RunStore::defaultPath();
}

void printMachineNoiseWarnings()
{
    for (const QString &warning : machineNoiseWarnings())
        err() << "warning: " << warning << '\n';
    err().flush();
}

int usageError(const QString &command, const QString &message)
{
    err() << "rpcscope-cli " << command << ": " << message << '\n' << "Try 'rpcscope-cli " << command << " --help'.\n";
    err().flush();
    return ExitUsage;
}

sigset_t terminationSignals()
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    return set;
}

namespace {

/// Runs @p onSignal on a helper thread when SIGINT or SIGTERM arrives; the signals are blocked everywhere else.
class SignalWatcher {
public:
    explicit SignalWatcher(std::function<void(int)> onSignal)
        : m_thread([onSignal = std::move(onSignal)] {
            sigset_t set = terminationSignals();
            sigaddset(&set, SIGUSR2);
            int signal = 0;
            while (sigwait(&set, &signal) == 0) {
                if (signal == SIGUSR2) // our own wake-up: the watcher is being destroyed
                    return;
                onSignal(signal);
            }
        })
    {
    }
    ~SignalWatcher()
    {
        pthread_kill(m_thread.native_handle(), SIGUSR2);
        m_thread.join();
    }

private:
    std::thread m_thread;
};

const char *const kGeneralHelp = R"(Usage: rpcscope-cli COMMAND [OPTIONS]

Commands:
  run      benchmark a method: latency histogram, percentiles, throughput, status codes
  matrix   run one method over transports x codecs x payloads, one table with the codec's share
  serve    run a built-in server (serve grpc|http|msgpack|all)
  codecs   time encode/decode per codec for a message (no network)
  history  the saved runs: list, show, delete, rename, label
  ab       one scenario against two servers (commands, addresses or builtin) in alternating blocks, with a verdict
  export   write a saved run as csv, json, ghz-json, hgrm, markdown, ... (export ID -O FORMAT -o FILE)
  import   add ghz JSON reports or rpcscope JSON reports to the history
  compare  compare two runs (history IDs or JSON reports): delta table and a verdict with a confidence interval

Run 'rpcscope-cli COMMAND --help' for a command's options.

Exit codes: 0 success; 1 calls failed and --fail-on-error was given; 2 bad usage or input;
3 the work could not be done (e.g. a server could not start); 4 the numbers failed a check: compare, ab or
run --compare-to found a regression, or a run --check did not hold.
)";

} // namespace

/// `run`: parses @p arguments, runs, and prints the report; with @p outcome set, fills it instead of printing.
int runOnce(const QStringList &arguments, RunOutcome *outcome, PreparedRun *prepared)
{
    const QString cmd = prepared ? QStringLiteral("ab") : outcome ? QStringLiteral("matrix") : QStringLiteral("run");
    QCommandLineParser parser;
    addRunOptions(parser);
    if (!parser.parse(arguments))
        return usageError(cmd, parser.errorText());
    if (parser.isSet(QStringLiteral("help"))) {
        out() << parser.helpText();
        return ExitOk;
    }
    const QStringList positional = parser.positionalArguments().mid(1);
    if (parser.isSet(QStringLiteral("scenario"))) {
        // The document becomes flags ahead of the user's own, so one parser checks both and later flags win.
        QString why;
        const std::optional<Scenario> scenario = Scenario::load(parser.value(QStringLiteral("scenario")), &why);
        if (!scenario)
            return usageError(cmd, QStringLiteral("--scenario ") + why);
        const bool userTarget = !positional.isEmpty() || parser.isSet(QStringLiteral("builtin"));
        // A document can start a program: only with the user's say-so (the file may come from anywhere).
        if (!userTarget && looksLikeCommand(scenario->target) && !parser.isSet(QStringLiteral("trust")))
            return usageError(cmd,
                QStringLiteral("--scenario %1 starts a server command: %2\nRun it with --trust if you "
                               "trust that file, or give the target on the command line.")
                    .arg(parser.value(QStringLiteral("scenario")), scenario->target));
        QStringList combined { arguments.value(0), arguments.value(1) };
        combined += scenario->toRunArguments(!userTarget);
        for (qsizetype i = 2; i < arguments.size(); ++i) {
            if (arguments.at(i) == u"--scenario") {
                ++i;
                continue;
            }
            if (!arguments.at(i).startsWith(QStringLiteral("--scenario=")))
                combined << arguments.at(i);
        }
        return runOnce(combined, outcome, prepared);
    }
    TransportOptions transport;
    if (parser.isSet(QStringLiteral("transport"))) {
        const auto kind = parseTransport(parser.value(QStringLiteral("transport")));
        if (!kind)
            return usageError(cmd,
                QStringLiteral("--transport: \"%1\" is not grpc, http, msgpack or none")
                    .arg(parser.value(QStringLiteral("transport"))));
        transport.kind = *kind;
    }
    if (parser.isSet(QStringLiteral("codec"))) {
        transport.codec = parseCodec(parser.value(QStringLiteral("codec")));
        if (!transport.codec)
            return usageError(cmd,
                QStringLiteral("--codec: \"%1\" is not protobuf, json or msgpack")
                    .arg(parser.value(QStringLiteral("codec"))));
    }
    transport.rpcMethod = parser.value(QStringLiteral("rpc-method"));
    if (parser.isSet(QStringLiteral("msgpack-params"))) {
        const QString form = parser.value(QStringLiteral("msgpack-params"));
        if (form != u"positional" && form != u"map")
            return usageError(cmd, QStringLiteral("--msgpack-params: \"%1\" is not positional or map").arg(form));
        transport.msgpackParamsMap = form == u"map";
    }
    const bool inProcess = transport.kind == TransportKind::InProcess;
    const bool builtin = parser.isSet(QStringLiteral("builtin")) || (inProcess && positional.isEmpty());
    const QString targetForm
        = transport.kind == TransportKind::Http ? QStringLiteral("a URL") : QStringLiteral("HOST:PORT");
    if (positional.size() > 1)
        return usageError(cmd, QStringLiteral("one target expected, got: %1").arg(positional.join(u' ')));
    if (inProcess && !positional.isEmpty())
        return usageError(
            cmd, QStringLiteral("--transport none calls nothing: drop the target \"%1\"").arg(positional.first()));
    if (builtin && !positional.isEmpty())
        return usageError(cmd, QStringLiteral("give either a target %1 or --builtin, not both").arg(targetForm));
    if (!builtin && positional.isEmpty())
        return usageError(cmd, QStringLiteral("no target: give %1 or --builtin").arg(targetForm));
    if (!parser.isSet(QStringLiteral("call")))
        return usageError(cmd, QStringLiteral("--call is required (package.Service/Method)"));
    // CPU pinning: checked now, before any server starts.
    std::vector<int> clientCpus;
    std::vector<int> serverCpus;
    for (const auto &[flag, into] : { std::pair(QStringLiteral("client-cpus"), &clientCpus),
             std::pair(QStringLiteral("server-cpus"), &serverCpus) }) {
        if (!parser.isSet(flag))
            continue;
        QString why;
        const std::optional<std::vector<int>> cpus = parseCpuList(parser.value(flag), &why);
        if (!cpus)
            return usageError(cmd, QStringLiteral("--%1: ").arg(flag) + why);
        *into = *cpus;
    }
    // ab starts its servers itself; run pins only a server it starts.
    if (!serverCpus.empty() && !prepared && (inProcess || (!builtin && !looksLikeCommand(positional.first()))))
        return usageError(cmd,
            inProcess ? QStringLiteral("--server-cpus: --transport none starts no server")
                      : QStringLiteral("--server-cpus is for a server rpcscope starts (--builtin "
                                       "or a server command), not the address \"%1\"")
                            .arg(positional.first()));

    // Numbers and durations.
    auto parseCount = [&](const QString &name, uint64_t fallback, uint64_t minimum, uint64_t *value) -> bool {
        if (!parser.isSet(name)) {
            *value = fallback;
            return true;
        }
        bool ok = false;
        *value = parser.value(name).toULongLong(&ok);
        return ok && *value >= minimum;
    };
    LoadPlan plan;
    uint64_t concurrency = 0;
    uint64_t connections = 0;
    if (!parseCount(QStringLiteral("c"), 50, 1, &concurrency) || concurrency > 100000)
        return usageError(cmd,
            QStringLiteral("-c: expected a number from 1 to 100000, got \"%1\"")
                .arg(parser.value(QStringLiteral("c"))));
    plan.concurrency = static_cast<int>(concurrency);
    if (parser.isSet(QStringLiteral("z"))) {
        QString why;
        const auto d = parseDuration(parser.value(QStringLiteral("z")), &why);
        if (!d || d->count() <= 0)
            return usageError(cmd, QStringLiteral("-z: %1").arg(d ? QStringLiteral("must be positive") : why));
        plan.duration = *d;
    }
    if (!parseCount(QStringLiteral("n"), plan.duration.count() > 0 ? 0 : 200, 1, &plan.totalCalls))
        return usageError(
            cmd, QStringLiteral("-n: expected a number >= 1, got \"%1\"").arg(parser.value(QStringLiteral("n"))));
    if (QString why; !parseWarmup(parser.value(QStringLiteral("warmup")), &plan, &why))
        return usageError(cmd, QStringLiteral("--warmup: ") + why);
    auto durationFlag = [&](const QString &name, std::chrono::nanoseconds *into, QString *problem) {
        if (!parser.isSet(name))
            return true;
        QString why;
        const auto d = parseDuration(parser.value(name), &why);
        if (!d || d->count() <= 0) {
            *problem = QStringLiteral("--%1: %2").arg(name, d ? QStringLiteral("must be positive") : why);
            return false;
        }
        *into = *d;
        return true;
    };
    auto rateFlag = [&](const QString &name, double *into, QString *problem) {
        if (!parser.isSet(name))
            return true;
        bool ok = false;
        *into = parser.value(name).toDouble(&ok);
        if (!ok) {
            *problem = QStringLiteral("--%1: \"%2\" is not a number").arg(name, parser.value(name));
            return false;
        }
        return true;
    };
    QString problem;
    if (!durationFlag(QStringLiteral("interval"), &plan.interval, &problem))
        return usageError(cmd, problem);
    const QString schedule = parser.value(QStringLiteral("load-schedule"));
    if (parser.isSet(QStringLiteral("rps")) || parser.isSet(QStringLiteral("load-schedule"))) {
        RateSchedule rate;
        if (schedule.isEmpty() || schedule == u"const") {
            if (!parser.isSet(QStringLiteral("rps")))
                return usageError(cmd, QStringLiteral("--load-schedule const needs --rps"));
            if (!rateFlag(QStringLiteral("rps"), &rate.start, &problem))
                return usageError(cmd, problem);
        } else if (schedule == u"step" || schedule == u"line") {
            rate.kind = schedule == u"step" ? RateSchedule::Kind::Step : RateSchedule::Kind::Line;
            if (!parser.isSet(QStringLiteral("load-start")))
                return usageError(cmd, QStringLiteral("--load-schedule %1 needs --load-start").arg(schedule));
            if (!rateFlag(QStringLiteral("load-start"), &rate.start, &problem)
                || !rateFlag(QStringLiteral("load-step"), &rate.step, &problem)
                || !rateFlag(QStringLiteral("load-end"), &rate.end, &problem)
                || !durationFlag(QStringLiteral("load-step-duration"), &rate.stepDuration, &problem))
                return usageError(cmd, problem);
        } else {
            return usageError(cmd, QStringLiteral("--load-schedule: \"%1\" is not const, step or line").arg(schedule));
        }
        if (!durationFlag(QStringLiteral("load-max-duration"), &rate.maxDuration, &problem))
            return usageError(cmd, problem);
        if (const char *why = rate.problem())
            return usageError(cmd, QStringLiteral("--rps/--load-*: %1").arg(QString::fromLatin1(why)));
        // A schedule with its own end needs no default call count.
        if (!parser.isSet(QStringLiteral("n")) && (rate.maxDuration.count() > 0 || plan.duration.count() > 0))
            plan.totalCalls = 0;
        plan.rate = rate;
    }
    if (parser.isSet(QStringLiteral("concurrency-schedule"))) {
        const QString kind = parser.value(QStringLiteral("concurrency-schedule"));
        RateSchedule callers;
        if (kind == u"step")
            callers.kind = RateSchedule::Kind::Step;
        else if (kind == u"line")
            callers.kind = RateSchedule::Kind::Line;
        else if (kind != u"const")
            return usageError(
                cmd, QStringLiteral("--concurrency-schedule: \"%1\" is not const, step or line").arg(kind));
        if (!parser.isSet(QStringLiteral("concurrency-start")))
            return usageError(cmd, QStringLiteral("--concurrency-schedule needs --concurrency-start"));
        if (!rateFlag(QStringLiteral("concurrency-start"), &callers.start, &problem)
            || !rateFlag(QStringLiteral("concurrency-step"), &callers.step, &problem)
            || !rateFlag(QStringLiteral("concurrency-end"), &callers.end, &problem)
            || !durationFlag(QStringLiteral("concurrency-step-duration"), &callers.stepDuration, &problem)
            || !durationFlag(QStringLiteral("concurrency-max-duration"), &callers.maxDuration, &problem))
            return usageError(cmd, problem);
        if (plan.rate)
            return usageError(
                cmd, QStringLiteral("--concurrency-schedule is for closed-loop runs; drop --rps/--load-schedule"));
        if (const char *why = callers.problem())
            return usageError(cmd, QStringLiteral("--concurrency-*: %1").arg(QString::fromLatin1(why)));
        // Callers are made up front: the schedule's highest point, bounded by -c when given.
        double most = std::max(callers.start, callers.end);
        if (callers.step > 0 && callers.end <= 0) {
            if (callers.maxDuration.count() <= 0 && !parser.isSet(QStringLiteral("c")))
                return usageError(cmd,
                    QStringLiteral("a rising concurrency schedule needs --concurrency-end, "
                                   "--concurrency-max-duration or -c as its ceiling"));
            most = callers.maxDuration.count() > 0 ? callers.rateAt(callers.maxDuration) : 1e9;
        }
        if (!parser.isSet(QStringLiteral("c")))
            plan.concurrency = std::clamp(static_cast<int>(std::ceil(most)), 1, 100000);
        if (!parser.isSet(QStringLiteral("n")) && (callers.maxDuration.count() > 0 || plan.duration.count() > 0))
            plan.totalCalls = 0;
        plan.concurrencySchedule = callers;
    }
    const uint64_t defaultConnections = transport.kind == TransportKind::Http ? 0 : 1; // 0: one per caller
    if (!parseCount(QStringLiteral("connections"), defaultConnections, 1, &connections) || connections > 100000)
        return usageError(cmd,
            QStringLiteral("--connections: expected a number from 1 to 100000, got \"%1\"")
                .arg(parser.value(QStringLiteral("connections"))));
    GrpcTarget target;
    target.connections = static_cast<int>(connections);
    for (const auto &[flag, field] : { std::pair(QStringLiteral("max-recv-size"), &target.maxReceiveBytes),
             std::pair(QStringLiteral("max-send-size"), &target.maxSendBytes) }) {
        if (!parser.isSet(flag))
            continue;
        QString why;
        const auto size = parseByteSize(parser.value(flag), &why);
        if (!size || *size > std::numeric_limits<int>::max())
            return usageError(cmd, QStringLiteral("--%1: %2").arg(flag, size ? QStringLiteral("at most 2 GiB") : why));
        *field = static_cast<int>(*size);
    }
    target.timeout = std::chrono::seconds(20);
    if (parser.isSet(QStringLiteral("t"))) {
        const QString value = parser.value(QStringLiteral("t"));
        QString why;
        const auto d = value == u"0" ? std::optional(std::chrono::nanoseconds(0)) : parseDuration(value, &why);
        if (!d)
            return usageError(cmd, QStringLiteral("--timeout: %1").arg(why));
        target.timeout = *d;
    }

    // Call options.
    if (parser.isSet(QStringLiteral("authority")))
        target.authority = parser.value(QStringLiteral("authority")).toStdString();
    if (parser.isSet(QStringLiteral("m"))) {
        QJsonParseError jsonError;
        const QJsonDocument doc = QJsonDocument::fromJson(parser.value(QStringLiteral("m")).toUtf8(), &jsonError);
        if (jsonError.error != QJsonParseError::NoError || !doc.isObject())
            return usageError(
                cmd, QStringLiteral("-m/--metadata: expected a JSON object of strings, e.g. '{\"key\":\"value\"}'"));
        const QJsonObject object = doc.object();
        for (auto it = object.begin(); it != object.end(); ++it) {
            if (!it.value().isString())
                return usageError(
                    cmd, QStringLiteral("-m/--metadata: the value of \"%1\" is not a string").arg(it.key()));
            const QString key = it.key().toLower();
            if (key.isEmpty() || key.startsWith(QLatin1Char(':')) || key.contains(QLatin1Char(' ')))
                return usageError(
                    cmd, QStringLiteral("-m/--metadata: \"%1\" is not a valid metadata key").arg(it.key()));
            target.metadata.emplace_back(key.toStdString(), it.value().toString().toStdString());
        }
    }
    const bool tlsFlags = parser.isSet(QStringLiteral("cacert")) || parser.isSet(QStringLiteral("cert"))
        || parser.isSet(QStringLiteral("key")) || parser.isSet(QStringLiteral("cname"))
        || parser.isSet(QStringLiteral("skipTLS"));
    if (tlsFlags && parser.isSet(QStringLiteral("insecure")))
        return usageError(
            cmd, QStringLiteral("--insecure contradicts the TLS flags (--cacert, --cert, --key, --cname, --skipTLS)"));
    if (parser.isSet(QStringLiteral("cert")) != parser.isSet(QStringLiteral("key")))
        return usageError(cmd, QStringLiteral("--cert and --key go together"));
    auto readPem = [&](const QString &flag, std::string *into) -> bool {
        if (!parser.isSet(flag))
            return true;
        QFile file(parser.value(flag));
        if (!file.open(QIODevice::ReadOnly)) {
            usageError(cmd, QStringLiteral("--%1 %2: %3").arg(flag, file.fileName(), file.errorString()));
            return false;
        }
        *into = file.readAll().toStdString();
        if (into->find("-----BEGIN") == std::string::npos) {
            usageError(cmd, QStringLiteral("--%1 %2: not a PEM file").arg(flag, file.fileName()));
            return false;
        }
        return true;
    };
    if (!readPem(QStringLiteral("cacert"), &target.tls.rootCerts)
        || !readPem(QStringLiteral("cert"), &target.tls.certChain)
        || !readPem(QStringLiteral("key"), &target.tls.privateKey))
        return ExitUsage;
    target.tls.serverNameOverride = parser.value(QStringLiteral("cname")).toStdString();
    target.tls.skipVerify = parser.isSet(QStringLiteral("skipTLS"));
    if (tlsFlags && transport.kind != TransportKind::Grpc)
        return usageError(cmd, QStringLiteral("the TLS flags are for --transport grpc"));
    // A server command (a target with a space or {port}) is started now, before the schema may be asked of it.
    RunningServer commandServer;
    ServerCommand command;
    QString commandAddress;
    if (!builtin && !positional.isEmpty() && looksLikeCommand(positional.first())) {
        if (prepared)
            return usageError(cmd, QStringLiteral("give server commands as --a/--b"));
        command.command = positional.first();
        command.readyPattern = parser.value(QStringLiteral("ready"));
        command.cpus = serverCpus;
        if (parser.isSet(QStringLiteral("ready-timeout"))) {
            QString why;
            const auto d = parseDuration(parser.value(QStringLiteral("ready-timeout")), &why);
            if (!d)
                return usageError(cmd, QStringLiteral("--ready-timeout: ") + why);
            command.readyTimeout = std::chrono::duration_cast<std::chrono::milliseconds>(*d);
        }
        if (QString why; !command.check(&why))
            return usageError(cmd, QStringLiteral("server command: ") + why);
        err() << "Starting " << positional.first() << '\n';
        err().flush();
        QString why;
        commandAddress = commandServer.start(command, &why);
        if (commandAddress.isEmpty()) {
            err() << "rpcscope-cli " << cmd << ": the server command did not start: " << why << '\n';
            return ExitRuntime;
        }
        if (transport.kind == TransportKind::Http && !commandAddress.startsWith(QStringLiteral("http")))
            commandAddress = QStringLiteral("http://") + commandAddress;
    }
    const QString dialled = commandAddress.isEmpty() ? positional.value(0) : commandAddress;
    target.tls.enabled = tlsFlags
        || (transport.kind == TransportKind::Grpc && !builtin && !parser.isSet(QStringLiteral("insecure"))
            && !isLoopbackAddress(dialled));
    if (builtin && tlsFlags)
        return usageError(
            cmd, QStringLiteral("--builtin serves plaintext; run 'serve grpc --cert --key' for a TLS server"));

    // Schema.
    Schema schema;
    const QStringList protos = parser.values(QStringLiteral("proto"));
    const QStringList protosets = parser.values(QStringLiteral("protoset"));
    if (!protos.isEmpty() && !protosets.isEmpty())
        return usageError(cmd, QStringLiteral("give --proto or --protoset, not both"));
    if (!protos.isEmpty() || !protosets.isEmpty()) {
        const SchemaLoadResult loaded
            = protos.isEmpty() ? loadProtoset(protosets) : loadProtoFiles(protos, parser.values(QStringLiteral("i")));
        if (!loaded.ok()) {
            err() << loaded.errorText() << '\n';
            return usageError(cmd, QStringLiteral("the schema has %1 error(s), see above").arg(loaded.errors.size()));
        }
        schema = loaded.schema;
    } else if (builtin || (prepared && prepared->builtinSchema)) {
        schema = builtinBenchSchema();
    } else if (transport.kind == TransportKind::Grpc) {
        // No schema given: ask the server, as ghz and grpcurl do.
        ReflectionTarget reflection;
        reflection.address = dialled;
        reflection.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(target.timeout.count() > 0
                ? std::min<std::chrono::nanoseconds>(target.timeout, std::chrono::seconds(10))
                : std::chrono::seconds(10));
        reflection.tls = target.tls.enabled;
        reflection.rootCerts = target.tls.rootCerts;
        reflection.certChain = target.tls.certChain;
        reflection.privateKey = target.tls.privateKey;
        reflection.serverNameOverride = target.tls.serverNameOverride;
        reflection.skipVerify = target.tls.skipVerify;
        reflection.metadata = target.metadata;
        const SchemaLoadResult loaded = loadSchemaFromReflection(reflection);
        if (!loaded.ok()) {
            err() << loaded.errorText() << '\n';
            return usageError(
                cmd, QStringLiteral("no schema: server reflection failed (see above); give --proto or --protoset"));
        }
        schema = loaded.schema;
    } else {
        return usageError(
            cmd, QStringLiteral("no schema: give --proto FILE or --protoset FILE (reflection is gRPC only)"));
    }

    // Request.
    RequestSpec spec;
    spec.call = parser.value(QStringLiteral("call"));
    spec.fills = parser.values(QStringLiteral("fill"));
    spec.decodeResponse = !parser.isSet(QStringLiteral("discard-response"));
    if (int(parser.isSet(QStringLiteral("d"))) + int(parser.isSet(QStringLiteral("D")))
            + int(parser.isSet(QStringLiteral("b")))
        > 1)
        return usageError(cmd, QStringLiteral("give the request with one of -d, -D or -b"));
    if (parser.isSet(QStringLiteral("b"))) {
        QFile file(parser.value(QStringLiteral("b")));
        if (!file.open(QIODevice::ReadOnly))
            return usageError(cmd, QStringLiteral("-b %1: %2").arg(file.fileName(), file.errorString()));
        spec.binary = file.readAll();
    }
    if (parser.isSet(QStringLiteral("d"))) {
        spec.json = parser.value(QStringLiteral("d")).toUtf8();
    } else if (parser.isSet(QStringLiteral("D"))) {
        QFile file(parser.value(QStringLiteral("D")));
        if (!file.open(QIODevice::ReadOnly))
            return usageError(cmd, QStringLiteral("-D %1: %2").arg(file.fileName(), file.errorString()));
        spec.json = file.readAll();
    }
    QString error;
    std::optional<GrpcCall> call = prepareGrpcCall(schema, spec, &error);
    if (!call) {
        QString where;
        if (parser.isSet(QStringLiteral("D")))
            where = QStringLiteral("-D ") + parser.value(QStringLiteral("D")) + QStringLiteral(": ");
        else if (parser.isSet(QStringLiteral("b")))
            where = QStringLiteral("-b ") + parser.value(QStringLiteral("b")) + QStringLiteral(": ");
        return usageError(cmd, where + error);
    }
    if (!parseStreamOptions(
            { parser.value(QStringLiteral("stream-call-count")), parser.value(QStringLiteral("stream-interval")),
                parser.value(QStringLiteral("stream-call-duration")),
                parser.isSet(QStringLiteral("stream-ping-pong")) },
            &call->stream, &error))
        return usageError(cmd, error);

    // The built-in server runs as a child process (this same program's `serve grpc`), so the client's CPU is
    // measured alone and the server's can be measured too.
    ServerProcess server;
    if (prepared && builtin && !inProcess)
        return usageError(cmd, QStringLiteral("--builtin: say --a builtin or --b builtin instead"));
    if (builtin && !inProcess) {
        const QString kind = transport.kind == TransportKind::Http ? QStringLiteral("http")
            : transport.kind == TransportKind::Msgpack             ? QStringLiteral("msgpack")
                                                                   : QStringLiteral("grpc");
        ServerProcess::Launch launch;
        launch.program = QCoreApplication::applicationFilePath();
        launch.arguments = { QStringLiteral("serve"), kind, QStringLiteral("--port"), QStringLiteral("0") };
        launch.readyPattern = QStringLiteral("^((?:http://)?[0-9.]+:[0-9]+)$");
        launch.readyTimeout = std::chrono::seconds(10);
        launch.cpus = serverCpus;
        if (!server.start(launch, &error)) {
            err() << "rpcscope-cli " << cmd << ": built-in server: " << error << '\n';
            return ExitRuntime;
        }
        target.address = server.readyText();
        plan.serverPid = server.pid();
    } else if (!commandAddress.isEmpty()) {
        target.address = commandAddress;
        plan.serverPid = commandServer.pid();
    } else if (!inProcess) {
        target.address = positional.first();
        if (transport.kind != TransportKind::Http && !target.address.contains(QLatin1Char(':')))
            return usageError(cmd, QStringLiteral("target \"%1\" is not HOST:PORT").arg(target.address));
    }

    plan.recordRawSamples = parser.isSet(QStringLiteral("raw-samples"));
    // Opened before the run, so an unwritable path is known before any load is sent. Committed whole at the end.
    QSaveFile rawFile(parser.value(QStringLiteral("raw-samples")));
    if (plan.recordRawSamples && !rawFile.open(QIODevice::WriteOnly))
        return usageError(cmd, QStringLiteral("--raw-samples %1: %2").arg(rawFile.fileName(), rawFile.errorString()));
    // Exports: checked before any load is sent, so a typo in a format or an unwritable folder costs no run.
    QList<QPair<ExportFormat, QString>> exports;
    {
        const QStringList formats = parser.values(QStringLiteral("O"));
        QStringList files = parser.values(QStringLiteral("o"));
        if (formats.size() == 1 && files.isEmpty())
            files << QStringLiteral("-");
        if (formats.size() != files.size())
            return usageError(cmd,
                QStringLiteral("-O/-o: give them in pairs (-O csv -o run.csv), got %1 -O and %2 -o")
                    .arg(formats.size())
                    .arg(files.size()));
        for (qsizetype i = 0; i < formats.size(); ++i) {
            const std::optional<ExportFormat> format = parseExportFormat(formats[i]);
            if (!format)
                return usageError(cmd,
                    QStringLiteral("-O: \"%1\" is not one of %2")
                        .arg(formats[i], exportFormatNames().join(QStringLiteral(", "))));
            if (isRenderedFormat(*format) && !qobject_cast<QGuiApplication *>(QCoreApplication::instance()))
                return usageError(cmd,
                    QStringLiteral("-O %1: give it as -O %1 (this process has no offscreen drawing)").arg(formats[i]));
            if (*format == ExportFormat::CsvRawSamples && !parser.isSet(QStringLiteral("raw-samples")))
                plan.recordRawSamples = true;
            const QFileInfo file(files[i]);
            if (files[i] != u"-" && !QFileInfo(file.absolutePath()).isWritable())
                return usageError(cmd,
                    QStringLiteral("-o %1: the folder %2 is not writable or does not exist")
                        .arg(files[i], file.absolutePath()));
            exports.append({ *format, files[i] });
        }
    }
    if (!parseChartKind(parser.value(QStringLiteral("chart"))))
        return usageError(cmd,
            QStringLiteral("--chart: \"%1\" is not histogram, spectrum, timeline or throughput")
                .arg(parser.value(QStringLiteral("chart"))));
    ChartOptions chartOptions;
    if (QString why; !parseChartOptions(parser.value(QStringLiteral("chart-size")),
            parser.value(QStringLiteral("chart-scale")), &chartOptions, &why))
        return usageError(cmd, why);
    // Opened before any load is sent, so a bad --db is a usage error, not a lost run.
    const bool save = !outcome && !prepared
        && (parser.isSet(QStringLiteral("save")) || parser.isSet(QStringLiteral("db"))
            || parser.isSet(QStringLiteral("label")) || parser.isSet(QStringLiteral("name")));
    RunStore store;
    RunRecord record;
    const QString storePath
        = parser.isSet(QStringLiteral("db")) ? parser.value(QStringLiteral("db")) : RunStore::defaultPath();
    if (save && !store.open(storePath, &error))
        return usageError(cmd, QStringLiteral("--db ") + error);
    // The baseline is read before the run (a typo costs no load), and before this run is saved: "last" is the
    // newest run so far, not this one.
    std::optional<RunRecord> baseline;
    CompareOptions compareOptions;
    if (parser.isSet(QStringLiteral("compare-to"))) {
        if (outcome || prepared)
            return usageError(cmd, QStringLiteral("--compare-to is for run (%1 compares in its own way)").arg(cmd));
        baseline = loadRun(store, storePath, parser.value(QStringLiteral("compare-to")), &error);
        if (!baseline)
            return usageError(cmd, QStringLiteral("--compare-to ") + error);
        if (!parseThreshold(parser.value(QStringLiteral("compare-threshold")), &compareOptions.threshold, &error))
            return usageError(cmd, QStringLiteral("--compare-threshold: ") + error);
    } else if (parser.isSet(QStringLiteral("compare-threshold"))) {
        return usageError(cmd, QStringLiteral("--compare-threshold needs --compare-to RUN"));
    }
    std::vector<Check> checks;
    for (const QString &text : parser.values(QStringLiteral("check"))) {
        if (outcome || prepared)
            return usageError(cmd, QStringLiteral("--check is for run"));
        const std::optional<Check> check = parseCheck(text, &error);
        if (!check)
            return usageError(cmd, QStringLiteral("--check ") + error);
        checks.push_back(*check);
    }
    {
        record.name = parser.value(QStringLiteral("name"));
        record.labels = parser.values(QStringLiteral("label"));
        record.method = spec.call;
        record.transport = transportName(transport.kind);
        record.codec = codecName(transport.codec.value_or(defaultCodec(transport.kind)));
        record.target = builtin ? QStringLiteral("builtin") : target.address;
        record.scenario = QJsonObject { { QStringLiteral("arguments"), QJsonArray::fromStringList(arguments.mid(2)) } };
        record.environment = environmentFingerprint();
        // Pinning is part of where a run ran: two runs pinned differently are told apart like two machines.
        if (!clientCpus.empty())
            record.environment.insert(QStringLiteral("client_cpus"), formatCpuList(clientCpus));
        if (!serverCpus.empty())
            record.environment.insert(QStringLiteral("server_cpus"), formatCpuList(serverCpus));
        if (builtin && !inProcess) {
            record.server = QJsonObject { { QStringLiteral("command"),
                QString(QStringLiteral("rpcscope-cli serve ") + record.transport) } };
            if (!serverCpus.empty())
                record.server.insert(QStringLiteral("cpus"), formatCpuList(serverCpus));
        } else if (!commandAddress.isEmpty())
            record.server = command.describe();
        if (!commandAddress.isEmpty())
            record.target = command.command;
    }
    LoadEngine engine;
    if (parser.isSet(QStringLiteral("cpus"))) {
        bool ok = false;
        target.clientThreads = parser.value(QStringLiteral("cpus")).toInt(&ok);
        if (!ok || target.clientThreads < 1 || target.clientThreads > 64)
            return usageError(cmd,
                QStringLiteral("--cpus: expected a number from 1 to 64, got \"%1\"")
                    .arg(parser.value(QStringLiteral("cpus"))));
    } else {
        target.clientThreads = autoClientThreads(plan.concurrency);
    }
    if (prepared) {
        prepared->transport = transport;
        prepared->target = target;
        prepared->call = call;
        prepared->plan = plan;
        prepared->method = spec.call;
        prepared->clientCpus = clientCpus;
        prepared->serverCpus = serverCpus;
        return ExitOk;
    }
    std::unique_ptr<Transport> made = makeTransport(transport, target, *call, &error);
    if (!made)
        return usageError(cmd, error);
    if (!outcome)
        printMachineNoiseWarnings();
    // Now, with the servers started (a child inherits its parent's mask) and before the engine's threads start (a
    // thread inherits its creator's): the threads running already (gRPC's, the server output reader) are pinned
    // one by one. Undone on the way out: matrix runs its cells in this process, and the next cell's server must
    // not inherit this cell's pinning.
    struct Unpin {
        std::vector<int> cpus;
        ~Unpin()
        {
            if (!cpus.empty())
                pinCurrentProcess(cpus, nullptr);
        }
    } unpin;
    if (!clientCpus.empty()) {
        unpin.cpus = availableCpus();
        if (!pinCurrentProcess(clientCpus, &error)) {
            err() << "rpcscope-cli " << cmd << ": --client-cpus: " << error << '\n';
            return ExitRuntime;
        }
    }
    if (!engine.start(std::move(made), plan, &error))
        return usageError(cmd, error);
    record.startedAt = QDateTime::currentDateTimeUtc();
    if (save && !store.beginRun(&record, &error)) {
        engine.stop();
        err() << "rpcscope-cli " << cmd << ": --db " << store.path() << ": " << error << '\n';
        return ExitRuntime;
    }
    // Saved every interval while it runs, so a crash or kill leaves all but the last interval.
    waitForEngine(engine,
        save ? std::chrono::duration_cast<std::chrono::milliseconds>(
            std::max<std::chrono::nanoseconds>(plan.interval, std::chrono::milliseconds(100)))
             : std::chrono::hours(24 * 365),
        [&] {
            if (save && !store.updateRun(record.id, engine.snapshot(), &error))
                err() << "rpcscope-cli " << cmd << ": --db " << store.path() << ": " << error << '\n';
        });
    const RunSnapshot result = engine.snapshot();
    if (save) {
        const QString status = result.state == RunState::Stopped ? QString::fromUtf16(RunStatus::Stopped)
                                                                 : QString::fromUtf16(RunStatus::Finished);
        if (!store.finishRun(record.id, result, plan.recordRawSamples ? engine.rawSamples() : std::vector<RawSample>(),
                status, &error)) {
            err() << "rpcscope-cli " << cmd << ": --db " << store.path() << ": " << error << '\n';
            return ExitRuntime;
        }
        err() << "Saved as run #" << record.id << " in " << store.path() << '\n';
    }
    if (outcome) {
        outcome->snapshot = result;
        outcome->transport = transportName(transport.kind);
        outcome->codec = codecName(transport.codec.value_or(defaultCodec(transport.kind)));
    } else {
        out() << "Transport: " << transportName(transport.kind) << ", codec "
              << codecName(transport.codec.value_or(defaultCodec(transport.kind)))
              << (target.address.isEmpty() ? QString() : QStringLiteral(", target ") + target.address) << '\n';
        out() << formatTextSummary(result);
        out().flush();
    }
    if (parser.isSet(QStringLiteral("raw-samples"))) {
        QSaveFile &file = rawFile;
        if (!writeRawSamplesCsv(file, engine.rawSamples()) || !file.commit()) {
            err() << "rpcscope-cli run: --raw-samples " << file.fileName() << ": " << file.errorString() << '\n';
            return ExitRuntime;
        }
    }
    record.snapshot = result;
    record.endedAt = QDateTime::currentDateTimeUtc();
    record.status = result.state == RunState::Stopped ? QString::fromUtf16(RunStatus::Stopped)
                                                      : QString::fromUtf16(RunStatus::Finished);
    if (plan.recordRawSamples)
        record.rawSamples = engine.rawSamples();
    if (!exports.isEmpty()) {
        const std::optional<ChartKind> chart = parseChartKind(parser.value(QStringLiteral("chart")));
        for (const auto &[format, file] : exports) {
            const QByteArray data = isRenderedFormat(format)
                ? renderExport({ record }, format, chart.value_or(ChartKind::Histogram), chartOptions, &error)
                : exportRun(record, format, &error);
            if (data.isEmpty() && !error.isEmpty()) {
                err() << "rpcscope-cli " << cmd << ": -O " << exportFormatName(format) << ": " << error << '\n';
                return ExitRuntime;
            }
            if (file == u"-") {
                out() << QString::fromUtf8(data);
                out().flush();
            } else if (!writeFileAtomically(file, data, &error)) {
                err() << "rpcscope-cli " << cmd << ": -o " << error << '\n';
                return ExitRuntime;
            }
        }
    }
    Verdict verdict = Verdict::NotTested;
    if (baseline) {
        out() << "\nCompared with the baseline " << parser.value(QStringLiteral("compare-to"))
              << (baseline->id > 0 ? QStringLiteral(" (run #%1)").arg(baseline->id) : QString()) << ":\n";
        verdict = printComparison(*baseline, record, compareOptions, false).overall;
    }
    bool checksPassed = true;
    if (!checks.empty()) {
        std::vector<CheckResult> results;
        for (const Check &check : checks) {
            results.push_back(evaluateCheck(check, result));
            checksPassed = checksPassed && results.back().passed;
        }
        out() << '\n' << formatCheckResults(results);
        out().flush();
    }
    if (parser.isSet(QStringLiteral("fail-on-error")) && result.callsFailed() > 0)
        return ExitFailedCalls;
    return verdict == Verdict::Regression || !checksPassed ? ExitRegression : ExitOk;
}

bool waitForEngineLike(const std::function<bool(std::chrono::milliseconds)> &wait, const std::function<void()> &stop,
    std::chrono::milliseconds every, const std::function<void()> &tick)
{
    std::atomic<bool> signalled { false };
    SignalWatcher watcher([&stop, &signalled](int) {
        signalled = true;
        stop();
    });
    while (!wait(every))
        tick();
    return signalled;
}

bool waitForEngine(LoadEngine &engine, std::chrono::milliseconds every, const std::function<void()> &tick)
{
    return waitForEngineLike([&engine](std::chrono::milliseconds t) { return engine.waitForFinished(t); },
        [&engine] { engine.stop(); }, every, tick);
}

void blockTerminationSignals()
{
    sigset_t set = terminationSignals();
    sigaddset(&set, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int run(const QStringList &arguments)
{
    const QString command = arguments.value(1);
    if (command.isEmpty() || command == u"--help" || command == u"-h" || command == u"help") {
        out() << kGeneralHelp;
        return command.isEmpty() ? ExitUsage : ExitOk;
    }
    if (command == u"--version" || command == u"version") {
        out() << "rpcscope-cli " << RPCSCOPE_VERSION << " (" << gitRevision() << ")\n";
        return ExitOk;
    }
    if (command == u"run")
        return runOnce(arguments, nullptr);
    if (command == u"serve")
        return serveCommand(arguments);
    if (command == u"matrix")
        return matrixCommand(arguments);
    if (command == u"codecs")
        return codecsCommand(arguments);
    if (command == u"history")
        return historyCommand(arguments);
    if (command == u"compare")
        return compareCommand(arguments);
    if (command == u"ab")
        return abCommand(arguments);
    if (command == u"export")
        return exportCommand(arguments);
    if (command == u"import")
        return importCommand(arguments);
    err() << "rpcscope-cli: unknown command \"" << command << "\"\n\n" << kGeneralHelp;
    return ExitUsage;
}

} // namespace rpcscope::cli
