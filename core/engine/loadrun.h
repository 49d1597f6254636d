#pragma once

#include "metrics/runsnapshot.h"

#include <QObject>
#include <QString>

#include <chrono>
#include <vector>

namespace rpcscope {

/**
 * What makes a run's calls, as its front ends watch it: rpcscope's own load engine (LoadEngine), or a client command
 * that makes them itself and reports each one (ClientLoad, issue 36). A run's session (RunSession) holds one; the
 * CLI and the window poll its snapshots and are told when it ended, whichever it is.
 *
 * snapshot() is a value copy, cheap enough at 10-50 Hz, from any thread; runFinished() is emitted once per run, from
 * a thread of the load's own.
 */
class LoadRun : public QObject {
    Q_OBJECT
public:
    using QObject::QObject;

    /// Ends the run early; what was measured so far is kept.
    virtual void stop() = 0;
    virtual bool isRunning() const = 0;
    /// Blocks until the run ends; false on timeout.
    virtual bool waitForFinished(std::chrono::milliseconds timeout) const = 0;
    /// A copy of the current measurements. Thread-safe.
    virtual RunSnapshot snapshot() const = 0;
    /// The raw samples of the last run in send order (empty unless recorded). Call after it ended.
    virtual std::vector<RawSample> rawSamples() const = 0;
    /// Why the run could not go on (a client command that exited, printed garbage or went silent), after it ended;
    /// empty when it ran as planned or was stopped. What it measured until then is in snapshot() all the same.
    virtual QString failure() const { return {}; }

Q_SIGNALS:
    void runFinished();
};

} // namespace rpcscope
