// RunSession: a run from its description to its record, in process (no front end, no widgets): against the
// built-in gRPC server on 127.0.0.1 port 0, on the caller's thread and on the session's own.
#include "scenario/runspec.h"
#include "server/builtingrpcserver.h"
#include "session/runsession.h"
#include "store/runrecord.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QJsonDocument>
#include <QtTest>

#include <future>
#include <thread>

using namespace rpcscope;

class TestRunSession : public QObject {
    Q_OBJECT

    BuiltinGrpcServer m_server;

    Scenario echo(const QString &target, quint64 calls) const
    {
        Scenario s;
        s.method = QStringLiteral("rpcscope.bench.v1.Bench/Echo");
        s.target = target;
        s.calls = calls;
        s.concurrency = 4;
        s.name = QStringLiteral("session");
        s.labels = QStringList { QStringLiteral("tst_runsession") };
        return s;
    }

    static RunSpec specFor(const Scenario &scenario)
    {
        ScenarioProblem problem;
        std::optional<RunSpec> spec = prepareRun(scenario, &problem);
        if (!spec)
            qFatal("prepareRun: %s", qPrintable(problem.text()));
        return *spec;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QString error;
        QVERIFY2(m_server.start(QStringLiteral("127.0.0.1"), 0, 2, &error), qPrintable(error));
    }

    void aRunIsRecordedAsItRan()
    {
        const Scenario scenario = echo(m_server.address(), 40);
        RunSession session(scenario, specFor(scenario));
        ScenarioProblem problem;
        QVERIFY2(session.prepare(&problem), qPrintable(problem.text()));
        const uint64_t servedBefore = m_server.callsServed();
        QString error;
        QVERIFY2(session.startLoad(&error), qPrintable(error));
        QVERIFY(session.engine().waitForFinished(std::chrono::seconds(30)));
        const RunSnapshot last = session.engine().snapshot();
        QCOMPARE(last.callsOk(), 40ULL);
        // The server counts a call once its Finish is done, which may come after the client has its reply.
        QTRY_VERIFY_WITH_TIMEOUT(m_server.callsServed() - servedBefore >= 40, 10000);

        RunRecord record = session.record();
        QCOMPARE(record.name, QStringLiteral("session"));
        QCOMPARE(record.labels, QStringList { QStringLiteral("tst_runsession") });
        QCOMPARE(record.method, scenario.method);
        QCOMPARE(record.transport, QStringLiteral("grpc"));
        QCOMPARE(record.codec, QStringLiteral("protobuf"));
        QCOMPARE(record.target, m_server.address());
        // The document stored is the one that ran, field for field, with the defaults it ran with written out.
        Scenario ran = scenario;
        QVERIFY(ran.codec.isEmpty());
        ran.codec = QStringLiteral("protobuf");
        ran.connections = 1;
        QCOMPARE(record.scenario, QJsonDocument::fromJson(ran.toJson()).object());
        QVERIFY(record.startedAt.isValid());
        QVERIFY(record.server.isEmpty()); // an address: no server of ours to describe
        session.completeRecord(&record, last);
        QCOMPARE(record.status, QStringLiteral("finished"));
        QCOMPARE(record.snapshot.callsOk(), 40ULL);
        QVERIFY(record.endedAt >= record.startedAt);
    }

    void aTargetNobodyAnswersIsNotTheScenariosFault()
    {
        const Scenario scenario = echo(QStringLiteral("127.0.0.1:1"), 5);
        RunSession session(scenario, specFor(scenario));
        ScenarioProblem problem;
        QVERIFY(!session.prepare(&problem));
        QVERIFY(problem.runtime);
        // Its schema would come by reflection, which is what fails first.
        QVERIFY2(problem.message.contains(QStringLiteral("reflection")), qPrintable(problem.message));
        QString error;
        QVERIFY(!session.startLoad(&error)); // nothing prepared, nothing sent
    }

    void aBadRequestIsTheScenariosFaultAndNamesTheField()
    {
        Scenario scenario = echo(m_server.address(), 5);
        scenario.request = QByteArrayLiteral("{\"no_such_field\": 1}");
        RunSession session(scenario, specFor(scenario));
        ScenarioProblem problem;
        QVERIFY(!session.prepare(&problem));
        QVERIFY(!problem.runtime);
        QCOMPARE(problem.field, QStringLiteral("request"));
        QVERIFY2(problem.message.contains(QStringLiteral("no_such_field")), qPrintable(problem.message));
    }

    void aRunningBuiltinServerIsDialledAndRecordedAsTheBuiltinOne()
    {
        // The GUI's case: its window's built-in servers are up already; the session neither starts another nor
        // records an address that means nothing tomorrow.
        const Scenario scenario = echo(QStringLiteral("builtin"), 20);
        const RunSpec spec = specFor(scenario);
        QCOMPARE(spec.server, RunServer::Builtin);
        RunSession session(scenario, spec);
        session.useRunningBuiltin(m_server.address(), QCoreApplication::applicationPid(), QStringLiteral("my serve"));
        ScenarioProblem problem;
        QVERIFY2(session.prepare(&problem), qPrintable(problem.text()));
        QCOMPARE(session.spec().target.address, m_server.address());
        QCOMPARE(session.spec().plan.serverPid, QCoreApplication::applicationPid()); // its CPU and RSS are sampled
        QCOMPARE(session.record().target, QStringLiteral("builtin"));
        QCOMPARE(session.record().server.value(QStringLiteral("command")).toString(), QStringLiteral("my serve"));
        QString error;
        QVERIFY2(session.startLoad(&error), qPrintable(error));
        QVERIFY(session.engine().waitForFinished(std::chrono::seconds(30)));
        QCOMPARE(session.engine().snapshot().callsOk(), 20ULL);
        QVERIFY(session.engine().snapshot().hasServerStats);
    }

    void inTheBackgroundTheRunStartsAndTheThreadEnds()
    {
        const Scenario scenario = echo(m_server.address(), 30);
        RunSession session(scenario, specFor(scenario));
        std::promise<RunSession::Started> told;
        std::thread::id toldOn;
        session.startInBackground([&](const RunSession::Started &started) {
            toldOn = std::this_thread::get_id();
            told.set_value(started);
        });
        std::future<RunSession::Started> started = told.get_future();
        QCOMPARE(started.wait_for(std::chrono::seconds(20)), std::future_status::ready);
        const RunSession::Started outcome = started.get();
        QVERIFY2(!outcome.problem, qPrintable(outcome.problem ? outcome.problem->text() : QString()));
        QVERIFY(toldOn != std::this_thread::get_id()); // prepared on the session's thread, not the caller's
        QVERIFY(session.engine().waitForFinished(std::chrono::seconds(30)));
        QCOMPARE(session.engine().snapshot().callsOk(), 30ULL);
        QTRY_VERIFY_WITH_TIMEOUT(session.isDone(), 10000);
    }

    void inTheBackgroundAFailureIsToldAndNothingIsLeftToWaitFor()
    {
        const Scenario scenario = echo(QStringLiteral("127.0.0.1:1"), 5);
        RunSession session(scenario, specFor(scenario));
        std::promise<RunSession::Started> told;
        session.startInBackground([&](const RunSession::Started &started) { told.set_value(started); });
        std::future<RunSession::Started> started = told.get_future();
        QCOMPARE(started.wait_for(std::chrono::seconds(20)), std::future_status::ready);
        const RunSession::Started outcome = started.get();
        QVERIFY(outcome.problem);
        QVERIFY(outcome.problem->runtime);
        QVERIFY(outcome.serverError.isEmpty());
        QTRY_VERIFY_WITH_TIMEOUT(session.isDone(), 10000);
    }

    void aServerCommandThatDoesNotStartIsToldAsSuch()
    {
        Scenario scenario = echo(QStringLiteral("/nonexistent/rpcscope-server --port {port}"), 5);
        const RunSpec spec = specFor(scenario);
        QCOMPARE(spec.server, RunServer::Command);
        RunSession session(scenario, spec);
        QString announced;
        session.setStartingHook([&](const QString &command) { announced = command; });
        std::promise<RunSession::Started> told;
        session.startInBackground([&](const RunSession::Started &started) { told.set_value(started); });
        std::future<RunSession::Started> started = told.get_future();
        QCOMPARE(started.wait_for(std::chrono::seconds(20)), std::future_status::ready);
        const RunSession::Started outcome = started.get();
        QVERIFY(outcome.problem && outcome.problem->runtime);
        QVERIFY2(outcome.serverError.contains(QStringLiteral("/nonexistent/rpcscope-server")),
            qPrintable(outcome.serverError));
        QCOMPARE(announced, scenario.target);
    }

    void stopEndsALongRunAndKeepsWhatItMeasured()
    {
        Scenario scenario = echo(m_server.address(), 0);
        scenario.duration = QStringLiteral("60s");
        RunSession session(scenario, specFor(scenario));
        std::promise<RunSession::Started> told;
        session.startInBackground([&](const RunSession::Started &started) { told.set_value(started); });
        std::future<RunSession::Started> started = told.get_future();
        QCOMPARE(started.wait_for(std::chrono::seconds(20)), std::future_status::ready);
        QVERIFY(!started.get().problem);
        QTRY_VERIFY_WITH_TIMEOUT(session.engine().snapshot().callsOk() >= 50, 20000);
        QElapsedTimer clock;
        clock.start();
        session.stop();
        QVERIFY(session.engine().waitForFinished(std::chrono::seconds(10)));
        QVERIFY(clock.elapsed() < 10000);
        const RunSnapshot last = session.engine().snapshot();
        RunRecord record = session.record();
        session.completeRecord(&record, last);
        QCOMPARE(record.status, QStringLiteral("stopped"));
        QVERIFY(record.snapshot.callsOk() >= 50);
        QTRY_VERIFY_WITH_TIMEOUT(session.isDone(), 10000);
    }

    void cleanupTestCase() { m_server.stop(); }
};

QTEST_GUILESS_MAIN(TestRunSession)
#include "tst_runsession.moc"
