#include "callcommand.h"

#include "cliapp.h"
#include "runcommand.h"
#include "runflags.h"
#include "runsetup.h"

#include "engine/singlecall.h"
#include "metrics/callstatus.h"
#include "report/callreport.h"
#include "scenario/runspec.h"
#include "transport/transports.h"

#include <google/protobuf/descriptor.h>

#include <QCoreApplication>

namespace rpcscope::cli {

namespace {

const char *const kCallHelp = R"(Usage: rpcscope-cli call [run's flags] TARGET

Makes one call and shows it: the reply in the proto3 JSON mapping (HTTP and msgpack-rpc replies decoded through
the same schema), the status and error, the reply's headers and trailers, bytes and latency; for a stream, every
message, numbered. It takes run's flags (below) for what to call and how; those about load, history and outputs
do not apply and are ignored. Waits --timeout, or 30 s. Exits 0 when the call ended OK, 1 when it did not.

)";

} // namespace

int callCommand(const QStringList &arguments)
{
    const QString cmd = QStringLiteral("call");
    if (arguments.contains(QStringLiteral("--help")) || arguments.contains(QStringLiteral("-h"))
        || arguments.contains(QStringLiteral("--help-all")))
        out() << kCallHelp;
    int code = ExitOk;
    std::optional<Scenario> scenario = scenarioFromArguments(cmd, arguments, &code);
    if (!scenario)
        return code;
    if (refuseSingleRunOutputs(cmd, arguments, &*scenario))
        return ExitUsage;
    if (!scenario->clientCommand.isEmpty())
        return usageError(cmd,
            QStringLiteral("--client: call makes one call with rpcscope's own client; a client command's calls are "
                           "run with run --client"));
    ScenarioProblem problem;
    std::optional<RunSpec> prepared = prepareRun(*scenario, &problem);
    if (!prepared)
        return usageError(cmd, describeForCli(problem, *scenario));
    RunSpec &spec = *prepared;
    RunSession session(*scenario, spec, std::nullopt, QCoreApplication::applicationFilePath());
    session.setCaptureMetadata(true);
    if (const int setupCode = prepareSession(cmd, &session); setupCode != ExitOk)
        return setupCode;
    const std::unique_ptr<Transport> transport = session.takeTransport();
    const SingleCallResult result = sendOnce(
        *transport, sendOnceWait(session.spec().target.timeout), spec.plan.expectations, spec.plan.expectedStatuses);

    CallDescription described;
    described.method = spec.request.call;
    described.transport = transportName(spec.transport.kind);
    described.codec = codecName(spec.transport.codec.value_or(defaultCodec(spec.transport.kind)));
    described.target = session.spec().target.address;
    const GrpcCall &call = *session.call();
    described.clientStreams = call.method && call.method->client_streaming();
    described.serverStreams = call.method && call.method->server_streaming();
    described.inProcess = spec.transport.kind == TransportKind::InProcess;
    out() << formatSingleCall(described, result);
    out().flush();
    return result.asExpected() ? ExitOk : ExitFailedCalls;
}

} // namespace rpcscope::cli
