#include "runwriter.h"

#include "runstore.h"

namespace rpcscope {

RunWriter::RunWriter(QObject *parent) : QObject(parent) { }

RunWriter::~RunWriter()
{
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_wake.notify_all();
    if (m_thread.joinable())
        m_thread.join(); // the queue is drained first: nothing measured is dropped on close
}

bool RunWriter::open(const QString &path, QString *error)
{
    if (m_thread.joinable()) {
        *error = QStringLiteral("the run writer is already open");
        return false;
    }
    m_thread = std::thread([this, path] { work(path); });
    std::unique_lock lock(m_mutex);
    m_progress.wait(lock, [this] { return m_openDone; });
    if (!m_opened)
        *error = m_openError;
    return m_opened;
}

bool RunWriter::isOpen() const
{
    std::lock_guard lock(m_mutex);
    return m_opened && !m_stop;
}

void RunWriter::update(qint64 id, RunSnapshot snapshot)
{
    Job job;
    job.id = id;
    job.snapshot = std::move(snapshot);
    enqueue(std::move(job));
}

void RunWriter::finish(qint64 id, RunSnapshot snapshot, std::vector<RawSample> rawSamples, QString status)
{
    Job job;
    job.id = id;
    job.final = true;
    job.snapshot = std::move(snapshot);
    job.rawSamples = std::move(rawSamples);
    job.status = std::move(status);
    enqueue(std::move(job));
}

void RunWriter::discard(qint64 id)
{
    {
        std::lock_guard lock(m_mutex);
        std::erase_if(m_queue, [id](const Job &queued) { return queued.id == id; });
    }
    Job job;
    job.id = id;
    job.discard = true;
    enqueue(std::move(job));
}

void RunWriter::saveProfiles(qint64 id, std::optional<Profile> server, std::optional<Profile> client)
{
    Job job;
    job.id = id;
    job.profiles = true;
    job.serverProfile = std::move(server);
    job.clientProfile = std::move(client);
    enqueue(std::move(job));
}

void RunWriter::enqueue(Job job)
{
    {
        std::lock_guard lock(m_mutex);
        if (!m_opened)
            return;
        // A pending plain update of the same run is stale once a newer snapshot exists (snapshots are cumulative).
        for (auto it = m_queue.begin(); it != m_queue.end() && !job.profiles && !job.discard; ++it) {
            if (it->id == job.id && !it->final && !it->profiles && !it->discard) {
                m_queue.erase(it);
                ++m_coalesced;
                break;
            }
        }
        m_queue.push_back(std::move(job));
    }
    m_wake.notify_one();
}

bool RunWriter::flush(std::chrono::milliseconds timeout)
{
    std::unique_lock lock(m_mutex);
    return m_progress.wait_for(lock, timeout, [this] { return m_queue.empty() && !m_busy; });
}

bool RunWriter::isIdle() const
{
    std::lock_guard lock(m_mutex);
    return m_queue.empty() && !m_busy;
}

quint64 RunWriter::coalesced() const
{
    std::lock_guard lock(m_mutex);
    return m_coalesced;
}

void RunWriter::work(const QString &path)
{
    // Qt SQL connections belong to the thread that opens them: this store lives and dies on the writer thread.
    RunStore store;
    {
        QString error;
        const bool ok = store.open(path, &error);
        std::lock_guard lock(m_mutex);
        m_opened = ok;
        m_openError = error;
        m_openDone = true;
    }
    m_progress.notify_all();
    if (!store.isOpen())
        return;
    for (;;) {
        Job job;
        {
            std::unique_lock lock(m_mutex);
            m_wake.wait(lock, [this] { return m_stop || !m_queue.empty(); });
            if (m_queue.empty())
                break; // stopping, and everything is written
            job = std::move(m_queue.front());
            m_queue.pop_front();
            m_busy = true;
        }
        QString error;
        bool ok = false;
        if (job.discard) {
            ok = store.remove(job.id, &error);
        } else if (job.profiles) {
            RunRecord run;
            run.id = job.id;
            run.serverProfile = std::move(job.serverProfile);
            run.clientProfile = std::move(job.clientProfile);
            ok = store.saveProfiles(run, &error);
        } else {
            ok = job.final ? store.finishRun(job.id, job.snapshot, job.rawSamples, job.status, &error)
                           : store.updateRun(job.id, job.snapshot, &error);
        }
        if (!ok)
            Q_EMIT failed(job.id, QStringLiteral("%1: %2").arg(path, error));
        else if (job.profiles)
            Q_EMIT profilesSaved(job.id);
        else if (job.final)
            Q_EMIT finished(job.id);
        {
            std::lock_guard lock(m_mutex);
            m_busy = false;
        }
        m_progress.notify_all();
    }
}

} // namespace rpcscope
