#pragma once

#include "matrixcharts.h"
#include "matrixcontroller.h"
#include "report/matrixreport.h"
#include "scenariopage.h"

#include <QWidget>

#include <functional>
#include <memory>
#include <optional>

class QCheckBox;
class QComboBox;
class QCustomPlot;
class QFormLayout;
class QHBoxLayout;
class QLabel;
class QLineEdit;
class QPushButton;
class QTableWidget;

namespace rpcscope {

class RunSession;
struct RunRecord;

/**
 * "Compare stacks": the scenario's method run over the user's stacks (each its own transport, codec, target and
 * method name; `rpcscope-cli matrix --stack`) or, with none listed, transports x codecs against the built-in
 * servers, x payloads x caller counts, one cell after the other, with a grouped bar chart (a group per payload, a
 * bar per stack), latency-vs-size curves when the payloads are a size sweep, and the table `rpcscope-cli matrix`
 * prints. Cells run on the engine's threads; the page only collects each cell's final snapshot. The stacks are kept
 * in the settings.
 */
class MatrixPage : public QWidget {
    Q_OBJECT
public:
    /// Makes a cell's run from the scenario (not started); null with the reason.
    using Preparer = MatrixController::Preparer;

    explicit MatrixPage(Preparer preparer, QWidget *parent = nullptr);

    void start();
    void stop();
    bool isRunning() const;
    const QList<MatrixResult> &results() const { return m_runner->results(); }
    QCustomPlot *barChart() const { return m_bars; }
    QCustomPlot *sizeChart() const { return m_curves; }
    QTableWidget *table() const { return m_table; }
    /// The stacks table's rows (replacing any), as `--stack` specs are read; saved in the settings.
    void setStacks(const QList<MatrixStack> &stacks);
    /// The chart drawn afresh for a file (a slide's size; PNG at twice the pixels), as `matrix -O` writes it.
    bool saveChart(MatrixChart chart, ChartFormat format, const QString &path, QString *error) const;
    /// The whole comparison as one HTML page (bars, curves, every cell) or, for a .csv path, the table.
    bool saveReport(const QString &path, QString *error) const;
    /// The stacks table read, or std::nullopt with @p error naming the row.
    std::optional<QList<MatrixStack>> stacks(QString *error) const;

Q_SIGNALS:
    void finished();
    /// A cell ran to its end; @p record is its session's record as it started: the document that ran (named and
    /// labelled as a cell of this matrix: labelMatrixCell()), where, the server.
    void cellDone(const MatrixResult &result, const rpcscope::RunRecord &record);

public:
    /// The tooltip of the bar at @p pos in the bar chart (matrixBarTip()), or empty.
    QString barTipAt(const QPoint &pos) const;

private:
    /// The transport and codec check boxes, a row each in @p chooseTransports and @p chooseCodecs.
    void addChoiceBoxes(QHBoxLayout *chooseTransports, QHBoxLayout *chooseCodecs);
    /// Names the payloads, metric, Run, Stop and progress fields (Stop disabled).
    void setUpControls();
    /// The stacks table beside its Add stack and Remove buttons (set in @p add and @p remove).
    QHBoxLayout *makeStacksRow(QPushButton **add, QPushButton **remove);
    /// The form above the charts: transports, codecs, stacks, payloads, callers and their row, the progress row.
    QFormLayout *makeForm(
        QHBoxLayout *chooseTransports, QHBoxLayout *chooseCodecs, QHBoxLayout *stacksRow, QHBoxLayout **progress);
    /// The bar and size charts: legends below them, vertical zoom, the curves' log axis, context menus, bar tips.
    void setUpCharts();
    /// The Save report... button, which saves the comparison as an HTML page or a CSV table.
    QPushButton *makeSaveReportButton();
    /// The results table's columns.
    void setUpTable();
    /// The page's layout: @p form over the charts and the table in a splitter.
    void layOutPage(QFormLayout *form);
    /// Connects Run, Stop, the metric, the controller's results and the stacks table's buttons and edits.
    void connectSignals(QPushButton *addStack, QPushButton *removeStack);
    void redraw();
    void addStackRow(const MatrixStack &stack);
    /// Row @p row of the stacks table as a `--stack` spec.
    QString rowSpec(int row) const;
    void addChartActions(QCustomPlot *plot, MatrixChart chart);
    MatrixMetric currentMetric() const;
    void saveStacks() const;

    MatrixController *m_runner; ///< runs the cells; the page draws what they measured

    QList<QCheckBox *> m_transports;
    QList<QCheckBox *> m_codecs;
    QTableWidget *m_stackTable;
    QLineEdit *m_callers;
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
