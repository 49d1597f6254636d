#include "runcontroller.h"

namespace rpcscope {

RunController::RunController(QObject *parent) : QObject(parent)
{
    qRegisterMetaType<rpcscope::RunSnapshot>();
    m_timer.setInterval(100);
    connect(&m_timer, &QTimer::timeout, this, &RunController::pull);
    // Emitted on a gRPC thread; queued to ours.
    connect(&m_engine, &LoadEngine::runFinished, this, &RunController::engineFinished, Qt::QueuedConnection);
}

bool RunController::start(const TransportOptions &transport, const GrpcTarget &target, const GrpcCall &call,
    const LoadPlan &plan, QString *error)
{
    if (m_running) {
        if (error)
            *error = QStringLiteral("a run is going; stop it first");
        return false;
    }
    std::unique_ptr<Transport> made = makeTransport(transport, target, call, error);
    if (!made || !m_engine.start(std::move(made), plan, error))
        return false;
    m_generation = m_engine.generation();
    m_running = true;
    m_last = RunSnapshot();
    m_timer.start();
    Q_EMIT runStarted();
    return true;
}

void RunController::stop()
{
    m_engine.stop();
}

bool RunController::isRunning() const
{
    return m_running;
}

void RunController::pull()
{
    RunSnapshot snapshot = m_engine.snapshot();
    if (snapshot.generation != m_generation)
        return; // a stale run's data
    m_last = std::move(snapshot);
    Q_EMIT snapshotAvailable(m_last);
}

void RunController::engineFinished()
{
    if (!m_running || m_engine.isRunning())
        return; // a queued notice from a run that is already replaced
    m_timer.stop();
    m_running = false;
    pull();
    Q_EMIT runFinished(m_last);
}

} // namespace rpcscope
