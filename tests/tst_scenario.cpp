// Scenario documents: the format the GUI saves and `rpcscope-cli run --scenario` reads.
#include "scenario/scenario.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace rpcscope;

class TestScenario : public QObject
{
    Q_OBJECT

    static Scenario full()
    {
        Scenario s;
        s.protos = {QStringLiteral("/abs/a.proto")};
        s.importPaths = {QStringLiteral("/abs/include")};
        s.method = QStringLiteral("pkg.Service/Method");
        s.transport = QStringLiteral("msgpack");
        s.codec = QStringLiteral("msgpack");
        s.rpcMethod = QStringLiteral("sum_nums");
        s.msgpackParamsMap = true;
        s.target = QStringLiteral("127.0.0.1:18800");
        // Text, never re-serialized: a 64-bit id beyond double precision and a template survive.
        s.request = R"({"id": 9007199254740993, "name": "{{.RequestNumber}}"})";
        s.fills = {QStringLiteral("payload=1KiB"), QStringLiteral("nums=1000")};
        s.metadata = {{QStringLiteral("authorization"), QStringLiteral("Bearer x")}, {QStringLiteral("x-a"), QStringLiteral("1")}};
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
        s.rateSchedule = ScheduleText{QStringLiteral("line"), QStringLiteral("100"), QStringLiteral("10"), QStringLiteral("1000"),
                                      QStringLiteral("1s"), QStringLiteral("60s")};
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

    void errorsNameTheField_data()
    {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QString>("expected");
        QTest::newRow("syntax") << QByteArray("{\n  \"rpcscope_scenario\": 1,\n  \"method\": \n}") << QStringLiteral("line 4, column");
        QTest::newRow("not a scenario") << QByteArray(R"({"method":"a/b"})") << QStringLiteral("rpcscope_scenario");
        QTest::newRow("newer") << QByteArray(R"({"rpcscope_scenario":7})") << QStringLiteral("newer");
        QTest::newRow("unknown field") << QByteArray(R"({"rpcscope_scenario":1,"metod":"a/b"})") << QStringLiteral("metod: unknown field");
        QTest::newRow("wrong type") << QByteArray(R"({"rpcscope_scenario":1,"load":{"concurrency":"many"}})")
                                    << QStringLiteral("load.concurrency: expected a whole number from 1 to 100000");
        QTest::newRow("zero callers") << QByteArray(R"({"rpcscope_scenario":1,"load":{"concurrency":0}})") << QStringLiteral("load.concurrency");
        QTest::newRow("bad schedule") << QByteArray(R"({"rpcscope_scenario":1,"load":{"rate_schedule":{"kind":"zigzag"}}})")
                                      << QStringLiteral("load.rate_schedule.kind");
        QTest::newRow("bad transport") << QByteArray(R"({"rpcscope_scenario":1,"transport":"smoke"})") << QStringLiteral("transport");
        QTest::newRow("bad proto list") << QByteArray(R"({"rpcscope_scenario":1,"schema":{"protos":[1]}})") << QStringLiteral("schema.protos[0]");
        QTest::newRow("bad metadata") << QByteArray(R"({"rpcscope_scenario":1,"metadata":[["a"]]})") << QStringLiteral("metadata[0]");
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
        const auto s = Scenario::fromJson(R"({"rpcscope_scenario":1,"request":{"nums":[1,2]},"metadata":{"k":"v"}})", &error);
        QVERIFY2(s, qPrintable(error));
        QCOMPARE(s->request, QByteArray(R"({"nums":[1,2]})"));
        QCOMPARE(s->metadata.size(), 1);
    }

    void pathsAreRelativeToTheDocument()
    {
        QTemporaryDir dir;
        QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("protos")));
        Scenario s;
        s.protos = {dir.filePath(QStringLiteral("protos/a.proto")), QStringLiteral("/elsewhere/b.proto")};
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
