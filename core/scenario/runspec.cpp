#include "runspec.h"

#include "client/clientload.h"

#include "codec/codec.h"
#include "store/secrets.h"
#include "util/cpuset.h"
#include "util/inputfile.h"
#include "util/printable.h"
#include "util/units.h"

#include <QFile>
#include <QFileInfo>
#include <QUrl>

#include <cmath>
#include <limits>
#include <tuple>

#include <google/protobuf/descriptor.h>

namespace rpcscope {

namespace {

/// Collects the first problem; every check after it is skipped by the callers' `ok()` tests.
class Checker {
public:
    explicit Checker(ScenarioProblem *problem) : m_problem(problem) { }
    bool ok() const { return m_ok; }
    bool fail(const QString &field, const QString &message)
    {
        if (m_ok && m_problem)
            *m_problem = { field, message };
        m_ok = false;
        return false;
    }

    /// A duration like "10s"; empty leaves @p into alone. @p allowZero also takes "0".
    bool duration(const QString &field, const QString &text, std::chrono::nanoseconds *into, bool allowZero = false)
    {
        const QString value = text.trimmed();
        if (!m_ok || value.isEmpty())
            return m_ok;
        if (allowZero && value == u"0") {
            *into = std::chrono::nanoseconds(0);
            return true;
        }
        QString why;
        const auto d = parseDuration(value, &why);
        if (!d)
            return fail(field, why);
        if (d->count() < 0 || (d->count() == 0 && !allowZero))
            return fail(field, allowZero ? QStringLiteral("must not be negative") : QStringLiteral("must be positive"));
        *into = *d;
        return true;
    }

    /// A number; empty leaves @p into alone.
    bool number(const QString &field, const QString &text, double *into)
    {
        const QString value = text.trimmed();
        if (!m_ok || value.isEmpty())
            return m_ok;
        bool isNumber = false;
        const double v = value.toDouble(&isNumber);
        if (!isNumber || !std::isfinite(v))
            return fail(field, QStringLiteral("\"%1\" is not a number").arg(value));
        *into = v;
        return true;
    }

    bool schedule(const QString &field, const ScheduleText &text, const QString &constValue, RateSchedule *into)
    {
        RateSchedule s;
        const QString kind = text.kind.isEmpty() ? QStringLiteral("const") : text.kind;
        if (kind == u"const") {
            if (constValue.trimmed().isEmpty())
                return fail(
                    field + QStringLiteral(".kind"), QStringLiteral("a constant schedule needs the rate (load.rate)"));
        } else if (kind == u"step" || kind == u"line") {
            s.kind = kind == u"step" ? RateSchedule::Kind::Step : RateSchedule::Kind::Line;
            if (text.start.trimmed().isEmpty())
                return fail(field + QStringLiteral(".start"), QStringLiteral("a %1 schedule needs a start").arg(kind));
        } else {
            return fail(field + QStringLiteral(".kind"), QStringLiteral("\"%1\" is not const, step or line").arg(kind));
        }
        // A constant rate is the scenario's rate; a constant number of callers is the schedule's start.
        const bool rate = field == u"load.rate_schedule";
        number(kind == u"const" && rate ? QStringLiteral("load.rate") : field + QStringLiteral(".start"),
            kind == u"const" ? constValue : text.start, &s.start);
        number(field + QStringLiteral(".step"), text.step, &s.step);
        number(field + QStringLiteral(".end"), text.end, &s.end);
        duration(field + QStringLiteral(".step_duration"), text.stepDuration, &s.stepDuration);
        duration(field + QStringLiteral(".max_duration"), text.maxDuration, &s.maxDuration);
        if (!m_ok)
            return false;
        if (const char *why = s.problem())
            return fail(field, QString::fromLatin1(why));
        *into = s;
        return true;
    }

    /// Reads a whole file named by a document field (a regular file of at most @p maxBytes); the message names it.
    std::optional<QByteArray> file(const QString &field, const QString &path, qint64 maxBytes)
    {
        QString why;
        std::optional<QByteArray> data = readInputFile(path, maxBytes, &why);
        if (!data)
            fail(field, path + QStringLiteral(": ") + why);
        return data;
    }

private:
    ScenarioProblem *m_problem;
    bool m_ok = true;
};

ScheduleText constantSchedule()
{
    ScheduleText s;
    s.kind = QStringLiteral("const");
    return s;
}

/// The stream settings, with the document's field names.
bool readStream(Checker &c, const Scenario &s, StreamOptions *into)
{
    StreamOptions parsed;
    if (const QString count = s.streamCallCount.trimmed(); !count.isEmpty()) {
        bool isNumber = false;
        parsed.callCount = count.toULongLong(&isNumber);
        if (!isNumber)
            return c.fail(QStringLiteral("load.stream_call_count"),
                QStringLiteral("expected a whole number, got \"%1\"").arg(count));
    }
    c.duration(QStringLiteral("load.stream_interval"), s.streamInterval, &parsed.interval, true);
    c.duration(QStringLiteral("load.stream_call_duration"), s.streamCallDuration, &parsed.callDuration, true);
    parsed.pingPong = s.streamPingPong;
    if (c.ok())
        *into = parsed;
    return c.ok();
}

bool readConnection(Checker &c, const Scenario &s, const RunSpec &spec, GrpcTarget *target)
{
    // The mode and its settings agree (Scenario::valueProblem); here, what they mean for this target.
    const bool tlsSettings = s.hasTlsSettings();
    const bool tls = tlsSettings || s.security == u"tls";
    if (tls && spec.server == RunServer::Builtin)
        return c.fail(QStringLiteral("connection"),
            QStringLiteral("the built-in server serves plaintext; run 'serve grpc --cert --key' for a TLS server"));
    // TLS is asked for by its settings (as the CLI's flags do); with none, a loopback server's certificate could
    // not be checked anyway.
    if (s.security == u"tls" && !tlsSettings && spec.server != RunServer::Address)
        return c.fail(QStringLiteral("connection.security"),
            QStringLiteral("TLS to a server on this machine: give the CA file, the server name or skip verification"));
    if (s.security == u"tls" && !tlsSettings && isLoopbackAddress(s.target))
        return c.fail(QStringLiteral("connection.security"),
            QStringLiteral("TLS to a loopback target: give the CA file, the server name or skip verification"));
    for (const auto &[field, path, into] :
        { std::tuple(QStringLiteral("connection.cacert"), s.caCert, &target->tls.rootCerts),
            std::tuple(QStringLiteral("connection.cert"), s.clientCert, &target->tls.certChain),
            std::tuple(QStringLiteral("connection.key"), s.clientKey, &target->tls.privateKey) }) {
        if (path.isEmpty())
            continue;
        const std::optional<QByteArray> pem = c.file(field, path, inputlimits::kPem);
        if (!pem)
            return false;
        if (!pem->contains("-----BEGIN"))
            return c.fail(field, path + QStringLiteral(": not a PEM file"));
        *into = pem->toStdString();
    }
    target->tls.serverNameOverride = s.serverName.toStdString();
    target->tls.skipVerify = s.skipVerify;
    // "auto": plaintext on loopback (a command rpcscope starts listens on this machine), TLS elsewhere.
    target->tls.enabled = tls
        || (speaksGrpc(spec.transport.kind) && s.security == u"auto" && spec.server == RunServer::Address
            && !isLoopbackAddress(s.target));
    target->authority = s.authority.toStdString();
    for (const auto &[name, value] : s.metadata) {
        const QString key = name.toLower();
        if (key.isEmpty())
            return c.fail(
                QStringLiteral("metadata"), QStringLiteral("the value \"%1\" has no key").arg(printable(value)));
        if (key.startsWith(QLatin1Char(':')))
            return c.fail(QStringLiteral("metadata"),
                QStringLiteral("\"%1\" is not a valid metadata key (pseudo-headers are the transport's)")
                    .arg(printable(name)));
        // Control characters would inject headers (CR LF) or abort gRPC C++: refused whatever sent the document.
        if (const QString problem = metadataProblem(spec.transport.kind, key.toStdString(), value.toStdString());
            !problem.isEmpty())
            return c.fail(QStringLiteral("metadata"), problem);
        // gRPC's own headers: the transport writes them (a second copy would contradict the first).
        if (speaksGrpc(spec.transport.kind) && (key == u"te" || key == u"content-type" || key == u"grpc-timeout"))
            return c.fail(QStringLiteral("metadata"),
                QStringLiteral("\"%1\" is a header gRPC sets itself%2")
                    .arg(name,
                        key == u"grpc-timeout" ? QStringLiteral("; give the deadline with --timeout (load.timeout)")
                                               : QString()));
        if (isRedactedValue(value)) // a scenario taken from the history: its secret was never stored
            return c.fail(QStringLiteral("metadata"),
                QStringLiteral("the value of \"%1\" was redacted when the run was saved; give it again").arg(name));
        target->metadata.emplace_back(key.toStdString(), value.toStdString());
    }
    return true;
}

bool readLoad(Checker &c, const Scenario &s, const RunSpec &spec, LoadPlan *plan, GrpcTarget *target)
{
    if (s.concurrency < 0 || s.concurrency > 100000)
        return c.fail(QStringLiteral("load.concurrency"),
            QStringLiteral("expected a number from 1 to 100000, got %1").arg(s.concurrency));
    plan->concurrency = s.concurrency;
    plan->totalCalls = s.calls;
    c.duration(QStringLiteral("load.duration"), s.duration, &plan->duration);
    if (QString why; c.ok() && !parseWarmup(s.warmup, plan, &why))
        return c.fail(QStringLiteral("load.warmup"), why);
    if (plan->duration.count() > 0 && plan->warmupDuration >= plan->duration) // -z includes the warm-up
        return c.fail(QStringLiteral("load.warmup"),
            QStringLiteral("%1 leaves nothing of the run's duration %2, which includes the warm-up")
                .arg(s.warmup.trimmed(), s.duration.trimmed()));
    c.duration(QStringLiteral("load.interval"), s.interval, &plan->interval);
    if (!c.ok())
        return false;
    if (!s.rate.trimmed().isEmpty() && s.rateSchedule && s.rateSchedule->kind != u"const")
        return c.fail(QStringLiteral("load.rate"), QStringLiteral("give either a rate or a rate schedule, not both"));
    if (!s.rate.trimmed().isEmpty() || s.rateSchedule) {
        RateSchedule rate;
        if (!c.schedule(
                QStringLiteral("load.rate_schedule"), s.rateSchedule.value_or(constantSchedule()), s.rate, &rate))
            return false;
        plan->rate = rate;
    }
    if (s.concurrencySchedule) {
        if (plan->rate)
            return c.fail(
                QStringLiteral("load.concurrency_schedule"), QStringLiteral("is for closed-loop runs; drop the rate"));
        RateSchedule callers;
        ScheduleText text = *s.concurrencySchedule;
        if (text.kind == u"const" && text.start.trimmed().isEmpty())
            return c.fail(QStringLiteral("load.concurrency_schedule.start"),
                QStringLiteral("a concurrency schedule needs a start"));
        if (!c.schedule(QStringLiteral("load.concurrency_schedule"), text, text.start, &callers))
            return false;
        // Callers are made up front: the schedule's highest point, bounded by the concurrency when given.
        if (plan->concurrency == 0) {
            double most = std::max(callers.start, callers.end);
            if (callers.step > 0 && callers.end <= 0) {
                if (callers.maxDuration.count() <= 0)
                    return c.fail(QStringLiteral("load.concurrency"),
                        QStringLiteral("a rising concurrency schedule needs an end, a max duration or a "
                                       "concurrency as its ceiling"));
                most = callers.rateAt(callers.maxDuration);
            }
            plan->concurrency = std::clamp(static_cast<int>(std::ceil(most)), 1, 100000);
        }
        plan->concurrencySchedule = callers;
    }
    if (plan->concurrency < 1)
        return c.fail(QStringLiteral("load.concurrency"), QStringLiteral("expected a number from 1 to 100000, got 0"));
    const bool bounded = plan->totalCalls > 0 || plan->duration.count() > 0
        || (plan->rate && plan->rate->maxDuration.count() > 0)
        || (plan->concurrencySchedule && plan->concurrencySchedule->maxDuration.count() > 0);
    if (!bounded)
        return c.fail(
            QStringLiteral("load.calls"), QStringLiteral("the run has no end: give a number of calls or a duration"));
    if (!s.startAt.trimmed().isEmpty()) {
        QString why;
        plan->startAt = parseWallTime(s.startAt, &why);
        if (!plan->startAt)
            return c.fail(QStringLiteral("load.start_at"), why);
    }
    if (!s.segment.trimmed().isEmpty()) { // the whole plan is known and checked: now take this worker's part of it
        QString why;
        const std::optional<Segment> segment = Segment::parse(s.segment, &why);
        std::optional<LoadPlan> part = segment ? segmentPlan(*plan, *segment, &why) : std::nullopt;
        if (!part)
            return c.fail(QStringLiteral("load.segment"), why);
        *plan = *part;
    }
    // Connections: HTTP/1.1 carries one call at a time, so one per caller by default; the others multiplex.
    if (s.connections > 100000)
        return c.fail(QStringLiteral("load.connections"),
            QStringLiteral("expected a number from 1 to 100000, got %1").arg(s.connections));
    target->connections = s.connections >= 0 ? s.connections : spec.transport.kind == TransportKind::Http ? 0 : 1;
    for (const auto &[field, text, into] :
        { std::tuple(QStringLiteral("load.max_receive_size"), s.maxReceiveSize, &target->maxReceiveBytes),
            std::tuple(QStringLiteral("load.max_send_size"), s.maxSendSize, &target->maxSendBytes) }) {
        if (text.trimmed().isEmpty())
            continue;
        QString why;
        const auto size = parseByteSize(text.trimmed(), &why);
        if (!size || *size > std::numeric_limits<int>::max())
            return c.fail(field, size ? QStringLiteral("at most 2 GiB") : why);
        *into = static_cast<int>(*size);
    }
    if (!s.http2Window.trimmed().isEmpty()) {
        if (spec.transport.kind != TransportKind::H2Grpc)
            return c.fail(QStringLiteral("load.http2_window"),
                QStringLiteral("the HTTP/2 window is for the h2grpc transport (gRPC C++ sizes its own)"));
        QString why;
        const auto size = parseByteSize(s.http2Window.trimmed(), &why);
        if (!size || *size < 65535 || *size > std::numeric_limits<int32_t>::max())
            return c.fail(QStringLiteral("load.http2_window"),
                size ? QStringLiteral("expected 64KiB (65535 bytes) to 2 GiB") : why);
        target->http2Window = static_cast<int>(*size);
    }
    target->timeout = std::chrono::seconds(20);
    c.duration(QStringLiteral("load.timeout"), s.timeout, &target->timeout, true);
    if (s.clientThreads < 0 || s.clientThreads > 64)
        return c.fail(QStringLiteral("load.client_threads"),
            QStringLiteral("expected a number from 1 to 64, got %1").arg(s.clientThreads));
    target->clientThreads = s.clientThreads > 0 ? s.clientThreads : autoClientThreads(plan->concurrency);
    target->concurrency = plan->concurrency;
    return c.ok();
}

bool readOutputs(Checker &c, const Scenario &s, RunSpec *spec)
{
    spec->rawSamplesPath = s.rawSamples;
    spec->plan.recordRawSamples = !s.rawSamples.isEmpty();
    for (qsizetype i = 0; i < s.exports.size(); ++i) {
        const Scenario::Export &e = s.exports.at(i);
        const QString field = QStringLiteral("output.exports[%1]").arg(i);
        RunSpec::Output out;
        out.file = e.file;
        out.chart = e.chart;
        const std::optional<ExportFormat> format = parseExportFormat(e.format);
        if (!format)
            return c.fail(field + QStringLiteral(".format"),
                QStringLiteral("\"%1\" is not one of %2")
                    .arg(e.format, exportFormatNames().join(QStringLiteral(", "))));
        out.format = *format;
        if (*format == ExportFormat::CsvRawSamples)
            spec->plan.recordRawSamples = true;
        if (e.file.isEmpty())
            return c.fail(field + QStringLiteral(".file"), QStringLiteral("no file (\"-\" is standard output)"));
        const QFileInfo file(e.file);
        if (e.file != u"-" && !QFileInfo(file.absolutePath()).isWritable())
            return c.fail(field + QStringLiteral(".file"),
                QStringLiteral("%1: the folder %2 is not writable or does not exist").arg(e.file, file.absolutePath()));
        spec->exports.push_back(out);
    }
    spec->save = s.savesRun();
    spec->db = s.db;
    spec->labels = s.labels;
    spec->name = s.name;
    spec->compareTo = s.compareTo;
    if (!s.compareThreshold.isEmpty()) {
        if (s.compareTo.isEmpty())
            return c.fail(
                QStringLiteral("history.compare_threshold"), QStringLiteral("needs a baseline (history.compare_to)"));
        if (QString why; !parseFraction(s.compareThreshold, &spec->compareThreshold, &why))
            return c.fail(QStringLiteral("history.compare_threshold"), why);
    }
    for (qsizetype i = 0; i < s.checks.size(); ++i) {
        QString why;
        const std::optional<Check> check = parseCheck(s.checks.at(i), &why);
        if (!check)
            return c.fail(QStringLiteral("checks[%1]").arg(i), why);
        spec->checks.push_back(*check);
    }
    for (qsizetype i = 0; i < s.expect.size(); ++i) {
        QString why;
        const std::optional<Expectation> expectation = Expectation::parse(s.expect.at(i), nullptr, &why);
        if (!expectation)
            return c.fail(QStringLiteral("expect.replies[%1]").arg(i), why);
        spec->plan.expectations.push_back(*expectation);
    }
    for (const auto &[field, text, into] :
        { std::tuple(QStringLiteral("expect.first"), s.expectFirst, &spec->plan.expectSampling.first),
            std::tuple(QStringLiteral("expect.every"), s.expectEvery, &spec->plan.expectSampling.every) }) {
        if (text.isEmpty())
            continue;
        bool ok = false;
        const qulonglong n = text.trimmed().toULongLong(&ok);
        if (!ok)
            return c.fail(field, QStringLiteral("expected a whole number >= 0, got \"%1\"").arg(text));
        *into = n;
    }
    QString statusError;
    if (const auto expected = ExpectedStatuses::parse(s.expectStatus, &statusError))
        spec->plan.expectedStatuses = *expected;
    else
        return c.fail(QStringLiteral("expect.status"), statusError);
    if (!spec->plan.expectations.empty() && !spec->plan.expectedStatuses.has(CallStatus::Ok))
        return c.fail(QStringLiteral("expect.replies"),
            QStringLiteral("replies are only checked on calls that end OK, and expect.status (--expect-status) "
                           "leaves OK out: add OK to it, or drop the reply checks"));
    if (!spec->plan.expectations.empty() && s.discardResponse)
        return c.fail(QStringLiteral("expect.replies"),
            QStringLiteral("replies are not decoded with discard_response (--discard-response), so nothing could be "
                           "checked: drop one of them"));
    spec->failOnError = s.failOnError;
    return true;
}

} // namespace

QString requestSourceFile(const Scenario &scenario)
{
    return !scenario.requestBinaryFile.isEmpty() ? scenario.requestBinaryFile : scenario.requestFile;
}

namespace {

/// The "profile" section: what is profiled, with what, how often.
bool typeProfile(const Scenario &s, RunSpec &spec, Checker &c)
{
    spec.profile.server = s.profileServer || s.profilePid > 0;
    spec.profile.client = s.profileClient;
    if (s.profilePid > 0) {
        if (!QFileInfo::exists(QStringLiteral("/proc/%1").arg(s.profilePid)))
            return c.fail(
                QStringLiteral("profile.pid"), QStringLiteral("no process %1 on this machine").arg(s.profilePid));
        spec.profile.pid = s.profilePid;
    }
    if (!s.profiler.trimmed().isEmpty()) {
        if (QString why; !ProfileOptions::checkProfiler(s.profiler.trimmed(), &why))
            return c.fail(QStringLiteral("profile.profiler"), why);
        spec.profile.profiler = s.profiler.trimmed();
    }
    std::chrono::nanoseconds period = spec.profile.period;
    if (!c.duration(QStringLiteral("profile.period"), s.profilePeriod, &period))
        return false;
    if (period < std::chrono::microseconds(100) || period > std::chrono::milliseconds(100))
        return c.fail(QStringLiteral("profile.period"),
            QStringLiteral("%1 is outside 100us .. 100ms (CPU time between samples)").arg(s.profilePeriod));
    spec.profile.period = std::chrono::duration_cast<std::chrono::microseconds>(period);
    if (!s.profileCallGraph.isEmpty()) {
        if (s.profileCallGraph != u"fp" && s.profileCallGraph != u"dwarf")
            return c.fail(QStringLiteral("profile.call_graph"),
                QStringLiteral("'%1' is neither fp (frame pointers) nor dwarf").arg(s.profileCallGraph));
        spec.profile.callGraph = s.profileCallGraph;
    }
    if (spec.profile.server && spec.server == RunServer::None)
        return c.fail(QStringLiteral("profile.server"),
            QStringLiteral("the no-RPC baseline has no server to profile (profile the client instead)"));
    if (s.profileKeep)
        spec.profile.keepDir = perfKeepDir();
    if (!spec.profile.any()) {
        // A setting of how to profile, named as given, for a run that profiles nothing.
        const QString how = !s.profiler.isEmpty() ? QStringLiteral("profile.profiler")
            : !s.profilePeriod.isEmpty()          ? QStringLiteral("profile.period")
            : !s.profileCallGraph.isEmpty()       ? QStringLiteral("profile.call_graph")
            : s.profileKeep                       ? QStringLiteral("profile.keep")
                                                  : QString();
        if (!how.isEmpty())
            return c.fail(
                how, QStringLiteral("says how to profile, but nothing is profiled (--profile, --profile-client)"));
    }
    return true;
}

/// The request: a serialized message (-b) wins over a JSON file (-D), which wins over the JSON text.
bool readRequest(Checker &c, const Scenario &s, RunSpec &spec)
{
    spec.request.call = s.method.trimmed();
    spec.request.fills = s.fills;
    spec.request.decodeResponse = !s.discardResponse;
    spec.requestField = !s.requestBinaryFile.isEmpty() ? QStringLiteral("request_binary_file")
        : !s.requestFile.isEmpty()                     ? QStringLiteral("request_file")
                                                       : QStringLiteral("request");
    if (!s.requestBinaryFile.isEmpty()) {
        const std::optional<QByteArray> binary
            = c.file(QStringLiteral("request_binary_file"), s.requestBinaryFile, inputlimits::kRequest);
        if (!binary)
            return false;
        spec.request.binary = *binary;
    } else if (!s.requestFile.isEmpty()) {
        const std::optional<QByteArray> json
            = c.file(QStringLiteral("request_file"), s.requestFile, inputlimits::kRequest);
        if (!json)
            return false;
        spec.request.json = *json;
    } else {
        spec.request.json = s.request;
    }
    return true;
}

/// The client command (--client, --client-env): checked and typed, and the plan checked against what it can run.
bool typeClient(const Scenario &s, RunSpec &spec, Checker &c)
{
    if (s.clientCommand.trimmed().isEmpty()) {
        if (!s.clientEnvironment.isEmpty())
            return c.fail(QStringLiteral("client.env"), QStringLiteral("is for a client command; give --client"));
        return true;
    }
    ClientCommand client;
    client.command = s.clientCommand.trimmed();
    for (const QString &variable : s.clientEnvironment) {
        const qsizetype eq = variable.indexOf(u'=');
        if (eq <= 0)
            return c.fail(
                QStringLiteral("client.env"), QStringLiteral("expected NAME=VALUE, got \"%1\"").arg(variable));
        client.environment.append({ variable.left(eq), variable.mid(eq + 1) });
    }
    client.cpus = spec.clientCpus;
    if (QString why; !client.check(&why))
        return c.fail(QStringLiteral("client.command"), why);
    if (spec.server == RunServer::None)
        return c.fail(QStringLiteral("client.command"),
            QStringLiteral("the no-RPC baseline has no server for a client command to call"));
    if (const QString problem = ClientLoad::planProblem(spec.plan); !problem.isEmpty())
        return c.fail(QStringLiteral("client.command"), problem);
    spec.client = client;
    return true;
}

} // namespace

std::optional<RunSpec> prepareRun(const Scenario &s, ScenarioProblem *problem)
{
    Checker c(problem);
    if (const std::optional<ScenarioProblem> wrong = s.valueProblem()) {
        c.fail(wrong->field, wrong->message);
        return std::nullopt;
    }
    RunSpec spec;
    spec.transport.kind = parseTransport(s.transport).value_or(TransportKind::Grpc); // valueProblem() checked it
    if (!s.codec.isEmpty())
        spec.transport.codec = parseCodec(s.codec);
    if (spec.transport.codec && !carriesCodec(spec.transport.kind, *spec.transport.codec)) {
        c.fail(QStringLiteral("codec"),
            QStringLiteral("%1 carries %2 only")
                .arg(QString::fromUtf16(transportInfo(spec.transport.kind).label),
                    codecName(defaultCodec(spec.transport.kind))));
        return std::nullopt;
    }
    spec.transport.rpcMethod = s.rpcMethod;
    spec.transport.httpPath = s.httpPath.trimmed();
    spec.transport.msgpackParamsMap = s.msgpackParamsMap;
    if (s.method.trimmed().isEmpty()) {
        c.fail(QStringLiteral("method"), QStringLiteral("no method to call (package.Service/Method)"));
        return std::nullopt;
    }

    // The target: nothing, the built-in server, a command to start, or an address.
    const QString target = s.target.trimmed();
    const bool inProcess = spec.transport.kind == TransportKind::InProcess;
    if (inProcess) {
        if (!target.isEmpty() && target != u"builtin") {
            c.fail(QStringLiteral("target"),
                QStringLiteral("the none transport calls nothing: drop the target \"%1\"").arg(target));
            return std::nullopt;
        }
        spec.server = RunServer::None;
    } else if (target.isEmpty()) {
        c.fail(QStringLiteral("target"), QStringLiteral("no target: an address, a server command or builtin"));
        return std::nullopt;
    } else if (target == u"builtin") {
        spec.server = RunServer::Builtin;
    } else if (looksLikeCommand(target)) {
        spec.server = RunServer::Command;
    } else {
        spec.server = RunServer::Address;
        if (spec.transport.kind == TransportKind::Http) {
            const QUrl url(target, QUrl::StrictMode);
            if (!url.isValid() || url.scheme() != u"http" || url.host().isEmpty()) {
                c.fail(QStringLiteral("target"), QStringLiteral("\"%1\" is not an http:// URL").arg(target));
                return std::nullopt;
            }
        } else if (!target.contains(QLatin1Char(':'))) {
            c.fail(QStringLiteral("target"), QStringLiteral("\"%1\" is not HOST:PORT").arg(target));
            return std::nullopt;
        }
        spec.target.address = target;
    }
    spec.targetText = spec.server == RunServer::None ? QString() : target;
    if (!spec.transport.httpPath.isEmpty()) {
        const QString &path = spec.transport.httpPath;
        if (spec.transport.kind != TransportKind::Http) {
            c.fail(QStringLiteral("http_path"), QStringLiteral("is for the http transport"));
            return std::nullopt;
        }
        const QUrl probe(QStringLiteral("http://host") + path, QUrl::StrictMode);
        if (!path.startsWith(QLatin1Char('/')) || !probe.isValid() || probe.host() != u"host") {
            c.fail(QStringLiteral("http_path"),
                QStringLiteral("\"%1\" is not a URL path (expected e.g. /rpc or /api/sum?v=2)").arg(path));
            return std::nullopt;
        }
        if (spec.server == RunServer::Address) {
            const QString own = QUrl(target).path();
            if (!own.isEmpty() && own != u"/") {
                c.fail(QStringLiteral("http_path"),
                    QStringLiteral("the URL %1 has its own path (%2): give the path in one place").arg(target, own));
                return std::nullopt;
            }
        }
    }

    // Pinning: checked before anything starts.
    for (const auto &[field, text, into] :
        { std::tuple(QStringLiteral("pinning.client_cpus"), s.clientCpus, &spec.clientCpus),
            std::tuple(QStringLiteral("pinning.server_cpus"), s.serverCpus, &spec.serverCpus) }) {
        if (text.trimmed().isEmpty())
            continue;
        QString why;
        const std::optional<std::vector<int>> cpus = parseCpuList(text, &why);
        if (!cpus) {
            c.fail(field, why);
            return std::nullopt;
        }
        *into = *cpus;
    }
    if (!spec.serverCpus.empty() && (spec.server == RunServer::None || spec.server == RunServer::Address)) {
        c.fail(QStringLiteral("pinning.server_cpus"),
            spec.server == RunServer::None
                ? QStringLiteral("the none transport starts no server")
                : QStringLiteral("is for a server rpcscope starts (builtin or a server command), not the address "
                                 "\"%1\"")
                      .arg(target));
        return std::nullopt;
    }
    if (spec.server == RunServer::Command) {
        spec.command.command = target;
        spec.command.readyPattern = s.readyPattern;
        spec.command.cpus = spec.serverCpus;
        std::chrono::nanoseconds readyTimeout = spec.command.readyTimeout;
        if (!c.duration(QStringLiteral("server_command.ready_timeout"), s.readyTimeout, &readyTimeout))
            return std::nullopt;
        spec.command.readyTimeout = std::chrono::duration_cast<std::chrono::milliseconds>(readyTimeout);
        if (QString why; !spec.command.check(&why)) {
            c.fail(QStringLiteral("target"), why);
            return std::nullopt;
        }
    } else if (!s.readyPattern.isEmpty() || !s.readyTimeout.isEmpty()) {
        c.fail(s.readyPattern.isEmpty() ? QStringLiteral("server_command.ready_timeout")
                                        : QStringLiteral("server_command.ready"),
            QStringLiteral("is for a target that is a server command"));
        return std::nullopt;
    }

    if (!readLoad(c, s, spec, &spec.plan, &spec.target) || !readConnection(c, s, spec, &spec.target)
        || !readStream(c, s, &spec.stream) || !readOutputs(c, s, &spec) || !typeProfile(s, spec, c)
        || !typeClient(s, spec, c))
        return std::nullopt;

    if (!readRequest(c, s, spec))
        return std::nullopt;
    return spec;
}

Scenario documentAsRun(const Scenario &scenario, const RunSpec &spec)
{
    Scenario ran = scenario;
    ran.codec = codecName(spec.transport.codec.value_or(defaultCodec(spec.transport.kind)));
    ran.connections = spec.target.connections;
    ran.db.clear();
    return ran;
}

std::optional<GrpcCall> prepareCall(const RunSpec &spec, const Schema &schema, ScenarioProblem *problem)
{
    QString error;
    std::optional<GrpcCall> call = prepareGrpcCall(schema, spec.request, &error);
    if (!call) {
        if (problem)
            *problem = { spec.requestField, error };
        return std::nullopt;
    }
    const MethodInfo method = Schema::methodInfo(call->method);
    if (!transportInfo(spec.transport.kind).streams && (method.clientStreaming || method.serverStreaming)) {
        if (problem)
            *problem = { QStringLiteral("method"),
                QStringLiteral("%1 is a %2 method: streaming calls go over gRPC only (transport grpc or h2grpc)")
                    .arg(method.name, method.kindName()) };
        return std::nullopt;
    }
    // The expectations' fields, checked against the reply type (a stream's message type) now: a typo is a usage
    // error, not a run of failures.
    for (size_t i = 0; i < spec.plan.expectations.size(); ++i) {
        QString why;
        if (!Expectation::parse(spec.plan.expectations[i].text(), call->method->output_type(), &why)) {
            if (problem)
                *problem = { QStringLiteral("expect.replies[%1]").arg(i), why };
            return std::nullopt;
        }
    }
    call->stream = spec.stream;
    return call;
}

std::optional<Schema> loadRunSchema(
    const Scenario &scenario, const RunSpec &spec, const QString &address, ScenarioProblem *problem, QString *details)
{
    auto fail = [problem](const QString &field, const QString &message) -> std::optional<Schema> {
        if (problem)
            *problem = { field, message };
        return std::nullopt;
    };
    auto failWith = [&](const SchemaLoadResult &loaded, const QString &field, const QString &message) {
        if (details)
            *details = loaded.errorText();
        return fail(field, message);
    };
    if (!scenario.protos.isEmpty() && !scenario.protosets.isEmpty())
        return fail(QStringLiteral("schema"), QStringLiteral("give .proto files or protosets, not both"));
    if (!scenario.protos.isEmpty() || !scenario.protosets.isEmpty()) {
        const SchemaLoadResult loaded = scenario.protos.isEmpty()
            ? loadProtoset(scenario.protosets)
            : loadProtoFiles(scenario.protos, scenario.importPaths);
        if (!loaded.ok())
            return failWith(loaded,
                scenario.protos.isEmpty() ? QStringLiteral("schema.protosets") : QStringLiteral("schema.protos"),
                QStringLiteral("the schema has %1 error(s)").arg(loaded.errors.size()));
        return loaded.schema;
    }
    if (spec.server == RunServer::Builtin || spec.server == RunServer::None)
        return builtinBenchSchema();
    if (!speaksGrpc(spec.transport.kind))
        return fail(QStringLiteral("schema"),
            QStringLiteral("no schema: give a .proto file or a protoset (reflection is gRPC only)"));
    // No schema given: ask the server, as ghz and grpcurl do.
    ReflectionTarget reflection;
    reflection.address = address;
    reflection.timeout = std::chrono::ceil<std::chrono::milliseconds>(spec.target.timeout.count() > 0
            ? std::min<std::chrono::nanoseconds>(spec.target.timeout, std::chrono::seconds(10))
            : std::chrono::seconds(10));
    const GrpcTls &tls = spec.target.tls;
    reflection.tls = tls.enabled;
    reflection.rootCerts = tls.rootCerts;
    reflection.certChain = tls.certChain;
    reflection.privateKey = tls.privateKey;
    reflection.serverNameOverride = tls.serverNameOverride;
    reflection.skipVerify = tls.skipVerify;
    reflection.metadata = spec.target.metadata;
    const SchemaLoadResult loaded = loadSchemaFromReflection(reflection);
    if (!loaded.ok()) {
        auto failed = failWith(loaded, QStringLiteral("schema"),
            QStringLiteral("no schema: server reflection failed; give a .proto file or a protoset"));
        if (problem)
            problem->runtime = loaded.unreachable;
        return failed;
    }
    return loaded.schema;
}

} // namespace rpcscope
