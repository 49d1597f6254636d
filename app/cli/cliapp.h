#pragma once

#include <QStringList>
#include <QTextStream>

namespace rpcscope::cli {

/// Exit codes, documented in --help and the README.
enum ExitCode : int {
    ExitOk = 0,
    ExitFailedCalls = 1, ///< only with --fail-on-error: some calls did not end OK
    ExitUsage = 2, ///< bad flags or bad input (files, JSON, schema)
    ExitRuntime = 3, ///< could not do the work (e.g. a server could not start)
};

void blockTerminationSignals();
/// The streams every command writes to (one each, so their buffers never interleave).
QTextStream &out();
QTextStream &err();
/// Prints "rpcscope-cli COMMAND: MESSAGE" and a pointer to --help on stderr; returns ExitUsage.
int usageError(const QString &command, const QString &message);
int run(const QStringList &arguments);

} // namespace rpcscope::cli
