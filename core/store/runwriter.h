#pragma once

#include "metrics/runsnapshot.h"
#include "profile/profile.h"

#include <QObject>
#include <QString>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace rpcscope {

/**
 * Writes runs to the history on a thread of its own, so the thread that produces them (the GUI's) never waits on
 * SQLite: a transaction, an fsync or a WAL checkpoint can take tens of milliseconds on a busy disk.
 *
 * The writer has its own RunStore connection to the same database. Runs are inserted elsewhere (beginRun, which
 * hands out the id); the writer takes their updates and their end. Updates to one run coalesce: when the writer
 * falls behind, only the newest pending snapshot of a run is written. A finish is never dropped, and the destructor
 * writes everything still queued before it returns. Results come back as signals, delivered to the receiver's
 * thread.
 */
class RunWriter : public QObject {
    Q_OBJECT
public:
    explicit RunWriter(QObject *parent = nullptr);
    ~RunWriter() override;

    /// Opens @p path on the writer thread and waits for the answer; false with the store's reason.
    bool open(const QString &path, QString *error);
    bool isOpen() const;

    /// Queues @p snapshot as the run's newest measurements (replacing a pending update of the same run).
    void update(qint64 id, RunSnapshot snapshot);
    /// Queues the run's last update, its raw samples and its final status; finished() follows once it is stored.
    void finish(qint64 id, RunSnapshot snapshot, std::vector<RawSample> rawSamples, QString status);
    /// Queues the run's removal (it failed, and what it measured is no measurement of its plan); pending updates of
    /// it are dropped.
    void discard(qint64 id);
    /// Queues the run's CPU profiles (read after its end: RunStore::saveProfiles()); profilesSaved() follows.
    void saveProfiles(qint64 id, std::optional<Profile> server, std::optional<Profile> client);

    /// Waits until everything queued so far is written, at most @p timeout; false on timeout.
    bool flush(std::chrono::milliseconds timeout);
    /// Nothing queued and nothing being written.
    bool isIdle() const;
    /// How many writes were coalesced away (an update replaced by a newer one before it was written).
    quint64 coalesced() const;

Q_SIGNALS:
    /// Run @p id is stored with its final status.
    void finished(qint64 id);
    /// Run @p id's profiles are stored.
    void profilesSaved(qint64 id);
    /// A write of run @p id failed; @p error says why (the history path and the SQL reason).
    void failed(qint64 id, const QString &error);

private:
    struct Job {
        qint64 id = 0;
        bool final = false;
        bool profiles = false; ///< only the profiles (server and client below)
        bool discard = false; ///< remove the run
        std::optional<Profile> serverProfile;
        std::optional<Profile> clientProfile;
        RunSnapshot snapshot;
        std::vector<RawSample> rawSamples;
        QString status;
    };
    void enqueue(Job job);
    void work(const QString &path);

    mutable std::mutex m_mutex;
    std::condition_variable m_wake; ///< to the writer: work queued, or stop
    std::condition_variable m_progress; ///< from the writer: opened, or a job done
    std::deque<Job> m_queue;
    bool m_busy = false;
    bool m_stop = false;
    bool m_opened = false;
    bool m_openDone = false;
    QString m_openError;
    quint64 m_coalesced = 0;
    std::thread m_thread;
};

} // namespace rpcscope
