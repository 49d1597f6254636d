#pragma once

#include "session/runsession.h"

#include <QString>

namespace rpcscope::cli {

/**
 * RunSession::prepare() for a command of the CLI, on its own thread, with what it says printed: "Starting COMMAND",
 * its notes, and its problem worded with the CLI's flags. Returns ExitOk, or the exit code after printing the
 * problem (ExitUsage: something given is wrong; ExitRuntime: a server did not start or answer). Shared by `run`
 * (and matrix, through it) and `call`.
 */
int prepareSession(const QString &cmd, RunSession *session);

} // namespace rpcscope::cli
