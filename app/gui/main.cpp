#include "historypage.h"
#include "mainwindow.h"
#include "matrixpage.h"
#include "runcontroller.h"
#include "runlauncher.h"
#include "scenariopage.h"
#include "schemapanel.h"
#include "stallwatchdog.h"
#include "util/buildinfo.h"

#include <QApplication>

#include <QCommandLineParser>
#include <QFile>
#include <QLineEdit>
#include <QSpinBox>
#include <QStatusBar>
#include <QTimer>
#include <absl/synchronization/mutex.h>
#include <malloc.h>

#include <memory>

namespace {

/// Process-wide settings made before anything starts: abseil's mutex bookkeeping off, freed buffers kept.
void tuneProcess()
{
    // See app/cli/main.cpp: abseil's per-mutex deadlock bookkeeping costs client CPU on every gRPC call.
    absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
    // Keep freed message buffers instead of handing each one back to the kernel: with glibc's defaults every
    // large reply is an mmap/munmap pair and its pages fault in again on the next call (1 MiB replies: client
    // CPU 911 -> 368 us/call with --discard-response, 498 -> 433 decoded).
    mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
    mallopt(M_TRIM_THRESHOLD, 256 * 1024 * 1024);
}

/// The application's name, organization, version and desktop entry.
void setApplicationIdentity()
{
    QApplication::setApplicationName(QStringLiteral("rpcscope"));
    QApplication::setOrganizationName(QStringLiteral("rpcscope"));
    // As rpcscope-cli --version and the About box say it: the version and the source revision built.
    QApplication::setApplicationVersion(QStringLiteral(RPCSCOPE_VERSION " (%1)").arg(rpcscope::gitRevision()));
    // The desktop entry a desktop matches this window to (its icon, its name in the dock): packaging/*.desktop.
    QGuiApplication::setDesktopFileName(QStringLiteral("org.rpcscope.rpcscope"));
}

/// The GUI's command-line options and positional files.
void addOptions(QCommandLineParser &parser)
{
    parser.setApplicationDescription(QStringLiteral("rpcscope: a workbench for RPC performance."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addOption({ QStringLiteral("run"), QStringLiteral("Start the default scenario right away.") });
    parser.addOption({ QStringLiteral("send-once"),
        QStringLiteral("Send the scenario's request once right away; its reply shows in the Reply tab.") });
    parser.addOption({ QStringLiteral("screenshot"),
        QStringLiteral(
            "Save a picture of the window to FILE and quit: after start-up, or with --run when the run ends."),
        QStringLiteral("FILE") });
    parser.addOption({ QStringLiteral("screenshot-after"),
        QStringLiteral("With --run and --screenshot: take the picture MS milliseconds after the start, mid-run."),
        QStringLiteral("MS") });
    parser.addOption({ QStringLiteral("window-size"),
        QStringLiteral("Open the window WIDTHxHEIGHT pixels large (e.g. 1366x768, a laptop's screen)."),
        QStringLiteral("WxH") });
    parser.addOption({ QStringLiteral("method"), QStringLiteral("Pick this method (package.Service/Method) at start."),
        QStringLiteral("METHOD") });
    parser.addOption({ QStringLiteral("matrix"),
        QStringLiteral("Run the stack comparison right away with these payloads ('nums=2;nums=1000')."),
        QStringLiteral("PAYLOADS") });
    parser.addOption(
        { QStringLiteral("calls"), QStringLiteral("Calls per run (default: the scenario's)."), QStringLiteral("N") });
    parser.addOption({ QStringLiteral("concurrency"), QStringLiteral("Concurrent callers (default: the scenario's)."),
        QStringLiteral("N") });
    parser.addOption({ QStringLiteral("duration"), QStringLiteral("Length of a run, e.g. 10s (default: by count)."),
        QStringLiteral("D") });
    parser.addOption({ QStringLiteral("quit-when-done"),
        QStringLiteral("With --run or --matrix: quit when it ends (--screenshot does too).") });
    parser.addOption({ QStringLiteral("stall-report"),
        QStringLiteral("Measure how long the GUI thread stalls (a 5 ms timer) and write it, with the "
                       "last run's requests/s, to FILE at quit. Also RPCSCOPE_STALL_REPORT=FILE."),
        QStringLiteral("FILE") });
    parser.addOption({ QStringLiteral("history"), QStringLiteral("Show the History page at start.") });
    parser.addOption({ QStringLiteral("db"),
        QStringLiteral("The run history to use (an SQLite file, made if missing), as rpcscope-cli's --db; default: "
                       "RPCSCOPE_DB, else the one in the user's data folder."),
        QStringLiteral("FILE") });
    parser.addOption({ QStringLiteral("compare"),
        QStringLiteral("Open the Compare runs page with these stored runs (IDs, the baseline first: 1,2)."),
        QStringLiteral("IDS") });
    parser.addOption({ QStringLiteral("scenario"),
        QStringLiteral("Open this scenario document (*.rpcscope.json) at start, as File > Open does."),
        QStringLiteral("FILE") });
    parser.addPositionalArgument(QStringLiteral("files"),
        QStringLiteral(".proto files to load, or a scenario document (*.rpcscope.json) to open, as a double-click in "
                       "a file manager gives it."),
        QStringLiteral("[FILE...]"));
}

/// Opens the scenario document given (--scenario, or one among the files) and collects the other files, .proto
/// files, into @p protos; a document that cannot be opened leaves its error in @p scenarioError.
void openStartupFiles(
    const QCommandLineParser &parser, rpcscope::MainWindow &window, QStringList *protos, QString *scenarioError)
{
    QString scenarioFile = parser.value(QStringLiteral("scenario"));
    for (const QString &file : parser.positionalArguments()) {
        if (file.endsWith(QStringLiteral(".rpcscope.json"), Qt::CaseInsensitive) && scenarioFile.isEmpty())
            scenarioFile = file; // a scenario document (the desktop entry passes what was double-clicked)
        else
            *protos << file;
    }
    if (!scenarioFile.isEmpty() && !window.openScenario(scenarioFile, scenarioError))
        qWarning("%s", qPrintable(*scenarioError)); // the window stays up on the embedded default, and says why
}

/// --method, --calls, --concurrency and --duration, set on the scenario page.
void applyScenarioOptions(const QCommandLineParser &parser, rpcscope::MainWindow &window)
{
    if (parser.isSet(QStringLiteral("method"))) {
        window.schemaPanel()->selectMethod(parser.value(QStringLiteral("method")));
        window.scenarioPage()->setMethod(parser.value(QStringLiteral("method")));
    }
    QWidget *scenario = window.scenarioPage();
    if (parser.isSet(QStringLiteral("calls")))
        scenario->findChild<QSpinBox *>(QStringLiteral("callsEdit"))
            ->setValue(parser.value(QStringLiteral("calls")).toInt());
    if (parser.isSet(QStringLiteral("concurrency")))
        scenario->findChild<QSpinBox *>(QStringLiteral("concurrencyEdit"))
            ->setValue(parser.value(QStringLiteral("concurrency")).toInt());
    if (parser.isSet(QStringLiteral("duration")))
        scenario->findChild<QLineEdit *>(QStringLiteral("durationEdit"))
            ->setText(parser.value(QStringLiteral("duration")));
}

/// --window-size; false (with the error printed) when it is not WIDTHxHEIGHT.
bool applyWindowSize(const QCommandLineParser &parser, rpcscope::MainWindow &window)
{
    if (parser.isSet(QStringLiteral("window-size"))) {
        const QStringList size = parser.value(QStringLiteral("window-size")).split(u'x');
        const int width = size.value(0).toInt();
        const int height = size.value(1).toInt();
        if (size.size() != 2 || width <= 0 || height <= 0) {
            qCritical("rpcscope: --window-size: expected WIDTHxHEIGHT, e.g. 1366x768, not \"%s\"",
                qPrintable(parser.value(QStringLiteral("window-size"))));
            return false;
        }
        window.resize(width, height);
    }
    return true;
}

/// --history and --compare: the results page to show at start.
void openStartPages(const QCommandLineParser &parser, rpcscope::MainWindow &window)
{
    if (parser.isSet(QStringLiteral("history")))
        window.showResultsPage(window.historyPage());
    if (parser.isSet(QStringLiteral("compare"))) {
        QList<qint64> ids;
        for (const QString &id : parser.value(QStringLiteral("compare")).split(u',', Qt::SkipEmptyParts))
            ids << id.trimmed().toLongLong();
        window.compareRuns(ids);
    }
}

/// --matrix, --send-once and --run started after start-up, with --screenshot and --quit-when-done at their end.
void scheduleStartupActions(const QCommandLineParser &parser, rpcscope::MainWindow &window)
{
    const QString shot = parser.value(QStringLiteral("screenshot"));
    const bool quitWhenDone = parser.isSet(QStringLiteral("quit-when-done")) || !shot.isEmpty();
    auto saveAndQuit = [&window, shot] {
        if (!shot.isEmpty() && !window.grab().save(shot))
            qWarning("cannot write %s", qPrintable(shot));
        QApplication::quit();
    };
    if (parser.isSet(QStringLiteral("matrix"))) {
        window.matrixPage()
            ->findChild<QLineEdit *>(QStringLiteral("matrixPayloads"))
            ->setText(parser.value(QStringLiteral("matrix")));
        window.showResultsPage(window.matrixPage());
        QTimer::singleShot(300, window.matrixPage(), &rpcscope::MatrixPage::start);
        if (quitWhenDone)
            QObject::connect(window.matrixPage(), &rpcscope::MatrixPage::finished, &window,
                [&window, saveAndQuit] { QTimer::singleShot(500, &window, saveAndQuit); });
    } else if (parser.isSet(QStringLiteral("send-once"))) {
        QTimer::singleShot(300, window.runLauncher(), &rpcscope::RunLauncher::sendOnce);
        if (quitWhenDone)
            QObject::connect(window.runLauncher(), &rpcscope::RunLauncher::sentOnce, &window,
                [&window, saveAndQuit] { QTimer::singleShot(300, &window, saveAndQuit); });
    } else if (!parser.isSet(QStringLiteral("run")) && !shot.isEmpty())
        QTimer::singleShot(1000, &window, saveAndQuit);
    if (parser.isSet(QStringLiteral("run"))) {
        QTimer::singleShot(300, &window, &rpcscope::MainWindow::startRun);
        // The wait lets the final snapshot paint before the picture or the stall report is taken.
        if (parser.isSet(QStringLiteral("screenshot-after")) && !shot.isEmpty())
            QTimer::singleShot(
                300 + parser.value(QStringLiteral("screenshot-after")).toInt(), &window, [&window, saveAndQuit] {
                    window.stopRun();
                    saveAndQuit();
                });
        else if (quitWhenDone)
            QObject::connect(window.runController(), &rpcscope::RunController::runFinished, &window,
                [&window, saveAndQuit] { QTimer::singleShot(300, &window, saveAndQuit); });
    }
}

/// The stall watchdog of --stall-report (or RPCSCOPE_STALL_REPORT), which writes its report at quit; null when
/// neither is given.
std::unique_ptr<rpcscope::StallWatchdog> startStallWatchdog(
    const QCommandLineParser &parser, QApplication &app, rpcscope::MainWindow &window)
{
    QString stallReport = parser.value(QStringLiteral("stall-report"));
    if (stallReport.isEmpty())
        stallReport = qEnvironmentVariable("RPCSCOPE_STALL_REPORT");
    std::unique_ptr<rpcscope::StallWatchdog> watchdog;
    if (!stallReport.isEmpty()) {
        watchdog = std::make_unique<rpcscope::StallWatchdog>();
        rpcscope::StallWatchdog *dog = watchdog.get();
        rpcscope::RunController *controller = window.runController();
        // The window is the (last) run, up to when its final snapshot has painted.
        QObject::connect(controller, &rpcscope::RunController::runStarted, dog, &rpcscope::StallWatchdog::beginWindow);
        QObject::connect(controller, &rpcscope::RunController::runFinished, dog,
            [dog] { QTimer::singleShot(250, dog, &rpcscope::StallWatchdog::endWindow); });
        QObject::connect(&app, &QCoreApplication::aboutToQuit, dog, [dog, controller, stallReport] {
            dog->stop();
            QString why;
            if (!dog->writeReport(stallReport, rpcscope::StallWatchdog::runLines(controller->lastSnapshot()), &why))
                qWarning("--stall-report %s: %s", qPrintable(stallReport), qPrintable(why));
        });
        // Started last, so the gap before the event loop's first turn (server start-up, building the window)
        // is not counted as a stall of the loop.
        dog->start();
    }
    return watchdog;
}

} // namespace

int main(int argc, char *argv[])
{
    tuneProcess();
    QApplication app(argc, argv);
    setApplicationIdentity();

    QCommandLineParser parser;
    addOptions(parser);
    parser.process(app);
    // The window opens its history as it is made, from RPCSCOPE_DB when set: --db sets it for this process.
    if (parser.isSet(QStringLiteral("db")))
        qputenv("RPCSCOPE_DB", QFile::encodeName(parser.value(QStringLiteral("db"))));

    rpcscope::MainWindow window;
    // The built-in servers start below only if the scenario in effect calls them; else on their first use.
    window.loadEmbeddedDefault();
    // First, so the options below (--calls, --method ...) adjust the document rather than being replaced by it.
    QString scenarioError;
    QStringList protos;
    openStartupFiles(parser, window, &protos, &scenarioError);
    applyScenarioOptions(parser, window);
    if (window.usesBuiltinServers())
        window.startBuiltinServers(); // up at once, as the Targets panel shows them; a failure is in the status bar
    // Options are not edits to save: without this, quitting after the run would stop at the unsaved-changes prompt.
    window.setWindowModified(false);
    if (!applyWindowSize(parser, window))
        return 2;
    window.show();
    // After show(): a status-bar message shown before the bar is visible is painted over the bar's own label instead
    // of hiding it. One shown already (an opened scenario's) is shown again now that it can hide the label.
    if (const QString shown = window.statusBar()->currentMessage(); !shown.isEmpty()) {
        window.statusBar()->clearMessage(); // showMessage() ignores the message it already shows
        window.statusBar()->showMessage(shown, 10000);
    }
    if (!protos.isEmpty())
        window.openProtoFiles(protos);
    if (!scenarioError.isEmpty())
        window.statusBar()->showMessage(scenarioError, 15000);

    openStartPages(parser, window);

    scheduleStartupActions(parser, window);

    const std::unique_ptr<rpcscope::StallWatchdog> watchdog = startStallWatchdog(parser, app, window);
    return QApplication::exec();
}
