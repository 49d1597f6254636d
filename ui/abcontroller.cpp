#include "abcontroller.h"

#include "runrecorder.h"
#include "store/runstore.h"
#include "store/runwriter.h"
#include "util/cpuset.h"
#include "util/units.h"

#include <algorithm>
#include <thread>

namespace rpcscope {

AbController::AbController(RunRecorder *recorder, QObject *parent) : QObject(parent), m_recorder(recorder)
{
    m_timer.setInterval(100);
    connect(&m_timer, &QTimer::timeout, this, &AbController::poll);
}

AbController::~AbController()
{
    // The sessions end (their threads joined, their servers stopped) while this object can still take their notices.
    m_timer.stop();
    if (m_session)
        m_session->stop();
    m_session.reset();
    m_retired.clear();
}

bool AbController::start(std::unique_ptr<AbSession> session, QString *error)
{
    if (m_running) {
        *error = tr("An A/B run is going already.");
        return false;
    }
    reap();
    if (m_session)
        m_retired.push_back(std::move(m_session));
    m_session = std::move(session);
    m_records = {};
    m_started = false;
    m_shownBlocks = 0;
    {
        std::lock_guard lock(m_mutex);
        m_phase = tr("Starting the servers ...");
    }
    m_running = true;
    const AbSession *raw = m_session.get();
    m_session->setStartingHook([this](const QString &what) { // on the session's thread
        std::lock_guard lock(m_mutex);
        m_phase = what;
    });
    m_session->startInBackground([this, raw](const AbSession::Started &started) {
        QMetaObject::invokeMethod(
            this, [this, raw, started] { sessionStarted(raw, started); }, Qt::QueuedConnection);
    });
    m_timer.start();
    return true;
}

void AbController::sessionStarted(const AbSession *session, const AbSession::Started &started)
{
    if (session != m_session.get() || !m_running || m_started)
        return; // an earlier session's notice, or stopAndFinish() took it already
    if (started.problem)
        return ended(started.problem->text());
    m_started = true;
    m_records = m_session->records();
    QString why;
    for (RunRecord &record : m_records) {
        if (m_recorder->store() && !m_recorder->store()->beginRun(&record, &why))
            qWarning("A/B run not saved: %s", qPrintable(why));
    }
    poll();
}

void AbController::stop()
{
    if (m_session)
        m_session->stop();
}

void AbController::stopAndFinish()
{
    if (!m_running)
        return;
    m_session->stop();
    // The window closes: its thread ends the run and stops the servers now, not when a timer would have seen it.
    while (!m_session->isDone())
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (!m_started && m_session->loadStarted())
        sessionStarted(m_session.get(), {}); // its notice is still queued
    ended(m_started ? QString() : tr("Stopped before the run began."));
}

bool AbController::isRunning() const
{
    return m_running;
}

const AbRunner *AbController::runner() const
{
    return m_session && m_started ? &m_session->runner() : nullptr;
}

void AbController::poll()
{
    if (const AbRunner *r = runner()) {
        const int blocks = r->blocksDone();
        if (blocks != m_shownBlocks) {
            m_shownBlocks = blocks;
            for (int side = 0; side < 2; ++side) {
                if (m_records[static_cast<size_t>(side)].id > 0) // inserted: the history is open
                    m_recorder->writer()->update(m_records[static_cast<size_t>(side)].id, r->snapshot(side));
            }
        }
        if (m_session->runEnded()) // the blocks ended, this process unpinned; its servers may still be stopping
            return ended(r->error());
    }
    Q_EMIT progressed();
}

void AbController::ended(const QString &error)
{
    if (!m_running)
        return;
    m_timer.stop();
    m_running = false;
    if (m_started) {
        m_session->completeRecords(&m_records);
        for (const RunRecord &r : m_records) {
            if (r.id <= 0)
                continue;
            m_recorder->writer()->finish(r.id, r.snapshot, r.rawSamples, r.status);
            if (r.serverProfile || r.clientProfile)
                m_recorder->writer()->saveProfiles(r.id, r.serverProfile, r.clientProfile);
        }
    }
    Q_EMIT progressed();
    Q_EMIT finished(error);
}

void AbController::reap()
{
    // AbSession::isDone(): its thread has stopped its servers and ended; destroying it then does not wait.
    m_retired.erase(std::remove_if(m_retired.begin(), m_retired.end(),
                        [](const std::unique_ptr<AbSession> &s) { return s->isDone(); }),
        m_retired.end());
}

RunSnapshot AbController::snapshot(int side) const
{
    const AbRunner *r = runner();
    return r ? r->snapshot(side) : RunSnapshot();
}

std::array<RunRecord, 2> AbController::liveRecords() const
{
    std::array<RunRecord, 2> live = m_records;
    for (int side = 0; side < 2; ++side)
        live[static_cast<size_t>(side)].snapshot = snapshot(side);
    return live;
}

int AbController::blocksDone() const
{
    const AbRunner *r = runner();
    return r ? r->blocksDone() : 0;
}

SequentialAb AbController::sequential() const
{
    const AbRunner *r = runner();
    return r ? r->sequential() : SequentialAb(0, 0.05);
}

bool AbController::untilDecided() const
{
    return m_session && m_session->blocks().untilDecided;
}

QString AbController::sequentialText() const
{
    const AbRunner *r = runner();
    if (!r)
        return {};
    const SequentialAb s = r->sequential();
    if (s.blockPairs() == 0) // with processes a side, the pairs of blocks show before a pair of processes is judged
        return {};
    if (m_running || s.decided())
        return s.statusLine();
    return s.verdictLine(r->endedByText(tr("the planned run")));
}

QString AbController::progressText() const
{
    const AbRunner *r = runner();
    if (!r) {
        std::lock_guard lock(m_mutex);
        return m_phase;
    }
    const std::vector<AbBlockResult> blocks = r->completedBlocks();
    // The round running: the last block's, unless that block ended it (each round runs A and B, in either order).
    const bool roundDone = blocks.size() >= 2 && blocks[blocks.size() - 2].round == blocks.back().round;
    const int round = blocks.empty() ? 1 : blocks.back().round + (roundDone ? 1 : 0);
    QString text = tr("Round %1 of %2").arg(std::min(round, r->roundsPlanned())).arg(r->roundsPlanned());
    for (int side = 0; side < 2; ++side) {
        const RunSnapshot s = r->snapshot(side);
        text += QStringLiteral(", %1 p50 %2")
                    .arg(QChar(side == 0 ? u'A' : u'B'))
                    .arg(formatNanos(static_cast<double>(s.latency.percentile(50))));
    }
    if (!m_session->clientCpus().empty())
        text += tr("; rpcscope on CPU %1").arg(formatCpuList(m_session->clientCpus()));
    if (!m_session->serverCpus().empty())
        text += tr(", the servers on %1").arg(formatCpuList(m_session->serverCpus()));
    return text;
}

double AbController::progress() const
{
    const AbRunner *r = runner();
    if (!r)
        return -1;
    const double planned = std::max(1, r->roundsPlanned()) * 2.0;
    return std::min(1.0, r->blocksDone() / planned);
}

} // namespace rpcscope
