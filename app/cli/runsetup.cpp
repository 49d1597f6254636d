#include "runsetup.h"

#include "cliapp.h"
#include "runflags.h"

#include "net/reachability.h"
#include "transport/transports.h"

#include <google/protobuf/descriptor.h>

#include <QCoreApplication>

namespace rpcscope::cli {

bool startBuiltinServer(ServerProcess *server, TransportKind kind, const std::vector<int> &cpus, QString *error)
{
    ServerProcess::Launch launch;
    launch.program = QCoreApplication::applicationFilePath();
    launch.arguments
        = { QStringLiteral("serve"), serveSubcommand(kind), QStringLiteral("--port"), QStringLiteral("0") };
    launch.readyPattern = serveReadyPattern();
    launch.readyTimeout = std::chrono::seconds(10);
    launch.cpus = cpus;
    return server->start(launch, error);
}

int RunSetup::prepare(const QString &cmd, const Scenario &scenario, RunSpec *spec, bool captureMetadata)
{
    QString error;
    ScenarioProblem problem;
    // A server command is started now, before the schema may be asked of it.
    if (spec->server == RunServer::Command) {
        err() << "Starting " << spec->command.command << '\n';
        err().flush();
        spec->target.address = m_command.start(spec->command, spec->transport.kind, &error);
        if (spec->target.address.isEmpty()) {
            err() << "rpcscope-cli " << cmd << ": the server command did not start: " << error << '\n';
            return ExitRuntime;
        }
        spec->plan.serverPid = m_command.pid();
    }
    QString details;
    const std::optional<Schema> schema = loadRunSchema(scenario, *spec, spec->target.address, &problem, &details);
    if (!schema) {
        if (!details.isEmpty())
            err() << details << '\n';
        const QString text
            = describeForCli(problem, scenario) + (details.isEmpty() ? QString() : QStringLiteral(", see above"));
        if (problem.runtime) { // the server did not answer: nothing wrong with what was given
            err() << "rpcscope-cli " << cmd << ": " << text << '\n';
            return ExitRuntime;
        }
        return usageError(cmd, text);
    }
    call = prepareCall(*spec, *schema, &problem);
    if (!call)
        return usageError(cmd, describeForCli(problem, scenario));
    call->captureMetadata = captureMetadata;
    if (spec->transport.kind == TransportKind::InProcess && !inProcessRunsMethod(*call))
        err() << "rpcscope-cli " << cmd << ": note: " << QString::fromStdString(call->method->full_name())
              << " is not a method of rpcscope's bench service: the no-RPC baseline times its request's codec and an "
                 "empty reply's, not the method's work\n";

    if (spec->server == RunServer::Builtin) {
        if (!startBuiltinServer(&m_builtin, spec->transport.kind, spec->serverCpus, &error)) {
            err() << "rpcscope-cli " << cmd << ": built-in server: " << error << '\n';
            return ExitRuntime;
        }
        spec->target.address = m_builtin.readyText();
        spec->plan.serverPid = m_builtin.pid();
    }
    // An address nobody answers at is "could not do the work" for every transport, before any load is sent (what
    // was given is checked first: a bad file is a usage error wherever the target is).
    if (spec->server == RunServer::Address
        && !probeReachable(spec->target.address, probeTimeoutFor(spec->target.timeout), &error)) {
        err() << "rpcscope-cli " << cmd << ": cannot reach the target: " << error << '\n';
        return ExitRuntime;
    }
    transport = makeTransport(spec->transport, spec->target, *call, &error);
    if (!transport)
        return usageError(cmd, error);
    return ExitOk;
}

} // namespace rpcscope::cli
