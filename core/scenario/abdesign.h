#pragma once

#include "engine/abrunner.h"
#include "scenario/scenario.h"

#include <optional>

namespace rpcscope {

/// Who an A/B run's sides are, for the design's defaults and the "unpinned processes" rule.
struct AbServers {
    bool anyCommand = false; ///< a side is a server rpcscope starts (a command, or its own `serve`)
    bool bothCommands = false; ///< both are
    bool clientPinned = false; ///< this client runs pinned to CPUs (given, or apart from the servers)
};

/**
 * The A/B design of @p design (its "ab" section: block, restarts, connection, threshold, until_decided,
 * max_duration, as the front end's flags or dialog set them) checked and typed for the load @p plan: the blocks, the
 * server processes a side (the default, AbBlocks::defaultRestarts or, judged as it goes, defaultSequentialRestarts; or
 * the number given, never more than the rounds), the connection, the threshold and time limit, and whether the verdict
 * is about two unpinned processes. std::nullopt with @p problem naming the field ("ab.restarts", "load.calls"). One set
 * of rules and messages for the CLI's ab and the window's Compare A/B; the side that goes first is the caller's coin
 * (firstSide stays -1).
 */
std::optional<AbBlocks> prepareAb(
    const Scenario &design, const LoadPlan &plan, const AbServers &servers, ScenarioProblem *problem);

} // namespace rpcscope
