#pragma once

#include "metrics/processstats.h"

#include <QList>
#include <QPair>
#include <QString>
#include <QStringList>

#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include <sys/types.h>

class QRegularExpression;

namespace rpcscope {

/**
 * A server rpcscope starts and stops itself: a child process in its own process group (so a Ctrl+C meant for
 * rpcscope does not kill it mid-run), ready when it prints a line matching a pattern or when a TCP port accepts
 * connections, stopped with SIGTERM to its process group and, after a grace period, SIGKILL.
 *
 * Its stdout and stderr go to one pipe that a thread of this object drains all the time, so a server that logs
 * every request never blocks on a full pipe, whether or not the owning thread runs an event loop. The last
 * lines are kept for error messages. No QProcess and no QObject: an instance may be used from any one thread
 * at a time. The child receives SIGTERM when the thread that started it exits (PR_SET_PDEATHSIG), so start it
 * from a long-lived thread (the CLI's main thread, the GUI thread).
 *
 * The destructor stops the server: no zombie, no orphaned process group.
 */
class ServerProcess {
public:
    /// Everything start() needs.
    struct Launch {
        /// A path, or a name looked up in PATH. A relative path with a '/' is relative to workingDirectory.
        QString program;
        QStringList arguments;
        /// Empty: rpcscope's own working directory.
        QString workingDirectory;
        /// Added to (or replacing in) the environment rpcscope inherited, in order.
        QList<QPair<QString, QString>> environment;
        /// Ready when a stdout/stderr line matches this regular expression. Empty: see readyPort.
        QString readyPattern;
        /// With no pattern: ready when 127.0.0.1:readyPort accepts a TCP connection (polled every 50 ms).
        quint16 readyPort = 0;
        std::chrono::milliseconds readyTimeout { 10000 };
        /// Pins the process to these CPUs (sched_setaffinity before exec; its threads and children inherit it).
        /// Empty: it inherits rpcscope's own mask.
        std::vector<int> cpus;
        /**
         * A process rpcscope talks to (a client command): its stdin and stdout are these descriptors, the child's
         * ends of pipes the caller made (the caller keeps and closes them; the child gets copies), and only its
         * stderr goes to output(). -1: stdin is /dev/null and stdout goes to output() beside stderr, as for a
         * server. With neither a pattern nor a port it is ready once it has been exec'd.
         */
        int stdinFd = -1;
        int stdoutFd = -1;
    };

    /// How the process ended (valid once it has been reaped).
    struct ExitStatus {
        bool valid = false;
        /// The exit code when it exited, -1 when a signal ended it.
        int code = -1;
        /// The signal that ended it, 0 when it exited.
        int signal = 0;
        /// "exit code 3", "killed by signal 9 (SIGKILL)".
        QString toString() const;
    };

    ServerProcess();
    ~ServerProcess();
    ServerProcess(const ServerProcess &) = delete;
    ServerProcess &operator=(const ServerProcess &) = delete;

    /**
     * Starts @p launch and waits for it to be ready. False with @p error when it cannot be started, exits before
     * it is ready, or is not ready within the timeout; the message says which, names the command, gives the exit
     * code or signal and the last 40 lines of its output. The process is stopped on failure.
     */
    bool start(const Launch &launch, QString *error);

    /**
     * Starts @p program and waits up to @p timeout for an output line matching @p readyPattern (a regular
     * expression; its first capture group, if any, is returned by readyText()).
     */
    bool start(const QString &program, const QStringList &arguments, const QString &readyPattern,
        std::chrono::milliseconds timeout, QString *error);

    /**
     * SIGTERM to the process group, up to @p grace for the process to exit, then SIGKILL to the group. Records
     * exitStatus() and finalSample(). Harmless when nothing runs.
     */
    void stop(std::chrono::milliseconds grace = std::chrono::milliseconds(3000));

    /// True while the process has been started and has not exited.
    bool isRunning() const;
    /// The process id while it runs (also its process group id), else 0. For sampleProcess().
    qint64 pid() const;
    /// The first capture group of the line that matched the ready pattern (the whole line without a group).
    QString readyText() const;
    /// The last lines it printed (stdout and stderr merged), at most outputLineLimit of them.
    QString output() const;
    /// The last @p lines lines it printed.
    QString outputTail(int lines) const;
    /// How the last process ended; invalid while it runs or when none was started.
    ExitStatus exitStatus() const;
    /**
     * The last process's CPU seconds over its whole life (its own and its reaped children's, from wait4) and its
     * resident set just before stop() signalled it. Invalid while it runs.
     */
    ProcessSample finalSample() const;

    /**
     * The executable start() would run for @p program: a path (relative ones with a '/' taken from
     * @p workingDirectory when it is set) or a name looked up in PATH, the PATH of @p environment when it sets one.
     * Empty when there is none.
     */
    static QString resolveProgram(const QString &program, const QString &workingDirectory = {},
        const QList<QPair<QString, QString>> &environment = {});

    static constexpr int outputLineLimit = 1000;

private:
    struct State;

    /// Waits for the started process to be ready (start()'s second half); stops it and sets @p error when it is not.
    bool waitUntilReady(const Launch &launch, const QRegularExpression &ready, const QString &shown, QString *error);

    std::unique_ptr<State> m_state;
};

} // namespace rpcscope
