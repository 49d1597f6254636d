#include "mainwindow.h"
#include "runcontroller.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QTimer>

int main(int argc, char *argv[])
{
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
                      QStringLiteral("With --run: save a picture of the window to FILE when the run ends, then quit."),
                      QStringLiteral("FILE")});
    parser.addPositionalArgument(QStringLiteral("protos"), QStringLiteral(".proto files to load."), QStringLiteral("[FILE...]"));
    parser.process(app);

    rpcscope::MainWindow window;
    window.startEmbeddedDefault();
    if (!parser.positionalArguments().isEmpty())
        window.openProtoFiles(parser.positionalArguments());
    window.show();

    if (parser.isSet(QStringLiteral("run"))) {
        QTimer::singleShot(300, &window, &rpcscope::MainWindow::startRun);
        const QString shot = parser.value(QStringLiteral("screenshot"));
        if (!shot.isEmpty()) {
            QObject::connect(window.runController(), &rpcscope::RunController::runFinished, &window, [&window, shot] {
                QTimer::singleShot(300, &window, [&window, shot] {
                    window.grab().save(shot);
                    QApplication::quit();
                });
            });
        }
    }
    return QApplication::exec();
}
