#pragma once

#include "client/clientcommand.h"
#include "compare/sequentialab.h"
#include "engine/loadengine.h"
#include "transport/grpctransport.h"
#include "transport/transports.h"

#include <QString>

#include <array>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace rpcscope {

/// One side of an A/B run: where to call and how (the same scenario on both sides, only the target differs).
struct AbSide {
    TransportOptions transport;
    GrpcTarget target;
    GrpcCall call;
    LoadPlan plan; ///< the whole run's plan: totalCalls or duration, warm-up, concurrency, serverPid of this side
    /**
     * Starts this side's server anew (stopping the one running) and gives its address and pid; set for server
     * commands when AbBlocks::restarts > 1. Called on the runner's thread, between blocks, never during one.
     */
    std::function<bool(QString *address, int64_t *pid, QString *error)> restartServer;
    /**
     * Set: this side's calls are made by this client command (issue 36), not by rpcscope's client; transport and
     * call are then unused. The runner starts it (against target.address) before the side's first block, starts it
     * anew with every new process of the side (as a server command is; with AbBlocks::restarts > 1 it is restarted
     * even when the server is not), and stops it when the run ends.
     */
    std::optional<ClientCommand> client;
    /// Told each start of the client command (its process id and command line), on the runner's thread, before
    /// its first block: a profiler follows it.
    std::function<void(int64_t pid, const QString &command)> clientStarted;
};

/// One finished block, for progress reports.
struct AbBlockResult {
    int side = 0; ///< 0 = A, 1 = B
    int round = 0; ///< from 1
    uint64_t calls = 0;
    uint64_t failed = 0;
    uint64_t p50Ns = 0;
    int process = 0; ///< which server process of its side served it (from 1), 0 when not restarted
    /// When this block completed a pair that was judged: SequentialAb::progressLine() after it; else empty.
    QString pairJudged;
};

/// How the calls are cut into blocks: by count when the plan has a call count, by time otherwise.
struct AbBlocks {
    uint64_t calls = 0; ///< per block (count mode)
    std::chrono::nanoseconds time { 0 }; ///< per block (time mode)
    /**
     * Server processes per side over the run (A1 B1 B2 A2 ..., each side's blocks split evenly between them):
     * process effects (placement, memory layout) are then replicated and counted by the comparison. Only for sides
     * with restartServer; 1 = the server runs the whole time.
     */
    int restarts = 1;
    /// false (default): one connection per side and server process, kept across blocks; true: dialled per block.
    bool connectionPerBlock = false;
    /**
     * Every pair of blocks (A_i, B_i) is judged as it completes (SequentialAb, anytime-valid); with untilDecided the
     * run ends after the first pair that decides at @p threshold, before another block starts. With restarts > 1 as
     * well, the replicates are pairs of processes (restarted every rounds / restarts rounds, each pair's rounds in a
     * balanced order of their own, AbRunner::sideOf), judged as each pair's last round completes.
     */
    bool untilDecided = false;
    double threshold = 0.05;
    /// A wall-clock limit for the whole run (0 = none): the block running then ends early, and no other starts.
    std::chrono::nanoseconds maxDuration { 0 };
    /**
     * The side that goes first in round 1 (0 = A, 1 = B; -1, the default: a coin flip at start()). The order then
     * follows AbRunner::blockSide(). A caller that starts the sides' servers flips the coin itself (coinFlip()) and
     * starts that side's server first, as a restart would.
     */
    int firstSide = -1;
    /// Both sides are server processes the caller started, not pinned to CPUs: see SequentialAb::setUnpinnedProcesses.
    bool unpinnedProcesses = false;
    /// 0 or 1, each with probability 1/2.
    static int coinFlip();

    /// Blocks for a run judged as it goes (untilDecided): a fortieth of it (at least 20 calls and 4 per caller, or
    /// 250 ms): a sequential verdict wants many pairs, each block still enough for a p50.
    static AbBlocks sequentialFor(const LoadPlan &plan);

    /// A tenth of the run, at least 4 calls per caller (count) or 1 s (time).
    static AbBlocks defaultFor(const LoadPlan &plan);
    /// How many rounds these blocks make of @p plan (an estimate for a timed run).
    int roundsFor(const LoadPlan &plan) const;
    /**
     * The default number of server processes a side: 5 when a side is a command rpcscope starts (at most one per
     * round), else 1. Five: with two blocks a process at the default ten rounds, process-to-process differences
     * are counted with 8 degrees of freedom, for about 10 s of server starts (measured in docs/statistics.md).
     */
    static int defaultRestarts(bool anyCommand, int rounds);
    /**
     * The default when judged as it goes: 10 server processes a side when a side is a command rpcscope starts (at
     * most one per two rounds: 4 rounds each at the default 40), else 1. The sequence over pairs of processes is
     * bounded from the 5th pair when tuned for 10 (docs/sequential.md), so it can decide half-way through.
     */
    static int defaultSequentialRestarts(bool anyCommand, int rounds);
    /// "kept" or "per-block", as RunSnapshot::blocksConnection records it.
    QString connectionName() const;
};

/// What ended an A/B run.
enum class AbEnd {
    Running,
    Planned, ///< both sides made their planned calls (or time)
    Decided, ///< AbBlocks::untilDecided, and a pair decided
    MaxDuration, ///< AbBlocks::maxDuration passed
    Stopped, ///< stop(): a signal, the user
    Failed, ///< error() says why
};

/**
 * Interleaved A/B: runs blocks of calls against A and B in rounds, in an order balanced between the two sides
 * (blockSide(): A1 B1 B2 A2 B3 A3 A4 B4 ..., or the same from B, a coin flip), until both sides have made their
 * planned calls (or time), so that whatever drifts on the machine meanwhile (other load, thermal throttling, a noisy
 * neighbour) hits both alike, and so does the order. With A always first, the same server compared with itself came
 * out slower on the B side: 8% over 20 `ab` A/A runs of h2grpc (t = 3.7 over the runs), 4% over 20 of grpc (t =
 * 2.5). The side whose server process starts first at a restart ran its next round's block faster (mean p50 41-53
 * us against 52-58 us), whichever order the blocks then ran in. Each side's blocks add up into one run (appendRun) that
 * also keeps every block (RunSnapshot::blocks), the replicates its comparison is judged on. A side's connection is kept
 * across its blocks (or dialled per block, AbBlocks::connectionPerBlock); from the second block on, one warm-up call
 * per caller restarts the callers before timing resumes. With AbBlocks::restarts > 1 a side's server is started anew at
 * even intervals, and the first block of each new process gets the plan's whole warm-up.
 *
 * Runs on a thread of its own; the owner polls snapshot()/blocksDone() (the run store is the owner's thread's).
 */
class AbRunner {
public:
    AbRunner();
    ~AbRunner();
    AbRunner(const AbRunner &) = delete;
    AbRunner &operator=(const AbRunner &) = delete;

    bool start(const std::array<AbSide, 2> &sides, const AbBlocks &blocks, QString *error);
    /// Ends the current block early (kept) and runs no more.
    void stop();
    bool isRunning() const;
    bool waitForFinished(std::chrono::milliseconds timeout) const;
    /**
     * The side (0 = A, 1 = B) that runs block @p turn (0 or 1) of @p round (from 1) when @p firstSide goes first in
     * round 1: in rounds of the order F S, S F, S F, F S, then again (F the first side, S the other). Each side
     * goes first in half the rounds, and first after a restart (at odd rounds, with the default five processes over
     * ten rounds) in half the restarts, give or take one: which side restarts first decides which side's process
     * is the faster in the next round, on this machine (see the class comment), and an odd number of restarts leaves
     * one over, for the side the coin picked.
     */
    static int blockSide(int round, int turn, int firstSide);

    /// What side 0 (A) or 1 (B) has measured so far, including the block running now.
    RunSnapshot snapshot(int side) const;
    /// Raw samples of a side, times shifted so blocks follow each other (after the run).
    std::vector<RawSample> rawSamples(int side) const;
    /// Blocks completed, both sides together (A1 B1 B2 ... counts 1, 2, 3 ...).
    int blocksDone() const;
    /// Every completed block so far, in order.
    std::vector<AbBlockResult> completedBlocks() const;
    /// Rounds planned (an estimate in time mode) and whether a signal or stop() cut the run short.
    int roundsPlanned() const;
    bool wasStopped() const;
    /// Set when a block could not start (its transport or plan was refused) or a client command failed; the run then
    /// ended.
    QString error() const;
    /// Each side's client command as started last ({target} filled in), empty for rpcscope's own client.
    QString clientCommandLine(int side) const;
    /// The pairs judged so far (every run is judged; only AbBlocks::untilDecided stops on it).
    SequentialAb sequential() const;
    AbEnd endedBy() const;
    /// "the planned calls ended it", "it decided", "--max-duration ended it" ... for verdict lines; @p planned names
    /// the plan's own end ("-n", "the call budget").
    QString endedByText(const QString &planned) const;

private:
    /// One block's measurements, as run() keeps them.
    struct BlockOutcome {
        RunSnapshot result;
        std::vector<RawSample> raw;
        bool cut = false; ///< ended early by the time limit
    };
    void run();
    bool sideDone(int side) const;
    int processDue(int round) const;
    /// The side of @p round's block @p turn: blockSide(), per pair of processes when they are judged as they come.
    int sideOf(int round, int turn) const;
    bool replicatesProcesses(int side) const;
    /// Ends the run as failed with @p why (prefixed with the side's letter when @p side is 0 or 1).
    void fail(int side, const QString &why);
    /// Starts (or starts anew) @p side's client command against its address; false with @p why.
    bool startClient(int side, QString *why);
    bool runEngineBlock(
        int side, const LoadPlan &block, std::shared_ptr<Transport> *kept, BlockOutcome *out, QString *why);
    bool runClientBlock(int side, const LoadPlan &block, int number, BlockOutcome *out, QString *why);
    /// Adds a finished block to its side's totals and log and judges its pair; sets *@p decided.
    void keepBlock(int side, int round, int process, const LoadPlan &block, BlockOutcome &outcome, bool *decided);

    std::array<AbSide, 2> m_sides;
    AbBlocks m_blocks;
    std::thread m_thread;
    mutable std::mutex m_mutex;
    std::array<RunSnapshot, 2> m_totals;
    std::array<std::vector<RawSample>, 2> m_raw;
    std::array<uint64_t, 2> m_plannedSoFar {};
    QString m_runId; ///< this A/B run's, set by start(): RunSnapshot::abRunId of both sides
    std::vector<AbBlockResult> m_blockLog;
    SequentialAb m_sequential { 2, 0.05 }; ///< guarded by m_mutex
    AbEnd m_end = AbEnd::Running; ///< guarded by m_mutex
    LoadEngine *m_current = nullptr; ///< the block running now (guarded by m_mutex)
    ClientCommandRunner *m_currentClient = nullptr; ///< or the client command running it (guarded by m_mutex)
    /// The client command's block so far, as it reports (guarded by m_mutex): snapshot() adds it, as it adds a
    /// running engine's.
    std::optional<RunSnapshot> m_currentClientProgress;
    std::array<std::unique_ptr<ClientCommandRunner>, 2> m_clients; ///< the sides' client commands (the run's thread)
    std::array<QString, 2> m_clientLines; ///< guarded by m_mutex
    std::array<int, 2> m_clientBlocks {}; ///< blocks each client process has run (its protocol's block numbers)
    int m_currentSide = -1;
    std::chrono::steady_clock::time_point m_deadline; ///< AbBlocks::maxDuration from the run's start
    int m_blocksDone = 0;
    QString m_error;
    std::atomic<bool> m_stop { false };
    std::atomic<bool> m_running { false };
};

} // namespace rpcscope
