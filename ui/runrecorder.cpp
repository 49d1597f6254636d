#include "runrecorder.h"

#include "store/runstore.h"
#include "store/runwriter.h"

#include <QDateTime>

namespace rpcscope {

RunRecorder::RunRecorder(QObject *parent) : QObject(parent) { }

RunRecorder::~RunRecorder() = default; // the writer's destructor drains its queue

bool RunRecorder::open(const QString &path, QString *error)
{
    auto store = std::make_unique<RunStore>();
    if (!store->open(path, error))
        return false;
    auto writer = std::make_unique<RunWriter>();
    // Without the writer a run would be inserted and never finished: no history rather than a half one.
    if (!writer->open(path, error))
        return false;
    connect(writer.get(), &RunWriter::failed, this, [this](qint64, const QString &why) { Q_EMIT failed(why); });
    connect(writer.get(), &RunWriter::finished, this, &RunRecorder::runStored);
    m_store = std::move(store);
    m_writer = std::move(writer);
    return true;
}

bool RunRecorder::begin(RunRecord *run, QString *error)
{
    if (!m_store) {
        *error = tr("the run history is not open");
        return false;
    }
    m_lastProgress = m_clock(); // the first progress is written a second in
    return m_store->beginRun(run, error);
}

bool RunRecorder::recording(const RunRecord *run) const
{
    return m_writer && run && run->id > 0 && run->status == QString::fromUtf16(RunStatus::Running);
}

void RunRecorder::progress(RunRecord *run, const RunSnapshot &snapshot)
{
    if (!recording(run))
        return;
    const std::chrono::steady_clock::time_point now = m_clock();
    if (m_lastProgress && now - *m_lastProgress < std::chrono::seconds(1))
        return;
    m_lastProgress = now;
    run->snapshot = snapshot;
    m_writer->update(run->id, snapshot);
}

void RunRecorder::finish(RunRecord *run, const RunSnapshot &snapshot, std::vector<RawSample> rawSamples)
{
    if (!recording(run))
        return;
    run->snapshot = snapshot;
    run->status = snapshot.state == RunState::Stopped ? QString::fromUtf16(RunStatus::Stopped)
                                                      : QString::fromUtf16(RunStatus::Finished);
    run->endedAt = QDateTime::currentDateTimeUtc();
    run->rawSamples = std::move(rawSamples);
    m_writer->finish(run->id, snapshot, run->rawSamples, run->status);
}

void RunRecorder::discard(RunRecord *run)
{
    if (!recording(run))
        return;
    m_writer->discard(run->id);
    run->id = 0;
}

bool RunRecorder::flush(std::chrono::milliseconds timeout)
{
    return !m_writer || m_writer->flush(timeout);
}

} // namespace rpcscope
