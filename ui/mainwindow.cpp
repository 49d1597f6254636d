// The window, its docks and menus, schema loading and live runs (see mainwindow.h for the other files).
#include "mainwindow.h"

#include "abcontroller.h"
#include "abdialog.h"
#include "builtinservers.h"
#include "comparepage.h"
#include "historypage.h"
#include "matrixpage.h"
#include "runcontroller.h"
#include "runlauncher.h"
#include "runpage.h"
#include "runrecorder.h"
#include "scenario/scenario.h"
#include "scenariodocuments.h"
#include "scenariopage.h"
#include "schemacontroller.h"
#include "schemapanel.h"
#include "store/environment.h"
#include "store/runstore.h"
#include "targetspanel.h"
#include "util/buildinfo.h"
#include "util/units.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QDirIterator>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QIcon>
#include <QInputDialog>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>

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
    , m_builtin(new BuiltinServers(this))
    , m_schema(new SchemaController(m_schemaPanel, this))
    , m_documents(new ScenarioDocuments(m_scenario, m_schema, this))
    , m_statusTarget(new QLabel)
    , m_statusState(new QLabel)
    , m_statusRate(new QLabel)
{
    setObjectName(QStringLiteral("mainWindow"));
    setAcceptDrops(true);

    auto *schemaDock = new QDockWidget(tr("Schema"), this);
    schemaDock->setObjectName(QStringLiteral("schemaDock"));
    schemaDock->setWidget(m_schemaPanel);
    addDockWidget(Qt::LeftDockWidgetArea, schemaDock);
    auto *targetsDock = new QDockWidget(tr("Targets"), this);
    targetsDock->setObjectName(QStringLiteral("targetsDock"));
    targetsDock->setWidget(m_targets);
    addDockWidget(Qt::LeftDockWidgetArea, targetsDock);
    connect(m_targets, &TargetsPanel::targetActivated, this, [this](TransportKind kind, const QString &address) {
        m_scenario->setTransport(kind);
        m_scenario->setTarget(address);
    });
    // The built-in servers' process can die (killed, crashed): say so where they are listed.
    connect(m_builtin, &BuiltinServers::runningChanged, m_targets, &TargetsPanel::setBuiltinRunning);

    auto *central = new QSplitter(Qt::Horizontal);
    central->setObjectName(QStringLiteral("centralSplitter"));
    central->addWidget(m_scenario);
    m_results->setObjectName(QStringLiteral("resultTabs"));
    m_results->addTab(m_runPage, tr("Run"));
    m_results->addTab(m_matrix, tr("Compare stacks"));
    m_results->setTabToolTip(1,
        tr("The method over transports x codecs x payloads: how much protobuf/gRPC gains over "
           "JSON/HTTP or msgpack-rpc, and how much of it is the codec."));
    m_recorder = new RunRecorder(this);
    {
        // RPCSCOPE_DB points a session (and the tests) at another history, as --db does for the CLI.
        QString error;
        if (!m_recorder->open(qEnvironmentVariable("RPCSCOPE_DB", RunStore::defaultPath()), &error))
            statusBar()->showMessage(tr("Run history unavailable: %1").arg(error), 15000); // runs still run
    }
    m_history = new HistoryPage(m_recorder->store());
    connect(m_recorder, &RunRecorder::failed, this,
        [this](const QString &why) { statusBar()->showMessage(tr("Saving the run: %1").arg(why), 10000); });
    connect(m_recorder, &RunRecorder::runStored, m_history, &HistoryPage::refresh);
    m_compare = new ComparePage;
    m_launcher = new RunLauncher(m_scenario, m_matrix, m_builtin, m_recorder, this);
    m_results->addTab(m_history, tr("History"));
    m_results->setTabToolTip(2, tr("Every run, saved as it goes: open one again, label it, compare runs."));
    m_results->addTab(m_compare, tr("Compare runs"));
    m_results->setTabToolTip(
        3, tr("Runs overlaid, the change per metric with its confidence interval, and the verdict."));
    connect(m_history, &HistoryPage::openRunRequested, this, &MainWindow::openRun);
    connect(m_history, &HistoryPage::compareRequested, this, [this](const QList<qint64> &ids) { compareRuns(ids); });
    connect(m_compare, &ComparePage::comparisonChanged, this, [this] {
        if (!std::exchange(m_announceComparison, false))
            return;
        statusBar()->showMessage(tr("A/B finished: %1").arg(m_compare->comparison().verdictLine()), 30000);
    });
    central->addWidget(m_results);
    central->setStretchFactor(0, 0);
    central->setStretchFactor(1, 1);
    m_scenario->setMinimumWidth(340);
    setCentralWidget(central);

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
    m_statusRate->setFixedSize(m_statusRate->fontMetrics().horizontalAdvance(QStringLiteral("9,999,999 req/s")) + 16,
        m_statusRate->sizeHint().height());

    createMenus();

    connect(m_schemaPanel, &SchemaPanel::methodSelected, m_scenario, &ScenarioPage::setMethod);
    connect(m_schema, &SchemaController::schemaChanged, m_scenario, &ScenarioPage::setSchema);
    connect(m_schema, &SchemaController::statusMessage, statusBar(), &QStatusBar::showMessage);
    connect(m_schema, &SchemaController::schemaLoaded, this, &MainWindow::schemaLoaded);
    connect(m_schema, &SchemaController::schemaFailed, this, &MainWindow::schemaFailed);
    connect(m_schema, &SchemaController::reloadedForImportPaths, this, &MainWindow::schemaReloadedForImportPaths);
    connect(m_documents, &ScenarioDocuments::statusMessage, statusBar(), &QStatusBar::showMessage);
    connect(m_documents, &ScenarioDocuments::recentFilesChanged, this, &MainWindow::updateRecentMenu);
    connect(m_scenario, &ScenarioPage::runRequested, m_launcher, &RunLauncher::startRun);
    connect(m_scenario, &ScenarioPage::stopRequested, m_launcher, &RunLauncher::stopRun);
    connect(m_launcher, &RunLauncher::snapshotAvailable, this, &MainWindow::showSnapshot);
    connect(m_launcher, &RunLauncher::runLaunched, this, &MainWindow::showLaunchedRun);
    connect(m_launcher, &RunLauncher::remoteTargetUsed, m_targets, &TargetsPanel::addRecent);
    connect(m_launcher, &RunLauncher::checksJudged, m_runPage, &RunPage::showChecks);
    connect(m_launcher, &RunLauncher::stateChanged, m_statusState, &QLabel::setText);
    connect(m_launcher, &RunLauncher::statusMessage, statusBar(), &QStatusBar::showMessage);
    connect(m_launcher, &RunLauncher::serverCommandFailed, this, &MainWindow::showServerCommandError);
    connect(m_launcher, &RunLauncher::abStarted, m_compare, &ComparePage::setThreshold);
    connect(m_launcher, &RunLauncher::abFinished, this, &MainWindow::showAbResult);

    setWindowTitle(tr("untitled[*] — rpcscope"));
    setWindowIcon(QIcon(QStringLiteral(":/rpcscope/icons/rpcscope.svg")));
    resize(1400, 860);
    QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
}

MainWindow::~MainWindow() = default;

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
    QAction *open = file->addAction(tr("&Open .proto files…"), this, [this] {
        const QStringList files = QFileDialog::getOpenFileNames(
            this, tr("Open .proto files"), QString(), tr("Protocol Buffers (*.proto);;All files (*)"));
        if (!files.isEmpty())
            openProtoFiles(files);
    });
    open->setObjectName(QStringLiteral("actionOpenProtos"));
    open->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    open->setToolTip(tr("Load .proto files; imports are resolved from their folder and the well-known types."));
    file->addAction(tr("Open &protoset…"), this,
            [this] {
                const QStringList files = QFileDialog::getOpenFileNames(this, tr("Open protosets"), QString(),
                    tr("Protosets (*.protoset *.pb *.desc *.bin);;All files (*)"));
                if (!files.isEmpty())
                    openProtosets(files);
            })
        ->setToolTip(tr("Load compiled descriptors, as protoc --descriptor_set_out --include_imports writes them."));
    file->addAction(tr("Schema from &server reflection…"), this,
            [this] {
                bool ok = false;
                const QString address = QInputDialog::getText(this, tr("Server reflection"),
                    tr("gRPC server address (HOST:PORT):"), QLineEdit::Normal, m_builtin->address(), &ok)
                                            .trimmed();
                if (ok && !address.isEmpty())
                    loadFromReflection(address);
            })
        ->setToolTip(tr("Ask a running gRPC server for its services and messages (grpc.reflection v1 or v1alpha)."));
    file->addSeparator();
    QAction *quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    file->insertSeparator(quit);
    QAction *exportRun = new QAction(tr("&Export run…"), this);
    exportRun->setObjectName(QStringLiteral("actionExportRun"));
    exportRun->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    exportRun->setToolTip(
        tr("Write the run on the Run page as an HTML report, a chart, CSV, JSON, ghz JSON, hgrm or Markdown."));
    connect(exportRun, &QAction::triggered, this, [this] { exportWithDialog(false); });
    file->insertAction(quit, exportRun);
    QAction *exportComparison = new QAction(tr("Export &comparison…"), this);
    exportComparison->setObjectName(QStringLiteral("actionExportComparison"));
    connect(exportComparison, &QAction::triggered, this, [this] { exportWithDialog(true); });
    file->insertAction(quit, exportComparison);
    QAction *import = new QAction(tr("&Import ghz or rpcscope reports…"), this);
    import->setObjectName(QStringLiteral("actionImport"));
    import->setToolTip(tr("Add ghz JSON reports (ghz -O json) or rpcscope JSON reports to the history."));
    connect(import, &QAction::triggered, this, &MainWindow::importWithDialog);
    file->insertAction(quit, import);
    file->insertSeparator(quit);

    QMenu *run = menuBar()->addMenu(tr("&Run"));
    QAction *start = run->addAction(tr("&Run"), this, &MainWindow::startRun);
    start->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    QAction *stop = run->addAction(tr("&Stop"), this, &MainWindow::stopRun);
    stop->setShortcut(QKeySequence(Qt::Key_Escape));

    run->addSeparator();
    QAction *previous = run->addAction(tr("Compare with a &previous run…"), this, &MainWindow::compareWithDialog);
    previous->setObjectName(QStringLiteral("actionCompareWithPrevious"));
    previous->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_B));
    previous->setToolTip(
        tr("The run on the Run page against an earlier run of the same method: before/after in two clicks."));
    QAction *ab = run->addAction(tr("Compare &A/B…"), this, &MainWindow::showAbDialog);
    ab->setObjectName(QStringLiteral("actionCompareAb"));
    ab->setToolTip(tr("Run this scenario against two targets in alternating blocks and compare them."));

    QMenu *help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About rpcscope"), this, &MainWindow::showAbout);
}

bool MainWindow::startEmbeddedDefault(QString *error, const QString &serverProgram)
{
    QString why;
    if (!m_builtin->start(serverProgram, &why)) {
        statusBar()->showMessage(tr("Built-in servers failed to start: %1").arg(why));
        if (error)
            *error = why;
        return false;
    }
    m_statusTarget->setText(m_builtin->description());
    m_scenario->setBuiltinTargets(m_builtin->targets());
    m_targets->setBuiltin(m_builtin->targets(), m_builtin->pid());
    m_schema->useBuiltin();
    m_schemaPanel->selectMethod(QStringLiteral("rpcscope.bench.v1.Bench/Echo"));
    m_scenario->setMethod(QStringLiteral("rpcscope.bench.v1.Bench/Echo"));
    m_scenario->setFills(QStringLiteral("payload=1KiB"));
    setWindowModified(false); // the default is not the user's edit
    return true;
}

QString MainWindow::builtinAddress() const
{
    return m_builtin->address();
}

bool MainWindow::openScenario(const QString &path, QString *error)
{
    return m_documents->open(path, error);
}

bool MainWindow::saveScenario(const QString &path, QString *error)
{
    return m_documents->save(path, error);
}

QString MainWindow::scenarioPath() const
{
    return m_documents->path();
}

void MainWindow::setOpenPathAsker(ScenarioDocuments::PathAsker ask)
{
    m_documents->setOpenPathAsker(std::move(ask));
}

void MainWindow::setUnsavedChangesAsker(std::function<int()> ask)
{
    m_documents->setUnsavedChangesAsker(std::move(ask));
}

void MainWindow::setTrustAsker(std::function<bool(const QString &, const QString &)> ask)
{
    m_documents->setTrustAsker(std::move(ask));
}

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

bool MainWindow::openProtoFiles(const QStringList &files, const QStringList &importPaths)
{
    return m_schema->openProtoFiles(files, importPaths);
}

bool MainWindow::openProtosets(const QStringList &files)
{
    return m_schema->openProtosets(files);
}

void MainWindow::loadFromReflection(const QString &address)
{
    m_schema->loadFromReflection(address);
}

void MainWindow::schemaReloadedForImportPaths()
{
    m_schemaPanel->selectMethod(m_scenario->method());
    setWindowModified(true); // the document names its import paths
}

void MainWindow::startRun()
{
    m_launcher->startRun();
}

void MainWindow::stopRun()
{
    m_launcher->stopRun();
}

bool MainWindow::startAb(const AbRequest &request, QString *error)
{
    return m_launcher->startAb(request, error);
}

RunController *MainWindow::runController() const
{
    return m_launcher->runController();
}

AbController *MainWindow::abController() const
{
    return m_launcher->abController();
}

void MainWindow::showLaunchedRun(const std::shared_ptr<RunRecord> &run, const QString &description)
{
    m_current = run;
    m_runPage->setRunName(m_current->displayName());
    m_runPage->clear();
    m_results->setCurrentWidget(m_runPage);
    m_statusTarget->setText(description);
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

void MainWindow::showAbResult(bool measured, const QString &error)
{
    m_history->refresh();
    // The verdict goes to the status bar when the Compare runs page has computed it (off this thread).
    m_announceComparison = error.isEmpty() && measured;
    if (measured) {
        const auto &records = m_launcher->abController()->records();
        m_compare->setRuns({ records[0], records[1] });
        m_results->setCurrentWidget(m_compare);
    }
}

void MainWindow::showSnapshot(const RunSnapshot &snapshot)
{
    m_runPage->showSnapshot(snapshot);
    QString state = runStateName(snapshot.state);
    state[0] = state[0].toUpper();
    m_statusState->setText(state);
    m_statusRate->setText(tr("%1 req/s").arg(snapshot.requestsPerSecond(), 0, 'f', 0));
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
        openProtosets(protosets);
        event->acceptProposedAction();
    } else if (!files.isEmpty()) {
        openProtoFiles(files, importPaths);
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
