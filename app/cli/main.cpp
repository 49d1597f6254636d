#include "cliapp.h"
#include "renderedexport.h"

#include <absl/synchronization/mutex.h>
#include <malloc.h>

#include <QApplication>
#include <QCoreApplication>

#include <memory>

int main(int argc, char *argv[])
{
    // Signals go to one waiting thread (see cliapp.cpp): block them before any thread exists.
    // Debian's abseil checks every mutex for lock-order cycles (graph bookkeeping on each lock, and on each of
    // the many short-lived mutexes gRPC creates per call): measurable client CPU per call. Off, as in release
    // builds of abseil.
    absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
    // Keep freed message buffers instead of handing each one back to the kernel: with glibc's defaults every
    // large reply is an mmap/munmap pair and its pages fault in again on the next call (1 MiB replies: client
    // CPU 911 -> 368 us/call with --discard-response, 498 -> 433 decoded).
    mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
    mallopt(M_TRIM_THRESHOLD, 256 * 1024 * 1024);
    rpcscope::cli::blockTerminationSignals();
    // gRPC logs every failed TLS handshake or connection on stderr; the run's error table already counts them.
    if (qEnvironmentVariableIsEmpty("GRPC_VERBOSITY"))
        qputenv("GRPC_VERBOSITY", "NONE");
    // Charts and HTML reports are drawn with widgets, offscreen: only then is there a QApplication (no display
    // needed), so plain runs start and measure as a Qt Core program.
    std::unique_ptr<QCoreApplication> app;
    if (rpcscope::cli::wantsRenderedFormat(argc, argv)) {
        if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
            qputenv("QT_QPA_PLATFORM", "offscreen");
        app = std::make_unique<QApplication>(argc, argv);
    } else {
        app = std::make_unique<QCoreApplication>(argc, argv);
    }
    QCoreApplication::setApplicationName(QStringLiteral("rpcscope-cli"));
    QCoreApplication::setApplicationVersion(QStringLiteral(RPCSCOPE_VERSION));
    return rpcscope::cli::run(QCoreApplication::arguments());
}
