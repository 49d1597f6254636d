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

} // namespace rpcscope
