#pragma once

#include "metrics/processstats.h"
#include "server/serverprocess.h"

#include <QJsonObject>
#include <QList>
#include <QPair>
#include <QString>
#include <QStringList>

#include <chrono>
#include <optional>
#include <vector>

namespace rpcscope {

/**
 * A benchmark target that is a command rpcscope starts before the run and stops after it (issue 6).
 *
 * The command line is split like a shell would split it (see splitCommandLine()) but no shell runs it: no
 * variables, globs, pipes or redirections; write `sh -c '...'` for those. Every `{port}` in the arguments and in
 * the environment values is replaced by a free loopback port rpcscope picks, and the address to dial is then
 * `127.0.0.1:PORT`.
 *
 * Without `{port}` anywhere, rpcscope cannot know the address, so the server must print it: readyPattern is then
 * required and its first capture group is the address, e.g. `listening on (\S+)`.
 *
 * Readiness: a stdout/stderr line matching readyPattern, or, with no pattern, 127.0.0.1:PORT accepting a TCP
 * connection (polled every 50 ms), within readyTimeout.
 */
struct ServerCommand {
    /// Shell-like command line, with `{port}` placeholders.
    QString command;
    /// Empty: rpcscope's working directory.
    QString workingDirectory;
    /// Added to the inherited environment, in order; values may hold `{port}`.
    QList<QPair<QString, QString>> environment;
    /// A regular expression on one output line (stdout or stderr). Empty: ready when the port accepts connections.
    QString readyPattern;
    std::chrono::milliseconds readyTimeout { 10000 };
    /**
     * CPUs the server is pinned to (sched_setaffinity in the child, before exec), so it does not share cores with
     * the client; empty: not pinned (it inherits rpcscope's mask). A property of the machine it runs on, given
     * per run (--server-cpus), so not part of toJson().
     */
    std::vector<int> cpus;

    bool operator==(const ServerCommand &) const = default;

    /// `{"command", "workingDirectory", "env": ["NAME=value"], "readyPattern", "readyTimeout": "10s"}`, empty
    /// fields left out.
    QJsonObject toJson() const;
    /// The inverse of toJson(); std::nullopt with @p error naming the field ("server.env[2]: expected a string")
    /// on a wrong type, an unknown field, or a command check() rejects.
    static std::optional<ServerCommand> fromJson(const QJsonObject &json, QString *error);
    /// False with @p error (naming the field) when the command cannot be split, the pattern is not a valid
    /// regular expression, or the address could not be known (no `{port}` and no capture group).
    bool check(QString *error) const;
    /// True when `{port}` occurs in the command or in an environment value.
    bool usesPort() const;
    /**
     * For run records: the command, working directory and environment as given, plus the program it resolves to
     * ("program": an absolute path, empty when not found), the ready pattern and timeout, and "cpus" ("0,2-3")
     * when it is pinned.
     */
    QJsonObject describe() const;
};

/// True when @p target is a command rather than an address: it holds whitespace or `{port}` (an address never does).
bool looksLikeCommand(const QString &target);

/**
 * Splits @p command into program and arguments by POSIX shell quoting rules: whitespace separates words;
 * `'...'` keeps everything literally; inside `"..."` a backslash escapes only `"`, `\`, `$` and a backquote
 * (and a backslash-newline is removed); elsewhere a backslash makes the next character literal. `''` is an
 * empty argument. std::nullopt with @p error on an unterminated quote, a trailing backslash, or no words.
 * (QProcess::splitCommand is not used: it knows neither single quotes nor backslash escapes.)
 */
std::optional<QStringList> splitCommandLine(const QString &command, QString *error);

/**
 * A free TCP port on 127.0.0.1 for a server command's {port}, 0 with @p error when none could be had. Chosen below
 * the kernel's ephemeral range (net.ipv4.ip_local_port_range) where there is room: a port from that range, free
 * when picked, can be taken as the local port of any outgoing connection (the run's own client's) before the
 * command binds it, and then the command fails with "address in use" (seen in ab's restarts). Falls back to a
 * port the kernel picks.
 */
quint16 pickFreeLoopbackPort(QString *error);

/**
 * A ServerCommand started: picks the port, splits and substitutes, and runs it with ServerProcess (which owns the
 * process mechanics: process group, output, readiness, SIGTERM then SIGKILL). The destructor stops it.
 */
class RunningServer {
public:
    RunningServer() = default;
    ~RunningServer() = default;
    RunningServer(const RunningServer &) = delete;
    RunningServer &operator=(const RunningServer &) = delete;

    /**
     * Starts @p command and waits until it is ready. Returns the address to dial: "127.0.0.1:PORT" when the command
     * uses `{port}`, else the ready pattern's first capture group. An empty string with @p error (what happened,
     * the command, its exit code or signal, the last 40 lines of its output) on failure; the process is then gone.
     */
    QString start(const ServerCommand &command, QString *error);
    /// SIGTERM to its process group, up to @p grace, then SIGKILL; records exitStatus() and finalSample().
    void stop(std::chrono::milliseconds grace = std::chrono::milliseconds(3000)) { m_process.stop(grace); }

    bool isRunning() const { return m_process.isRunning(); }
    /// For sampleProcess() during the run (LoadPlan::serverPid); 0 when not running.
    qint64 pid() const { return m_process.pid(); }
    QString address() const { return m_address; }
    /// The port substituted for `{port}` (0 when the command has none).
    quint16 port() const { return m_port; }
    /// The program and arguments as run, after substitution.
    QStringList commandLine() const { return m_commandLine; }
    /// The line (or its first capture group) that matched the ready pattern.
    QString readyText() const { return m_process.readyText(); }
    QString output() const { return m_process.output(); }
    ServerProcess::ExitStatus exitStatus() const { return m_process.exitStatus(); }
    /// CPU seconds over the server's whole life and its last resident set; valid after stop().
    ProcessSample finalSample() const { return m_process.finalSample(); }

private:
    ServerProcess m_process;
    QString m_address;
    quint16 m_port = 0;
    QStringList m_commandLine;
};

} // namespace rpcscope
