#include "scenario/scenario.h"
#include "store/environment.h"
#include "store/runjson.h"
#include "store/runstore.h"
#include "store/runwriter.h"
#include "store/secrets.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QtTest>

#include <csignal>
#include <random>

using namespace rpcscope;

namespace {

RunSnapshot richSnapshot(int seed)
{
    std::mt19937_64 rng(seed);
    std::lognormal_distribution<double> latency(13.5, 0.6);
    RunSnapshot s;
    s.state = RunState::Stopped;
    for (int i = 0; i < 5000; ++i)
        s.latency.record(static_cast<uint64_t>(latency(rng)));
    s.latency.record(3); // an exact small bucket
    s.latency.record(uint64_t(1) << 50); // the last bucket
    for (int i = 0; i < 20; ++i) // 12 UNAVAILABLE, 5 DECODE_ERROR, 3 UNEXPECTED_REPLY
        s.errorLatency.record(static_cast<uint64_t>(latency(rng)) * 3);
    s.openLoop = true;
    for (int i = 0; i < 100; ++i) {
        s.serviceLatency.record(1000 + i);
        s.sendLag.record(10 * i);
    }
    s.callsSent = 5019;
    s.lateSends = 4;
    s.intendedRate = 1234.5;
    s.intendedCalls = 5020.25;
    for (int i = 0; i < 3; ++i)
        s.timeline.append({ 1.0 + i, 1.0, uint64_t(1600 + i), uint64_t(i), uint64_t(700000 + i), uint64_t(900000),
            uint64_t(1500000), 50 + i });
    // A streaming run's messages: totals, their latencies, and per interval.
    s.messagesSent = 5019;
    s.messagesReceived = 250950;
    for (int i = 0; i < 300; ++i)
        s.messageLatency.record(20000 + 37 * static_cast<uint64_t>(i));
    for (int i = 0; i < 10; ++i)
        s.firstMessageLatency.record(400'000 + 1000 * static_cast<uint64_t>(i));
    s.timeline[1].messages = 83650;
    s.timeline[1].messageP50 = 21000;
    s.timeline[1].messageP90 = 29000;
    s.timeline[1].messageP99 = 30500;
    s.clientCpuSeconds = 1.75;
    s.clientPeakRssBytes = 123456789;
    s.hasServerStats = true;
    s.serverCpuSeconds = 2.5;
    s.serverPeakRssBytes = 98765432;
    s.statusCounts[CallStatus::Ok] = 5002;
    QString statusError; // --expect-status OK,NOT_FOUND: kept with the run
    s.expectedStatuses
        = ExpectedStatuses::parse({ QStringLiteral("OK"), QStringLiteral("NOT_FOUND") }, &statusError).value();
    s.statusCounts[CallStatus::Unavailable] = 12;
    s.statusCounts[CallStatus::DecodeError] = 5;
    s.errors.append({ CallStatus::Unavailable, QStringLiteral("connection refused \"quoted\" ü"), 12 });
    s.errors.append({ CallStatus::DecodeError, QStringLiteral("bad reply"), 5 });
    // --expect: replies checked, and the first that failed kept.
    s.statusCounts[CallStatus::UnexpectedReply] = 3;
    s.errors.append({ CallStatus::UnexpectedReply, QStringLiteral("reply failed --expect result=7"), 3 });
    s.repliesChecked = 40;
    s.unexpectedReplies = { { QStringLiteral("result=7"), QStringLiteral("6"), "{\n \"result\": \"6\"\n}" },
        { QStringLiteral(R"({"name":"ü"})"), QStringLiteral(R"(name is "x\u001b")"),
            "{\n \"name\": \"x\\u001b\"\n}" } };
    s.warmupCalls = 100;
    s.bytesSent = 1ull << 40;
    s.bytesReceived = 77;
    s.elapsed = std::chrono::nanoseconds(3'000'000'123);
    s.plannedCalls = 10000;
    s.plannedDuration = std::chrono::seconds(30);
    return s;
}

RunRecord richRecord(int seed)
{
    RunRecord r;
    r.name = QStringLiteral("before upgrade");
    r.labels = { QStringLiteral("baseline"), QStringLiteral("protobuf 3.21") }; // a set: the store returns it sorted
    r.status = QStringLiteral("stopped");
    r.startedAt = QDateTime(QDate(2026, 12, 1), QTime(10, 0, 0, 250), Qt::UTC);
    r.endedAt = r.startedAt.addSecs(3);
    r.method = QStringLiteral("rpcscope.bench.v1.Bench/Echo");
    r.transport = QStringLiteral("grpc");
    r.codec = QStringLiteral("protobuf");
    r.target = QStringLiteral("127.0.0.1:50051");
    r.origin = QStringLiteral("rpcscope");
    // A merge of a split run: the plan, the start time, and each worker (one partial, its clock unknown).
    r.split.count = 3;
    r.split.planId = QStringLiteral("eafca7551bf07c1d");
    r.split.startAt = QStringLiteral("2026-12-01T10:00:00.000Z");
    r.split.partial = true;
    r.split.missing = { 1 };
    for (int i : { 0, 2 }) {
        WorkerRecord w;
        w.index = i;
        w.host = QStringLiteral("node-%1").arg(i);
        w.timedStartUnixUs = 1796119200000000 + i * 1500;
        w.clock = i == 0 ? WorkerRecord::Clock::Synchronized : WorkerRecord::Clock::Unknown;
        w.clockErrorUs = i == 0 ? 250.0 : -1.0;
        w.calls = 1000 + static_cast<uint64_t>(i);
        w.failed = 3;
        w.seconds = 2.5;
        w.p50Ns = 120000;
        w.p99Ns = 900000 + static_cast<uint64_t>(i);
        w.clientCpuSeconds = 0.75;
        w.clientPeakRssBytes = 50000000;
        w.environment = QJsonObject { { QStringLiteral("hostname"), w.host } };
        r.split.workers << w;
    }
    r.scenario = QJsonObject { { QStringLiteral("method"), r.method }, { QStringLiteral("calls"), 200 } };
    r.environment = environmentFingerprint();
    r.server = QJsonObject { { QStringLiteral("command"), QStringLiteral("server --port {port}") } };
    r.snapshot = richSnapshot(seed);
    for (uint32_t i = 0; i < 1000; ++i)
        r.rawSamples.push_back({ uint64_t(i) * 1000003, i * 7, i % 97 == 0 ? uint32_t(CallStatus::Unavailable) : 0u });
    // --profile: the server's two processes, and the client (its profiler's CPU not measured: unknown, not 0)
    Profile server;
    server.scope = QStringLiteral("server");
    server.profiler = QStringLiteral("perf");
    server.how = QStringLiteral("perf record -e cpu-clock -c 1000000 -g -p");
    server.profilerCpuSeconds = 0.25;
    server.notes = { QStringLiteral("a note") };
    for (int p = 0; p < 2; ++p) {
        ProcessProfile process;
        process.pid = 100 + p;
        process.command = QStringLiteral("server --port 1");
        process.calls = 1000 + p;
        process.cpuNsPerUnit = 1e6;
        process.measuredCpuNs = 2.5e8;
        process.stacks = { { QStringLiteral("main;serve;handle"), 120.0 + seed }, { QStringLiteral("main;poll"), 7 } };
        server.processes.push_back(process);
    }
    r.serverProfile = server;
    Profile client = server;
    client.scope = QStringLiteral("client");
    client.profilerCpuSeconds = -1;
    client.processes.resize(1);
    r.clientProfile = client;
    return r;
}

/// Everything but the id, as the JSON report (which is lossless: see runjson.h).
QByteArray comparable(RunRecord r)
{
    r.id = 0;
    return QJsonDocument(runToJson(r)).toJson(QJsonDocument::Compact);
}

QString cli()
{
    return QStringLiteral(RPCSCOPE_CLI);
}

/// One side of an A/B run as abSideNames() takes it.
AbSideIdentity side(const QString &target, const QList<QPair<QString, QString>> &environment = {},
    const QString &client = {}, const QList<QPair<QString, QString>> &clientEnvironment = {})
{
    return { target, environment, client, clientEnvironment };
}

} // namespace

class StoreTest : public QObject {
    Q_OBJECT

private slots:
    void histogramJsonIsLossless()
    {
        const RunSnapshot s = richSnapshot(1);
        QString error;
        const auto back = histogramFromJson(histogramToJson(s.latency), QStringLiteral("h"), &error);
        QVERIFY2(back, qPrintable(error));
        QVERIFY(*back == s.latency);
        QCOMPARE(back->percentile(99.9), s.latency.percentile(99.9));
        QCOMPARE(back->stddev(), s.latency.stddev());
        const auto empty = histogramFromJson(histogramToJson(LatencyHistogram()), QStringLiteral("h"), &error);
        QVERIFY(empty && empty->isEmpty());
    }

    void histogramJsonErrorsNameTheField()
    {
        QJsonObject h = histogramToJson(richSnapshot(1).latency);
        QJsonArray buckets = h.value(QStringLiteral("buckets")).toArray();
        buckets[2] = QJsonArray { 1001, 5 };
        h.insert(QStringLiteral("buckets"), buckets);
        QString error;
        QVERIFY(!histogramFromJson(h, QStringLiteral("snapshot.latency"), &error));
        QVERIFY2(error.startsWith(QStringLiteral("snapshot.latency.buckets[2]: ")), qPrintable(error));

        h = histogramToJson(richSnapshot(1).latency);
        h.insert(QStringLiteral("count"), 3);
        QVERIFY(!histogramFromJson(h, QStringLiteral("x"), &error));
        QVERIFY2(error.startsWith(QStringLiteral("x.count: 3, but the buckets hold")), qPrintable(error));

        h = histogramToJson(richSnapshot(1).latency);
        h.insert(QStringLiteral("sum_ns"), QStringLiteral("12a"));
        QVERIFY(!histogramFromJson(h, QStringLiteral("x"), &error));
        QCOMPARE(error, QStringLiteral("x.sum_ns: expected a decimal string"));
    }

    void runJsonRoundTrip()
    {
        const RunRecord r = richRecord(2);
        QString error;
        const QByteArray text = QJsonDocument(runToJson(r)).toJson();
        const auto back = runFromJson(QJsonDocument::fromJson(text).object(), &error);
        QVERIFY2(back, qPrintable(error));
        QCOMPARE(comparable(*back), comparable(r));
        QCOMPARE(back->snapshot.latency.percentile(50), r.snapshot.latency.percentile(50));
        QCOMPARE(back->rawSamples.size(), r.rawSamples.size());
        QCOMPARE(back->rawSamples.back().latencyUs, r.rawSamples.back().latencyUs);

        QJsonObject bad = runToJson(r);
        bad.insert(QStringLiteral("schema_version"), 99);
        QVERIFY(!runFromJson(bad, &error));
        QVERIFY2(error.startsWith(QStringLiteral("schema_version: 99 is not supported")), qPrintable(error));
        bad = runToJson(r);
        QJsonObject snapshot = bad.value(QStringLiteral("snapshot")).toObject();
        QJsonArray timeline = snapshot.value(QStringLiteral("timeline")).toArray();
        QJsonObject point = timeline.at(1).toObject();
        point.insert(QStringLiteral("calls"), -4);
        timeline[1] = point;
        snapshot.insert(QStringLiteral("timeline"), timeline);
        bad.insert(QStringLiteral("snapshot"), snapshot);
        QVERIFY(!runFromJson(bad, &error));
        QCOMPARE(error, QStringLiteral("snapshot.timeline[1].calls: expected a whole number >= 0"));
        // Kept unexpected replies: no more than a run keeps, no more than were counted.
        for (const int keep : { 6, 4 }) {
            bad = runToJson(r);
            snapshot = bad.value(QStringLiteral("snapshot")).toObject();
            QJsonArray kept = snapshot.value(QStringLiteral("unexpected_replies")).toArray();
            while (kept.size() < keep)
                kept.append(kept.at(0));
            snapshot.insert(QStringLiteral("unexpected_replies"), kept);
            bad.insert(QStringLiteral("snapshot"), snapshot);
            const auto read = runFromJson(bad, &error);
            if (keep == 6) {
                QVERIFY(!read);
                QCOMPARE(error, QStringLiteral("snapshot.unexpected_replies: 6 entries; a run keeps at most 5"));
            } else { // well formed, but not a run we could have measured: an import refuses it
                QVERIFY2(read, qPrintable(error));
                QCOMPARE(snapshotInconsistency(read->snapshot),
                    QStringLiteral("snapshot.unexpected_replies: 4 kept and 3 counted, of 40 replies checked"));
            }
        }
        QCOMPARE(snapshotInconsistency(r.snapshot), QString());
        // A time that nanoseconds since 1970 cannot hold in 64 bits (exports count in them) is refused by name.
        bad = runToJson(r);
        bad.insert(QStringLiteral("started_at"), QStringLiteral("4813-01-02T03:04:05.000Z"));
        QVERIFY(!runFromJson(bad, &error));
        QCOMPARE(error, QStringLiteral("started_at: 4813-01-02T03:04:05.000Z is out of range (years 1678 to 2261)"));
        QVERIFY(!runFromJson(QJsonObject { { QStringLiteral("format"), QStringLiteral("ghz") } }, &error));
        QCOMPARE(error, QStringLiteral("format: expected \"rpcscope-run\""));
    }

    void storeRoundTripsEveryField()
    {
        QTemporaryDir dir;
        RunStore store;
        QString error;
        // A folder that does not exist is not made (only the default location's are): a typo creates nothing.
        QVERIFY(!store.open(dir.filePath(QStringLiteral("sub/runs.sqlite")), &error));
        QVERIFY2(
            error.contains(QStringLiteral("the folder %1 does not exist").arg(dir.filePath(QStringLiteral("sub")))),
            qPrintable(error));
        QVERIFY(!QFileInfo::exists(dir.filePath(QStringLiteral("sub"))));
        QVERIFY(QDir(dir.path()).mkdir(QStringLiteral("sub")));
        QVERIFY2(store.open(dir.filePath(QStringLiteral("sub/runs.sqlite")), &error), qPrintable(error));
        QCOMPARE(store.schemaVersion(), RunStore::kSchemaVersion);
        const RunRecord r = richRecord(3);
        const qint64 id = store.addRun(r, &error);
        QVERIFY2(id > 0, qPrintable(error));
        const auto back = store.load(id, &error);
        QVERIFY2(back, qPrintable(error));
        QCOMPARE(back->id, id);
        const QJsonObject got = runToJson(*back);
        const QJsonObject want = runToJson(r);
        for (const QString &key : want.keys())
            QVERIFY2(got.value(key) == want.value(key), qPrintable(key));
        QCOMPARE(comparable(*back), comparable(r));
        QVERIFY(back->snapshot.latency == r.snapshot.latency);
        QVERIFY(back->snapshot.sendLag == r.snapshot.sendLag);
        QCOMPARE(back->snapshot.timeline.size(), 3);
        QCOMPARE(back->snapshot.timeline.at(2).concurrency, 52);
        QVERIFY(back->snapshot.messageLatency == r.snapshot.messageLatency);
        QVERIFY(back->snapshot.firstMessageLatency == r.snapshot.firstMessageLatency);
        QVERIFY(back->snapshot.expectedStatuses == r.snapshot.expectedStatuses);
        QCOMPARE(back->snapshot.firstMessageLatency.count(), 10ULL);
        QCOMPARE(back->snapshot.messagesSent, 5019ULL);
        QCOMPARE(back->snapshot.messagesReceived, 250950ULL);
        QCOMPARE(back->snapshot.timeline.at(1).messages, 83650ULL);
        QCOMPARE(back->snapshot.timeline.at(1).messageP99, 30500ULL);
        QCOMPARE(back->snapshot.timeline.at(0).messages, 0ULL);
        QCOMPARE(back->environment.value(QStringLiteral("hostname")).toString(), QSysInfo::machineHostName());
        QCOMPARE(back->split.missing, QList<int> { 1 });
        QCOMPARE(back->split.workers.size(), 2);
        QCOMPARE(back->split.workers[1].clockErrorUs, -1.0); // unknown stays unknown, not 0
        QCOMPARE(back->split.workers[0].clockErrorUs, 250.0);
        QCOMPARE(back->split.workers[1].p99Ns, 900002ULL);
        QVERIFY(back->serverProfile && back->clientProfile);
        QCOMPARE(back->serverProfile->processes.size(), size_t(2));
        QCOMPARE(back->serverProfile->processes[1].stacks, r.serverProfile->processes[1].stacks);
        QCOMPARE(back->serverProfile->totalUsPerCall(), r.serverProfile->totalUsPerCall());
        QCOMPARE(back->clientProfile->profilerCpuSeconds, -1.0);

        // What the History's details panel reads on every selection: the metadata, none of the measurements.
        const auto light = store.load(id, &error, RunStore::Parts::Metadata);
        QVERIFY2(light, qPrintable(error));
        QCOMPARE(light->name, r.name);
        QCOMPARE(light->labels, QStringList({ QStringLiteral("baseline"), QStringLiteral("protobuf 3.21") }));
        QCOMPARE(light->status, r.status);
        QCOMPARE(light->startedAt, r.startedAt);
        QCOMPARE(light->scenario, r.scenario);
        QCOMPARE(light->environment, r.environment);
        QCOMPARE(light->server, r.server);
        QCOMPARE(light->snapshot.callsCompleted(), 0ULL);
        QVERIFY(light->snapshot.latency.isEmpty() && light->snapshot.timeline.isEmpty() && light->rawSamples.empty());

        const auto rows = store.list({}, &error);
        QCOMPARE(rows.size(), size_t(1));
        QCOMPARE(rows.front().labels, QStringList({ QStringLiteral("baseline"), QStringLiteral("protobuf 3.21") }));
        QCOMPARE(rows.front().p99Ns, r.snapshot.latency.percentile(99));
        QCOMPARE(rows.front().calls, r.snapshot.callsCompleted());
        QVERIFY(!store.load(id + 100, &error));
        QVERIFY2(error.contains(QStringLiteral("no run #%1").arg(id + 100)), qPrintable(error));
        // a profile saved after the run ended (the CLI's order: the figures, then what the profilers read)
        RunRecord later = richRecord(4);
        const Profile profile = *later.serverProfile;
        later.serverProfile.reset();
        later.clientProfile.reset();
        QVERIFY2(store.beginRun(&later, &error), qPrintable(error));
        QVERIFY2(store.finishRun(later.id, later.snapshot, {}, later.status, &error), qPrintable(error));
        QVERIFY(!store.load(later.id, &error)->serverProfile);
        later.serverProfile = profile;
        QVERIFY2(store.saveProfiles(later, &error), qPrintable(error));
        const auto saved = store.load(later.id, &error);
        QVERIFY2(saved && saved->serverProfile, qPrintable(error));
        QCOMPARE(saved->serverProfile->processes[0].stacks.value(QStringLiteral("main;serve;handle")), 124.0);
    }

    void secretsNeverLeaveInClear()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("runs.sqlite"));
        auto store = std::make_unique<RunStore>();
        QString error;
        QVERIFY2(store->open(path, &error), qPrintable(error));
        RunRecord r = richRecord(5);
        r.scenario = QJsonObject {
            { QStringLiteral("metadata"),
                QJsonArray { QJsonArray { QStringLiteral("Authorization"), QStringLiteral("Bearer SECRET-1") },
                    QJsonArray { QStringLiteral("x-session-token"), QStringLiteral("SECRET-2") },
                    QJsonArray { QStringLiteral("x-tenant"), QStringLiteral("SECRET-3") },
                    QJsonArray { QStringLiteral("x-run"), QStringLiteral("visible-1") } } },
            { QStringLiteral("secrets"),
                QJsonObject { { QStringLiteral("redact"), QJsonArray { QStringLiteral("X-Tenant") } } } },
        };
        r.server = QJsonObject { { QStringLiteral("command"), QStringLiteral("server --port {port}") },
            { QStringLiteral("env"),
                QJsonArray { QStringLiteral("DB_PASSWORD=SECRET-4"), QStringLiteral("MODE=a=b"),
                    QStringLiteral("DATABASE_URL=postgres://app:SECRET-5@db:5432/x"),
                    QStringLiteral("SESSION_ID=SECRET-6"), QStringLiteral("UPSTREAM=Bearer SECRET-7"),
                    QStringLiteral("RPCSCOPE_SERVE_DELAY=1ms") } } };
        const QString expected = redactedValue(QStringLiteral("Bearer SECRET-1"));
        QCOMPARE(expected,
            QStringLiteral("<redacted sha256:%1>")
                .arg(QString::fromLatin1(
                    QCryptographicHash::hash("Bearer SECRET-1", QCryptographicHash::Sha256).toHex().left(8))));
        QVERIFY(redactedValue(QStringLiteral("Bearer SECRET-9")) != expected); // two runs can be told apart
        QVERIFY(isRedactedValue(expected) && !isRedactedValue(QStringLiteral("Bearer SECRET-1")));

        QVERIFY2(store->beginRun(&r, &error), qPrintable(error));
        // The caller's record, the database's bytes, a reread run and every export: no secret in clear.
        auto clean = [](const QByteArray &text, const char *where) {
            for (const char *secret :
                { "SECRET-1", "SECRET-2", "SECRET-3", "SECRET-4", "SECRET-5", "SECRET-6", "SECRET-7" })
                QVERIFY2(!text.contains(secret),
                    qPrintable(QStringLiteral("%1 holds %2").arg(QLatin1String(where), QLatin1String(secret))));
            QVERIFY2(text.contains("visible-1"), where); // only the secrets go
        };
        clean(QJsonDocument(r.scenario).toJson() + QJsonDocument(r.server).toJson(), "the caller's record");
        // What does not look like a credential stays in clear, so that "what differs" can show it.
        for (const char *visible : { "MODE=a=b", "RPCSCOPE_SERVE_DELAY=1ms" })
            QVERIFY2(QJsonDocument(r.server).toJson().contains(visible), visible);
        QVERIFY(QJsonDocument(r.scenario).toJson().contains(expected.toUtf8()));
        QCOMPARE(redactedFields(r),
            QStringList({ QStringLiteral("metadata Authorization"), QStringLiteral("metadata x-session-token"),
                QStringLiteral("metadata x-tenant"), QStringLiteral("server env DB_PASSWORD"),
                QStringLiteral("server env DATABASE_URL"), QStringLiteral("server env SESSION_ID"),
                QStringLiteral("server env UPSTREAM") }));
        const auto back = store->load(r.id, &error);
        QVERIFY2(back, qPrintable(error));
        clean(QJsonDocument(runToJson(*back)).toJson(), "the JSON report");
        QCOMPARE(back->scenario, r.scenario); // stable: redacting twice changes nothing
        store.reset();
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QVERIFY(!file.readAll().contains("SECRET")); // nor anywhere in the database file (or its WAL)
        QFile wal(path + QStringLiteral("-wal"));
        if (wal.open(QIODevice::ReadOnly))
            QVERIFY(!wal.readAll().contains("SECRET"));

        // A report from elsewhere (or an older rpcscope) with secrets in clear is redacted when it is written out,
        // CLI flags of runs saved before documents included.
        RunRecord old = richRecord(6);
        old.scenario = QJsonObject { { QStringLiteral("arguments"),
            QJsonArray { QStringLiteral("run"), QStringLiteral("-m"),
                QStringLiteral("{\"authorization\":\"Bearer SECRET-1\",\"x-run\":\"visible-1\"}"),
                QStringLiteral("--metadata={\"cookie\":\"SECRET-2\"}") } } };
        clean(QJsonDocument(runToJson(old)).toJson(), "an old run's report");
        QCOMPARE(redactedFields([&] {
            RunRecord copy = old;
            redactSecrets(&copy);
            return copy;
        }()),
            QStringList({ QStringLiteral("metadata authorization"), QStringLiteral("metadata cookie") }));

        // Opting out is recorded with the run, which then keeps them.
        RunRecord kept = richRecord(7);
        kept.scenario = QJsonObject {
            { QStringLiteral("metadata"),
                QJsonArray { QJsonArray { QStringLiteral("authorization"), QStringLiteral("SECRET-1") } } },
            { QStringLiteral("secrets"), QJsonObject { { QStringLiteral("keep"), true } } }
        };
        QVERIFY(redactSecrets(&kept).isEmpty());
        QVERIFY(keepsSecrets(kept));
        QVERIFY(QJsonDocument(runToJson(kept)).toJson().contains("SECRET-1"));
    }

    void writtenWhileRunning()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("runs.sqlite"));
        RunStore store;
        QString error;
        QVERIFY(store.open(path, &error));
        RunRecord r;
        r.method = QStringLiteral("x.Y/Z");
        QVERIFY2(store.beginRun(&r, &error), qPrintable(error));
        QVERIFY(r.id > 0);
        RunSnapshot s = richSnapshot(4);
        s.timeline.resize(1);
        QVERIFY2(store.updateRun(r.id, s, &error), qPrintable(error));
        {
            // A second reader (another process would do the same) sees the run as running, with its first interval.
            RunStore reader;
            QVERIFY(reader.open(path, &error));
            const auto seen = reader.load(r.id, &error);
            QVERIFY2(seen, qPrintable(error));
            QCOMPARE(seen->status, QStringLiteral("running"));
            QCOMPARE(seen->snapshot.timeline.size(), 1);
        }
        s = richSnapshot(4);
        QVERIFY(store.updateRun(r.id, s, &error));
        std::vector<RawSample> raw { { 1, 2, 0 }, { 3, 4, 14 } };
        QVERIFY(store.finishRun(r.id, s, raw, QStringLiteral("finished"), &error));
        const auto done = store.load(r.id, &error);
        QVERIFY(done);
        QCOMPARE(done->status, QStringLiteral("finished"));
        QVERIFY(done->endedAt.isValid());
        QCOMPARE(done->snapshot.timeline.size(), 3);
        QCOMPARE(done->rawSamples.size(), size_t(2));
        QCOMPARE(done->rawSamples[1].status, 14u);
        QVERIFY(done->snapshot.latency == s.latency);
        QVERIFY(!store.updateRun(r.id + 5, s, &error));
    }

    void writerThreadStoresUpdatesAndTheEnd()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("runs.sqlite"));
        RunStore store; // this thread: inserts (for the ids) and reads
        QString error;
        QVERIFY(store.open(path, &error));
        RunRecord a;
        a.method = QStringLiteral("x.Y/A");
        RunRecord b;
        b.method = QStringLiteral("x.Y/B");
        QVERIFY2(store.beginRun(&a, &error) && store.beginRun(&b, &error), qPrintable(error));

        const RunSnapshot full = richSnapshot(9);
        QList<qint64> finished;
        QStringList failures;
        QObject receiver;
        {
            RunWriter writer;
            QVERIFY2(writer.open(path, &error), qPrintable(error));
            QVERIFY(writer.isOpen());
            connect(&writer, &RunWriter::finished, &receiver, [&](qint64 id) { finished << id; });
            connect(&writer, &RunWriter::failed, &receiver, [&](qint64, const QString &why) { failures << why; });
            // Many cumulative snapshots, faster than a commit: whatever is coalesced, the newest one is stored.
            for (int i = 1; i <= 200; ++i) {
                RunSnapshot s = full;
                s.timeline.resize(std::min<qsizetype>(i, full.timeline.size()));
                s.callsSent = static_cast<uint64_t>(i);
                writer.update(a.id, s);
            }
            QVERIFY(writer.flush(std::chrono::seconds(20)));
            QVERIFY(writer.isIdle());
            const auto mid = store.load(a.id, &error);
            QVERIFY2(mid, qPrintable(error));
            QCOMPARE(mid->status, QStringLiteral("running"));
            QCOMPARE(mid->snapshot.callsSent, 200ULL);
            QCOMPARE(mid->snapshot.timeline.size(), full.timeline.size());

            writer.finish(a.id, full, { { 1, 2, 0 } }, QStringLiteral("stopped"));
            writer.update(a.id + b.id + 100, full); // no such run: reported, and the writer goes on
            // Queued and not waited for: the writer's destructor writes it before it returns.
            writer.update(b.id, full);
            writer.finish(b.id, full, {}, QStringLiteral("finished"));
            // Profiles are read after the run's end (the GUI's perf script takes seconds): stored on their own.
            writer.saveProfiles(b.id, richRecord(3).serverProfile, std::nullopt);
        }
        const auto doneA = store.load(a.id, &error);
        const auto doneB = store.load(b.id, &error);
        QVERIFY2(doneA && doneB, qPrintable(error));
        QCOMPARE(doneA->status, QStringLiteral("stopped"));
        QCOMPARE(doneA->rawSamples.size(), size_t(1));
        QVERIFY(doneA->snapshot.latency == full.latency);
        QCOMPARE(doneB->status, QStringLiteral("finished"));
        QVERIFY(doneB->endedAt.isValid());
        QCOMPARE(doneB->snapshot.timeline.size(), full.timeline.size());
        QVERIFY(doneB->serverProfile && !doneB->clientProfile && !doneA->serverProfile);
        QCOMPARE(doneB->serverProfile->processes.size(), size_t(2));
        QCOMPARE(doneB->serverProfile->totalUsPerCall(), richRecord(3).serverProfile->totalUsPerCall());
        // The signals come to this thread's receiver through its event loop.
        QTRY_COMPARE(finished, (QList<qint64> { a.id, b.id }));
        QCOMPARE(failures.size(), 1);
        QVERIFY2(failures.first().contains(path) && failures.first().contains(QString::number(a.id + b.id + 100)),
            qPrintable(failures.first()));

        RunWriter nowhere;
        QVERIFY(!nowhere.open(QStringLiteral("/proc/no/such/runs.sqlite"), &error));
        QVERIFY2(error.contains(QStringLiteral("/proc/no/such")), qPrintable(error));
        QVERIFY(!nowhere.isOpen());
        nowhere.update(1, full); // dropped, not queued forever
        QVERIFY(nowhere.isIdle());
    }

    void renameLabelFilterDeleteUndo()
    {
        QTemporaryDir dir;
        RunStore store;
        QString error;
        QVERIFY(store.open(dir.filePath(QStringLiteral("runs.sqlite")), &error));
        RunRecord a = richRecord(5);
        a.method = QStringLiteral("pkg.Svc/Alpha");
        RunRecord b = richRecord(6);
        b.method = QStringLiteral("pkg.Svc/Beta");
        b.labels = { QStringLiteral("candidate") };
        b.target = QStringLiteral("10.0.0.1:9000");
        const qint64 ia = store.addRun(a, &error);
        const qint64 ib = store.addRun(b, &error);
        QVERIFY(ia > 0 && ib > ia);
        QCOMPARE(store.list({}, &error).front().id, ib); // newest first
        RunFilter f;
        f.method = QStringLiteral("alpha");
        QCOMPARE(store.list(f, &error).size(), size_t(1));
        f = {};
        f.label = QStringLiteral("CANDI");
        QCOMPARE(store.list(f, &error).front().id, ib);
        f = {};
        f.text = QStringLiteral("10.0.0");
        QCOMPARE(store.list(f, &error).size(), size_t(1));
        f = {};
        f.limit = 1;
        QCOMPARE(store.list(f, &error).size(), size_t(1));

        QVERIFY(store.rename(ia, QStringLiteral("renamed"), &error));
        QVERIFY(store.setLabels(ia, { QStringLiteral("x"), QStringLiteral(" y "), QString() }, &error));
        auto loaded = store.load(ia, &error);
        QCOMPARE(loaded->name, QStringLiteral("renamed"));
        QCOMPARE(loaded->labels, QStringList({ QStringLiteral("x"), QStringLiteral("y") }));
        QVERIFY(!store.rename(999, QStringLiteral("n"), &error));
        QVERIFY(!store.setLabels(999, {}, &error));

        QVERIFY(store.remove(ia, &error));
        QVERIFY(!store.load(ia, &error));
        QVERIFY(!store.remove(ia, &error));
        // Undo: the run comes back under its own id, whole.
        QCOMPARE(store.addRun(*loaded, &error), ia);
        const auto again = store.load(ia, &error);
        QVERIFY(again);
        QCOMPARE(comparable(*again), comparable(*loaded));
    }

    void runsAreNamedByIdLastOrLabel()
    {
        QTemporaryDir dir;
        RunStore store;
        QString error;
        QVERIFY(store.open(dir.filePath(QStringLiteral("runs.sqlite")), &error));
        QCOMPARE(store.resolve(QStringLiteral("last"), &error), 0);
        QVERIFY2(error.contains(QStringLiteral("has no runs yet")), qPrintable(error));
        QList<qint64> ids;
        for (const QStringList &labels : { QStringList { QStringLiteral("baseline") }, QStringList {},
                 QStringList { QStringLiteral("baseline"), QStringLiteral("x") }, QStringList {} }) {
            RunRecord r;
            r.method = QStringLiteral("x.Y/Z");
            r.labels = labels;
            ids << store.addRun(r, &error);
            QVERIFY2(ids.last() > 0, qPrintable(error));
        }
        QCOMPARE(store.resolve(QStringLiteral("#2"), &error), 2);
        QCOMPARE(store.resolve(QStringLiteral("17"), &error), 17); // load() says whether it exists
        QCOMPARE(store.resolve(QStringLiteral("last"), &error), ids[3]);
        QCOMPARE(store.resolve(QStringLiteral("last~1"), &error), ids[2]);
        QCOMPARE(store.resolve(QStringLiteral("last~3"), &error), ids[0]);
        QCOMPARE(store.resolve(QStringLiteral("label:baseline"), &error), ids[2]);
        QCOMPARE(store.resolve(QStringLiteral("label:baseline~1"), &error), ids[0]);
        QCOMPARE(store.resolve(QStringLiteral("label:x"), &error), ids[2]);
        QCOMPARE(store.resolve(QStringLiteral("last~4"), &error), 0);
        QVERIFY2(error.contains(QStringLiteral("has 4 run(s), so the oldest is last~3")), qPrintable(error));
        QCOMPARE(store.resolve(QStringLiteral("label:baseline~2"), &error), 0);
        QVERIFY2(error.contains(QStringLiteral("2 run(s) in")) && error.contains(QStringLiteral("label:baseline~1")),
            qPrintable(error));
        QCOMPARE(store.resolve(QStringLiteral("label:nope"), &error), 0);
        QVERIFY2(error.contains(QStringLiteral("no run in")) && error.contains(QStringLiteral("labelled \"nope\"")),
            qPrintable(error));
        for (const char *bad : { "first", "last~", "label:", "-3", "0", "last~x", "" }) {
            QVERIFY2(!RunStore::isReference(QLatin1String(bad)), bad);
            QCOMPARE(store.resolve(QLatin1String(bad), &error), 0);
            QVERIFY2(error.contains(QStringLiteral("names no run")), qPrintable(error));
        }
        QVERIFY(RunStore::isReference(QStringLiteral("label:protobuf 3.21~2")));
    }

    void migratesFromTheFirstSchema()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("old.sqlite"));
        QString error;
        QVERIFY2(RunStore::createAtVersion(path, 1, &error), qPrintable(error));
        {
            // A run as version 1 kept it: labels as a JSON column.
            QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("v1"));
            db.setDatabaseName(path);
            QVERIFY(db.open());
            QSqlQuery q(db);
            QVERIFY(q.exec(QStringLiteral("SELECT value FROM meta WHERE key = 'schema_version'")) && q.next());
            QCOMPARE(q.value(0).toInt(), 1);
            QVERIFY(q.exec(QStringLiteral("INSERT INTO runs(name, labels, status, method) VALUES('old run', "
                                          "'[\"v1 label\",\"other\"]', 'finished', 'a.B/C')")));
            db.close();
        }
        QSqlDatabase::removeDatabase(QStringLiteral("v1"));
        RunStore store;
        QVERIFY2(store.open(path, &error), qPrintable(error));
        QCOMPARE(store.schemaVersion(), RunStore::kSchemaVersion);
        const auto rows = store.list({}, &error);
        QCOMPARE(rows.size(), size_t(1));
        QCOMPARE(rows.front().name, QStringLiteral("old run"));
        QCOMPARE(rows.front().labels, QStringList({ QStringLiteral("other"), QStringLiteral("v1 label") }));
        const auto run = store.load(rows.front().id, &error);
        QVERIFY2(run, qPrintable(error));
        QCOMPARE(run->method, QStringLiteral("a.B/C"));
        QVERIFY(!run->split.isSplit());
    }

    void refusesNewerAndForeignFiles()
    {
        QTemporaryDir dir;
        QString error;
        const QString newer = dir.filePath(QStringLiteral("newer.sqlite"));
        QVERIFY(RunStore::createAtVersion(newer, 2, &error));
        {
            QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("newer"));
            db.setDatabaseName(newer);
            QVERIFY(db.open());
            QSqlQuery q(db);
            QVERIFY(q.exec(QStringLiteral("UPDATE meta SET value = '7' WHERE key = 'schema_version'")));
            db.close();
        }
        QSqlDatabase::removeDatabase(QStringLiteral("newer"));
        RunStore store;
        QVERIFY(!store.open(newer, &error));
        QVERIFY2(error.startsWith(newer) && error.contains(QStringLiteral("newer rpcscope")), qPrintable(error));

        const QString text = dir.filePath(QStringLiteral("notes.txt"));
        QFile f(text);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray(4096, 'x'));
        f.close();
        RunStore other;
        QVERIFY(!other.open(text, &error));
        QVERIFY2(error.startsWith(text), qPrintable(error));
        QCOMPARE(QFileInfo(text).size(), 4096); // untouched

        RunStore nowhere;
        QVERIFY(!nowhere.open(QStringLiteral("/proc/no/such/runs.sqlite"), &error));
        QVERIFY2(error.contains(QStringLiteral("/proc/no/such")), qPrintable(error));
    }

    void readOnlyOpenWritesNothing()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("runs.sqlite"));
        QString error;
        qint64 id = 0;
        {
            RunStore writer;
            QVERIFY2(writer.open(path, &error), qPrintable(error));
            id = writer.addRun(richRecord(1), &error);
            QVERIFY2(id > 0, qPrintable(error));
        } // closed: its WAL is checkpointed into the file
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray bytes = file.readAll();
        file.close();
        const QDateTime modified = QFileInfo(path).lastModified();
        // Reads whatever a reader reads, and then tries every write.
        {
            RunStore reader;
            QVERIFY2(reader.open(path, &error, RunStore::OpenMode::ReadOnly), qPrintable(error));
            QVERIFY(reader.isOpen() && reader.isReadOnly());
            QCOMPARE(reader.schemaVersion(), RunStore::kSchemaVersion);
            QCOMPARE(reader.list({}, &error).size(), size_t(1));
            QCOMPARE(reader.resolve(QStringLiteral("label:baseline"), &error), id);
            const std::optional<RunRecord> run = reader.load(id, &error);
            QVERIFY2(run, qPrintable(error));
            QCOMPARE(comparable(*run), comparable(richRecord(1)));
            QCOMPARE(reader.markInterruptedRuns(), 0);
            auto refused
                = [&](bool ok) { return !ok && error.contains(path) && error.contains(QStringLiteral("read-only")); };
            error.clear();
            QVERIFY2(refused(reader.rename(id, QStringLiteral("x"), &error)), qPrintable(error));
            error.clear();
            QVERIFY2(refused(reader.setLabels(id, {}, &error)), qPrintable(error));
            error.clear();
            QVERIFY2(refused(reader.remove(id, &error)), qPrintable(error));
            error.clear();
            QVERIFY2(refused(reader.addRun(richRecord(2), &error) != 0), qPrintable(error));
            RunRecord begun = richRecord(3);
            error.clear();
            QVERIFY2(refused(reader.beginRun(&begun, &error)), qPrintable(error));
            error.clear();
            QVERIFY2(refused(reader.updateRun(id, richSnapshot(4), &error)), qPrintable(error));
        }
        QVERIFY(file.open(QIODevice::ReadOnly));
        QVERIFY(file.readAll() == bytes);
        QCOMPARE(QFileInfo(path).lastModified(), modified);
        RunStore again;
        QVERIFY2(again.open(path, &error, RunStore::OpenMode::ReadOnly), qPrintable(error));
        QCOMPARE(again.load(id, &error)->name, QStringLiteral("before upgrade"));
    }

    void readOnlyOpenRefusesWhatItWouldHaveToChange()
    {
        QTemporaryDir dir;
        QString error;
        // Missing: not created.
        const QString missing = dir.filePath(QStringLiteral("sub/runs.sqlite"));
        RunStore none;
        QVERIFY(!none.open(missing, &error, RunStore::OpenMode::ReadOnly));
        QVERIFY2(
            error.startsWith(missing) && error.contains(QStringLiteral("nothing has been saved")), qPrintable(error));
        QVERIFY(!QFileInfo::exists(dir.filePath(QStringLiteral("sub"))));
        // An older schema: named, and left as it is (a writer migrates it).
        const QString old = dir.filePath(QStringLiteral("old.sqlite"));
        QVERIFY2(RunStore::createAtVersion(old, 1, &error), qPrintable(error));
        const QByteArray oldBytes = [&] {
            QFile f(old);
            return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
        }();
        RunStore reader;
        QVERIFY(!reader.open(old, &error, RunStore::OpenMode::ReadOnly));
        QVERIFY2(error.startsWith(old) && error.contains(QStringLiteral("older rpcscope (schema version 1")),
            qPrintable(error));
        QVERIFY(!reader.isOpen());
        QFile f(old);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QVERIFY(f.readAll() == oldBytes);
        f.close();
        RunStore writer;
        QVERIFY2(writer.open(old, &error), qPrintable(error));
        QCOMPARE(writer.schemaVersion(), RunStore::kSchemaVersion);
        // A newer one, and a file that is no database at all.
        {
            QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("bump"));
            db.setDatabaseName(old);
            QVERIFY(db.open());
            QSqlQuery q(db);
            QVERIFY(q.exec(QStringLiteral("UPDATE meta SET value = '9' WHERE key = 'schema_version'")));
            db.close();
        }
        QSqlDatabase::removeDatabase(QStringLiteral("bump"));
        RunStore newer;
        QVERIFY(!newer.open(old, &error, RunStore::OpenMode::ReadOnly));
        QVERIFY2(error.startsWith(old) && error.contains(QStringLiteral("newer rpcscope (schema version 9")),
            qPrintable(error));
        const QString text = dir.filePath(QStringLiteral("notes.txt"));
        QFile notes(text);
        QVERIFY(notes.open(QIODevice::WriteOnly));
        notes.write(QByteArray(4096, 'x'));
        notes.close();
        RunStore foreign;
        QVERIFY(!foreign.open(text, &error, RunStore::OpenMode::ReadOnly));
        QVERIFY2(error.startsWith(text) && error.contains(QStringLiteral("not an rpcscope run database")),
            qPrintable(error));
    }

    void readOnlyReaderSeesADeadRunAsInterrupted()
    {
        // A run left "running" by a process that is gone: a writer marks it on open; a reader, which may not write,
        // reports it as interrupted all the same and leaves the row as it is.
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("runs.sqlite"));
        QString error;
        RunStore writer;
        QVERIFY2(writer.open(path, &error), qPrintable(error));
        RunRecord run = richRecord(1);
        QVERIFY2(writer.beginRun(&run, &error), qPrintable(error));
        RunStore reader;
        QVERIFY2(reader.open(path, &error, RunStore::OpenMode::ReadOnly), qPrintable(error));
        QCOMPARE(reader.list({}, &error).front().status, QStringLiteral("running")); // its process is this one
        {
            // As if another process had begun it and died: its identity is not this process's.
            QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("owner"));
            db.setDatabaseName(path);
            QVERIFY(db.open());
            QSqlQuery q(db);
            QVERIFY(q.exec(QStringLiteral("UPDATE runs SET owner_identity = 'gone'")));
            db.close();
        }
        QSqlDatabase::removeDatabase(QStringLiteral("owner"));
        QCOMPARE(reader.list({}, &error).front().status, QStringLiteral("interrupted"));
        QCOMPARE(reader.load(run.id, &error, RunStore::Parts::Metadata)->status, QStringLiteral("interrupted"));
        QCOMPARE(reader.markInterruptedRuns(), 0);
        QCOMPARE(writer.markInterruptedRuns(), 1); // still running in the file until a writer marks it
    }

    void runsStartedTogetherOnANewHistoryAllSave()
    {
        // Runs started at once on a history that does not exist yet each create or find its schema: none fails
        // with "table runs already exists" (they did, when two read version 0 before either wrote).
        if (!QFileInfo::exists(cli()))
            QSKIP("rpcscope-cli is not built here (the tsan preset builds core's tests only)");
        for (int round = 0; round < 4; ++round) {
            QTemporaryDir dir;
            const QString path = dir.filePath(QStringLiteral("runs.sqlite"));
            std::vector<std::unique_ptr<QProcess>> children;
            for (int i = 0; i < 4; ++i) {
                auto child = std::make_unique<QProcess>();
                child->start(cli(),
                    { QStringLiteral("run"), QStringLiteral("--transport"), QStringLiteral("none"),
                        QStringLiteral("--call"), QStringLiteral("rpcscope.bench.v1.Bench/Echo"), QStringLiteral("-n"),
                        QStringLiteral("50"), QStringLiteral("--db"), path, QStringLiteral("--label"),
                        QStringLiteral("together") });
                children.push_back(std::move(child));
            }
            for (auto &child : children) {
                QVERIFY(child->waitForFinished(60000));
                QVERIFY2(child->exitCode() == 0, child->readAllStandardError().constData());
            }
            RunStore store;
            QString error;
            QVERIFY2(store.open(path, &error), qPrintable(error));
            QCOMPARE(store.list({}, &error).size(), size_t(4));
        }
    }

    void interruptedRunIsFoundAndReadable()
    {
        // A real run saved by the CLI, killed with SIGKILL after its first intervals are in the database.
        if (!QFileInfo::exists(cli()))
            QSKIP("rpcscope-cli is not built here (the tsan preset builds core's tests only)");
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("runs.sqlite"));
        QProcess child;
        child.start(cli(),
            { QStringLiteral("run"), QStringLiteral("--builtin"), QStringLiteral("--call"),
                QStringLiteral("rpcscope.bench.v1.Bench/Echo"), QStringLiteral("-c"), QStringLiteral("2"),
                QStringLiteral("-z"), QStringLiteral("60s"), QStringLiteral("--interval"), QStringLiteral("200ms"),
                QStringLiteral("--db"), path, QStringLiteral("--label"), QStringLiteral("killed") });
        QVERIFY(child.waitForStarted());
        RunStore store;
        QString error;
        QElapsedTimer timer;
        timer.start();
        qint64 id = 0;
        while (timer.elapsed() < 20000) {
            QTest::qWait(100);
            if (!QFileInfo::exists(path))
                continue;
            if (!store.isOpen() && !store.open(path, &error))
                continue;
            const auto rows = store.list({}, &error);
            if (!rows.empty()) {
                const auto run = store.load(rows.front().id, &error);
                if (run && run->snapshot.timeline.size() >= 2) {
                    id = run->id;
                    QCOMPARE(run->status, QStringLiteral("running"));
                    break;
                }
            }
        }
        QVERIFY2(id > 0,
            qPrintable(
                QStringLiteral("no interval stored; child said: ") + QString::fromUtf8(child.readAllStandardError())));
        ::kill(static_cast<pid_t>(child.processId()), SIGKILL);
        QVERIFY(child.waitForFinished(5000));
        QCOMPARE(store.markInterruptedRuns(), 1);
        const auto run = store.load(id, &error);
        QVERIFY2(run, qPrintable(error));
        QCOMPARE(run->status, QStringLiteral("interrupted"));
        QVERIFY(run->snapshot.callsOk() > 0);
        QVERIFY(run->snapshot.latency.count() > 0);
        QVERIFY(run->snapshot.timeline.size() >= 2);
        QCOMPARE(run->labels, QStringList { QStringLiteral("killed") });
        QCOMPARE(run->method, QStringLiteral("rpcscope.bench.v1.Bench/Echo"));
        // The built-in server the killed CLI started is in its own process group and outlives it only until it
        // notices: nothing to assert about it here.
    }

    void whatDiffersIsCompleteAndReadable()
    {
        // Two runs that differ in transport, payload, callers, a connection option, metadata and the server's
        // environment: every one is listed, named as the document names it, values in clear, the call's identity first.
        Scenario sa;
        sa.method = QStringLiteral("rpcscope.bench.v1.Bench/Echo");
        sa.fills = QStringList { QStringLiteral("payload=1KiB") };
        sa.concurrency = 20;
        sa.calls = 20000;
        sa.metadata = { { QStringLiteral("x-run"), QStringLiteral("a") } };
        Scenario sb = sa;
        sb.transport = QStringLiteral("h2grpc");
        sb.fills = QStringList { QStringLiteral("payload=64KiB") };
        sb.concurrency = 8;
        sb.http2Window = QStringLiteral("1MiB");
        sb.metadata
            = { { QStringLiteral("x-run"), QStringLiteral("a") }, { QStringLiteral("x-user"), QStringLiteral("bob") } };
        RunRecord a = richRecord(1);
        RunRecord b = richRecord(1);
        a.transport = QStringLiteral("grpc");
        b.transport = QStringLiteral("h2grpc");
        a.scenario = QJsonDocument::fromJson(sa.toJson()).object();
        b.scenario = QJsonDocument::fromJson(sb.toJson()).object();
        a.server
            = QJsonObject { { QStringLiteral("command"), QStringLiteral("rpcscope-cli serve grpc --port {port}") } };
        b.server = a.server;
        b.server.insert(QStringLiteral("env"),
            QJsonArray { QStringLiteral("RPCSCOPE_SERVE_DELAY=1ms"), QStringLiteral("API_TOKEN=hunter2") });
        a.environment = b.environment = QJsonObject { { QStringLiteral("grpc"), QStringLiteral("1.51.1") } };
        b.environment.insert(QStringLiteral("grpc"), QStringLiteral("1.60.0"));
        redactSecrets(&a);
        redactSecrets(&b);
        // Which side of an A/B run each was is what is compared, not a difference between them.
        a.scenario.insert(QStringLiteral("ab_side"), QStringLiteral("A"));
        b.scenario.insert(QStringLiteral("ab_side"), QStringLiteral("B"));
        const QStringList lines = runDifferences(a, b);
        QCOMPARE(lines,
            QStringList({ QStringLiteral("transport: grpc -> h2grpc"),
                QStringLiteral("server env API_TOKEN: (unset) -> (redacted)"),
                QStringLiteral("server env RPCSCOPE_SERVE_DELAY: (unset) -> 1ms"),
                QStringLiteral("fills: payload=1KiB -> payload=64KiB"),
                QStringLiteral("metadata.x-user: (none) -> bob"), QStringLiteral("load.concurrency: 20 -> 8"),
                QStringLiteral("load.http2_window: (none) -> 1MiB"), QStringLiteral("grpc: 1.51.1 -> 1.60.0") }));
        // The same run against itself: nothing; a field left out of one document and at its default in the other:
        // nothing either.
        QVERIFY(runDifferences(a, a).isEmpty());
        RunRecord sparse = a;
        sparse.scenario.insert(QStringLiteral("load"), [&] {
            QJsonObject load = a.scenario.value(QStringLiteral("load")).toObject();
            load.remove(QStringLiteral("max_send_size"));
            return load;
        }());
        QVERIFY2(runDifferences(a, sparse).isEmpty(), qPrintable(runDifferences(a, sparse).join(u'\n')));
        // The request's own fields, and a long value elided in the middle, never cut off.
        RunRecord c = a;
        c.scenario.insert(QStringLiteral("request"), QStringLiteral("{\"name\":\"%1\"}").arg(QString(200, u'x')));
        a.scenario.insert(QStringLiteral("request"), QStringLiteral("{\"name\":\"y\"}"));
        const QStringList requestLines = runDifferences(a, c);
        QCOMPARE(requestLines.size(), 1);
        QVERIFY2(requestLines.first().startsWith(QStringLiteral("request.name: y -> xxx"))
                && requestLines.first().contains(QChar(0x2026)) && requestLines.first().size() < 100,
            qPrintable(requestLines.first()));
    }

    void abSidesAreNamedByWhatDistinguishesThem()
    {
        using Names = std::array<QString, 2>;
        // Two built-in servers, one with a delay: the environment tells them apart.
        QCOMPARE(
            abSideNames(side(QStringLiteral("builtin")),
                side(QStringLiteral("builtin"), { { QStringLiteral("RPCSCOPE_SERVE_DELAY"), QStringLiteral("1ms") } })),
            (Names { QStringLiteral("no RPCSCOPE_SERVE_DELAY"), QStringLiteral("RPCSCOPE_SERVE_DELAY=1ms") }));
        // Two commands: the words that differ, a program by its file name, without the {port} both are given.
        QCOMPARE(abSideNames(side(QStringLiteral("/opt/venv-a/bin/python3 /srv/app/server_a.py --port {port}")),
                     side(QStringLiteral("/opt/venv-a/bin/python3 /srv/app/server_b.py --port {port}"))),
            (Names { QStringLiteral("server_a.py"), QStringLiteral("server_b.py") }));
        QCOMPARE(abSideNames(side(QStringLiteral("/usr/bin/rpcscope-cli serve grpc --port {port}")),
                     side(QStringLiteral("builtin"))),
            (Names { QStringLiteral("rpcscope-cli serve grpc"), QStringLiteral("builtin") }));
        // A secret is never shown; the same thing on both sides is named whole.
        QCOMPARE(abSideNames(side(QStringLiteral("builtin"), { { QStringLiteral("API_TOKEN"), QStringLiteral("s1") } }),
                     side(QStringLiteral("builtin"), { { QStringLiteral("API_TOKEN"), QStringLiteral("s2") } })),
            (Names { QStringLiteral("API_TOKEN=(secret)"), QStringLiteral("API_TOKEN=(secret)") }));
        QCOMPARE(abSideNames(side(QStringLiteral("127.0.0.1:50051")), side(QStringLiteral("127.0.0.1:50051"))),
            (Names { QStringLiteral("127.0.0.1:50051"), QStringLiteral("127.0.0.1:50051") }));
        // Client commands (issue 36): the same client with another runtime is named by its variable; rpcscope's own
        // client against a client command by the command's words.
        const QString client = QStringLiteral("python3 examples/clients/grpc_echo_client.py --payload-bytes 10MB");
        const QString runtime = QStringLiteral("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION");
        QCOMPARE(abSideNames(side(QStringLiteral("builtin"), {}, client, { { runtime, QStringLiteral("cpp") } }),
                     side(QStringLiteral("builtin"), {}, client, { { runtime, QStringLiteral("python") } })),
            (Names { runtime + QStringLiteral("=cpp"), runtime + QStringLiteral("=python") }));
        QCOMPARE(abSideNames(side(QStringLiteral("builtin")), side(QStringLiteral("builtin"), {}, client)),
            (Names { QStringLiteral("rpcscope's client"),
                QStringLiteral("python3 grpc_echo_client.py --payload-bytes 10MB") }));
        // Long: elided in the middle, never cut off at the end.
        const Names long_ = abSideNames(side(QStringLiteral("builtin")),
            side(
                QStringLiteral("builtin"), { { QStringLiteral("MODE"), QString(80, u'x') + QStringLiteral("-END") } }));
        QCOMPARE(long_[1].size(), 60);
        QVERIFY2(long_[1].startsWith(QStringLiteral("MODE=xx")) && long_[1].endsWith(QStringLiteral("x-END"))
                && long_[1].contains(QChar(0x2026)),
            qPrintable(long_[1]));
    }

    void environmentDifferencesNameTheKeys()
    {
        QJsonObject a = environmentFingerprint();
        QVERIFY(!a.value(QStringLiteral("protobuf")).toString().isEmpty());
        QVERIFY(a.value(QStringLiteral("cores")).toInt() >= 1);
        QJsonObject b = a;
        b.insert(QStringLiteral("protobuf"), QStringLiteral("9.9.9"));
        const QStringList diff = environmentDifferences(a, b);
        QCOMPARE(diff.size(), 1);
        QVERIFY2(
            diff.first().startsWith(QStringLiteral("protobuf: ")) && diff.first().endsWith(QStringLiteral("-> 9.9.9")),
            qPrintable(diff.first()));
    }
};

QTEST_GUILESS_MAIN(StoreTest)
#include "tst_store.moc"
