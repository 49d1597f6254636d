#include "commandserver.h"

#include <QMetaObject>

namespace rpcscope {

CommandServer::CommandServer(QObject *parent)
    : QObject(parent)
{
}

CommandServer::~CommandServer()
{
    stop();
    join();
}

void CommandServer::join()
{
    if (m_thread.joinable())
        m_thread.join();
}

void CommandServer::start(const ServerCommand &command)
{
    stop();
    join();
    {
        std::lock_guard lock(m_mutex);
        m_stopRequested = false;
        m_output.clear();
    }
    m_running = true;
    m_thread = std::thread([this, command] {
        RunningServer server;
        QString error;
        const QString address = server.start(command, &error);
        if (address.isEmpty()) {
            m_running = false;
            QMetaObject::invokeMethod(this, [this, error] { Q_EMIT failed(error); }, Qt::QueuedConnection);
            return;
        }
        m_pid = server.pid();
        QMetaObject::invokeMethod(this, [this, address] { Q_EMIT ready(address); }, Qt::QueuedConnection);
        std::unique_lock lock(m_mutex);
        m_wake.wait(lock, [this] { return m_stopRequested; });
        lock.unlock();
        server.stop();
        lock.lock();
        m_output = server.output();
        m_pid = 0;
        m_running = false;
    });
}

void CommandServer::stop()
{
    std::lock_guard lock(m_mutex);
    m_stopRequested = true;
    m_wake.notify_all();
}

QString CommandServer::output() const
{
    std::lock_guard lock(m_mutex);
    return m_output;
}

} // namespace rpcscope
