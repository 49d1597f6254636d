#pragma once

#include "store/runrecord.h"

#include <QObject>
#include <QStringList>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace rpcscope {

class RunStore;
class RunWriter;

/**
 * The GUI's run history: the store the GUI thread reads and edits, and the writer thread that takes the live
 * runs' progress (a commit, or a WAL checkpoint with its fsync, must never stall the charts). A run on the Run page
 * is recorded from its first interval: begin() inserts it for its id, progress() hands its newest snapshot to the
 * writer at most once a second (the CLI's interval), finish() its end; a crash leaves all but the last second.
 */
class RunRecorder : public QObject {
    Q_OBJECT
public:
    explicit RunRecorder(QObject *parent = nullptr);
    ~RunRecorder() override; ///< writes what is still queued first

    /// Opens the history at @p path; false with the reason, and then nothing is recorded (store() is null).
    bool open(const QString &path, QString *error);
    /// Null when the history is not open.
    RunStore *store() const { return m_store.get(); }
    RunWriter *writer() const { return m_writer.get(); }

    /// Inserts @p run as running and sets its id; false with the reason (the run goes on, unsaved).
    bool begin(RunRecord *run, QString *error);
    /// Queues @p snapshot as @p run's progress, unless the last one went less than a second ago.
    void progress(RunRecord *run, const RunSnapshot &snapshot);
    /// Queues @p run's end: the final @p snapshot (its state says stopped or finished), the end time and
    /// @p rawSamples, which @p run keeps too. runStored() follows once written.
    void finish(RunRecord *run, const RunSnapshot &snapshot, std::vector<RawSample> rawSamples);
    /// Takes @p run out of the history again: it failed (a client command that broke off), and what it measured
    /// is not a measurement of its plan.
    void discard(RunRecord *run);
    /// Waits until everything queued is written, at most @p timeout; false on timeout.
    bool flush(std::chrono::milliseconds timeout);

    /// What progress() reads the time from: a monotonic clock, replaceable so tests need not wait a second.
    using Clock = std::function<std::chrono::steady_clock::time_point()>;
    void setClock(Clock clock) { m_clock = std::move(clock); }

Q_SIGNALS:
    /// A run's end is stored: lists of runs may refresh.
    void runStored(qint64 id);
    /// Writing a run failed; @p error names the history and the reason.
    void failed(const QString &error);

private:
    /// The run can be written to: the history is open, it was inserted and has not ended.
    bool recording(const RunRecord *run) const;

    std::unique_ptr<RunStore> m_store;
    std::unique_ptr<RunWriter> m_writer;
    Clock m_clock = [] { return std::chrono::steady_clock::now(); };
    std::optional<std::chrono::steady_clock::time_point> m_lastProgress;
};

} // namespace rpcscope
