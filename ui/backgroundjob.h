#pragma once
// The ui's one idiom for background work: a job on Qt's thread pool (QtConcurrent::run), its result handed back
// on the GUI thread by a QFutureWatcher. No polling for completion, no thread per job.

#include <QFutureWatcher>
#include <QObject>
#include <QtConcurrent/QtConcurrentRun>

#include <functional>
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
 * jobs before it, whose results are dropped when they come back; cancel() drops what is pending; waitForNewest()
 * hands the newest result over now, for a caller that must have it (an export, a test). A member of @p context,
 * which the results are handed to on its thread.
 */
class LatestJob {
public:
    explicit LatestJob(QObject *context) : m_context(context) { }
    template<typename Job, typename Done> void run(Job job, Done done)
    {
        using Result = std::invoke_result_t<Job>;
        const quint64 asked = ++m_generation;
        ++m_inFlight;
        QFuture<Result> future = QtConcurrent::run(std::move(job));
        // The newest job's result, handed over once: by its watcher, or before that by waitForNewest().
        m_handOver = [future, done = std::move(done)]() mutable { done(future.takeResult()); };
        auto *watcher = new QFutureWatcher<Result>(m_context);
        QObject::connect(watcher, &QFutureWatcherBase::finished, m_context, [this, watcher, asked] {
            watcher->deleteLater();
            --m_inFlight;
            if (asked == m_generation) // else asked again since (or cancelled)
                handOver();
        });
        watcher->setFuture(future);
    }
    void cancel()
    {
        ++m_generation;
        m_handOver = nullptr;
    }
    /// Waits for the newest job, when its result has not been handed over yet, and hands it over now.
    void waitForNewest() { handOver(); }
    /// The newest job's result is still to come.
    bool isPending() const { return bool(m_handOver); }
    /// Jobs still working, the superseded ones too.
    bool isBusy() const { return m_inFlight > 0; }

private:
    void handOver()
    {
        if (auto handOver = std::exchange(m_handOver, nullptr))
            handOver();
    }

    QObject *m_context;
    quint64 m_generation = 0;
    int m_inFlight = 0;
    std::function<void()> m_handOver; ///< set while the newest job's result is still to be handed over
};

} // namespace rpcscope
