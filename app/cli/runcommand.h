#pragma once

#include "metrics/runsnapshot.h"
#include "profile/profile.h"
#include "scenario/scenario.h"

#include <QString>
#include <QStringList>

#include <optional>

namespace rpcscope::cli {

/// What one run produced, for commands that run several (matrix).
struct RunOutcome {
    /// In: save the run when the scenario asks (--save, --db, --label, --name), as run does (matrix: each cell).
    bool save = false;
    RunSnapshot snapshot;
    QString transport;
    QString codec;
    int64_t savedId = 0; ///< the run's id in the history when it was saved
    std::optional<Profile> serverProfile; ///< --profile
    std::optional<Profile> clientProfile; ///< --profile-client
};

/**
 * The scenario run's flags describe in @p arguments ("rpcscope-cli CMD [flags] [target]"), on top of the --scenario
 * document when one is given (which may start its server command only with --trust). std::nullopt after printing
 * the help (@p code ExitOk) or a usage error naming the flag (@p code ExitUsage). A target (or --builtin) is
 * required, unless @p callerSetsTarget (ab, matrix): then the document's target is dropped unread, and the result's
 * target is what the command line gave, if anything.
 */
std::optional<Scenario> scenarioFromArguments(
    const QString &cmd, const QStringList &arguments, int *code, bool callerSetsTarget = false);

/**
 * Runs @p scenario: checks it (prepareRun), starts its server, loads its schema, sends the load, and then saves,
 * exports, compares and checks as it says, printing the report. With @p outcome set (matrix), fills it instead of
 * printing, and saves only when outcome->save; such callers drop the single-run outputs first
 * (refuseSingleRunOutputs). Returns the exit code.
 */
int runScenario(const QString &cmd, const Scenario &scenario, RunOutcome *outcome = nullptr);

/**
 * For commands that run a scenario their own way (ab, matrix): a usage error (and true) when @p arguments give one
 * of run's single-run outputs (-O/-o, --compare-to, --check); otherwise @p scenario's, from a document, are dropped.
 */
bool refuseSingleRunOutputs(const QString &cmd, const QStringList &arguments, Scenario *scenario);

/// `rpcscope-cli run`.
int runCommand(const QStringList &arguments);

} // namespace rpcscope::cli
