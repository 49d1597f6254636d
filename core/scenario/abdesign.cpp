#include "abdesign.h"

#include "util/units.h"

namespace rpcscope {

std::optional<AbBlocks> prepareAb(
    const Scenario &design, const LoadPlan &plan, const AbServers &servers, ScenarioProblem *problem)
{
    auto fail = [problem](const QString &field, const QString &message) -> std::optional<AbBlocks> {
        *problem = { field, message, false };
        return std::nullopt;
    };
    // Blocks: by calls when the run is bounded by a count, by time otherwise.
    const bool byCount = plan.totalCalls > 0;
    if (!byCount && plan.duration.count() <= 0)
        return fail(
            QStringLiteral("load.calls"), QStringLiteral("an A/B run needs an end: give load.calls or load.duration"));
    AbBlocks blocks = design.abUntilDecided ? AbBlocks::sequentialFor(plan) : AbBlocks::defaultFor(plan);
    blocks.untilDecided = design.abUntilDecided;
    QString error;
    const QString threshold = design.abThreshold.isEmpty() ? QStringLiteral("5%") : design.abThreshold;
    if (!parseFraction(threshold, &blocks.threshold, &error))
        return fail(QStringLiteral("ab.threshold"), error);
    if (!design.abMaxDuration.isEmpty()) {
        const auto limit = parseDuration(design.abMaxDuration, &error);
        if (!limit || limit->count() <= 0)
            return fail(QStringLiteral("ab.max_duration"), limit ? QStringLiteral("must be positive") : error);
        blocks.maxDuration = *limit;
    }
    const QString connection = design.abConnection.isEmpty() ? QStringLiteral("kept") : design.abConnection;
    if (connection != u"kept" && connection != u"per-block")
        return fail(QStringLiteral("ab.connection"), QStringLiteral("\"%1\" is not kept or per-block").arg(connection));
    blocks.connectionPerBlock = connection == u"per-block";
    if (const QString &block = design.abBlock; !block.isEmpty()) {
        bool isNumber = false;
        const uint64_t calls = block.toULongLong(&isNumber);
        if (isNumber != byCount)
            return fail(QStringLiteral("ab.block"),
                QStringLiteral("the run is %1, so give %2 (got \"%3\")")
                    .arg(byCount ? QStringLiteral("counted (load.calls)") : QStringLiteral("timed (load.duration)"),
                        byCount ? QStringLiteral("a number of calls") : QStringLiteral("a duration"), block));
        if (isNumber) {
            if (calls == 0)
                return fail(QStringLiteral("ab.block"), QStringLiteral("must be at least 1"));
            blocks.calls = calls;
            blocks.time = std::chrono::nanoseconds(0);
        } else {
            const auto d = parseDuration(block, &error);
            if (!d || d->count() <= 0)
                return fail(QStringLiteral("ab.block"), d ? QStringLiteral("must be positive") : error);
            blocks.calls = 0;
            blocks.time = *d;
        }
    }
    int restarts = design.abRestarts; // 0: the default, chosen once the rounds are known
    if (restarts < 0 || restarts > 1000)
        return fail(QStringLiteral("ab.restarts"),
            QStringLiteral("expected a number of server starts from 1 to 1000, got %1").arg(restarts));
    const int rounds = blocks.roundsFor(plan);
    if (restarts == 0)
        restarts = blocks.untilDecided ? AbBlocks::defaultSequentialRestarts(servers.anyCommand, rounds)
                                       : AbBlocks::defaultRestarts(servers.anyCommand, rounds);
    else if (restarts > rounds)
        return fail(QStringLiteral("ab.restarts"),
            QStringLiteral("%1 server starts a side, but the run has only %2 rounds; a process needs a block at least")
                .arg(restarts)
                .arg(rounds));
    blocks.restarts = restarts;
    // Not pinned, one server process a side that rpcscope started: a verdict on those two processes says so.
    blocks.unpinnedProcesses = servers.bothCommands && !servers.clientPinned && restarts < 2;
    return blocks;
}

} // namespace rpcscope
