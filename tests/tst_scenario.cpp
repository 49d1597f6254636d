// Scenario documents: the format the GUI saves and `rpcscope-cli run --scenario` reads.
#include "scenario/scenario.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

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
        return s;
    }

private Q_SLOTS:
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
        const QStringList args = s.toRunArguments(false);
        for (const auto &[flag, value] : { std::pair("--stream-call-count", "100"),
                 std::pair("--stream-interval", "10ms"), std::pair("--stream-call-duration", "5s") })
            QCOMPARE(args.value(args.indexOf(QLatin1String(flag)) + 1), QLatin1String(value));
        QVERIFY(args.contains(QStringLiteral("--stream-ping-pong")));
        // Unset, they are left out of the document and the flags (older readers open it).
        QVERIFY(!Scenario().toJson().contains("stream_"));
        QVERIFY(!Scenario().toRunArguments(false).join(QLatin1Char(' ')).contains(QStringLiteral("--stream")));
        const auto wrong = Scenario::fromJson(R"({"rpcscope_scenario":1,"load":{"stream_interval":10}})", &error);
        QVERIFY(!wrong);
        QVERIFY2(error.contains(QStringLiteral("load.stream_interval")), qPrintable(error));
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
        const QStringList args = s.toRunArguments(false);
        QCOMPARE(args.value(args.indexOf(QStringLiteral("-b")) + 1), QStringLiteral("/abs/request.bin"));
        QVERIFY(!args.contains(QStringLiteral("-d"))); // the CLI takes one of -d, -D, -b
        // Relative to the document, like the other files.
        QTemporaryDir dir;
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
        QTest::newRow("tls over http") << QByteArray(
            R"({"rpcscope_scenario":1,"transport":"http","connection":{"skip_verify":true}})")
                                       << QStringLiteral("connection: the TLS settings are for the grpc transport");
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

    void connectionAndAdvancedFieldsBecomeRunFlags()
    {
        const QStringList args = tlsGrpc().toRunArguments(true);
        auto valueOf = [&args](const QString &flag) {
            const qsizetype i = args.indexOf(flag);
            return i >= 0 ? args.value(i + 1) : QStringLiteral("<missing>");
        };
        QCOMPARE(valueOf(QStringLiteral("--cacert")), QStringLiteral("/abs/ca.crt"));
        QCOMPARE(valueOf(QStringLiteral("--cert")), QStringLiteral("/abs/client.crt"));
        QCOMPARE(valueOf(QStringLiteral("--key")), QStringLiteral("/abs/client.key"));
        QCOMPARE(valueOf(QStringLiteral("--cname")), QStringLiteral("rpcscope.test"));
        QCOMPARE(valueOf(QStringLiteral("--authority")), QStringLiteral("bench.internal"));
        QCOMPARE(valueOf(QStringLiteral("--cpus")), QStringLiteral("3"));
        QCOMPARE(valueOf(QStringLiteral("--interval")), QStringLiteral("250ms"));
        QCOMPARE(valueOf(QStringLiteral("--raw-samples")), QStringLiteral("/abs/raw.csv"));
        QCOMPARE(valueOf(QStringLiteral("--check")), QStringLiteral("p99<20ms"));
        QCOMPARE(args.count(QStringLiteral("--check")), 2);
        QVERIFY(args.contains(QStringLiteral("--skipTLS")));
        QVERIFY(!args.contains(QStringLiteral("--insecure")));
        QCOMPARE(args.last(), QStringLiteral("bench.example.com:443"));

        Scenario plain;
        plain.security = QStringLiteral("plaintext");
        const QStringList plainArgs = plain.toRunArguments(false);
        QVERIFY(plainArgs.contains(QStringLiteral("--insecure")));
        // Defaults add no flag: the CLI's own defaults (automatic threads, 1 s, no samples) apply.
        const QStringList defaults = Scenario().toRunArguments(false);
        for (const char *flag : { "--insecure", "--cacert", "--cert", "--key", "--cname", "--skipTLS", "--authority",
                 "--cpus", "--interval", "--raw-samples", "--check" })
            QVERIFY2(!defaults.contains(QLatin1String(flag)), flag);
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
                                    << QStringLiteral("load.concurrency: expected a whole number from 1 to 100000");
        QTest::newRow("zero callers") << QByteArray(R"({"rpcscope_scenario":1,"load":{"concurrency":0}})")
                                      << QStringLiteral("load.concurrency");
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
