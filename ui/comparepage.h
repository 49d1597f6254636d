#pragma once

#include "backgroundjob.h"
#include "compare/comparison.h"
#include "compare/sequential.h"
#include "store/runrecord.h"

#include <QList>
#include <QWidget>

#include <array>

class QComboBox;
class QCustomPlot;
class QDoubleSpinBox;
class QLabel;
class QSplitter;
class QTabWidget;
class QTableWidget;

namespace rpcscope {

class ProfilePanel;
class ReplicateChart;

/**
 * Runs side by side: the histograms, percentile spectra and time series of 2..N runs overlaid (each run its own
 * colour), the delta table of a candidate run against the baseline with an interval and the minimum detectable
 * change per latency, the verdict ("regression: p50 +19.1% (95% CI ...)") with what it rests on, and beside the
 * overlays the spread of the replicates (blocks, server processes or runs) the verdict compares. The regression
 * threshold is a setting, kept across sessions.
 */
class ComparePage : public QWidget {
    Q_OBJECT
public:
    explicit ComparePage(QWidget *parent = nullptr);

    /// The first run is the baseline and the second the candidate until the user picks others.
    void setRuns(const QList<RunRecord> &runs);
    const QList<RunRecord> &runs() const { return m_runs; }
    const RunRecord *baseline() const;
    const RunRecord *candidate() const;
    /// The comparison shown; while it is being computed (off this thread), waits for it.
    const Comparison &comparison();
    /// A comparison is being computed; comparisonChanged() follows when it is shown.
    bool isComparing() const { return m_comparisons.isPending(); }
    void setThreshold(double fraction);
    double threshold() const;
    /// The verdict line (waits for a comparison being computed, as comparison() does).
    QString verdictText();
    /// The delta table (waits for a comparison being computed, as comparison() does).
    QTableWidget *table();
    QCustomPlot *plot(int index) const;
    /// The dots of each replicate of the baseline and the candidate (objectName "replicateChart").
    ReplicateChart *replicateChart() const { return m_spread; }
    /// What the verdict rests on (Comparison::basis()), under the verdict.
    QString basisText() const;
    /// "What differs: ..." (runDifferences()) under the table, or empty.
    QString differencesText() const;

    /**
     * An A/B run going on, judged pair by pair: @p line (SequentialAb::statusLine()) is the headline while it runs,
     * and the fixed-sample verdict is hidden meanwhile (looked at again and again it would inflate false verdicts).
     * An empty @p line ends the live mode; then a pair of saved A/B runs that was judged until decided shows the
     * sequential verdict judged again from its blocks (SequentialAb::fromBlocks), above the fixed-sample one.
     */
    void setLiveSequentialVerdict(const QString &line, SequentialDecision decision);
    /// The sequential verdict shown (live or judged again), or empty.
    QString sequentialText() const;

    /// The overlay chart shown (0 histogram .. 3 throughput, as ChartKind); the histogram while a profile tab is.
    int currentChart() const;
    /**
     * B's CPU profile against A's, when both runs have one (run or ab with --profile, --profile-client): a "Server
     * profile" and a "Client profile" tab after the overlays, with the differential flame graph and the functions
     * that changed. No tab when either run lacks that profile.
     */
    ProfilePanel *serverProfilePanel() const { return m_profilePanels[0]; }
    ProfilePanel *clientProfilePanel() const { return m_profilePanels[1]; }

    /// The colour of run @p index in every chart (the baseline first).
    static QColor runColor(int index);

Q_SIGNALS:
    void comparisonChanged();

protected:
    void changeEvent(QEvent *event) override;

private:
    /// Starts computing the comparison of the picked runs on the thread pool (a bootstrap over many calls takes
    /// from a tenth of a second to seconds: never on the GUI thread); showComparison() takes the result.
    void recompute();
    /// Shows @p comparison, the newest computation's result.
    void showComparison(Comparison comparison);
    /// Waits for a computation in flight and shows it.
    void settle();
    void redraw();
    QCustomPlot *addChart(const QString &title);
    /// The profile panels, out of any tab until a pair with profiles is shown.
    void setUpProfilePanels();
    /// The profile tabs for the baseline and the candidate shown (see serverProfilePanel()).
    void updateProfiles();

    QList<RunRecord> m_runs;
    Comparison m_comparison;
    LatestJob m_comparisons { this }; ///< the newest computation alone is shown
    QComboBox *m_baseline = nullptr;
    QComboBox *m_candidate = nullptr;
    QDoubleSpinBox *m_threshold = nullptr;
    /// Shows @p line as the sequential verdict (empty: hidden), coloured by @p decision.
    void showSequential(const QString &line, SequentialDecision decision);

    QLabel *m_sequential = nullptr;
    bool m_live = false; ///< an A/B run is going: its sequential verdict is set from outside
    QLabel *m_verdict = nullptr;
    QLabel *m_basis = nullptr;
    QLabel *m_differences = nullptr;
    QLabel *m_empty = nullptr;
    QTableWidget *m_table = nullptr;
    QSplitter *m_body = nullptr; ///< the charts above, the table below
    QWidget *m_bottom = nullptr; ///< the table and what differs, under the charts; hidden while a profile is shown
    QSplitter *m_top = nullptr; ///< the overlays, and the replicates beside them
    bool m_spreadHasDots = true; ///< the layout is the one for a chart of dots (rather than for its note)
    QTabWidget *m_charts = nullptr;
    ReplicateChart *m_spread = nullptr;
    QList<QCustomPlot *> m_plots;
    std::array<ProfilePanel *, 2> m_profilePanels {}; ///< server, client: in a tab while both runs have that profile
};

} // namespace rpcscope
