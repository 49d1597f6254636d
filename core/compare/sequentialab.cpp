#include "sequentialab.h"

#include "store/runrecord.h"
#include "util/units.h"

#include <QJsonObject>

#include <algorithm>
#include <cmath>

namespace rpcscope {

namespace {

SequentialOptions optionsFor(int plannedPairs)
{
    SequentialOptions options;
    options.plannedPairs = std::max(2, plannedPairs);
    options.minimumSd = 0.0065; // the buckets' rounding of two p50s, see the class comment
    return options;
}

} // namespace

QString signedPercent(double ratio)
{
    if (!std::isfinite(ratio))
        return QStringLiteral("unbounded");
    if (ratio > 99.99) // an interval's end early on, from a few noisy pairs: its digits would mean nothing
        return QStringLiteral("over +9999%");
    return QStringLiteral("%1%2%").arg(ratio >= 0 ? QStringLiteral("+") : QString()).arg(ratio * 100, 0, 'f', 1);
}

int processOfRound(int round, int processes, int rounds)
{
    processes = std::max(processes, 1);
    rounds = std::max(rounds, 1);
    return std::clamp(1 + static_cast<int>(int64_t(round - 1) * processes / rounds), 1, processes);
}

namespace {

/// The last round of @p process: the largest r with processOfRound(r) == process, ceil(process * rounds / processes).
int lastRoundOf(int process, int processes, int rounds)
{
    return static_cast<int>((int64_t(process) * rounds + processes - 1) / processes);
}

} // namespace

SequentialAb::SequentialAb(int plannedPairs, double threshold, int processes)
    : m_ratio(optionsFor(processes > 1 ? std::min(processes, plannedPairs) : plannedPairs))
    , m_plannedPairs(std::max(2, plannedPairs))
    , m_threshold(threshold)
    , m_processes(std::clamp(processes, 1, std::max(2, plannedPairs)))
{
}

bool SequentialAb::judge(int round, double logRatio)
{
    ++m_blockPairs;
    if (m_processes < 2) {
        m_ratio.add(logRatio);
        m_decision = m_ratio.decide(m_threshold);
        return true;
    }
    const int process = processOfRound(round, m_processes, m_plannedPairs);
    if (m_pendingProcess != 0 && m_pendingProcess != process)
        judgeProcessPair(); // a pair of processes whose last round never paired (a block without an OK call)
    m_pendingProcess = process;
    m_pendingSum += logRatio;
    ++m_pendingCount;
    if (round < lastRoundOf(process, m_processes, m_plannedPairs))
        return false;
    judgeProcessPair();
    return true;
}

void SequentialAb::judgeProcessPair()
{
    if (m_pendingCount > 0) {
        m_ratio.add(m_pendingSum / m_pendingCount);
        m_decision = m_ratio.decide(m_threshold);
    }
    m_pendingProcess = 0;
    m_pendingSum = 0;
    m_pendingCount = 0;
}

bool SequentialAb::addBlock(int side, int round, uint64_t p50Ns)
{
    if (decided())
        return false;
    const int other = 1 - side;
    const auto first = m_firstOfRound[other].find(round);
    if (first == m_firstOfRound[other].end()) {
        m_firstOfRound[side][round] = p50Ns;
        return false;
    }
    const uint64_t aP50 = side == 0 ? p50Ns : first->second;
    const uint64_t bP50 = side == 1 ? p50Ns : first->second;
    m_firstOfRound[other].erase(first);
    if (aP50 == 0 || bP50 == 0)
        return false; // a block without an OK call has no p50
    return judge(round, std::log(static_cast<double>(bP50)) - std::log(static_cast<double>(aP50)));
}

QString SequentialAb::estimateAndInterval() const
{
    if (m_ratio.count() == 0)
        return m_processes > 1 ? QStringLiteral("no pair of processes completed")
                               : QStringLiteral("no pair of blocks completed");
    QString interval;
    if (m_ratio.bounded())
        interval = QStringLiteral("anytime 95% CI ") + signedPercent(m_ratio.lower()) + QStringLiteral(" .. ")
            + signedPercent(m_ratio.upper());
    else
        interval = QStringLiteral("the anytime 95% interval needs %1 %2")
                       .arg(SequentialRatio::firstBoundedPair(m_ratio.mixingVariance(), m_ratio.confidence()))
                       .arg(replicates());
    return QStringLiteral("p50 ") + signedPercent(m_ratio.estimate()) + QStringLiteral(" (") + interval
        + QStringLiteral(")");
}

QString SequentialAb::replicates() const
{
    return m_processes > 1 ? QStringLiteral("process pairs") : QStringLiteral("pairs");
}

SequentialAb SequentialAb::fromBlocks(
    const RunSnapshot &a, const RunSnapshot &b, int plannedPairs, double threshold, int processes)
{
    SequentialAb judged(plannedPairs, threshold, processes);
    std::map<int, uint64_t> bByRound;
    for (const RunBlock &block : b.blocks)
        bByRound[block.round] = block.latency.percentile(50);
    for (const RunBlock &block : a.blocks) {
        const auto other = bByRound.find(block.round);
        if (other == bByRound.end())
            continue;
        judged.addBlock(0, block.round, block.latency.percentile(50));
        judged.addBlock(1, block.round, other->second);
    }
    return judged;
}

std::optional<SequentialAb> sequentialVerdictOf(const RunRecord &a, const RunRecord &b)
{
    const int rounds = a.scenario.value(QStringLiteral("ab_rounds_planned")).toInt();
    const QJsonObject abA = a.scenario.value(QStringLiteral("ab")).toObject();
    const QJsonObject abB = b.scenario.value(QStringLiteral("ab")).toObject();
    if (&a == &b || rounds <= 0 || !abA.value(QStringLiteral("until_decided")).toBool()
        || !abB.value(QStringLiteral("until_decided")).toBool() || a.snapshot.blocks.empty()
        || b.snapshot.blocks.empty())
        return std::nullopt;
    // At the threshold the run was judged at (a page's or a flag's may differ: the decision is the run's).
    double threshold = 0.05;
    const QString saved = abA.value(QStringLiteral("threshold")).toString();
    if (QString why; !saved.isEmpty() && !parseFraction(saved, &threshold, &why))
        threshold = 0.05;
    // Judged on pairs of processes when the run restarted its servers while it decided (ab.restarts).
    const int processes = std::max(1, abA.value(QStringLiteral("restarts")).toInt());
    SequentialAb judged = SequentialAb::fromBlocks(a.snapshot, b.snapshot, rounds, threshold, processes);
    // Servers rpcscope started (their command recorded) with nothing pinned (no client CPUs in the environment).
    judged.setUnpinnedProcesses(
        !a.server.isEmpty() && !b.server.isEmpty() && !a.environment.contains(QStringLiteral("client_cpus")));
    return judged;
}

QString SequentialAb::basis() const
{
    return m_processes > 1 ? QStringLiteral("p50 of block pairs averaged per pair of processes")
                           : QStringLiteral("p50 of block pairs");
}

QString SequentialAb::statusLine() const
{
    if (decided())
        return verdictLine(QString());
    if (m_processes > 1)
        return QStringLiteral("not yet decided after %1 of %2 process pairs (%3 of %4 pairs of blocks): ")
                   .arg(m_ratio.count())
                   .arg(m_processes)
                   .arg(m_blockPairs)
                   .arg(m_plannedPairs)
            + estimateAndInterval();
    return QStringLiteral("not yet decided after %1 of %2 pairs: ").arg(m_ratio.count()).arg(m_plannedPairs)
        + estimateAndInterval();
}

QString SequentialAb::progressLine() const
{
    if (m_processes > 1)
        return QStringLiteral("process pair %1/%2 (%3 of %4 pairs of blocks): ")
                   .arg(m_ratio.count())
                   .arg(m_processes)
                   .arg(m_blockPairs)
                   .arg(m_plannedPairs)
            + estimateAndInterval();
    return QStringLiteral("pair %1/%2: ").arg(m_ratio.count()).arg(m_plannedPairs) + estimateAndInterval();
}

QString SequentialAb::verdictLine(const QString &endedBy) const
{
    QString what;
    switch (m_decision) {
    case SequentialDecision::Regression:
        what = QStringLiteral("regression");
        break;
    case SequentialDecision::Improvement:
        what = QStringLiteral("improvement");
        break;
    case SequentialDecision::NoChangeBeyondThreshold:
        what = QStringLiteral("no change beyond ") + signedPercent(m_threshold).mid(1);
        break;
    case SequentialDecision::Undecided:
        return QStringLiteral("not decided after %1 %2 (%3): ").arg(m_ratio.count()).arg(replicates(), endedBy)
            + estimateAndInterval();
    }
    QString line
        = what + QStringLiteral(" after %1 %2: ").arg(m_ratio.count()).arg(replicates()) + estimateAndInterval();
    if (m_processes > 1) {
        // The replicates were processes: the verdict is about the servers (or clients), not two of their processes.
        return line
            + QStringLiteral("; judged on %1 processes a side, each started anew (%2 pairs of blocks)")
                  .arg(m_ratio.count())
                  .arg(m_blockPairs);
    }
    // Judged pair by pair, a side is one process (its server's, or its client command's): a decided verdict is about
    // those two processes, and says so (ab against addresses cannot start a server anew).
    if (m_unpinnedProcesses && m_decision != SequentialDecision::NoChangeBeyondThreshold)
        line += QStringLiteral("; two unpinned server processes: where they ran may have decided it");
    else
        line += QStringLiteral("; judged on one process a side");
    return line;
}

} // namespace rpcscope
