#include "mainwindow.h"
#include "matrixpage.h"
#include "scenariopage.h"
#include "schemapanel.h"
#include "runcontroller.h"

#include <QApplication>

#include <absl/synchronization/mutex.h>
#include <malloc.h>
#include <QCommandLineParser>
#include <QLineEdit>
#include <QSpinBox>
#include <QTabWidget>
#include <QTimer>

int main(int argc, char *argv[])
{
    // See app/cli/main.cpp: abseil's per-mutex deadlock bookkeeping costs client CPU on every gRPC call.
    absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
    // Keep freed message buffers instead of handing each one back to the kernel: with glibc's defaults every
    // large reply is an mmap/munmap pair and its pages fault in again on the next call (1 MiB replies: client
    // CPU 911 -> 368 us/call with --discard-response, 498 -> 433 decoded).
    mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
    mallopt(M_TRIM_THRESHOLD, 256 * 1024 * 1024);
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("rpcscope"));
    QApplication::setOrganizationName(QStringLiteral("rpcscope"));
    QApplication::setApplicationVersion(QStringLiteral(RPCSCOPE_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("rpcscope: a workbench for RPC performance."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addOption({QStringLiteral("run"), QStringLiteral("Start the default scenario right away.")});
    parser.addOption({QStringLiteral("screenshot"),
                      QStringLiteral("Save a picture of the window to FILE and quit: after start-up, or with --run when the run ends."),
                      QStringLiteral("FILE")});
    parser.addOption({QStringLiteral("method"), QStringLiteral("Pick this method (package.Service/Method) at start."),
                      QStringLiteral("METHOD")});
    parser.addOption({QStringLiteral("matrix"),
                      QStringLiteral("Run the stack comparison right away with these payloads ('nums=2;nums=1000')."),
                      QStringLiteral("PAYLOADS")});
    parser.addOption({QStringLiteral("calls"), QStringLiteral("Calls per run (default: the scenario's)."), QStringLiteral("N")});
    parser.addPositionalArgument(QStringLiteral("protos"), QStringLiteral(".proto files to load."), QStringLiteral("[FILE...]"));
    parser.process(app);

    rpcscope::MainWindow window;
    window.startEmbeddedDefault();
    if (!parser.positionalArguments().isEmpty())
        window.openProtoFiles(parser.positionalArguments());
    if (parser.isSet(QStringLiteral("method"))) {
        window.schemaPanel()->selectMethod(parser.value(QStringLiteral("method")));
        window.scenarioPage()->setMethod(parser.value(QStringLiteral("method")));
    }
    if (parser.isSet(QStringLiteral("calls")))
        window.scenarioPage()->findChild<QSpinBox *>(QStringLiteral("callsEdit"))->setValue(parser.value(QStringLiteral("calls")).toInt());
    window.show();

    const QString shot = parser.value(QStringLiteral("screenshot"));
    auto saveAndQuit = [&window, shot] {
        if (!window.grab().save(shot))
            qWarning("cannot write %s", qPrintable(shot));
        QApplication::quit();
    };
    if (parser.isSet(QStringLiteral("matrix"))) {
        window.matrixPage()->findChild<QLineEdit *>(QStringLiteral("matrixPayloads"))->setText(parser.value(QStringLiteral("matrix")));
        window.findChild<QTabWidget *>(QStringLiteral("resultTabs"))->setCurrentWidget(window.matrixPage());
        QTimer::singleShot(300, window.matrixPage(), &rpcscope::MatrixPage::start);
        if (!shot.isEmpty())
            QObject::connect(window.matrixPage(), &rpcscope::MatrixPage::finished, &window,
                             [&window, saveAndQuit] { QTimer::singleShot(500, &window, saveAndQuit); });
    } else if (!parser.isSet(QStringLiteral("run")) && !shot.isEmpty())
        QTimer::singleShot(1000, &window, saveAndQuit);
    if (parser.isSet(QStringLiteral("run"))) {
        QTimer::singleShot(300, &window, &rpcscope::MainWindow::startRun);
        if (!shot.isEmpty()) {
            QObject::connect(window.runController(), &rpcscope::RunController::runFinished, &window,
                             [&window, saveAndQuit] { QTimer::singleShot(300, &window, saveAndQuit); });
        }
    }
    return QApplication::exec();
}
