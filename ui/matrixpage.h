#pragma once

#include "report/matrixreport.h"
#include "scenariopage.h"

#include <QWidget>

#include <functional>
#include <optional>

class QCheckBox;
class QComboBox;
class QCustomPlot;
class QLabel;
class QLineEdit;
class QPushButton;
class QTableWidget;

namespace rpcscope {

class RunController;

/**
 * "Compare stacks": the scenario's method run over transports x codecs x payloads, one cell after the other, with
 * a grouped bar chart (a group per payload, a bar per transport/codec), latency-vs-size curves when the payloads
 * are a size sweep, and the table `rpcscope-cli matrix` prints. Cells run on the engine's threads; the page only
 * collects each cell's final snapshot.
 */
class MatrixPage : public QWidget {
    Q_OBJECT
public:
    /// Makes a cell's run from the scenario; std::nullopt with the reason.
    using Preparer = std::function<std::optional<ScenarioPage::Prepared>(const ScenarioPage::Variation &, QString *)>;

    explicit MatrixPage(Preparer preparer, QWidget *parent = nullptr);

    void start();
    void stop();
    bool isRunning() const;
    const QList<MatrixResult> &results() const { return m_results; }
    QCustomPlot *barChart() const { return m_bars; }
    QCustomPlot *sizeChart() const { return m_curves; }
    QTableWidget *table() const { return m_table; }

Q_SIGNALS:
    void finished();

private:
    void runNext();
    void cellFinished(const RunSnapshot &snapshot);
    void redraw();
    double metric(const MatrixResult &result) const;
    bool metricIsLatency() const;

    Preparer m_preparer;
    RunController *m_controller;
    QList<MatrixCell> m_cells;
    QList<MatrixResult> m_results;
    qsizetype m_next = 0;
    bool m_running = false;

    QList<QCheckBox *> m_transports;
    QList<QCheckBox *> m_codecs;
    QLineEdit *m_payloads;
    QComboBox *m_metric;
    QPushButton *m_run;
    QPushButton *m_stop;
    QLabel *m_progress;
    QCustomPlot *m_bars;
    QCustomPlot *m_curves;
    QTableWidget *m_table;
};

} // namespace rpcscope
