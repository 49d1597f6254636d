#pragma once

#include "server/servercommand.h"

#include <QObject>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

namespace rpcscope {

/**
 * A server command started for a GUI run. Starting may take seconds (the server gets ready), so it happens on a
 * worker thread of its own, which also owns the server until stop(): a child is told to end when the thread that
 * started it ends (PR_SET_PDEATHSIG), so that thread lives exactly as long as the server should.
 */
class CommandServer : public QObject
{
    Q_OBJECT
public:
    explicit CommandServer(QObject *parent = nullptr);
    ~CommandServer() override;

    /// Starts @p command; ready() or failed() follows on this object's thread.
    void start(const ServerCommand &command);
    /// Stops the server (SIGTERM, then SIGKILL after the grace) without blocking the caller.
    void stop();
    bool isRunning() const { return m_running; }
    qint64 pid() const { return m_pid; }
    QString output() const;

Q_SIGNALS:
    void ready(const QString &address);
    void failed(const QString &error);

private:
    void join();

    std::thread m_thread;
    mutable std::mutex m_mutex;
    std::condition_variable m_wake;
    bool m_stopRequested = false;
    std::atomic<bool> m_running{false};
    std::atomic<qint64> m_pid{0};
    QString m_output;
};

} // namespace rpcscope
