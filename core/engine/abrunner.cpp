#include "abrunner.h"

#include "client/clientload.h"

#include "transport/transport.h"
#include "util/units.h"

#include <QUuid>

#include <algorithm>
#include <random>

namespace rpcscope {

namespace {

// Lends one side's transport (and so its connections) to one block's engine; the side keeps it for the next.
class BorrowedTransport final : public Transport {
public:
    explicit BorrowedTransport(std::shared_ptr<Transport> transport) : m_transport(std::move(transport)) { }
    std::unique_ptr<CallSlot> makeSlot(int index, CallSink *sink) override
    {
        return m_transport->makeSlot(index, sink);
    }

private:
    std::shared_ptr<Transport> m_transport;
};

} // namespace

AbBlocks AbBlocks::defaultFor(const LoadPlan &plan)
{
    AbBlocks b;
    if (plan.totalCalls > 0)
        b.calls = std::max<uint64_t>((plan.totalCalls + 9) / 10, static_cast<uint64_t>(plan.concurrency) * 4);
    else
        b.time = std::max<std::chrono::nanoseconds>(plan.duration / 10, std::chrono::seconds(1));
    return b;
}

AbBlocks AbBlocks::sequentialFor(const LoadPlan &plan)
{
    AbBlocks b;
    if (plan.totalCalls > 0)
        b.calls = std::max<uint64_t>({ plan.totalCalls / 40, 20, 4 * static_cast<uint64_t>(plan.concurrency) });
    else
        b.time = std::max<std::chrono::nanoseconds>(plan.duration / 40, std::chrono::milliseconds(250));
    b.untilDecided = true;
    return b;
}

int AbBlocks::roundsFor(const LoadPlan &plan) const
{
    if (plan.totalCalls > 0)
        return static_cast<int>((plan.totalCalls + calls - 1) / std::max<uint64_t>(calls, 1));
    return static_cast<int>((plan.duration.count() + time.count() - 1) / std::max<int64_t>(time.count(), 1));
}

int AbBlocks::defaultRestarts(bool anyCommand, int rounds)
{
    constexpr int kProcesses = 5;
    return anyCommand ? std::clamp(rounds, 1, kProcesses) : 1;
}

int AbBlocks::defaultSequentialRestarts(bool anyCommand, int rounds)
{
    constexpr int kProcesses = 10;
    return anyCommand ? std::clamp(rounds / 2, 1, kProcesses) : 1;
}

QString AbBlocks::connectionName() const
{
    return connectionPerBlock ? QStringLiteral("per-block") : QStringLiteral("kept");
}

AbRunner::AbRunner() = default;

AbRunner::~AbRunner()
{
    stop();
    if (m_thread.joinable())
        m_thread.join();
}

bool AbRunner::start(const std::array<AbSide, 2> &sides, const AbBlocks &blocks, QString *error)
{
    if (m_running) {
        *error = QStringLiteral("an A/B run is still going");
        return false;
    }
    const LoadPlan &plan = sides[0].plan;
    if (plan.totalCalls == 0 && plan.duration.count() <= 0) {
        *error = QStringLiteral("an A/B run needs an end: a number of calls or a duration");
        return false;
    }
    if ((plan.totalCalls > 0 && blocks.calls == 0) || (plan.totalCalls == 0 && blocks.time.count() <= 0)) {
        *error = plan.totalCalls > 0
            ? QStringLiteral("the block size must be a number of calls (the run is counted in calls)")
            : QStringLiteral("the block size must be a duration (the run is timed)");
        return false;
    }
    if (m_thread.joinable())
        m_thread.join();
    m_sides = sides;
    m_blocks = blocks;
    if (m_blocks.firstSide != 0 && m_blocks.firstSide != 1)
        m_blocks.firstSide = AbBlocks::coinFlip();
    m_totals = {};
    m_clients = {};
    m_clientLines = {};
    m_clientBlocks = {};
    m_raw = {};
    m_plannedSoFar = {};
    m_runId = QUuid::createUuid().toString(QUuid::WithoutBraces);
    m_blockLog.clear();
    // Judged on pairs of processes when its servers (or clients) are restarted while it decides.
    const bool replicated = blocks.restarts > 1
        && (sides[0].restartServer || sides[0].client || sides[1].restartServer || sides[1].client);
    m_sequential = SequentialAb(
        blocks.roundsFor(plan), blocks.threshold, blocks.untilDecided && replicated ? blocks.restarts : 1);
    m_sequential.setUnpinnedProcesses(blocks.unpinnedProcesses);
    if (m_sequential.processes() > 1) {
        for (const int side : { 0, 1 }) {
            if (!replicatesProcesses(side))
                m_sequential.setOneProcessSide(side); // an address: its one process against the other's many
        }
    }
    // A client command moves the server's CPU per call (a slower client, more idle wake-ups a call): not judged.
    m_sequential.setServerCpuAllowed(!sides[0].client && !sides[1].client);
    m_end = AbEnd::Running;
    m_blocksDone = 0;
    m_error.clear();
    m_stop = false;
    m_running = true;
    m_thread = std::thread([this] { run(); });
    return true;
}

void AbRunner::stop()
{
    m_stop = true;
    std::lock_guard lock(m_mutex);
    if (m_current)
        m_current->stop();
    if (m_currentClient)
        m_currentClient->interrupt();
}

QString AbRunner::clientCommandLine(int side) const
{
    std::lock_guard lock(m_mutex);
    return m_clientLines[static_cast<size_t>(side)];
}

bool AbRunner::isRunning() const
{
    return m_running;
}

bool AbRunner::waitForFinished(std::chrono::milliseconds timeout) const
{
    const auto until = std::chrono::steady_clock::now() + timeout;
    while (m_running) {
        if (std::chrono::steady_clock::now() >= until)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
}

bool AbRunner::sideDone(int side) const
{
    const LoadPlan &plan = m_sides[0].plan;
    return plan.totalCalls > 0 ? m_plannedSoFar[side] >= plan.totalCalls : m_totals[side].elapsed >= plan.duration;
}

int AbBlocks::coinFlip()
{
    return static_cast<int>(std::random_device()() & 1U);
}

int AbRunner::blockSide(int round, int turn, int firstSide)
{
    const int r = round - 1;
    const bool firstGoesFirst = (r / 2 + r % 2) % 2 == 0; // F S, S F, S F, F S, ...
    const int first = firstGoesFirst ? firstSide : 1 - firstSide;
    return turn == 0 ? first : 1 - first;
}

int AbRunner::processDue(int round) const
{
    return processOfRound(round, m_blocks.restarts, roundsPlanned());
}

int AbRunner::sideOf(int round, int turn) const
{
    if (!m_blocks.untilDecided || m_blocks.restarts < 2)
        return blockSide(round, turn, m_blocks.firstSide);
    // Judged per pair of processes, each pair is a replicate, so each is balanced on its own: its rounds follow the
    // order from its first round, and the side that goes (and restarts) first alternates from one pair to the next.
    const int process = processDue(round);
    int firstRound = round;
    while (firstRound > 1 && processDue(firstRound - 1) == process)
        --firstRound;
    const int first = (process - 1) % 2 == 0 ? m_blocks.firstSide : 1 - m_blocks.firstSide;
    return blockSide(round - firstRound + 1, turn, first);
}

bool AbRunner::replicatesProcesses(int side) const
{
    return (m_sides[side].restartServer || m_sides[side].client) && m_blocks.restarts > 1;
}

void AbRunner::fail(int side, const QString &why)
{
    std::lock_guard lock(m_mutex);
    m_error = side == 0 || side == 1 ? QStringLiteral("%1: %2").arg(QChar(side == 0 ? u'A' : u'B')).arg(why) : why;
    m_end = AbEnd::Failed;
    m_stop = true;
}

bool AbRunner::startClient(int side, QString *why)
{
    auto &client = m_clients[side];
    if (client)
        client->stop();
    client = std::make_unique<ClientCommandRunner>();
    m_clientBlocks[side] = 0;
    if (!client->start(*m_sides[side].client, m_sides[side].target.address, why))
        return false;
    if (m_sides[side].clientStarted)
        m_sides[side].clientStarted(client->pid(), client->commandLine());
    std::lock_guard lock(m_mutex);
    m_clientLines[side] = client->commandLine();
    return true;
}

bool AbRunner::runEngineBlock(
    int side, const LoadPlan &block, std::shared_ptr<Transport> *kept, BlockOutcome *out, QString *why)
{
    std::unique_ptr<Transport> transport;
    if (m_blocks.connectionPerBlock || !*kept) {
        transport = makeTransport(m_sides[side].transport, m_sides[side].target, m_sides[side].call, why);
        if (transport && !m_blocks.connectionPerBlock) {
            *kept = std::shared_ptr<Transport>(std::move(transport));
            transport = std::make_unique<BorrowedTransport>(*kept);
        }
    } else {
        transport = std::make_unique<BorrowedTransport>(*kept);
    }
    LoadEngine engine;
    if (!transport || !engine.start(std::move(transport), block, why))
        return false;
    {
        std::lock_guard lock(m_mutex);
        m_current = &engine;
        m_currentSide = side;
        if (m_stop)
            engine.stop();
    }
    const bool limited = m_blocks.maxDuration.count() > 0;
    if (!limited) {
        engine.waitForFinished(std::chrono::hours(24 * 365));
    } else {
        while (!engine.waitForFinished(std::chrono::milliseconds(20))) {
            if (!out->cut && std::chrono::steady_clock::now() >= m_deadline) {
                out->cut = true;
                engine.stop(); // the block ends early and is kept, as on stop()
            }
        }
    }
    out->result = engine.snapshot();
    if (block.recordRawSamples)
        out->raw = engine.rawSamples();
    std::lock_guard lock(m_mutex);
    m_current = nullptr;
    m_currentSide = -1;
    return true;
}

bool AbRunner::runClientBlock(int side, const LoadPlan &block, int number, BlockOutcome *out, QString *why)
{
    ClientCommandRunner *client = m_clients[side].get();
    ClientBlock request = clientBlockOf(block, number);
    request.progress = [this](const RunSnapshot &progress) {
        std::lock_guard lock(m_mutex);
        m_currentClientProgress = progress;
    };
    if (m_blocks.maxDuration.count() > 0)
        request.endBy = m_deadline;
    {
        std::lock_guard lock(m_mutex);
        m_currentClient = client;
        m_currentSide = side;
        if (m_stop)
            client->interrupt();
    }
    const bool ok = runTimedClientBlock(*client, request, block, &out->result, why);
    out->cut = ok && out->result.state == RunState::Stopped && !m_stop;
    std::lock_guard lock(m_mutex);
    m_currentClient = nullptr;
    m_currentClientProgress.reset();
    m_currentSide = -1;
    return ok;
}

void AbRunner::keepBlock(int side, int round, int process, const LoadPlan &block, BlockOutcome &outcome, bool *decided)
{
    const bool byCount = m_sides[0].plan.totalCalls > 0;
    RunSnapshot &result = outcome.result;
    if (byCount)
        result.plannedCalls = block.totalCalls;
    std::lock_guard lock(m_mutex);
    const auto offset = static_cast<uint64_t>(m_totals[side].elapsed.count());
    for (RawSample &sample : outcome.raw)
        sample.sentNs += offset;
    m_raw[side].insert(m_raw[side].end(), outcome.raw.begin(), outcome.raw.end());
    RunBlock record;
    record.round = round;
    record.process = process;
    record.elapsed = result.elapsed;
    record.calls = result.callsCompleted();
    record.failed = result.callsFailed();
    record.latency = result.latency;
    record.messageLatency = result.messageLatency;
    // Precise CPU clocks only: a count of 10 ms ticks over a block of a few hundred ms says next to nothing.
    if (result.hasServerStats && !result.serverCpuInTicks)
        record.serverCpuSeconds = result.serverCpuSeconds;
    if (result.clientCpuSeconds > 0)
        record.clientCpuSeconds = result.clientCpuSeconds;
    result.blocks.push_back(record);
    // A client command's connections are its own business: no connection is named for its blocks.
    result.blocksByClient = m_sides[side].client.has_value();
    result.blocksConnection = result.blocksByClient ? QString() : m_blocks.connectionName();
    result.abRunId = m_runId;
    // Appended to a copy that then replaces the total: snapshot() hands out copies that share the total's Qt lists,
    // and a QList decides to write in place from a relaxed read of its reference count, which does not order the
    // write after the owner's thread let its copy go (ThreadSanitizer caught this thread reallocating a timeline the
    // owner had just released). Copying takes a reference, an atomic read-modify-write that does; the append then
    // writes to memory of its own.
    RunSnapshot total = m_totals[side];
    appendRun(total, result);
    m_totals[side] = std::move(total);
    m_plannedSoFar[side] += byCount ? block.totalCalls : 0;
    AbBlockResult logged { side, round, result.callsCompleted(), result.callsFailed(), result.latency.percentile(50),
        process, {} };
    // A block cut short by stop() or the time limit is kept, but not judged: it is not a block as planned.
    if (!m_stop && !outcome.cut && m_sequential.addBlock(side, round, logged.p50Ns, serverCpuPerCallNs(record))) {
        logged.pairJudged = m_sequential.progressLine();
        *decided = m_blocks.untilDecided && m_sequential.decided();
    }
    m_blockLog.push_back(std::move(logged));
    ++m_blocksDone;
    if (byCount && result.callsCompleted() == 0 && !m_stop) {
        // A side that completes nothing (its server died) would loop forever.
        m_error = QStringLiteral("%1 completed no call in a block; stopped").arg(QChar(side == 0 ? u'A' : u'B'));
        m_end = AbEnd::Failed;
        m_stop = true;
    }
}

void AbRunner::run()
{
    const LoadPlan &plan = m_sides[0].plan;
    const bool byCount = plan.totalCalls > 0;
    const bool limited = m_blocks.maxDuration.count() > 0;
    m_deadline = std::chrono::steady_clock::now() + m_blocks.maxDuration;
    bool decided = false;
    bool overTime = false;
    std::array<std::shared_ptr<Transport>, 2> kept;
    std::array<int, 2> process {};
    for (int side = 0; side < 2; ++side)
        process[side] = replicatesProcesses(side) || m_sides[side].restartServer ? 1 : 0;
    const auto ended = [&] { return m_stop || decided || overTime; };
    for (int round = 1; !ended() && (!sideDone(0) || !sideDone(1)); ++round) {
        for (int turn = 0; turn < 2 && !ended(); ++turn) {
            const int side = sideOf(round, turn);
            if (sideDone(side))
                continue;
            QString why;
            bool freshProcess = false;
            if (replicatesProcesses(side) && processDue(round) > process[side]) {
                if (m_sides[side].restartServer) {
                    QString address;
                    int64_t pid = 0;
                    kept[side].reset(); // its connections lead to the server that is about to stop
                    if (m_clients[side])
                        m_clients[side]->stop(); // and so do the client command's
                    if (!m_sides[side].restartServer(&address, &pid, &why)) {
                        fail(side, QStringLiteral("the server did not start again: ") + why);
                        break;
                    }
                    m_sides[side].target.address = address;
                    m_sides[side].plan.serverPid = pid;
                }
                process[side] = processDue(round);
                freshProcess = true;
                if (m_sides[side].client && !startClient(side, &why)) {
                    fail(side, why);
                    break;
                }
            }
            if (m_sides[side].client && !m_clients[side]) {
                if (!startClient(side, &why)) {
                    fail(side, why);
                    break;
                }
                freshProcess = true;
            }
            LoadPlan block = m_sides[side].plan;
            if (byCount) {
                block.totalCalls = std::min(m_blocks.calls, plan.totalCalls - m_plannedSoFar[side]);
                block.duration = std::chrono::nanoseconds(0);
            } else {
                block.totalCalls = 0;
                block.duration = std::min(m_blocks.time, plan.duration - m_totals[side].elapsed);
            }
            // A new server (or client) process is cold: it gets the run's warm-up, as the first block did.
            if (round > 1 && !freshProcess) {
                block.warmupCalls = static_cast<uint64_t>(block.concurrency);
                block.warmupDuration = std::chrono::nanoseconds(0);
            }
            BlockOutcome outcome;
            const bool ran = m_sides[side].client ? runClientBlock(side, block, ++m_clientBlocks[side], &outcome, &why)
                                                  : runEngineBlock(side, block, &kept[side], &outcome, &why);
            if (!ran) {
                fail(side, why);
                break;
            }
            keepBlock(side, round, process[side], block, outcome, &decided);
            overTime = limited && (outcome.cut || std::chrono::steady_clock::now() >= m_deadline);
        }
    }
    for (auto &client : m_clients) {
        if (client)
            client->stop();
    }
    std::lock_guard lock(m_mutex);
    if (m_end == AbEnd::Running)
        m_end = m_stop                                   ? AbEnd::Stopped
            : decided                                    ? AbEnd::Decided
            : overTime && (!sideDone(0) || !sideDone(1)) ? AbEnd::MaxDuration
                                                         : AbEnd::Planned;
    for (RunSnapshot &total : m_totals)
        total.state = m_end == AbEnd::Stopped || m_end == AbEnd::Failed ? RunState::Stopped : RunState::Finished;
    m_running = false;
}

RunSnapshot AbRunner::snapshot(int side) const
{
    std::lock_guard lock(m_mutex);
    RunSnapshot s = m_totals[side];
    if (m_current && m_currentSide == side)
        appendRun(s, m_current->snapshot());
    else if (m_currentClientProgress && m_currentSide == side)
        appendRun(s, *m_currentClientProgress);
    return s;
}

std::vector<RawSample> AbRunner::rawSamples(int side) const
{
    std::lock_guard lock(m_mutex);
    return m_raw[side];
}

int AbRunner::blocksDone() const
{
    std::lock_guard lock(m_mutex);
    return m_blocksDone;
}

std::vector<AbBlockResult> AbRunner::completedBlocks() const
{
    std::lock_guard lock(m_mutex);
    return m_blockLog;
}

int AbRunner::roundsPlanned() const
{
    return m_blocks.roundsFor(m_sides[0].plan);
}

bool AbRunner::wasStopped() const
{
    return m_stop;
}

QString AbRunner::error() const
{
    std::lock_guard lock(m_mutex);
    return m_error;
}

SequentialAb AbRunner::sequential() const
{
    std::lock_guard lock(m_mutex);
    return m_sequential;
}

AbEnd AbRunner::endedBy() const
{
    std::lock_guard lock(m_mutex);
    return m_end;
}

QString AbRunner::endedByText(const QString &planned) const
{
    switch (endedBy()) {
    case AbEnd::Running:
        return QStringLiteral("still running");
    case AbEnd::Planned:
        return planned + QStringLiteral(" ended it");
    case AbEnd::Decided:
        return QStringLiteral("it decided");
    case AbEnd::MaxDuration:
        return QStringLiteral("the time limit (%1) ended it").arg(formatDuration(m_blocks.maxDuration));
    case AbEnd::Stopped:
        return QStringLiteral("the run was interrupted");
    case AbEnd::Failed:
        return QStringLiteral("the run failed");
    }
    return {};
}

} // namespace rpcscope
