#pragma once
// The ui's one idiom for background work: a job on Qt's thread pool (QtConcurrent::run), its result handed back
// on the GUI thread by a QFutureWatcher. No polling for completion, no thread per job.

#include <QFutureWatcher>
#include <QObject>
#include <QtConcurrent/QtConcurrentRun>

#include <type_traits>
#include <utility>

namespace rpcscope {

/**
 * Runs @p job on a pool thread, then @p done(result) on @p context's thread. @p job must not touch @p context or
 * anything the GUI thread owns (capture copies); when @p context is destroyed first, the result is dropped.
 */
template<typename Job, typename Done> void runInBackground(QObject *context, Job job, Done done)
{
    using Result = std::invoke_result_t<Job>;
    auto *watcher = new QFutureWatcher<Result>(context);
    QObject::connect(watcher, &QFutureWatcherBase::finished, context, [watcher, done = std::move(done)]() mutable {
        watcher->deleteLater();
        done(watcher->future().takeResult());
    });
    watcher->setFuture(QtConcurrent::run(std::move(job)));
}

/**
 * Background jobs of one kind of which the newest alone counts (hotspot's JobTracker): each run() supersedes the
 * jobs before it, whose results are dropped when they come back; cancel() drops what is pending. A member of
 * @p context, which the results are handed to on its thread.
 */
class LatestJob {
public:
    explicit LatestJob(QObject *context) : m_context(context) { }
    template<typename Job, typename Done> void run(Job job, Done done)
    {
        const quint64 asked = ++m_generation;
        ++m_inFlight;
        runInBackground(m_context, std::move(job), [this, asked, done = std::move(done)](auto result) mutable {
            --m_inFlight;
            if (asked == m_generation) // else asked again since
                done(std::move(result));
        });
    }
    void cancel() { ++m_generation; }
    /// Jobs still working, the superseded ones too.
    bool isBusy() const { return m_inFlight > 0; }

private:
    QObject *m_context;
    quint64 m_generation = 0;
    int m_inFlight = 0;
};

} // namespace rpcscope
