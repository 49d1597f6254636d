#pragma once

#include <QStringList>

namespace rpcscope::cli {

/// Exit codes, documented in --help and the README.
enum ExitCode : int {
    ExitOk = 0,
    ExitFailedCalls = 1, ///< only with --fail-on-error: some calls did not end OK
    ExitUsage = 2, ///< bad flags or bad input (files, JSON, schema)
    ExitRuntime = 3, ///< could not do the work (e.g. a server could not start)
};

void blockTerminationSignals();
int run(const QStringList &arguments);

} // namespace rpcscope::cli
