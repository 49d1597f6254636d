#pragma once

#include "metrics/runsnapshot.h"

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
/// What one run produced, for commands that run several (matrix).
struct RunOutcome
{
    RunSnapshot snapshot;
    QString transport;
    QString codec;
};

/// `run`: parses @p arguments, runs, and prints the report; with @p outcome set, fills it instead of printing.
int runOnce(const QStringList &arguments, RunOutcome *outcome);
/// Prints "rpcscope-cli COMMAND: MESSAGE" and a pointer to --help on stderr; returns ExitUsage.
int usageError(const QString &command, const QString &message);
int run(const QStringList &arguments);

} // namespace rpcscope::cli
