// RunSession and AbSession: a run (an A/B run) from its description to its records, in process (no front end, no
// widgets): against the built-in gRPC server on 127.0.0.1 port 0, and servers the session starts itself (the CLI's
// `serve`, a server command), on the caller's thread and on the session's own.
#include "scenario/runspec.h"
#include "server/builtingrpcserver.h"
#include "session/absession.h"
#include "session/runsession.h"
#include "store/runrecord.h"
#include "util/cpuset.h"

#include <csignal>

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QJsonDocument>
#include <QtTest>

#include <future>
#include <set>
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
        QVERIFY(session.load().waitForFinished(std::chrono::seconds(30)));
        const RunSnapshot last = session.load().snapshot();
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
        QVERIFY(session.load().waitForFinished(std::chrono::seconds(30)));
        QCOMPARE(session.load().snapshot().callsOk(), 20ULL);
        QVERIFY(session.load().snapshot().hasServerStats);
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
        QVERIFY(session.load().waitForFinished(std::chrono::seconds(30)));
        QCOMPARE(session.load().snapshot().callsOk(), 30ULL);
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
        QTRY_VERIFY_WITH_TIMEOUT(session.load().snapshot().callsOk() >= 50, 20000);
        QElapsedTimer clock;
        clock.start();
        session.stop();
        QVERIFY(session.load().waitForFinished(std::chrono::seconds(10)));
        QVERIFY(clock.elapsed() < 10000);
        const RunSnapshot last = session.load().snapshot();
        RunRecord record = session.record();
        session.completeRecord(&record, last);
        QCOMPARE(record.status, QStringLiteral("stopped"));
        QVERIFY(record.snapshot.callsOk() >= 50);
        QTRY_VERIFY_WITH_TIMEOUT(session.isDone(), 10000);
    }

    /// The A/B design of an echo run: @p calls a side in blocks of @p block.
    Scenario abDesign(quint64 calls, const QString &block) const
    {
        Scenario s = echo(QString(), calls);
        s.concurrency = 2;
        s.abBlock = block;
        return s;
    }

    void anAbRunOfTwoAddressesKeepsARecordPerSide()
    {
        BuiltinGrpcServer other;
        QString error;
        QVERIFY2(other.start(QStringLiteral("127.0.0.1"), 0, 2, &error), qPrintable(error));
        AbSession session(abDesign(120, QStringLiteral("20")),
            { AbTarget { m_server.address(), {}, {}, {}, {} }, AbTarget { other.address(), {}, {}, {}, {} } });
        session.setNaming(QString(), { QStringLiteral("upgrade") });
        ScenarioProblem problem;
        int side = -2;
        QVERIFY2(session.check(&problem, &side), qPrintable(problem.text()));
        QCOMPARE(session.rounds(), 6);
        QCOMPARE(session.blocks().calls, 20ULL);
        QCOMPARE(session.blocks().restarts, 1); // addresses: nothing to restart
        QVERIFY(!session.startsServer(0) && !session.startsServer(1));
        QVERIFY(session.clientCpus().empty() && !session.pinnedApart());
        QVERIFY2(session.prepare(&problem, &side), qPrintable(problem.text()));
        QVERIFY(session.blocks().firstSide == 0 || session.blocks().firstSide == 1); // the coin was flipped
        const uint64_t servedA = m_server.callsServed(), servedB = other.callsServed();
        QVERIFY2(session.startLoad(&error), qPrintable(error));
        QVERIFY(session.runner().waitForFinished(std::chrono::seconds(60)));
        session.finish();
        QVERIFY(session.runEnded());

        std::array<RunRecord, 2> records = session.records();
        session.completeRecords(&records);
        for (int i = 0; i < 2; ++i) {
            const RunRecord &r = records[static_cast<size_t>(i)];
            const QString letter = i == 0 ? QStringLiteral("A") : QStringLiteral("B");
            const QString address = i == 0 ? m_server.address() : other.address();
            QVERIFY2(r.name.endsWith(QStringLiteral(" (%1)").arg(letter)), qPrintable(r.name));
            QCOMPARE(r.labels, (QStringList { QStringLiteral("upgrade"), letter }));
            QCOMPARE(r.target, address);
            // Each side's document is the one it ran: its own target, the design as it ran, which side it was.
            QCOMPARE(r.scenario.value(QStringLiteral("target")).toString(), address);
            QCOMPARE(r.scenario.value(QStringLiteral("ab_side")).toString(), letter);
            QCOMPARE(r.scenario.value(QStringLiteral("ab_rounds_planned")).toInt(), 6);
            QCOMPARE(r.scenario.value(QStringLiteral("codec")).toString(), QStringLiteral("protobuf"));
            QVERIFY(r.server.isEmpty());
            QVERIFY(r.startedAt.isValid() && r.endedAt >= r.startedAt);
            QCOMPARE(r.status, QStringLiteral("finished"));
            QCOMPARE(r.snapshot.callsOk(), 120ULL);
            QCOMPARE(static_cast<int>(r.snapshot.blocks.size()), 6);
        }
        // Each side's calls went to its own server (and warm-up calls, if any, too).
        QTRY_VERIFY_WITH_TIMEOUT(
            m_server.callsServed() - servedA >= 120 && other.callsServed() - servedB >= 120, 10000);
        QVERIFY(records[0].name != records[1].name);
        other.stop();
    }

    void anAbDesignIsRefusedBeforeAnythingStarts_data()
    {
        QTest::addColumn<QString>("a");
        QTest::addColumn<QString>("b");
        QTest::addColumn<QString>("environmentOfA");
        QTest::addColumn<QString>("transport");
        QTest::addColumn<int>("restarts");
        QTest::addColumn<int>("side");
        QTest::addColumn<QString>("field");
        // A is given an environment, but it is an address: nothing of ours starts there.
        QTest::newRow("environment of an address") << "127.0.0.1:1"
                                                   << "builtin"
                                                   << "TOKEN=x"
                                                   << "grpc" << 0 << 0 << "environment";
        QTest::newRow("B is neither") << "builtin"
                                      << "nohost"
                                      << ""
                                      << "grpc" << 0 << 1 << "target";
        QTest::newRow("more starts than rounds") << "builtin"
                                                 << "builtin"
                                                 << ""
                                                 << "grpc" << 50 << -1 << "ab.restarts";
        QTest::newRow("no-RPC baseline") << "builtin"
                                         << "builtin"
                                         << ""
                                         << "none" << 0 << -1 << "transport";
    }

    void anAbDesignIsRefusedBeforeAnythingStarts()
    {
        QFETCH(QString, a);
        QFETCH(QString, b);
        QFETCH(QString, environmentOfA);
        QFETCH(QString, transport);
        QFETCH(int, restarts);
        Scenario design = abDesign(100, QStringLiteral("10"));
        design.transport = transport;
        design.abRestarts = restarts;
        AbTarget first { a, {}, {}, {}, {} };
        if (!environmentOfA.isEmpty())
            first.environment.append({ environmentOfA.section(u'=', 0, 0), environmentOfA.section(u'=', 1) });
        AbSession session(
            design, { first, AbTarget { b, {}, {}, {}, {} } }, std::nullopt, QStringLiteral(RPCSCOPE_CLI));
        QStringList started;
        session.setStartingHook([&](const QString &what) { started << what; });
        ScenarioProblem problem;
        int side = -2;
        QVERIFY(!session.check(&problem, &side));
        QTEST(side, "side");
        QTEST(problem.field, "field");
        QVERIFY(!problem.runtime);
        QVERIFY(!problem.message.isEmpty());
        // prepare() checks first too, and starts nothing either.
        QVERIFY(!session.prepare(&problem, &side));
        QTEST(problem.field, "field");
        QVERIFY2(started.isEmpty(), qPrintable(started.join(u'\n')));
    }

    void anUnreachableSideIsTheMachinesFaultAndNamed()
    {
        AbSession session(abDesign(40, QStringLiteral("10")),
            { AbTarget { m_server.address(), {}, {}, {}, {} },
                AbTarget { QStringLiteral("127.0.0.1:1"), {}, {}, {}, {} } });
        ScenarioProblem problem;
        int side = -2;
        QVERIFY(!session.prepare(&problem, &side));
        QCOMPARE(side, 1);
        QVERIFY(problem.runtime);
        QVERIFY2(problem.message.startsWith(QStringLiteral("cannot reach B: ")), qPrintable(problem.message));
    }

    void anAbSessionStartsRestartsAndStopsItsServers()
    {
        // A: a server command with a secret in its environment; B: rpcscope's own serve. Two processes a side.
        const QString serve = QStringLiteral("'%1' serve grpc --port {port}").arg(QStringLiteral(RPCSCOPE_CLI));
        AbTarget a { serve, { { QStringLiteral("API_TOKEN"), QStringLiteral("hunter2-secret") } }, {}, {}, {} };
        AbTarget b { QStringLiteral("builtin"), {}, {}, {}, {} };
        Scenario design = abDesign(80, QStringLiteral("10"));
        design.abRestarts = 2;
        AbSession session(design, { a, b }, std::nullopt, QStringLiteral(RPCSCOPE_CLI));
        QStringList started;
        session.setStartingHook([&](const QString &what) { started << what; }); // the session's thread; read after
        std::promise<AbSession::Started> told;
        session.startInBackground([&](const AbSession::Started &outcome) { told.set_value(outcome); });
        std::future<AbSession::Started> outcome = told.get_future();
        QCOMPARE(outcome.wait_for(std::chrono::seconds(60)), std::future_status::ready);
        const AbSession::Started result = outcome.get();
        QVERIFY2(!result.problem, qPrintable(result.problem ? result.problem->text() : QString()));
        QCOMPARE(started.size(), 2);
        const int first = session.blocks().firstSide;
        QVERIFY2(started[0].startsWith(
                     first == 0 ? QStringLiteral("Starting A: '") : QStringLiteral("Starting B: built-in")),
            qPrintable(started.join(u'\n')));
        QTRY_VERIFY_WITH_TIMEOUT(session.runEnded(), 60000);
        QTRY_VERIFY_WITH_TIMEOUT(session.isDone(), 20000);

        std::array<RunRecord, 2> records = session.records();
        session.completeRecords(&records);
        QCOMPARE(session.blocks().restarts, 2);
        for (const RunRecord &r : records) {
            QCOMPARE(r.snapshot.callsOk(), 80ULL);
            QCOMPARE(r.snapshot.blocks.size(), size_t(8));
            std::set<int> processes;
            for (const auto &block : r.snapshot.blocks)
                processes.insert(block.process);
            QCOMPARE(processes.size(), size_t(2)); // restarted once over the run
            QCOMPARE(r.scenario.value(QStringLiteral("ab")).toObject().value(QStringLiteral("restarts")).toInt(), 2);
        }
        // The secret never reaches the record; the built-in side is recorded as the same command on every machine.
        const QString serverA = QString::fromUtf8(QJsonDocument(records[0].server).toJson());
        QVERIFY2(!serverA.contains(QStringLiteral("hunter2")), qPrintable(serverA));
        QVERIFY2(serverA.contains(QStringLiteral("API_TOKEN")), qPrintable(serverA));
        QCOMPARE(
            records[1].server.value(QStringLiteral("command")).toString(), QStringLiteral("rpcscope-cli serve grpc"));
        // Both servers were stopped by the session's thread.
        for (int i = 0; i < 2; ++i) {
            const qint64 pid = session.spec(i).plan.serverPid;
            QVERIFY(pid > 0);
            QVERIFY2(::kill(static_cast<pid_t>(pid), 0) != 0, qPrintable(QString::number(pid)));
        }
    }

    void cleanupTestCase() { m_server.stop(); }
};

QTEST_GUILESS_MAIN(TestRunSession)
#include "tst_runsession.moc"
