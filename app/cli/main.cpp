#include "cliapp.h"

#include <QCoreApplication>

int main(int argc, char *argv[])
{
    // Signals go to one waiting thread (see cliapp.cpp): block them before any thread exists.
    rpcscope::cli::blockTerminationSignals();
    // gRPC logs every failed TLS handshake or connection on stderr; the run's error table already counts them.
    if (qEnvironmentVariableIsEmpty("GRPC_VERBOSITY"))
        qputenv("GRPC_VERBOSITY", "NONE");
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("rpcscope-cli"));
    QCoreApplication::setApplicationVersion(QStringLiteral(RPCSCOPE_VERSION));
    return rpcscope::cli::run(QCoreApplication::arguments());
}
