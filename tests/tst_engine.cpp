// End to end against the real built-in server on 127.0.0.1, port 0.
#include "codec/messagejson.h"
#include "engine/callsetup.h"
#include "engine/loadengine.h"
#include "server/builtingrpcserver.h"
#include "server/builtinhttpserver.h"
#include "server/burn.h"
#include "transport/grpctransport.h"
#include "transport/transportfactories.h"
#include "transport/transports.h"

#include <google/protobuf/message.h>

#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTest>

#include <ctime>

using namespace rpcscope;
using namespace std::chrono_literals;

class TestEngine : public QObject {
    Q_OBJECT

    BuiltinGrpcServer m_server;

    GrpcCall echoCall(const QByteArray &json = R"({"payload":"aGVsbG8="})")
    {
        QString error;
        auto call = prepareGrpcCall(
            builtinBenchSchema(), { QStringLiteral("rpcscope.bench.v1.Bench/Echo"), json, {}, true }, &error);
        if (!call)
            qFatal("%s", qPrintable(error));
        return *call;
    }

    /// A call of one of the bench service's streaming methods, with @p stream's settings.
    GrpcCall streamCall(const char *method, const QByteArray &json, const StreamOptions &stream = {})
    {
        QString error;
        auto call = prepareGrpcCall(builtinBenchSchema(),
            { QStringLiteral("rpcscope.bench.v1.Bench/") + QLatin1String(method), json, {}, true }, &error);
        if (!call)
            qFatal("%s", qPrintable(error));
        call->stream = stream;
        return *call;
    }

    GrpcTarget target(const QString &address = {})
    {
        GrpcTarget t;
        t.address = address.isEmpty() ? m_server.address() : address;
        t.timeout = 5s;
        return t;
    }

    /// The gRPC client the test runs with: gRPC C++'s, or rpcscope's own on bare HTTP/2 for a row that asks for it
    /// (the streaming tests run on both: bothClients_data()).
    bool m_h2 = false;
    void bothClients_data()
    {
        QTest::addColumn<bool>("h2");
        QTest::newRow("grpc") << false;
        QTest::newRow("h2grpc") << true;
    }
    void useClient()
    {
        QFETCH(bool, h2);
        m_h2 = h2;
    }
    std::unique_ptr<Transport> grpcClient(const GrpcTarget &t, const GrpcCall &call)
    {
        if (!m_h2)
            return makeGrpcTransport(t, call);
        std::string error;
        const qsizetype colon = t.address.lastIndexOf(u':');
        auto made = makeH2GrpcTransport(
            t.address.left(colon).toStdString(), t.address.mid(colon + 1).toStdString(), t, call, &error);
        if (!made)
            qFatal("h2grpc: %s", error.c_str());
        return made;
    }

    RunSnapshot runToEnd(LoadEngine &engine, const GrpcTarget &t, const GrpcCall &call, const LoadPlan &plan)
    {
        QString error;
        if (!engine.start(grpcClient(t, call), plan, &error))
            qFatal("start failed: %s", qPrintable(error));
        if (!engine.waitForFinished(30s))
            qFatal("run did not end in 30 s");
        return engine.snapshot();
    }

private Q_SLOTS:
    void init() { m_h2 = false; }

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

    void aDurationEndsTheRunStalledCallsIncluded_data() { bothClients_data(); }
    void aDurationEndsTheRunStalledCallsIncluded()
    {
        useClient();
        // A server that stops answering (as a SIGSTOPped one): the run ends at its -z, not at its calls' timeout,
        // and the calls it cut short are counted as cancelled.
        BuiltinGrpcServer stuck;
        stuck.setExtraDelay(60s);
        QString error;
        QVERIFY2(stuck.start(QStringLiteral("127.0.0.1"), 0, 2, &error), qPrintable(error));
        GrpcTarget t = target(stuck.address());
        t.timeout = 120s;
        LoadEngine engine;
        LoadPlan plan;
        plan.concurrency = 3;
        plan.totalCalls = 0;
        plan.duration = 400ms;
        QVERIFY2(engine.start(grpcClient(t, echoCall()), plan, &error), qPrintable(error));
        QVERIFY2(engine.waitForFinished(15s), "the run waited for its calls' 120 s timeout");
        const RunSnapshot s = engine.snapshot();
        QCOMPARE(s.callsCompleted(), 3ULL);
        QCOMPARE(s.statusCounts[CallStatus::Cancelled], 3ULL);
        QVERIFY(!s.errors.isEmpty());
        QVERIFY2(s.errors.first().message.contains(QStringLiteral("-z")), qPrintable(s.errors.first().message));
        stuck.stop();
    }

    void theDurationIncludesTheWarmup()
    {
        LoadEngine engine;
        LoadPlan plan;
        plan.concurrency = 2;
        plan.totalCalls = 0;
        plan.warmupDuration = 300ms;
        plan.duration = 600ms;
        const RunSnapshot s = runToEnd(engine, target(), echoCall(), plan);
        QVERIFY(s.warmupCalls > 0);
        QVERIFY(s.callsOk() > 0);
        // The timed phase got what the warm-up left: about 300 ms, well under the 600 ms of the whole.
        QVERIFY2(s.elapsed < 550ms, qPrintable(QString::number(s.elapsed.count())));
        QCOMPARE(s.callsFailed(), 0ULL);
    }

    void methodTheServerLacksIsUnimplemented()
    {
        const SchemaLoadResult loaded = loadProtoFiles({ QStringLiteral(RPCSCOPE_TEST_DATA "/unimplemented.proto") });
        QVERIFY2(loaded.ok(), qPrintable(loaded.errorText()));
        QString error;
        const auto call
            = prepareGrpcCall(loaded.schema, { QStringLiteral("rpcscope.bench.v1.Bench/Nope"), {}, {}, true }, &error);
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

    void stopKeepsWhatWasMeasured_data() { bothClients_data(); }
    void stopKeepsWhatWasMeasured()
    {
        useClient();
        LoadEngine engine;
        LoadPlan plan;
        plan.concurrency = 8;
        plan.totalCalls = 0;
        plan.duration = 60s;
        QString error;
        QVERIFY(engine.start(grpcClient(target(), echoCall()), plan, &error));
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
            { QStringLiteral("rpcscope.bench.v1.Bench/Echo"), R"({"delayUs": 300000})", {}, true }, &error);
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
        // Errors keep their latency: about the deadline, never the full delay. Not exactly >= 50 ms: the server
        // enforces the deadline too (from the grpc-timeout header, on its own millisecond clock, cached per poll), and
        // on a busy machine its side can fire and send DEADLINE_EXCEEDED a little before the client's own timer (seen
        // in CI).
        QVERIFY2(s.errorLatency.min() >= 45'000'000ULL,
            qPrintable(QStringLiteral("fastest deadline error %1 ns").arg(s.errorLatency.min())));
        QVERIFY2(s.errorLatency.max() < 300'000'000ULL,
            qPrintable(QStringLiteral("slowest deadline error %1 ns").arg(s.errorLatency.max())));
    }

    void delayedAnswersComeOnTimeAndStopCutsThemShort_data() { bothClients_data(); }
    void delayedAnswersComeOnTimeAndStopCutsThemShort()
    {
        useClient();
        // Answers are held by the server's own timer thread: never early, and a stopping server does not wait them out.
        BuiltinGrpcServer slow;
        slow.setExtraDelay(20ms);
        QString error;
        QVERIFY2(slow.start(QStringLiteral("127.0.0.1"), 0, 2, &error), qPrintable(error));
        LoadEngine engine;
        LoadPlan plan;
        plan.concurrency = 8;
        plan.totalCalls = 80;
        const RunSnapshot s = runToEnd(engine, target(slow.address()), echoCall(), plan);
        QCOMPARE(s.callsOk(), 80ULL);
        QVERIFY2(s.latency.min() >= 20'000'000ULL, qPrintable(QString::number(s.latency.min())));
        slow.stop();

        BuiltinGrpcServer stuck;
        stuck.setExtraDelay(60s);
        QVERIFY2(stuck.start(QStringLiteral("127.0.0.1"), 0, 2, &error), qPrintable(error));
        GrpcTarget t = target(stuck.address());
        t.timeout = 120s;
        plan.concurrency = 4;
        plan.totalCalls = 4;
        QVERIFY(engine.start(grpcClient(t, echoCall()), plan, &error));
        QTRY_COMPARE_WITH_TIMEOUT(engine.snapshot().callsSent, 4ULL, 5000);
        QTRY_COMPARE_WITH_TIMEOUT(stuck.callsDelayed(), uint64_t(4), 5000); // they wait out their delay there
        QElapsedTimer timer;
        timer.start();
        stuck.stop();
        QVERIFY2(timer.elapsed() < 5000, qPrintable(QString::number(timer.elapsed())));
        QVERIFY(engine.waitForFinished(10s));
        const RunSnapshot cut = engine.snapshot();
        QCOMPARE(cut.callsCompleted(), 4ULL);
        QCOMPARE(cut.callsOk(), 0ULL);
        QCOMPARE(cut.statusCounts[CallStatus::Unavailable], 4ULL);
    }

    void aBurnCostsTheCpuAskedToTheNanosecond()
    {
        // A burn of a few percent of a call (the 2% of a ~26 us echo is ~500 ns) is that much CPU, not none (it was
        // cut to whole microseconds) and not a few microseconds of clock reads: measured on this thread's CPU clock
        // over many burns, which a preemption does not lengthen.
        const auto threadCpuNs = [] {
            timespec now {};
            ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
            return double(now.tv_sec) * 1e9 + double(now.tv_nsec);
        };
        burnCpu(1us); // the rate is measured on first use
        for (const std::chrono::nanoseconds burn : { 500ns, 5000ns }) {
            constexpr int kBurns = 4000;
            const double before = threadCpuNs();
            for (int i = 0; i < kBurns; ++i)
                burnCpu(burn);
            const double each = (threadCpuNs() - before) / kBurns;
            const QString seen = QStringLiteral("%1 ns asked, %2 ns a burn").arg(burn.count()).arg(each, 0, 'f', 0);
            qInfo("%s", qPrintable(seen));
            QVERIFY2(each >= 0.8 * double(burn.count()) && each <= 1.5 * double(burn.count()), qPrintable(seen));
        }
        // Above 20 us the clock tops the burn up: never shorter than asked.
        for (int i = 0; i < 20; ++i) {
            const double before = threadCpuNs();
            burnCpu(40us);
            QVERIFY2(threadCpuNs() - before >= 40'000, qPrintable(QString::number(threadCpuNs() - before)));
        }
    }

    void burnAddsServerCpuTimeToEveryCall_data()
    {
        QTest::addColumn<QString>("transport");
        QTest::newRow("grpc") << QStringLiteral("grpc");
        QTest::newRow("http") << QStringLiteral("http");
        QTest::newRow("msgpack") << QStringLiteral("msgpack");
    }

    void burnAddsServerCpuTimeToEveryCall()
    {
        // The burn is CPU time spent before the answer: one caller at a time sees all of it in its latency. Only
        // the lower bound is checked (a busy machine adds, never takes away), with room for the clock's rounding.
        QFETCH(QString, transport);
        // The fastest call, not the median: on 2 cores a call's latency depends on whether the scheduler put client
        // and server on one core or two (~45 or ~130 us here), and a median of 200 calls can land in either mode;
        // the fastest call cannot be faster than the server's CPU time for it.
        auto fastestWithBurn = [&](std::chrono::microseconds burn) -> uint64_t {
            BuiltinGrpcServer grpc;
            BuiltinHttpServer http;
            BuiltinMsgpackServer msgpack;
            grpc.setBurn(burn);
            http.setBurn(burn);
            msgpack.setBurn(burn);
            QString error;
            TransportOptions options;
            options.kind = *parseTransport(transport);
            GrpcTarget t = target();
            bool started = false;
            if (options.kind == TransportKind::Grpc) {
                started = grpc.start(QStringLiteral("127.0.0.1"), 0, 1, &error);
                t.address = grpc.address();
            } else if (options.kind == TransportKind::Http) {
                started = http.start(QStringLiteral("127.0.0.1"), 0, 1, &error);
                t.address = http.url();
            } else {
                started = msgpack.start(QStringLiteral("127.0.0.1"), 0, 1, &error);
                t.address = msgpack.address();
            }
            if (!started)
                qFatal("server: %s", qPrintable(error));
            std::unique_ptr<Transport> made = makeTransport(options, t, echoCall(), &error);
            if (!made)
                qFatal("makeTransport: %s", qPrintable(error));
            LoadEngine engine;
            LoadPlan plan;
            plan.concurrency = 1;
            plan.warmupCalls = 20;
            plan.totalCalls = 200;
            if (!engine.start(std::move(made), plan, &error))
                qFatal("start: %s", qPrintable(error));
            if (!engine.waitForFinished(30s))
                qFatal("run did not end in 30 s");
            const RunSnapshot s = engine.snapshot();
            if (s.callsOk() != 200)
                qFatal("%llu of 200 calls OK", static_cast<unsigned long long>(s.callsOk()));
            return s.latency.min();
        };
        const uint64_t plain = fastestWithBurn(0us);
        const uint64_t burnt = fastestWithBurn(300us);
        const QString seen
            = QStringLiteral("fastest call %1 ns without a burn, %2 ns with 300us").arg(plain).arg(burnt);
        // Every call took at least the burn (the fastest did), and the burn made the calls slower. (Not "by at least
        // 200 us": the run without a burn is slowed too when the machine is busy, by as much as it likes.)
        QVERIFY2(burnt >= 300'000, qPrintable(seen));
        QVERIFY2(burnt > plain, qPrintable(seen));
    }

    void openLoopKeepsTheRate()
    {
        LoadEngine engine;
        LoadPlan plan;
        plan.concurrency = 10;
        plan.totalCalls = 200;
        plan.rate = RateSchedule {};
        plan.rate->start = 200; // 200 calls at 200/s: one second
        const RunSnapshot s = runToEnd(engine, target(), echoCall(), plan);
        QVERIFY(s.openLoop);
        QCOMPARE(s.callsOk(), 200ULL);
        QCOMPARE(s.callsSent, 200ULL);
        QVERIFY2(s.elapsed >= 990ms && s.elapsed < 1500ms, qPrintable(QString::number(s.elapsed.count())));
        // On time: the median call leaves within 1 ms of its intended time. (A few late wake-ups are the machine's,
        // e.g. when ctest runs other tests beside this one, so no strict keptUp() here.)
        QVERIFY2(s.sendLag.percentile(50) < 2'000'000, qPrintable(QString::number(s.sendLag.percentile(50))));
        QVERIFY2(s.lateSends < 100, qPrintable(QString::number(s.lateSends)));
        QCOMPARE(s.intendedCalls, 200.0);
        // A fast server and a client that keeps up: latency from the intended time is close to the service time.
        QVERIFY(s.latency.percentile(50) < s.serviceLatency.percentile(50) + 2'000'000);
        QCOMPARE(s.serviceLatency.count(), 200ULL);
    }

    void coordinatedOmissionIsCorrected()
    {
        // Each call takes 50 ms and only 2 may be in flight: capacity 40/s against an intended 100/s. Calls queue
        // for a free slot; measured from their intended send time they wait far longer than the 50 ms the server
        // shows once a call is sent. A closed-loop tool would report ~50 ms.
        QString error;
        const auto call = prepareGrpcCall(builtinBenchSchema(),
            { QStringLiteral("rpcscope.bench.v1.Bench/Echo"), R"({"delayUs": 50000})", {}, true }, &error);
        QVERIFY2(call, qPrintable(error));
        LoadEngine engine;
        LoadPlan plan;
        plan.concurrency = 2;
        plan.totalCalls = 60;
        plan.rate = RateSchedule {};
        plan.rate->start = 100;
        const RunSnapshot s = runToEnd(engine, target(), *call, plan);
        QCOMPARE(s.callsOk(), 60ULL);
        const uint64_t service = s.serviceLatency.percentile(50);
        QVERIFY2(service >= 50'000'000 && service < 90'000'000, qPrintable(QString::number(service)));
        // The last calls were due at 0.59 s but could only be sent at ~1.5 s: ~900 ms from intended to reply.
        QVERIFY2(s.latency.percentile(99) > 600'000'000, qPrintable(QString::number(s.latency.percentile(99))));
        QVERIFY(s.latency.percentile(50) > 2 * service);
        QVERIFY(!s.keptUp());
        QVERIFY(s.lateSends > 40);
        QVERIFY(s.sendLag.max() > 500'000'000);
    }

    void timeSeriesCoversTheRun()
    {
        LoadEngine engine;
        LoadPlan plan;
        plan.concurrency = 4;
        plan.totalCalls = 0;
        plan.duration = 1100ms;
        plan.interval = 200ms;
        const RunSnapshot s = runToEnd(engine, target(), echoCall(), plan);
        QVERIFY2(s.timeline.size() >= 6 && s.timeline.size() <= 7, qPrintable(QString::number(s.timeline.size())));
        uint64_t calls = 0;
        for (const IntervalPoint &point : s.timeline) {
            calls += point.calls;
            QVERIFY(point.seconds > 0 && point.seconds <= 0.25);
            QVERIFY(point.calls > 0);
            QVERIFY(point.p50 > 0 && point.p50 <= point.p90 && point.p90 <= point.p99);
        }
        QCOMPARE(calls, s.callsCompleted()); // every call lands in exactly one interval
        QVERIFY(std::abs(s.timeline.last().endSeconds - std::chrono::duration<double>(s.elapsed).count()) < 0.01);
        QVERIFY(s.clientCpuSeconds > 0);
        QVERIFY(s.clientCpuPerCallUs() > 0);
        QVERIFY(s.clientPeakRssBytes > 1'000'000);
    }

    void warmupByDuration()
    {
        LoadEngine engine;
        LoadPlan plan;
        plan.concurrency = 2;
        plan.totalCalls = 100;
        plan.warmupDuration = 300ms;
        QElapsedTimer timer;
        timer.start();
        const RunSnapshot s = runToEnd(engine, target(), echoCall(), plan);
        QVERIFY(timer.elapsed() >= 300);
        QVERIFY(s.warmupCalls > 10);
        QCOMPARE(s.callsCompleted(), 100ULL);
    }

    void concurrencyScheduleSteps()
    {
        // 1 caller, one more every 250 ms up to 4, for 1 s; each call takes ~5 ms.
        QString error;
        const auto call = prepareGrpcCall(
            builtinBenchSchema(), { QStringLiteral("rpcscope.bench.v1.Bench/Echo"), R"({"delayUs": 5000})" }, &error);
        QVERIFY2(call, qPrintable(error));
        LoadEngine engine;
        LoadPlan plan;
        plan.concurrency = 4;
        plan.totalCalls = 0;
        plan.interval = 250ms;
        RateSchedule callers;
        callers.kind = RateSchedule::Kind::Step;
        callers.start = 1;
        callers.step = 1;
        callers.end = 4;
        callers.stepDuration = 250ms;
        callers.maxDuration = 1s;
        plan.concurrencySchedule = callers;
        QElapsedTimer timer;
        timer.start();
        const RunSnapshot s = runToEnd(engine, target(), *call, plan);
        QVERIFY2(timer.elapsed() < 3000, "the schedule's max duration ends the run");
        QVERIFY2(s.timeline.size() >= 4, qPrintable(QString::number(s.timeline.size())));
        // Throughput follows the callers: about 4x as many calls in the last quarter as in the first.
        const double first = static_cast<double>(s.timeline[0].calls);
        const double fourth = static_cast<double>(s.timeline[3].calls);
        QVERIFY2(first > 10 && fourth > 2.5 * first, qPrintable(QStringLiteral("%1 then %2").arg(first).arg(fourth)));
        QVERIFY(s.timeline[0].concurrency <= 2);
        QCOMPARE(s.callsFailed(), 0ULL);
    }

    void roundRobinAndTemplatesPerCall()
    {
        QString error;
        // Round robin: payloads of 1, 2 and 3 bytes -> requests of 3, 4 and 5 bytes, in turn.
        const auto rr = prepareGrpcCall(builtinBenchSchema(),
            { QStringLiteral("rpcscope.bench.v1.Bench/Echo"),
                R"([{"payload":"YQ=="}, {"payload":"YWI="}, {"payload":"YWJj"}])" },
            &error);
        QVERIFY2(rr, qPrintable(error));
        LoadEngine engine;
        LoadPlan plan;
        plan.concurrency = 3;
        plan.totalCalls = 300;
        RunSnapshot s = runToEnd(engine, target(), *rr, plan);
        QCOMPARE(s.callsOk(), 300ULL);
        QCOMPARE(s.bytesSent, 100ULL * (3 + 4 + 5));
        // Template: call k sends nums [k]; packed int64 k takes 3 bytes below 128 and 4 up to 16383.
        const auto t = prepareGrpcCall(builtinBenchSchema(),
            { QStringLiteral("rpcscope.bench.v1.Bench/Sum"), R"({"nums": [{{.RequestNumber}}]})" }, &error);
        QVERIFY2(t, qPrintable(error));
        plan.totalCalls = 200;
        s = runToEnd(engine, target(), *t, plan);
        QCOMPARE(s.callsOk(), 200ULL);
        QCOMPARE(s.bytesSent, 128ULL * 3 + 72ULL * 4);
    }

    // --segment I/N: a plan split over workers (here engines in one process; tst_clisplit has processes).

    void segmentsSendTheWholePlanBetweenThem()
    {
        // Template: call k sends nums [k]; packed int64 k takes 3 bytes below 128 and 4 up to 16383. Split over
        // four workers, the calls' numbers are the whole plan's: together 128 of 3 bytes and 72 of 4, as one
        // process sends them. (Numbered 0..49 each, every worker would send 3-byte requests only.)
        QString error;
        const auto t = prepareGrpcCall(builtinBenchSchema(),
            { QStringLiteral("rpcscope.bench.v1.Bench/Sum"), R"({"nums": [{{.RequestNumber}}]})" }, &error);
        QVERIFY2(t, qPrintable(error));
        LoadPlan whole;
        whole.concurrency = 6;
        whole.totalCalls = 200;
        whole.warmupCalls = 10;
        uint64_t calls = 0;
        uint64_t bytes = 0;
        uint64_t warmup = 0;
        for (int i = 0; i < 4; ++i) {
            Segment segment;
            segment.index = i;
            segment.count = 4;
            const std::optional<LoadPlan> part = segmentPlan(whole, segment, &error);
            QVERIFY2(part, qPrintable(error));
            QCOMPARE(part->concurrency, i < 2 ? 2 : 1);
            LoadEngine engine;
            const RunSnapshot s = runToEnd(engine, target(), *t, *part);
            QCOMPARE(s.callsOk(), 50ULL);
            calls += s.callsOk();
            bytes += s.bytesSent;
            warmup += s.warmupCalls;
        }
        QCOMPARE(calls, 200ULL);
        QCOMPARE(bytes, 128ULL * 3 + 72ULL * 4);
        QCOMPARE(warmup, 10ULL);
    }

    void openLoopSegmentsKeepTheWholeRate()
    {
        // 400 calls at 400/s split over four engines starting together: each sends its 100 calls over the same
        // second (the whole plan's times), not over 4 s, and the four together keep the whole rate.
        const auto startAt = std::chrono::system_clock::now() + 300ms;
        LoadPlan whole;
        whole.concurrency = 8;
        whole.totalCalls = 400;
        whole.rate = RateSchedule {};
        whole.rate->start = 400;
        whole.startAt = startAt;
        std::vector<std::unique_ptr<LoadEngine>> engines;
        for (int i = 0; i < 4; ++i) {
            Segment segment;
            segment.index = i;
            segment.count = 4;
            QString error;
            const std::optional<LoadPlan> part = segmentPlan(whole, segment, &error);
            QVERIFY2(part, qPrintable(error));
            engines.push_back(std::make_unique<LoadEngine>());
            QVERIFY2(engines.back()->start(makeGrpcTransport(target(), echoCall()), *part, &error), qPrintable(error));
        }
        uint64_t calls = 0;
        int64_t firstStart = INT64_MAX;
        int64_t lastStart = 0;
        for (auto &engine : engines) {
            QVERIFY(engine->waitForFinished(30s));
            const RunSnapshot s = engine->snapshot();
            QCOMPARE(s.callsOk(), 100ULL);
            QCOMPARE(s.intendedCalls, 100.0);
            QVERIFY2(s.elapsed >= 980ms && s.elapsed < 1500ms, qPrintable(QString::number(s.elapsed.count())));
            calls += s.callsOk();
            firstStart = std::min(firstStart, s.timedStartUnixUs);
            lastStart = std::max(lastStart, s.timedStartUnixUs);
        }
        QCOMPARE(calls, 400ULL);
        const auto startUs = std::chrono::duration_cast<std::chrono::microseconds>(startAt.time_since_epoch()).count();
        QVERIFY2(firstStart >= startUs, "no worker starts before the start time");
        QVERIFY2(lastStart - startUs < 100000, qPrintable(QString::number(lastStart - startUs)));
    }

    void startAtWaitsAfterTheWarmupAndStopEndsTheWait()
    {
        LoadEngine engine;
        LoadPlan plan;
        plan.concurrency = 2;
        plan.totalCalls = 20;
        plan.warmupCalls = 6;
        plan.startAt = std::chrono::system_clock::now() + 600ms;
        QString error;
        QVERIFY2(engine.start(makeGrpcTransport(target(), echoCall()), plan, &error), qPrintable(error));
        QTRY_COMPARE_WITH_TIMEOUT(engine.snapshot().warmupCalls, 6ULL, 5000); // warmed up at once, then waiting
        RunSnapshot s = engine.snapshot();
        QCOMPARE(s.callsCompleted(), 0ULL);
        QVERIFY(engine.isRunning());
        QVERIFY(engine.waitForFinished(10s));
        s = engine.snapshot();
        QCOMPARE(s.callsOk(), 20ULL);
        const auto startUs
            = std::chrono::duration_cast<std::chrono::microseconds>(plan.startAt->time_since_epoch()).count();
        QVERIFY2(s.timedStartUnixUs >= startUs && s.timedStartUnixUs - startUs < 100000,
            qPrintable(QString::number(s.timedStartUnixUs - startUs)));

        // Stopped while it waits: it ends at once, with nothing measured.
        plan.startAt = std::chrono::system_clock::now() + 60s;
        QVERIFY2(engine.start(makeGrpcTransport(target(), echoCall()), plan, &error), qPrintable(error));
        QTRY_COMPARE_WITH_TIMEOUT(engine.snapshot().warmupCalls, 6ULL, 5000); // waiting for its start time
        QElapsedTimer timer;
        timer.start();
        engine.stop();
        QVERIFY(engine.waitForFinished(5s));
        QVERIFY2(timer.elapsed() < 1000, qPrintable(QString::number(timer.elapsed())));
        s = engine.snapshot();
        QCOMPARE(s.state, RunState::Stopped);
        QCOMPARE(s.callsCompleted(), 0ULL);
    }

    // --expect: what sampled replies must hold.

    void expectationsReadAReply()
    {
        const Schema schema = builtinBenchSchema();
        const auto *type = schema.findMessage(QStringLiteral("rpcscope.bench.v1.ListResponse"));
        QVERIFY(type);
        QString error;
        const auto reply = messageFromJson(schema, type,
            R"({"items":[{"id":"7","name":"ab","score":1.5},{"id":"9223372036854775807","name":"c"}]})", &error);
        QVERIFY2(reply, qPrintable(error));
        struct Case {
            const char *text;
            bool holds;
            const char *got; ///< what check() says the reply has, when it does not hold
        };
        const Case cases[] = {
            { "items.length=2", true, "" },
            { "items.length >= 3", false, "2" },
            { R"(items[0].name="ab")", true, "" },
            { "items.0.name=ab", true, "" },
            { "items[0].name!=ab", false, "\"ab\"" },
            { "items[0].name.length=2", true, "" },
            { "items[1].id=9223372036854775807", true, "" },
            { "items[1].id<9223372036854775807", false, "9223372036854775807" },
            { "items[1].id>9223372036854775806", true, "" },
            { "items[0].score>1.4", true, "" },
            { "items[0].score<=1.4", false, "1.5" },
            { "items[1].score==0", true, "" },
            { "items[2].name=x", false, "items has 2 elements, no [2]" },
            { R"(items[1]={"id":"9223372036854775807","name":"c","score":0})", true, "" },
            { R"({"items":[{"id":"7"},{"name":"c"}]})", true, "" },
            { R"({"items":[{"id":8},{}]})", false, "items[0].id is \"7\"" },
            { R"({"items":[{"id":7}]})", false, "items is 2 elements long, expected 1 elements" },
            { R"({"total":1})", false, "total is missing" },
        };
        for (const Case &c : cases) {
            const auto e = Expectation::parse(QString::fromUtf8(c.text), type, &error);
            QVERIFY2(e, qPrintable(error));
            QString got;
            QVERIFY2(e->check(*reply, &got) == c.holds, c.text);
            if (!c.holds)
                QCOMPARE(got, QString::fromUtf8(c.got));
        }
        // Mistakes are named before a call is made.
        const struct {
            const char *text;
            const char *error;
        } wrong[] = {
            { "itemz.length=1", "no field \"itemz\" in rpcscope.bench.v1.ListResponse (fields: items)" },
            { "items.name=x", "\"name\" cannot follow items (a repeated field: an index or length)" },
            { "items[0]>x", "items[0] is a message: only = and != compare it" },
            { "items[0].id.length=1", "\"length\" cannot follow id" },
            { "items", "expected FIELD OP VALUE" },
            { "items!3", "\"!3\" is not an operator" },
            { "items.length>", "no value after the operator" },
            { "{\"items\":", "not a JSON object" },
        };
        for (const auto &w : wrong) {
            error.clear();
            QVERIFY2(!Expectation::parse(QString::fromUtf8(w.text), type, &error), w.text);
            QVERIFY2(error.startsWith(u'"' + QString::fromUtf8(w.text) + u'"'), qPrintable(error));
            QVERIFY2(error.contains(QString::fromUtf8(w.error)), qPrintable(error));
        }
        // Without a type only the syntax is checked (a scenario read before its schema is loaded).
        QVERIFY(Expectation::parse(QStringLiteral("itemz.length=1"), nullptr, &error));
    }

    void expectChecksSampledRepliesOfARun()
    {
        QString error;
        const auto sum = prepareGrpcCall(
            builtinBenchSchema(), { QStringLiteral("rpcscope.bench.v1.Bench/Sum"), R"({"nums":[1,2,3]})" }, &error);
        QVERIFY2(sum, qPrintable(error));
        auto expect = [](const char *text) {
            QString why;
            const auto e = Expectation::parse(QString::fromUtf8(text), nullptr, &why);
            if (!e)
                qFatal("%s", qPrintable(why));
            return *e;
        };
        LoadEngine engine;
        LoadPlan plan;
        plan.concurrency = 4;
        plan.totalCalls = 500;
        plan.warmupCalls = 20; // not checked: the sample starts with the timed calls
        plan.expectations = { expect("result=6"), expect(R"({"result":"6"})") };
        RunSnapshot s = runToEnd(engine, target(), *sum, plan);
        QCOMPARE(s.callsOk(), 500ULL);
        QCOMPARE(s.repliesChecked, 15ULL); // the first 10, then calls 10, 110, 210, 310 and 410
        QVERIFY(s.unexpectedReplies.empty());

        // One that fails: every checked reply counts as UNEXPECTED_REPLY, the first five are kept.
        plan.expectations = { expect("result>=6"), expect("result=7") };
        plan.expectSampling = { 20, 0 };
        s = runToEnd(engine, target(), *sum, plan);
        QCOMPARE(s.callsCompleted(), 500ULL);
        QCOMPARE(s.repliesChecked, 20ULL);
        QCOMPARE(s.statusCounts[CallStatus::UnexpectedReply], 20ULL);
        QCOMPARE(s.callsOk(), 480ULL);
        QCOMPARE(s.unexpectedReplies.size(), kKeptUnexpectedReplies);
        for (const UnexpectedReply &kept : s.unexpectedReplies) {
            QCOMPARE(kept.expectation, QStringLiteral("result=7"));
            QCOMPARE(kept.got, QStringLiteral("6"));
            QVERIFY2(kept.reply.contains(R"("result": "6")"), kept.reply.constData());
        }
        QCOMPARE(s.errors.size(), 1);
        QCOMPARE(s.errors.at(0).status, int(CallStatus::UnexpectedReply));
        QCOMPARE(s.errors.at(0).message, QStringLiteral("reply failed --expect result=7"));
        QCOMPARE(s.errors.at(0).count, 20ULL);

        // Every reply, when asked.
        plan.expectSampling = { 0, 1 };
        plan.expectations = { expect("result!=0") };
        plan.totalCalls = 300;
        s = runToEnd(engine, target(), *sum, plan);
        QCOMPARE(s.repliesChecked, 300ULL);
        QCOMPARE(s.callsOk(), 300ULL);
    }

    // Streaming calls: one call is one stream; its messages are counted and timed too. Each on both gRPC clients.

    void serverStreamCountsEveryMessage_data() { bothClients_data(); }
    void serverStreamCountsEveryMessage()
    {
        useClient();
        LoadEngine engine;
        LoadPlan plan;
        plan.concurrency = 4;
        plan.totalCalls = 20;
        const RunSnapshot s = runToEnd(engine, target(), streamCall("Download", R"({"count":5,"size":10})"), plan);
        QCOMPARE(s.callsOk(), 20ULL);
        QCOMPARE(s.messagesSent, 20ULL); // a server stream sends its one request
        QCOMPARE(s.messagesReceived, 100ULL);
        // Each stream's first message is timed from the call's start, apart from the gaps between the later ones.
        QCOMPARE(s.firstMessageLatency.count(), 20ULL);
        QCOMPARE(s.messageLatency.count(), 80ULL);
        QCOMPARE(s.bytesReceived, 100ULL * 12); // a 10-byte bytes field: 2 + 10
        QVERIFY(s.messageLatency.max() <= s.latency.max());
        QVERIFY(s.firstMessageLatency.max() <= s.latency.max());
        QVERIFY(s.hasStreams());
    }

    void serverStreamEndedByTheClientCountsOk_data() { bothClients_data(); }
    void serverStreamEndedByTheClientCountsOk()
    {
        useClient();
        LoadEngine engine;
        LoadPlan plan;
        plan.concurrency = 2;
        plan.totalCalls = 10;
        StreamOptions stream;
        stream.callCount = 3; // of a million the server would send
        const RunSnapshot s
            = runToEnd(engine, target(), streamCall("Download", R"({"count":1000000,"size":1})", stream), plan);
        QCOMPARE(s.callsOk(), 10ULL);
        QVERIFY2(s.errors.isEmpty(), qPrintable(s.errors.value(0).message));
        QCOMPARE(s.messagesReceived, 30ULL);

        // The same by time: each call lasts the call duration, and is OK.
        StreamOptions timed;
        timed.callDuration = 150ms;
        plan.totalCalls = 4;
        const RunSnapshot t = runToEnd(
            engine, target(), streamCall("Download", R"({"count":1000000,"size":1,"intervalUs":2000})", timed), plan);
        QCOMPARE(t.callsOk(), 4ULL);
        QVERIFY2(t.latency.min() >= 150'000'000ULL, qPrintable(QString::number(t.latency.min())));
        // At most one message every 2 ms in 150 ms (76), and the few sent while the cancel was on its way.
        QVERIFY2(
            t.messagesReceived >= 4 && t.messagesReceived <= 4 * 80, qPrintable(QString::number(t.messagesReceived)));
    }

    void clientStreamSendsEveryRequest_data() { bothClients_data(); }
    void clientStreamSendsEveryRequest()
    {
        useClient();
        LoadEngine engine;
        LoadPlan plan;
        plan.concurrency = 3;
        plan.totalCalls = 12;
        // Three requests once each; the reply (messages, bytes) tells what the server counted.
        RunSnapshot s = runToEnd(engine, target(),
            streamCall("Upload", R"([{"payload":"aGVsbG8="},{"payload":"aGk="},{"payload":""}])"), plan);
        QCOMPARE(s.callsOk(), 12ULL);
        QCOMPARE(s.messagesSent, 36ULL);
        QCOMPARE(s.messagesReceived, 12ULL);
        QCOMPARE(s.messageLatency.count(), 0ULL); // the one reply is the call's latency
        QCOMPARE(s.bytesReceived, 12ULL * 4); // messages = 3, bytes = 7: two 2-byte fields
        QCOMPARE(s.bytesSent, 12ULL * (7 + 4 + 0));

        StreamOptions stream;
        stream.callCount = 200; // cycling through the requests
        s = runToEnd(engine, target(), streamCall("Upload", R"({"payload":"aGVsbG8="})", stream), plan);
        QCOMPARE(s.callsOk(), 12ULL);
        QCOMPARE(s.messagesSent, 12ULL * 200);
        QCOMPARE(s.bytesReceived, 12ULL * 6); // messages = 200, bytes = 1000: two 3-byte fields
    }

    void bidiRepliesPairWithTheirRequests_data() { bothClients_data(); }
    void bidiRepliesPairWithTheirRequests()
    {
        useClient();
        LoadEngine engine;
        LoadPlan plan;
        plan.concurrency = 2;
        plan.totalCalls = 4;
        StreamOptions stream;
        stream.callCount = 3;
        // Sent at once; the server answers one at a time, each 20 ms late: reply i comes ~20*i ms after its request.
        RunSnapshot s
            = runToEnd(engine, target(), streamCall("Chat", R"({"payload":"aGk=","delayUs":20000})", stream), plan);
        QCOMPARE(s.callsOk(), 4ULL);
        QCOMPARE(s.messagesSent, 12ULL);
        QCOMPARE(s.messagesReceived, 12ULL);
        QCOMPARE(s.messageLatency.count(), 12ULL);
        QCOMPARE(s.firstMessageLatency.count(), 0ULL); // a bidi stream's replies are all round trips
        QVERIFY2(s.messageLatency.min() >= 20'000'000ULL, qPrintable(QString::number(s.messageLatency.min())));
        QVERIFY2(s.messageLatency.max() >= 60'000'000ULL, qPrintable(QString::number(s.messageLatency.max())));
        QVERIFY2(s.latency.min() >= 60'000'000ULL, qPrintable(QString::number(s.latency.min())));

        // Paced slower than the server answers, every reply is its own request's round trip (plus a little).
        stream.interval = 40ms;
        s = runToEnd(engine, target(), streamCall("Chat", R"({"payload":"aGk=","delayUs":20000})", stream), plan);
        QCOMPARE(s.messageLatency.count(), 12ULL);
        QVERIFY(s.messageLatency.min() >= 20'000'000ULL);
        QVERIFY2(s.messageLatency.percentile(50) < 40'000'000ULL,
            qPrintable(QString::number(s.messageLatency.percentile(50))));
        QVERIFY(s.latency.min() >= 2 * 40'000'000ULL + 20'000'000ULL);
    }

    void bidiPingPongTimesEachRoundTripAlone_data() { bothClients_data(); }
    void bidiPingPongTimesEachRoundTripAlone()
    {
        useClient();
        LoadEngine engine;
        LoadPlan plan;
        plan.concurrency = 2;
        plan.totalCalls = 4;
        StreamOptions stream;
        stream.callCount = 3;
        stream.pingPong = true;
        // Each message waits for the reply to the one before: ~20 ms each, not 20, 40 and 60 ms as when sent at once.
        const RunSnapshot s
            = runToEnd(engine, target(), streamCall("Chat", R"({"payload":"aGk=","delayUs":20000})", stream), plan);
        QCOMPARE(s.callsOk(), 4ULL);
        QCOMPARE(s.messagesSent, 12ULL);
        QCOMPARE(s.messagesReceived, 12ULL);
        QVERIFY(s.messageLatency.min() >= 20'000'000ULL);
        QVERIFY2(s.messageLatency.percentile(50) < 40'000'000ULL,
            qPrintable(QString::number(s.messageLatency.percentile(50))));
        QVERIFY(s.latency.min() >= 60'000'000ULL); // three round trips one after the other
    }

    void bidiCallDurationClosesTheStream_data() { bothClients_data(); }
    void bidiCallDurationClosesTheStream()
    {
        useClient();
        LoadEngine engine;
        LoadPlan plan;
        plan.concurrency = 2;
        plan.totalCalls = 4;
        StreamOptions stream;
        stream.interval = 10ms;
        stream.callDuration = 120ms; // and no count: as many as fit
        const RunSnapshot s = runToEnd(engine, target(), streamCall("Chat", R"({"payload":"aGk="})", stream), plan);
        QCOMPARE(s.callsOk(), 4ULL);
        QVERIFY2(s.latency.min() >= 120'000'000ULL, qPrintable(QString::number(s.latency.min())));
        QVERIFY2(s.messagesSent >= 4 * 2 && s.messagesSent <= 4 * 13, qPrintable(QString::number(s.messagesSent)));
        QCOMPARE(s.messagesReceived, s.messagesSent);
    }

    void streamErrorsAreCounted_data() { bothClients_data(); }
    void streamErrorsAreCounted()
    {
        useClient();
        LoadEngine engine;
        LoadPlan plan;
        plan.concurrency = 2;
        plan.totalCalls = 6;
        GrpcTarget t = target();
        t.metadata.emplace_back("rpcscope-status", "14");
        const RunSnapshot s = runToEnd(engine, t, streamCall("Chat", R"({"payload":"aGk="})"), plan);
        QCOMPARE(s.callsOk(), 0ULL);
        QCOMPARE(s.statusCounts[CallStatus::Unavailable], 6ULL);
        QVERIFY(s.errors.value(0).message.contains(QStringLiteral("rpcscope-status")));

        // A server going away mid-stream: every call ends, with the reason, and nothing hangs.
        BuiltinGrpcServer doomed;
        QString error;
        QVERIFY2(doomed.start(QStringLiteral("127.0.0.1"), 0, 1, &error), qPrintable(error));
        plan.totalCalls = 0;
        plan.duration = 20s;
        QVERIFY(engine.start(grpcClient(target(doomed.address()),
                                 streamCall("Download", R"({"count":1000000,"size":100,"intervalUs":1000})")),
            plan, &error));
        QTRY_VERIFY_WITH_TIMEOUT(engine.snapshot().messagesReceived >= 20, 10000);
        doomed.stop(); // within its 1 s grace: the streams in flight are ended with a status
        QTRY_VERIFY_WITH_TIMEOUT(engine.snapshot().callsFailed() >= 1, 10000);
        engine.stop();
        QVERIFY(engine.waitForFinished(5s));
        const RunSnapshot cut = engine.snapshot();
        QVERIFY(cut.messagesReceived >= 20);
        QCOMPARE(cut.callsOk(), 0ULL);
    }

    void aServerStoppedMidStreamShutsDownCleanly_data() { bothClients_data(); }
    void aServerStoppedMidStreamShutsDownCleanly()
    {
        // The built-in server stopped while it writes streams flat out, again and again: its queues shut down with
        // writes still completing. A handler that started an operation on a queue already shut down made gRPC abort
        // the process ("assertion failed: grpc_cq_begin_op"), once in a CI run at a test's end.
        useClient();
        for (int round = 0; round < 4; ++round) { // it aborted in the first or second round, three times out of three
            BuiltinGrpcServer server;
            QString error;
            QVERIFY2(server.start(QStringLiteral("127.0.0.1"), 0, 2, &error), qPrintable(error));
            LoadEngine engine;
            LoadPlan plan;
            plan.concurrency = 6;
            plan.duration = 20s;
            QVERIFY(engine.start(
                grpcClient(target(server.address()), streamCall("Download", R"({"count":100000000,"size":64})")), plan,
                &error));
            QTRY_VERIFY_WITH_TIMEOUT(engine.snapshot().messagesReceived >= 2000, 10000);
            server.stop();
            QTRY_VERIFY_WITH_TIMEOUT(engine.snapshot().callsFailed() >= 1, 10000);
            engine.stop();
            QVERIFY(engine.waitForFinished(5s));
            QCOMPARE(engine.snapshot().callsOk(), 0ULL);
        }
    }

    void stopEndsLongStreams_data() { bothClients_data(); }
    void stopEndsLongStreams()
    {
        useClient();
        LoadEngine engine;
        LoadPlan plan;
        plan.concurrency = 4;
        plan.totalCalls = 4;
        plan.interval = 100ms;
        QString error;
        QVERIFY(engine.start(
            grpcClient(target(), streamCall("Download", R"({"count":1000000,"size":10,"intervalUs":500})")), plan,
            &error));
        QTRY_VERIFY_WITH_TIMEOUT(engine.snapshot().messagesReceived >= 40, 10000); // counted while the calls go on
        // The time series has the messages too, long before any call (stream) ends.
        QTRY_VERIFY_WITH_TIMEOUT(engine.snapshot().timeline.size() >= 2, 10000);
        const RunSnapshot live = engine.snapshot();
        QCOMPARE(live.callsCompleted(), 0ULL);
        QVERIFY(live.timeline.last().messages > 0);
        QVERIFY(live.timeline.last().messageP99 > 0); // timed, too
        // A message is timed from the one before it, and the server sends message k at k x 500 us on its own clock:
        // the gaps add up to at least that, so their mean is 500 us or more however the client was scheduled. (Not
        // their median: a loaded client reads a backlog in one go, and most of its gaps are then near zero; that
        // median fell below 250 us once while two builds ran.) Messages not timed, or timed by anything shorter
        // than their gap, fail here.
        QVERIFY2(live.messageLatency.mean() >= 400'000, qPrintable(QString::number(live.messageLatency.mean())));
        QCOMPARE(live.timeline.last().calls, 0ULL);
        // What the test is for: 4 streams of a million messages (over 8 minutes each) end when the run is stopped,
        // within a bound loose enough for a loaded machine and far below the streams' own length.
        QElapsedTimer stopping;
        stopping.start();
        engine.stop();
        QVERIFY2(engine.waitForFinished(5s),
            qPrintable(QStringLiteral("still streaming %1 ms after stop").arg(stopping.elapsed())));
        QCOMPARE(engine.snapshot().state, RunState::Stopped);
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
        plan.concurrency = 1;
        plan.rate = RateSchedule {};
        QVERIFY(!engine.start(makeGrpcTransport(target(), echoCall()), plan, &error));
        QVERIFY(error.contains(QStringLiteral("rate must be positive")));
    }
};

QTEST_GUILESS_MAIN(TestEngine)
#include "tst_engine.moc"
