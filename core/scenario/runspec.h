#pragma once

#include "client/clientcommand.h"
#include "compare/checks.h"
#include "engine/callsetup.h"
#include "engine/loadengine.h"
#include "export/exporter.h"
#include "profile/profiler.h"
#include "scenario/scenario.h"
#include "schema/schema.h"
#include "server/servercommand.h"
#include "transport/grpctransport.h"
#include "transport/transports.h"

#include <QString>

#include <optional>
#include <vector>

namespace rpcscope {

/// Where a run's server comes from.
enum class RunServer {
    None, ///< --transport none: nothing is called
    Builtin, ///< the built-in server for the transport, started for the run
    Command, ///< a server command started and stopped around the run
    Address, ///< a server that is already running
};

/**
 * A Scenario checked and typed, ready to start: every value the document (or the flags, or the widgets) gave as
 * text is parsed here, once, for every front end. The call itself needs the schema: see prepareCall().
 */
struct RunSpec {
    TransportOptions transport;
    RunServer server = RunServer::Address;
    /// The connection settings; `target.address` is the address for RunServer::Address and is filled in by whoever
    /// starts the built-in server or the command.
    GrpcTarget target;
    ServerCommand command; ///< RunServer::Command: the command, its readiness, its CPUs
    LoadPlan plan; ///< plan.serverPid is filled in by whoever starts the server
    RequestSpec request; ///< the request: JSON (from the document or -D's file) or binary (-b's file)
    QString requestField; ///< where the request came from: "request", "request_file" or "request_binary_file"
    StreamOptions stream;
    std::vector<int> clientCpus; ///< pin rpcscope's threads here once the servers run; empty = not pinned
    std::vector<int> serverCpus; ///< pin the server rpcscope starts here; empty = not pinned
    ProfileOptions profile; ///< CPU profiles of the timed phase
    /// Set: a client command makes the calls (--client), against the server the run starts or its address; its
    /// environment as given, its CPUs the client's (--client-cpus).
    std::optional<ClientCommand> client;
    std::vector<Check> checks;
    bool failOnError = false;
    QString rawSamplesPath; ///< write every timed call here as CSV when the run ends; empty = none
    struct Output {
        ExportFormat format = ExportFormat::Summary;
        QString file; ///< "-" = standard output
        QString chart; ///< png/pdf/svg: its own chart, as named (the front end reads it); empty = the run's
    };
    std::vector<Output> exports;
    bool save = false; ///< keep the run in the history (db, or the default database)
    QString db;
    QStringList labels;
    QString name;
    QString compareTo; ///< a baseline to compare with when the run ends; empty = none
    double compareThreshold = 0.05;

    /// "builtin", the command, or the address: the run's target as the history records it.
    QString targetText;
};

/// The file a scenario's request comes from, if any: for messages that name it ("-D FILE: ...").
QString requestSourceFile(const Scenario &scenario);

/**
 * Checks @p scenario and types it: transport and codec, target, load plan (counts, durations, schedules), the
 * connection (sizes, timeout, metadata, TLS files read now), pinning, checks, outputs. std::nullopt with @p problem
 * naming the field. Nothing is started and no schema is needed; files named for TLS and the request are read.
 */
std::optional<RunSpec> prepareRun(const Scenario &scenario, ScenarioProblem *problem);

/**
 * @p scenario as it ran (prepareRun()'s @p spec of it), the document a run's record keeps: the defaults the spec
 * resolved written out (the codec, the connections), so that a run from the CLI and one from the window's editor
 * (which always names them) keep the same document; and the history it was saved in left out (where a run is kept is
 * not part of what ran, and a path of this machine).
 */
Scenario documentAsRun(const Scenario &scenario, const RunSpec &spec);

/**
 * Resolves the method in @p schema and builds the request (JSON or binary, plus fills) and the stream settings:
 * what the engine calls. std::nullopt with @p problem naming the field ("request", "fills", "load.stream_interval").
 */
std::optional<GrpcCall> prepareCall(const RunSpec &spec, const Schema &schema, ScenarioProblem *problem);

/**
 * The schema a run uses: the scenario's .proto files (with its import paths) or protosets; else the bench schema for
 * the built-in server and the none transport; else, over gRPC, the server's reflection at @p address (TLS and
 * metadata as the run's). std::nullopt with @p problem saying what went wrong and @p details listing the loader's
 * errors (files, lines), if any.
 */
std::optional<Schema> loadRunSchema(
    const Scenario &scenario, const RunSpec &spec, const QString &address, ScenarioProblem *problem, QString *details);

} // namespace rpcscope
