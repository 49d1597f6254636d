#pragma once

#include "engine/loadengine.h"
#include "transport/transports.h"

#include <QObject>
#include <QTimer>

namespace rpcscope {

/**
 * Runs the engine for the GUI: the engine works on the transport's threads; a coalescing ~10 Hz timer on the GUI thread
 * pulls value snapshots and hands them on. Snapshots of an earlier run (older generation) are dropped.
 */
class RunController : public QObject {
    Q_OBJECT
public:
    explicit RunController(QObject *parent = nullptr);

    /// Starts a run; @p target's clientThreads is used as given (ScenarioPage::prepare() picks it).
    bool start(const TransportOptions &transport, const GrpcTarget &target, const GrpcCall &call, const LoadPlan &plan,
        QString *error);
    void stop();
    bool isRunning() const;
    RunSnapshot lastSnapshot() const { return m_last; }
    /// Every timed call of the last run, when its plan recorded them; call after runFinished().
    std::vector<RawSample> rawSamples() const { return m_engine.rawSamples(); }
    /// Snapshot period in ms (default 100).
    void setInterval(int ms) { m_timer.setInterval(ms); }

Q_SIGNALS:
    void snapshotAvailable(const rpcscope::RunSnapshot &snapshot);
    void runStarted();
    void runFinished(const rpcscope::RunSnapshot &snapshot);

private:
    void pull();
    void engineFinished();

    LoadEngine m_engine;
    QTimer m_timer;
    RunSnapshot m_last;
    uint64_t m_generation = 0;
    bool m_running = false;
};

} // namespace rpcscope
