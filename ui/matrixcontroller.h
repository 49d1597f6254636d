#pragma once

#include "report/matrixreport.h"
#include "scenariopage.h"
#include "store/runrecord.h"

#include <QObject>

#include <functional>
#include <memory>

namespace rpcscope {

class RunController;
class RunSession;

/**
 * Runs a matrix's cells one after the other, each a RunSession the preparer makes from the scenario (the session
 * starts a stack's server command off the GUI thread and stops it when the cell ends): what the stack comparison
 * page starts, stops and draws. A cell that cannot be started is a failed cell, and the next one runs.
 */
class MatrixController : public QObject {
    Q_OBJECT
public:
    /// Makes a cell's run from the scenario (not started); null with the reason.
    using Preparer = std::function<std::shared_ptr<RunSession>(const ScenarioPage::Variation &, QString *)>;

    explicit MatrixController(Preparer preparer, QObject *parent = nullptr);

    /**
     * Checks that every cell can be prepared (a bad payload is reported now, not half-way), then runs them. False
     * with @p error naming the first cell that cannot run, or when a matrix is running.
     */
    bool start(const QList<MatrixCell> &cells, QString *error);
    /// No further cell; the one running keeps what it measured (one still starting ends as not started).
    void stop();
    bool isRunning() const { return m_running; }

    /// The cells, with the callers each ran with and whether rpcscope's own server served it, once it started.
    const QList<MatrixCell> &cells() const { return m_cells; }
    /// One per cell ended (ran, or failed to start), in the cells' order.
    const QList<MatrixResult> &results() const { return m_results; }
    /// "package.Service/Method" of the cells run, for a report's title.
    const QString &method() const { return m_method; }

Q_SIGNALS:
    /// "Running 2 of 6: nums=2 mine…", "Starting the server of cmd: …"
    void progressed(const QString &text);
    /// A cell ended (results() has one more).
    void cellEnded();
    /// A cell ran to its end; @p record is its session's record as it started: the document that ran (named and
    /// labelled as a cell of this matrix: labelMatrixCell()), where, the server.
    void cellDone(const rpcscope::MatrixResult &result, const rpcscope::RunRecord &record);
    /// Every cell ended (or the matrix was stopped); @p summary says how many, and how many failed.
    void finished(const QString &summary);

private:
    void runNext();
    void cellFailed(const QString &why);
    void cellFinished(const RunSnapshot &snapshot);

    Preparer m_preparer;
    RunController *m_controller;
    QList<MatrixCell> m_cells;
    QList<MatrixResult> m_results;
    qsizetype m_next = 0; ///< the cell running, or the next to run
    bool m_stopping = false; ///< stop() was asked: no further cell
    QString m_method;
    QString m_matrixId; ///< this matrix's cells share it in the history (label matrix:ID)
    bool m_running = false;
};

} // namespace rpcscope
