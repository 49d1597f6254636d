#pragma once

#include "compare/sequentialab.h"
#include "engine/abrunner.h"
#include "session/absession.h"
#include "store/runrecord.h"

#include <QObject>
#include <QTimer>

#include <array>
#include <memory>
#include <mutex>
#include <vector>

namespace rpcscope {

class RunRecorder;

/**
 * An A/B run from the GUI: an AbSession (core) started on its own thread (starting a server may take seconds: never
 * on the GUI thread), which holds the servers it started until the run ends. The GUI thread pulls progress on a
 * coalescing timer; both runs go into the history as they grow (inserted here for their ids, written by the
 * recorder's writer thread). Ended sessions are kept until their thread has stopped its servers, so the GUI thread
 * never waits for a server's exit.
 */
class AbController : public QObject {
    Q_OBJECT
public:
    /// @p recorder takes both runs into the history (nothing is saved when its history is not open).
    explicit AbController(RunRecorder *recorder, QObject *parent = nullptr);
    ~AbController() override;

    /// Starts @p session (checked by AbSession::check(): what was asked is right as far as it can be told before a
    /// server starts). False with @p error when a run is going.
    bool start(std::unique_ptr<AbSession> session, QString *error);
    void stop();
    /// Stops, waits for the session (its servers stopped) and hands both runs to the writer as stopped: for closing
    /// the window, when no timer will fire again. finished() is emitted as usual.
    void stopAndFinish();
    bool isRunning() const;

    RunSnapshot snapshot(int side) const;
    /// "Starting B ...", "Round 3 of 10: A p50 684 us, B p50 1.35 ms".
    QString progressText() const;
    /// 0..1; -1 while the servers start.
    double progress() const;
    /// The two runs as saved (ids set when there is a store), valid after finished().
    const std::array<RunRecord, 2> &records() const { return m_records; }
    /// The two runs as they stand, their snapshots taken now (for showing them live).
    std::array<RunRecord, 2> liveRecords() const;
    /// Blocks completed so far, both sides; changes when a new block can be shown.
    int blocksDone() const;
    /// The pairs judged so far (anytime-valid: may be looked at after every pair).
    SequentialAb sequential() const;
    /// The sequential verdict now ("not yet decided after 7 of 40 pairs: ...", "regression after 12 pairs: ..."),
    /// and once ended, what ended it; empty before the first pair.
    QString sequentialText() const;
    bool untilDecided() const;

Q_SIGNALS:
    void progressed();
    /// The run ended (also when stopped or failed: @p error says why, and the runs keep what was measured).
    void finished(const QString &error);

private:
    /// The session's thread said how its start went (queued to the GUI thread).
    void sessionStarted(const AbSession *session, const AbSession::Started &started);
    /// Progress, on the timer: hands the runs' growth to the writer; ends the run when the runner has.
    void poll();
    /// The runner ended (or never started): the runs' end is written and finished() emitted.
    void ended(const QString &error);
    /// Forgets ended sessions whose thread has stopped their servers.
    void reap();
    /// The runner, once the blocks started; nullptr before.
    const AbRunner *runner() const;

    RunRecorder *m_recorder;
    std::unique_ptr<AbSession> m_session;
    std::vector<std::unique_ptr<AbSession>> m_retired; ///< ended; their threads may still be stopping servers
    std::array<RunRecord, 2> m_records;
    QTimer m_timer;

    mutable std::mutex m_mutex;
    QString m_phase; ///< guarded: "Starting A: ..." while the servers start
    bool m_running = false;
    bool m_started = false; ///< the blocks started: the runs are in the history
    int m_shownBlocks = 0;
};

} // namespace rpcscope
