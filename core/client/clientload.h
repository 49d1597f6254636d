#pragma once

#include "client/clientcommand.h"
#include "engine/loadengine.h"
#include "engine/loadrun.h"

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace rpcscope {

/// Block @p number of @p plan, for a client command: its calls or duration, callers, warm-up calls and interval.
ClientBlock clientBlockOf(const LoadPlan &plan, int number);

/**
 * Runs @p block on @p client as a timed block of @p plan: the plan's timedPhase told around it (the client's warm-up
 * calls are inside the block: it runs them first), and its serverPid's CPU and memory sampled over it into
 * @p result, as the load engine samples them for its own calls. ClientCommandRunner::runBlock()'s result.
 */
bool runTimedClientBlock(
    ClientCommandRunner &client, const ClientBlock &block, const LoadPlan &plan, RunSnapshot *result, QString *error);

/**
 * A run whose calls a client command makes (issue 36: `run --client`, the window's run settings): the command started
 * against the target, told to run the plan as one block (its calls or duration, callers, warm-up calls), and read
 * call by call, on a thread of its own. Its snapshots grow as the client reports (at most every 100 ms), as the load
 * engine's do; the server's CPU and memory are sampled over the block as the engine samples them, and the client's
 * are measured from outside.
 *
 * Everything that may wait (the client's start-up and "ready", its calls) runs on that thread, so start() returns at
 * once and stop() ends the run soon from any thread, also while the client is starting. A client that fails (exits,
 * prints garbage, goes silent) ends the run with failure() naming the line; what it reported until then is kept.
 */
class ClientLoad : public LoadRun {
    Q_OBJECT
public:
    explicit ClientLoad(QObject *parent = nullptr);
    ~ClientLoad() override;

    /**
     * Starts @p command against @p target (HOST:PORT) to run @p plan: closed loop (a plan with a rate or a warm-up by
     * duration is refused, with @p error), its timedPhase told around the block, its serverPid sampled.
     * @p started is told the client's process id and command line once it is ready, on the load's thread (a profiler
     * adds the process there, before its window opens).
     */
    bool start(const ClientCommand &command, const QString &target, const LoadPlan &plan,
        std::function<void(qint64 pid, const QString &commandLine)> started, QString *error);
    void stop() override;
    bool isRunning() const override;
    bool waitForFinished(std::chrono::milliseconds timeout) const override;
    RunSnapshot snapshot() const override;
    /// A client command keeps no per-call samples.
    std::vector<RawSample> rawSamples() const override { return {}; }
    QString failure() const override;

    /// Why @p plan cannot be run by a client command (the protocol's blocks are closed loop, warmed up by count);
    /// empty when it can.
    static QString planProblem(const LoadPlan &plan);

private:
    void run(const ClientCommand &command, const QString &target, const LoadPlan &plan,
        const std::function<void(qint64, const QString &)> &started);
    void publish(const RunSnapshot &snapshot);

    ClientCommandRunner m_runner;
    std::thread m_thread;
    mutable std::mutex m_mutex;
    mutable std::condition_variable m_ended;
    RunSnapshot m_snapshot;
    bool m_running = false;
    bool m_stopped = false;
    QString m_failure;
};

} // namespace rpcscope
