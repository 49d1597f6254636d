#pragma once

#include "transport/transports.h"

#include <QMap>
#include <QObject>
#include <QString>

#include <memory>

class QSocketNotifier;
class QTimer;

namespace rpcscope {

class BuiltinGrpcServer;
class BuiltinHttpServer;
class BuiltinMsgpackServer;
class ServerProcess;

/**
 * The built-in gRPC, HTTP and msgpack-rpc servers the window offers as targets, and their address per transport.
 * They run as a child process (`rpcscope-cli serve all`) so the client's CPU is measured alone and the servers' can
 * be measured too; in this process only when that program is missing. The child can die (killed, crashed):
 * runningChanged() says so.
 */
class BuiltinServers : public QObject {
    Q_OBJECT
public:
    explicit BuiltinServers(QObject *parent = nullptr);
    ~BuiltinServers() override;

    /// Starts the servers with @p cliProgram (empty: rpcscope-cli next to this program); false with @p error.
    bool start(const QString &cliProgram, QString *error);
    /// Starts them with the program set before (setCliProgram()) unless they are up: the first use, or again after
    /// the child died (on new ports). False with @p error.
    bool ensureRunning(QString *error);
    void stop();
    /// Serve with @p cliProgram (empty: rpcscope-cli next to this program) when they start.
    void setCliProgram(const QString &cliProgram) { m_cliProgram = cliProgram; }
    /// They answer: the child serving them is alive, or they run in this process.
    bool isRunning() const;

    /// rpcscope-cli, which serves them (A/B runs start their servers with it too).
    QString cliProgram() const;
    /// The gRPC server's address; empty when not started.
    QString address() const { return m_targets.value(TransportKind::Grpc); }
    QMap<TransportKind, QString> targets() const { return m_targets; }
    /// @p address is one of the built-in servers.
    bool isTarget(const QString &address) const { return m_targets.values().contains(address); }
    /// The child process serving them, 0 when they run in this process (or not at all).
    qint64 pid() const;
    /// "Built-in servers (pid 123): gRPC ..., HTTP ..., msgpack-rpc ..." for the status bar.
    QString description() const { return m_description; }

Q_SIGNALS:
    /// The child process serving them exited, or (true) is up.
    void runningChanged(bool running);

private:
    bool startChild(const QString &cli, QString *why);
    bool startInProcess(QString *why);
    void watchChild();
    void checkChild();

    std::unique_ptr<ServerProcess> m_process;
    std::unique_ptr<BuiltinGrpcServer> m_grpc;
    std::unique_ptr<BuiltinHttpServer> m_http;
    std::unique_ptr<BuiltinMsgpackServer> m_msgpack;
    QMap<TransportKind, QString> m_targets;
    QString m_cliProgram;
    QString m_description;
    int m_pidfd = -1;
    QSocketNotifier *m_exitNotifier = nullptr;
    QTimer *m_exitPoll = nullptr; ///< only where pidfd_open is unavailable
    bool m_running = false;
};

} // namespace rpcscope
