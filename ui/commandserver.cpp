#include "commandserver.h"

#include <QMetaObject>
#include <QPointer>
#include <QtConcurrent/QtConcurrentRun>

namespace rpcscope {

CommandServer::CommandServer(QObject *parent) : QObject(parent)
{
    m_pool.setMaxThreadCount(64); // one per server alive or stopping: a job never waits for another to end
}

CommandServer::~CommandServer()
{
    for (auto &slot : m_slots) {
        {
            std::lock_guard lock(slot->mutex);
            slot->stopRequested = true;
        }
        slot->wake.notify_all();
    }
    m_pool.waitForDone();
}

void CommandServer::reap()
{
    // Slots whose server has stopped are dropped here, never while one is still in its grace period.
    for (auto it = m_slots.begin(); it != m_slots.end();) {
        if ((*it)->done) {
            (*it)->job.waitForFinished(); // returns at once: the job sets done last
            it = m_slots.erase(it);
        } else {
            ++it;
        }
    }
}

void CommandServer::start(const ServerCommand &command, TransportKind kind)
{
    stop();
    reap();
    auto slot = std::make_unique<Slot>();
    Slot *s = slot.get();
    QPointer<CommandServer> self(this);
    s->job = QtConcurrent::run(&m_pool, [this, self, s, command, kind] {
        ServerLaunch server;
        QString error;
        const QString address = server.start(command, kind, &error);
        if (address.isEmpty()) {
            s->running = false;
            QMetaObject::invokeMethod(
                this,
                [self, error] {
                    if (self)
                        Q_EMIT self->failed(error);
                },
                Qt::QueuedConnection);
            s->done = true;
            return;
        }
        s->pid = server.pid();
        QMetaObject::invokeMethod(
            this,
            [self, address] {
                if (self)
                    Q_EMIT self->ready(address);
            },
            Qt::QueuedConnection);
        std::unique_lock lock(s->mutex);
        s->wake.wait(lock, [s] { return s->stopRequested; });
        lock.unlock();
        server.stop();
        s->pid = 0;
        s->running = false;
        s->done = true;
    });
    m_slots.push_back(std::move(slot));
}

void CommandServer::stop()
{
    if (m_slots.empty())
        return;
    Slot *s = m_slots.back().get();
    {
        std::lock_guard lock(s->mutex);
        s->stopRequested = true;
    }
    s->wake.notify_all();
}

bool CommandServer::isRunning() const
{
    return !m_slots.empty() && m_slots.back()->running && !m_slots.back()->stopRequested;
}

qint64 CommandServer::pid() const
{
    return m_slots.empty() ? 0 : m_slots.back()->pid.load();
}

} // namespace rpcscope
