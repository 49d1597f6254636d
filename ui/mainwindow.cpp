#include "mainwindow.h"

#include "abcontroller.h"
#include "abdialog.h"
#include "chartrender.h"
#include "commandserver.h"
#include "comparepage.h"
#include "export/exporter.h"
#include "historypage.h"
#include "htmlreport.h"
#include "matrixpage.h"
#include "store/environment.h"
#include "store/runstore.h"
#include "store/runwriter.h"
#include "runrecorder.h"
#include "runcontroller.h"
#include "runpage.h"
#include "scenariopage.h"
#include "scenario/scenario.h"
#include "schemapanel.h"
#include "report/rawsamples.h"
#include "targetspanel.h"
#include "server/builtingrpcserver.h"
#include "server/builtinhttpserver.h"
#include "server/serverprocess.h"
#include "util/buildinfo.h"
#include "util/units.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QDirIterator>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QIcon>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QSaveFile>
#include <QSettings>
#include <QSplitter>
#include <QInputDialog>
#include <QLineEdit>
#include <QStatusBar>
#include <QThread>
#include <QTimer>
#include <QTabWidget>

namespace rpcscope {

namespace {

/// The formats File > Export offers, as file dialog filters, with the format each stands for.
const QList<QPair<QString, QString>> &exportFilters(bool comparison)
{
    static const QList<QPair<QString, QString>> run{
        {QObject::tr("HTML report (*.html)"), QStringLiteral("html")},
        {QObject::tr("Chart as PNG (*.png)"), QStringLiteral("png")},
        {QObject::tr("Chart as PDF (*.pdf)"), QStringLiteral("pdf")},
        {QObject::tr("Chart as SVG (*.svg)"), QStringLiteral("svg")},
        {QObject::tr("CSV summary (*.csv)"), QStringLiteral("csv")},
        {QObject::tr("CSV histogram buckets (*.csv)"), QStringLiteral("csv-histogram")},
        {QObject::tr("CSV time series (*.csv)"), QStringLiteral("csv-timeline")},
        {QObject::tr("CSV raw samples (*.csv)"), QStringLiteral("csv-raw")},
        {QObject::tr("rpcscope JSON report (*.json)"), QStringLiteral("json")},
        {QObject::tr("ghz JSON report (*.json)"), QStringLiteral("ghz-json")},
        {QObject::tr("HdrHistogram percentiles (*.hgrm)"), QStringLiteral("hgrm")},
        {QObject::tr("Markdown table (*.md)"), QStringLiteral("markdown")},
        {QObject::tr("Text summary (*.txt)"), QStringLiteral("summary")},
    };
    static const QList<QPair<QString, QString>> compared{
        {QObject::tr("HTML comparison report (*.html)"), QStringLiteral("html")},
        {QObject::tr("Overlay chart as PNG (*.png)"), QStringLiteral("png")},
        {QObject::tr("Overlay chart as PDF (*.pdf)"), QStringLiteral("pdf")},
        {QObject::tr("Overlay chart as SVG (*.svg)"), QStringLiteral("svg")},
        {QObject::tr("Markdown table with the verdict (*.md)"), QStringLiteral("markdown")},
        {QObject::tr("CSV summary, one row per run (*.csv)"), QStringLiteral("csv")},
    };
    return comparison ? compared : run;
}

} // namespace

MainWindow::MainWindow(QWidget *parent)
    : QMainWindow(parent)
    , m_schemaPanel(new SchemaPanel)
    , m_targets(new TargetsPanel)
    , m_scenario(new ScenarioPage)
    , m_runPage(new RunPage)
    , m_matrix(new MatrixPage([this](const ScenarioPage::Variation &variation, QString *error) {
        if (m_controller->isRunning()) {
            *error = tr("a single run is going; stop it first");
            return std::optional<ScenarioPage::Prepared>();
        }
        auto prepared = m_scenario->prepare(error, &variation);
        if (prepared && m_builtinProcess && m_builtinTargets.values().contains(prepared->target.address))
            prepared->plan.serverPid = m_builtinProcess->pid();
        return prepared;
    }))
    , m_results(new QTabWidget)
    , m_controller(new RunController(this))
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
    auto *watch = new QTimer(this);
    connect(watch, &QTimer::timeout, this, [this] {
        if (m_builtinProcess)
            m_targets->setBuiltinRunning(m_builtinProcess->isRunning());
    });
    watch->start(1000);

    auto *central = new QSplitter(Qt::Horizontal);
    central->setObjectName(QStringLiteral("centralSplitter"));
    central->addWidget(m_scenario);
    m_results->setObjectName(QStringLiteral("resultTabs"));
    m_results->addTab(m_runPage, tr("Run"));
    m_results->addTab(m_matrix, tr("Compare stacks"));
    m_results->setTabToolTip(1, tr("The method over transports x codecs x payloads: how much protobuf/gRPC gains over "
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
    m_ab = new AbController(m_recorder->store(), m_recorder->writer(), this);
    m_results->addTab(m_history, tr("History"));
    m_results->setTabToolTip(2, tr("Every run, saved as it goes: open one again, label it, compare runs."));
    m_results->addTab(m_compare, tr("Compare runs"));
    m_results->setTabToolTip(3, tr("Runs overlaid, the change per metric with its confidence interval, and the verdict."));
    connect(m_history, &HistoryPage::openRunRequested, this, &MainWindow::openRun);
    connect(m_history, &HistoryPage::compareRequested, this, [this](const QList<qint64> &ids) { compareRuns(ids); });
    connect(m_ab, &AbController::progressed, this, [this] {
        m_statusState->setText(tr("A/B"));
        statusBar()->showMessage(m_ab->progressText());
    });
    connect(m_ab, &AbController::finished, this, [this](const QString &error) {
        m_scenario->setRunning(false);
        m_statusState->setText(tr("Idle"));
        m_history->refresh();
        const auto &records = m_ab->records();
        const bool measured = records[0].snapshot.callsCompleted() > 0 || records[1].snapshot.callsCompleted() > 0;
        // The verdict goes to the status bar when the Compare runs page has computed it (off this thread).
        m_announceComparison = error.isEmpty() && measured;
        if (measured) {
            m_compare->setRuns({records[0], records[1]});
            m_results->setCurrentWidget(m_compare);
        }
        if (!error.isEmpty())
            statusBar()->showMessage(tr("A/B: %1").arg(error));
    });
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
    connect(m_schemaPanel, &SchemaPanel::importPathsChanged, this, [this](const QStringList &paths) {
        if (m_pendingProtos.isEmpty())
            return; // no .proto files in use: the paths serve the next load
        if (loadProtos(m_pendingProtos, paths)) {
            m_schemaPanel->selectMethod(m_scenario->method());
            setWindowModified(true); // the document names its import paths
        }
    });
    connect(m_scenario, &ScenarioPage::edited, this, [this] { setWindowModified(true); });
    connect(m_scenario, &ScenarioPage::runRequested, this, &MainWindow::startRun);
    connect(m_scenario, &ScenarioPage::stopRequested, this, &MainWindow::stopRun);
    connect(m_controller, &RunController::snapshotAvailable, this, &MainWindow::showSnapshot);
    connect(m_controller, &RunController::snapshotAvailable, this,
            [this](const RunSnapshot &s) { m_recorder->progress(m_current.get(), s); });
    m_commandServer = new CommandServer(this);
    connect(m_commandServer, &CommandServer::ready, this, [this](const QString &address) {
        if (!m_pendingRun)
            return;
        std::unique_ptr<ScenarioPage::Prepared> prepared = std::move(m_pendingRun);
        prepared->target.address = prepared->transport.kind == TransportKind::Http && !address.startsWith(QStringLiteral("http"))
            ? QStringLiteral("http://") + address
            : address;
        prepared->plan.serverPid = m_commandServer->pid();
        launchRun(*prepared, std::move(m_pendingRawFile));
    });
    connect(m_commandServer, &CommandServer::failed, this, [this](const QString &error) {
        m_pendingRun.reset();
        m_pendingRawFile.reset();
        m_scenario->setRunning(false);
        m_statusState->setText(tr("Idle"));
        statusBar()->showMessage(tr("The server command did not start"), 15000);
        // Not modal: the window stays usable while the server's output is read.
        auto *box = new QMessageBox(QMessageBox::Warning, tr("Server command"),
                                    tr("The server command did not start:\n%1").arg(error), QMessageBox::Ok, this);
        box->setObjectName(QStringLiteral("serverCommandError"));
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
    });
    connect(m_controller, &RunController::runFinished, this, [this](const RunSnapshot &snapshot) {
        showSnapshot(snapshot);
        m_recorder->finish(m_current.get(), snapshot, m_controller->rawSamples());
        std::vector<CheckResult> checks;
        for (const Check &check : m_runChecks)
            checks.push_back(evaluateCheck(check, snapshot));
        m_runPage->showChecks(checks);
        m_commandServer->stop();
        m_scenario->setRunning(false);
        statusBar()->showMessage(tr("Run %1: %2 calls, %3 failed").arg(runStateName(snapshot.state))
                                     .arg(snapshot.callsCompleted()).arg(snapshot.callsFailed()), 10000);
        writeRawSamples();
    });
    m_askOpenPath = [this](const QString &caption, const QString &filter) {
        return QFileDialog::getOpenFileName(this, caption, QString(), filter);
    };
    m_askTrust = [this](const QString &path, const QString &command) {
        return QMessageBox::warning(this, tr("Server command"),
                                    tr("%1 starts this program when it runs:\n\n%2\n\nRun it? Choose No to use the built-in "
                                       "server instead.")
                                        .arg(QFileInfo(path).fileName(), command),
                                    QMessageBox::Yes | QMessageBox::No, QMessageBox::No)
            == QMessageBox::Yes;
    };
    m_askUnsaved = [this] {
        return static_cast<int>(
            QMessageBox::question(this, tr("Unsaved scenario"), tr("The scenario has unsaved changes. Save them?"),
                QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save));
    };

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
    named(file->addAction(tr("&New scenario"), this, [this] {
        if (maybeSave())
            newScenario();
    }), "actionNewScenario")->setShortcut(QKeySequence::New);
    named(file->addAction(tr("&Open scenario…"), this, [this] {
        if (!maybeSave())
            return;
        const QString path = m_askOpenPath(
            tr("Open scenario"), tr("rpcscope scenarios (*.rpcscope.json);;JSON (*.json);;All files (*)"));
        QString error;
        if (!path.isEmpty() && !openScenario(path, &error))
            QMessageBox::warning(this, tr("Open scenario"), error);
    }), "actionOpenScenario")->setShortcut(QKeySequence::Open);
    m_recentMenu = file->addMenu(tr("Open &recent"));
    named(file->addAction(tr("&Save scenario"), this, [this] {
        QString error;
        const QString path = m_scenarioPath.isEmpty()
            ? QFileDialog::getSaveFileName(this, tr("Save scenario"), tr("scenario.rpcscope.json"),
                                           tr("rpcscope scenarios (*.rpcscope.json)"))
            : m_scenarioPath;
        if (!path.isEmpty() && !saveScenario(path, &error))
            QMessageBox::warning(this, tr("Save scenario"), error);
    }), "actionSaveScenario")->setShortcut(QKeySequence::Save);
    named(file->addAction(tr("Save scenario &as…"), this, [this] {
        QString error;
        const QString path = QFileDialog::getSaveFileName(this, tr("Save scenario as"),
                                                          m_scenarioPath.isEmpty() ? tr("scenario.rpcscope.json") : m_scenarioPath,
                                                          tr("rpcscope scenarios (*.rpcscope.json)"));
        if (!path.isEmpty() && !saveScenario(path, &error))
            QMessageBox::warning(this, tr("Save scenario"), error);
    }), "actionSaveScenarioAs")->setShortcut(QKeySequence::SaveAs);
    file->addSeparator();
    updateRecentMenu();
    QAction *open = file->addAction(tr("&Open .proto files…"), this, [this] {
        const QStringList files = QFileDialog::getOpenFileNames(this, tr("Open .proto files"), QString(),
                                                                tr("Protocol Buffers (*.proto);;All files (*)"));
        if (!files.isEmpty())
            openProtoFiles(files);
    });
    open->setObjectName(QStringLiteral("actionOpenProtos"));
    open->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    open->setToolTip(tr("Load .proto files; imports are resolved from their folder and the well-known types."));
    file->addAction(tr("Open &protoset…"), this, [this] {
        const QStringList files = QFileDialog::getOpenFileNames(
            this, tr("Open protosets"), QString(),
            tr("Protosets (*.protoset *.pb *.desc *.bin);;All files (*)"));
        if (!files.isEmpty())
            openProtosets(files);
    })->setToolTip(tr("Load compiled descriptors, as protoc --descriptor_set_out --include_imports writes them."));
    file->addAction(tr("Schema from &server reflection…"), this, [this] {
        bool ok = false;
        const QString address = QInputDialog::getText(this, tr("Server reflection"),
                                                      tr("gRPC server address (HOST:PORT):"), QLineEdit::Normal,
                                                      m_builtinAddress, &ok)
                                    .trimmed();
        if (ok && !address.isEmpty())
            loadFromReflection(address);
    })->setToolTip(tr("Ask a running gRPC server for its services and messages (grpc.reflection v1 or v1alpha)."));
    file->addSeparator();
    QAction *quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    file->insertSeparator(quit);
    QAction *exportRun = new QAction(tr("&Export run…"), this);
    exportRun->setObjectName(QStringLiteral("actionExportRun"));
    exportRun->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    exportRun->setToolTip(tr("Write the run on the Run page as an HTML report, a chart, CSV, JSON, ghz JSON, hgrm or Markdown."));
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
    previous->setToolTip(tr("The run on the Run page against an earlier run of the same method: before/after in two clicks."));
    QAction *ab = run->addAction(tr("Compare &A/B…"), this, &MainWindow::showAbDialog);
    ab->setObjectName(QStringLiteral("actionCompareAb"));
    ab->setToolTip(tr("Run this scenario against two targets in alternating blocks and compare them."));

    QMenu *help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About rpcscope"), this, &MainWindow::showAbout);
}

bool MainWindow::startEmbeddedDefault(QString *error, const QString &serverProgram)
{
    QString why;
    const QString cli = serverProgram.isEmpty()
        ? QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("rpcscope-cli"))
        : serverProgram;
    m_cliProgram = cli;
    // The three built-in servers in a child process (rpcscope-cli serve all), so the client's CPU is measured
    // alone and the servers' can be measured too; in this process only when the CLI is missing.
    if (QFileInfo(cli).isExecutable()) {
        m_builtinProcess = std::make_unique<ServerProcess>();
        if (m_builtinProcess->start(cli, {QStringLiteral("serve"), QStringLiteral("all")},
                                    QStringLiteral("^(grpc=\\S+ http=\\S+ msgpack=\\S+)$"), std::chrono::seconds(10), &why)) {
            for (const QString &part : m_builtinProcess->readyText().split(QLatin1Char(' '))) {
                const QString value = part.section(QLatin1Char('='), 1);
                if (part.startsWith(QStringLiteral("grpc=")))
                    m_builtinTargets.insert(TransportKind::Grpc, value);
                else if (part.startsWith(QStringLiteral("http=")))
                    m_builtinTargets.insert(TransportKind::Http, value);
                else if (part.startsWith(QStringLiteral("msgpack=")))
                    m_builtinTargets.insert(TransportKind::Msgpack, value);
            }
            m_builtinAddress = m_builtinTargets.value(TransportKind::Grpc);
            m_statusTarget->setText(tr("Built-in servers (pid %1): gRPC %2, HTTP %3, msgpack-rpc %4")
                                        .arg(m_builtinProcess->pid())
                                        .arg(m_builtinAddress, m_builtinTargets.value(TransportKind::Http),
                                             m_builtinTargets.value(TransportKind::Msgpack)));
        } else {
            m_builtinProcess.reset();
        }
    }
    if (m_builtinAddress.isEmpty()) {
        m_builtin = std::make_unique<BuiltinGrpcServer>();
        m_builtinHttp = std::make_unique<BuiltinHttpServer>();
        m_builtinMsgpack = std::make_unique<BuiltinMsgpackServer>();
        if (!m_builtin->start(QStringLiteral("127.0.0.1"), 0, 0, &why) || !m_builtinHttp->start(QStringLiteral("127.0.0.1"), 0, 0, &why)
            || !m_builtinMsgpack->start(QStringLiteral("127.0.0.1"), 0, 0, &why)) {
            m_builtin.reset();
            m_builtinHttp.reset();
            m_builtinMsgpack.reset();
            statusBar()->showMessage(tr("Built-in servers failed to start: %1").arg(why));
            if (error)
                *error = why;
            return false;
        }
        m_builtinAddress = m_builtin->address();
        m_builtinTargets = {{TransportKind::Grpc, m_builtinAddress},
                            {TransportKind::Http, m_builtinHttp->url()},
                            {TransportKind::Msgpack, m_builtinMsgpack->address()}};
        m_statusTarget->setText(tr("Built-in servers in this process (client CPU includes theirs): gRPC %1, HTTP %2, "
                                   "msgpack-rpc %3")
                                    .arg(m_builtinAddress, m_builtinHttp->url(), m_builtinMsgpack->address()));
    }
    m_scenario->setBuiltinTargets(m_builtinTargets);
    m_targets->setBuiltin(m_builtinTargets, m_builtinProcess ? m_builtinProcess->pid() : 0);
    setSchema(builtinBenchSchema(), tr("built in"));
    m_schemaPanel->selectMethod(QStringLiteral("rpcscope.bench.v1.Bench/Echo"));
    m_scenario->setMethod(QStringLiteral("rpcscope.bench.v1.Bench/Echo"));
    m_scenario->setFills(QStringLiteral("payload=1KiB"));
    setWindowModified(false); // the default is not the user's edit
    return true;
}

QString MainWindow::builtinAddress() const
{
    return m_builtinAddress;
}

bool MainWindow::applyLoaded(const SchemaLoadResult &result, const QString &origin)
{
    m_schemaPanel->setErrors(result.errors);
    if (!result.ok()) {
        statusBar()->showMessage(tr("%n schema error(s); the previous schema stays loaded", nullptr,
                                    static_cast<int>(result.errors.size())), 15000);
        Q_EMIT schemaFailed(result.errorText());
        return false;
    }
    setSchema(result.schema, origin);
    statusBar()->showMessage(tr("Loaded %1").arg(origin), 10000);
    Q_EMIT schemaLoaded(origin);
    return true;
}

bool MainWindow::openProtoFiles(const QStringList &files, const QStringList &importPaths)
{
    QStringList paths = m_schemaPanel->importPaths();
    for (const QString &p : importPaths) {
        if (!paths.contains(p))
            paths << p;
    }
    return loadProtos(files, paths);
}

bool MainWindow::loadProtos(const QStringList &files, const QStringList &importPaths)
{
    QStringList names;
    QStringList absolute;
    for (const QString &f : files) {
        names << QFileInfo(f).fileName();
        absolute << QFileInfo(f).absoluteFilePath();
    }
    m_pendingProtos = absolute;
    m_schemaPanel->setImportPaths(importPaths);
    if (!applyLoaded(loadProtoFiles(files, importPaths), names.join(QStringLiteral(", "))))
        return false;
    m_schemaProtos = absolute;
    m_schemaImportPaths = importPaths;
    m_schemaProtosets.clear();
    return true;
}

bool MainWindow::openProtosets(const QStringList &files)
{
    QStringList names;
    for (const QString &f : files)
        names << QFileInfo(f).fileName();
    if (!applyLoaded(loadProtoset(files), names.join(QStringLiteral(", "))))
        return false;
    m_pendingProtos.clear();
    m_schemaProtos.clear();
    m_schemaImportPaths.clear();
    m_schemaProtosets.clear();
    for (const QString &f : files)
        m_schemaProtosets << QFileInfo(f).absoluteFilePath();
    return true;
}

void MainWindow::loadFromReflection(const QString &address)
{
    statusBar()->showMessage(tr("Asking %1 for its schema (server reflection)…").arg(address));
    ReflectionTarget target;
    target.address = address;
    target.timeout = std::chrono::seconds(10);
    // Reflection waits on the network: never on the GUI thread. The result comes back as a queued call.
    auto result = std::make_shared<SchemaLoadResult>();
    QThread *worker = QThread::create([target, result] { *result = loadSchemaFromReflection(target); });
    connect(worker, &QThread::finished, this, [this, worker, result, address] {
        worker->deleteLater();
        if (applyLoaded(*result, tr("reflection at %1").arg(address))) {
            // A document then names no schema source: rpcscope-cli asks the server by reflection too.
            m_pendingProtos.clear();
            m_schemaProtos.clear();
            m_schemaImportPaths.clear();
            m_schemaProtosets.clear();
        }
    });
    worker->start();
}

bool MainWindow::openScenario(const QString &path, QString *error)
{
    std::optional<Scenario> scenario = Scenario::load(path, error);
    if (!scenario)
        return false;
    // A document can name a program to start: the user sees the command and decides before anything runs.
    bool commandRefused = false;
    if (looksLikeCommand(scenario->target) && !m_askTrust(path, scenario->target)) {
        scenario->target = QStringLiteral("builtin");
        commandRefused = true;
    }
    // Its schema first, so its method can be picked; a schema that does not load leaves everything as it was.
    bool schemaOk = true;
    const QStringList previousPaths = m_schemaPanel->importPaths();
    const QStringList previousPending = m_pendingProtos;
    if (!scenario->protos.isEmpty()) {
        schemaOk = loadProtos(scenario->protos, scenario->importPaths); // the document's paths, not the last one's
    } else if (!scenario->protosets.isEmpty()) {
        schemaOk = openProtosets(scenario->protosets);
    } else {
        setSchema(builtinBenchSchema(), tr("built in"));
        m_pendingProtos.clear();
        m_schemaProtos.clear();
        m_schemaImportPaths.clear();
        m_schemaProtosets.clear();
    }
    if (schemaOk && scenario->protos.isEmpty())
        m_schemaPanel->setImportPaths(scenario->importPaths);
    if (!schemaOk) {
        m_schemaPanel->setImportPaths(previousPaths);
        m_pendingProtos = previousPending;
        if (error)
            *error = tr("%1: its schema does not load (see the schema dock)").arg(path);
        return false;
    }
    m_schemaPanel->selectMethod(scenario->method);
    m_scenario->setScenario(*scenario);
    setScenarioPath(path);
    if (commandRefused) {
        setWindowModified(true);
        statusBar()->showMessage(tr("Opened %1; its server command is not used (the target is the built-in server)")
                                     .arg(QFileInfo(path).fileName()),
                                 15000);
    } else {
        statusBar()->showMessage(tr("Opened %1").arg(QFileInfo(path).fileName()), 10000);
    }
    return true;
}

bool MainWindow::saveScenario(const QString &path, QString *error)
{
    Scenario scenario = m_scenario->scenario();
    scenario.protos = m_schemaProtos;
    scenario.importPaths = m_schemaImportPaths;
    scenario.protosets = m_schemaProtosets;
    if (!scenario.save(path, error))
        return false;
    setScenarioPath(path);
    statusBar()->showMessage(tr("Saved %1").arg(QFileInfo(path).fileName()), 10000);
    return true;
}

void MainWindow::newScenario()
{
    setSchema(builtinBenchSchema(), tr("built in"));
    m_schemaPanel->setErrors({});
    m_schemaPanel->setImportPaths({});
    m_pendingProtos.clear();
    m_schemaProtos.clear();
    m_schemaImportPaths.clear();
    m_schemaProtosets.clear();
    Scenario fresh;
    fresh.method = QStringLiteral("rpcscope.bench.v1.Bench/Echo");
    fresh.fills = {QStringLiteral("payload=1KiB")};
    fresh.calls = 20000;
    fresh.concurrency = 20;
    m_schemaPanel->selectMethod(fresh.method);
    m_scenario->setScenario(fresh);
    setScenarioPath(QString());
}

void MainWindow::setScenarioPath(const QString &path)
{
    m_scenarioPath = path;
    setWindowModified(false);
    setWindowTitle((path.isEmpty() ? tr("untitled") : QFileInfo(path).fileName()) + QStringLiteral("[*] — rpcscope"));
    if (path.isEmpty())
        return;
    QSettings settings;
    QStringList recent = settings.value(QStringLiteral("scenarios/recent")).toStringList();
    recent.removeAll(QFileInfo(path).absoluteFilePath());
    recent.prepend(QFileInfo(path).absoluteFilePath());
    settings.setValue(QStringLiteral("scenarios/recent"), recent.mid(0, 10));
    updateRecentMenu();
}

void MainWindow::updateRecentMenu()
{
    if (!m_recentMenu)
        return;
    m_recentMenu->clear();
    const QStringList recent = QSettings().value(QStringLiteral("scenarios/recent")).toStringList();
    for (const QString &path : recent) {
        m_recentMenu->addAction(QFileInfo(path).fileName(), this, [this, path] {
            QString error;
            if (maybeSave() && !openScenario(path, &error))
                QMessageBox::warning(this, tr("Open scenario"), error);
        })->setToolTip(path);
    }
    m_recentMenu->setEnabled(!recent.isEmpty());
}

bool MainWindow::maybeSave()
{
    if (!isWindowModified())
        return true;
    const int answer = m_askUnsaved();
    if (answer == QMessageBox::Cancel)
        return false;
    if (answer == QMessageBox::Discard)
        return true;
    QString error;
    const QString path = m_scenarioPath.isEmpty()
        ? QFileDialog::getSaveFileName(this, tr("Save scenario"), tr("scenario.rpcscope.json"),
                                       tr("rpcscope scenarios (*.rpcscope.json)"))
        : m_scenarioPath;
    if (path.isEmpty())
        return false;
    if (!saveScenario(path, &error)) {
        QMessageBox::warning(this, tr("Save scenario"), error);
        return false;
    }
    return true;
}

void MainWindow::setSchema(const Schema &schema, const QString &origin)
{
    m_schema = schema;
    m_schemaPanel->setSchema(schema, origin);
    m_scenario->setSchema(schema);
}

void MainWindow::startRun()
{
    if (m_controller->isRunning())
        return;
    if (m_matrix->isRunning()) {
        statusBar()->showMessage(tr("Cannot run: the stack comparison is running; stop it first"), 10000);
        return;
    }
    QString error;
    auto prepared = m_scenario->prepare(&error);
    if (prepared && m_builtinProcess && m_builtinTargets.values().contains(prepared->target.address))
        prepared->plan.serverPid = m_builtinProcess->pid(); // sampled for the server's CPU and RSS
    std::unique_ptr<QSaveFile> rawFile;
    if (prepared && !prepared->rawSamplesPath.isEmpty()) {
        // Opened before the run, as the CLI does: an unwritable path is known before any load is sent.
        rawFile = std::make_unique<QSaveFile>(prepared->rawSamplesPath);
        if (!rawFile->open(QIODevice::WriteOnly)) {
            statusBar()->showMessage(
                tr("Cannot run: raw samples %1: %2").arg(prepared->rawSamplesPath, rawFile->errorString()), 10000);
            return;
        }
    }
    if (!prepared) {
        statusBar()->showMessage(tr("Cannot run: %1").arg(error), 10000);
        return;
    }
    if (!prepared->serverCommand.isEmpty()) {
        // The server comes first: started off the GUI thread; the run follows when it is ready.
        ServerCommand command;
        command.command = prepared->serverCommand;
        m_pendingRun = std::make_unique<ScenarioPage::Prepared>(*prepared);
        m_pendingRawFile = std::move(rawFile);
        m_scenario->setRunning(true);
        m_statusState->setText(tr("Starting"));
        statusBar()->showMessage(tr("Starting %1 ...").arg(prepared->serverCommand));
        m_commandServer->start(command);
        return;
    }
    launchRun(*prepared, std::move(rawFile));
}

void MainWindow::launchRun(const ScenarioPage::Prepared &preparedRun, std::unique_ptr<QSaveFile> rawFile)
{
    QString error;
    const ScenarioPage::Prepared *prepared = &preparedRun;
    if (!m_controller->start(prepared->transport, prepared->target, prepared->call, prepared->plan, &error)) {
        statusBar()->showMessage(tr("Cannot run: %1").arg(error), 10000);
        m_scenario->setRunning(false);
        m_commandServer->stop();
        return;
    }
    m_rawSamplesFile = std::move(rawFile);
    // The run goes into the history from its first interval on (see RunRecorder).
    m_current = std::make_unique<RunRecord>();
    m_current->method = m_scenario->method();
    m_current->transport = transportName(prepared->transport.kind);
    m_current->codec = codecName(prepared->transport.codec.value_or(defaultCodec(prepared->transport.kind)));
    const bool builtinTarget = m_builtinTargets.values().contains(prepared->target.address);
    m_current->target = builtinTarget                          ? QStringLiteral("builtin")
        : !prepared->serverCommand.isEmpty() ? prepared->serverCommand
                                             : prepared->target.address;
    if (!prepared->serverCommand.isEmpty()) {
        ServerCommand command;
        command.command = prepared->serverCommand;
        m_current->server = command.describe();
    }
    m_current->scenario = QJsonDocument::fromJson(m_scenario->scenario().toJson()).object();
    m_current->environment = environmentFingerprint();
    if (builtinTarget && m_builtinProcess)
        m_current->server = QJsonObject{{QStringLiteral("command"), QStringLiteral("rpcscope-cli serve all")}};
    m_current->startedAt = QDateTime::currentDateTimeUtc();
    QString storeError;
    if (m_recorder->store() && !m_recorder->begin(m_current.get(), &storeError))
        statusBar()->showMessage(tr("The run is not saved: %1").arg(storeError), 10000);
    m_runPage->setRunName(m_current->displayName());
    if (prepared->transport.kind != TransportKind::InProcess && !m_builtinTargets.values().contains(prepared->target.address))
        m_targets->addRecent(prepared->transport.kind, prepared->target.address);
    m_runPage->clear();
    m_runChecks = prepared->checks;
    m_results->setCurrentWidget(m_runPage);
    m_scenario->setRunning(true);
    m_statusTarget->setText(prepared->transport.kind == TransportKind::InProcess
                                ? tr("%1, no RPC (%2 codec only)").arg(m_scenario->method(), codecName(*prepared->transport.codec))
                                : tr("%1 → %2 (%3/%4)")
                                      .arg(m_scenario->method(), prepared->target.address,
                                           transportName(prepared->transport.kind), codecName(*prepared->transport.codec)));
}

void MainWindow::writeRawSamples()
{
    if (!m_rawSamplesFile)
        return;
    const std::unique_ptr<QSaveFile> file = std::move(m_rawSamplesFile);
    const std::vector<RawSample> samples = m_controller->rawSamples();
    if (writeRawSamplesCsv(*file, samples) && file->commit())
        statusBar()->showMessage(
            tr("Wrote %n raw sample(s) to %1", nullptr, static_cast<int>(samples.size())).arg(file->fileName()), 15000);
    else
        statusBar()->showMessage(tr("Raw samples %1: %2").arg(file->fileName(), file->errorString()), 15000);
}

void MainWindow::stopRun()
{
    m_controller->stop();
    if (m_ab->isRunning())
        m_ab->stop();
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
        text += QStringLiteral("<tr><td><b>%1</b>&nbsp;&nbsp;</td><td>%2</td></tr>").arg(name.toHtmlEscaped(), version.toHtmlEscaped());
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
            QDirIterator it(info.absoluteFilePath(), {QStringLiteral("*.proto")}, QDir::Files, QDirIterator::Subdirectories);
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
    if (!maybeSave()) {
        event->ignore();
        return;
    }
    if (m_controller->isRunning()) {
        // Kept as a stopped run, not left for the next start to find as interrupted.
        m_controller->stop();
        RunSnapshot last = m_controller->lastSnapshot();
        last.state = RunState::Stopped;
        m_recorder->finish(m_current.get(), last, m_controller->rawSamples());
    }
    m_ab->stopAndFinish(); // an A/B run, too, is kept as stopped with what both sides measured
    if (!m_recorder->flush(std::chrono::seconds(10)))
        qWarning("rpcscope: the run history is still being written; the writer finishes before the program ends");
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    QMainWindow::closeEvent(event);
}

RunStore *MainWindow::runStore() const
{
    return m_recorder->store();
}

RunWriter *MainWindow::runWriter() const
{
    return m_recorder->writer();
}

const RunRecord *MainWindow::currentRun() const
{
    return m_current.get();
}

bool MainWindow::openRun(qint64 id)
{
    if (!m_recorder->store())
        return false;
    if (m_controller->isRunning()) {
        statusBar()->showMessage(tr("A run is going: stop it before opening another"), 10000);
        return false;
    }
    m_recorder->flush(std::chrono::seconds(5)); // a run that just ended is read with its end, not before it
    QString error;
    std::optional<RunRecord> run = m_recorder->store()->load(id, &error);
    if (!run) {
        statusBar()->showMessage(error, 10000);
        return false;
    }
    m_current = std::make_unique<RunRecord>(std::move(*run));
    m_runPage->clear();
    m_runPage->setRunName(m_current->displayName());
    m_results->setCurrentWidget(m_runPage);
    m_runPage->showSnapshot(m_current->snapshot);
    m_statusTarget->setText(tr("Run #%1 from the history: %2 → %3 (%4/%5), %6")
                                .arg(m_current->id)
                                .arg(m_current->method, m_current->target, m_current->transport, m_current->codec,
                                     m_current->status));
    return true;
}

bool MainWindow::compareRuns(const QList<qint64> &ids)
{
    if (!m_recorder->store())
        return false;
    m_recorder->flush(std::chrono::seconds(5)); // a run that just ended is read with its end, not before it
    QList<RunRecord> runs;
    QString error;
    for (const qint64 id : ids) {
        std::optional<RunRecord> run = m_recorder->store()->load(id, &error);
        if (!run) {
            statusBar()->showMessage(error, 10000);
            return false;
        }
        runs << std::move(*run);
    }
    m_compare->setRuns(runs);
    m_results->setCurrentWidget(m_compare);
    return true;
}

bool MainWindow::exportTo(const QString &path, const QString &format, bool comparison, QString *error)
{
    QList<const RunRecord *> runs;
    if (comparison) {
        for (const RunRecord &r : m_compare->runs())
            runs << &r;
        if (runs.size() < 2) {
            *error = tr("No comparison to export: compare two or more runs first (History > Compare, or Run > Compare A/B).");
            return false;
        }
    } else {
        if (!m_current || (m_current->snapshot.callsCompleted() == 0 && m_controller->isRunning())) {
            *error = tr("No run to export: run the scenario or open a run from the History.");
            return false;
        }
        if (m_current->snapshot.callsCompleted() == 0 && m_current->snapshot.latency.isEmpty())
            m_current->snapshot = m_controller->lastSnapshot();
        runs << m_current.get();
    }
    // The chart on screen is the one written.
    const ChartKind kind = comparison ? static_cast<ChartKind>(m_compare->findChild<QTabWidget *>()->currentIndex())
                                      : RunPage::chartKind(static_cast<RunPage::Chart>(m_runPage->chartTabs()->currentIndex()));
    if (format == u"html") {
        const QByteArray html = comparison ? htmlComparisonReport(runs, m_compare->comparison()) : htmlReport(*runs.first());
        return writeFileAtomically(path, html, error);
    }
    if (format == u"png" || format == u"pdf" || format == u"svg") {
        const ChartFormat chart = format == u"png" ? ChartFormat::Png : format == u"pdf" ? ChartFormat::Pdf : ChartFormat::Svg;
        ChartOptions options;
        options.scale = chart == ChartFormat::Png ? 2.0 : 1.0;
        return renderChart(runs, kind, chart, options, path, error);
    }
    const std::optional<ExportFormat> parsed = parseExportFormat(format);
    if (!parsed || !isTextFormat(*parsed)) {
        *error = tr("\"%1\" is not an export format").arg(format);
        return false;
    }
    QList<RunRecord> copies;
    for (const RunRecord *r : runs)
        copies << *r;
    const QByteArray data = comparison ? exportRuns(copies, *parsed, error) : exportRun(copies.first(), *parsed, error);
    if (data.isEmpty() && !error->isEmpty())
        return false;
    return writeFileAtomically(path, data, error);
}

void MainWindow::exportWithDialog(bool comparison)
{
    const auto &filters = exportFilters(comparison);
    QStringList names;
    for (const auto &[filter, format] : filters)
        names << filter;
    QString selected = names.first();
    const QString base = comparison ? QStringLiteral("comparison")
                                    : (m_current ? m_current->displayName() : QStringLiteral("run"))
                                          .replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9._-]+")), QStringLiteral("-"));
    QString path = QFileDialog::getSaveFileName(this, comparison ? tr("Export comparison") : tr("Export run"),
                                                QDir::home().filePath(base), names.join(QStringLiteral(";;")), &selected);
    if (path.isEmpty())
        return;
    QString format = filters.value(static_cast<int>(names.indexOf(selected))).second;
    if (QFileInfo(path).suffix().isEmpty()) {
        const QString suffix = selected.section(QStringLiteral("*."), 1).section(u')', 0, 0);
        path += u'.' + suffix;
    }
    QString error;
    if (exportTo(path, format, comparison, &error))
        statusBar()->showMessage(tr("Wrote %1").arg(path), 15000);
    else
        QMessageBox::warning(this, tr("Export"), error);
}

int MainWindow::importReports(const QStringList &files, QString *error)
{
    const int imported = m_recorder->importReports(files, error);
    m_history->refresh();
    return imported;
}

void MainWindow::importWithDialog()
{
    const QStringList files = QFileDialog::getOpenFileNames(this, tr("Import ghz or rpcscope reports"), QString(),
                                                            tr("JSON reports (*.json);;All files (*)"));
    if (files.isEmpty())
        return;
    QString error;
    const int imported = importReports(files, &error);
    if (!error.isEmpty())
        QMessageBox::warning(this, tr("Import"), error);
    statusBar()->showMessage(tr("Imported %n run(s) into the history", nullptr, imported), 15000);
    m_results->setCurrentWidget(m_history);
}

std::vector<RunListEntry> MainWindow::baselineCandidates() const
{
    if (!runStore() || !m_current || m_current->method.isEmpty())
        return {};
    RunFilter filter;
    filter.method = m_current->method;
    filter.limit = 51;
    QString error;
    std::vector<RunListEntry> runs = runStore()->list(filter, &error);
    // The filter matches by substring; a baseline is a run of this very method.
    std::erase_if(runs, [this](const RunListEntry &e) { return e.id == m_current->id || e.method != m_current->method; });
    if (runs.size() > 50)
        runs.resize(50);
    return runs;
}

bool MainWindow::compareCurrentWith(qint64 baselineId)
{
    if (!m_current || m_current->id <= 0 || m_controller->isRunning()) {
        statusBar()->showMessage(tr("Nothing to compare: finish a run, or open one from the History."), 10000);
        return false;
    }
    return compareRuns({baselineId, m_current->id});
}

void MainWindow::compareWithDialog()
{
    const std::vector<RunListEntry> runs = baselineCandidates();
    if (!m_current || m_current->id <= 0 || runs.empty()) {
        QMessageBox::information(this, tr("Compare with a previous run"),
                                 !m_current || m_current->id <= 0
                                     ? tr("Run the scenario first (or open a run from the History): it is compared with an "
                                          "earlier run of the same method.")
                                     : tr("The history has no other run of %1 to compare with.").arg(m_current->method));
        return;
    }
    QStringList items;
    for (const RunListEntry &e : runs) {
        items << tr("#%1  %2  %3  p50 %4  %5")
                     .arg(e.id)
                     .arg(e.startedAt.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm")),
                          e.name.isEmpty() ? e.target : e.name, formatNanos(static_cast<double>(e.p50Ns)),
                          e.labels.join(QStringLiteral(", ")));
    }
    bool ok = false;
    const QString picked = QInputDialog::getItem(this, tr("Compare with a previous run"),
                                                 tr("Baseline for run #%1 (%2):").arg(m_current->id).arg(m_current->method),
                                                 items, 0, false, &ok);
    if (ok)
        compareCurrentWith(runs[static_cast<size_t>(items.indexOf(picked))].id);
}

void MainWindow::showAbDialog()
{
    AbDialog dialog(this);
    if (dialog.exec() != QDialog::Accepted)
        return;
    QString error;
    if (!startAb(dialog.request(), &error))
        QMessageBox::warning(this, tr("Compare A/B"), error);
}

bool MainWindow::startAb(const AbRequest &request, QString *error)
{
    if (m_controller->isRunning() || m_ab->isRunning() || m_matrix->isRunning()) {
        *error = tr("A run is going; stop it first.");
        return false;
    }
    auto prepared = m_scenario->prepare(error);
    if (!prepared)
        return false;
    if (prepared->transport.kind == TransportKind::InProcess) {
        *error = tr("The no-RPC baseline calls no server: pick a transport to compare two servers.");
        return false;
    }
    if (prepared->plan.totalCalls == 0 && prepared->plan.duration.count() <= 0) {
        *error = tr("An A/B run needs an end: set a number of calls or a duration.");
        return false;
    }
    prepared->plan.serverPid = 0;
    std::array<AbSide, 2> sides{AbSide{prepared->transport, prepared->target, prepared->call, prepared->plan},
                                AbSide{prepared->transport, prepared->target, prepared->call, prepared->plan}};
    std::array<RunRecord, 2> records;
    const QJsonObject scenario = QJsonDocument::fromJson(m_scenario->scenario().toJson()).object();
    for (int i = 0; i < 2; ++i) {
        RunRecord &r = records[static_cast<size_t>(i)];
        r.name = (i == 0 ? QStringLiteral("A: ") : QStringLiteral("B: ")) + request.targetText(i).left(40);
        r.labels = {i == 0 ? QStringLiteral("A") : QStringLiteral("B")};
        r.method = m_scenario->method();
        r.transport = transportName(prepared->transport.kind);
        r.codec = codecName(prepared->transport.codec.value_or(defaultCodec(prepared->transport.kind)));
        r.target = request.targetText(i);
        r.scenario = scenario;
        r.environment = environmentFingerprint();
    }
    const QString cli = m_cliProgram.isEmpty()
        ? QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("rpcscope-cli"))
        : m_cliProgram;
    if (!m_ab->start(sides, request, cli, transportName(prepared->transport.kind), records, error))
        return false;
    m_compare->setThreshold(request.threshold);
    m_scenario->setRunning(true);
    statusBar()->showMessage(m_ab->progressText());
    return true;
}

} // namespace rpcscope
