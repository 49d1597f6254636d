#pragma once

#include "abdialog.h"
#include "engine/abrunner.h"
#include "scenario/scenario.h"
#include "store/runrecord.h"

#include <QFutureWatcher>
#include <QObject>
#include <QThreadPool>
#include <QTimer>

#include <array>
#include <atomic>
#include <memory>
#include <mutex>

namespace rpcscope {

class RunRecorder;

/**
 * An A/B run from the GUI. The servers are started, the blocks run and the servers stopped by a job on a thread
 * pool of this controller's own (starting a server may take seconds: never on the GUI thread; its one thread lives
 * as long as the job, and so as long as the servers it started). The GUI thread pulls progress on a coalescing
 * timer and learns of the end from the job's QFutureWatcher; both runs go into the history as they grow (inserted
 * here for their ids, written by the recorder's writer thread).
 */
class AbController : public QObject {
    Q_OBJECT
public:
    /// @p recorder takes both runs into the history (nothing is saved when its history is not open).
    explicit AbController(RunRecorder *recorder, QObject *parent = nullptr);
    ~AbController() override;

    /**
     * Starts: @p sides carry the scenario prepared once (transport, call, plan); their target address is filled in
     * per side. @p design holds the A/B design as requested (its "ab" section, checked by prepareAb()). @p records
     * are the two runs' descriptions (method, scenario, labels ...) as they will be saved.
     */
    bool start(const std::array<AbSide, 2> &sides, const AbRequest &request, const Scenario &design,
        const QString &cliPath, const QString &transport, std::array<RunRecord, 2> records, QString *error);
    void stop();
    /// Stops, waits for the worker (its servers stopped) and hands both runs to the writer as stopped: for closing
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
    int blocksDone() const { return m_runner.blocksDone(); }
    /// The pairs judged so far (anytime-valid: may be looked at after every pair).
    SequentialAb sequential() const { return m_runner.sequential(); }
    /// The sequential verdict now ("not yet decided after 7 of 40 pairs: ...", "regression after 12 pairs: ..."),
    /// and once ended, what ended it; empty before the first pair.
    QString sequentialText() const;
    bool untilDecided() const { return m_request.untilDecided; }

Q_SIGNALS:
    void progressed();
    /// The run ended (also when stopped or failed: @p error says why, and the runs keep what was measured).
    void finished(const QString &error);

private:
    void work();
    /// Progress, on the timer: inserts the runs once the blocks begin, hands their growth to the writer.
    void poll();
    /// The job ended: the runs' end is written and finished() emitted.
    void workerFinished();
    /// Inserts both runs once the runner has started; false with @p error when the store refuses.
    void beginRunsOnceStarted(QString *error);

    RunRecorder *m_recorder;
    AbRequest m_request;
    Scenario m_design; ///< the A/B design as requested
    QString m_cliPath;
    QString m_transport;
    std::array<AbSide, 2> m_sides;
    std::array<RunRecord, 2> m_records;
    AbRunner m_runner;
    QThreadPool m_pool;
    QFutureWatcher<void> m_worker;
    QTimer m_timer;

    mutable std::mutex m_mutex;
    QString m_phase; ///< guarded
    QString m_error; ///< guarded
    bool m_runnerStarted = false; ///< guarded
    std::atomic<bool> m_stop { false };
    std::array<QJsonObject, 2> m_serverDescriptions; ///< guarded
    /// Where work() pinned this process and the servers for an until-decided run ("0", "1"), empty when it did not.
    QString m_pinnedClient; ///< guarded
    QString m_pinnedServers; ///< guarded
    bool m_begun = false; ///< GUI thread: runs inserted into the store
    int m_shownBlocks = 0;
    bool m_running = false;
};

} // namespace rpcscope
