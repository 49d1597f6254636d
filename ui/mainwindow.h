#pragma once

#include "transport/transports.h"

#include <QMap>

#include "scenariodocuments.h"
#include "scenariopage.h"
#include "schema/schema.h"
#include "store/runstore.h"

#include <QMainWindow>

#include <functional>
#include <memory>

class QLabel;

namespace rpcscope {

class BuiltinServers;
class SchemaController;
class RunLauncher;
class AbController;
struct AbRequest;
class ComparePage;
class HistoryPage;
class MatrixPage;
class RunStore;
class RunWriter;
class RunRecorder;
struct RunRecord;
class RunController;
class RunPage;
class ScenarioPage;
class SchemaPanel;
class TargetsPanel;
struct RunSnapshot;

/**
 * The workbench window. It only wires the pages together: the schema dock, the scenario editor, the run page
 * and the run controller each own their part. mainwindow.cpp has the window, menus and live runs;
 * mainwindowdocuments.cpp the scenario documents; mainwindowresults.cpp stored runs, comparisons, exports, A/B.
 */
class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget *parent = nullptr);
    ~MainWindow() override;

    /**
     * The embedded default: built-in server up on a free loopback port, bench proto loaded, Echo with 1 KiB.
     * The server is @p serverProgram's `serve grpc` (default: rpcscope-cli next to this program), else in process.
     */
    bool startEmbeddedDefault(QString *error = nullptr, const QString &serverProgram = {});
    /**
     * Loads .proto files (what File > Open and a drop do) with @p importPaths added to the schema dock's. Errors
     * are listed and the previous schema is kept; the files are loaded again when the dock's import paths change.
     */
    bool openProtoFiles(const QStringList &files, const QStringList &importPaths = {});
    /// Loads protosets (FileDescriptorSet files); errors are listed and the previous schema is kept.
    bool openProtosets(const QStringList &files);
    /**
     * Asks the gRPC server at @p address for its schema by reflection, on a worker thread (the window stays live;
     * bounded by a 10 s deadline). schemaLoaded() or a listed error follows.
     */
    void loadFromReflection(const QString &address);

    /// Runs (see RunLauncher).
    void startRun();
    void stopRun();
    /// Starts an A/B run of the scenario (what Run > Compare A/B does after its dialog).
    bool startAb(const AbRequest &request, QString *error);
    RunController *runController() const;
    AbController *abController() const;

    /// Scenario documents (see ScenarioDocuments).
    bool openScenario(const QString &path, QString *error = nullptr);
    bool saveScenario(const QString &path, QString *error = nullptr);
    QString scenarioPath() const;
    /// The questions ScenarioDocuments asks, replaced (tests drive the menus with them).
    void setOpenPathAsker(ScenarioDocuments::PathAsker ask);
    void setUnsavedChangesAsker(std::function<int()> ask);
    void setTrustAsker(std::function<bool(const QString &path, const QString &command)> ask);

    SchemaPanel *schemaPanel() const { return m_schemaPanel; }
    TargetsPanel *targetsPanel() const { return m_targets; }
    ScenarioPage *scenarioPage() const { return m_scenario; }
    RunPage *runPage() const { return m_runPage; }
    MatrixPage *matrixPage() const { return m_matrix; }
    HistoryPage *historyPage() const { return m_history; }
    ComparePage *comparePage() const { return m_compare; }
    RunStore *runStore() const;
    /// Writes the live runs' progress off the GUI thread; null when the history is not open.
    RunWriter *runWriter() const;
    /// The run the Run page shows (the last one run here or one opened from the history), if any.
    const RunRecord *currentRun() const;

    /// Shows stored run @p id on the Run page; false with a status message when it cannot be loaded.
    bool openRun(qint64 id);
    /// Loads the stored runs @p ids (the first is the baseline) into the Compare runs page.
    bool compareRuns(const QList<qint64> &ids);
    /// Stored runs of the current run's method, newest first, the current run left out: baselines to compare with.
    std::vector<RunListEntry> baselineCandidates() const;
    /// Compares the current run (as candidate) with stored run @p baselineId, on the Compare runs page.
    bool compareCurrentWith(qint64 baselineId);
    /// Writes the current run (or, with @p comparison, the compared runs) to @p path in the format its suffix
    /// (or @p format: a name exportFormatNames() knows, or html/png/pdf/svg) says; the status bar tells how it went.
    bool exportTo(const QString &path, const QString &format, bool comparison, QString *error);
    /// Imports ghz or rpcscope JSON reports into the history; returns how many were imported.
    int importReports(const QStringList &files, QString *error);
    QString builtinAddress() const;

Q_SIGNALS:
    /// A schema replaced the previous one (from any source); @p origin says from where.
    void schemaLoaded(const QString &origin);
    /// Loading a schema failed; the errors are listed in the schema dock.
    void schemaFailed(const QString &why);

protected:
    void dragEnterEvent(QDragEnterEvent *event) override;
    void dropEvent(QDropEvent *event) override;
    void closeEvent(QCloseEvent *event) override;

private:
    void updateRecentMenu();
    void schemaReloadedForImportPaths();
    void showLaunchedRun(const std::shared_ptr<RunRecord> &run, const QString &description);
    void showServerCommandError(const QString &error);
    void showAbResult(bool measured, const QString &error);
    void showAbDialog();
    void compareWithDialog();
    void exportWithDialog(bool comparison);
    void importWithDialog();
    void createMenus();
    void showSnapshot(const RunSnapshot &snapshot);
    void showAbout();

    class QMenu *m_recentMenu = nullptr;
    SchemaPanel *m_schemaPanel;
    TargetsPanel *m_targets;
    ScenarioPage *m_scenario;
    RunPage *m_runPage;
    MatrixPage *m_matrix;
    class QTabWidget *m_results;
    BuiltinServers *m_builtin;
    SchemaController *m_schema;
    ScenarioDocuments *m_documents;
    RunRecorder *m_recorder; ///< the run history: the store this thread reads, the writer thread
    HistoryPage *m_history = nullptr;
    ComparePage *m_compare = nullptr;
    RunLauncher *m_launcher = nullptr;
    std::shared_ptr<RunRecord> m_current; ///< what the Run page shows
    bool m_announceComparison = false; ///< an A/B run ended: show its verdict once computed
    QLabel *m_statusTarget;
    QLabel *m_statusState;
    QLabel *m_statusRate;
};

} // namespace rpcscope
