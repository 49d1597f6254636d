#pragma once

#include "server/serverlaunch.h"

#include <QFuture>
#include <QObject>
#include <QThreadPool>

#include <atomic>
#include <condition_variable>
#include <list>
#include <memory>
#include <mutex>

namespace rpcscope {

/**
 * Server commands started for GUI runs. Starting may take seconds (the server gets ready), so each server is
 * started by a job on a thread pool of this object's own (QtConcurrent::run, the ui's one idiom), which also owns
 * it until stop(): a child is told to end when the thread that started it ends (PR_SET_PDEATHSIG), so the job holds
 * its thread exactly as long as the server should live. A server still stopping (its grace period) does not hold up
 * the next one: the pool has a thread for each.
 */
class CommandServer : public QObject {
    Q_OBJECT
public:
    explicit CommandServer(QObject *parent = nullptr);
    ~CommandServer() override;

    /// Starts @p command for a client of @p kind; ready() (with the address that client dials) or failed() follows
    /// on this object's thread. The previous server is stopped.
    void start(const ServerCommand &command, TransportKind kind);
    /// Stops the current server (SIGTERM, then SIGKILL after the grace) without blocking the caller.
    void stop();
    /// The current server is starting or serving.
    bool isRunning() const;
    qint64 pid() const;

Q_SIGNALS:
    void ready(const QString &address);
    void failed(const QString &error);

private:
    struct Slot {
        QFuture<void> job;
        std::mutex mutex;
        std::condition_variable wake;
        bool stopRequested = false;
        std::atomic<bool> running { true };
        std::atomic<bool> done { false };
        std::atomic<qint64> pid { 0 };
    };
    void reap();

    std::list<std::unique_ptr<Slot>> m_slots; ///< the last one is current
    QThreadPool m_pool; ///< declared last: destroyed (and waited for) before the slots its jobs use
};

} // namespace rpcscope
