#include "cliapp.h"
#include "abcommand.h"
#include "callcommand.h"
#include "codecscommand.h"
#include "comparecommand.h"
#include "exportcommand.h"
#include "historycommand.h"
#include "matrixcommand.h"
#include "mergecommand.h"
#include "methodscommand.h"
#include "renderedexport.h"
#include "runcommand.h"
#include "servecommand.h"

#include "compare/checks.h"
#include "engine/callsetup.h"
#include "engine/loadengine.h"
#include "export/exporter.h"
#include "report/rawsamples.h"
#include "report/textreport.h"
#include "scenario/scenario.h"
#include "schema/schema.h"
#include "server/builtingrpcserver.h"
#include "server/builtinhttpserver.h"
#include "server/servercommand.h"
#include "server/serverprocess.h"
#include "store/environment.h"
#include "store/runstore.h"
#include "transport/transports.h"
#include "util/buildinfo.h"
#include "util/cpuset.h"
#include "util/units.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDateTime>
#include <QFile>
#include <QFileInfo>
#include <QGuiApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>
#include <QMap>
#include <QRegularExpression>
#include <QSaveFile>
#include <QTextStream>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <functional>
#include <limits>
#include <pthread.h>
#include <thread>
#include <unistd.h>

namespace rpcscope::cli {

namespace {

// Where out() and err() write when an OutputCapture is not redirecting them.
QTextStream *g_out = nullptr;
QTextStream *g_err = nullptr;

/**
 * Standard output or error as a device that escapes, as util/printable does, whatever could drive a terminal: C0
 * controls but tab and newline, DEL, and C1 controls (U+0080..U+009F, 0xc2 0x80..0x9f in UTF-8; 0x9b alone is a CSI
 * to some terminals). Whatever printed it, a server's error message, an imported report's name or a worker's host
 * reaches the terminal as \x1b, never as an escape sequence; rpcscope's own text holds none of them.
 */
class TerminalSafeOutput : public QIODevice {
public:
    explicit TerminalSafeOutput(int fd) : m_fd(fd) { QIODevice::open(QIODevice::WriteOnly | QIODevice::Unbuffered); }
    bool isSequential() const override { return true; }

protected:
    qint64 readData(char *, qint64) override { return -1; }
    qint64 writeData(const char *data, qint64 size) override
    {
        QByteArray safe;
        safe.reserve(size + 16);
        auto escape = [&safe](unsigned char c) { safe += "\\x" + QByteArray::number(c, 16).rightJustified(2, '0'); };
        for (qint64 i = 0; i < size; ++i) {
            const auto c = static_cast<unsigned char>(data[i]);
            if (m_lead) { // the byte after a 0xc2: a C1 control, or any other two-byte character
                m_lead = false;
                if (c >= 0x80 && c < 0xa0) {
                    escape(c);
                    continue;
                }
                safe += '\xc2';
            }
            if (c == 0xc2)
                m_lead = true;
            else if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
                escape(c);
            else
                safe += char(c);
        }
        for (qsizetype done = 0; done < safe.size();) {
            const ssize_t n = ::write(m_fd, safe.constData() + done, size_t(safe.size() - done));
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                return -1;
            done += n;
        }
        return size;
    }

private:
    int m_fd;
    bool m_lead = false;
};

} // namespace

QTextStream &out()
{
    static TerminalSafeOutput device(STDOUT_FILENO);
    static QTextStream stream(&device);
    return g_out ? *g_out : stream;
}

QTextStream &err()
{
    static TerminalSafeOutput device(STDERR_FILENO);
    static QTextStream stream(&device);
    return g_err ? *g_err : stream;
}

OutputCapture::OutputCapture() : m_previousOut(g_out), m_previousErr(g_err)
{
    // What was printed before belongs to the streams before this capture.
    out().flush();
    err().flush();
    g_out = &m_outStream;
    g_err = &m_errStream;
}

OutputCapture::~OutputCapture()
{
    g_out = m_previousOut;
    g_err = m_previousErr;
}

QString OutputCapture::standardOutput()
{
    m_outStream.flush();
    return m_out;
}

QString OutputCapture::standardError()
{
    m_errStream.flush();
    return m_err;
}

QString historyPath(const QCommandLineParser &parser)
{
    return parser.isSet(QStringLiteral("db")) ? parser.value(QStringLiteral("db")) : RunStore::chosenPath();
}

void printMachineNoiseWarnings()
{
    for (const QString &warning : machineNoiseWarnings())
        err() << "warning: " << warning << '\n';
    err().flush();
}

bool printCommandHelp(const QCommandLineParser &parser, const QString &command, const QString &text)
{
    if (!parser.isSet(QStringLiteral("help")) && !parser.isSet(QStringLiteral("help-all")))
        return false;
    QString help = text.isEmpty() ? parser.helpText() : text;
    // Qt names the binary as it was started (a path): the usage a user can type again names the command.
    static const QRegularExpression usage(QStringLiteral("^Usage: (?!rpcscope-cli )\\S+"));
    help.replace(usage, QStringLiteral("Usage: rpcscope-cli ") + command);
    out() << help;
    out().flush();
    return true;
}

int usageError(const QString &command, const QString &message)
{
    err() << "rpcscope-cli " << command << ": " << message << '\n' << "Try 'rpcscope-cli " << command << " --help'.\n";
    err().flush();
    return ExitUsage;
}

sigset_t terminationSignals()
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    return set;
}

namespace {

/// Runs @p onSignal on a helper thread when SIGINT or SIGTERM arrives; the signals are blocked everywhere else.
class SignalWatcher {
public:
    explicit SignalWatcher(std::function<void(int)> onSignal)
        : m_thread([onSignal = std::move(onSignal)] {
            sigset_t set = terminationSignals();
            sigaddset(&set, SIGUSR2);
            int signal = 0;
            while (sigwait(&set, &signal) == 0) {
                if (signal == SIGUSR2) // our own wake-up: the watcher is being destroyed
                    return;
                onSignal(signal);
            }
        })
    {
    }
    ~SignalWatcher()
    {
        pthread_kill(m_thread.native_handle(), SIGUSR2);
        m_thread.join();
    }

private:
    std::thread m_thread;
};

const char *const kGeneralHelp = R"(Usage: rpcscope-cli COMMAND [OPTIONS]

Commands:
  run      benchmark a method: latency histogram, percentiles, throughput, status codes
  call     make one call and show its reply, status, headers and trailers (run's flags, no load)
  matrix   run one method over your stacks (or transports x codecs) x payloads x callers, one table
  serve    run a built-in server (serve grpc|http|msgpack|all)
  codecs   time encode/decode per codec for a message (no network)
  methods  list a schema's methods, one per line as --call takes them
  history  the saved runs: list, show, delete, rename, label
  ab       one scenario against two servers (commands, addresses or builtin) in alternating blocks, with a verdict
  export   write a saved run as csv, json, ghz-json, hgrm, markdown, ... (export ID -O FORMAT -o FILE)
  import   add ghz JSON reports or rpcscope JSON reports to the history
  merge    merge the JSON reports of a run split over workers (run --segment I/N) into one run
  compare  compare two runs (history IDs or JSON reports): delta table and a verdict with a confidence interval

Run 'rpcscope-cli COMMAND --help' for a command's options.

Exit codes, the same for every command and transport:
  0  the work was done (a run whose calls failed is still a run: it measured the failures)
  1  calls failed and --fail-on-error was given
  2  bad usage or input: a flag, a file, a document or a schema that must be fixed
  3  the work could not be done with what was given: a target whose name does not resolve or where nothing
     accepts a connection (checked before any load is sent), a server that did not start or did not answer
     reflection, a run that could not be saved in its history
  4  the numbers failed a check: compare, ab or run --compare-to found a regression, or a run --check did
     not hold
)";

} // namespace

bool waitForEngineLike(const std::function<bool(std::chrono::milliseconds)> &wait, const std::function<void()> &stop,
    std::chrono::milliseconds every, const std::function<void()> &tick)
{
    std::atomic<bool> signalled { false };
    SignalWatcher watcher([&stop, &signalled](int) {
        signalled = true;
        stop();
    });
    while (!wait(every))
        tick();
    return signalled;
}

bool waitForEngine(LoadRun &engine, std::chrono::milliseconds every, const std::function<void()> &tick)
{
    return waitForEngineLike([&engine](std::chrono::milliseconds t) { return engine.waitForFinished(t); },
        [&engine] { engine.stop(); }, every, tick);
}

void blockTerminationSignals()
{
    sigset_t set = terminationSignals();
    sigaddset(&set, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int run(const QStringList &arguments)
{
    const QString command = arguments.value(1);
    if (command.isEmpty() || command == u"--help" || command == u"-h" || command == u"help") {
        out() << kGeneralHelp;
        return command.isEmpty() ? ExitUsage : ExitOk;
    }
    if (command == u"--version" || command == u"version") {
        out() << "rpcscope-cli " << RPCSCOPE_VERSION << " (" << gitRevision() << ")\n";
        return ExitOk;
    }
    if (command == u"run")
        return runCommand(arguments);
    if (command == u"call")
        return callCommand(arguments);
    if (command == u"methods")
        return methodsCommand(arguments);
    if (command == u"serve")
        return serveCommand(arguments);
    if (command == u"matrix")
        return matrixCommand(arguments);
    if (command == u"codecs")
        return codecsCommand(arguments);
    if (command == u"history")
        return historyCommand(arguments);
    if (command == u"compare")
        return compareCommand(arguments);
    if (command == u"ab")
        return abCommand(arguments);
    if (command == u"export")
        return exportCommand(arguments);
    if (command == u"import")
        return importCommand(arguments);
    if (command == u"merge")
        return mergeCommand(arguments);
    err() << "rpcscope-cli: unknown command \"" << command << "\"\n\n" << kGeneralHelp;
    return ExitUsage;
}

} // namespace rpcscope::cli
