// Client commands (issue 36): the protocol's lines read, and real client processes run block by block: the shell
// fallback, the example Python grpcio and grpc.aio clients against rpcscope's built-in server, and clients that
// misbehave (garbage, early exit, silence, too many calls), each refused with the line named.
#include "client/clientcommand.h"
#include "client/clientload.h"
#include "client/clientprotocol.h"
#include "engine/abrunner.h"
#include "scenario/scenario.h"

#include "cliprocess.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <thread>

using namespace rpcscope;
using namespace std::chrono_literals;

namespace {

const QString kExamples = QStringLiteral(RPCSCOPE_SOURCE_DIR "/examples/clients");
const QString kSystemPython = QStringLiteral("/usr/bin/python3");
/// What a client says first, once it has connected (in a shell script given to sh -c '...').
const QString kReady = QStringLiteral("echo \"{\\\"ready\\\": true}\"; ");

ClientCommand shellClient(const char *script)
{
    ClientCommand command;
    command.command = QStringLiteral("sh -c '%1%2'").arg(kReady, QString::fromUtf8(script));
    command.idleTimeout = 5s;
    return command;
}

bool systemPythonHasGrpc()
{
    QProcess python;
    python.start(kSystemPython, { QStringLiteral("-c"), QStringLiteral("import grpc, google.protobuf") });
    return python.waitForFinished(20000) && python.exitStatus() == QProcess::NormalExit && python.exitCode() == 0;
}

/// rpcscope-cli serve grpc, on a free loopback port, until destroyed.
class BuiltinServer {
public:
    bool start()
    {
        m_process.start(QStringLiteral(RPCSCOPE_CLI), { QStringLiteral("serve"), QStringLiteral("grpc") });
        if (!m_process.waitForReadyRead(10000))
            return false;
        m_address = QString::fromUtf8(m_process.readLine()).trimmed();
        return !m_address.isEmpty();
    }
    ~BuiltinServer() { stop(); }
    void stop()
    {
        if (m_process.state() == QProcess::NotRunning)
            return;
        m_process.terminate();
        if (!m_process.waitForFinished(5000))
            m_process.kill();
        m_process.waitForFinished();
    }
    const QString &address() const { return m_address; }

private:
    QProcess m_process;
    QString m_address;
};

} // namespace

class TestClientCommand : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void linesOfTheProtocol_data()
    {
        QTest::addColumn<QByteArray>("line");
        QTest::addColumn<int>("kind"); // -1: refused
        QTest::addColumn<QString>("expected"); // the field checked, or a word of the error
        QTest::newRow("call") << QByteArray("{\"latency_ns\": 53000, \"ok\": true, \"bytes_sent\": 10}") << 0
                              << QStringLiteral("53000");
        QTest::newRow("failed call") << QByteArray("{\"latency_ns\": 7, \"ok\": false, \"status\": \"UNAVAILABLE\"}")
                                     << 0 << QStringLiteral("UNAVAILABLE");
        QTest::newRow("http status") << QByteArray("{\"latency_ns\": 7, \"ok\": false, \"status\": 503}") << 0
                                     << QStringLiteral("503");
        QTest::newRow("escapes") << QByteArray("{\"latency_ns\": 9, \"ok\": false, \"error\": \"said \\\"no\\\"\\n\"}")
                                 << 0 << QStringLiteral("said \"no\"\n");
        QTest::newRow("later fields") << QByteArray("{\"latency_ns\": 1, \"ok\": true, \"trace\": {\"id\": [1, 2]}}")
                                      << 0 << QStringLiteral("1");
        QTest::newRow("done") << QByteArray("{\"done\": 3}") << 1 << QStringLiteral("3");
        QTest::newRow("fatal") << QByteArray("{\"fatal\": \"cannot connect\"}") << 2
                               << QStringLiteral("cannot connect");
        QTest::newRow("no latency") << QByteArray("{\"ok\": true}") << -1 << QStringLiteral("latency_ns");
        QTest::newRow("no ok") << QByteArray("{\"latency_ns\": 5}") << -1 << QStringLiteral("\"ok\"");
        QTest::newRow("negative") << QByteArray("{\"latency_ns\": -5, \"ok\": true}") << -1
                                  << QStringLiteral("whole number");
        QTest::newRow("fraction") << QByteArray("{\"latency_ns\": 5.5, \"ok\": true}") << -1
                                  << QStringLiteral("whole number");
        QTest::newRow("ok as text") << QByteArray("{\"latency_ns\": 5, \"ok\": \"yes\"}") << -1
                                    << QStringLiteral("true or false");
        QTest::newRow("garbage") << QByteArray("listening on port 50051") << -1 << QStringLiteral("not a JSON");
        QTest::newRow("array") << QByteArray("[1, 2]") << -1 << QStringLiteral("not a JSON object");
        QTest::newRow("cut short") << QByteArray("{\"latency_ns\": 5, \"ok\": tr") << -1 << QStringLiteral("column");
    }

    void linesOfTheProtocol()
    {
        QFETCH(QByteArray, line);
        QFETCH(int, kind);
        QFETCH(QString, expected);
        QString error;
        const std::optional<ClientEvent> event = parseClientLine(line, &error);
        if (kind < 0) {
            QVERIFY(!event);
            QVERIFY2(error.contains(expected), qPrintable(error));
            return;
        }
        QVERIFY2(event, qPrintable(error));
        QCOMPARE(static_cast<int>(event->kind), kind);
        if (kind == ClientEvent::Done)
            QCOMPARE(QString::number(event->block), expected);
        else if (kind == ClientEvent::Fatal)
            QCOMPARE(event->message, expected);
        else if (event->ok)
            QCOMPARE(QString::number(event->latencyNs), expected);
        else
            QVERIFY2(event->status == expected || event->message == expected,
                qPrintable(event->status + u'|' + event->message));
    }

    void theBlockLineSaysWhatToRun()
    {
        QCOMPARE(clientBlockLine(2, 500, 0, 4, 5),
            QByteArray("{\"block\": 2, \"calls\": 500, \"concurrency\": 4, \"warmup_calls\": 5}"
                       "\n"));
        QCOMPARE(clientBlockLine(1, 0, 1500, 1, 0),
            QByteArray("{\"block\": 1, \"duration_ms\": 1500, \"concurrency\": 1, \"warmup_calls\": 0}"
                       "\n"));
    }

    void theShellFallbackTimesACommandPerCall()
    {
        // A command that fails every other call: the OK ones timed as latency, the others as errors.
        QTemporaryDir dir;
        ClientCommand command;
        command.command
            = QStringLiteral("sh %1/percall.sh 'if test -e %2/odd; then rm %2/odd; exit 1; fi; touch %2/odd'")
                  .arg(kExamples, dir.path());
        ClientCommandRunner runner;
        QString error;
        QVERIFY2(runner.start(command, QStringLiteral("127.0.0.1:1"), &error), qPrintable(error));
        ClientBlock block;
        block.calls = 10;
        block.warmupCalls = 2;
        RunSnapshot snapshot;
        QVERIFY2(runner.runBlock(block, &snapshot, &error), qPrintable(error));
        QCOMPARE(snapshot.state, RunState::Finished);
        QCOMPARE(snapshot.callsCompleted(), 10u);
        QCOMPARE(snapshot.latency.count(), 5u);
        QCOMPARE(snapshot.errorLatency.count(), 5u);
        QCOMPARE(snapshot.statusCounts[CallStatus::Unknown], 5u);
        QVERIFY(snapshot.latency.min() > 100000); // a process started per call: well over 100 us
        QVERIFY(snapshot.elapsed > 0ns);
        QVERIFY(!snapshot.timeline.isEmpty());
        // A second block on the same process.
        block.number = 2;
        block.calls = 4;
        QVERIFY2(runner.runBlock(block, &snapshot, &error), qPrintable(error));
        QCOMPARE(snapshot.callsCompleted(), 4u);
        runner.stop();
        QVERIFY(!runner.isRunning());
    }

    void aPythonGrpcClientCallsTheBuiltinServer_data()
    {
        QTest::addColumn<bool>("aio");
        QTest::newRow("grpcio") << false;
        QTest::newRow("grpc.aio") << true;
    }

    void aPythonGrpcClientCallsTheBuiltinServer()
    {
        QFETCH(bool, aio);
        if (!systemPythonHasGrpc())
            QSKIP("/usr/bin/python3 with python3-grpcio and python3-protobuf is not installed");
        BuiltinServer server;
        QVERIFY(server.start());
        QTemporaryDir generated;
        ClientCommand command;
        command.command = QStringLiteral("%1 %2/grpc_echo_client.py --payload-bytes 1KB%3")
                              .arg(kSystemPython, kExamples, aio ? QStringLiteral(" --aio") : QString());
        command.environment = { { QStringLiteral("RPCSCOPE_PY_GEN"), generated.path() } };
        ClientCommandRunner runner;
        QString error;
        QVERIFY2(runner.start(command, server.address(), &error), qPrintable(error));
        ClientBlock block;
        block.calls = 200;
        block.concurrency = 2;
        block.warmupCalls = 5;
        RunSnapshot snapshot;
        QVERIFY2(runner.runBlock(block, &snapshot, &error), qPrintable(error));
        QCOMPARE(snapshot.latency.count(), 200u);
        QCOMPARE(snapshot.errorLatency.count(), 0u);
        QCOMPARE(snapshot.warmupCalls, 5u);
        QCOMPARE(snapshot.bytesReceived, 200u * (1024 + 3)); // the reply message whole: a tag, a length, the bytes
        QVERIFY(snapshot.bytesSent >= 200u * 1024);
        // Python's gRPC: tens of microseconds at least, and the client's CPU measured from outside.
        QVERIFY2(snapshot.latency.percentile(50) > 20000, qPrintable(QString::number(snapshot.latency.percentile(50))));
        QVERIFY(snapshot.clientCpuSeconds > 0);
        QVERIFY(snapshot.clientPeakRssBytes > 1 << 20);
        // By time: it stops when told, and says so.
        block.number = 2;
        block.calls = 0;
        block.duration = 300ms;
        QVERIFY2(runner.runBlock(block, &snapshot, &error), qPrintable(error));
        QVERIFY(snapshot.latency.count() > 10);
        QVERIFY2(
            snapshot.elapsed >= 250ms && snapshot.elapsed < 3s, qPrintable(QString::number(snapshot.elapsed.count())));
        runner.stop();
        QVERIFY(runner.stderrTail().contains(QStringLiteral("grpc_echo_client: ") + server.address()));
        // --sum N: Bench/Sum of 0 .. N-1, whose reply is their sum (an int64: a tag and a varint).
        command.command += QStringLiteral(" --sum 1000");
        QVERIFY2(runner.start(command, server.address(), &error), qPrintable(error));
        block = ClientBlock();
        block.calls = 20;
        QVERIFY2(runner.runBlock(block, &snapshot, &error), qPrintable(error));
        QCOMPARE(snapshot.latency.count(), 20u);
        QCOMPARE(snapshot.bytesReceived, 20u * 4); // 499500 is a 3-byte varint after its tag
        runner.stop();
        QVERIFY(runner.stderrTail().contains(QStringLiteral("Sum of 1000 numbers")));
    }

    void aGoGrpcClientCallsTheBuiltinServer()
    {
        const QString client = QStringLiteral(RPCSCOPE_GO_ECHO_CLIENT);
        if (client.isEmpty())
            QSKIP("Go is not installed (packaging/debian-packages.txt has golang-go and golang-google-grpc-dev)");
        BuiltinServer server;
        QVERIFY(server.start());
        ClientCommand command;
        command.command = client + QStringLiteral(" -payload-bytes 512");
        ClientCommandRunner runner;
        QString error;
        QVERIFY2(runner.start(command, server.address(), &error), qPrintable(error));
        ClientBlock block;
        block.calls = 500;
        block.concurrency = 4;
        block.warmupCalls = 4;
        RunSnapshot snapshot;
        QVERIFY2(runner.runBlock(block, &snapshot, &error), qPrintable(error));
        QCOMPARE(snapshot.latency.count(), 500u);
        QCOMPARE(snapshot.warmupCalls, 4u);
        QCOMPARE(snapshot.bytesReceived, 500u * (512 + 3)); // the reply message whole: a tag, a length, the bytes
        QVERIFY(snapshot.clientCpuSeconds > 0);
        // A failed call is reported with its gRPC status: the server is gone.
        block.number = 2;
        block.calls = 3;
        block.warmupCalls = 0;
        server.stop();
        QVERIFY2(runner.runBlock(block, &snapshot, &error), qPrintable(error));
        QCOMPARE(snapshot.errorLatency.count(), 3u);
        QCOMPARE(snapshot.statusCounts[CallStatus::Unavailable], 3u);
    }

    void misbehavingClientsAreNamed_data()
    {
        QTest::addColumn<QString>("script");
        QTest::addColumn<QStringList>("said");
        QTest::newRow("garbage") << QStringLiteral("read l; echo listening on 50051; sleep 5")
                                 << QStringList { QStringLiteral("stdout line 2"), QStringLiteral("not a JSON"),
                                        QStringLiteral("listening on 50051") };
        QTest::newRow("early exit") << QStringLiteral(
            "read l; echo \"{\\\"latency_ns\\\": 10, \\\"ok\\\": true}\"; echo bye >&2; exit 3")
                                    << QStringList { QStringLiteral("exited before block 1 was done (exit code 3)"),
                                           QStringLiteral("after 1 timed calls"), QStringLiteral("bye") };
        QTest::newRow("silent") << QStringLiteral("read l; sleep 30")
                                << QStringList { QStringLiteral("printed nothing for 1 s") };
        QTest::newRow("too many") << QStringLiteral(
            "read l; for i in 1 2 3 4; do echo \"{\\\"latency_ns\\\": 1, \\\"ok\\\": true}\"; done; sleep 5")
                                  << QStringList { QStringLiteral("stdout line 5"),
                                         QStringLiteral("more timed calls than the 3 asked") };
        QTest::newRow("too few") << QStringLiteral(
            "read l; echo \"{\\\"latency_ns\\\": 1, \\\"ok\\\": true}\"; echo \"{\\\"done\\\": 1}\"; sleep 5")
                                 << QStringList { QStringLiteral("done after 1 timed calls of the 3 asked") };
        QTest::newRow("another block") << QStringLiteral("read l; echo \"{\\\"done\\\": 7}\"; sleep 5")
                                       << QStringList { QStringLiteral("\"done\" for block 7 while block 1 runs") };
        QTest::newRow("fatal") << QStringLiteral("read l; echo \"{\\\"fatal\\\": \\\"no route to host\\\"}\"; sleep 5")
                               << QStringList { QStringLiteral(
                                      "the client gave up (stdout line 2): no route to host") };
    }

    void misbehavingClientsAreNamed()
    {
        QFETCH(QString, script);
        QFETCH(QStringList, said);
        ClientCommand command;
        command.command = QStringLiteral("sh -c '%1%2'").arg(kReady, script);
        command.idleTimeout = 1s;
        ClientCommandRunner runner;
        QString error;
        QVERIFY2(runner.start(command, QStringLiteral("127.0.0.1:1"), &error), qPrintable(error));
        ClientBlock block;
        block.calls = 3;
        RunSnapshot snapshot;
        const auto begin = std::chrono::steady_clock::now();
        QVERIFY(!runner.runBlock(block, &snapshot, &error));
        QVERIFY(std::chrono::steady_clock::now() - begin < 10s); // never stalls
        QVERIFY2(error.startsWith(QStringLiteral("client command sh -c")), qPrintable(error));
        for (const QString &words : said)
            QVERIFY2(error.contains(words), qPrintable(error));
    }

    void clientsThatNeverGetReadyAreNamed_data()
    {
        QTest::addColumn<QString>("script");
        QTest::addColumn<QString>("said");
        QTest::newRow("calls first")
            << QStringLiteral("echo \"{\\\"latency_ns\\\": 1, \\\"ok\\\": true}\"; sleep 5")
            << QStringLiteral("stdout line 1: a client first says {\"ready\": true} once it has connected");
        QTest::newRow("garbage first") << QStringLiteral("echo connecting...; sleep 5")
                                       << QStringLiteral("(and this is not JSON");
        QTest::newRow("exits") << QStringLiteral("echo cannot connect >&2; exit 4")
                               << QStringLiteral("exited before it said it was ready (exit code 4)");
        QTest::newRow("silent") << QStringLiteral("sleep 30")
                                << QStringLiteral("did not say {\"ready\": true} within 1 s");
        QTest::newRow("fatal") << QStringLiteral("echo \"{\\\"fatal\\\": \\\"no route\\\"}\"; sleep 5")
                               << QStringLiteral("the client gave up (stdout line 1): no route");
    }

    void clientsThatNeverGetReadyAreNamed()
    {
        QFETCH(QString, script);
        QFETCH(QString, said);
        ClientCommand command;
        command.command = QStringLiteral("sh -c '%1'").arg(script);
        command.idleTimeout = 1s;
        ClientCommandRunner runner;
        QString error;
        const auto begin = std::chrono::steady_clock::now();
        QVERIFY(!runner.start(command, QStringLiteral("127.0.0.1:1"), &error));
        QVERIFY(std::chrono::steady_clock::now() - begin < 10s);
        QVERIFY2(error.contains(said), qPrintable(error));
        QVERIFY(!runner.isRunning());
    }

    void badCommandsAreRefusedBeforeTheyRun()
    {
        ClientCommandRunner runner;
        QString error;
        ClientCommand missing;
        missing.command = QStringLiteral("no-such-client-program --x");
        QVERIFY(!runner.start(missing, QStringLiteral("127.0.0.1:1"), &error));
        QVERIFY2(
            error.contains(QStringLiteral("no-such-client-program: program not found in PATH")), qPrintable(error));
        ClientCommand unterminated;
        unterminated.command = QStringLiteral("sh -c 'echo");
        QVERIFY(!runner.start(unterminated, QStringLiteral("127.0.0.1:1"), &error));
        QVERIFY2(error.startsWith(QStringLiteral("client command: ")), qPrintable(error));
    }

    void theTargetIsGivenToTheClient()
    {
        // {target} in the command and its environment, and RPCSCOPE_TARGET.
        ClientCommand command
            = shellClient("read l; echo \"$RPCSCOPE_TARGET $WHERE $0\" >&2; echo \"{\\\"done\\\": 1}\"; sleep 5");
        command.command += QStringLiteral(" {target}");
        command.environment = { { QStringLiteral("WHERE"), QStringLiteral("at-{target}") } };
        ClientCommandRunner runner;
        QString error;
        QVERIFY2(runner.start(command, QStringLiteral("127.0.0.1:4242"), &error), qPrintable(error));
        ClientBlock block;
        block.calls = 0;
        block.duration = 10ms;
        RunSnapshot snapshot;
        QVERIFY2(runner.runBlock(block, &snapshot, &error), qPrintable(error));
        QTRY_VERIFY(runner.stderrTail().contains(QStringLiteral("127.0.0.1:4242 at-127.0.0.1:4242 127.0.0.1:4242")));
        QVERIFY(runner.commandLine().endsWith(QStringLiteral("127.0.0.1:4242")));
    }

    void interruptEndsABlockEarly()
    {
        ClientCommand command = shellClient(
            "read l; while :; do echo \"{\\\"latency_ns\\\": 1000, \\\"ok\\\": true}\"; sleep 0.01; done");
        ClientCommandRunner runner;
        QString error;
        QVERIFY2(runner.start(command, QStringLiteral("127.0.0.1:1"), &error), qPrintable(error));
        std::thread stopper([&runner] {
            std::this_thread::sleep_for(300ms);
            runner.interrupt();
        });
        ClientBlock block;
        block.calls = 0;
        block.duration = 60s;
        RunSnapshot snapshot;
        const auto begin = std::chrono::steady_clock::now();
        const bool ok = runner.runBlock(block, &snapshot, &error);
        stopper.join();
        QVERIFY2(ok, qPrintable(error));
        QCOMPARE(snapshot.state, RunState::Stopped);
        QVERIFY(snapshot.latency.count() > 3);
        QVERIFY(std::chrono::steady_clock::now() - begin < 5s);
        runner.stop(200ms); // it never reads its stdin again: stopped by signal after the grace
        QVERIFY(!runner.isRunning());
    }

    void abComparesTwoClientRuntimes()
    {
        // The case behind issue 36, small: the same Python client with the C++ protobuf runtime (A) and the
        // pure-Python one (B), against the built-in server; the sides named by what differs, and saved.
        if (!systemPythonHasGrpc())
            QSKIP("/usr/bin/python3 with python3-grpcio and python3-protobuf is not installed");
        QTemporaryDir dir;
        const QString db = dir.filePath(QStringLiteral("runs.sqlite"));
        const QString runtime = QStringLiteral("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION");
        const CliResult ab = runCliProcess(
            { QStringLiteral("ab"), QStringLiteral("--a"), QStringLiteral("builtin"), QStringLiteral("--b"),
                QStringLiteral("builtin"), QStringLiteral("--client"),
                QStringLiteral("%1 %2/grpc_echo_client.py --payload-bytes 64KB").arg(kSystemPython, kExamples),
                QStringLiteral("--client-env"),
                QStringLiteral("RPCSCOPE_PY_GEN=") + dir.filePath(QStringLiteral("gen")),
                QStringLiteral("--a-client-env"), runtime + QStringLiteral("=cpp"), QStringLiteral("--b-client-env"),
                runtime + QStringLiteral("=python"), QStringLiteral("--call"),
                QStringLiteral("rpcscope.bench.v1.Bench/Echo"), QStringLiteral("-n"), QStringLiteral("100"),
                QStringLiteral("-c"), QStringLiteral("1"), QStringLiteral("--db"), db },
            120000);
        QVERIFY2(ab.exitCode == 0 || ab.exitCode == 4, qPrintable(ab.err + ab.out));
        QVERIFY2(ab.out.contains(runtime + QStringLiteral("=cpp (A)"))
                && ab.out.contains(runtime + QStringLiteral("=python (B)")),
            qPrintable(ab.out));
        // The replicates are the client command's processes (its connections its own: none is named), the i-th of
        // each side run side by side: judged pair by pair.
        QVERIFY2(ab.out.contains(QStringLiteral("Judged on: 5 pairs of client processes, run side by side, ")),
            qPrintable(ab.out));
        // Every block's calls came from the clients: 100 a side.
        QVERIFY2(ab.err.contains(QStringLiteral("round 10 ")), qPrintable(ab.err));
        // Saved with what made the calls: compare reads it back from the history.
        const CliResult compare = runCliProcess(
            { QStringLiteral("compare"), QStringLiteral("1"), QStringLiteral("2"), QStringLiteral("--db"), db });
        QVERIFY2(
            compare.out.contains(QStringLiteral("client env %1: cpp -> python").arg(runtime)), qPrintable(compare.out));
        // and pairs them again: the history keeps which A/B run the two came from.
        QVERIFY2(compare.out.contains(QStringLiteral("Judged on: 5 pairs of client processes, run side by side, ")),
            qPrintable(compare.out));
    }

    void abRefusesABrokenClientWithoutAVerdict()
    {
        const QStringList common { QStringLiteral("--call"), QStringLiteral("rpcscope.bench.v1.Bench/Echo"),
            QStringLiteral("-n"), QStringLiteral("40"), QStringLiteral("-c"), QStringLiteral("1"),
            QStringLiteral("--no-save") };
        CliResult ab
            = runCliProcess(QStringList { QStringLiteral("ab"), QStringLiteral("--a"), QStringLiteral("builtin"),
                                QStringLiteral("--b"), QStringLiteral("builtin"), QStringLiteral("--b-client"),
                                QStringLiteral("sh -c '%1read l; echo hello'").arg(kReady) }
                + common);
        QCOMPARE(ab.exitCode, 3);
        QVERIFY2(ab.err.contains(QStringLiteral("B: client command sh -c"))
                && ab.err.contains(QStringLiteral("stdout line 2")) && ab.err.contains(QStringLiteral("no verdict")),
            qPrintable(ab.err));
        QVERIFY2(!ab.out.contains(QStringLiteral("verdict")), qPrintable(ab.out));
        // Flags that cannot work are refused before anything starts.
        ab = runCliProcess(
            QStringList { QStringLiteral("ab"), QStringLiteral("--a"), QStringLiteral("builtin"), QStringLiteral("--b"),
                QStringLiteral("builtin"), QStringLiteral("--b-client-env"), QStringLiteral("X=1") }
            + common);
        QCOMPARE(ab.exitCode, 2);
        QVERIFY2(ab.err.contains(QStringLiteral("--b-client-env")), qPrintable(ab.err));
        ab = runCliProcess(
            QStringList { QStringLiteral("ab"), QStringLiteral("--a"), QStringLiteral("builtin"), QStringLiteral("--b"),
                QStringLiteral("builtin"), QStringLiteral("--a-client"), QStringLiteral("no-such-client-program") }
            + common);
        QCOMPARE(ab.exitCode, 2);
        QVERIFY2(
            ab.err.contains(QStringLiteral("--a-client: client command: no-such-client-program")), qPrintable(ab.err));
    }

    void aClientLoadGrowsAsItRunsAndStopsSoon()
    {
        // run --client's load: its snapshots grow inside the block, as the client reports; stop() ends it soon.
        ClientLoad load;
        QSignalSpy finished(&load, &LoadRun::runFinished);
        LoadPlan plan;
        plan.totalCalls = 0;
        plan.duration = 60s;
        plan.concurrency = 1;
        QString error;
        QVERIFY2(load.start(shellClient("read l; while :; do echo \"{\\\"latency_ns\\\": 3000000, \\\"ok\\\": true}\"; "
                                        "sleep 0.01; done"),
                     QStringLiteral("127.0.0.1:1"), plan, nullptr, &error),
            qPrintable(error));
        QVERIFY(load.isRunning());
        QTRY_VERIFY_WITH_TIMEOUT(load.snapshot().callsSent >= 10, 10000);
        QCOMPARE(load.snapshot().state, RunState::Running);
        QVERIFY(load.snapshot().latency.count() >= 10);
        const auto begin = std::chrono::steady_clock::now();
        load.stop();
        QVERIFY(load.waitForFinished(5s));
        QVERIFY(std::chrono::steady_clock::now() - begin < 5s);
        QCOMPARE(load.snapshot().state, RunState::Stopped);
        QVERIFY(load.failure().isEmpty());
        QTRY_COMPARE(finished.count(), 1);
        const double p50 = load.snapshot().latency.percentile(50);
        QVERIFY2(p50 > 2.9e6 && p50 < 3.1e6, qPrintable(QString::number(p50)));

        // A stop while the client is still starting does not wait for its ready timeout.
        ClientLoad starting;
        ClientCommand slow;
        slow.command = QStringLiteral("sleep 30");
        QVERIFY(starting.start(slow, QStringLiteral("127.0.0.1:1"), plan, nullptr, &error));
        std::this_thread::sleep_for(200ms);
        const auto stopped = std::chrono::steady_clock::now();
        starting.stop();
        QVERIFY(starting.waitForFinished(10s));
        QVERIFY(std::chrono::steady_clock::now() - stopped < 5s);
        QVERIFY2(starting.failure().isEmpty(), qPrintable(starting.failure()));
        QCOMPARE(starting.snapshot().callsSent, 0ULL);

        // What a client command cannot run is refused before it starts.
        LoadPlan open = plan;
        open.rate = RateSchedule();
        QVERIFY(!ClientLoad::planProblem(open).isEmpty());
        QVERIFY(!load.start(shellClient("read l"), QStringLiteral("127.0.0.1:1"), open, nullptr, &error));
        QVERIFY2(error.contains(QStringLiteral("closed loop")), qPrintable(error));
    }

    void runWithAClientCommand()
    {
        // run --client: the client's calls are the run's, measured, printed and saved with what made them.
        QTemporaryDir dir;
        const QString db = dir.filePath(QStringLiteral("runs.sqlite"));
        const QString call = QStringLiteral("{\\\"latency_ns\\\": 2000000, \\\"ok\\\": true, \\\"bytes_sent\\\": 7}");
        const QString script = QStringLiteral(
            "read l; i=0; while [ $i -lt 50 ]; do echo \"%1\"; i=$((i+1)); done; echo \"{\\\"done\\\": 1}\"; read l")
                                   .arg(call);
        const CliResult run = runCliProcess({ QStringLiteral("run"), QStringLiteral("builtin"),
            QStringLiteral("--call"), QStringLiteral("rpcscope.bench.v1.Bench/Echo"), QStringLiteral("-n"),
            QStringLiteral("50"), QStringLiteral("-c"), QStringLiteral("2"), QStringLiteral("--client"),
            QStringLiteral("sh -c '%1%2'").arg(kReady, script), QStringLiteral("--client-env"),
            QStringLiteral("TOKEN=s3cr3t-value-123"), QStringLiteral("--db"), db });
        QCOMPARE(run.exitCode, 0);
        QVERIFY2(run.out.contains(QStringLiteral("Count:\t50")), qPrintable(run.out));
        QVERIFY2(run.out.contains(QStringLiteral("50 % in 2.0")), qPrintable(run.out));
        QVERIFY2(run.out.contains(QStringLiteral("7 B sent")), qPrintable(run.out));
        QVERIFY2(run.out.contains(QStringLiteral("Server CPU:")), qPrintable(run.out));
        const CliResult show = runCliProcess({ QStringLiteral("export"), QStringLiteral("1"), QStringLiteral("-O"),
            QStringLiteral("json"), QStringLiteral("--db"), db });
        QCOMPARE(show.exitCode, 0);
        QVERIFY2(show.out.contains(QStringLiteral("client_command")), qPrintable(show.out));
        QVERIFY2(show.out.contains(QStringLiteral("TOKEN=")) && !show.out.contains(QStringLiteral("s3cr3t-value-123")),
            qPrintable(show.out));

        // A client that fails mid-run: its error names the line, nothing is saved, the exit says it.
        const CliResult broken = runCliProcess({ QStringLiteral("run"), QStringLiteral("builtin"),
            QStringLiteral("--call"), QStringLiteral("rpcscope.bench.v1.Bench/Echo"), QStringLiteral("-n"),
            QStringLiteral("50"), QStringLiteral("--client"),
            QStringLiteral("sh -c '%1read l; echo \"%2\"; echo oops; sleep 5'").arg(kReady, call),
            QStringLiteral("--db"), db });
        QCOMPARE(broken.exitCode, 3);
        QVERIFY2(broken.err.contains(QStringLiteral("stdout line 3")) && broken.err.contains(QStringLiteral("oops"))
                && broken.err.contains(QStringLiteral("Nothing was saved")),
            qPrintable(broken.err));
        QVERIFY2(!broken.out.contains(QStringLiteral("Count:")), qPrintable(broken.out));
        const CliResult second = runCliProcess(
            { QStringLiteral("history"), QStringLiteral("show"), QStringLiteral("2"), QStringLiteral("--db"), db });
        QVERIFY2(second.exitCode != 0, qPrintable(second.out)); // the failed run is not in the history
        const CliResult first = runCliProcess(
            { QStringLiteral("history"), QStringLiteral("show"), QStringLiteral("1"), QStringLiteral("--db"), db });
        QCOMPARE(first.exitCode, 0);

        // Flags a client command cannot follow are refused by name before anything starts.
        const CliResult rate = runCliProcess({ QStringLiteral("run"), QStringLiteral("builtin"),
            QStringLiteral("--call"), QStringLiteral("rpcscope.bench.v1.Bench/Echo"), QStringLiteral("--rps"),
            QStringLiteral("10"), QStringLiteral("--client"), QStringLiteral("sh -c true") });
        QCOMPARE(rate.exitCode, 2);
        QVERIFY2(rate.err.contains(QStringLiteral("--client: ")) && rate.err.contains(QStringLiteral("rate")),
            qPrintable(rate.err));
        const CliResult oneCall = runCliProcess({ QStringLiteral("call"), QStringLiteral("builtin"),
            QStringLiteral("--call"), QStringLiteral("rpcscope.bench.v1.Bench/Echo"), QStringLiteral("--client"),
            QStringLiteral("sh -c true") });
        QCOMPARE(oneCall.exitCode, 2); // one call is rpcscope's own (it once crashed here, with no transport made)
        QVERIFY2(oneCall.err.contains(QStringLiteral("--client: call makes one call with rpcscope's own client")),
            qPrintable(oneCall.err));
        const CliResult env = runCliProcess({ QStringLiteral("run"), QStringLiteral("builtin"),
            QStringLiteral("--call"), QStringLiteral("rpcscope.bench.v1.Bench/Echo"), QStringLiteral("--client-env"),
            QStringLiteral("A=1") });
        QCOMPARE(env.exitCode, 2);
        QVERIFY2(env.err.contains(QStringLiteral("--client-env")), qPrintable(env.err));
    }

    void theCpuOfAClientsChildrenIsItsOwn()
    {
        // The shell fallback runs a command per call: that command's CPU is the client's (it ended and was waited for
        // by the client's shell), not left out. Each call here is a shell loop that only burns CPU.
        const CliResult run = runCliProcess({ QStringLiteral("run"), QStringLiteral("builtin"),
            QStringLiteral("--call"), QStringLiteral("rpcscope.bench.v1.Bench/Echo"), QStringLiteral("-n"),
            QStringLiteral("8"), QStringLiteral("-c"), QStringLiteral("1"), QStringLiteral("--client"),
            QStringLiteral("sh %1/percall.sh 'i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done'").arg(kExamples) });
        QCOMPARE(run.exitCode, 0);
        static const QRegularExpression cpu(QStringLiteral("Client CPU:\\t([0-9.]+) us/call"));
        static const QRegularExpression mean(QStringLiteral("Average:\\t([0-9.]+) ms"));
        const QRegularExpressionMatch c = cpu.match(run.out);
        const QRegularExpressionMatch m = mean.match(run.out);
        QVERIFY2(c.hasMatch() && m.hasMatch(), qPrintable(run.out));
        // Nearly all of a call's time is its command's CPU (a busy loop on a core of its own, or shared).
        const double cpuMs = c.captured(1).toDouble() / 1000;
        const double meanMs = m.captured(1).toDouble();
        QVERIFY2(cpuMs > 0.4 * meanMs && cpuMs < 1.5 * meanMs, qPrintable(run.out));
    }

    void anAbRunShowsAClientBlockAsItGrows()
    {
        // A live A/B (the window's) polls the runner: a client command's block shows its calls as they are
        // reported, not only once the block is done.
        const QString call = QStringLiteral("{\\\"latency_ns\\\": 10000000, \\\"ok\\\": true}");
        ClientCommand client;
        client.command = QStringLiteral(
            "sh -c '%1while read l; do n=${l#*calls\\\": }; n=${n%%,*}; b=${l#*block\\\": }; b=${b%%,*}; i=0; "
            "while [ $i -lt $n ]; do echo \"%2\"; sleep 0.01; i=$((i+1)); done; echo \"{\\\"done\\\": $b}\"; "
            "done'")
                             .arg(kReady, call);
        client.idleTimeout = 10s;
        std::array<AbSide, 2> sides;
        for (AbSide &side : sides) {
            side.target.address = QStringLiteral("127.0.0.1:1"); // the client calls nothing: its reports are the test
            side.plan.concurrency = 1;
            side.plan.totalCalls = 80;
            side.client = client;
        }
        AbBlocks blocks;
        blocks.calls = 40; // 2 rounds, each block ~0.4 s
        blocks.firstSide = 0;
        AbRunner runner;
        QString error;
        QVERIFY2(runner.start(sides, blocks, &error), qPrintable(error));
        QSet<uint64_t> seen;
        QDeadlineTimer deadline(60s);
        while (!runner.waitForFinished(5ms)) {
            QVERIFY2(!deadline.hasExpired(), "the A/B run did not end in 60 s");
            seen.insert(runner.snapshot(0).callsCompleted());
        }
        QVERIFY2(runner.error().isEmpty(), qPrintable(runner.error()));
        QCOMPARE(runner.snapshot(0).callsOk(), 80ULL);
        const bool midBlock = std::any_of(seen.cbegin(), seen.cend(), [](uint64_t n) { return n % 40 != 0; });
        QVERIFY2(midBlock, "no count seen inside a block: a client block showed only at its end");
    }

    void matrixRunsAClientCommandAgainstEachStack()
    {
        // matrix --client: the servers it calls are the stacks, the callers -c; each cell's calls are the client's.
        const QString call = QStringLiteral("{\\\"latency_ns\\\": 1500000, \\\"ok\\\": true}");
        const QString client = QStringLiteral(
            "sh -c '%1while read l; do n=${l#*calls\\\": }; n=${n%%,*}; b=${l#*block\\\": }; b=${b%%,*}; i=0; "
            "while [ $i -lt $n ]; do echo \"%2\"; i=$((i+1)); done; echo \"{\\\"done\\\": $b}\"; done'")
                                   .arg(kReady, call);
        const QStringList common { QStringLiteral("matrix"), QStringLiteral("--call"),
            QStringLiteral("rpcscope.bench.v1.Bench/Echo"), QStringLiteral("-n"), QStringLiteral("30"),
            QStringLiteral("--client"), client };
        const CliResult matrix = runCliProcess(common
            + QStringList { QStringLiteral("--stack"), QStringLiteral("one=grpc@builtin"), QStringLiteral("--stack"),
                QStringLiteral("two=grpc@builtin"), QStringLiteral("-c"), QStringLiteral("1,2") });
        QCOMPARE(matrix.exitCode, 0);
        for (const QString &cell : { QStringLiteral("one (grpc/protobuf)  1"), QStringLiteral("two (grpc/protobuf)  1"),
                 QStringLiteral("one (grpc/protobuf)  2"), QStringLiteral("two (grpc/protobuf)  2") })
            QVERIFY2(matrix.out.contains(cell), qPrintable(cell + u'\n' + matrix.out));
        // Every cell's p50 is the client's 1.5 ms; no codec share (rpcscope's codecs are not the client's).
        QCOMPARE(matrix.out.count(QStringLiteral("1.50 ms")), 4 * 3); // mean, p50 and p99 of each cell
        QVERIFY2(!matrix.out.contains(QStringLiteral("%  ")), qPrintable(matrix.out));

        // What a client command cannot vary is refused by name.
        const CliResult transports = runCliProcess(common + QStringList { QStringLiteral("--builtin") });
        QCOMPARE(transports.exitCode, 2);
        QVERIFY2(transports.err.contains(QStringLiteral("--client: give the servers it calls as --stack")),
            qPrintable(transports.err));
        const CliResult payloads = runCliProcess(common
            + QStringList { QStringLiteral("--stack"), QStringLiteral("one=grpc@builtin"), QStringLiteral("--payloads"),
                QStringLiteral("payload=1KiB") });
        QCOMPARE(payloads.exitCode, 2);
        QVERIFY2(payloads.err.contains(QStringLiteral("--payloads: a client command sends its own requests")),
            qPrintable(payloads.err));
        const CliResult none
            = runCliProcess(common + QStringList { QStringLiteral("--stack"), QStringLiteral("codec=none/json") });
        QCOMPARE(none.exitCode, 2);
        QVERIFY2(none.err.contains(QStringLiteral("no server for a client command")), qPrintable(none.err));
    }

    void aDocumentNeverNamesAClientCommand()
    {
        // A shared scenario may not run a command: a record's client_command is never read back as one.
        QString error;
        QVERIFY(!Scenario::fromJson(R"({"rpcscope_scenario": 1, "client_command": "rm -rf /"})", &error));
        QVERIFY2(error.startsWith(QStringLiteral("client_command: a document may not name a client command")),
            qPrintable(error));
        Scenario s;
        s.clientCommand = QStringLiteral("python3 client.py");
        s.clientEnvironment = { QStringLiteral("A=1") };
        QVERIFY(!s.toJson().contains("client.py"));
    }

    void runWithThePythonExampleClient()
    {
        if (!systemPythonHasGrpc())
            QSKIP("/usr/bin/python3 with python3-grpcio and python3-protobuf is not installed");
        QTemporaryDir dir;
        const CliResult run = runCliProcess(
            { QStringLiteral("run"), QStringLiteral("builtin"), QStringLiteral("--call"),
                QStringLiteral("rpcscope.bench.v1.Bench/Echo"), QStringLiteral("-n"), QStringLiteral("300"),
                QStringLiteral("-c"), QStringLiteral("2"), QStringLiteral("--client"),
                QStringLiteral("%1 %2/grpc_echo_client.py --payload-bytes 1KB").arg(kSystemPython, kExamples),
                QStringLiteral("--client-env"),
                QStringLiteral("RPCSCOPE_PY_GEN=") + dir.filePath(QStringLiteral("gen")) },
            120000);
        QCOMPARE(run.exitCode, 0);
        QVERIFY2(run.out.contains(QStringLiteral("Count:\t300")), qPrintable(run.out));
        QVERIFY2(run.out.contains(QStringLiteral("[OK]\t300 responses")), qPrintable(run.out));
        // The client's own CPU, measured from outside: a Python client spends more than 0 on 300 calls.
        QVERIFY2(run.out.contains(QStringLiteral("Client CPU:")) && !run.out.contains(QStringLiteral("Client CPU:\t-")),
            qPrintable(run.out));
    }
};

QTEST_GUILESS_MAIN(TestClientCommand)
#include "tst_clientcommand.moc"
