#include "matrixcontroller.h"

#include "runcontroller.h"
#include "session/runsession.h"

#include <google/protobuf/descriptor.h>

#include <QDateTime>
#include <QTimer>

#include <algorithm>

namespace rpcscope {

MatrixController::MatrixController(Preparer preparer, QObject *parent)
    : QObject(parent), m_preparer(std::move(preparer)), m_controller(new RunController(this))
{
    connect(m_controller, &RunController::runFinished, this, &MatrixController::cellFinished);
    connect(m_controller, &RunController::startFailed, this, [this](const RunSession::Started &started) {
        cellFailed(started.serverError.isEmpty() ? started.problem->message
                                                 : tr("Server command: %1").arg(started.serverError));
    });
}

bool MatrixController::start(const QList<MatrixCell> &cells, QString *error)
{
    if (m_running) {
        *error = tr("The stack comparison is running.");
        return false;
    }
    // Every cell must be runnable before the first starts: a bad payload is reported now, not half-way.
    QString why;
    for (const MatrixCell &cell : cells) {
        if (!m_preparer({ cell, QString() }, &why)) {
            *error = tr("%1 %2: %3").arg(cell.payload, cell.label(), why);
            return false;
        }
    }
    m_cells = cells;
    m_results.clear();
    m_matrixId = QDateTime::currentDateTimeUtc().toString(QStringLiteral("yyyyMMdd-HHmmss"));
    m_next = 0;
    m_stopping = false;
    m_running = true;
    runNext();
    return true;
}

void MatrixController::stop()
{
    if (!m_running)
        return;
    m_stopping = true; // no further cell; the one running keeps what it measured
    m_controller->stop(); // a cell still starting (its server command getting ready) ends as not started
}

void MatrixController::runNext()
{
    if (m_next >= m_cells.size() || m_stopping) {
        m_running = false;
        const auto failed = std::count_if(
            m_results.begin(), m_results.end(), [](const MatrixResult &r) { return r.run.latency.count() == 0; });
        const int done = static_cast<int>(m_results.size());
        Q_EMIT finished(failed
                ? tr("%n cell(s) done, %1 FAILED (no call ended OK: see the table).", nullptr, done).arg(failed)
                : tr("%n cell(s) done.", nullptr, done));
        return;
    }
    const MatrixCell cell = m_cells.at(m_next); // a copy: the cell is updated below
    QString why;
    std::shared_ptr<RunSession> session = m_preparer({ cell, m_matrixId }, &why);
    if (!session) {
        cellFailed(why);
        return;
    }
    const RunSpec &spec = session->spec();
    m_cells[m_next].concurrency = static_cast<int>(spec.plan.concurrency); // the callers it ran with, for the table
    if (const auto &call = session->call(); call && call->method)
        m_method = QString::fromStdString(call->method->service()->full_name()) + u'/'
            + QString::fromStdString(call->method->name());
    // rpcscope's own server uses the baseline's codecs: only then is a codec share known
    m_cells[m_next].ownServer = spec.server == RunServer::Builtin;
    // A stack whose target is a server command: the session starts it off the GUI thread for this cell and stops it
    // when the cell ends.
    Q_EMIT progressed(spec.server == RunServer::Command
            ? tr("Starting the server of %1: %2…").arg(cell.label(), spec.command.command)
            : tr("Running %1 of %2: %3 %4…")
                  .arg(m_next + 1)
                  .arg(m_cells.size())
                  .arg(cell.payload.isEmpty() ? QString() : cell.payload, cell.label()));
    if (!m_controller->start(std::move(session)))
        cellFailed(tr("a run is going"));
}

void MatrixController::cellFailed(const QString &why)
{
    // This stack could not be started (its address does not resolve, its server did not start): a failed cell, and
    // on to the next.
    m_results.append({ m_cells.at(m_next), RunSnapshot(), why });
    ++m_next;
    Q_EMIT cellEnded();
    QTimer::singleShot(0, this, &MatrixController::runNext); // not recursively: every cell could fail this way
}

void MatrixController::cellFinished(const RunSnapshot &snapshot)
{
    if (!m_running)
        return;
    m_results.append({ m_cells.at(m_next), snapshot, QString() });
    Q_EMIT cellDone(m_results.last(), m_controller->session()->record());
    ++m_next;
    Q_EMIT cellEnded();
    runNext();
}

} // namespace rpcscope
