#pragma once

#include "server/servercommand.h"
#include "transport/transports.h"

#include <QString>

#include <chrono>

namespace rpcscope {

/**
 * A server rpcscope starts for a run and the address its client dials: a server command (readiness, CPU pinning,
 * the process-group guard and CPU/RSS sampling are RunningServer's and ServerProcess's) or rpcscope's own `serve`
 * process. The one place that knows that an HTTP client dials a URL. Used by run and ab, in the CLI and the GUI.
 * The destructor stops the server.
 */
class ServerLaunch {
public:
    /**
     * Starts @p command for a client of @p kind and waits until it is ready. The address to dial, or an empty string
     * with @p error (what happened, the command, its exit, its last lines) when it did not start.
     */
    QString start(const ServerCommand &command, TransportKind kind, QString *error);
    /// Stops the server and starts the same command again (a process replicate): the new address, or empty.
    QString restart(QString *error);
    /// SIGTERM to its process group, up to @p grace, then SIGKILL.
    void stop(std::chrono::milliseconds grace = std::chrono::milliseconds(3000)) { m_server.stop(grace); }

    /// The server's pid while it runs (for the run's CPU and RSS sampling), else 0.
    qint64 pid() const { return m_server.pid(); }
    const ServerCommand &command() const { return m_command; }
    /// The process itself: its command line, output, exit status and final CPU/RSS sample.
    const RunningServer &server() const { return m_server; }

private:
    RunningServer m_server;
    ServerCommand m_command;
    TransportKind m_kind = TransportKind::Grpc;
};

/**
 * The readiness line of rpcscope's `serve grpc|http|msgpack`: the address it listens on, alone on a line
 * ("127.0.0.1:PORT", HTTP's "http://127.0.0.1:PORT"). Its one capture group is the address.
 */
QString serveReadyPattern();

/// The `rpcscope-cli serve` subcommand whose server a client of @p kind calls: "grpc", "http" or "msgpack".
QString serveSubcommand(TransportKind kind);

/// The command that runs rpcscope's own server for @p kind from the executable @p program on the port {port} names.
ServerCommand builtinServeCommand(const QString &program, TransportKind kind);

/// The address a client of @p kind dials for a server that listens at @p address: HTTP's takes an http:// URL.
QString dialAddress(TransportKind kind, const QString &address);

} // namespace rpcscope
