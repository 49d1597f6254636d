#pragma once

#include "compare/checks.h"

#include "chartrender.h"
#include "metrics/runsnapshot.h"
#include "store/runrecord.h"

#include <QWidget>

#include <array>
#include <memory>
#include <optional>

class QCustomPlot;
class QCPGraph;
class QCPItemText;
class QComboBox;
class QHBoxLayout;
class QLabel;
class QProgressBar;
class QSplitter;
class QTabWidget;
class QTableWidget;

namespace rpcscope {

class ChartHover;
class HistogramMarkers;
class ProfilePanel;
class SpectrumMarkers;

/**
 * The live run view: charts in tabs (latency histogram with percentile markers, percentile spectrum, latency over
 * time, throughput over time), summary and status tables, progress. Only the chart on screen is redrawn per
 * snapshot; the others are drawn from the latest snapshot when their tab is shown. Every chart has a context menu to
 * copy it as an image or save it as PNG, PDF or SVG, drawn afresh in the light file theme (see chartrender.h).
 */
class RunPage : public QWidget {
    Q_OBJECT
public:
    enum Chart { HistogramChart, SpectrumChart, LatencyTimeChart, ThroughputChart, ChartCount };

    explicit RunPage(QWidget *parent = nullptr);
    ~RunPage() override;

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
    /// Streaming runs: whether the histogram and the spectrum show each message's latency or each call's.
    QComboBox *latencyOfCombo() const { return m_latencyOf; }
    QTableWidget *statusTable() const { return m_status; }
    /**
     * A split run (run --segment, merged): each worker's figures in a Workers tab after the charts, a worker that
     * stands out from the rest (outlyingWorkers()) marked; no such tab for other runs and after clear().
     */
    void showWorkers(const SplitRecord &split);
    QTableWidget *workersTable() const { return m_workers; }

    /**
     * The run's CPU profiles (run --profile, --profile-client): a "Server profile" and a "Client profile" tab after
     * the charts, each with its flame graph and functions; no tab for a side not profiled, nor after clear().
     */
    void showProfiles(const std::optional<Profile> &server, const std::optional<Profile> &client);
    /// The profiled sides' tabs say that their profiles are being read (the run ended; perf resolves symbols).
    void showProfilesPending(bool server, bool client);
    ProfilePanel *serverProfilePanel() const { return m_profilePanels[0]; }
    ProfilePanel *clientProfilePanel() const { return m_profilePanels[1]; }

    /// The run's checks as judged at its end (a line under the progress bar, hidden when empty or after clear()).
    void showChecks(const std::vector<CheckResult> &results);
    QLabel *checksLabel() const { return m_checks; }
    /// What failed ("All 3000 calls failed: UNAVAILABLE: ..."); hidden when nothing did.
    QLabel *failuresBanner() const { return m_failures; }

    /// The name files and copies of the charts carry in their titles (the run's name); empty = none.
    void setRunName(const QString &name) { m_runName = name; }
    /// The chart kind of @p chart, for chartrender.
    static ChartKind chartKind(Chart chart);
    /// @p chart of the latest snapshot as an image, as "Copy chart" puts it on the clipboard.
    QImage chartImage(Chart chart) const;
    /// Copies @p chart to the clipboard as an image.
    void copyChart(Chart chart);
    /// Writes @p chart of the latest snapshot to @p path: what "Save chart as..." does once the dialog has a path.
    bool saveChart(Chart chart, ChartFormat format, const QString &path, QString *error = nullptr);

protected:
    void showEvent(QShowEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    struct ChartView {
        QCustomPlot *plot = nullptr;
        ChartHover *hover = nullptr;
        std::optional<size_t> drawnKey; ///< what the chart shows; unset = needs drawing
        bool userRange = false; ///< zoomed or panned by hand: data updates keep the user's ranges
    };

    void setUpChart(Chart chart, QCustomPlot *plot, const QString &tabTitle, Qt::Orientations zoom);
    /// The histogram chart: its calls graph, percentile markers and hover read-out.
    void buildHistogramChart();
    /// The percentile spectrum chart: its corrected graph, markers and hover read-out.
    void buildSpectrumChart();
    /// The latency over time chart: its p50, p90 and p99 graphs and hover read-out.
    void buildLatencyTimeChart();
    /// The throughput chart: its OK and error rate graphs, the layer behind them and hover read-out.
    void buildThroughputChart();
    /// The row above the charts: progress bar, progress text and the per message / per call choice.
    QHBoxLayout *makeProgressRow();
    /// The charts beside the summary and status tables, in splitters that remember their sizes.
    QSplitter *makeTablesSplit();
    /// The page's layout: @p progressRow, the checks line, the failures banner, then @p split.
    void layOutPage(QHBoxLayout *progressRow, QSplitter *split);
    void applyPalette();
    size_t chartKey(Chart chart) const;
    void refreshCurrentChart();
    void updateHistogram(const LatencyHistogram &histogram, bool keepRange);
    void updateSpectrum(bool keepRange);
    void updateLatencyTime(bool keepRange);
    void updateThroughput(bool keepRange);
    void setRow(int row, const QString &name, const QString &value);
    /// True when the histogram and spectrum show the messages of a streaming run.
    bool showsMessages() const;
    /// What the histogram and spectrum are drawn from: the calls, or a streaming run's messages.
    const LatencyHistogram &shownLatency() const;
    void addChartActions(Chart chart, QCustomPlot *plot);
    void saveChartWithDialog(Chart chart, ChartFormat format);

    QTabWidget *m_charts;
    QCustomPlot *m_plot;
    QCPGraph *m_bars;
    std::unique_ptr<HistogramMarkers> m_histogramMarkers;
    QCustomPlot *m_spectrum;
    QCPGraph *m_corrected;
    QCPGraph *m_uncorrected = nullptr; ///< open loop only
    std::unique_ptr<SpectrumMarkers> m_spectrumMarkers;
    QCustomPlot *m_latencyTime;
    std::array<QCPGraph *, 3> m_percentileGraphs {}; ///< p50, p90, p99
    QCustomPlot *m_throughput;
    QCPGraph *m_rate;
    /// On the two time charts: a run shorter than one interval has no time series, said in words (not one dot).
    std::array<QCPItemText *, 2> m_tooShort {};
    void sayWhenTooShort(QCustomPlot *plot, QCPItemText **note);
    /// The banner that names what failed (failureSummary()), hidden when nothing did.
    void showFailures(const RunSnapshot &s);
    QCPGraph *m_errorRate;
    QCPGraph *m_concurrency = nullptr; ///< only when the run reports callers or calls in flight
    std::array<ChartView, ChartCount> m_views;
    QTableWidget *m_summary;
    QTableWidget *m_status;
    QTableWidget *m_workers;
    std::array<ProfilePanel *, 2> m_profilePanels {}; ///< server, client: in a tab while the run has that profile
    /// Shows @p panel (0 server, 1 client) in its tab after the others, or takes its tab away.
    void setProfileTabShown(int panel, bool shown);
    QProgressBar *m_progress;
    QLabel *m_progressText;
    QComboBox *m_latencyOf;
    QLabel *m_checks;
    QLabel *m_failures;
    RunSnapshot m_snapshot; ///< the latest, for charts drawn when their tab is shown
    QString m_runName;
};

} // namespace rpcscope
