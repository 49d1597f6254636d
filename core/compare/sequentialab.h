#pragma once

// The sequential verdict of an interleaved A/B run (ab --until-decided): block pairs judged as they complete.

#include "compare/sequential.h"
#include "metrics/runsnapshot.h"

#include <QString>

#include <array>
#include <cstdint>
#include <map>
#include <optional>

namespace rpcscope {

/**
 * The server process (from 1) that serves @p round (from 1) of @p rounds when each side runs @p processes of them,
 * one after the other, each for an even share of the rounds (the first ones take a round more when they do not
 * divide). ab's runner restarts a side's server by this, and SequentialAb groups the pairs by it.
 */
int processOfRound(int round, int processes, int rounds);

/// A block's server CPU per completed call in nanoseconds (its serverCpuSeconds over its calls); -1 when not measured.
double serverCpuPerCallNs(const RunBlock &block);

/**
 * Pairs each round's A and B blocks as they complete and feeds the log ratio of their p50s into a SequentialRatio
 * (docs/sequential.md), judging after every pair at a threshold. The histogram buckets round a block's p50 by up to
 * 1.6%: a pair's log ratio carries that rounding (sd ~0.0065), which the ratio's floor keeps from making a run of
 * identical ratios look certain. Once decided, later blocks are not judged.
 *
 * With more than one server process a side (ab restarting its servers while it decides), the replicate is a pair of
 * processes, not a pair of blocks: blocks of one process share where it runs and how its memory was laid out, so
 * their pairs are not independent of each other (two processes of one server differ by up to a factor of two on a
 * busy machine: docs/sequential.md). The log ratios of a process pair's rounds are then averaged, and the mean is
 * judged once the pair's last round completes: the verdict is about the server, not about two of its processes.
 *
 * When the blocks carry their server's CPU per call (servers rpcscope started, read from their CPU clocks), that is
 * judged beside the p50, as its own sequence, each at 97.5% (Bonferroni: the two together keep 95%): a change in
 * the code moves the CPU a call costs even where other programs drown the latency in waiting for a CPU. Either may
 * decide a regression or an improvement, and the verdict names the one that did; "no change beyond" needs both.
 * Whether CPU is judged is settled at the first pair (both its blocks have it), before anything is judged.
 */
class SequentialAb {
public:
    /// @p processes: server processes a side over the @p plannedPairs rounds (1: each pair of blocks is judged).
    SequentialAb(int plannedPairs, double threshold, int processes = 1);

    /// A completed block of side 0 (A) or 1 (B) in @p round, with its OK calls' p50 (0: none, the pair is left
    /// out); a round's two blocks come in either order. True when it completed a pair, which was then judged (with
    /// processes a side, when it completed a pair of processes).
    /// @p serverCpuPerCallNs: the block's server CPU per completed call, negative when not measured.
    bool addBlock(int side, int round, uint64_t p50Ns, double serverCpuPerCallNs = -1);

    SequentialDecision decision() const { return m_decision; }
    bool decided() const { return m_decision != SequentialDecision::Undecided; }
    /// The p50's sequence, and the server CPU per call's (count 0 when not judged).
    const SequentialRatio &ratio() const { return m_ratio; }
    const SequentialRatio &serverCpuRatio() const { return m_cpu; }
    /// Whether server CPU per call is judged (settled at the first pair).
    bool judgesServerCpu() const { return m_cpuJudged; }
    /// Whether server CPU per call may be judged (default true; false for a client command's A/B, whose client
    /// changes the server's CPU per call: docs/statistics.md). Before the first block only.
    void setServerCpuAllowed(bool allowed) { m_cpuAllowed = allowed; }
    /// The metric whose sequence decided a regression or an improvement: "p50" or "server CPU/call"; else empty.
    QString decidedBy() const;

    /**
     * The pairs of two saved A/B sides, judged again round by round. The same verdict as the run's own, except
     * when a stop or a time limit cut a round's second block short: the run did not judge that pair.
     */
    static SequentialAb fromBlocks(
        const RunSnapshot &a, const RunSnapshot &b, int plannedPairs, double threshold, int processes = 1);

    /// The replicates judged so far: pairs of blocks, or, with processes a side, pairs of processes.
    int pairs() const { return m_ratio.count(); }
    /// Pairs of blocks judged so far (each pair of processes counts its rounds).
    int blockPairs() const { return m_blockPairs; }
    int plannedPairs() const { return m_plannedPairs; }
    /// Server processes a side the pairs are grouped by (1: none).
    int processes() const { return m_processes; }
    double threshold() const { return m_threshold; }
    /**
     * The pairs come from two server processes rpcscope started, one a side, not pinned to CPUs: a regression or an
     * improvement then says, in its lines, that where the scheduler placed them may have decided it (A/A runs of one
     * server against itself were decided 15-17.5% of the time unpinned, and none of 80 pinned: docs/sequential.md).
     */
    void setUnpinnedProcesses(bool unpinned) { m_unpinnedProcesses = unpinned; }
    /**
     * With processes a side, side @p side (0 = A, 1 = B) kept one process throughout (an address: ab cannot start
     * its server anew), so each pair of processes is one of the other side's against that one: the verdict says so
     * rather than "N processes a side". -1 (the default): both sides were restarted.
     */
    void setOneProcessSide(int side) { m_oneProcessSide = side == 0 || side == 1 ? side : -1; }
    int oneProcessSide() const { return m_oneProcessSide; }

    /// What is judged: "p50 of block pairs", or "p50 of block pairs averaged per pair of processes".
    QString basis() const;
    /// After a pair: "pair 15/200: p50 +9.6% (anytime 95% CI +0.6% .. +19.9%)", or "process pair 6/10 (24 of 40 pairs
    /// of blocks): ...".
    QString progressLine() const;
    /// While it runs: "not yet decided after 7 of 40 pairs: p50 ...", or verdictLine() once decided.
    QString statusLine() const;
    /// "regression after 15 pairs: p50 ...", or "not decided after 40 pairs (@p endedBy): p50 ..." .
    QString verdictLine(const QString &endedBy) const;

private:
    QString estimateAndInterval() const;
    /// "p50 +9.6% (anytime 95% CI +0.6% .. +19.9%)" for @p ratio named @p name.
    QString metricText(const QString &name, const SequentialRatio &ratio) const;
    SequentialDecision combinedDecision();
    /// The replicates the sequences are tuned for: the pairs of processes, or the pairs of blocks planned.
    int replicatesPlanned() const;
    /// "pairs", or "process pairs" when the replicates are processes.
    QString replicates() const;
    /// Judges @p logRatio, one pair of blocks of @p round: alone, or with the other rounds of its process pair (true
    /// when something was judged: the pair, or its process pair's last round).
    bool judge(int round, double logRatio, double cpuLogRatio);
    /// Feeds the pending process pair's mean log ratio into the sequence, if it has any.
    void judgeProcessPair();

    SequentialRatio m_ratio;
    SequentialRatio m_cpu; ///< server CPU per call, when judged
    int m_plannedPairs;
    double m_threshold;
    int m_processes = 1;
    int m_blockPairs = 0;
    int m_pendingProcess = 0; ///< the process pair whose rounds are being gathered (0: none)
    double m_pendingSum = 0; ///< its rounds' log ratios, summed
    int m_pendingCount = 0;
    double m_pendingCpuSum = 0; ///< and their server CPU per call's, where both blocks had it
    int m_pendingCpuCount = 0;
    bool m_cpuAllowed = true;
    bool m_cpuJudged = false;
    int m_decidedBy = -1; ///< 0 = p50, 1 = server CPU/call
    bool m_unpinnedProcesses = false;
    int m_oneProcessSide = -1;
    SequentialDecision m_decision = SequentialDecision::Undecided;
    /// A block's figures, kept until its round's other block completes.
    struct Figures {
        uint64_t p50Ns = 0;
        double serverCpuPerCallNs = -1;
    };
    /// round -> the figures of the side whose block of that round came first, until the other's completes
    std::array<std::map<int, Figures>, 2> m_firstOfRound;
};

struct RunRecord;

/**
 * The two saved sides of an A/B run that was judged until decided (both scenarios say ab.until_decided, and the
 * rounds planned): the pairs judged again from their blocks (SequentialAb::fromBlocks) at the threshold the run
 * used. std::nullopt for any other pair of runs.
 */
std::optional<SequentialAb> sequentialVerdictOf(const RunRecord &a, const RunRecord &b);

/// A ratio minus one as a signed percentage ("+9.6%"), or "unbounded".
QString signedPercent(double ratio);

} // namespace rpcscope
