#pragma once

#include "scenario/runspec.h"
#include "scenario/scenario.h"

#include <QCommandLineParser>
#include <QList>
#include <QStringList>

#include <functional>
#include <optional>

namespace rpcscope::cli {

/**
 * One flag of `run` (and of ab and matrix, which take run's flags): its names, help, and the Scenario field it sets.
 * The table of them is the only place a flag is turned into a scenario; checking the values is core's job
 * (prepareRun), whose problems name the field, which flagFor() turns back into the flag.
 */
struct RunFlag {
    QStringList names; ///< {"c", "concurrency"}: the short name first, as the help lists them
    QString valueName; ///< empty: a switch
    QString help;
    QString field; ///< the document's field: "load.concurrency", "connection.cacert", "output.exports"
    bool repeatable = false; ///< each occurrence adds (--fill); else the last one wins
    QString example; ///< a valid value (for a switch: empty), for the test that round-trips every flag
    /// Writes @p value into @p scenario; false with @p why (no flag name) when the text cannot be a value of it.
    std::function<bool(Scenario &scenario, const QString &value, QString *why)> set;
};

/// Every flag that describes a run, in the help's order.
const QList<RunFlag> &runFlags();

/// The flag behind @p field ("-c" for "load.concurrency", "--fill" for "fills[2]"); empty when none.
QString flagFor(const QString &field);

/// True when @p parser gives the flag behind @p field and that flag replaces a document's value (it is not one that
/// adds to it, as --proto and -o do): the user named the value, not the document.
bool flagReplaces(const QCommandLineParser &parser, const QString &field);

/// run's description, its flags, and the flags about flags (--help, --scenario, --trust).
void addRunOptions(QCommandLineParser &parser);

/**
 * The scenario @p parser's flags describe, on top of @p base (a --scenario document, or Scenario defaults): a flag
 * given replaces the document's value, a repeatable one adds to it. The positional target (or --builtin) sets the
 * target. std::nullopt with @p error naming the flag when a value is not of the flag's type or flags contradict
 * each other (-d with -D); everything else is prepareRun()'s to check.
 */
std::optional<Scenario> scenarioFromFlags(const QCommandLineParser &parser, Scenario base, QString *error);

/// @p problem in flag terms: "-c: expected a number from 1 to 100000, got 0".
QString describeForCli(const ScenarioProblem &problem, const Scenario &scenario);

} // namespace rpcscope::cli
