#include "mainwindow.h"
#include "runcontroller.h"

#include <QApplication>

#include <absl/synchronization/mutex.h>
#include <malloc.h>
#include <QCommandLineParser>
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
    parser.addPositionalArgument(QStringLiteral("protos"), QStringLiteral(".proto files to load."), QStringLiteral("[FILE...]"));
    parser.process(app);

    rpcscope::MainWindow window;
    window.startEmbeddedDefault();
    if (!parser.positionalArguments().isEmpty())
        window.openProtoFiles(parser.positionalArguments());
    window.show();

    const QString shot = parser.value(QStringLiteral("screenshot"));
    auto saveAndQuit = [&window, shot] {
        if (!window.grab().save(shot))
            qWarning("cannot write %s", qPrintable(shot));
        QApplication::quit();
    };
    if (!parser.isSet(QStringLiteral("run")) && !shot.isEmpty())
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
