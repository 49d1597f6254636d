#pragma once

#include "session/runsession.h"

#include <QObject>
#include <QTimer>

#include <memory>
#include <vector>

namespace rpcscope {

/**
 * Runs a RunSession for the GUI: the session prepares (its server starting, the transport made: name resolution
 * included) and runs on its own thread and the transport's; a coalescing ~10 Hz timer on the GUI thread pulls value
 * snapshots and hands them on. A session that ended is kept until its thread has stopped its servers, so the GUI
 * thread never waits for a server to exit.
 */
class RunController : public QObject {
    Q_OBJECT
public:
    explicit RunController(QObject *parent = nullptr);
    ~RunController() override;

    /// Starts @p session: runStarted() follows once its load runs, or startFailed(). False while a run is going.
    bool start(std::shared_ptr<RunSession> session);
    /// Stops the run (what was measured is kept), or its preparation.
    void stop();
    /// From start() until runFinished() or startFailed().
    bool isRunning() const;
    /// The running (or last) session; null before the first.
    RunSession *session() const { return m_session.get(); }
    RunSnapshot lastSnapshot() const { return m_last; }
    /// Every timed call of the last run, when its plan recorded them; call after runFinished().
    std::vector<RawSample> rawSamples() const;
    /// Why the last run could not go on (its client command failed), once it ended; empty when it ran or was stopped.
    QString failure() const;
    /// The number start() gave the running (or last) session, counted from 1: what profilesRead() names it by.
    quint64 sessionNumber() const { return m_sessionNumber; }
    /// Snapshot period in ms (default 100).
    void setInterval(int ms) { m_timer.setInterval(ms); }

Q_SIGNALS:
    void snapshotAvailable(const rpcscope::RunSnapshot &snapshot);
    /// The session's load runs (its server is up, its transport made).
    void runStarted();
    /// The session did not start: @p started says why (a field of the scenario, or what failed with `runtime` set;
    /// the server command's failure; the schema loader's details).
    void startFailed(const rpcscope::RunSession::Started &started);
    void runFinished(const rpcscope::RunSnapshot &snapshot);
    /// Session @p number's CPU profiles are read (after its runFinished(), seconds later: perf resolves symbols off
    /// this thread); told even when a later session runs by now. Only for sessions whose spec profiles.
    void profilesRead(quint64 number, const rpcscope::RunProfiles &profiles);

private:
    void pull();
    void sessionStarted(const RunSession *session, const RunSession::Started &started);
    void engineFinished(const RunSession *session);
    void reap();

    std::shared_ptr<RunSession> m_session;
    std::vector<std::shared_ptr<RunSession>> m_retired; ///< ended; their threads may still stop their servers
    QTimer m_timer;
    RunSnapshot m_last;
    bool m_running = false;
    bool m_preparing = false; ///< started, the session's start not told yet
    quint64 m_sessionNumber = 0;
};

} // namespace rpcscope
