// Server commands (issue 6): splitting, JSON, and real processes started, made ready, failed and stopped.
#include "server/servercommand.h"
#include "server/serverlaunch.h"
#include "server/serverprocess.h"
#include "util/cpuset.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QStandardPaths>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <csignal>
#include <ctime>
#include <sys/types.h>
#include <unistd.h>

using namespace rpcscope;
using namespace std::chrono_literals;

namespace {

const QString cli = QStringLiteral(RPCSCOPE_CLI);

bool tcpConnects(const QString &address)
{
    const qsizetype colon = address.lastIndexOf(QLatin1Char(':'));
    QTcpSocket socket;
    socket.connectToHost(address.left(colon), address.mid(colon + 1).toUShort());
    return socket.waitForConnected(3000);
}

/// Gone, or a zombie waiting for an init that does not reap (as in some containers): not running either way.
bool processGone(qint64 pid)
{
    if (::kill(static_cast<pid_t>(pid), 0) != 0)
        return true;
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!stat.open(QIODevice::ReadOnly))
        return true;
    const QByteArray text = stat.readAll();
    const qsizetype close = text.lastIndexOf(')');
    return close >= 0 && text.mid(close + 2, 1) == "Z";
}

/// The session and parent of process @p pid (/proc/PID/stat), or {0, 0}.
std::pair<qint64, qint64> sessionAndParent(qint64 pid)
{
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!stat.open(QIODevice::ReadOnly))
        return { 0, 0 };
    const QByteArray text = stat.readAll();
    // "PID (comm) S PPID PGRP SESSION ..."
    const QList<QByteArray> fields = text.mid(text.lastIndexOf(')') + 2).split(' ');
    return fields.size() > 3 ? std::pair { fields[3].toLongLong(), fields[1].toLongLong() }
                             : std::pair<qint64, qint64> {};
}

/// How many processes have @p parent as their parent.
int childrenOf(qint64 parent)
{
    int n = 0;
    for (const QString &entry : QDir(QStringLiteral("/proc")).entryList(QDir::Dirs))
        n += sessionAndParent(entry.toLongLong()).second == parent ? 1 : 0;
    return n;
}

/// A server command's shell line that leaves a detached process behind (a session of its own, its parent gone, as
/// a daemon does) and writes its pid to @p pidFile, then runs @p then.
QString leavesADetachedProcess(const QString &pidFile, const QString &then)
{
    // It writes its pid itself, once setsid has made its session.
    return QStringLiteral(
        "/bin/sh -c '(setsid /bin/sh -c \"echo \\$\\$ > %1; exec sleep 300\" </dev/null >/dev/null 2>&1 &); %2'")
        .arg(pidFile, then);
}

/// The pid written to @p pidFile, waiting up to 20 s for it; 0 when none came.
qint64 pidFromFile(const QString &pidFile)
{
    QFile file(pidFile);
    QElapsedTimer clock;
    clock.start();
    while (file.size() == 0 && clock.elapsed() < 20000)
        QThread::msleep(20);
    return file.open(QIODevice::ReadOnly) ? file.readAll().trimmed().toLongLong() : 0;
}

/// A test that failed may leave a process it started: not for long.
void killIfLeft(qint64 pid)
{
    if (!processGone(pid))
        ::kill(static_cast<pid_t>(pid), SIGKILL);
}

/// Starts `rpcscope-cli run` of Echo, one caller for up to 60 s, against the server command @p serverCommand.
void startLongRun(QProcess *rpcscope, const QString &serverCommand)
{
    rpcscope->start(cli,
        { QStringLiteral("run"), QStringLiteral("--call"), QStringLiteral("rpcscope.bench.v1.Bench/Echo"),
            QStringLiteral("-d"), QStringLiteral("{}"), QStringLiteral("-z"), QStringLiteral("60s"),
            QStringLiteral("-c"), QStringLiteral("1"), serverCommand });
    QVERIFY(rpcscope->waitForStarted());
}

/// Kills @p rpcscope with SIGKILL once it has its two children: the server command and the guard it starts when the
/// server is ready.
void killOnceGuarded(QProcess *rpcscope)
{
    QTRY_VERIFY_WITH_TIMEOUT(childrenOf(rpcscope->processId()) >= 2, 20000);
    ::kill(static_cast<pid_t>(rpcscope->processId()), SIGKILL);
    QVERIFY(rpcscope->waitForFinished(5000));
}

/// The number after "@p label " in @p text (a test command prints its own pid so the test can check on it).
qint64 numberAfter(const QString &text, const QString &label)
{
    const QRegularExpression re(label + QStringLiteral(" (\\d+)"));
    return re.match(text).captured(1).toLongLong();
}

ServerCommand command(const QString &line, const QString &pattern = {}, std::chrono::milliseconds timeout = 10s)
{
    ServerCommand c;
    c.command = line;
    c.readyPattern = pattern;
    c.readyTimeout = timeout;
    return c;
}

} // namespace

class TestServerCommand : public QObject {
    Q_OBJECT

private slots:
    void splitCommandLine_data()
    {
        QTest::addColumn<QString>("line");
        QTest::addColumn<QStringList>("words");
        QTest::addColumn<QString>("error"); // a part of the error; empty when it must split

        auto ok = [](const char *name, const QString &line, const QStringList &words) {
            QTest::newRow(name) << line << words << QString();
        };
        auto bad = [](const char *name, const QString &line, const QString &error) {
            QTest::newRow(name) << line << QStringList() << error;
        };
        ok("plain", QStringLiteral("server --port {port}"),
            { QStringLiteral("server"), QStringLiteral("--port"), QStringLiteral("{port}") });
        ok("extra spaces", QStringLiteral("  a \t b  "), { QStringLiteral("a"), QStringLiteral("b") });
        ok("single quotes", QStringLiteral("sh -c 'echo \"hi\" $X \\n'"),
            { QStringLiteral("sh"), QStringLiteral("-c"), QStringLiteral("echo \"hi\" $X \\n") });
        ok("double quotes", QStringLiteral("a \"b c\" d"),
            { QStringLiteral("a"), QStringLiteral("b c"), QStringLiteral("d") });
        ok("escapes in double quotes", QStringLiteral("a \"x\\\"y\\\\z\\$w\\n\""),
            { QStringLiteral("a"), QStringLiteral("x\"y\\z$w\\n") });
        ok("backslash outside quotes", QStringLiteral("a b\\ c \\'d"),
            { QStringLiteral("a"), QStringLiteral("b c"), QStringLiteral("'d") });
        ok("adjacent parts join", QStringLiteral("--name='a b'\"c\"d"), { QStringLiteral("--name=a bcd") });
        ok("empty quotes", QStringLiteral("a '' \"\" b"),
            { QStringLiteral("a"), QString(), QString(), QStringLiteral("b") });
        ok("single quote inside double", QStringLiteral("\"it's\""), { QStringLiteral("it's") });
        ok("line continuation", QStringLiteral("a \\\nb"), { QStringLiteral("a"), QStringLiteral("b") });
        ok("no shell operators", QStringLiteral("a | b > c"),
            { QStringLiteral("a"), QStringLiteral("|"), QStringLiteral("b"), QStringLiteral(">"),
                QStringLiteral("c") });
        bad("unterminated single", QStringLiteral("sh -c 'echo hi"),
            QStringLiteral("unterminated single quote (opened at column 7)"));
        bad("unterminated double", QStringLiteral("a \"b"), QStringLiteral("unterminated double quote"));
        bad("escaped closing double", QStringLiteral("a \"b\\\""), QStringLiteral("unterminated double quote"));
        bad("trailing backslash", QStringLiteral("a b\\"), QStringLiteral("ends with a backslash"));
        bad("empty", QStringLiteral("   "), QStringLiteral("empty command"));
    }

    void splitCommandLine()
    {
        QFETCH(QString, line);
        QFETCH(QStringList, words);
        QFETCH(QString, error);
        QString why;
        const std::optional<QStringList> split = rpcscope::splitCommandLine(line, &why);
        if (error.isEmpty()) {
            QVERIFY2(split, qPrintable(why));
            QCOMPARE(*split, words);
        } else {
            QVERIFY(!split);
            QVERIFY2(why.contains(error), qPrintable(why));
        }
    }

    void looksLikeCommand_data()
    {
        QTest::addColumn<QString>("target");
        QTest::addColumn<bool>("command");
        QTest::newRow("host:port") << QStringLiteral("127.0.0.1:50051") << false;
        QTest::newRow("name:port") << QStringLiteral("localhost:8080") << false;
        QTest::newRow("url") << QStringLiteral("http://127.0.0.1:8080/rpcscope.bench.v1.Bench/Echo") << false;
        QTest::newRow("ipv6") << QStringLiteral("[::1]:50051") << false;
        QTest::newRow("unix") << QStringLiteral("unix:///tmp/socket") << false;
        QTest::newRow("with arguments") << QStringLiteral("./server --fast") << true;
        QTest::newRow("only a placeholder") << QStringLiteral("./server-on-{port}") << true;
        QTest::newRow("tab") << QStringLiteral("server\t-v") << true;
    }

    void looksLikeCommand()
    {
        QFETCH(QString, target);
        QFETCH(bool, command);
        QCOMPARE(rpcscope::looksLikeCommand(target), command);
    }

    void jsonRoundTrip()
    {
        ServerCommand c;
        c.command = QStringLiteral("./server --port {port} --name 'x y'");
        c.workingDirectory = QStringLiteral("/srv/bench");
        c.environment = { { QStringLiteral("FOO"), QStringLiteral("a=b") },
            { QStringLiteral("PORT"), QStringLiteral("{port}") } };
        c.readyPattern = QStringLiteral("listening");
        c.readyTimeout = 2500ms;
        const QJsonObject json = c.toJson();
        QCOMPARE(json.value(QStringLiteral("env")).toArray().at(0).toString(), QStringLiteral("FOO=a=b"));
        QCOMPARE(json.value(QStringLiteral("readyTimeout")).toString(), QStringLiteral("2500ms"));
        QString error;
        const std::optional<ServerCommand> back = ServerCommand::fromJson(json, &error);
        QVERIFY2(back, qPrintable(error));
        QVERIFY(*back == c);

        // The minimal form and its defaults.
        const auto minimal = ServerCommand::fromJson(
            QJsonObject { { QStringLiteral("command"), QStringLiteral("srv {port}") } }, &error);
        QVERIFY2(minimal, qPrintable(error));
        QCOMPARE(minimal->readyTimeout, 10000ms);
        QVERIFY(minimal->environment.isEmpty());
        QCOMPARE(minimal->toJson().value(QStringLiteral("readyTimeout")).toString(), QStringLiteral("10s"));
    }

    void jsonErrors_data()
    {
        // No raw strings here: moc 6.4 loses its way in one holding "((" or a quote.
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QString>("error");
        QTest::newRow("no command") << QByteArray("{\"readyPattern\": \"x\"}")
                                    << QStringLiteral("server.command: missing");
        QTest::newRow("command type") << QByteArray("{\"command\": 3}")
                                      << QStringLiteral("server.command: expected a string");
        QTest::newRow("unterminated") << QByteArray("{\"command\": \"srv {port} 'x\"}")
                                      << QStringLiteral("server.command: unterminated single quote");
        QTest::newRow("env type") << QByteArray("{\"command\": \"srv {port}\", \"env\": {\"A\": \"1\"}}")
                                  << QStringLiteral("server.env: expected an array");
        QTest::newRow("env entry type") << QByteArray("{\"command\": \"srv {port}\", \"env\": [\"A=1\", \"B=2\", 7]}")
                                        << QStringLiteral("server.env[2]: expected a string");
        QTest::newRow("env no equals") << QByteArray("{\"command\": \"srv {port}\", \"env\": [\"A\"]}")
                                       << QStringLiteral("server.env[0]: expected NAME=value");
        QTest::newRow("cwd type") << QByteArray("{\"command\": \"srv {port}\", \"workingDirectory\": []}")
                                  << QStringLiteral("server.workingDirectory: expected a string");
        QTest::newRow("bad regex") << QByteArray("{\"command\": \"srv {port}\", \"readyPattern\": \"((\"}")
                                   << QStringLiteral("server.readyPattern: ");
        QTest::newRow("timeout number") << QByteArray("{\"command\": \"srv {port}\", \"readyTimeout\": 5}")
                                        << QStringLiteral("server.readyTimeout: expected a duration");
        QTest::newRow("timeout text") << QByteArray("{\"command\": \"srv {port}\", \"readyTimeout\": \"soon\"}")
                                      << QStringLiteral("server.readyTimeout: ");
        QTest::newRow("unknown field") << QByteArray("{\"command\": \"srv {port}\", \"cwd\": \"/\"}")
                                       << QStringLiteral("server.cwd: unknown field");
        // In the user's words, the example as typed (one backslash), no internal field name.
        QTest::newRow("no port, no pattern")
            << QByteArray("{\"command\": \"srv\"}")
            << QStringLiteral("a command without {port} needs a ready pattern: a regular expression for the line it "
                              "prints once it listens, with the address to dial as its first group in parentheses, "
                              "e.g. listening on (\\S+)");
        QTest::newRow("no port, no group")
            << QByteArray("{\"command\": \"srv\", \"readyPattern\": \"listening\"}")
            << QStringLiteral("the ready pattern \"listening\" has no group for the address to dial");
    }

    void jsonErrors()
    {
        QFETCH(QByteArray, json);
        QFETCH(QString, error);
        QString why;
        QVERIFY(!ServerCommand::fromJson(QJsonDocument::fromJson(json).object(), &why));
        QVERIFY2(why.startsWith(error), qPrintable(why));
    }

    void portInEnvironmentCounts()
    {
        ServerCommand c = command(QStringLiteral("./srv"));
        c.environment = { { QStringLiteral("PORT"), QStringLiteral("{port}") } };
        QVERIFY(c.usesPort());
        QVERIFY(c.check(nullptr));
    }

    void describe()
    {
        ServerCommand c = command(QStringLiteral("sh -c 'sleep 1' {port}"));
        c.environment = { { QStringLiteral("A"), QStringLiteral("{port}") } };
        const QJsonObject d = c.describe();
        QCOMPARE(d.value(QStringLiteral("command")).toString(), c.command);
        QCOMPARE(d.value(QStringLiteral("env")).toArray().at(0).toString(), QStringLiteral("A={port}"));
        const QString program = d.value(QStringLiteral("program")).toString();
        QVERIFY2(QFileInfo(program).isAbsolute() && program.endsWith(QStringLiteral("/sh")), qPrintable(program));
        QCOMPARE(command(QStringLiteral("no-such-program-here {port}"))
                     .describe()
                     .value(QStringLiteral("program"))
                     .toString(),
            QString());
    }

    void pinnedToTheCpusAsked()
    {
        // The child's own view of its mask, read after exec: what the server and every thread it starts run on.
        const std::vector<int> available = availableCpus();
        QVERIFY(!available.empty());
        const int cpu = available.front();
        ServerCommand c = command(
            QStringLiteral("/bin/sh -c 'echo \"ready $(grep Cpus_allowed_list /proc/self/status)\"; sleep 30'"),
            QStringLiteral("ready Cpus_allowed_list:\\s*(\\S+)"));
        c.cpus = { cpu };
        QCOMPARE(c.describe().value(QStringLiteral("cpus")).toString(), QString::number(cpu));
        RunningServer server;
        QString error;
        QVERIFY2(!server.start(c, &error).isEmpty(), qPrintable(error));
        QCOMPARE(server.readyText(), QString::number(cpu));
        server.stop();

        // Not pinned: no "cpus" in the record, and the child keeps this process's mask.
        c.cpus.clear();
        QVERIFY(!c.describe().contains(QStringLiteral("cpus")));
        QVERIFY2(!server.start(c, &error).isEmpty(), qPrintable(error));
        QCOMPARE(server.readyText(), formatCpuList(available));
        server.stop();

        // A CPU the kernel refuses: the start fails and says why.
        c.cpus = { 4000 };
        QVERIFY(server.start(c, &error).isEmpty());
        QVERIFY2(error.contains(QStringLiteral("cannot pin it to CPUs 4000")), qPrintable(error));
    }

    void aPinnedBuiltinServerServesWithOneThreadPerCpu()
    {
        // The built-in gRPC server's serving threads (named rpcscope-serve) number the CPUs it may run on: pinned
        // to one, one; it ran two there while it counted the machine's CPUs, and its CPU per call then varied with
        // which of the two picked up a call.
        const std::vector<int> available = availableCpus();
        QVERIFY(!available.empty());
        const auto servingThreads = [](qint64 pid) {
            int count = 0;
            const QDir tasks(QStringLiteral("/proc/%1/task").arg(pid));
            for (const QString &task : tasks.entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
                QFile comm(tasks.filePath(task + QStringLiteral("/comm")));
                if (comm.open(QIODevice::ReadOnly) && comm.readAll().trimmed() == "rpcscope-serve")
                    ++count;
            }
            return count;
        };
        ServerCommand c = command(cli + QStringLiteral(" serve grpc --port {port}"));
        for (const std::vector<int> &cpus : { std::vector<int> { available.front() }, std::vector<int> {} }) {
            c.cpus = cpus;
            RunningServer server;
            QString error;
            const QString address = server.start(c, &error);
            QVERIFY2(!address.isEmpty(), qPrintable(error));
            QVERIFY(tcpConnects(address));
            // Its port takes connections once the server is built, before its serving threads start.
            QTRY_COMPARE_WITH_TIMEOUT(servingThreads(server.pid()), cpus.empty() ? int(available.size()) : 1, 5000);
            server.stop();
        }
    }

    void cpuIsReadFinerThanClockTicks()
    {
        // A process's CPU read as a server's is (this one's own, by pid): a 2 ms burn reads as about 2 ms, where
        // /proc's clock ticks would give 0 or a whole 10 ms.
        const ProcessSample before = sampleProcess(getpid());
        timespec start {};
        timespec now {};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
        auto nanos = [](const timespec &t) { return t.tv_sec * 1'000'000'000LL + t.tv_nsec; };
        volatile uint64_t spin = 0;
        do {
            for (int i = 0; i < 1000; ++i)
                spin = spin + 1;
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
        } while (nanos(now) - nanos(start) < 2'000'000);
        const ProcessSample after = sampleProcess(getpid());
        QVERIFY(before.valid && after.valid);
        QVERIFY(!after.cpuFromTicks);
        const double used = after.cpuSeconds - before.cpuSeconds;
        QVERIFY2(used >= 0.002 && used < 0.009, qPrintable(QString::number(used, 'f', 6)));
    }

    void readyByPort()
    {
        RunningServer server;
        QString error;
        const QString address = server.start(command(cli + QStringLiteral(" serve grpc --port {port}")), &error);
        QVERIFY2(!address.isEmpty(), qPrintable(error));
        QCOMPARE(address, QStringLiteral("127.0.0.1:%1").arg(server.port()));
        QVERIFY(server.port() != 0);
        QCOMPARE(server.commandLine().last(), QString::number(server.port()));
        QVERIFY(server.isRunning());
        const qint64 pid = server.pid();
        QVERIFY(pid > 0);
        QVERIFY(sampleProcess(static_cast<pid_t>(pid)).valid);
        QVERIFY(tcpConnects(address));

        QElapsedTimer timer;
        timer.start();
        server.stop();
        QVERIFY2(timer.elapsed() < 2500, "serve exits on SIGTERM, well before the grace ends");
        QVERIFY(!server.isRunning());
        QCOMPARE(server.pid(), 0);
        QVERIFY(::kill(static_cast<pid_t>(pid), 0) != 0); // reaped: no zombie
        QVERIFY(server.exitStatus().valid);
        QCOMPARE(server.exitStatus().code, 0);
        QVERIFY(server.finalSample().valid);
        QVERIFY(server.finalSample().cpuSeconds >= 0);
        QVERIFY2(server.output().contains(QStringLiteral("stopping (SIGTERM)")), qPrintable(server.output()));
        QVERIFY(!tcpConnects(address));
    }

    void aPortAnotherProcessListensOnIsNeverShared()
    {
        // A Python server on a port, listening with SO_REUSEPORT as gRPC servers do: rpcscope's built-in servers refuse
        // the port rather than share it (calls meant for the Python server would reach them), and a server command is
        // ready only when its own process tree listens on its port, not because another program answers there.
        QProcess other;
        other.start(QStringLiteral("python3"),
            { QStringLiteral("-c"),
                QStringLiteral("import socket, time\n"
                               "s = socket.socket()\n"
                               "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)\n"
                               "s.bind(('127.0.0.1', 0))\n"
                               "s.listen()\n"
                               "print(s.getsockname()[1], flush=True)\n"
                               "time.sleep(60)\n") });
        QVERIFY(other.waitForReadyRead(10000));
        const auto stopOther = qScopeGuard([&other] {
            other.kill();
            other.waitForFinished(5000);
        });
        const QString port = QString::fromLatin1(other.readLine()).trimmed();
        QVERIFY(port.toUShort() > 0);
        for (const char *transport : { "grpc", "http", "msgpack" }) {
            QProcess serve;
            serve.start(cli, { QStringLiteral("serve"), QLatin1String(transport), QStringLiteral("--port"), port });
            QVERIFY(serve.waitForFinished(10000));
            const QString err = QString::fromUtf8(serve.readAllStandardError());
            QVERIFY2(serve.exitCode() != 0, transport);
            QVERIFY2(err.contains(QStringLiteral("port %1 is in use by another process (PID %2 (python3))")
                                      .arg(port)
                                      .arg(other.processId())),
                qPrintable(QLatin1String(transport) + u' ' + err));
        }
        ServerProcess process;
        ServerProcess::Launch launch;
        launch.program = QStringLiteral("sleep");
        launch.arguments = { QStringLiteral("30") };
        launch.readyPort = port.toUShort();
        launch.readyTimeout = std::chrono::milliseconds(1500);
        QString error;
        QVERIFY(!process.start(launch, &error));
        QVERIFY2(error.contains(QStringLiteral("port %1 is in use by another process, PID %2 (python3), and this "
                                               "command did not listen on it")
                                    .arg(port)
                                    .arg(other.processId())),
            qPrintable(error));
    }

    void readyByPattern_data()
    {
        QTest::addColumn<QString>("line");
        QTest::addColumn<bool>("substituted");
        QTest::newRow("with {port}") << QStringLiteral(" serve grpc --port {port}") << true;
        QTest::newRow("address captured") << QStringLiteral(" serve grpc --port 0") << false;
    }

    void readyByPattern()
    {
        QFETCH(QString, line);
        QFETCH(bool, substituted);
        RunningServer server;
        QString error;
        const QString address = server.start(command(cli + line, QStringLiteral("^(127\\.0\\.0\\.1:\\d+)$")), &error);
        QVERIFY2(!address.isEmpty(), qPrintable(error));
        QCOMPARE(server.readyText(), address);
        if (substituted)
            QCOMPARE(address, QStringLiteral("127.0.0.1:%1").arg(server.port()));
        else
            QCOMPARE(server.port(), quint16(0));
        QVERIFY(tcpConnects(address));
        const qint64 pid = server.pid();
        server.stop();
        QVERIFY(::kill(static_cast<pid_t>(pid), 0) != 0);
    }

    void exitsBeforeReady()
    {
        RunningServer server;
        QString error;
        QVERIFY(server
                    .start(command(QStringLiteral("/bin/sh -c 'echo booting; echo oops >&2; exit 3'"),
                               QStringLiteral("listening on (\\S+)")),
                        &error)
                    .isEmpty());
        QVERIFY2(error.contains(QStringLiteral("exited before it was ready (exit code 3)")), qPrintable(error));
        QVERIFY2(error.contains(QStringLiteral("/bin/sh -c 'echo booting; echo oops >&2; exit 3'")), qPrintable(error));
        QVERIFY2(error.contains(QStringLiteral("booting\noops")), qPrintable(error));
        QVERIFY(!server.isRunning());
        QCOMPARE(server.exitStatus().code, 3);
    }

    void errorShowsOnlyTheLastLines()
    {
        RunningServer server;
        QString error;
        QVERIFY(server
                    .start(command(QStringLiteral(
                               "/bin/sh -c 'for i in $(seq 1 100); do echo line$i; done; exit 1' {port}")),
                        &error)
                    .isEmpty());
        QVERIFY2(
            error.contains(QStringLiteral("line100")) && error.contains(QStringLiteral("line61\n")), qPrintable(error));
        QVERIFY2(!error.contains(QStringLiteral("line60\n")), qPrintable(error));
    }

    void neverReady_data()
    {
        QTest::addColumn<QString>("pattern");
        QTest::addColumn<QString>("why");
        QTest::newRow("by pattern") << QStringLiteral("never (\\S+)") << QStringLiteral("no output line matched");
        QTest::newRow("by port") << QString() << QStringLiteral("accepted no TCP connection");
    }

    void neverReady()
    {
        QFETCH(QString, pattern);
        QFETCH(QString, why);
        ServerCommand c = command(QStringLiteral("/bin/sh -c 'echo pid $$; exec sleep 30'"), pattern, 500ms);
        if (pattern.isEmpty())
            c.environment = { { QStringLiteral("PORT"), QStringLiteral("{port}") } };
        RunningServer server;
        QString error;
        QElapsedTimer timer;
        timer.start();
        QVERIFY(server.start(c, &error).isEmpty());
        const qint64 elapsed = timer.elapsed();
        QVERIFY2(elapsed >= 450 && elapsed < 1500, qPrintable(QString::number(elapsed)));
        QVERIFY2(error.contains(QStringLiteral("was not ready after the 500 ms timeout")), qPrintable(error));
        QVERIFY2(error.contains(why), qPrintable(error));
        const qint64 pid = numberAfter(error, QStringLiteral("pid"));
        QVERIFY2(pid > 0, qPrintable(error));
        QVERIFY(::kill(static_cast<pid_t>(pid), 0) != 0);
        QVERIFY(server.exitStatus().valid);
        QCOMPARE(server.exitStatus().signal, SIGTERM);
    }

    void cannotStart()
    {
        RunningServer server;
        QString error;
        QVERIFY(server.start(command(QStringLiteral("no-such-program-here --port {port}")), &error).isEmpty());
        QVERIFY2(error.contains(QStringLiteral("no-such-program-here")) && error.contains(QStringLiteral("not found")),
            qPrintable(error));
        ServerCommand inMissingDir = command(QStringLiteral("/bin/true {port}"));
        inMissingDir.workingDirectory = QStringLiteral("/no/such/directory");
        QVERIFY(server.start(inMissingDir, &error).isEmpty());
        QVERIFY2(error.contains(QStringLiteral("/no/such/directory")), qPrintable(error));
        QVERIFY(server.start(command(QStringLiteral("/bin/sh -c 'oops {port}")), &error).isEmpty());
        QVERIFY2(error.startsWith(QStringLiteral("server.command: unterminated single quote")), qPrintable(error));
    }

    void ignoresSigtermIsKilled()
    {
        const QString python = QStandardPaths::findExecutable(QStringLiteral("python3"));
        if (python.isEmpty())
            QSKIP("python3 is not installed");
        const QString script
            = QStringLiteral("import signal, socket, sys, time\n"
                             "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                             "s = socket.socket(); s.bind((\"127.0.0.1\", int(sys.argv[1]))); s.listen()\n"
                             "time.sleep(60)\n");
        RunningServer server;
        QString error;
        const QString address
            = server.start(command(python + QStringLiteral(" -c '") + script + QStringLiteral("' {port}")), &error);
        QVERIFY2(!address.isEmpty(), qPrintable(error));
        const qint64 pid = server.pid();
        QElapsedTimer timer;
        timer.start();
        server.stop(700ms);
        const qint64 elapsed = timer.elapsed();
        QVERIFY2(elapsed >= 650 && elapsed < 3000, qPrintable(QString::number(elapsed)));
        QCOMPARE(server.exitStatus().signal, SIGKILL);
        QVERIFY2(server.exitStatus().toString().contains(QStringLiteral("SIGKILL")),
            qPrintable(server.exitStatus().toString()));
        QVERIFY(::kill(static_cast<pid_t>(pid), 0) != 0);
    }

    void environmentAndWorkingDirectory()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        ServerCommand c = command(
            QStringLiteral("/bin/sh -c 'echo \"ready $FOO $BAR $(pwd)\"; sleep 30'"), QStringLiteral("ready (.*)"));
        c.workingDirectory = dir.path();
        c.environment = { { QStringLiteral("FOO"), QStringLiteral("hello world") },
            { QStringLiteral("BAR"), QStringLiteral("p{port}") } };
        RunningServer server;
        QString error;
        const QString address = server.start(c, &error);
        QVERIFY2(!address.isEmpty(), qPrintable(error));
        QCOMPARE(server.readyText(),
            QStringLiteral("hello world p%1 %2").arg(server.port()).arg(QFileInfo(dir.path()).canonicalFilePath()));
        const qint64 pid = server.pid();
        server.stop();
        QVERIFY(::kill(static_cast<pid_t>(pid), 0) != 0);
        QCOMPARE(server.exitStatus().signal, SIGTERM);
    }

    void wholeProcessGroupIsStopped()
    {
        // The shell ignores SIGTERM while it waits; its background child does not. Both must be gone.
        RunningServer server;
        QString error;
        const QString address = server.start(
            command(QStringLiteral("/bin/sh -c 'trap \"\" TERM; sleep 30 & echo \"child $!\"; wait; wait'"),
                QStringLiteral("child (\\d+)")),
            &error);
        QVERIFY2(!address.isEmpty(), qPrintable(error));
        const qint64 child = address.toLongLong();
        QVERIFY(child > 0);
        const qint64 shell = server.pid();
        server.stop(1s);
        QVERIFY(::kill(static_cast<pid_t>(shell), 0) != 0);
        QTRY_VERIFY_WITH_TIMEOUT(processGone(child), 3000);
    }

    void chattyServerIsNeverBlocked()
    {
        // No event loop runs here (as in the CLI during a run): the output is drained all the same, so a server
        // that logs a lot after it is ready never blocks on a full pipe.
        RunningServer server;
        QString error;
        const QString address = server.start(
            command(QStringLiteral("/bin/sh -c 'echo ready at here; seq 1 300000; echo done-logging; sleep 30'"),
                QStringLiteral("ready at (\\S+)")),
            &error);
        QVERIFY2(!address.isEmpty(), qPrintable(error));
        QElapsedTimer timer;
        timer.start();
        while (!server.output().contains(QStringLiteral("done-logging")) && timer.elapsed() < 10000)
            QThread::msleep(20);
        QVERIFY2(server.output().contains(QStringLiteral("done-logging")), qPrintable(server.output().right(200)));
        QCOMPARE(server.output().count(QLatin1Char('\n')) + 1, ServerProcess::outputLineLimit);
        server.stop();
    }

    void destructorStops()
    {
        qint64 pid = 0;
        {
            RunningServer server;
            QString error;
            QVERIFY2(!server.start(command(cli + QStringLiteral(" serve grpc --port {port}")), &error).isEmpty(),
                qPrintable(error));
            pid = server.pid();
        }
        QVERIFY(pid > 0);
        QVERIFY(::kill(static_cast<pid_t>(pid), 0) != 0);
    }

    void nothingItStartsOutlivesAKilledRpcscope()
    {
        // The case: a server command whose shell starts the server as its child, then rpcscope is killed
        // with SIGKILL mid-run. The shell gets PR_SET_PDEATHSIG's SIGTERM; the server, its grandchild, must go too.
        QTemporaryDir dir;
        const QString pidFile = dir.filePath(QStringLiteral("server.pid"));
        QProcess rpcscope;
        startLongRun(&rpcscope,
            QStringLiteral("sh -c '%1 serve grpc --port {port} & echo $! > %2; wait; true'").arg(cli, pidFile));
        const qint64 server = pidFromFile(pidFile);
        QVERIFY(server > 0 && !processGone(server));
        killOnceGuarded(&rpcscope);
        QTRY_VERIFY_WITH_TIMEOUT(processGone(server), 10000);
    }

    void aDetachedDescendantIsStoppedWithIt()
    {
        // Issue 33 item 14: a process that left the server's group and its parent (setsid after a fork) is out of
        // reach of the group's signals; it still carries the server's mark in its environment.
        QTemporaryDir dir;
        const QString pidFile = dir.filePath(QStringLiteral("detached.pid"));
        RunningServer server;
        QString error;
        const QString address
            = server.start(command(leavesADetachedProcess(pidFile, QStringLiteral("echo ready; exec sleep 30")),
                               QStringLiteral("(ready)")),
                &error);
        QVERIFY2(!address.isEmpty(), qPrintable(error));
        const qint64 detached = pidFromFile(pidFile);
        QVERIFY(detached > 0 && !processGone(detached));
        const auto noneLeft = qScopeGuard([detached] { killIfLeft(detached); });
        const auto [session, parent] = sessionAndParent(detached);
        QCOMPARE(session, detached); // a session (and group) of its own
        QVERIFY(parent != server.pid()); // and not the server's child
        server.stop(1s);
        QTRY_VERIFY_WITH_TIMEOUT(processGone(detached), 5000);
    }

    void aDetachedDescendantDoesNotOutliveAKilledRpcscope()
    {
        QTemporaryDir dir;
        const QString pidFile = dir.filePath(QStringLiteral("detached.pid"));
        QProcess rpcscope;
        startLongRun(
            &rpcscope, leavesADetachedProcess(pidFile, QStringLiteral("exec %1 serve grpc --port {port}").arg(cli)));
        const qint64 detached = pidFromFile(pidFile);
        QVERIFY(detached > 0 && !processGone(detached));
        const auto noneLeft = qScopeGuard([detached] { killIfLeft(detached); });
        killOnceGuarded(&rpcscope);
        QTRY_VERIFY_WITH_TIMEOUT(processGone(detached), 10000);
    }

    void aLaunchDialsWhatItsTransportNeedsAndRestartsTheSameCommand()
    {
        // rpcscope's own HTTP server, as run and ab start it: ready on its serve line, dialled as a URL; a restart
        // (a process replicate) is the same command again, in a new process.
        ServerLaunch launch;
        QString error;
        const QString first = launch.start(builtinServeCommand(cli, TransportKind::Http), TransportKind::Http, &error);
        QVERIFY2(first.startsWith(QStringLiteral("http://127.0.0.1:")), qPrintable(first + error));
        QVERIFY(tcpConnects(first.mid(7)));
        const qint64 firstPid = launch.pid();
        const QString second = launch.restart(&error);
        QVERIFY2(second.startsWith(QStringLiteral("http://127.0.0.1:")), qPrintable(second + error));
        QVERIFY(launch.pid() != firstPid && processGone(firstPid));
        QCOMPARE(launch.command().readyPattern, serveReadyPattern());
        launch.stop();
        QCOMPARE(launch.pid(), 0);
        QCOMPARE(
            dialAddress(TransportKind::Http, QStringLiteral("127.0.0.1:80")), QStringLiteral("http://127.0.0.1:80"));
        QCOMPARE(dialAddress(TransportKind::Http, QStringLiteral("https://h:1")), QStringLiteral("https://h:1"));
        QCOMPARE(dialAddress(TransportKind::Grpc, QStringLiteral("127.0.0.1:80")), QStringLiteral("127.0.0.1:80"));
    }

    void serverProcessAsTheCliUsesIt()
    {
        // The call in cliapp.cpp (--builtin), unchanged.
        ServerProcess server;
        QString error;
        QVERIFY2(server.start(cli,
                     { QStringLiteral("serve"), QStringLiteral("grpc"), QStringLiteral("--port"), QStringLiteral("0") },
                     QStringLiteral("^((?:http://)?[0-9.]+:[0-9]+)$"), 10s, &error),
            qPrintable(error));
        QVERIFY(tcpConnects(server.readyText()));
        QVERIFY(server.isRunning());
        server.stop();
        QVERIFY(!server.isRunning());
    }
};

QTEST_GUILESS_MAIN(TestServerCommand)
#include "tst_servercommand.moc"
