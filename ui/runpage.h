#pragma once

#include "metrics/runsnapshot.h"

#include <QWidget>

#include <array>
#include <optional>

class QCustomPlot;
class QCPGraph;
class QCPItemStraightLine;
class QCPItemText;
class QCPItemTracer;
class QLabel;
class QProgressBar;
class QTabWidget;
class QTableWidget;

namespace rpcscope {

class ChartHover;

/**
 * The live run view: charts in tabs (latency histogram with percentile markers, percentile spectrum, latency over
 * time, throughput over time), summary and status tables, progress. Only the chart on screen is redrawn per
 * snapshot; the others are drawn from the latest snapshot when their tab is shown.
 */
class RunPage : public QWidget
{
    Q_OBJECT
public:
    enum Chart { HistogramChart, SpectrumChart, LatencyTimeChart, ThroughputChart, ChartCount };

    explicit RunPage(QWidget *parent = nullptr);

    void clear();
    void showSnapshot(const RunSnapshot &snapshot);

    QCustomPlot *histogramPlot() const { return m_plot; }
    QCustomPlot *spectrumPlot() const { return m_spectrum; }
    QCustomPlot *latencyTimePlot() const { return m_latencyTime; }
    QCustomPlot *throughputTimePlot() const { return m_throughput; }
    QCustomPlot *chartPlot(Chart chart) const { return m_views[chart].plot; }
    /// The hover read-out of @p chart.
    ChartHover *chartHover(Chart chart) const { return m_views[chart].hover; }
    QTabWidget *chartTabs() const { return m_charts; }
    QTableWidget *summaryTable() const { return m_summary; }
    QTableWidget *statusTable() const { return m_status; }

protected:
    void showEvent(QShowEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    struct ChartView
    {
        QCustomPlot *plot = nullptr;
        ChartHover *hover = nullptr;
        std::optional<size_t> drawnKey; ///< what the chart shows; unset = needs drawing
        bool userRange = false; ///< zoomed or panned by hand: data updates keep the user's ranges
    };

    void setUpChart(Chart chart, QCustomPlot *plot, const QString &tabTitle, Qt::Orientations zoom);
    void applyPalette();
    size_t chartKey(Chart chart) const;
    void refreshCurrentChart();
    void updateHistogram(const LatencyHistogram &histogram, bool keepRange);
    void updateSpectrum(bool keepRange);
    void updateLatencyTime(bool keepRange);
    void updateThroughput(bool keepRange);
    void setRow(int row, const QString &name, const QString &value);

    QTabWidget *m_charts;
    QCustomPlot *m_plot;
    QCPGraph *m_bars;
    QList<QCPItemStraightLine *> m_markers;
    QList<QCPItemText *> m_markerLabels;
    QCustomPlot *m_spectrum;
    QCPGraph *m_corrected;
    QCPGraph *m_uncorrected = nullptr; ///< open loop only
    QList<QCPItemTracer *> m_spectrumMarkers;
    QCustomPlot *m_latencyTime;
    std::array<QCPGraph *, 3> m_percentileGraphs{}; ///< p50, p90, p99
    QCustomPlot *m_throughput;
    QCPGraph *m_rate;
    QCPGraph *m_errorRate;
    QCPGraph *m_concurrency = nullptr; ///< only when the run reports callers or calls in flight
    std::array<ChartView, ChartCount> m_views;
    QTableWidget *m_summary;
    QTableWidget *m_status;
    QProgressBar *m_progress;
    QLabel *m_progressText;
    RunSnapshot m_snapshot; ///< the latest, for charts drawn when their tab is shown
};

} // namespace rpcscope
