#pragma once

#include "engine/loadengine.h"
#include "metrics/runsnapshot.h"
#include "transport/grpctransport.h"
#include "transport/transports.h"

#include <QCommandLineParser>
#include <QStringList>
#include <QTextStream>

#include <csignal>
#include <functional>
#include <vector>

namespace rpcscope::cli {

/// Exit codes, documented in --help and the README.
enum ExitCode : int {
    ExitOk = 0,
    ExitFailedCalls = 1, ///< only with --fail-on-error: some calls did not end OK
    ExitUsage = 2, ///< bad flags or bad input (files, JSON, schema)
    ExitRuntime = 3, ///< could not do the work (e.g. a server could not start)
    ExitRegression = 4, ///< compare/ab/run --compare-to: a regression beyond the threshold; or a run --check failed
};

/// Blocks SIGINT and SIGTERM in the calling thread and every thread it starts (call first thing in main).
void blockTerminationSignals();
/// SIGINT and SIGTERM: blocked everywhere by blockTerminationSignals(), so wait for them with sigwait().
sigset_t terminationSignals();
/// The streams every command writes to (one each, so their buffers never interleave).
QTextStream &out();
QTextStream &err();

/**
 * While it lives, out() and err() write into its strings instead of stdout and stderr, so tests read what a command
 * printed in process; the streams before it are restored when it goes (captures nest). For the thread that runs
 * the commands only.
 */
class OutputCapture {
public:
    OutputCapture();
    ~OutputCapture();
    OutputCapture(const OutputCapture &) = delete;
    OutputCapture &operator=(const OutputCapture &) = delete;

    /// What was printed on out() so far.
    QString standardOutput();
    /// What was printed on err() so far.
    QString standardError();

private:
    QString m_out;
    QString m_err;
    QTextStream m_outStream { &m_out };
    QTextStream m_errStream { &m_err };
    QTextStream *m_previousOut;
    QTextStream *m_previousErr;
};
/**
 * Waits for @p engine's run to end, calling @p tick every @p every meanwhile (e.g. to save progress); SIGINT and
 * SIGTERM stop the run (what was measured is kept). True when a signal stopped it.
 */
bool waitForEngine(LoadRun &engine, std::chrono::milliseconds every, const std::function<void()> &tick);
/// The same for anything that can wait (@p wait returns true when done) and be stopped.
bool waitForEngineLike(const std::function<bool(std::chrono::milliseconds)> &wait, const std::function<void()> &stop,
    std::chrono::milliseconds every, const std::function<void()> &tick);
/// The run history database: --db when @p parser has it set, else RunStore::chosenPath() (RPCSCOPE_DB or the default).
QString historyPath(const QCommandLineParser &parser);
/// machineNoiseWarnings() on stderr, one "warning: ..." line each: for commands about to send load.
void printMachineNoiseWarnings();
/**
 * When @p parser saw --help or --help-all (Qt adds both), prints @p text (Qt's help text when empty) with its usage
 * line naming the command as typed ("Usage: rpcscope-cli run [options] target", not the binary's path), and returns
 * true: the command is done.
 */
bool printCommandHelp(const QCommandLineParser &parser, const QString &command, const QString &text = {});
/// Prints "rpcscope-cli COMMAND: MESSAGE" and a pointer to --help on stderr; returns ExitUsage.
int usageError(const QString &command, const QString &message);
int run(const QStringList &arguments);

} // namespace rpcscope::cli
