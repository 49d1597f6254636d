#include "runcontroller.h"

#include <algorithm>

namespace rpcscope {

RunController::RunController(QObject *parent) : QObject(parent)
{
    qRegisterMetaType<rpcscope::RunSnapshot>();
    m_timer.setInterval(100);
    connect(&m_timer, &QTimer::timeout, this, &RunController::pull);
}

RunController::~RunController()
{
    // The sessions end (their threads joined) while this object can still take their queued notices.
    m_timer.stop();
    if (m_session)
        m_session->stop();
    m_session.reset();
    m_retired.clear();
}

bool RunController::start(std::shared_ptr<RunSession> session)
{
    if (m_running || !session)
        return false;
    reap();
    if (m_session)
        m_retired.push_back(std::move(m_session));
    m_session = std::move(session);
    m_running = true;
    m_preparing = true;
    m_last = RunSnapshot();
    const RunSession *raw = m_session.get();
    // Emitted on a transport thread; queued to ours, and dropped when it is an earlier session's.
    connect(
        &m_session->load(), &LoadRun::runFinished, this, [this, raw] { engineFinished(raw); }, Qt::QueuedConnection);
    const quint64 number = ++m_sessionNumber;
    if (m_session->spec().profile.any())
        m_session->setProfilesHook([this, number](const RunProfiles &profiles) {
            // Queued to this object, whose destructor joins the sessions first (an event left then is dropped).
            QMetaObject::invokeMethod(
                this, [this, number, profiles] { Q_EMIT profilesRead(number, profiles); }, Qt::QueuedConnection);
        });
    m_session->startInBackground([this, raw](const RunSession::Started &started) {
        QMetaObject::invokeMethod(
            this, [this, raw, started] { sessionStarted(raw, started); }, Qt::QueuedConnection);
    });
    return true;
}

void RunController::sessionStarted(const RunSession *session, const RunSession::Started &started)
{
    if (session != m_session.get() || !m_preparing)
        return;
    m_preparing = false;
    if (started.problem) {
        m_running = false;
        Q_EMIT startFailed(started);
        return;
    }
    m_timer.start();
    Q_EMIT runStarted();
    if (!m_session->load().isRunning())
        engineFinished(session); // a short run ended before its start was told
}

void RunController::stop()
{
    if (m_session)
        m_session->stop();
}

bool RunController::isRunning() const
{
    return m_running;
}

std::vector<RawSample> RunController::rawSamples() const
{
    return m_session ? m_session->load().rawSamples() : std::vector<RawSample>();
}

QString RunController::failure() const
{
    return m_session ? m_session->load().failure() : QString();
}

void RunController::pull()
{
    if (!m_session)
        return;
    m_last = m_session->load().snapshot();
    Q_EMIT snapshotAvailable(m_last);
}

void RunController::engineFinished(const RunSession *session)
{
    if (session != m_session.get() || !m_running || m_preparing || m_session->load().isRunning())
        return; // an earlier session's notice, or one told again (see sessionStarted())
    m_timer.stop();
    m_running = false;
    pull();
    Q_EMIT runFinished(m_last);
}

void RunController::reap()
{
    // RunSession::isDone(): its thread has stopped its servers and ended; destroying it then does not wait.
    m_retired.erase(std::remove_if(m_retired.begin(), m_retired.end(),
                        [](const std::shared_ptr<RunSession> &s) { return s->isDone(); }),
        m_retired.end());
}

} // namespace rpcscope
