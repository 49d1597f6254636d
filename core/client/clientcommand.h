#pragma once

#include "metrics/processstats.h"
#include "metrics/runsnapshot.h"

#include <QJsonObject>
#include <QList>
#include <QPair>
#include <QString>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace rpcscope {

/**
 * A client command (issue 36): a program that makes the calls itself, in its own language and library, and reports
 * each one back (clientprotocol.h, docs/client-protocol.md), so that the code under test can be the client: a Python
 * protobuf runtime, a grpc-java upgrade. rpcscope starts it, tells it the target and each block to run, reads its
 * calls, and measures its CPU and memory from outside.
 *
 * The command line is split as a server command's is (splitCommandLine(): shell quoting, no shell); every `{target}`
 * in it and in the environment's values becomes the address to call (HOST:PORT), which is also in
 * RPCSCOPE_TARGET.
 */
struct ClientCommand {
    QString command;
    QList<QPair<QString, QString>> environment; ///< added to the inherited environment, in order
    QString workingDirectory; ///< empty: rpcscope's own
    std::vector<int> cpus; ///< pinned to these CPUs; empty: not pinned
    /// A block ends with an error when the client prints nothing for this long (a hung client cannot stall a run).
    std::chrono::milliseconds idleTimeout { 30000 };

    /// False with @p error when the command cannot be split or names no program it can find.
    bool check(QString *error) const;
    /// For run records: the command and environment as given (values that look like secrets redacted), the program
    /// it resolves to.
    QJsonObject describe() const;
};

/// One block for a client to run.
struct ClientBlock {
    int number = 1; ///< from 1, as the protocol's "block" and "done"
    uint64_t calls = 0; ///< timed calls; 0: for @c duration
    std::chrono::nanoseconds duration { 0 };
    int concurrency = 1;
    uint64_t warmupCalls = 0;
    std::chrono::nanoseconds interval { std::chrono::seconds(1) }; ///< the time series' resolution
    /// The block ends then, as on interrupt(), whatever the client is doing (a run's wall-clock limit).
    std::chrono::steady_clock::time_point endBy = std::chrono::steady_clock::time_point::max();
    /// Told the block's measurements so far (state Running) as they grow, at most every 100 ms, on the thread
    /// running it: a run's live view inside a long block. Unset: not told.
    std::function<void(const RunSnapshot &)> progress;
};

/**
 * A running client command and the blocks it runs. runBlock() blocks its caller (a run's or an A/B runner's thread)
 * until the client says the block is done, and returns the block's measurements as a RunSnapshot, as the load
 * engine's would be: latencies of the OK calls and of the others, statuses, errors, bytes, a time series by when
 * each report arrived, and the client process's CPU and resident set over the block.
 *
 * A client that exits early, prints a line that is not of the protocol, reports more calls than asked or prints
 * nothing for ClientCommand::idleTimeout ends the block with an error naming the line (its number and text) and
 * the last lines of its stderr. interrupt(), from any thread, ends a block early with what it has.
 */
class ClientCommandRunner {
public:
    ClientCommandRunner();
    ~ClientCommandRunner();
    ClientCommandRunner(const ClientCommandRunner &) = delete;
    ClientCommandRunner &operator=(const ClientCommandRunner &) = delete;

    /// Starts @p command against @p target (HOST:PORT) and waits for it to say {"ready": true} (it has connected);
    /// false with @p error naming the command and what went wrong.
    bool start(const ClientCommand &command, const QString &target, QString *error);
    /// Runs @p block; false with @p error (the block's partial measurements are in @p snapshot all the same).
    bool runBlock(const ClientBlock &block, RunSnapshot *snapshot, QString *error);
    /// Ends a block running on another thread soon (its snapshot is then RunState::Stopped), or a start() waiting for
    /// the client to be ready (it fails: "stopped before the client was ready"); the client is told nothing until
    /// stop(). Safe from any thread at any time, also before start(); the next wait it ends is the last.
    void interrupt();
    /// Closes the client's stdin (the protocol's "exit"), waits up to @p grace, then stops its process group.
    void stop(std::chrono::milliseconds grace = std::chrono::milliseconds(3000));

    bool isRunning() const;
    /// The client's process id while it runs, else 0.
    qint64 pid() const;
    /// The command line as started ({target} filled in).
    QString commandLine() const;
    /// The last @p lines of what it printed on stderr.
    QString stderrTail(int lines = 20) const;
    /// Its CPU and peak resident set over its life, after stop().
    ProcessSample finalSample() const;
    /// Lines of its stdout read so far (every block's).
    uint64_t linesRead() const;

private:
    using Clock = std::chrono::steady_clock;
    enum class Next { Line, Exited, Idle, Deadline, Interrupted, Failed };
    /// The next line of the client's stdout, or why there is none: it exited, printed nothing since @p lastLine for
    /// the idle timeout, passed @p deadline, was interrupted (or @p endBy came), or reading failed (@p why).
    Next nextLine(Clock::time_point lastLine, Clock::time_point deadline, Clock::time_point endBy, QByteArray *line,
        QString *why);
    /// Waits for {"ready": true}; false with @p error naming what came instead.
    bool waitUntilReady(QString *error);
    /// Why a client that exited before block @p number: the first line it printed that is not of the protocol, or
    /// its exit status.
    QString exitedBetweenBlocks(int number);
    /// "client command CMD: @p why", with the last lines of its stderr.
    QString failure(const QString &why) const;

    struct State;
    std::unique_ptr<State> m_state;
    int m_wake = -1; ///< eventfd: interrupt(); the runner's, not a start()'s, so that it may come at any time
    std::atomic<bool> m_interrupted { false };
};

} // namespace rpcscope
