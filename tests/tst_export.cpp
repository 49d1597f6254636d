#include "export/csvexport.h"
#include "export/exporter.h"
#include "export/ghzjson.h"
#include "export/hgrm.h"
#include "export/markdownexport.h"
#include "report/matrixreport.h"
#include "report/textreport.h"
#include "store/runjson.h"
#include "store/runstore.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLocale>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <functional>

#include <cmath>

using namespace rpcscope;

namespace {

QString cli()
{
    return QStringLiteral(RPCSCOPE_CLI);
}

/// A run with everything an export reads, and a name that needs CSV quoting.
RunRecord sampleRun(const QString &name, int calls, bool withRawSamples)
{
    RunRecord r;
    r.id = 7;
    r.name = name;
    r.labels = { QStringLiteral("protobuf 3.21.12"), QStringLiteral("laptop, on battery") };
    r.startedAt = QDateTime(QDate(2025, 1, 2), QTime(3, 4, 5, 678), Qt::UTC);
    r.endedAt = r.startedAt.addMSecs(2500);
    r.method = QStringLiteral("rpcscope.bench.v1.Bench/Echo");
    r.transport = QStringLiteral("grpc");
    r.codec = QStringLiteral("protobuf");
    r.target = QStringLiteral("127.0.0.1:50051");
    r.environment = QJsonObject { { QStringLiteral("rpcscope"), QStringLiteral("0.1.0") },
        { QStringLiteral("protobuf"), QStringLiteral("3.21.12") } };
    r.scenario = QJsonObject { { QStringLiteral("arguments"),
        QJsonArray { QStringLiteral("-c"), QStringLiteral("8"), QStringLiteral("-n"), calls } } };
    RunSnapshot &s = r.snapshot;
    s.state = RunState::Finished;
    uint64_t failed = 0;
    for (int i = 0; i < calls; ++i) {
        // 0.2 .. 3.2 ms spread, and a slow call every 100.
        const uint64_t ns = 200000 + static_cast<uint64_t>((i * 7919) % 1000) * 3000 + (i % 100 == 99 ? 20000000 : 0);
        const bool ok = i % 50 != 7;
        (ok ? s.latency : s.errorLatency).record(ns);
        ++s.statusCounts[ok ? CallStatus::Ok : CallStatus::Unavailable];
        failed += ok ? 0 : 1;
        if (withRawSamples)
            r.rawSamples.push_back({ static_cast<uint64_t>(i) * 250000, static_cast<uint32_t>(ns / 1000),
                static_cast<uint32_t>(ok ? CallStatus::Ok : CallStatus::Unavailable) });
    }
    s.errors = { ErrorSample { CallStatus::Unavailable, QStringLiteral("connection refused"), failed } };
    s.elapsed = std::chrono::milliseconds(2500);
    s.plannedCalls = static_cast<uint64_t>(calls);
    for (int i = 0; i < 3; ++i) {
        IntervalPoint p;
        p.endSeconds = i < 2 ? i + 1.0 : 2.5;
        p.seconds = i < 2 ? 1.0 : 0.5;
        p.calls = static_cast<uint64_t>(calls / 3);
        p.errors = i == 1 ? 2 : 0;
        p.p50 = 1500000 + static_cast<uint64_t>(i) * 1000;
        p.p90 = 2800000;
        p.p99 = 3150000;
        p.concurrency = 8;
        s.timeline << p;
    }
    s.clientCpuSeconds = 0.75;
    s.clientPeakRssBytes = 50 << 20;
    s.bytesSent = 1024ull * static_cast<uint64_t>(calls);
    s.bytesReceived = 1030ull * static_cast<uint64_t>(calls);
    return r;
}

/// RFC 4180, strictly: a field is plain (no quote in it) or quoted with quotes doubled; rows end with '\n'.
QList<QStringList> parseCsv(const QString &text, QString *error)
{
    QList<QStringList> rows;
    QStringList row;
    QString field;
    qsizetype i = 0;
    bool rowStarted = false;
    while (i < text.size()) {
        const QChar c = text.at(i);
        if (c == u'"' && field.isEmpty()) {
            ++i;
            while (true) {
                if (i >= text.size()) {
                    *error = QStringLiteral("unterminated quoted field");
                    return {};
                }
                if (text.at(i) == u'"') {
                    if (i + 1 < text.size() && text.at(i + 1) == u'"') {
                        field += u'"';
                        i += 2;
                        continue;
                    }
                    ++i;
                    break;
                }
                field += text.at(i++);
            }
            if (i < text.size() && text.at(i) != u',' && text.at(i) != u'\n') {
                *error = QStringLiteral("text after a closing quote at %1").arg(i);
                return {};
            }
            rowStarted = true;
            continue;
        }
        if (c == u'"') {
            *error = QStringLiteral("quote inside an unquoted field at %1").arg(i);
            return {};
        }
        if (c == u'\r') {
            *error = QStringLiteral("bare CR at %1 (rows must end with LF)").arg(i);
            return {};
        }
        if (c == u',') {
            row << field;
            field.clear();
            rowStarted = true;
        } else if (c == u'\n') {
            row << field;
            rows << row;
            row.clear();
            field.clear();
            rowStarted = false;
        } else {
            field += c;
            rowStarted = true;
        }
        ++i;
    }
    if (rowStarted) {
        *error = QStringLiteral("last row does not end with a newline");
        return {};
    }
    return rows;
}

QList<QStringList> parseCsvOrFail(const QByteArray &data)
{
    QString error;
    const QList<QStringList> rows = parseCsv(QString::fromUtf8(data), &error);
    if (!error.isEmpty())
        qWarning("CSV: %s", qPrintable(error));
    return rows;
}

double toNumber(const QString &text, bool *ok)
{
    return text.toDouble(ok); // QString::toDouble is always the C locale: '.' only
}

struct HgrmRow {
    double value;
    double percentile;
    uint64_t totalCount;
    int columns;
};

/// Parses HdrHistogram's percentile distribution text; false with @p error on any deviation from the format.
bool parseHgrm(const QByteArray &data, QList<HgrmRow> *rows, QStringList *footer, QString *error)
{
    const QList<QByteArray> lines = data.split('\n');
    if (lines.size() < 3 || lines.at(0) != "       Value     Percentile TotalCount 1/(1-Percentile)"
        || !lines.at(1).isEmpty()) {
        *error = QStringLiteral("bad header: ") + QString::fromUtf8(lines.value(0));
        return false;
    }
    for (qsizetype i = 2; i < lines.size(); ++i) {
        const QByteArray line = lines.at(i);
        if (line.isEmpty())
            continue;
        if (line.startsWith("#[")) {
            *footer << QString::fromUtf8(line);
            continue;
        }
        const QList<QByteArray> parts = line.simplified().split(' ');
        bool ok1 = false;
        bool ok2 = false;
        bool ok3 = false;
        HgrmRow row { parts.value(0).toDouble(&ok1), parts.value(1).toDouble(&ok2), parts.value(2).toULongLong(&ok3),
            static_cast<int>(parts.size()) };
        if (!ok1 || !ok2 || !ok3 || (parts.size() != 3 && parts.size() != 4)) {
            *error = QStringLiteral("bad row: ") + QString::fromUtf8(line);
            return false;
        }
        if (parts.size() == 4) {
            bool ok4 = false;
            const double inverse = parts.at(3).toDouble(&ok4);
            if (!ok4 || std::abs(inverse - 1.0 / (1.0 - row.percentile)) > 0.01 * inverse + 0.01) {
                *error = QStringLiteral("bad 1/(1-Percentile): ") + QString::fromUtf8(line);
                return false;
            }
        }
        rows->append(row);
    }
    return true;
}

bool near(double value, double expected, double relative)
{
    return std::abs(value - expected) <= relative * std::abs(expected);
}

QJsonObject readJson(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QJsonDocument::fromJson(file.readAll()).object();
}

} // namespace

class ExportTest : public QObject {
    Q_OBJECT

    const QString m_awkwardName = QStringLiteral("echo, \"1 KiB\"\nsecond line");

private slots:
    void initTestCase()
    {
        // A decimal comma locale: the exports must not follow it.
        QLocale::setDefault(QLocale(QLocale::German, QLocale::Germany));
        QCOMPARE(QLocale().toString(1.5), QStringLiteral("1,5"));
    }

    void aCodecShareIsNeverMoreThanTheWhole()
    {
        // The no-RPC baseline's mean over a cell's mean, same codec and payload: a share of the call, at most all of
        // it. A baseline slower than the call (noise) is unknown, "-", never "127.5%".
        auto result = [](TransportKind transport, double meanUs) {
            MatrixResult r;
            r.cell.transport = transport;
            r.cell.codec = Codec::Protobuf;
            r.cell.payload = QStringLiteral("nums=1000");
            r.cell.ownServer = transport != TransportKind::InProcess;
            for (int i = 0; i < 100; ++i)
                r.run.latency.record(static_cast<uint64_t>(meanUs * 1000));
            r.run.statusCounts[CallStatus::Ok] = 100;
            return r;
        };
        QList<MatrixResult> results { result(TransportKind::Grpc, 400), result(TransportKind::Http, 150),
            result(TransportKind::InProcess, 200) };
        QVERIFY(std::fabs(codecShare(results, 0) - 0.5) < 0.02);
        QCOMPARE(codecShare(results, 1), -1.0);
        QCOMPARE(codecShare(results, 2), -1.0); // the baseline itself has no share
        const MatrixTable table = matrixTable(results);
        const qsizetype shareColumn = table.header.indexOf(QStringLiteral("codec share"));
        QVERIFY(table.rows[0][shareColumn].endsWith(u'%'));
        QCOMPARE(table.rows[1][shareColumn], QStringLiteral("-"));
    }

    void summaryCsvQuotesAndKeepsColumns()
    {
        const RunRecord a = sampleRun(m_awkwardName, 1000, false);
        RunRecord b = sampleRun(QStringLiteral("plain"), 300, false);
        b.id = 8;
        b.scenario = QJsonObject { { QStringLiteral("load"), QJsonObject { { QStringLiteral("concurrency"), 16 } } },
            { QStringLiteral("fills"), QJsonArray { QStringLiteral("nums=1000"), QStringLiteral("payload=1KiB") } } };
        b.snapshot.bytesSent = 300 * 1850;
        b.snapshot.bytesReceived = 300 * 4;
        b.snapshot.hasServerStats = true;
        b.snapshot.serverCpuSeconds = 0.3;
        b.snapshot.messagesSent = 1000; // b streamed
        b.snapshot.messagesReceived = 50000;
        for (int i = 1; i <= 100; ++i)
            b.snapshot.messageLatency.record(static_cast<uint64_t>(i) * 10000); // 10 us .. 1 ms
        b.snapshot.firstMessageLatency.record(3'000'000); // a server stream's first message, apart
        const QByteArray data = runsSummaryCsv({ a, b });
        QVERIFY(!data.contains('\r'));
        const QList<QStringList> rows = parseCsvOrFail(data);
        QCOMPARE(rows.size(), 3);
        QCOMPARE(rows.at(0), summaryCsvColumns());
        const QStringList header = rows.at(0);
        for (const QStringList &row : rows)
            QCOMPARE(row.size(), header.size());
        auto value
            = [&](int row, const char *column) { return rows.at(row).at(header.indexOf(QLatin1String(column))); };
        QCOMPARE(value(1, "name"), m_awkwardName);
        QCOMPARE(value(1, "labels"), QStringLiteral("protobuf 3.21.12;laptop, on battery"));
        QCOMPARE(value(1, "id"), QStringLiteral("7"));
        QCOMPARE(value(1, "count"), QStringLiteral("1000"));
        QCOMPARE(value(1, "failed"), QStringLiteral("20"));
        QCOMPARE(value(1, "started_at"), QStringLiteral("2025-01-02T03:04:05.678Z"));
        // Every numeric column parses with a '.' decimal point, under de_DE.
        for (const char *column : { "duration_s", "rps", "mean_ms", "stddev_ms", "min_ms", "p50_ms", "p99_99_ms",
                 "max_ms", "client_cpu_per_call_us", "client_peak_rss_bytes", "bytes_sent" }) {
            bool ok = false;
            toNumber(value(1, column), &ok);
            QVERIFY2(ok, column);
        }
        bool ok = false;
        QCOMPARE(toNumber(value(1, "rps"), &ok), 400.0);
        QVERIFY(near(
            toNumber(value(1, "p50_ms"), &ok), static_cast<double>(a.snapshot.latency.percentile(50)) / 1e6, 1e-9));
        QVERIFY(near(toNumber(value(1, "client_cpu_per_call_us"), &ok), 750.0, 1e-9));
        QVERIFY(value(1, "rps").contains(u'.') || !value(1, "rps").contains(u','));
        // Server CPU: empty when unknown, a number when sampled.
        QVERIFY(value(1, "server_cpu_per_call_us").isEmpty());
        QVERIFY(near(toNumber(value(2, "server_cpu_per_call_us"), &ok), 1000.0, 1e-9));
        QVERIFY(ok);
        // Message columns: empty for the unary run, filled for the streaming one.
        QVERIFY(value(1, "messages_received").isEmpty() && value(1, "message_p50_ms").isEmpty());
        QCOMPARE(value(2, "messages_received"), QStringLiteral("50000"));
        QCOMPARE(value(2, "messages_sent"), QStringLiteral("1000"));
        QVERIFY(near(toNumber(value(2, "message_p50_ms"), &ok), 0.5, 0.01));
        QVERIFY(ok);
        // What the run was asked (unknown: empty, as for a run without its scenario), and bytes per call.
        QCOMPARE(value(2, "concurrency"), QStringLiteral("16"));
        QCOMPARE(value(2, "payload"), QStringLiteral("nums=1000;payload=1KiB"));
        QVERIFY(value(1, "concurrency").isEmpty() && value(1, "payload").isEmpty());
        QCOMPARE(value(2, "bytes_sent_per_call"), QStringLiteral("1850.0"));
        QCOMPARE(value(2, "bytes_received_per_call"), QStringLiteral("4.0"));
        QVERIFY(value(1, "first_message_p50_ms").isEmpty());
        QVERIFY(near(toNumber(value(2, "first_message_p50_ms"), &ok), 3.0, 0.05));
        QVERIFY(ok);
    }

    void histogramTimelineAndRawCsv()
    {
        const RunRecord run = sampleRun(QStringLiteral("x"), 1000, true);
        QList<QStringList> rows = parseCsvOrFail(histogramCsv(run.snapshot.latency));
        QCOMPARE(rows.at(0),
            (QStringList { QStringLiteral("low_ns"), QStringLiteral("high_ns"), QStringLiteral("count"),
                QStringLiteral("cumulative_fraction") }));
        uint64_t total = 0;
        double lastFraction = 0;
        for (qsizetype i = 1; i < rows.size(); ++i) {
            QCOMPARE(rows.at(i).size(), 4);
            QVERIFY(rows.at(i).at(0).toULongLong() <= rows.at(i).at(1).toULongLong());
            total += rows.at(i).at(2).toULongLong();
            bool ok = false;
            const double fraction = toNumber(rows.at(i).at(3), &ok);
            QVERIFY(ok && fraction >= lastFraction);
            lastFraction = fraction;
        }
        QCOMPARE(total, run.snapshot.latency.count());
        QCOMPARE(lastFraction, 1.0);

        rows = parseCsvOrFail(timelineCsv(run.snapshot.timeline));
        QCOMPARE(rows.size(), 4);
        QCOMPARE(
            rows.at(0).join(u','), QStringLiteral("end_s,seconds,calls,errors,rps,p50_ms,p90_ms,p99_ms,concurrency"));
        bool ok = false;
        QCOMPARE(toNumber(rows.at(3).at(0), &ok), 2.5);
        QCOMPARE(toNumber(rows.at(3).at(4), &ok), 666.0); // 333 calls in 0.5 s
        QCOMPARE(toNumber(rows.at(2).at(5), &ok), 1.501);
        QVERIFY(ok);
        // A streaming run's time series: the message columns to the right, every row as long as the header.
        QList<IntervalPoint> streamed = run.snapshot.timeline;
        streamed[1].messages = 5000;
        streamed[1].messageP50 = 250'000;
        streamed[1].messageP99 = 900'000;
        rows = parseCsvOrFail(timelineCsv(streamed));
        QVERIFY2(rows.at(0).join(u',').endsWith(QStringLiteral(
                     "concurrency,messages,messages_per_s,message_p50_ms,message_p90_ms,message_p99_ms")),
            qPrintable(rows.at(0).join(u',')));
        for (const QStringList &row : rows)
            QCOMPARE(row.size(), 14);
        QCOMPARE(rows.at(2).at(9), QStringLiteral("5000"));
        QCOMPARE(toNumber(rows.at(2).at(11), &ok), 0.25);
        QVERIFY(rows.at(1).at(11).isEmpty()); // no timed message in that interval

        rows = parseCsvOrFail(rawSamplesCsv(run.rawSamples));
        QCOMPARE(rows.size(), 1001);
        QCOMPARE(rows.at(0).join(u','), QStringLiteral("sent_ns,latency_us,status"));
        QCOMPARE(rows.at(8).at(2), QStringLiteral("UNAVAILABLE"));

        QString error;
        QVERIFY(exportRun(sampleRun(QStringLiteral("y"), 10, false), ExportFormat::CsvRawSamples, &error).isEmpty());
        QVERIFY2(error.contains(QStringLiteral("raw samples")), qPrintable(error));
    }

    void ghzJsonHasGhzFields()
    {
        const RunRecord run = sampleRun(QStringLiteral("g"), 1000, false);
        const QByteArray text = exportRun(run, ExportFormat::GhzJson, nullptr);
        // Go decodes time.Duration from integers only: no exponent, no fraction.
        QVERIFY2(QString::fromUtf8(text).contains(QRegularExpression(QStringLiteral("\"total\": 2500000000\\s"))),
            text.left(2000).constData());
        const QJsonObject o = QJsonDocument::fromJson(text).object();
        for (const char *key : { "date", "options", "count", "total", "average", "fastest", "slowest", "rps",
                 "errorDistribution", "statusCodeDistribution", "latencyDistribution", "histogram", "details" })
            QVERIFY2(o.contains(QLatin1String(key)), key);
        QCOMPARE(o.value(QStringLiteral("count")).toInteger(), 1000);
        QCOMPARE(o.value(QStringLiteral("date")).toString(), QStringLiteral("2025-01-02T03:04:08Z"));
        QCOMPARE(o.value(QStringLiteral("options")).toObject().value(QStringLiteral("concurrency")).toInt(), 8);
        QCOMPARE(
            o.value(QStringLiteral("statusCodeDistribution")).toObject().value(QStringLiteral("Unavailable")).toInt(),
            20);
        QCOMPARE(o.value(QStringLiteral("errorDistribution"))
                     .toObject()
                     .value(QStringLiteral("rpc error: code = Unavailable desc = connection refused"))
                     .toInt(),
            20);
        const QJsonArray distribution = o.value(QStringLiteral("latencyDistribution")).toArray();
        QCOMPARE(distribution.size(), 7);
        QCOMPARE(distribution.at(2).toObject().value(QStringLiteral("percentage")).toInt(), 50);
        const QJsonArray histogram = o.value(QStringLiteral("histogram")).toArray();
        QCOMPARE(histogram.size(), 11);
        qint64 counted = 0;
        for (const QJsonValue &bucket : histogram)
            counted += bucket.toObject().value(QStringLiteral("count")).toInteger();
        QCOMPARE(counted, 980);
        QCOMPARE(histogram.at(0).toObject().value(QStringLiteral("mark")).toDouble(),
            static_cast<double>(run.snapshot.latency.min()) / 1e9);
        QCOMPARE(histogram.at(10).toObject().value(QStringLiteral("mark")).toDouble(),
            static_cast<double>(run.snapshot.latency.max()) / 1e9);
        QVERIFY(o.value(QStringLiteral("details")).isNull());
    }

    void ghzJsonRoundTrip_data()
    {
        QTest::addColumn<bool>("withRawSamples");
        QTest::newRow("approximate (no details)") << false;
        QTest::newRow("exact (details)") << true;
    }
    void ghzJsonRoundTrip()
    {
        QFETCH(bool, withRawSamples);
        const RunRecord run = sampleRun(QStringLiteral("round trip"), 5000, withRawSamples);
        const QByteArray text = exportRun(run, ExportFormat::GhzJson, nullptr);
        QString error;
        const std::optional<RunRecord> back = importRunJson(text, QStringLiteral("/tmp/g.json"), &error);
        QVERIFY2(back, qPrintable(error));
        const RunSnapshot &a = run.snapshot;
        const RunSnapshot &b = back->snapshot;
        QCOMPARE(b.callsCompleted(), a.callsCompleted());
        QCOMPARE(b.callsOk(), a.callsOk());
        QCOMPARE(b.statusCounts, a.statusCounts);
        QVERIFY(near(b.requestsPerSecond(), a.requestsPerSecond(), 1e-9));
        QCOMPARE(b.latency.min(), withRawSamples ? a.latency.min() / 1000 * 1000 : a.latency.min());
        for (const double p : { 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0 }) {
            const auto expected = static_cast<double>(a.latency.percentile(p));
            const auto actual = static_cast<double>(b.latency.percentile(p));
            // Bucket precision (< 1/64) plus, without details, the linear interpolation between ghz's points.
            QVERIFY2(near(actual, expected, withRawSamples ? 0.02 : 0.04),
                qPrintable(QStringLiteral("p%1: %2 vs %3").arg(p).arg(actual).arg(expected)));
        }
        QCOMPARE(back->method, run.method);
        QCOMPARE(back->transport, QStringLiteral("grpc"));
        QCOMPARE(back->status, QStringLiteral("imported"));
        QCOMPARE(back->origin.startsWith(QStringLiteral("ghz: g.json")), true);
        QCOMPARE(back->origin.contains(QStringLiteral("approximate")), !withRawSamples);
        QCOMPARE(back->rawSamples.size(), run.rawSamples.size());
        QCOMPARE(back->snapshot.errors.size(), 1);
        QCOMPARE(back->snapshot.errors.first().status, static_cast<int>(CallStatus::Unavailable));
        QCOMPARE(back->snapshot.errors.first().message, QStringLiteral("connection refused"));
    }

    void goldenGhzReportWithDetails()
    {
        const QString path = QFINDTESTDATA("data/ghz-report.json");
        QVERIFY(!path.isEmpty());
        QString error;
        const std::optional<RunRecord> run = importRunFile(path, &error);
        QVERIFY2(run, qPrintable(error));
        const RunSnapshot &s = run->snapshot;
        QCOMPARE(s.callsCompleted(), uint64_t(40));
        QCOMPARE(s.callsOk(), uint64_t(37));
        QCOMPARE(s.statusCounts[CallStatus::Unavailable], uint64_t(2));
        QCOMPARE(s.statusCounts[CallStatus::DeadlineExceeded], uint64_t(1));
        LatencyHistogram all = s.latency;
        all.merge(s.errorLatency);
        QCOMPARE(all.mean(), 11895543.0); // ghz's "average", exactly: the details are every call
        QCOMPARE(s.elapsed.count(), qint64(61487291));
        QCOMPARE(s.latency.min(), uint64_t(readJson(path).value(QStringLiteral("fastest")).toInteger()));
        QCOMPARE(s.latency.max(), uint64_t(readJson(path).value(QStringLiteral("slowest")).toInteger()));
        QCOMPARE(run->rawSamples.size(), size_t(40));
        QCOMPARE(run->method, QStringLiteral("helloworld.Greeter/SayHello"));
        QCOMPARE(run->target, QStringLiteral("localhost:50051"));
        QCOMPARE(run->origin, QStringLiteral("ghz: ghz-report.json"));
        QVERIFY(!run->labels.contains(QStringLiteral("approximate")));
        QCOMPARE(run->endedAt, QDateTime(QDate(2024, 3, 12), QTime(15, 15, 30), Qt::UTC));
        QCOMPARE(s.errors.size(), 2);
        QCOMPARE(s.errors.first().count, uint64_t(2));
        QCOMPARE(s.errors.first().status, static_cast<int>(CallStatus::Unavailable));
        // Raw samples are ordered by send time and start at 0.
        QCOMPARE(run->rawSamples.front().sentNs, uint64_t(0));
        for (size_t i = 1; i < run->rawSamples.size(); ++i)
            QVERIFY(run->rawSamples[i].sentNs >= run->rawSamples[i - 1].sentNs);
    }

    void goldenGhzReportWithoutDetails()
    {
        const QString path = QFINDTESTDATA("data/ghz-report-nodetails.json");
        QVERIFY(!path.isEmpty());
        QString error;
        const std::optional<RunRecord> run = importRunFile(path, &error);
        QVERIFY2(run, qPrintable(error));
        const RunSnapshot &s = run->snapshot;
        QCOMPARE(s.callsCompleted(), uint64_t(2000));
        QCOMPARE(s.callsOk(), uint64_t(1990));
        QCOMPARE(s.statusCounts[CallStatus::DeadlineExceeded], uint64_t(10));
        QCOMPARE(s.latency.min(), uint64_t(733196));
        QCOMPARE(s.latency.max(), uint64_t(8202207));
        LatencyHistogram all = s.latency;
        all.merge(s.errorLatency);
        QVERIFY2(std::abs(all.mean() - 2605180.0) < 1.0, qPrintable(QString::number(all.mean(), 'f', 3)));
        QVERIFY(near(s.requestsPerSecond(), 1974.58013599198, 1e-9));
        const QJsonArray distribution = readJson(path).value(QStringLiteral("latencyDistribution")).toArray();
        for (const QJsonValue &v : distribution) {
            const double p = v.toObject().value(QStringLiteral("percentage")).toDouble();
            const double expected = v.toObject().value(QStringLiteral("latency")).toDouble();
            QVERIFY2(near(static_cast<double>(s.latency.percentile(p)), expected, 0.03),
                qPrintable(QStringLiteral("p%1: %2 vs %3").arg(p).arg(s.latency.percentile(p)).arg(expected)));
        }
        QCOMPARE(run->origin, QStringLiteral("ghz: ghz-report-nodetails.json (approximate: no details)"));
        QVERIFY(run->labels.contains(QStringLiteral("approximate")));
        QVERIFY(run->rawSamples.empty());
    }

    // Found by tests/fuzz/fuzz_runimport: times outside int64 nanoseconds overflowed (undefined behaviour).
    void ghzTimesPastInt64NanosecondsAreRefused_data()
    {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QString>("error");
        const QByteArray empty = R"("count": 0, "statusCodeDistribution": {}, "latencyDistribution": null)";
        QTest::newRow("date in 4048") << QByteArray(R"({"total": 5, "date": "4048-03-12T10:15:30Z", )" + empty
            + "}") << QStringLiteral("date: 4048-03-12T10:15:30Z is out of range (years 1678 to 2261)");
        QTest::newRow("started before 1678")
            << QByteArray(R"({"total": 9e18, "date": "1700-01-01T00:00:00Z", )" + empty + "}")
            << QStringLiteral("total: 9e+18 ns before the date is before the year 1678");
        QTest::newRow("details in 4048") << QByteArray(
            R"({"count": 1, "total": 5, "statusCodeDistribution": {"OK": 1}, "latencyDistribution": null,
                "details": [{"timestamp": "4048-03-12T10:15:30.1Z", "latency": 5, "error": "", "status": "OK"}]})")
                                         << QStringLiteral(
                                                "details[0].timestamp: 4048-03-12T10:15:30.1Z is out of range (years "
                                                "1678 to 2261)");
        // Found by fuzz_runimport: a latency past 2^53 ns imported, then its own JSON report did not (no JSON number
        // carries it exactly).
        QTest::newRow("latency of 143 days")
            << QByteArray(
                   R"({"count": 1, "total": 5, "statusCodeDistribution": {"OK": 1}, "latencyDistribution": null,
                "details": [{"latency": 12327590000000000, "error": "", "status": "OK"}]})")
            << QStringLiteral("details[0].latency: 1.23276e+16 ns is out of range for a latency "
                              "(at most 2^53 ns, 104 days)");
        QTest::newRow("slowest of 143 days")
            << QByteArray(
                   R"({"count": 1, "total": 5, "fastest": 1, "slowest": 1.2e16, "statusCodeDistribution": {"OK": 1}})")
            << QStringLiteral("slowest: 1.2e+16 ns is out of range for a latency (at most 2^53 "
                              "ns, 104 days)");
        // Counts past 2^53, or adding up past it (they wrapped at 2^64 and the history held failed = -4.5e17).
        QTest::newRow("count past 2^53") << QByteArray(
            R"({"count": 1e19, "total": 5, "statusCodeDistribution": {"OK": 1e19}, "latencyDistribution": null})")
                                         << QStringLiteral("count: 1e+19 is out of range (at most 9.2e18)");
        QTest::newRow("count of 2^53 + 2") << QByteArray(
            R"({"count": 9007199254740994, "total": 5, "statusCodeDistribution": {}, "latencyDistribution": null})")
                                           << QStringLiteral("count: 9.0072e+15 is out of range (at most 2^53, the "
                                                             "largest whole number JSON carries exactly)");
        QTest::newRow("statuses adding up past 2^53")
            << QByteArray(R"({"count": 9007199254740992, "total": 5, "latencyDistribution": null,
                "statusCodeDistribution": {"OK": 9007199254740992, "Unavailable": 9007199254740992}})")
            << QStringLiteral("statusCodeDistribution: the counts add up to more than 2^53");
        QTest::newRow("errors adding up past 2^53")
            << QByteArray(R"({"count": 9007199254740992, "total": 5, "latencyDistribution": null,
                "errorDistribution": {"rpc error: code = Unavailable desc = a": 9007199254740992,
                                      "rpc error: code = Unavailable desc = b": 9007199254740992}})")
            << QStringLiteral("errorDistribution: the counts add up to more than 2^53");
    }
    void ghzTimesPastInt64NanosecondsAreRefused()
    {
        QFETCH(QByteArray, json);
        QFETCH(QString, error);
        QString why;
        QVERIFY(!importRunJson(json, QStringLiteral("g.json"), &why));
        QCOMPARE(why, error);
    }

    void brokenGhzReportNamesTheField()
    {
        QString error;
        QVERIFY(!importRunFile(QFINDTESTDATA("data/ghz-broken-latency.json"), &error));
        QCOMPARE(error, QStringLiteral("latencyDistribution[2].latency: expected a number"));
        QVERIFY(
            !importRunJson("{\"count\": 3, \"total\": 1, \"statusCodeDistribution\": {\"OK\": 2}}", QString(), &error));
        QVERIFY2(error.startsWith(QStringLiteral("statusCodeDistribution: ")), qPrintable(error));
        // A run in which no call completed is valid and not approximate: there is nothing to approximate.
        const std::optional<RunRecord> empty = importRunJson(
            "{\"count\": 0, \"total\": 5000000, \"statusCodeDistribution\": {}, \"latencyDistribution\": null}",
            QStringLiteral("empty.json"), &error);
        QVERIFY2(empty, qPrintable(error));
        QCOMPARE(empty->snapshot.callsCompleted(), uint64_t(0));
        QCOMPARE(empty->origin, QStringLiteral("ghz: empty.json"));
        // Found by fuzz_runimport: more errors than failed calls was accepted, then its own JSON export was refused.
        QVERIFY(!importRunJson(R"({"count": 3, "total": 5, "statusCodeDistribution": {"OK": 2, "Unavailable": 1},
            "errorDistribution": {"rpc error: code = Unavailable desc = down": 2}})",
            QString(), &error));
        QCOMPARE(error,
            QStringLiteral(
                "errorDistribution: the counts add up to 2, more than the 1 failed calls in statusCodeDistribution"));
        // ... and the same when the details, which then decide the statuses, hold fewer failures (fuzz_runimport).
        QVERIFY(!importRunJson(R"({"count": 2, "total": 5, "statusCodeDistribution": {"OK": 1, "Unavailable": 1},
            "errorDistribution": {"rpc error: code = Unavailable desc = down": 1},
            "details": [{"latency": 5, "error": "", "status": "OK"}, {"latency": 5, "error": "", "status": "OK"}]})",
            QString(), &error));
        QCOMPARE(error,
            QStringLiteral("errorDistribution: the counts add up to 1, more than the 0 failed calls in details"));
        QVERIFY(!importRunJson("{\"hello\": 1}", QString(), &error));
        QVERIFY2(error.contains(QStringLiteral("neither a ghz report")), qPrintable(error));
        QVERIFY(!importRunJson("{\"count\": ", QString(), &error));
        QVERIFY2(error.startsWith(QStringLiteral("not JSON")), qPrintable(error));
        // A value too large says so (it is a number, and not below 0).
        QVERIFY(!importRunJson(
            "{\"count\": 1, \"total\": 1e30, \"statusCodeDistribution\": {\"OK\": 1}}", QString(), &error));
        QVERIFY2(error == QStringLiteral("total: 1e+30 is out of range (at most 9.2e18)"), qPrintable(error));
        QVERIFY(!importRunJson("{\"count\": -1, \"statusCodeDistribution\": {}}", QString(), &error));
        QVERIFY2(error.contains(QStringLiteral("expected a number >= 0, got -1")), qPrintable(error));
    }

    void statusNames()
    {
        QCOMPARE(statusFromName(QStringLiteral("Unavailable")), std::optional<int>(CallStatus::Unavailable));
        QCOMPARE(statusFromName(QStringLiteral("DEADLINE_EXCEEDED")), std::optional<int>(CallStatus::DeadlineExceeded));
        QCOMPARE(statusFromName(QStringLiteral("Canceled")), std::optional<int>(CallStatus::Cancelled));
        QCOMPARE(statusFromName(QStringLiteral("CANCELLED")), std::optional<int>(CallStatus::Cancelled));
        QCOMPARE(statusFromName(QStringLiteral("Code(15)")), std::optional<int>(CallStatus::DataLoss));
        QVERIFY(!statusFromName(QStringLiteral("Bogus")));
        QCOMPARE(ghzStatusName(CallStatus::DeadlineExceeded), QStringLiteral("DeadlineExceeded"));
        QCOMPARE(ghzStatusName(CallStatus::DecodeError), QStringLiteral("Internal"));
    }

    void hgrmParsesAsHdrHistogram()
    {
        const RunRecord run = sampleRun(QStringLiteral("h"), 5000, false);
        const QByteArray text = exportRun(run, ExportFormat::Hgrm, nullptr);
        QList<HgrmRow> rows;
        QStringList footer;
        QString error;
        QVERIFY2(parseHgrm(text, &rows, &footer, &error), qPrintable(error));
        QVERIFY(rows.size() > 20);
        for (qsizetype i = 0; i + 1 < rows.size(); ++i) {
            QCOMPARE(rows.at(i).columns, 4);
            if (i > 0) {
                QVERIFY2(rows.at(i).percentile > rows.at(i - 1).percentile, qPrintable(QString::number(i)));
                QVERIFY(rows.at(i).value >= rows.at(i - 1).value);
                QVERIFY(rows.at(i).totalCount >= rows.at(i - 1).totalCount);
            }
        }
        // The 100% row, like HdrHistogram's, has no 1/(1-Percentile).
        QCOMPARE(rows.last().columns, 3);
        QCOMPARE(rows.last().percentile, 1.0);
        QCOMPARE(rows.last().totalCount, run.snapshot.latency.count());
        QCOMPARE(rows.last().value, static_cast<double>(run.snapshot.latency.max()) / 1e6);
        QCOMPARE(footer.size(), 3);
        QVERIFY2(footer.at(0).startsWith(QStringLiteral("#[Mean    = "))
                && footer.at(0).contains(QStringLiteral(", StdDeviation   = ")),
            qPrintable(footer.at(0)));
        QVERIFY(footer.at(1).startsWith(QStringLiteral("#[Max     = ")));
        QVERIFY(footer.at(1).endsWith(QStringLiteral("Total count    =         4900]")));
        QCOMPARE(footer.at(2), QStringLiteral("#[Buckets =           42, SubBuckets     =          128]"));
    }

    void hgrmTicksHalveTheDistance()
    {
        LatencyHistogram h;
        for (uint64_t v = 1; v <= 100000; ++v)
            h.record(v * 1000);
        QList<HgrmRow> rows;
        QStringList footer;
        QString error;
        QVERIFY2(parseHgrm(histogramToHgrm(h), &rows, &footer, &error), qPrintable(error));
        const double expected[]
            = { 0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.775, 0.8, 0.825, 0.85, 0.875, 0.8875 };
        QVERIFY(rows.size() > static_cast<qsizetype>(std::size(expected)));
        for (size_t i = 0; i < std::size(expected); ++i)
            QVERIFY2(std::abs(rows.at(static_cast<qsizetype>(i)).percentile - expected[i]) < 1e-9,
                qPrintable(QStringLiteral("row %1: %2").arg(i).arg(rows.at(static_cast<qsizetype>(i)).percentile)));
        // Each row's value is where that share of the calls is reached: the median is ~50 ms.
        QVERIFY(near(rows.at(5).value, 50.0, 0.02));
        QCOMPARE(rows.last().totalCount, uint64_t(100000));
        // An empty histogram: header and footer only.
        rows.clear();
        footer.clear();
        QVERIFY(parseHgrm(histogramToHgrm(LatencyHistogram()), &rows, &footer, &error));
        QVERIFY(rows.isEmpty());
        QCOMPARE(footer.size(), 3);
    }

    void markdownTableRows()
    {
        RunRecord a = sampleRun(QStringLiteral("a | b"), 1000, false);
        RunRecord b = sampleRun(QStringLiteral("second"), 1000, false);
        b.id = 9;
        const QString table = runsMarkdownTable({ a, b });
        const QStringList lines = table.split(u'\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 4);
        const QRegularExpression unescapedBar(QStringLiteral("(?<!\\\\)\\|"));
        for (const QString &line : lines) {
            QVERIFY2(line.startsWith(QStringLiteral("| ")) || line.startsWith(QStringLiteral("|:")), qPrintable(line));
            QCOMPARE(line.count(unescapedBar), 11); // 10 columns
        }
        QVERIFY(lines.at(0).contains(QStringLiteral("| p99 |")));
        QVERIFY(lines.at(2).contains(QStringLiteral("#7 a \\| b")));
        QVERIFY(lines.at(2).contains(QStringLiteral("rpcscope 0.1.0, protobuf 3.21.12")));
        QVERIFY(lines.at(2).contains(QStringLiteral("20 (2.00%)")));
        QVERIFY(lines.at(2).contains(QStringLiteral("| 1000 | 400.0 |")));

        // A streaming run beside a unary one: four message columns (a server stream's first message apart from the
        // gaps after it), "-" for the unary run.
        b.snapshot.messagesReceived = 25000;
        b.snapshot.messagesSent = 1000;
        b.snapshot.messageLatency.record(300'000);
        b.snapshot.firstMessageLatency.record(2'000'000);
        const QStringList streamed = runsMarkdownTable({ a, b }).split(u'\n', Qt::SkipEmptyParts);
        for (const QString &line : streamed)
            QCOMPARE(line.count(unescapedBar), 15);
        QVERIFY(streamed.at(0).endsWith(QStringLiteral("| msg/s | 1st msg p50 | msg p50 | msg p99 |")));
        QVERIFY(streamed.at(2).endsWith(QStringLiteral("| - | - | - | - |")));
        QVERIFY2(streamed.at(3).endsWith(QStringLiteral("| 10000.0 | 2.00 ms | 300 us | 300 us |")),
            qPrintable(streamed.at(3)));

        const QByteArray compared = exportRuns({ a, b }, ExportFormat::Markdown, nullptr);
        QVERIFY(compared.startsWith("| Run |"));
        // Two plain runs: the comparison below the table says it cannot judge one run against one.
        QVERIFY2(compared.contains("inconclusive: one run per side"), compared.constData());
        QString error;
        QVERIFY(exportRuns({ a, b }, ExportFormat::Hgrm, &error).isEmpty());
        QVERIFY2(error.contains(QStringLiteral("one run")), qPrintable(error));
    }

    void formatsByName()
    {
        QCOMPARE(exportFormatNames().size(), 17);
        QCOMPARE(parseExportFormat(QStringLiteral("folded")), std::optional<ExportFormat>(ExportFormat::Folded));
        QCOMPARE(
            parseExportFormat(QStringLiteral("flamegraph")), std::optional<ExportFormat>(ExportFormat::FlameGraph));
        QVERIFY(isTextFormat(ExportFormat::FlameGraph));
        QVERIFY(supportsSeveralRuns(ExportFormat::FlameGraph)); // two runs: the differential graph
        for (const QString &name : exportFormatNames())
            QCOMPARE(exportFormatName(*parseExportFormat(name)), name);
        QCOMPARE(parseExportFormat(QStringLiteral("GHZ-JSON")), std::optional<ExportFormat>(ExportFormat::GhzJson));
        QVERIFY(!parseExportFormat(QStringLiteral("xml")));
        QVERIFY(isTextFormat(ExportFormat::Hgrm));
        QVERIFY(!isTextFormat(ExportFormat::Png));
        QCOMPARE(parseExportFormat(QStringLiteral("slide-png")), std::optional<ExportFormat>(ExportFormat::SlidePng));
        QVERIFY(!isTextFormat(ExportFormat::SlidePdf));
        QString error;
        QVERIFY(exportRun(sampleRun(QStringLiteral("p"), 10, false), ExportFormat::Pdf, &error).isEmpty());
        QVERIFY(!error.isEmpty());
        // The json format is the lossless report, which import reads back.
        const RunRecord run = sampleRun(QStringLiteral("j"), 100, true);
        const std::optional<RunRecord> back
            = importRunJson(exportRun(run, ExportFormat::Json, nullptr), QString(), &error);
        QVERIFY2(back, qPrintable(error));
        QCOMPARE(back->snapshot.latency, run.snapshot.latency);
        QCOMPARE(back->name, run.name);
        QCOMPARE(back->id, qint64(0));
    }

    void importedReportsMustAddUp()
    {
        // The issue's cases: a report whose numbers contradict each other is refused, naming the field, instead of
        // exporting failed = 18446744073709550616 and an error rate of 922337203685477632% later.
        const RunRecord run = sampleRun(QStringLiteral("j"), 2000, false);
        const QJsonObject good = QJsonDocument::fromJson(exportRun(run, ExportFormat::Json, nullptr)).object();
        auto withSnapshot = [&good](const std::function<void(QJsonObject &)> &edit) {
            QJsonObject report = good;
            QJsonObject snapshot = report.value(QStringLiteral("snapshot")).toObject();
            edit(snapshot);
            report.insert(QStringLiteral("snapshot"), snapshot);
            return QJsonDocument(report).toJson();
        };
        auto setOk = [](double ok) {
            return [ok](QJsonObject &s) {
                QJsonObject statuses = s.value(QStringLiteral("status_counts")).toObject();
                statuses.insert(QStringLiteral("OK"), ok);
                s.insert(QStringLiteral("status_counts"), statuses);
            };
        };
        QString error;
        QVERIFY2(importRunJson(withSnapshot([](QJsonObject &) {}), QString(), &error), qPrintable(error));
        const quint64 ok = run.snapshot.callsOk();
        QVERIFY(!importRunJson(withSnapshot(setOk(static_cast<double>(ok + 1000))), QString(), &error));
        QVERIFY2(error
                == QStringLiteral("snapshot.status_counts.OK: %1 OK calls, but the latency histogram holds %2")
                       .arg(ok + 1000)
                       .arg(ok),
            qPrintable(error));
        QVERIFY(!importRunJson(withSnapshot(setOk(1e300)), QString(), &error));
        QVERIFY2(error.startsWith(QStringLiteral("snapshot.status_counts.OK: ")), qPrintable(error));
        QVERIFY(!importRunJson(withSnapshot([](QJsonObject &s) {
            QJsonObject statuses = s.value(QStringLiteral("status_counts")).toObject();
            statuses.insert(QStringLiteral("UNAVAILABLE"), 5000);
            s.insert(QStringLiteral("status_counts"), statuses);
        }),
            QString(), &error));
        QVERIFY2(error.startsWith(QStringLiteral("snapshot.status_counts: ")), qPrintable(error));
        QVERIFY(!importRunJson(
            withSnapshot([](QJsonObject &s) { s.insert(QStringLiteral("client_cpu_s"), -3); }), QString(), &error));
        QVERIFY2(error.startsWith(QStringLiteral("snapshot.client_cpu_s: ")), qPrintable(error));
        QVERIFY(!importRunJson(withSnapshot([](QJsonObject &s) {
            s.insert(QStringLiteral("errors"),
                QJsonArray { QJsonObject { { QStringLiteral("status"), QStringLiteral("UNAVAILABLE") },
                    { QStringLiteral("message"), QStringLiteral("x") }, { QStringLiteral("count"), 1e9 } } });
        }),
            QString(), &error));
        QVERIFY2(error.startsWith(QStringLiteral("snapshot.errors: ")), qPrintable(error));
    }

    void writeFileAtomicallyFailsCleanly()
    {
        QTemporaryDir dir;
        const QString good = dir.filePath(QStringLiteral("out.csv"));
        QString error;
        QVERIFY2(writeOutputFile(good, "a,b\n", &error), qPrintable(error));
        QFile file(good);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(file.readAll(), QByteArray("a,b\n"));
        // A path under a regular file cannot be created, root or not.
        const QString bad = good + QStringLiteral("/nested/run.csv");
        QVERIFY(!writeOutputFile(bad, "x", &error));
        QVERIFY2(error.contains(bad), qPrintable(error));
        QVERIFY(!QFileInfo::exists(bad));
        const QString missing = dir.filePath(QStringLiteral("no/such/dir/run.json"));
        QVERIFY(!writeOutputFile(missing, "x", &error));
        QVERIFY2(error.startsWith(missing + QStringLiteral(": ")), qPrintable(error));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::NoDotAndDotDot | QDir::Hidden),
            QStringList { QStringLiteral("out.csv") });
    }

    void cliExportAndImport()
    {
        QTemporaryDir dir;
        const QString db = dir.filePath(QStringLiteral("runs.sqlite"));
        auto runCli = [&](const QStringList &arguments, QByteArray *stdOut = nullptr, QByteArray *stdErr = nullptr) {
            QProcess p;
            p.setWorkingDirectory(dir.path());
            p.start(cli(), arguments);
            if (!p.waitForFinished(120000))
                return -1;
            if (stdOut)
                *stdOut = p.readAllStandardOutput();
            const QByteArray e = p.readAllStandardError();
            if (stdErr)
                *stdErr = e;
            return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
        };
        QByteArray output;
        QByteArray errors;
        QCOMPARE(runCli({ QStringLiteral("run"), QStringLiteral("--builtin"), QStringLiteral("--call"),
                            QStringLiteral("rpcscope.bench.v1.Bench/Echo"), QStringLiteral("-n"), QStringLiteral("500"),
                            QStringLiteral("--db"), db },
                     &output, &errors),
            0);
        const QString csv = dir.filePath(QStringLiteral("a.csv"));
        const QString json = dir.filePath(QStringLiteral("a.json"));
        const QString hgrm = dir.filePath(QStringLiteral("a.hgrm"));
        const QString ghz = dir.filePath(QStringLiteral("g.json"));
        const int exported
            = runCli({ QStringLiteral("export"), QStringLiteral("1"), QStringLiteral("--db"), db, QStringLiteral("-O"),
                         QStringLiteral("csv"), QStringLiteral("-o"), csv, QStringLiteral("-O"), QStringLiteral("json"),
                         QStringLiteral("-o"), json, QStringLiteral("-O"), QStringLiteral("hgrm"), QStringLiteral("-o"),
                         hgrm, QStringLiteral("-O"), QStringLiteral("ghz-json"), QStringLiteral("-o"), ghz },
                &output, &errors);
        QVERIFY2(exported == 0,
            qPrintable(QStringLiteral("export exited %1 (is 'export' dispatched by cliapp.cpp?): ").arg(exported)
                + QString::fromUtf8(errors)));
        QFile csvFile(csv);
        QVERIFY(csvFile.open(QIODevice::ReadOnly));
        const QList<QStringList> rows = parseCsvOrFail(csvFile.readAll());
        QCOMPARE(rows.size(), 2);
        QCOMPARE(rows.at(1).at(rows.at(0).indexOf(QStringLiteral("count"))), QStringLiteral("500"));
        QCOMPARE(readJson(json).value(QStringLiteral("format")).toString(), QStringLiteral("rpcscope-run"));
        QCOMPARE(readJson(ghz).value(QStringLiteral("count")).toInt(), 500);
        QFile hgrmFile(hgrm);
        QVERIFY(hgrmFile.open(QIODevice::ReadOnly));
        QList<HgrmRow> hgrmRows;
        QStringList footer;
        QString error;
        QVERIFY2(parseHgrm(hgrmFile.readAll(), &hgrmRows, &footer, &error), qPrintable(error));
        QCOMPARE(hgrmRows.last().totalCount, uint64_t(500));

        QCOMPARE(
            runCli({ QStringLiteral("export"), QStringLiteral("1"), QStringLiteral("--db"), db, QStringLiteral("-O"),
                       QStringLiteral("markdown"), QStringLiteral("-o"), QStringLiteral("-") },
                &output, &errors),
            0);
        QVERIFY2(output.startsWith("| Run |"), output.constData());
        QCOMPARE(runCli({ QStringLiteral("export"), QStringLiteral("1"), QStringLiteral("--db"), db,
                            QStringLiteral("-O"), QStringLiteral("csv") },
                     &output, &errors),
            0);
        QVERIFY2(output.startsWith("id,name,labels,"), output.constData());
        // Charts are drawn offscreen by the CLI too; a chart name it does not know is refused and writes nothing.
        QCOMPARE(
            runCli({ QStringLiteral("export"), QStringLiteral("1"), QStringLiteral("--db"), db, QStringLiteral("-O"),
                       QStringLiteral("png"), QStringLiteral("-o"), dir.filePath(QStringLiteral("a.png")) },
                &output, &errors),
            0);
        QVERIFY(QFileInfo(dir.filePath(QStringLiteral("a.png"))).size() > 10000);
        QCOMPARE(runCli({ QStringLiteral("export"), QStringLiteral("1"), QStringLiteral("--db"), db,
                            QStringLiteral("-O"), QStringLiteral("svg"), QStringLiteral("-o"),
                            dir.filePath(QStringLiteral("b.svg")), QStringLiteral("--chart"), QStringLiteral("pie") },
                     &output, &errors),
            2);
        QVERIFY2(errors.contains("--chart"), errors.constData());
        QVERIFY(!QFileInfo::exists(dir.filePath(QStringLiteral("b.svg"))));
        // csv-raw cannot be made (no raw samples recorded): the csv before it is not written either.
        const QString first = dir.filePath(QStringLiteral("first.csv"));
        QCOMPARE(
            runCli({ QStringLiteral("export"), QStringLiteral("1"), QStringLiteral("--db"), db, QStringLiteral("-O"),
                       QStringLiteral("csv"), QStringLiteral("-o"), first, QStringLiteral("-O"),
                       QStringLiteral("csv-raw"), QStringLiteral("-o"), dir.filePath(QStringLiteral("raw.csv")) },
                &output, &errors),
            2);
        QVERIFY2(errors.contains("raw samples"), errors.constData());
        QVERIFY(!QFileInfo::exists(first));
        const QString unwritable = csv + QStringLiteral("/under-a-file.json");
        QCOMPARE(runCli({ QStringLiteral("export"), QStringLiteral("1"), QStringLiteral("--db"), db,
                            QStringLiteral("-O"), QStringLiteral("json"), QStringLiteral("-o"), unwritable },
                     &output, &errors),
            2);
        QVERIFY2(errors.contains(unwritable.toUtf8()), errors.constData());

        QCOMPARE(runCli({ QStringLiteral("import"), ghz, QStringLiteral("--db"), db }, &output, &errors), 0);
        QVERIFY2(output.contains(QByteArray("imported " + ghz.toUtf8() + " as run #2")), output.constData());
        {
            RunStore store;
            QVERIFY2(store.open(db, &error), qPrintable(error));
            const std::optional<RunRecord> run = store.load(2, &error);
            QVERIFY2(run, qPrintable(error));
            QCOMPARE(run->snapshot.callsCompleted(), uint64_t(500));
            QCOMPARE(run->origin, QStringLiteral("ghz: g.json (approximate: no details)"));
            QVERIFY(!run->snapshot.hasClientStats()); // ghz does not report its own CPU or memory
        }
        // Shown as unknown, not as 0 us and 0 B.
        QCOMPARE(runCli({ QStringLiteral("history"), QStringLiteral("show"), QStringLiteral("2"),
                            QStringLiteral("--db"), db },
                     &output, &errors),
            0);
        QVERIFY2(output.contains("Client CPU:\t- (not measured), peak RSS -"), output.constData());
        QVERIFY2(!output.contains("0.0 us/call"), output.constData());
        QCOMPARE(runCli({ QStringLiteral("export"), QStringLiteral("2"), QStringLiteral("--db"), db,
                            QStringLiteral("-O"), QStringLiteral("html"), QStringLiteral("-o"), QStringLiteral("-") },
                     &output, &errors),
            0);
        QVERIFY2(output.contains("<td>Client CPU/call</td><td class=\"num\">-</td>")
                || output.contains("Client CPU/call</th><td class=\"num\">-</td>"),
            output.mid(output.indexOf("Client CPU/call") - 20, 200).constData());

        // A broken file is named with its field; the good one beside it is still imported.
        const QString broken = dir.filePath(QStringLiteral("broken.json"));
        QVERIFY(QFile::copy(QFINDTESTDATA("data/ghz-broken-latency.json"), broken));
        QCOMPARE(runCli({ QStringLiteral("import"), broken, json, QStringLiteral("--db"), db, QStringLiteral("--label"),
                            QStringLiteral("again") },
                     &output, &errors),
            2);
        QVERIFY2(errors.contains(QByteArray(broken.toUtf8() + ": latencyDistribution[2].latency: expected a number")),
            errors.constData());
        QVERIFY2(output.contains("as run #3"), output.constData());
    }

    void ghzJsonOfARunFromFarAway()
    {
        // A history is read as it is: a run dated where nanoseconds since 1970 overflow 64 bits (found by
        // fuzz_runimport) exports with its times held in range rather than with undefined arithmetic.
        RunRecord run = sampleRun(QStringLiteral("far"), 100, true);
        run.startedAt = QDateTime(QDate(4813, 1, 2), QTime(3, 4, 5), Qt::UTC);
        run.endedAt = QDateTime(QDate(9999, 12, 31), QTime(23, 59, 59), Qt::UTC);
        const QJsonObject ghz = runToGhzJson(run);
        QVERIFY(ghz.value(QStringLiteral("date")).toString().endsWith(u'Z'));
        QVERIFY(!ghz.value(QStringLiteral("details")).toArray().isEmpty());
        run.startedAt = QDateTime(QDate(1, 1, 1), QTime(0, 0), Qt::UTC);
        run.endedAt = QDateTime();
        QVERIFY(runToGhzJson(run).value(QStringLiteral("date")).toString().endsWith(u'Z'));
    }

    void summarySaysHowCoarseServerCpuIs()
    {
        // Another process's CPU read from its nanosecond clock: exact, no caveat even over 100 calls.
        RunSnapshot s;
        s.hasServerStats = true;
        s.serverCpuSeconds = 0.05;
        s.statusCounts[CallStatus::Ok] = 100;
        for (int i = 0; i < 100; ++i)
            s.latency.record(1'000'000);
        s.elapsed = std::chrono::seconds(1);
        QString text = formatTextSummary(s);
        QVERIFY2(text.contains(QStringLiteral("Server CPU:\t500.0 us/call (0.05 s in all)")), qPrintable(text));
        // When only clock ticks could be read, the per-call figure is coarse over 100 calls, and says so.
        s.serverCpuInTicks = true;
        text = formatTextSummary(s);
        QVERIFY2(text.contains(QStringLiteral("Server CPU:\t500.0 us/call (+/- ")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("ms clock ticks; more calls make it finer)")), qPrintable(text));
        // Over a million calls a tick is nothing next to the figure: no caveat.
        s.statusCounts[CallStatus::Ok] = 1'000'000;
        s.latency.reset();
        for (int i = 0; i < 1'000'000; ++i)
            s.latency.record(1'000'000);
        s.serverCpuSeconds = 500;
        text = formatTextSummary(s);
        QVERIFY2(text.contains(QStringLiteral("Server CPU:\t500.0 us/call (500.00 s in all)")), qPrintable(text));
    }

    void cleanupTestCase() { QLocale::setDefault(QLocale::c()); }
};

QTEST_GUILESS_MAIN(ExportTest)
#include "tst_export.moc"
