#pragma once

#include "backgroundjob.h"

#include "session/runsession.h"
#include "store/runrecord.h"
#include "store/runstore.h"

#include <QList>
#include <QObject>

#include <array>
#include <functional>
#include <memory>
#include <vector>

class QWidget;

namespace rpcscope {

class AbController;
class ComparePage;
class HistoryPage;
class RunController;
class RunPage;
class RunRecorder;

/**
 * The runs the results pages show: the run on the Run page (the live one, or one opened from the history), the
 * runs on the Compare runs page (picked in the history, the current run against an earlier one of its method, or an
 * A/B run's two sides), exports of the shown run or comparison, and reports imported into the history.
 */
class ResultsController : public QObject {
    Q_OBJECT
public:
    /// @p live is the live run's controller (its last snapshot is exported while the run's record has none);
    /// @p dialogParent parents the dialogs.
    ResultsController(RunRecorder *recorder, RunController *live, RunPage *runPage, HistoryPage *history,
        ComparePage *compare, QWidget *dialogParent);

    /// The run the Run page shows (the last one run here or one opened from the history), if any.
    const RunRecord *currentRun() const { return m_current.get(); }
    /// Shows the run that just started on the Run page; @p description names its method and target.
    void showLiveRun(const std::shared_ptr<rpcscope::RunRecord> &run, const QString &description);
    /// @p run's profiles are read (@p shown: RunLauncher::runProfilesRead()): on the Run page while it shows @p run.
    void showRunProfiles(const std::shared_ptr<rpcscope::RunRecord> &run, const rpcscope::RunProfiles &shown);
    /**
     * Shows stored run @p id on the Run page once it is read (off the GUI thread; isLoading() meanwhile); false
     * when there is no history or a run is going. A run that cannot be read is told in the status bar.
     */
    bool openRun(qint64 id);
    /// Shows the stored runs @p ids (the first is the baseline) on the Compare runs page once read, as openRun().
    bool compareRuns(const QList<qint64> &ids);
    /// Stored runs are being read for openRun() or compareRuns().
    bool isLoading() const { return m_openJobs.isBusy() || m_compareJobs.isBusy(); }
    /// Stored runs of the current run's method, newest first, the current run left out: baselines to compare with.
    std::vector<RunListEntry> baselineCandidates() const;
    /// Compares the current run (as candidate) with stored run @p baselineId, on the Compare runs page.
    bool compareCurrentWith(qint64 baselineId);
    /// An A/B run starts: the Compare runs page is cleared and shown, its headline saying it has started.
    void beginAb();
    /**
     * An A/B run going on: after each block its two sides on the Compare runs page (brought up with the first
     * block), the histograms and per-block dots growing, the sequential verdict as the headline.
     */
    void showAbLive(const AbController &ab);
    /// Shows an ended A/B run's two sides on the Compare runs page (when @p measured), and its verdict once computed.
    void showAbRuns(const std::array<RunRecord, 2> &records, bool measured, const QString &error);
    /// Writes the current run (or, with @p comparison, the compared runs) to @p path in the format its suffix
    /// (or @p format: a name exportFormatNames() knows, or html/png/pdf/svg) says.
    bool exportTo(const QString &path, const QString &format, bool comparison, QString *error);
    /**
     * Imports ghz or rpcscope JSON reports into the history off the GUI thread (isImporting() meanwhile), then
     * refreshes the History and emits reportsImported(). False, and nothing started, without a history or while
     * another import runs.
     */
    bool importReports(const QStringList &files);
    bool isImporting() const { return m_importing; }

    // What the menus' actions do: a dialog, then the above.
    void exportRunWithDialog() { exportWithDialog(false); }
    void exportComparisonWithDialog() { exportWithDialog(true); }
    void importWithDialog();
    /// A folder of reports, e.g. the segments of a split run: they are merged, and the merged run is shown.
    void importFolderWithDialog();
    /// The runs the last import merged from segments (their history ids).
    QList<qint64> lastMergedRuns() const { return m_lastMerged; }
    void compareWithDialog();

Q_SIGNALS:
    /// A results page (the Run page, History, Compare runs) should be brought to the front.
    void pageRequested(QWidget *page);
    /// What the Run page shows now, for the status bar.
    void runDescribed(const QString &text);
    void statusMessage(const QString &text, int timeoutMs);
    /// An import ended: @p imported runs added; @p error lists the files that were not, one a line.
    void reportsImported(int imported, const QString &error);

private:
    /// Reads @p ids off this thread, then calls @p show with them unless @p jobs was asked again since.
    void loadRuns(const QList<qint64> &ids, LatestJob *jobs, std::function<void(QList<RunRecord> runs)> show);
    void showOpenedRun(RunRecord run);
    void exportWithDialog(bool comparison);
    void announceVerdict();
    void showImportOutcome(int imported, const QString &error);

    RunRecorder *m_recorder;
    RunController *m_live;
    RunPage *m_runPage;
    HistoryPage *m_history;
    ComparePage *m_compare;
    int m_liveAbBlocks = -1; ///< blocks shown of the A/B run going on; -1: none going
    QWidget *m_dialogParent;
    std::shared_ptr<RunRecord> m_current; ///< what the Run page shows
    bool m_announceComparison = false; ///< an A/B run ended: show its verdict once computed
    LatestJob m_openJobs { this }; ///< openRun()'s reads: the newest is shown
    LatestJob m_compareJobs { this }; ///< compareRuns()' reads: the newest is compared
    bool m_importing = false;
    bool m_importFromDialog = false; ///< the running import was asked for in the dialog: its outcome is shown
    QList<qint64> m_lastMerged; ///< what the last import merged from segments
};

} // namespace rpcscope
