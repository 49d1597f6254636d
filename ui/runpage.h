#pragma once

#include "metrics/runsnapshot.h"

#include <QWidget>

class QCustomPlot;
class QCPGraph;
class QCPItemStraightLine;
class QCPItemText;
class QLabel;
class QProgressBar;
class QTableWidget;

namespace rpcscope {

/// The live run view: latency histogram with percentile markers, summary and status tables, progress.
class RunPage : public QWidget
{
    Q_OBJECT
public:
    explicit RunPage(QWidget *parent = nullptr);

    void clear();
    void showSnapshot(const RunSnapshot &snapshot);

    QCustomPlot *histogramPlot() const { return m_plot; }
    QTableWidget *summaryTable() const { return m_summary; }
    QTableWidget *statusTable() const { return m_status; }

private:
    void updateHistogram(const LatencyHistogram &histogram);
    void setRow(int row, const QString &name, const QString &value);

    QCustomPlot *m_plot;
    QCPGraph *m_bars;
    QList<QCPItemStraightLine *> m_markers;
    QList<QCPItemText *> m_markerLabels;
    QTableWidget *m_summary;
    QTableWidget *m_status;
    QProgressBar *m_progress;
    QLabel *m_progressText;
    uint64_t m_plottedCount = UINT64_MAX; // skip replots when nothing changed
};

} // namespace rpcscope
