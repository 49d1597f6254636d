#pragma once

#include "transport/transports.h"

#include <QMainWindow>

#include <memory>

class QAction;
class QLabel;
class QMenu;
class QSplitter;
class QTabWidget;
class QToolButton;

namespace rpcscope {

class BuiltinServers;
class ComparePage;
class HistoryPage;
class MatrixPage;
class ResultsController;
class RunController;
class RunLauncher;
class RunPage;
class RunRecorder;
class ScenarioDocuments;
class ScenarioPage;
class SchemaController;
class SchemaPanel;
class TargetsPanel;
struct AbRequest;
class ElidedLabel;
struct RunSnapshot;

/**
 * The workbench window. It builds the docks, pages, menus and status bar and wires them to the controllers that do
 * the work: BuiltinServers (the built-in targets), SchemaController (the loaded schema), ScenarioDocuments (open and
 * save), RunLauncher (single and A/B runs) and ResultsController (the shown run, history, comparisons, exports).
 * The controllers and pages are reachable for main() and the tests.
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
    /// The embedded default without the servers: they start when a run first uses them (startBuiltinServers()).
    void loadEmbeddedDefault(const QString &serverProgram = {});
    /// Starts the built-in servers unless they are up, and points the editor's built-in targets at them.
    bool startBuiltinServers(QString *error = nullptr);
    /// The scenario in the editor calls a built-in server (not an address, a command, or no server at all).
    bool usesBuiltinServers() const;

    // What main() asks of the window; each forwards to the controller that does it.
    bool openProtoFiles(const QStringList &files, const QStringList &importPaths = {});
    bool openScenario(const QString &path, QString *error = nullptr);
    void startRun();
    void stopRun();
    RunController *runController() const;
    bool compareRuns(const QList<qint64> &ids);

    BuiltinServers *builtinServers() const { return m_builtin; }
    SchemaController *schemaController() const { return m_schema; }
    ScenarioDocuments *scenarioDocuments() const { return m_documents; }
    RunLauncher *runLauncher() const { return m_launcher; }
    ResultsController *resultsController() const { return m_resultsController; }
    /// The run history: the store the GUI thread reads, the writer thread of the live runs.
    RunRecorder *runRecorder() const { return m_recorder; }

    SchemaPanel *schemaPanel() const { return m_schemaPanel; }
    TargetsPanel *targetsPanel() const { return m_targets; }
    ScenarioPage *scenarioPage() const { return m_scenario; }
    RunPage *runPage() const { return m_runPage; }
    /// Brings @p page (the Run, Compare stacks, History or Compare runs page) forward in the results tabs, where each
    /// page is in a scroll area.
    void showResultsPage(QWidget *page);
    MatrixPage *matrixPage() const { return m_matrix; }
    HistoryPage *historyPage() const { return m_history; }
    ComparePage *comparePage() const { return m_compare; }
    /// The scenario editor shows beside the results (not folded away).
    bool isEditorShown() const;

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
    void showClientCommandError(const QString &error);
    void showHistoryWriteError(const QString &why);
    /// The scenario editor beside the results, or collapsed to give them the width (its last width is kept).
    void setEditorShown(bool shown);
    /// A run or a comparison came up: the editor makes room, unless the user turned that off (View menu).
    void makeRoomForResults();
    /// The toggle and the View menu's action say whether the editor shows.
    void syncEditorToggle();

    SchemaPanel *m_schemaPanel;
    TargetsPanel *m_targets;
    ScenarioPage *m_scenario;
    RunPage *m_runPage;
    MatrixPage *m_matrix;
    QTabWidget *m_results;
    QSplitter *m_central = nullptr; ///< the scenario editor | the results
    QToolButton *m_editorToggle = nullptr; ///< in the results' tab bar corner
    QAction *m_editorAction = nullptr; ///< View > Scenario editor
    QAction *m_autoCollapse = nullptr; ///< View > Collapse the editor while results show
    int m_editorWidth = 0; ///< the editor's width before it was collapsed
    bool m_editorShown = true;
    /// The A/B dialog's last targets (kind, address or command, environment, folder) and readiness, offered again the
    /// next time it opens in this session.
    std::unique_ptr<AbRequest> m_lastAb;
    HistoryPage *m_history = nullptr;
    ComparePage *m_compare;
    QMenu *m_recentMenu = nullptr;
    ElidedLabel *m_statusTarget;
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
