// Scenario documents: the format the GUI saves and `rpcscope-cli run --scenario` reads.
#include "scenario/abdesign.h"
#include "scenario/confinement.h"
#include "scenario/matrixcell.h"
#include "scenario/runspec.h"
#include "scenario/scenario.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <unistd.h>

#include <algorithm>

using namespace rpcscope;

class TestScenario : public QObject {
    Q_OBJECT

    static Scenario full()
    {
        Scenario s;
        s.protos = { QStringLiteral("/abs/a.proto") };
        s.importPaths = { QStringLiteral("/abs/include") };
        s.method = QStringLiteral("pkg.Service/Method");
        s.transport = QStringLiteral("msgpack");
        s.codec = QStringLiteral("msgpack");
        s.rpcMethod = QStringLiteral("sum_nums");
        s.msgpackParamsMap = true;
        s.target = QStringLiteral("127.0.0.1:18800");
        // Text, never re-serialized: a 64-bit id beyond double precision and a template survive.
        s.request = R"({"id": 9007199254740993, "name": "{{.RequestNumber}}"})";
        s.fills = { QStringLiteral("payload=1KiB"), QStringLiteral("nums=1000") };
        s.metadata = { { QStringLiteral("authorization"), QStringLiteral("Bearer x") },
            { QStringLiteral("x-a"), QStringLiteral("1") } };
        s.calls = 12345;
        s.concurrency = 64;
        s.duration = QStringLiteral("30s");
        s.rate = QStringLiteral("500");
        s.warmup = QStringLiteral("5s");
        s.timeout = QStringLiteral("2s");
        s.connections = 4;
        s.discardResponse = true;
        s.maxReceiveSize = QStringLiteral("64MiB");
        s.maxSendSize = QStringLiteral("1MiB");
        s.rateSchedule = ScheduleText { QStringLiteral("line"), QStringLiteral("100"), QStringLiteral("10"),
            QStringLiteral("1000"), QStringLiteral("1s"), QStringLiteral("60s") };
        return s;
    }

    /// A gRPC document with every connection and advanced setting (TLS is refused for other transports).
    static Scenario tlsGrpc()
    {
        Scenario s;
        s.method = QStringLiteral("pkg.Service/Method");
        s.target = QStringLiteral("bench.example.com:443");
        s.security = QStringLiteral("tls");
        s.caCert = QStringLiteral("/abs/ca.crt");
        s.clientCert = QStringLiteral("/abs/client.crt");
        s.clientKey = QStringLiteral("/abs/client.key");
        s.serverName = QStringLiteral("rpcscope.test");
        s.skipVerify = true;
        s.authority = QStringLiteral("bench.internal");
        s.clientThreads = 3;
        s.interval = QStringLiteral("250ms");
        s.rawSamples = QStringLiteral("/abs/raw.csv");
        s.checks = { QStringLiteral("p99<20ms"), QStringLiteral("error_rate<0.1%") };
        s.expect = { QStringLiteral("result>=6"), QStringLiteral(R"({"result":"6"})") };
        s.expectFirst = QStringLiteral("5");
        s.expectEvery = QStringLiteral("1");
        s.abBlock = QStringLiteral("500");
        s.abRestarts = 4;
        s.abConnection = QStringLiteral("per-block");
        s.abThreshold = QStringLiteral("3%");
        return s;
    }

private Q_SLOTS:
    void aMatrixCellsDocumentIsMadeOnce()
    {
        // scenarioForCell: the CLI's matrix and the window's stack comparison run (and store) the same document.
        Scenario base;
        base.method = QStringLiteral("rpcscope.bench.v1.Bench/Echo");
        base.target = QStringLiteral("api.example:443");
        base.caCert = QStringLiteral("ca.pem");
        base.security = QStringLiteral("tls");
        base.connections = 4;
        base.concurrency = 8;
        base.fills = QStringList { QStringLiteral("a=1") };
        base.http2Window = QStringLiteral("1MiB");
        base.rawSamples = QStringLiteral("samples.csv");
        MatrixCell cell;
        cell.transport = TransportKind::Http;
        cell.codec = Codec::Json;
        cell.payload = QStringLiteral("nums=2, b=3");
        cell.concurrency = 2;
        cell.stack = QStringLiteral("web");
        cell.target = QStringLiteral("http://127.0.0.1:8080");
        cell.httpPath = QStringLiteral("/echo");
        Scenario s = scenarioForCell(base, cell, QStringLiteral("builtin"));
        QCOMPARE(s.transport, QStringLiteral("http"));
        QCOMPARE(s.codec, QStringLiteral("json"));
        QCOMPARE(s.target, cell.target);
        QCOMPARE(s.httpPath, cell.httpPath);
        QCOMPARE(s.concurrency, 2);
        QCOMPARE(s.fills, (QStringList { QStringLiteral("a=1"), QStringLiteral("nums=2"), QStringLiteral("b=3") }));
        // The base's TLS and connections are its own target's; the HTTP/2 window h2grpc's; the samples one run's.
        QVERIFY(!s.hasTlsSettings());
        QCOMPARE(s.security, QStringLiteral("auto"));
        QCOMPARE(s.connections, -1);
        QVERIFY(s.http2Window.isEmpty());
        QVERIFY(s.rawSamples.isEmpty());
        // The base's own transport and target keep its connection settings; h2grpc its window.
        cell = MatrixCell();
        cell.transport = TransportKind::H2Grpc;
        base.transport = QStringLiteral("h2grpc");
        s = scenarioForCell(base, cell, base.target);
        QCOMPARE(s.target, base.target);
        QCOMPARE(s.caCert, base.caCert);
        QCOMPARE(s.connections, 4);
        QCOMPARE(s.concurrency, 8); // the cell names no callers: the base's
        QCOMPARE(s.http2Window, base.http2Window);
        // A base with no target (the CLI's matrix): its connection flags are for every cell.
        base.target.clear();
        cell.transport = TransportKind::Grpc;
        s = scenarioForCell(base, cell, QStringLiteral("127.0.0.1:50051"));
        QCOMPARE(s.target, QStringLiteral("127.0.0.1:50051"));
        QCOMPARE(s.caCert, base.caCert);
        QCOMPARE(s.connections, 4);
        // The no-RPC baseline: no target, one caller.
        cell.transport = TransportKind::InProcess;
        cell.concurrency = 16;
        s = scenarioForCell(base, cell, QStringLiteral("builtin"));
        QVERIFY(s.target.isEmpty());
        QCOMPARE(s.concurrency, 1);
    }

    void anAbDesignHasOneSetOfRules()
    {
        // prepareAb: the CLI's ab and the window's Compare A/B type the "ab" section through it alone.
        LoadPlan plan;
        plan.totalCalls = 300;
        plan.concurrency = 2;
        Scenario design;
        design.abBlock = QStringLiteral("100"); // three rounds
        ScenarioProblem problem;
        const AbServers commands { true, true, false };
        std::optional<AbBlocks> blocks = prepareAb(design, plan, commands, &problem);
        QVERIFY2(blocks, qPrintable(problem.text()));
        QCOMPARE(blocks->calls, 100ULL);
        QCOMPARE(blocks->roundsFor(plan), 3);
        QCOMPARE(blocks->restarts, 3); // the default: a process per round, at most five
        QVERIFY(!blocks->unpinnedProcesses); // restarted processes are replicates of their own
        QCOMPARE(blocks->threshold, 0.05);
        QVERIFY(!blocks->connectionPerBlock);
        // Server starts above the rounds: refused, not cut to the rounds.
        design.abRestarts = 4;
        QVERIFY(!prepareAb(design, plan, commands, &problem));
        QCOMPARE(problem.field, QStringLiteral("ab.restarts"));
        QVERIFY2(problem.message.contains(QStringLiteral("only 3 rounds")), qPrintable(problem.message));
        // One process a side, both started by rpcscope and nothing pinned: the verdict says so.
        design.abRestarts = 1;
        blocks = prepareAb(design, plan, commands, &problem);
        QVERIFY2(blocks, qPrintable(problem.text()));
        QVERIFY(blocks->unpinnedProcesses);
        QVERIFY(!prepareAb(design, plan, { true, true, true }, &problem)->unpinnedProcesses);
        QVERIFY(!prepareAb(design, plan, { true, false, false }, &problem)->unpinnedProcesses);
        // Judged as it goes: the servers are restarted too (pairs of processes are its replicates), as given ...
        design.abUntilDecided = true;
        design.abRestarts = 2;
        blocks = prepareAb(design, plan, commands, &problem);
        QVERIFY2(blocks, qPrintable(problem.text()));
        QCOMPARE(blocks->restarts, 2);
        QVERIFY(blocks->untilDecided);
        QVERIFY(!blocks->unpinnedProcesses);
        design.abRestarts = 4;
        QVERIFY(!prepareAb(design, plan, commands, &problem));
        QCOMPARE(problem.field, QStringLiteral("ab.restarts"));
        // ... or by default: a process for every two rounds, at most ten; three rounds leave one process a side.
        design.abRestarts = 0;
        blocks = prepareAb(design, plan, commands, &problem);
        QVERIFY2(blocks, qPrintable(problem.text()));
        QCOMPARE(blocks->restarts, 1);
        design.abBlock.clear();
        LoadPlan longer = plan;
        longer.totalCalls = 4000;
        blocks = prepareAb(design, longer, commands, &problem);
        QVERIFY2(blocks, qPrintable(problem.text()));
        QCOMPARE(blocks->roundsFor(longer), 40);
        QCOMPARE(blocks->restarts, 10);
        QCOMPARE(prepareAb(design, longer, AbServers {}, &problem)->restarts, 1); // addresses: none to restart
        // A block of the other kind, a run with no end, a threshold or limit that is not one.
        design = Scenario();
        design.abBlock = QStringLiteral("2s");
        QVERIFY(!prepareAb(design, plan, commands, &problem));
        QCOMPARE(problem.field, QStringLiteral("ab.block"));
        LoadPlan endless;
        endless.totalCalls = 0;
        endless.duration = std::chrono::nanoseconds(0);
        QVERIFY(!prepareAb(Scenario(), endless, commands, &problem));
        QCOMPARE(problem.field, QStringLiteral("load.calls"));
        design = Scenario();
        design.abThreshold = QStringLiteral("lots");
        QVERIFY(!prepareAb(design, plan, commands, &problem));
        QCOMPARE(problem.field, QStringLiteral("ab.threshold"));
        design = Scenario();
        design.abMaxDuration = QStringLiteral("0s");
        QVERIFY(!prepareAb(design, plan, commands, &problem));
        QCOMPARE(problem.field, QStringLiteral("ab.max_duration"));
        // Addresses only: one process a side (none is started), the connection as asked.
        design = Scenario();
        design.abConnection = QStringLiteral("per-block");
        blocks = prepareAb(design, plan, AbServers {}, &problem);
        QVERIFY2(blocks, qPrintable(problem.text()));
        QCOMPARE(blocks->restarts, 1);
        QVERIFY(blocks->connectionPerBlock);
    }

    void roundTripsEveryField()
    {
        const Scenario s = full();
        QString error;
        const std::optional<Scenario> back = Scenario::fromJson(s.toJson(), &error);
        QVERIFY2(back, qPrintable(error));
        QVERIFY(*back == s);
        QCOMPARE(back->request, s.request);
        QVERIFY(!back->concurrencySchedule);
        const std::optional<Scenario> defaults = Scenario::fromJson(Scenario().toJson(), &error);
        QVERIFY(defaults && *defaults == Scenario());
    }

    void streamSettingsRoundTripAndBecomeRunFlags()
    {
        Scenario s;
        s.method = QStringLiteral("rpcscope.bench.v1.Bench/Chat");
        s.streamCallCount = QStringLiteral("100");
        s.streamInterval = QStringLiteral("10ms");
        s.streamCallDuration = QStringLiteral("5s");
        s.streamPingPong = true;
        QString error;
        const auto back = Scenario::fromJson(s.toJson(), &error);
        QVERIFY2(back, qPrintable(error));
        QVERIFY(*back == s);
        QCOMPARE(back->streamInterval, QStringLiteral("10ms"));
        // Prepared by core, they are the run's stream options.
        ScenarioProblem problem;
        const std::optional<RunSpec> spec = prepareRun(s, &problem);
        QVERIFY2(spec, qPrintable(problem.text()));
        QCOMPARE(spec->stream.callCount, uint64_t(100));
        QCOMPARE(spec->stream.interval, std::chrono::nanoseconds(std::chrono::milliseconds(10)));
        QCOMPARE(spec->stream.callDuration, std::chrono::nanoseconds(std::chrono::seconds(5)));
        QVERIFY(spec->stream.pingPong);
        // Unset, they are left out of the document (older readers open it) and the run streams by default.
        QVERIFY(!Scenario().toJson().contains("stream_"));
        s.streamCallCount = QStringLiteral("lots");
        QVERIFY(!prepareRun(s, &problem));
        QCOMPARE(problem.field, QStringLiteral("load.stream_call_count"));
        const auto wrong = Scenario::fromJson(R"({"rpcscope_scenario":1,"load":{"stream_interval":10}})", &error);
        QVERIFY(!wrong);
        QVERIFY2(error.contains(QStringLiteral("load.stream_interval")), qPrintable(error));
    }

    void profileSettingsRoundTripButADocumentRunsNoProfilerCommand()
    {
        Scenario s;
        s.method = QStringLiteral("rpcscope.bench.v1.Bench/Echo");
        s.profileServer = true;
        s.profileClient = true;
        s.profiler = QStringLiteral("perf");
        s.profilePeriod = QStringLiteral("500us");
        s.profileCallGraph = QStringLiteral("dwarf");
        s.profileKeep = true;
        QString error;
        const auto back = Scenario::fromJson(s.toJson(), &error);
        QVERIFY2(back, qPrintable(error));
        QVERIFY(*back == s);
        ScenarioProblem problem;
        const std::optional<RunSpec> spec = prepareRun(s, &problem);
        QVERIFY2(spec, qPrintable(problem.text()));
        QVERIFY(spec->profile.server && spec->profile.client);
        QCOMPARE(spec->profile.profiler, QStringLiteral("perf"));
        QCOMPARE(spec->profile.period, std::chrono::microseconds(500));
        QCOMPARE(spec->profile.callGraph, QStringLiteral("dwarf"));
        QCOMPARE(spec->profile.keepDir, perfKeepDir());
        // A command is the user's say-so (the flag, the window): never written to a document, never read from one.
        s.profiler = QStringLiteral("py-spy record -p {pid} -o {out} -f raw");
        QVERIFY(prepareRun(s, &problem));
        QVERIFY(!s.toJson().contains("py-spy"));
        const auto refused = Scenario::fromJson(
            R"({"rpcscope_scenario":1,"profile":{"server":true,"profiler":"sh -c 'rm -rf ~' {pid} {out}"}})", &error);
        QVERIFY(!refused);
        QVERIFY2(error.contains(QStringLiteral("profile.profiler"))
                && error.contains(QStringLiteral("may not name a command")),
            qPrintable(error));
        // Typed in core: the period's bounds, a profiler's placeholders, nothing to profile, no server to profile.
        s.profiler = QStringLiteral("perf");
        s.profilePeriod = QStringLiteral("10us");
        QVERIFY(!prepareRun(s, &problem));
        QCOMPARE(problem.field, QStringLiteral("profile.period"));
        s.profilePeriod.clear();
        s.profileCallGraph = QStringLiteral("lbr");
        QVERIFY(!prepareRun(s, &problem));
        QCOMPARE(problem.field, QStringLiteral("profile.call_graph"));
        QVERIFY2(problem.text().contains(QStringLiteral("'lbr' is neither fp")), qPrintable(problem.text()));
        s.profileCallGraph.clear();
        s.profiler = QStringLiteral("my-profiler --pid {pid}");
        QVERIFY(!prepareRun(s, &problem));
        QCOMPARE(problem.field, QStringLiteral("profile.profiler"));
        s.profiler = QStringLiteral("perf");
        s.profileServer = s.profileClient = false;
        QVERIFY(!prepareRun(s, &problem));
        QCOMPARE(problem.field, QStringLiteral("profile.profiler"));
        s.profiler.clear();
        s.profileCallGraph = QStringLiteral("dwarf");
        QVERIFY(!prepareRun(s, &problem)); // a call graph of nothing
        QCOMPARE(problem.field, QStringLiteral("profile.call_graph"));
        s.profileCallGraph.clear();
        QVERIFY(!prepareRun(s, &problem)); // keeping a recording of nothing
        QCOMPARE(problem.field, QStringLiteral("profile.keep"));
        s.profileKeep = false;
        // --profile-pid: a process of this machine; never from a document, which may not point at one.
        s.profilePid = 999999999;
        QVERIFY(!prepareRun(s, &problem));
        QCOMPARE(problem.field, QStringLiteral("profile.pid"));
        s.profilePid = ::getpid();
        const std::optional<RunSpec> byPid = prepareRun(s, &problem);
        QVERIFY2(byPid, qPrintable(problem.text()));
        QVERIFY(byPid->profile.server && byPid->profile.pid == ::getpid());
        QVERIFY(!s.toJson().contains("\"pid\""));
        QVERIFY(!Scenario::fromJson(R"({"rpcscope_scenario":1,"profile":{"server":true,"pid":1}})", &error));
        QVERIFY2(error.contains(QStringLiteral("profile")) && error.contains(QStringLiteral("pid")), qPrintable(error));
        s.profilePid = 0;
        s.profileServer = true;
        s.transport = QStringLiteral("none");
        QVERIFY(!prepareRun(s, &problem));
        QCOMPARE(problem.field, QStringLiteral("profile.server"));
    }

    void roundTripsConnectionAndAdvancedFields()
    {
        const Scenario s = tlsGrpc();
        QString error;
        const std::optional<Scenario> back = Scenario::fromJson(s.toJson(), &error);
        QVERIFY2(back, qPrintable(error));
        QVERIFY(*back == s);
        QCOMPARE(back->caCert, QStringLiteral("/abs/ca.crt"));
        QCOMPARE(back->clientThreads, 3);
        QCOMPARE(back->interval, QStringLiteral("250ms"));
        QCOMPARE(back->rawSamples, QStringLiteral("/abs/raw.csv"));
        QCOMPARE(back->checks, (QStringList { QStringLiteral("p99<20ms"), QStringLiteral("error_rate<0.1%") }));
        Scenario plain;
        plain.security = QStringLiteral("plaintext");
        const auto plainBack = Scenario::fromJson(plain.toJson(), &error);
        QVERIFY2(plainBack, qPrintable(error));
        QCOMPARE(plainBack->security, QStringLiteral("plaintext"));
    }

    void binaryRequestFileRoundTripsAndWinsOverJson()
    {
        Scenario s;
        s.request = "{\"payload\":\"aGk=\"}";
        s.requestBinaryFile = QStringLiteral("/abs/request.bin");
        QString error;
        const auto back = Scenario::fromJson(s.toJson(), &error);
        QVERIFY2(back, qPrintable(error));
        QCOMPARE(back->requestBinaryFile, QStringLiteral("/abs/request.bin"));
        // Relative to the document, like the other files.
        QTemporaryDir dir;
        // Prepared, the serialized message is the request and the JSON is not used.
        QFile binary(dir.filePath(QStringLiteral("request.bin")));
        QVERIFY(binary.open(QIODevice::WriteOnly) && binary.write("\x0a\x02hi") == 4);
        binary.close();
        s.method = QStringLiteral("rpcscope.bench.v1.Bench/Echo");
        s.requestBinaryFile = binary.fileName();
        ScenarioProblem problem;
        const std::optional<RunSpec> spec = prepareRun(s, &problem);
        QVERIFY2(spec, qPrintable(problem.text()));
        QCOMPARE(spec->request.binary.value_or(QByteArray()), QByteArray("\x0a\x02hi", 4));
        QVERIFY(spec->request.json.isEmpty());
        QCOMPARE(spec->requestField, QStringLiteral("request_binary_file"));
        s.requestBinaryFile = dir.filePath(QStringLiteral("req/request.bin"));
        QVERIFY(s.save(dir.filePath(QStringLiteral("doc.rpcscope.json")), &error));
        QFile saved(dir.filePath(QStringLiteral("doc.rpcscope.json")));
        QVERIFY(saved.open(QIODevice::ReadOnly));
        QVERIFY(saved.readAll().contains("\"request_binary_file\": \"req/request.bin\""));
        const auto loaded = Scenario::load(dir.filePath(QStringLiteral("doc.rpcscope.json")), &error);
        QVERIFY2(loaded, qPrintable(error));
        QCOMPARE(loaded->requestBinaryFile, s.requestBinaryFile);
    }

    void documentsWithoutTheNewFieldsStillOpenBothWays()
    {
        // Version 1 documents written before these fields existed read with the defaults...
        QString error;
        const auto old = Scenario::load(QFINDTESTDATA("data/sum-msgpack.rpcscope.json"), &error);
        QVERIFY2(old, qPrintable(error));
        QCOMPARE(old->security, QStringLiteral("auto"));
        QVERIFY(!old->hasTlsSettings());
        QCOMPARE(old->clientThreads, 0);
        QVERIFY(old->interval.isEmpty() && old->rawSamples.isEmpty() && old->authority.isEmpty());
        // ...and a document that uses none of them writes none of them, so older builds still open it.
        const QByteArray json = Scenario().toJson();
        QVERIFY2(!json.contains("connection") && !json.contains("raw_samples") && !json.contains("client_threads")
                && !json.contains("interval"),
            json.constData());
    }

    void badConnectionValuesNameTheField_data()
    {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QString>("expected");
        QTest::newRow("security") << QByteArray(R"({"rpcscope_scenario":1,"connection":{"security":"maybe"}})")
                                  << QStringLiteral("connection.security: \"maybe\" is not auto, plaintext or tls");
        QTest::newRow("plaintext and tls")
            << QByteArray(R"({"rpcscope_scenario":1,"connection":{"security":"plaintext","cacert":"ca.crt"}})")
            << QStringLiteral("connection.security: plaintext contradicts");
        QTest::newRow("cert without key")
            << QByteArray(R"({"rpcscope_scenario":1,"connection":{"cert":"c.crt"}})")
            << QStringLiteral("connection.key: a client certificate and its key go together");
        QTest::newRow("key without cert") << QByteArray(R"({"rpcscope_scenario":1,"connection":{"key":"c.key"}})")
                                          << QStringLiteral("connection.cert:");
        QTest::newRow("skip not bool") << QByteArray(R"({"rpcscope_scenario":1,"connection":{"skip_verify":"yes"}})")
                                       << QStringLiteral("connection.skip_verify: expected true or false");
        QTest::newRow("unknown") << QByteArray(R"({"rpcscope_scenario":1,"connection":{"cafile":"x"}})")
                                 << QStringLiteral("connection.cafile: unknown field");
        QTest::newRow("tls over http")
            << QByteArray(R"({"rpcscope_scenario":1,"transport":"http","connection":{"skip_verify":true}})")
            << QStringLiteral("connection: the TLS settings are for the gRPC transports (grpc, h2grpc)");
        QTest::newRow("threads") << QByteArray(R"({"rpcscope_scenario":1,"load":{"client_threads":65}})")
                                 << QStringLiteral("load.client_threads: expected a whole number from 0 to 64");
        QTest::newRow("interval type") << QByteArray(R"({"rpcscope_scenario":1,"load":{"interval":5}})")
                                       << QStringLiteral("load.interval: expected a string");
        QTest::newRow("raw samples type") << QByteArray(R"({"rpcscope_scenario":1,"raw_samples":["a.csv"]})")
                                          << QStringLiteral("raw_samples: expected a string");
    }
    void badConnectionValuesNameTheField()
    {
        QFETCH(QByteArray, json);
        QFETCH(QString, expected);
        QString error;
        QVERIFY(!Scenario::fromJson(json, &error));
        QVERIFY2(error.contains(expected), qPrintable(error));
    }

    void connectionAndAdvancedFieldsBecomeTheRunsSettings()
    {
        // The TLS files are read when the run is prepared: make them.
        QTemporaryDir dir;
        Scenario s = tlsGrpc();
        for (QString *path : { &s.caCert, &s.clientCert, &s.clientKey }) {
            *path = dir.filePath(QFileInfo(*path).fileName());
            QFile pem(*path);
            QVERIFY(pem.open(QIODevice::WriteOnly));
            pem.write("-----BEGIN " + QFileInfo(*path).fileName().toUtf8() + "-----\n");
        }
        s.rawSamples = dir.filePath(QStringLiteral("raw.csv"));
        ScenarioProblem problem;
        const std::optional<RunSpec> spec = prepareRun(s, &problem);
        QVERIFY2(spec, qPrintable(problem.text()));
        QCOMPARE(spec->server, RunServer::Address);
        QCOMPARE(spec->target.address, QStringLiteral("bench.example.com:443"));
        QVERIFY(spec->target.tls.enabled);
        QVERIFY(spec->target.tls.rootCerts.find("ca.crt") != std::string::npos);
        QVERIFY(spec->target.tls.certChain.find("client.crt") != std::string::npos);
        QVERIFY(spec->target.tls.privateKey.find("client.key") != std::string::npos);
        QCOMPARE(spec->target.tls.serverNameOverride, std::string("rpcscope.test"));
        QVERIFY(spec->target.tls.skipVerify);
        QCOMPARE(spec->target.authority, std::string("bench.internal"));
        QCOMPARE(spec->target.clientThreads, 3);
        QCOMPARE(spec->plan.interval, std::chrono::nanoseconds(std::chrono::milliseconds(250)));
        QCOMPARE(spec->rawSamplesPath, s.rawSamples);
        QVERIFY(spec->plan.recordRawSamples);
        QCOMPARE(spec->checks.size(), size_t(2));
        QCOMPARE(spec->plan.expectations.size(), size_t(2));
        QCOMPARE(spec->plan.expectations[1].text(), QStringLiteral(R"({"result":"6"})"));
        QCOMPARE(spec->plan.expectSampling.first, 5ULL);
        QCOMPARE(spec->plan.expectSampling.every, 1ULL);

        // A file that is not PEM is named with its field.
        QFile notPem(s.caCert);
        QVERIFY(notPem.open(QIODevice::WriteOnly | QIODevice::Truncate));
        notPem.write("hello");
        notPem.close();
        QVERIFY(!prepareRun(s, &problem));
        QCOMPARE(problem.field, QStringLiteral("connection.cacert"));
        QVERIFY2(problem.message.contains(QStringLiteral("not a PEM file")), qPrintable(problem.message));

        // Plaintext by request, even to a remote address; the defaults choose threads and the interval.
        Scenario plain;
        plain.method = QStringLiteral("pkg.Service/Method");
        plain.target = QStringLiteral("bench.example.com:443");
        plain.security = QStringLiteral("plaintext");
        const std::optional<RunSpec> plainSpec = prepareRun(plain, &problem);
        QVERIFY2(plainSpec, qPrintable(problem.text()));
        QVERIFY(!plainSpec->target.tls.enabled);
        QCOMPARE(plainSpec->target.clientThreads, autoClientThreads(plain.concurrency));
        QCOMPARE(plainSpec->plan.interval, std::chrono::nanoseconds(std::chrono::seconds(1)));
        QVERIFY(plainSpec->rawSamplesPath.isEmpty() && plainSpec->checks.empty());
    }

    void abDesignRoundTripsAndIsChecked()
    {
        QString error;
        const auto s = Scenario::fromJson(
            R"({"rpcscope_scenario":1,"ab":{"restarts":3,"connection":"per-block","block":"2s","threshold":"2%"}})",
            &error);
        QVERIFY2(s, qPrintable(error));
        QCOMPARE(s->abRestarts, 3);
        QCOMPARE(s->abConnection, QStringLiteral("per-block"));
        QCOMPARE(s->abBlock, QStringLiteral("2s"));
        QCOMPARE(s->abThreshold, QStringLiteral("2%"));
        QVERIFY(Scenario::fromJson(s->toJson(), &error) == s);
        QVERIFY(!Scenario().toJson().contains("\"ab\"")); // unset, left out
        QVERIFY(!Scenario::fromJson(R"({"rpcscope_scenario":1,"ab":{"connection":"sideways"}})", &error));
        QVERIFY2(
            error.contains(QStringLiteral("ab.connection: \"sideways\" is not kept or per-block")), qPrintable(error));
        QVERIFY(!Scenario::fromJson(R"({"rpcscope_scenario":1,"ab":{"a":"./evil"}})", &error));
        QVERIFY2(
            error.contains(QStringLiteral("ab.a: unknown field")), qPrintable(error)); // targets never come from a file
    }

    void aDraftOpensWithItsProblemsAndRunsWithout()
    {
        // Saved half-done from the editor: a client certificate without its key, a check being typed. Run, it is
        // refused naming the field; opened in the editor, it opens, and preparing it names the same field.
        const QByteArray draft = R"({"rpcscope_scenario":1,"method":"a.B/C","target":"10.0.0.1:443",
            "connection":{"cert":"client.pem"},"checks":["p99<"]})";
        QString error;
        QVERIFY(!Scenario::fromJson(draft, &error));
        QVERIFY2(error.contains(QStringLiteral("connection.key: a client certificate and its key go together")),
            qPrintable(error));
        const std::optional<Scenario> opened = Scenario::fromJson(draft, &error, DocumentCheck::ShapeOnly);
        QVERIFY2(opened, qPrintable(error));
        QCOMPARE(opened->clientCert, QStringLiteral("client.pem"));
        QCOMPARE(opened->checks, QStringList { QStringLiteral("p99<") }); // kept as typed
        ScenarioProblem problem;
        QVERIFY(!prepareRun(*opened, &problem));
        QCOMPARE(problem.text(), QStringLiteral("connection.key: a client certificate and its key go together"));
        // The shape is still checked: a wrong type is no draft.
        QVERIFY(!Scenario::fromJson(
            R"({"rpcscope_scenario":1,"load":{"calls":"many"}})", &error, DocumentCheck::ShapeOnly));
    }

    void zeroCallersMeansTheSchedulesHighestPoint()
    {
        // A document may leave the callers to its concurrency schedule (0); without one, 0 callers is no run.
        QString error;
        std::optional<Scenario> s
            = Scenario::fromJson(R"({"rpcscope_scenario":1,"method":"a.B/C","load":{"concurrency":0}})", &error);
        QVERIFY2(s, qPrintable(error));
        ScenarioProblem problem;
        QVERIFY(!prepareRun(*s, &problem));
        QCOMPARE(problem.field, QStringLiteral("load.concurrency"));
        s->concurrencySchedule = ScheduleText { QStringLiteral("line"), QStringLiteral("2"), QStringLiteral("1"),
            QStringLiteral("9"), QString(), QString() };
        const std::optional<RunSpec> spec = prepareRun(*s, &problem);
        QVERIFY2(spec, qPrintable(problem.text()));
        QCOMPARE(spec->plan.concurrency, 9);
    }

    void errorsNameTheField_data()
    {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QString>("expected");
        QTest::newRow("syntax") << QByteArray("{\n  \"rpcscope_scenario\": 1,\n  \"method\": \n}")
                                << QStringLiteral("line 4, column");
        QTest::newRow("not a scenario") << QByteArray(R"({"method":"a/b"})") << QStringLiteral("rpcscope_scenario");
        QTest::newRow("newer") << QByteArray(R"({"rpcscope_scenario":7})") << QStringLiteral("newer");
        QTest::newRow("unknown field") << QByteArray(R"({"rpcscope_scenario":1,"metod":"a/b"})")
                                       << QStringLiteral("metod: unknown field");
        QTest::newRow("wrong type") << QByteArray(R"({"rpcscope_scenario":1,"load":{"concurrency":"many"}})")
                                    << QStringLiteral("load.concurrency: expected a whole number from 0 to 100000");
        QTest::newRow("bad schedule") << QByteArray(
            R"({"rpcscope_scenario":1,"load":{"rate_schedule":{"kind":"zigzag"}}})")
                                      << QStringLiteral("load.rate_schedule.kind");
        QTest::newRow("bad transport") << QByteArray(R"({"rpcscope_scenario":1,"transport":"smoke"})")
                                       << QStringLiteral("transport");
        QTest::newRow("bad proto list") << QByteArray(R"({"rpcscope_scenario":1,"schema":{"protos":[1]}})")
                                        << QStringLiteral("schema.protos[0]");
        QTest::newRow("bad metadata") << QByteArray(R"({"rpcscope_scenario":1,"metadata":[["a"]]})")
                                      << QStringLiteral("metadata[0]");
        QTest::newRow("bad check") << QByteArray(R"({"rpcscope_scenario":1,"checks":["p99<20ms","p99<soon"]})")
                                   << QStringLiteral("checks[1]: \"p99<soon\": p99 needs a duration");
        QTest::newRow("bad expectation") << QByteArray(
            R"({"rpcscope_scenario":1,"expect":{"replies":["result=6","result"]}})")
                                         << QStringLiteral("expect.replies[1]: \"result\": expected FIELD OP VALUE");
        QTest::newRow("expect unknown field") << QByteArray(R"({"rpcscope_scenario":1,"expect":{"sample":3}})")
                                              << QStringLiteral("expect.sample: unknown field");
        QTest::newRow("checks not a list") << QByteArray(R"({"rpcscope_scenario":1,"checks":"p99<20ms"})")
                                           << QStringLiteral("checks: expected a list");
    }
    void errorsNameTheField()
    {
        QFETCH(QByteArray, json);
        QFETCH(QString, expected);
        QString error;
        QVERIFY(!Scenario::fromJson(json, &error));
        QVERIFY2(error.contains(expected), qPrintable(error));
    }

    void handWrittenRequestObjectIsAccepted()
    {
        QString error;
        const auto s
            = Scenario::fromJson(R"({"rpcscope_scenario":1,"request":{"nums":[1,2]},"metadata":{"k":"v"}})", &error);
        QVERIFY2(s, qPrintable(error));
        QCOMPARE(s->request, QByteArray(R"({"nums":[1,2]})"));
        QCOMPARE(s->metadata.size(), 1);
    }

    void pathsAreRelativeToTheDocument()
    {
        QTemporaryDir dir;
        QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("protos")));
        Scenario s;
        s.protos = { dir.filePath(QStringLiteral("protos/a.proto")), QStringLiteral("/elsewhere/b.proto") };
        const QString path = dir.filePath(QStringLiteral("x.rpcscope.json"));
        QString error;
        QVERIFY2(s.save(path, &error), qPrintable(error));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray text = file.readAll();
        QVERIFY2(text.contains("\"protos/a.proto\""), text.constData()); // moves with the folder
        QVERIFY(text.contains("\"/elsewhere/b.proto\""));
        const auto back = Scenario::load(path, &error);
        QVERIFY2(back, qPrintable(error));
        QCOMPARE(back->protos, s.protos);
    }

    void tlsFilesAndRawSamplesAreRelativeToTheDocument()
    {
        QTemporaryDir dir;
        Scenario s = tlsGrpc();
        s.caCert = dir.filePath(QStringLiteral("pki/ca.crt"));
        s.clientCert = dir.filePath(QStringLiteral("pki/client.crt"));
        s.clientKey = QStringLiteral("/elsewhere/client.key");
        s.rawSamples = dir.filePath(QStringLiteral("out/raw.csv"));
        const QString path = dir.filePath(QStringLiteral("tls.rpcscope.json"));
        QString error;
        QVERIFY2(s.save(path, &error), qPrintable(error));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray text = file.readAll();
        QVERIFY2(
            text.contains("\"pki/ca.crt\"") && text.contains("\"pki/client.crt\"") && text.contains("\"out/raw.csv\""),
            text.constData());
        QVERIFY(text.contains("\"/elsewhere/client.key\""));
        const auto back = Scenario::load(path, &error);
        QVERIFY2(back, qPrintable(error));
        QVERIFY(*back == s);
        // A relative path written by hand is read against the document's folder, not the current directory.
        QFile hand(dir.filePath(QStringLiteral("hand.rpcscope.json")));
        QVERIFY(hand.open(QIODevice::WriteOnly));
        hand.write(R"({"rpcscope_scenario":1,"connection":{"cacert":"ca.pem"},"raw_samples":"samples.csv"})");
        hand.close();
        const auto handBack = Scenario::load(hand.fileName(), &error);
        QVERIFY2(handBack, qPrintable(error));
        QCOMPARE(handBack->caCert, QDir::cleanPath(dir.filePath(QStringLiteral("ca.pem"))));
        QCOMPARE(handBack->rawSamples, QDir::cleanPath(dir.filePath(QStringLiteral("samples.csv"))));
        QVERIFY(handBack->clientCert.isEmpty()); // unset stays unset, not the folder
    }

    void theWarmupMustLeaveSomeOfTheDuration()
    {
        Scenario s;
        s.method = QStringLiteral("rpcscope.bench.v1.Bench/Echo");
        s.duration = QStringLiteral("3s");
        s.warmup = QStringLiteral("10m");
        ScenarioProblem problem;
        QVERIFY(!prepareRun(s, &problem));
        QCOMPARE(problem.field, QStringLiteral("load.warmup"));
        QVERIFY2(problem.message.contains(QStringLiteral("includes the warm-up")), qPrintable(problem.message));
        s.warmup = QStringLiteral("1s");
        QVERIFY2(prepareRun(s, &problem), qPrintable(problem.text()));
    }

    void aSharedDocumentKeepsToItsFolder()
    {
        QTemporaryDir root;
        const QString folder = root.filePath(QStringLiteral("shared"));
        QVERIFY(QDir().mkpath(folder + QStringLiteral("/protos")));
        QFile existing(folder + QStringLiteral("/notes.txt"));
        QVERIFY(existing.open(QIODevice::WriteOnly));
        existing.close();
        // A link inside the folder that points out of it is outside.
        QVERIFY(QFile::link(root.filePath(QStringLiteral("secret.key")), folder + QStringLiteral("/link.key")));
        auto problems = [&](const QByteArray &fields) {
            QFile doc(folder + QStringLiteral("/x.rpcscope.json"));
            if (!doc.open(QIODevice::WriteOnly))
                qFatal("cannot write the document");
            doc.write("{\"rpcscope_scenario\":1," + fields + "}");
            doc.close();
            QString error;
            const auto s = Scenario::load(doc.fileName(), &error, DocumentCheck::ShapeOnly);
            if (!s)
                qFatal("%s", qPrintable(error));
            QStringList texts;
            for (const ScenarioProblem &p : confinementProblems(*s, doc.fileName()))
                texts << p.text();
            return texts;
        };
        // Inside the folder, new outputs: nothing to ask.
        QCOMPARE(problems(R"("schema":{"protos":["protos/a.proto"],"import_paths":["protos","."]},
            "raw_samples":"out/new.csv","output":{"exports":[{"format":"csv","file":"-"},
            {"format":"json","file":"run.json"}]},"history":{"db":"runs.sqlite"},"request_file":"protos/req.json")"),
            QStringList());
        // The issue's case: a path out of the folder, absolute or climbing.
        const QStringList outside = problems(R"("raw_samples":"/root/.bashrc","schema":{"protos":["../../etc/a.proto"]},
            "connection":{"key":"link.key"},"request_binary_file":"/etc/passwd","history":{"db":"../runs.sqlite"},
            "output":{"exports":[{"format":"html","file":"../report.html"}]})");
        QCOMPARE(outside.size(), 6);
        for (const QString &field : { QStringLiteral("schema.protos[0]: "), QStringLiteral("connection.key: "),
                 QStringLiteral("request_binary_file: /etc/passwd is outside"), QStringLiteral("raw_samples: "),
                 QStringLiteral("output.exports[0].file: "), QStringLiteral("history.db: ") }) {
            QVERIFY2(std::any_of(outside.begin(), outside.end(),
                         [&](const QString &p) { return p.startsWith(field) && p.contains(u"is outside"); }),
                qPrintable(field + QStringLiteral(" in ") + outside.join(u'|')));
        }
        QVERIFY2(
            outside.join(u'|').contains(root.filePath(QStringLiteral("secret.key"))), qPrintable(outside.join(u'|')));
        // An output it names may not overwrite a file, even inside; an input may be read.
        QCOMPARE(problems(R"("raw_samples":"notes.txt","request_file":"notes.txt")"),
            QStringList { QStringLiteral("raw_samples: %1/notes.txt exists, and a document only writes new files")
                              .arg(QFileInfo(folder).canonicalFilePath()) });
    }

    void unwritableAndUnreadablePathsAreClearErrors()
    {
        QString error;
        QVERIFY(!Scenario().save(QStringLiteral("/no/such/dir/x.rpcscope.json"), &error));
        QVERIFY2(error.startsWith(QStringLiteral("/no/such/dir/x.rpcscope.json: ")), qPrintable(error));
        QVERIFY(!Scenario::load(QStringLiteral("/no/such.rpcscope.json"), &error));
        QVERIFY2(error.startsWith(QStringLiteral("/no/such.rpcscope.json: ")), qPrintable(error));
        // A failed save leaves the previous document untouched (written to a temporary file, then renamed).
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("keep.rpcscope.json"));
        Scenario first;
        first.method = QStringLiteral("a/b");
        QVERIFY(first.save(path, &error));
        QFile::setPermissions(dir.path(), QFileDevice::ReadOwner | QFileDevice::ExeOwner);
        Scenario second;
        second.method = QStringLiteral("c/d");
        const bool saved = second.save(path, &error);
        QFile::setPermissions(dir.path(), QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
        const auto back = Scenario::load(path, &error);
        QVERIFY(back);
        QCOMPARE(back->method, saved ? QStringLiteral("c/d") : QStringLiteral("a/b")); // root may write anyway
    }
};

QTEST_GUILESS_MAIN(TestScenario)
#include "tst_scenario.moc"
