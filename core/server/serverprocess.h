#pragma once

#include <QProcess>
#include <QString>
#include <QStringList>

#include <chrono>
#include <memory>

namespace rpcscope {

/**
 * A server rpcscope starts and stops itself: a child process in its own process group (so a Ctrl+C meant for
 * rpcscope does not kill it mid-run), ready when it prints a line matching a pattern, stopped with SIGTERM and,
 * after a grace period, SIGKILL. What it printed is kept for error messages.
 */
class ServerProcess
{
public:
    ServerProcess();
    ~ServerProcess();

    /**
     * Starts @p program and waits up to @p timeout for a stdout line matching @p readyPattern (a regular
     * expression; its first capture group, if any, is returned by readyText()). False with @p error (including
     * the server's output) when it exits or times out first.
     */
    bool start(const QString &program, const QStringList &arguments, const QString &readyPattern,
               std::chrono::milliseconds timeout, QString *error);
    void stop(std::chrono::milliseconds grace = std::chrono::milliseconds(3000));
    bool isRunning() const;
    qint64 pid() const;
    QString readyText() const { return m_readyText; }
    QString output() const { return m_output; }

private:
    std::unique_ptr<QProcess> m_process;
    QString m_readyText;
    QString m_output;
};

} // namespace rpcscope
