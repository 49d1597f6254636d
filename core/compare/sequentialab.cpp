#include "sequentialab.h"

#include "store/runrecord.h"
#include "util/units.h"

#include <QJsonObject>

#include <algorithm>
#include <cmath>
#include <limits>

namespace rpcscope {

namespace {

SequentialOptions optionsFor(int plannedPairs, double confidence = 0.95)
{
    SequentialOptions options;
    options.confidence = confidence;
    options.plannedPairs = std::max(2, plannedPairs);
    options.minimumSd = 0.0065; // the buckets' rounding of two p50s, see the class comment
    return options;
}

/// The confidence of one of two metrics judged together: each at 1 - 0.05 / 2, so that both hold at 95%.
constexpr double kTwoMetricsConfidence = 0.975;

bool isChange(SequentialDecision d)
{
    return d == SequentialDecision::Regression || d == SequentialDecision::Improvement;
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

double serverCpuPerCallNs(const RunBlock &block)
{
    return block.serverCpuSeconds > 0 && block.calls > 0 ? block.serverCpuSeconds * 1e9 / double(block.calls) : -1;
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
    : m_plannedPairs(std::max(2, plannedPairs))
    , m_threshold(threshold)
    , m_processes(std::clamp(processes, 1, std::max(2, plannedPairs)))
{
    m_ratio = SequentialRatio(optionsFor(replicatesPlanned()));
}

int SequentialAb::replicatesPlanned() const
{
    return m_processes > 1 ? m_processes : m_plannedPairs;
}

SequentialDecision SequentialAb::combinedDecision()
{
    const SequentialDecision p50 = m_ratio.decide(m_threshold);
    if (!m_cpuJudged)
        return p50;
    const SequentialDecision cpu = m_cpu.count() > 0 ? m_cpu.decide(m_threshold) : SequentialDecision::Undecided;
    if (isChange(p50) || isChange(cpu)) {
        m_decidedBy = isChange(p50) ? 0 : 1;
        return isChange(p50) ? p50 : cpu;
    }
    // No change beyond the threshold only when neither moved beyond it.
    return p50 == SequentialDecision::NoChangeBeyondThreshold && cpu == SequentialDecision::NoChangeBeyondThreshold
        ? p50
        : SequentialDecision::Undecided;
}

QString SequentialAb::decidedBy() const
{
    if (!isChange(m_decision))
        return {};
    return m_decidedBy == 1 ? QStringLiteral("server CPU/call") : QStringLiteral("p50");
}

bool SequentialAb::judge(int round, double logRatio, double cpuLogRatio)
{
    ++m_blockPairs;
    if (m_processes < 2) {
        m_ratio.add(logRatio);
        if (m_cpuJudged && std::isfinite(cpuLogRatio))
            m_cpu.add(cpuLogRatio);
        m_decision = combinedDecision();
        return true;
    }
    const int process = processOfRound(round, m_processes, m_plannedPairs);
    if (m_pendingProcess != 0 && m_pendingProcess != process)
        judgeProcessPair(); // a pair of processes whose last round never paired (a block without an OK call)
    m_pendingProcess = process;
    m_pendingSum += logRatio;
    ++m_pendingCount;
    if (m_cpuJudged && std::isfinite(cpuLogRatio)) {
        m_pendingCpuSum += cpuLogRatio;
        ++m_pendingCpuCount;
    }
    if (round < lastRoundOf(process, m_processes, m_plannedPairs))
        return false;
    judgeProcessPair();
    return true;
}

void SequentialAb::judgeProcessPair()
{
    if (m_pendingCount > 0) {
        m_ratio.add(m_pendingSum / m_pendingCount);
        if (m_pendingCpuCount > 0)
            m_cpu.add(m_pendingCpuSum / m_pendingCpuCount);
        m_decision = combinedDecision();
    }
    m_pendingProcess = 0;
    m_pendingSum = 0;
    m_pendingCount = 0;
    m_pendingCpuSum = 0;
    m_pendingCpuCount = 0;
}

bool SequentialAb::addBlock(int side, int round, uint64_t p50Ns, double serverCpuPerCallNs)
{
    if (decided())
        return false;
    const int other = 1 - side;
    const auto first = m_firstOfRound[other].find(round);
    const Figures mine { p50Ns, serverCpuPerCallNs };
    if (first == m_firstOfRound[other].end()) {
        m_firstOfRound[side][round] = mine;
        return false;
    }
    const Figures a = side == 0 ? mine : first->second;
    const Figures b = side == 1 ? mine : first->second;
    m_firstOfRound[other].erase(first);
    if (a.p50Ns == 0 || b.p50Ns == 0)
        return false; // a block without an OK call has no p50
    const bool cpuMeasured = a.serverCpuPerCallNs > 0 && b.serverCpuPerCallNs > 0;
    if (m_blockPairs == 0 && m_cpuAllowed && cpuMeasured) {
        // Two metrics from the first pair on: each at 97.5%, before anything is judged.
        m_cpuJudged = true;
        m_ratio = SequentialRatio(optionsFor(replicatesPlanned(), kTwoMetricsConfidence));
        m_cpu = SequentialRatio(optionsFor(replicatesPlanned(), kTwoMetricsConfidence));
    }
    const double cpuLogRatio = cpuMeasured ? std::log(b.serverCpuPerCallNs) - std::log(a.serverCpuPerCallNs)
                                           : std::numeric_limits<double>::quiet_NaN();
    return judge(round, std::log(static_cast<double>(b.p50Ns)) - std::log(static_cast<double>(a.p50Ns)), cpuLogRatio);
}

QString SequentialAb::metricText(const QString &name, const SequentialRatio &ratio) const
{
    const QString level = QString::number(ratio.confidence() * 100, 'g', 3) + u'%';
    QString interval;
    if (ratio.bounded())
        interval = QStringLiteral("anytime %1 CI ").arg(level) + signedPercent(ratio.lower()) + QStringLiteral(" .. ")
            + signedPercent(ratio.upper());
    else
        interval = QStringLiteral("the anytime %1 interval needs %2 %3")
                       .arg(level)
                       .arg(SequentialRatio::firstBoundedPair(ratio.mixingVariance(), ratio.confidence()))
                       .arg(replicates());
    return name + u' ' + signedPercent(ratio.estimate()) + QStringLiteral(" (") + interval + QStringLiteral(")");
}

QString SequentialAb::estimateAndInterval() const
{
    if (m_ratio.count() == 0)
        return m_processes > 1 ? QStringLiteral("no pair of processes completed")
                               : QStringLiteral("no pair of blocks completed");
    QString p50 = metricText(QStringLiteral("p50"), m_ratio);
    if (!m_cpuJudged || m_cpu.count() == 0)
        return p50;
    const QString cpu = metricText(QStringLiteral("server CPU/call"), m_cpu);
    // The metric that decided first.
    return m_decidedBy == 1 && isChange(m_decision) ? cpu + QStringLiteral(", ") + p50
                                                    : p50 + QStringLiteral(", ") + cpu;
}

QString SequentialAb::replicates() const
{
    return m_processes > 1 ? QStringLiteral("process pairs") : QStringLiteral("pairs");
}

SequentialAb SequentialAb::fromBlocks(
    const RunSnapshot &a, const RunSnapshot &b, int plannedPairs, double threshold, int processes)
{
    SequentialAb judged(plannedPairs, threshold, processes);
    // A side not restarted (an address) against one that was: its blocks name no process (0), the other's do.
    const auto keptOne = [](const RunSnapshot &side) {
        return std::all_of(side.blocks.cbegin(), side.blocks.cend(), [](const RunBlock &b) { return b.process == 0; });
    };
    if (const bool keptA = keptOne(a); processes > 1 && keptA != keptOne(b))
        judged.setOneProcessSide(keptA ? 0 : 1);
    // A client command's A/B: its client moves the server's CPU per call (docs/statistics.md), as the run did.
    judged.setServerCpuAllowed(!a.blocksByClient && !b.blocksByClient);
    std::map<int, const RunBlock *> bByRound;
    for (const RunBlock &block : b.blocks)
        bByRound[block.round] = &block;
    for (const RunBlock &block : a.blocks) {
        const auto other = bByRound.find(block.round);
        if (other == bByRound.end())
            continue;
        judged.addBlock(0, block.round, block.latency.percentile(50), serverCpuPerCallNs(block));
        judged.addBlock(1, block.round, other->second->latency.percentile(50), serverCpuPerCallNs(*other->second));
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
    const QString what = m_cpuJudged ? QStringLiteral("p50 and server CPU/call, each at 97.5%, of block pairs")
                                     : QStringLiteral("p50 of block pairs");
    return m_processes > 1 ? what + QStringLiteral(" averaged per pair of processes") : what;
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
        return QStringLiteral("not decided after %1 %2 (%3): ")
                   .arg(m_ratio.count())
                   .arg(m_ratio.count() == 1 ? replicates().chopped(1) : replicates(), endedBy)
            + estimateAndInterval();
    }
    QString line = what + QStringLiteral(" after %1 %2").arg(m_ratio.count()).arg(replicates());
    // Which metric decided, when two were judged: "regression after 5 process pairs, by server CPU/call: ...".
    if (m_cpuJudged && isChange(m_decision))
        line += QStringLiteral(", by ") + decidedBy();
    line += QStringLiteral(": ") + estimateAndInterval();
    if (m_processes > 1) {
        // The replicates were processes: the verdict is about the servers (or clients), not two of their processes.
        if (m_oneProcessSide >= 0) {
            const bool aKept = m_oneProcessSide == 0;
            return line
                + QStringLiteral("; judged on %1 processes of %2, each started anew, against %3's one process at its "
                                 "address (%4 pairs of blocks)")
                      .arg(m_ratio.count())
                      .arg(QChar(aKept ? u'B' : u'A'))
                      .arg(QChar(aKept ? u'A' : u'B'))
                      .arg(m_blockPairs);
        }
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
