#pragma once

#include "scenario/runspec.h"
#include "scenario/scenario.h"
#include "server/serverlaunch.h"
#include "server/serverprocess.h"
#include "transport/transport.h"

#include <QString>

#include <memory>
#include <optional>

namespace rpcscope::cli {

/**
 * What a command needs before its first call, made in the order that keeps a mistake cheap: the server command
 * started (its schema may come from it by reflection), the schema loaded, the request prepared, the built-in server
 * started, the transport made. The servers stop when this goes. Shared by `run` (and matrix, through it) and `call`.
 */
class RunSetup {
public:
    RunSetup() = default;
    RunSetup(const RunSetup &) = delete;
    RunSetup &operator=(const RunSetup &) = delete;

    /**
     * Does all of the above for @p scenario and @p spec (prepareRun()'s), filling in @p spec's target address and
     * server pid. With @p captureMetadata the calls keep their reply headers and trailers (a call shown, not a load
     * run). Returns ExitOk, or the exit code after printing the problem (ExitUsage: something given is wrong;
     * ExitRuntime: a server did not start or answer).
     */
    int prepare(const QString &cmd, const Scenario &scenario, RunSpec *spec, bool captureMetadata = false);

    std::unique_ptr<Transport> transport;
    std::optional<GrpcCall> call;

private:
    ServerLaunch m_command;
    ServerProcess m_builtin;
};

/// The built-in server for @p kind as a child process (this same program's `serve`), so the client's CPU is
/// measured alone and the server's can be measured too.
bool startBuiltinServer(ServerProcess *server, TransportKind kind, const std::vector<int> &cpus, QString *error);

} // namespace rpcscope::cli
