#pragma once

#include "abdialog.h"
#include "scenariodocuments.h"
#include "store/runstore.h"
#include "transport/transports.h"

#include <QMainWindow>

#include <functional>
#include <memory>

class QLabel;
class QMenu;
class QTabWidget;

namespace rpcscope {

class AbController;
class BuiltinServers;
class ComparePage;
class HistoryPage;
class MatrixPage;
class ResultsController;
class RunController;
class RunLauncher;
class RunPage;
class RunRecorder;
class RunWriter;
class ScenarioPage;
class SchemaController;
class SchemaPanel;
class TargetsPanel;
struct RunRecord;
struct RunSnapshot;

/**
 * The workbench window. It builds the docks, pages, menus and status bar and wires them to the controllers that do
 * the work: BuiltinServers (the built-in targets), SchemaController (the loaded schema), ScenarioDocuments (open and
 * save), RunLauncher (single and A/B runs) and ResultsController (the shown run, history, comparisons, exports).
 * The public methods below forward to them, for main() and the tests.
 */
class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget *parent = nullptr);
    ~MainWindow() override;

    /**
     * The embedded default: built-in servers up on free loopback ports, bench proto loaded, Echo with 1 KiB.
     * The servers are @p serverProgram's `serve all` (default: rpcscope-cli next to this program), else in process.
     */
    bool startEmbeddedDefault(QString *error = nullptr, const QString &serverProgram = {});

    // Schema (SchemaController).
    bool openProtoFiles(const QStringList &files, const QStringList &importPaths = {});
    bool openProtosets(const QStringList &files);
    void loadFromReflection(const QString &address);

    // Scenario documents (ScenarioDocuments).
    bool openScenario(const QString &path, QString *error = nullptr);
    bool saveScenario(const QString &path, QString *error = nullptr);
    QString scenarioPath() const;
    void setOpenPathAsker(ScenarioDocuments::PathAsker ask);
    void setUnsavedChangesAsker(std::function<int()> ask);
    void setTrustAsker(std::function<bool(const QString &path, const QString &command)> ask);

    // Runs (RunLauncher).
    void startRun();
    void stopRun();
    bool startAb(const AbRequest &request, QString *error);
    RunController *runController() const;
    AbController *abController() const;
    QString builtinAddress() const;

    // Results (ResultsController, RunRecorder).
    const RunRecord *currentRun() const;
    bool openRun(qint64 id);
    bool compareRuns(const QList<qint64> &ids);
    std::vector<RunListEntry> baselineCandidates() const;
    bool compareCurrentWith(qint64 baselineId);
    bool exportTo(const QString &path, const QString &format, bool comparison, QString *error);
    int importReports(const QStringList &files, QString *error);
    ResultsController *resultsController() const { return m_resultsController; }
    RunStore *runStore() const;
    /// Writes the live runs' progress off the GUI thread; null when the history is not open.
    RunWriter *runWriter() const;

    SchemaPanel *schemaPanel() const { return m_schemaPanel; }
    TargetsPanel *targetsPanel() const { return m_targets; }
    ScenarioPage *scenarioPage() const { return m_scenario; }
    RunPage *runPage() const { return m_runPage; }
    MatrixPage *matrixPage() const { return m_matrix; }
    HistoryPage *historyPage() const { return m_history; }
    ComparePage *comparePage() const { return m_compare; }

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
    void openHistory();
    void createDocks();
    void createPages();
    void createStatusBar();
    void createMenus();
    void connectControllers();

    void updateRecentMenu();
    void openProtosWithDialog();
    void openProtosetsWithDialog();
    void reflectionWithDialog();
    void showAbDialog();
    void showAbout();
    void pointScenarioAt(TransportKind kind, const QString &address);
    void schemaReloadedForImportPaths();
    void showSnapshot(const RunSnapshot &snapshot);
    void showAbRuns(bool measured, const QString &error);
    void showServerCommandError(const QString &error);
    void showHistoryWriteError(const QString &why);

    SchemaPanel *m_schemaPanel;
    TargetsPanel *m_targets;
    ScenarioPage *m_scenario;
    RunPage *m_runPage;
    MatrixPage *m_matrix;
    QTabWidget *m_results;
    HistoryPage *m_history = nullptr;
    ComparePage *m_compare;
    QMenu *m_recentMenu = nullptr;
    QLabel *m_statusTarget;
    QLabel *m_statusState;
    QLabel *m_statusRate;

    RunRecorder *m_recorder; ///< the run history: the store this thread reads, the writer thread
    BuiltinServers *m_builtin;
    SchemaController *m_schema;
    ScenarioDocuments *m_documents;
    RunLauncher *m_launcher = nullptr;
    ResultsController *m_resultsController = nullptr;
};

} // namespace rpcscope
