// The window: its docks, pages, menus and status bar, wired to the controllers that do the work.
#include "mainwindow.h"

#include "scenario/runspec.h"
#include "util/units.h"

#include "abcontroller.h"
#include "builtinservers.h"
#include "comparepage.h"
#include "elidedlabel.h"
#include "historypage.h"
#include "layoutmemory.h"
#include "matrixpage.h"
#include "presentationview.h"
#include "resultscontroller.h"
#include "runcontroller.h"
#include "runlauncher.h"
#include "runpage.h"
#include "runrecorder.h"
#include "scenariodocuments.h"
#include "scenariopage.h"
#include "schemacontroller.h"
#include "schemapanel.h"
#include "targetspanel.h"
#include "util/buildinfo.h"

#include <QAction>
#include <QCloseEvent>
#include <QDir>
#include <QDirIterator>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QIcon>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QScrollArea>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>
#include <QToolButton>

namespace rpcscope {

MainWindow::MainWindow(QWidget *parent)
    : QMainWindow(parent)
    , m_schemaPanel(new SchemaPanel)
    , m_targets(new TargetsPanel)
    , m_scenario(new ScenarioPage)
    , m_runPage(new RunPage)
    , m_matrix(new MatrixPage([this](const ScenarioPage::Variation &variation, QString *error) {
        return m_launcher->prepareVariation(variation, error);
    }))
    , m_results(new QTabWidget)
    , m_compare(new ComparePage)
    , m_statusTarget(new ElidedLabel)
    , m_statusState(new QLabel)
    , m_statusRate(new QLabel)
    , m_recorder(new RunRecorder(this))
    , m_builtin(new BuiltinServers(this))
    , m_schema(new SchemaController(m_schemaPanel, this))
    , m_documents(new ScenarioDocuments(m_scenario, m_schema, this))
{
    setObjectName(QStringLiteral("mainWindow"));
    setAcceptDrops(true);
    openHistory();
    m_history = new HistoryPage(m_recorder->store());
    m_launcher = new RunLauncher(m_scenario, m_matrix, m_builtin, m_recorder, this);
    m_resultsController
        = new ResultsController(m_recorder, m_launcher->runController(), m_runPage, m_history, m_compare, this);

    createDocks();
    createPages();
    createStatusBar();
    createMenus();
    connectControllers();

    setWindowTitle(tr("untitled[*] — rpcscope"));
    setWindowIcon(QIcon(QStringLiteral(":/rpcscope/icons/rpcscope.svg")));
    resize(1400, 860);
    QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
}

MainWindow::~MainWindow() = default;

void MainWindow::openHistory()
{
    // RPCSCOPE_DB points a session (and the tests) at another history, as --db does for the CLI.
    QString error;
    if (!m_recorder->open(RunStore::chosenPath(), &error))
        statusBar()->showMessage(tr("Run history unavailable: %1").arg(error), 15000); // runs still run
}

void MainWindow::createDocks()
{
    auto *schemaDock = new QDockWidget(tr("Schema"), this);
    schemaDock->setObjectName(QStringLiteral("schemaDock"));
    schemaDock->setWidget(m_schemaPanel);
    addDockWidget(Qt::LeftDockWidgetArea, schemaDock);
    auto *targetsDock = new QDockWidget(tr("Targets"), this);
    targetsDock->setObjectName(QStringLiteral("targetsDock"));
    targetsDock->setWidget(m_targets);
    addDockWidget(Qt::LeftDockWidgetArea, targetsDock);
}

void MainWindow::createPages()
{
    // Each page scrolls rather than holding the window wider or taller than a small laptop's screen: 1280x720 is
    // comfortable, 1024x640 usable (tests/tst_layout).
    auto scrolled = [](QWidget *page) {
        auto *area = new QScrollArea;
        area->setObjectName(page->objectName().isEmpty() ? QStringLiteral("pageScroll")
                                                         : page->objectName() + QStringLiteral("Scroll"));
        area->setWidget(page);
        area->setWidgetResizable(true);
        area->setFrameShape(QFrame::NoFrame);
        return area;
    };
    auto *central = new QSplitter(Qt::Horizontal);
    central->setObjectName(QStringLiteral("centralSplitter"));
    central->addWidget(m_scenario); // its editor scrolls inside it, its Run button stays in sight
    m_results->setObjectName(QStringLiteral("resultTabs"));
    m_results->addTab(scrolled(m_runPage), tr("Run"));
    m_results->addTab(scrolled(m_matrix), tr("Compare stacks"));
    m_results->setTabToolTip(1,
        tr("The method over transports x codecs x payloads: how much protobuf/gRPC gains over "
           "JSON/HTTP or msgpack-rpc, and how much of it is the codec."));
    m_results->addTab(scrolled(m_history), tr("History"));
    m_results->setTabToolTip(2, tr("Every run, saved as it goes: open one again, label it, compare runs."));
    m_results->addTab(scrolled(m_compare), tr("Compare runs"));
    m_results->setTabToolTip(
        3, tr("Runs overlaid, the change per metric with its confidence interval, and the verdict."));
    central->addWidget(m_results);
    central->setStretchFactor(0, 0);
    central->setStretchFactor(1, 1);
    m_scenario->setMinimumWidth(m_scenario->minimumSizeHint().width());
    central->setCollapsible(0, true);
    central->setCollapsible(1, false);
    setCentralWidget(central);
    m_central = central;

    // The editor folds away to give the results the window's width, and comes back from the tab bar's corner.
    m_editorToggle = new QToolButton;
    m_editorToggle->setObjectName(QStringLiteral("editorToggle"));
    m_editorToggle->setCheckable(true);
    m_editorToggle->setChecked(true);
    m_editorToggle->setAutoRaise(true);
    m_editorToggle->setToolTip(tr("Show or hide the scenario editor (Ctrl+Shift+E)"));
    m_results->setCornerWidget(m_editorToggle, Qt::TopLeftCorner);
    connect(m_editorToggle, &QToolButton::toggled, this, &MainWindow::setEditorShown);
    // Dragged shut or open by hand, or restored so: the toggle follows (sizes are known once laid out).
    connect(central, &QSplitter::splitterMoved, this, &MainWindow::syncEditorToggle);
    rememberSplitter(central, QStringLiteral("main"));
    syncEditorToggle();
    QTimer::singleShot(0, this, &MainWindow::syncEditorToggle);
}

void MainWindow::showResultsPage(QWidget *page)
{
    for (int i = 0; i < m_results->count(); ++i) {
        const auto *area = qobject_cast<QScrollArea *>(m_results->widget(i));
        if (m_results->widget(i) == page || (area && area->widget() == page))
            m_results->setCurrentIndex(i);
    }
}

bool MainWindow::isEditorShown() const
{
    return m_editorShown;
}

void MainWindow::syncEditorToggle()
{
    if (m_central->isVisible())
        m_editorShown = m_central->sizes().value(0) > 0;
    const QSignalBlocker block(m_editorToggle);
    m_editorToggle->setChecked(m_editorShown);
    m_editorToggle->setText(m_editorShown ? tr("\u25C0 Scenario") : tr("\u25B6 Scenario"));
    if (m_editorAction) {
        const QSignalBlocker blockAction(m_editorAction);
        m_editorAction->setChecked(m_editorShown);
    }
}

void MainWindow::setEditorShown(bool shown)
{
    const QList<int> sizes = m_central->sizes();
    const int total = sizes.value(0) + sizes.value(1);
    if (!shown && sizes.value(0) > 0) {
        m_editorWidth = sizes.value(0);
        m_central->setSizes({ 0, total });
    } else if (shown && sizes.value(0) == 0) {
        const int width = std::max(m_editorWidth > 0 ? m_editorWidth : 460, m_scenario->minimumWidth());
        m_central->setSizes({ width, std::max(total - width, 0) });
        m_editorWidth = 0;
    }
    QSettings().setValue(QStringLiteral("layout/main"), m_central->saveState());
    m_editorShown = shown;
    syncEditorToggle();
}

void MainWindow::makeRoomForResults()
{
    if (m_autoCollapse && m_autoCollapse->isChecked())
        setEditorShown(false);
}

void MainWindow::createStatusBar()
{
    m_statusTarget->setObjectName(QStringLiteral("statusTarget"));
    m_statusState->setObjectName(QStringLiteral("statusState"));
    m_statusRate->setObjectName(QStringLiteral("statusRate"));
    statusBar()->addWidget(m_statusTarget, 1);
    statusBar()->addPermanentWidget(m_statusState);
    statusBar()->addPermanentWidget(m_statusRate);
    m_statusState->setText(tr("Idle"));
    // Fixed sizes: they change text at every snapshot; see RunPage's progress label for why that matters.
    m_statusState->setFixedSize(m_statusState->fontMetrics().horizontalAdvance(tr("Warming up · 100%")) + 16,
        m_statusState->sizeHint().height());
    m_statusRate->setFixedSize(
        m_statusRate->fontMetrics().horizontalAdvance(QStringLiteral("9,999,999 OK calls/s")) + 16,
        m_statusRate->sizeHint().height());
}

void MainWindow::connectControllers()
{
    QStatusBar *status = statusBar();
    connect(m_targets, &TargetsPanel::targetActivated, this, &MainWindow::pointScenarioAt);
    // The built-in servers' process can die (killed, crashed): say so where they are listed.
    connect(m_builtin, &BuiltinServers::runningChanged, m_targets, &TargetsPanel::setBuiltinRunning);
    m_scenario->setBuiltinStarter([this](QString *error) { return startBuiltinServers(error); });

    connect(m_schemaPanel, &SchemaPanel::methodSelected, m_scenario, &ScenarioPage::setMethod);
    connect(m_schema, &SchemaController::schemaChanged, m_scenario, &ScenarioPage::setSchema);
    connect(m_schema, &SchemaController::statusMessage, status, &QStatusBar::showMessage);
    connect(m_schema, &SchemaController::reloadedForImportPaths, this, &MainWindow::schemaReloadedForImportPaths);

    connect(m_documents, &ScenarioDocuments::statusMessage, status, &QStatusBar::showMessage);
    connect(m_documents, &ScenarioDocuments::recentFilesChanged, this, &MainWindow::updateRecentMenu);

    connect(m_scenario, &ScenarioPage::runRequested, m_launcher, &RunLauncher::startRun);
    connect(m_scenario, &ScenarioPage::stopRequested, m_launcher, &RunLauncher::stopRun);
    connect(m_scenario, &ScenarioPage::sendOnceRequested, m_launcher, &RunLauncher::sendOnce);
    connect(m_launcher, &RunLauncher::snapshotAvailable, this, &MainWindow::showSnapshot);
    connect(m_launcher, &RunLauncher::runLaunched, m_resultsController, &ResultsController::showLiveRun);
    connect(m_launcher, &RunLauncher::remoteTargetUsed, m_targets, &TargetsPanel::addRecent);
    connect(m_launcher, &RunLauncher::checksJudged, m_runPage, &RunPage::showChecks);
    connect(m_launcher, &RunLauncher::profilesPending, m_runPage, &RunPage::showProfilesPending);
    connect(m_launcher, &RunLauncher::runProfilesRead, m_resultsController, &ResultsController::showRunProfiles);
    connect(m_launcher, &RunLauncher::stateChanged, m_statusState, &QLabel::setText);
    connect(m_launcher, &RunLauncher::statusMessage, status, &QStatusBar::showMessage);
    connect(m_launcher, &RunLauncher::serverCommandFailed, this, &MainWindow::showServerCommandError);
    connect(m_launcher, &RunLauncher::clientCommandFailed, this, &MainWindow::showClientCommandError);
    connect(m_launcher, &RunLauncher::abStarted, m_compare, &ComparePage::setThreshold);
    connect(m_launcher, &RunLauncher::abFinished, this, &MainWindow::showAbRuns);
    connect(m_launcher, &RunLauncher::runLaunched, this, &MainWindow::makeRoomForResults);
    connect(m_launcher, &RunLauncher::abStarted, this, &MainWindow::makeRoomForResults);
    connect(m_launcher, &RunLauncher::abStarted, m_resultsController, [this] { m_resultsController->beginAb(); });
    connect(m_resultsController, &ResultsController::pageRequested, this, [this](QWidget *page) {
        if (page == m_compare)
            makeRoomForResults();
    });
    connect(m_launcher->abController(), &AbController::progressed, m_resultsController,
        [this] { m_resultsController->showAbLive(*m_launcher->abController()); });

    connect(m_recorder, &RunRecorder::failed, this, &MainWindow::showHistoryWriteError);
    connect(m_recorder, &RunRecorder::runStored, m_history, &HistoryPage::refresh);
    connect(m_history, &HistoryPage::openRunRequested, m_resultsController, &ResultsController::openRun);
    connect(m_history, &HistoryPage::compareRequested, m_resultsController, &ResultsController::compareRuns);
    connect(m_resultsController, &ResultsController::pageRequested, this, &MainWindow::showResultsPage);
    connect(m_resultsController, &ResultsController::runDescribed, m_statusTarget, &QLabel::setText);
    connect(m_resultsController, &ResultsController::statusMessage, status, &QStatusBar::showMessage);
}

void MainWindow::createMenus()
{
    QMenu *file = menuBar()->addMenu(tr("&File"));
    // Actions are named so tests (and scripts) find them without depending on their translated text.
    auto named = [](QAction *action, const char *name) {
        action->setObjectName(QLatin1String(name));
        return action;
    };
    named(file->addAction(tr("&New scenario"), m_documents, &ScenarioDocuments::newAfterAsking), "actionNewScenario")
        ->setShortcut(QKeySequence::New);
    named(file->addAction(tr("&Open scenario…"), m_documents, &ScenarioDocuments::openWithDialog), "actionOpenScenario")
        ->setShortcut(QKeySequence::Open);
    m_recentMenu = file->addMenu(tr("Open &recent"));
    named(file->addAction(tr("&Save scenario"), m_documents, &ScenarioDocuments::saveWithDialog), "actionSaveScenario")
        ->setShortcut(QKeySequence::Save);
    named(file->addAction(tr("Save scenario &as…"), m_documents, &ScenarioDocuments::saveAsWithDialog),
        "actionSaveScenarioAs")
        ->setShortcut(QKeySequence::SaveAs);
    file->addSeparator();
    updateRecentMenu();
    QAction *open = file->addAction(tr("&Open .proto files…"), this, &MainWindow::openProtosWithDialog);
    open->setObjectName(QStringLiteral("actionOpenProtos"));
    open->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    open->setToolTip(tr("Load .proto files; imports are resolved from their folder and the well-known types."));
    file->addAction(tr("Open &protoset…"), this, &MainWindow::openProtosetsWithDialog)
        ->setToolTip(tr("Load compiled descriptors, as protoc --descriptor_set_out --include_imports writes them."));
    file->addAction(tr("Schema from &server reflection…"), this, &MainWindow::reflectionWithDialog)
        ->setToolTip(tr("Ask a running gRPC server for its services and messages (grpc.reflection v1 or v1alpha)."));
    file->addSeparator();
    QAction *quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    file->insertSeparator(quit);
    auto *exportRun = new QAction(tr("&Export run…"), this);
    exportRun->setObjectName(QStringLiteral("actionExportRun"));
    exportRun->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    exportRun->setToolTip(
        tr("Write the run on the Run page as an HTML report, a chart, CSV, JSON, ghz JSON, hgrm or Markdown."));
    connect(exportRun, &QAction::triggered, m_resultsController, &ResultsController::exportRunWithDialog);
    file->insertAction(quit, exportRun);
    auto *exportComparison = new QAction(tr("Export &comparison…"), this);
    exportComparison->setObjectName(QStringLiteral("actionExportComparison"));
    connect(exportComparison, &QAction::triggered, m_resultsController, &ResultsController::exportComparisonWithDialog);
    file->insertAction(quit, exportComparison);
    auto *import = new QAction(tr("&Import ghz or rpcscope reports…"), this);
    import->setObjectName(QStringLiteral("actionImport"));
    import->setToolTip(tr("Add ghz JSON reports (ghz -O json) or rpcscope JSON reports to the history."));
    connect(import, &QAction::triggered, m_resultsController, &ResultsController::importWithDialog);
    file->insertAction(quit, import);
    auto *importFolder = new QAction(tr("Import a &folder of reports…"), this);
    importFolder->setObjectName(QStringLiteral("actionImportFolder"));
    importFolder->setToolTip(tr("Add every JSON report in a folder to the history. The segments of a split run "
                                "(rpcscope-cli run --segment) are merged into one run, shown with its workers."));
    connect(importFolder, &QAction::triggered, m_resultsController, &ResultsController::importFolderWithDialog);
    file->insertAction(quit, importFolder);
    file->insertSeparator(quit);

    QMenu *run = menuBar()->addMenu(tr("&Run"));
    QAction *start = run->addAction(tr("&Run"), m_launcher, &RunLauncher::startRun);
    start->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    QAction *once = run->addAction(tr("Send &once"), m_launcher, &RunLauncher::sendOnce);
    once->setObjectName(QStringLiteral("actionSendOnce"));
    once->setShortcuts({ QKeySequence(Qt::CTRL | Qt::Key_Return), QKeySequence(Qt::CTRL | Qt::Key_Enter) });
    QAction *stop = run->addAction(tr("&Stop"), m_launcher, &RunLauncher::stopRun);
    stop->setShortcut(QKeySequence(Qt::Key_Escape));

    run->addSeparator();
    QAction *previous = run->addAction(
        tr("Compare with a &previous run…"), m_resultsController, &ResultsController::compareWithDialog);
    previous->setObjectName(QStringLiteral("actionCompareWithPrevious"));
    previous->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_B));
    previous->setToolTip(
        tr("The run on the Run page against an earlier run of the same method: before/after in two clicks."));
    QAction *ab = run->addAction(tr("Compare &A/B…"), this, &MainWindow::showAbDialog);
    ab->setObjectName(QStringLiteral("actionCompareAb"));
    ab->setToolTip(tr("Run this scenario against two targets in alternating blocks and compare them."));

    QMenu *view = menuBar()->addMenu(tr("&View"));
    // The docks, so that one closed with its title bar's button can be brought back.
    for (auto *dock : findChildren<QDockWidget *>(Qt::FindDirectChildrenOnly)) {
        QAction *toggle = dock->toggleViewAction();
        toggle->setObjectName(QStringLiteral("actionShow") + dock->objectName());
        view->addAction(toggle);
    }
    view->addSeparator();
    m_editorAction = named(view->addAction(tr("Scenario &editor")), "actionEditor");
    m_editorAction->setCheckable(true);
    m_editorAction->setChecked(isEditorShown());
    m_editorAction->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E));
    connect(m_editorAction, &QAction::toggled, this, &MainWindow::setEditorShown);
    m_autoCollapse = named(view->addAction(tr("&Fold the editor away while results show")), "actionAutoCollapse");
    m_autoCollapse->setCheckable(true);
    m_autoCollapse->setToolTip(tr("When a run, an A/B run or a comparison comes up, the scenario editor folds away to "
                                  "give the results the window's width."));
    m_autoCollapse->setChecked(QSettings().value(QStringLiteral("layout/autoCollapse"), true).toBool());
    connect(m_autoCollapse, &QAction::toggled, this,
        [](bool on) { QSettings().setValue(QStringLiteral("layout/autoCollapse"), on); });
    QAction *present
        = view->addAction(tr("&Present comparison"), this, [this] { PresentationView::present(m_compare); });
    present->setObjectName(QStringLiteral("actionPresent"));
    present->setShortcut(QKeySequence(Qt::Key_F11));

    QMenu *help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About rpcscope"), this, &MainWindow::showAbout);
}

bool MainWindow::startEmbeddedDefault(QString *error, const QString &serverProgram)
{
    loadEmbeddedDefault(serverProgram);
    const bool started = startBuiltinServers(error);
    setWindowModified(false); // the default is not the user's edit
    return started;
}

void MainWindow::loadEmbeddedDefault(const QString &serverProgram)
{
    m_builtin->setCliProgram(serverProgram);
    if (!m_builtin->isRunning()) {
        m_statusTarget->setText(tr("Built-in servers: not started; they start when a run uses them."));
        m_targets->setBuiltin({}, 0);
    }
    m_schema->useBuiltin();
    m_schemaPanel->selectMethod(QStringLiteral("rpcscope.bench.v1.Bench/Echo"));
    m_scenario->setMethod(QStringLiteral("rpcscope.bench.v1.Bench/Echo"));
    m_scenario->setFills(QStringLiteral("payload=1KiB"));
    setWindowModified(false); // the default is not the user's edit
}

bool MainWindow::startBuiltinServers(QString *error)
{
    if (m_builtin->isRunning())
        return true;
    QString why;
    if (!m_builtin->ensureRunning(&why)) {
        statusBar()->showMessage(tr("Built-in servers failed to start: %1").arg(why));
        if (error)
            *error = why;
        return false;
    }
    m_statusTarget->setText(m_builtin->description());
    m_scenario->setBuiltinTargets(m_builtin->targets());
    m_targets->setBuiltin(m_builtin->targets(), m_builtin->pid());
    m_targets->setBuiltinRunning(true);
    return true;
}

bool MainWindow::usesBuiltinServers() const
{
    const Scenario s = m_scenario->scenario();
    return s.target == u"builtin" && s.transport != transportName(TransportKind::InProcess);
}

// What main() asks of the window.

bool MainWindow::openProtoFiles(const QStringList &files, const QStringList &importPaths)
{
    return m_schema->openProtoFiles(files, importPaths);
}

bool MainWindow::openScenario(const QString &path, QString *error)
{
    return m_documents->open(path, error);
}

void MainWindow::startRun()
{
    m_launcher->startRun();
}

void MainWindow::stopRun()
{
    m_launcher->stopRun();
}

RunController *MainWindow::runController() const
{
    return m_launcher->runController();
}

bool MainWindow::compareRuns(const QList<qint64> &ids)
{
    return m_resultsController->compareRuns(ids);
}

// Views and dialogs.

void MainWindow::updateRecentMenu()
{
    if (!m_recentMenu)
        return;
    m_recentMenu->clear();
    const QStringList recent = m_documents->recentFiles();
    for (const QString &path : recent) {
        m_recentMenu
            ->addAction(QFileInfo(path).fileName(), m_documents, [this, path] { m_documents->openRecent(path); })
            ->setToolTip(path);
    }
    m_recentMenu->setEnabled(!recent.isEmpty());
}

void MainWindow::openProtosWithDialog()
{
    const QStringList files = QFileDialog::getOpenFileNames(
        this, tr("Open .proto files"), QString(), tr("Protocol Buffers (*.proto);;All files (*)"));
    if (!files.isEmpty())
        m_schema->openProtoFiles(files);
}

void MainWindow::openProtosetsWithDialog()
{
    const QStringList files = QFileDialog::getOpenFileNames(
        this, tr("Open protosets"), QString(), tr("Protosets (*.protoset *.pb *.desc *.bin);;All files (*)"));
    if (!files.isEmpty())
        m_schema->openProtosets(files);
}

void MainWindow::reflectionWithDialog()
{
    bool ok = false;
    const QString address = QInputDialog::getText(this, tr("Server reflection"), tr("gRPC server address (HOST:PORT):"),
        QLineEdit::Normal, m_builtin->address(), &ok)
                                .trimmed();
    if (ok && !address.isEmpty())
        m_schema->loadFromReflection(address);
}

void MainWindow::showAbDialog()
{
    AbDialog dialog(this);
    // The document's A/B design fills the dialog, and what is chosen there goes back into the document (saved with
    // it, as `ab --scenario` reads it).
    const Scenario current = m_scenario->scenario();
    AbRequest seed = dialog.request();
    seed.block = current.abBlock;
    seed.restarts = current.abRestarts;
    seed.connectionPerBlock = current.abConnection == u"per-block";
    if (QString why; !current.abThreshold.isEmpty() && !parseFraction(current.abThreshold, &seed.threshold, &why))
        seed.threshold = 0.05;
    seed.untilDecided = current.abUntilDecided;
    seed.maxDuration = current.abMaxDuration;
    if (m_lastAb) {
        seed.targets = m_lastAb->targets;
        seed.readyPattern = m_lastAb->readyPattern;
        seed.readyTimeout = m_lastAb->readyTimeout;
    }
    dialog.setRequest(seed);
    if (dialog.exec() != QDialog::Accepted)
        return;
    const AbRequest chosen = dialog.request();
    m_lastAb = std::make_unique<AbRequest>(chosen);
    m_scenario->setAbDesign(chosen.block, chosen.restarts,
        chosen.connectionPerBlock ? QStringLiteral("per-block") : QString(),
        qFuzzyCompare(chosen.threshold, 0.05) ? QString() : QStringLiteral("%1%").arg(chosen.threshold * 100),
        chosen.untilDecided, chosen.maxDuration);
    QString error;
    if (!m_launcher->startAb(dialog.request(), &error))
        QMessageBox::warning(this, tr("Compare A/B"), error);
}

void MainWindow::showAbout()
{
    QString text = tr("<h3>rpcscope</h3><p>A workbench for RPC performance.</p><table>");
    for (const auto &[name, version] : buildInfo())
        text += QStringLiteral("<tr><td><b>%1</b>&nbsp;&nbsp;</td><td>%2</td></tr>")
                    .arg(name.toHtmlEscaped(), version.toHtmlEscaped());
    text += QStringLiteral("</table>");
    QMessageBox::about(this, tr("About rpcscope"), text);
}

void MainWindow::pointScenarioAt(TransportKind kind, const QString &address)
{
    m_scenario->setTransport(kind);
    m_scenario->setTarget(address);
}

void MainWindow::schemaReloadedForImportPaths()
{
    m_schemaPanel->selectMethod(m_scenario->method());
    m_documents->setModified(true); // the document names its import paths
}

void MainWindow::showSnapshot(const RunSnapshot &snapshot)
{
    m_runPage->showSnapshot(snapshot);
    QString state = runStateName(snapshot.state);
    state[0] = state[0].toUpper();
    m_statusState->setText(state);
    m_statusRate->setText(tr("%1 OK calls/s").arg(snapshot.okPerSecond(), 0, 'f', 0));
}

void MainWindow::showAbRuns(bool measured, const QString &error)
{
    m_resultsController->showAbRuns(m_launcher->abController()->records(), measured, error);
}

void MainWindow::showServerCommandError(const QString &error)
{
    // Not modal: the window stays usable while the server's output is read.
    auto *box = new QMessageBox(QMessageBox::Warning, tr("Server command"),
        tr("The server command did not start:\n%1").arg(error), QMessageBox::Ok, this);
    box->setObjectName(QStringLiteral("serverCommandError"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

void MainWindow::showClientCommandError(const QString &error)
{
    auto *box = new QMessageBox(QMessageBox::Warning, tr("Client command"),
        tr("The run failed: its client command broke off, and nothing it measured was kept.\n\n%1").arg(error),
        QMessageBox::Ok, this);
    box->setObjectName(QStringLiteral("clientCommandError"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

void MainWindow::showHistoryWriteError(const QString &why)
{
    statusBar()->showMessage(tr("Saving the run: %1").arg(why), 10000);
}

void MainWindow::dragEnterEvent(QDragEnterEvent *event)
{
    if (event->mimeData()->hasUrls())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent *event)
{
    QStringList files;
    QStringList importPaths;
    QStringList protosets;
    for (const QUrl &url : event->mimeData()->urls()) {
        const QFileInfo info(url.toLocalFile());
        if (info.isDir()) {
            // A dropped folder is an import root, and every .proto in it is loaded.
            importPaths << info.absoluteFilePath();
            QDirIterator it(
                info.absoluteFilePath(), { QStringLiteral("*.proto") }, QDir::Files, QDirIterator::Subdirectories);
            while (it.hasNext())
                files << it.next();
        } else if (info.suffix() == u"proto") {
            files << info.absoluteFilePath();
        } else if (info.suffix() == u"protoset" || info.suffix() == u"pb" || info.suffix() == u"desc") {
            protosets << info.absoluteFilePath();
        }
    }
    if (!protosets.isEmpty()) {
        m_schema->openProtosets(protosets);
        event->acceptProposedAction();
    } else if (!files.isEmpty()) {
        m_schema->openProtoFiles(files, importPaths);
        event->acceptProposedAction();
    }
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    if (!m_documents->maybeSave()) {
        event->ignore();
        return;
    }
    m_launcher->stopForClose();
    if (!m_recorder->flush(std::chrono::seconds(10)))
        qWarning("rpcscope: the run history is still being written; the writer finishes before the program ends");
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    QMainWindow::closeEvent(event);
}

} // namespace rpcscope
