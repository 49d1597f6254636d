// End to end against the real built-in server on 127.0.0.1, port 0.
#include "engine/callsetup.h"
#include "engine/loadengine.h"
#include "server/builtingrpcserver.h"
#include "transport/grpctransport.h"

#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTest>

using namespace rpcscope;
using namespace std::chrono_literals;

class TestEngine : public QObject
{
    Q_OBJECT

    BuiltinGrpcServer m_server;

    GrpcCall echoCall(const QByteArray &json = R"({"payload":"aGVsbG8="})")
    {
        QString error;
        auto call = prepareGrpcCall(builtinBenchSchema(), {QStringLiteral("rpcscope.bench.v1.Bench/Echo"), json, {}, true},
                                    &error);
        if (!call)
            qFatal("%s", qPrintable(error));
        return *call;
    }

    GrpcTarget target(const QString &address = {})
    {
        GrpcTarget t;
        t.address = address.isEmpty() ? m_server.address() : address;
        t.timeout = 5s;
        return t;
    }

    RunSnapshot runToEnd(LoadEngine &engine, const GrpcTarget &t, const GrpcCall &call, const LoadPlan &plan)
    {
        QString error;
        if (!engine.start(makeGrpcTransport(t, call), plan, &error))
            qFatal("start failed: %s", qPrintable(error));
        if (!engine.waitForFinished(30s))
            qFatal("run did not end in 30 s");
        return engine.snapshot();
    }

private Q_SLOTS:
    void initTestCase()
    {
        QString error;
        QVERIFY2(m_server.start(QStringLiteral("127.0.0.1"), 0, 0, &error), qPrintable(error));
        QVERIFY(m_server.port() != 0);
    }

    void closedLoopCountsEveryCall()
    {
        const uint64_t servedBefore = m_server.callsServed();
        LoadEngine engine;
        QSignalSpy finished(&engine, &LoadEngine::runFinished);
        LoadPlan plan;
        plan.concurrency = 10;
        plan.totalCalls = 2000;
        const RunSnapshot s = runToEnd(engine, target(), echoCall(), plan);
        QCOMPARE(s.state, RunState::Finished);
        QCOMPARE(s.callsCompleted(), 2000ULL);
        QCOMPARE(s.callsOk(), 2000ULL);
        QCOMPARE(s.latency.count(), 2000ULL);
        QCOMPARE(s.bytesSent, 2000ULL * 7); // "hello" as a bytes field: 2 + 5 bytes
        QCOMPARE(s.bytesReceived, 2000ULL * 7);
        QVERIFY(s.elapsed > 0ns);
        QVERIFY(s.requestsPerSecond() > 0);
        QVERIFY(s.latency.min() > 0 && s.latency.min() <= s.latency.percentile(50));
        QTRY_COMPARE_WITH_TIMEOUT(m_server.callsServed() - servedBefore, 2000ULL, 5000);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 5000);
    }

    void warmupIsNotCounted()
    {
        const uint64_t servedBefore = m_server.callsServed();
        LoadEngine engine;
        LoadPlan plan;
        plan.concurrency = 4;
        plan.totalCalls = 350;
        plan.warmupCalls = 100;
        const RunSnapshot s = runToEnd(engine, target(), echoCall(), plan);
        QCOMPARE(s.callsCompleted(), 350ULL);
        QCOMPARE(s.warmupCalls, 100ULL);
        QTRY_COMPARE_WITH_TIMEOUT(m_server.callsServed() - servedBefore, 450ULL, 5000);
    }

    void fewerCallsThanCallers()
    {
        // ghz#233: -n smaller than -c sent nothing. Here it sends exactly n.
        const uint64_t servedBefore = m_server.callsServed();
        LoadEngine engine;
        LoadPlan plan;
        plan.concurrency = 10;
        plan.totalCalls = 3;
        const RunSnapshot s = runToEnd(engine, target(), echoCall(), plan);
        QCOMPARE(s.callsOk(), 3ULL);
        QTRY_COMPARE_WITH_TIMEOUT(m_server.callsServed() - servedBefore, 3ULL, 5000);
    }

    void durationBoundRun()
    {
        LoadEngine engine;
        LoadPlan plan;
        plan.concurrency = 4;
        plan.totalCalls = 0;
        plan.duration = 300ms;
        QElapsedTimer timer;
        timer.start();
        const RunSnapshot s = runToEnd(engine, target(), echoCall(), plan);
        QVERIFY(s.elapsed >= 300ms);
        QVERIFY2(timer.elapsed() < 3000, "a 300 ms run must not take seconds");
        QVERIFY(s.callsOk() > 10);
        QCOMPARE(s.callsFailed(), 0ULL);
    }

    void methodTheServerLacksIsUnimplemented()
    {
        const SchemaLoadResult loaded = loadProtoFiles({QStringLiteral(RPCSCOPE_TEST_DATA "/unimplemented.proto")});
        QVERIFY2(loaded.ok(), qPrintable(loaded.errorText()));
        QString error;
        const auto call = prepareGrpcCall(loaded.schema, {QStringLiteral("rpcscope.bench.v1.Bench/Nope"), {}, {}, true}, &error);
        QVERIFY2(call, qPrintable(error));
        LoadEngine engine;
        LoadPlan plan;
        plan.concurrency = 5;
        plan.totalCalls = 50;
        const RunSnapshot s = runToEnd(engine, target(), *call, plan);
        QCOMPARE(s.callsCompleted(), 50ULL);
        QCOMPARE(s.statusCounts[CallStatus::Unimplemented], 50ULL);
        QCOMPARE(s.callsOk(), 0ULL);
        QCOMPARE(s.errorLatency.count(), 50ULL);
        QVERIFY(!s.errors.isEmpty());
        QCOMPARE(s.errors.first().status, int(CallStatus::Unimplemented));
    }

    void nothingListeningIsUnavailable()
    {
        // A port that was free a moment ago: bind, note it, close.
        QTcpServer probe;
        QVERIFY(probe.listen(QHostAddress::LocalHost, 0));
        const quint16 port = probe.serverPort();
        probe.close();
        LoadEngine engine;
        LoadPlan plan;
        plan.concurrency = 10;
        plan.totalCalls = 200;
        QElapsedTimer timer;
        timer.start();
        const RunSnapshot s = runToEnd(engine, target(QStringLiteral("127.0.0.1:%1").arg(port)), echoCall(), plan);
        QVERIFY2(timer.elapsed() < 10000, "a refused connection must not hang the run");
        QCOMPARE(s.state, RunState::Finished);
        QCOMPARE(s.callsCompleted(), 200ULL);
        QCOMPARE(s.statusCounts[CallStatus::Unavailable], 200ULL);
    }

    void stopKeepsWhatWasMeasured()
    {
        LoadEngine engine;
        LoadPlan plan;
        plan.concurrency = 8;
        plan.totalCalls = 0;
        plan.duration = 60s;
        QString error;
        QVERIFY(engine.start(makeGrpcTransport(target(), echoCall()), plan, &error));
        QTRY_VERIFY_WITH_TIMEOUT(engine.snapshot().callsCompleted() > 100, 5000);
        QVERIFY(engine.isRunning());
        QElapsedTimer timer;
        timer.start();
        engine.stop();
        QVERIFY(engine.waitForFinished(5s));
        QVERIFY(timer.elapsed() < 2000);
        const RunSnapshot s = engine.snapshot();
        QCOMPARE(s.state, RunState::Stopped);
        QVERIFY(s.callsOk() > 100);
        QCOMPARE(s.statusCounts[CallStatus::Cancelled], 0ULL); // our own cancellations are not failures
        QVERIFY(s.elapsed < 10s);
        // A second run on the same engine starts fresh.
        plan.duration = 0s;
        plan.totalCalls = 10;
        const RunSnapshot again = runToEnd(engine, target(), echoCall(), plan);
        QCOMPARE(again.callsOk(), 10ULL);
        QCOMPARE(again.generation, s.generation + 1);
    }

    void snapshotsGrowWhileRunning()
    {
        LoadEngine engine;
        LoadPlan plan;
        plan.concurrency = 2;
        plan.totalCalls = 0;
        plan.duration = 1s;
        QString error;
        QVERIFY(engine.start(makeGrpcTransport(target(), echoCall()), plan, &error));
        QTRY_VERIFY_WITH_TIMEOUT(engine.snapshot().callsCompleted() > 0, 5000);
        const RunSnapshot early = engine.snapshot();
        QCOMPARE(early.state, RunState::Running);
        QVERIFY(early.progress() >= 0 && early.progress() < 1);
        QVERIFY(engine.waitForFinished(10s));
        const RunSnapshot late = engine.snapshot();
        QVERIFY(late.callsCompleted() > early.callsCompleted());
        QCOMPARE(late.progress(), 1.0);
    }

    void deadlineExceededIsCounted()
    {
        // The server answers 300 ms late; the deadline is 50 ms.
        QString error;
        auto call = prepareGrpcCall(builtinBenchSchema(),
                                    {QStringLiteral("rpcscope.bench.v1.Bench/Echo"), R"({"delayUs": 300000})", {}, true},
                                    &error);
        QVERIFY2(call, qPrintable(error));
        GrpcTarget t = target();
        t.timeout = 50ms;
        LoadEngine engine;
        LoadPlan plan;
        plan.concurrency = 2;
        plan.totalCalls = 20;
        const RunSnapshot s = runToEnd(engine, t, *call, plan);
        QCOMPARE(s.callsCompleted(), 20ULL);
        QCOMPARE(s.statusCounts[CallStatus::DeadlineExceeded], 20ULL);
        QVERIFY(s.errorLatency.min() >= 50'000'000ULL);
        QVERIFY(s.errorLatency.max() < 300'000'000ULL);
    }

    void invalidPlansAreRefused()
    {
        LoadEngine engine;
        QString error;
        LoadPlan plan;
        plan.totalCalls = 0;
        QVERIFY(!engine.start(makeGrpcTransport(target(), echoCall()), plan, &error));
        QVERIFY(error.contains(QStringLiteral("number of calls or a duration")));
        plan.totalCalls = 10;
        plan.concurrency = 0;
        QVERIFY(!engine.start(makeGrpcTransport(target(), echoCall()), plan, &error));
        QVERIFY(error.contains(QStringLiteral("concurrency")));
    }
};

QTEST_GUILESS_MAIN(TestEngine)
#include "tst_engine.moc"
