// A run split over worker processes (run --segment I/N --start-at) against one built-in server on 127.0.0.1, and
// `rpcscope-cli merge` putting their reports back together: what a Kubernetes Indexed Job does over a cluster
// (packaging/kubernetes), here on one machine.
#include "cliprocess.h"
#include "export/exporter.h"
#include "server/builtingrpcserver.h"
#include "store/runrecord.h"

#include <QDateTime>
#include <QDir>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <memory>
#include <vector>

using namespace rpcscope;

class TestCliSplit : public QObject {
    Q_OBJECT

    BuiltinGrpcServer m_server;
    QTemporaryDir m_dir;

    using Result = CliResult;
    static Result cli(const QStringList &arguments, int timeoutMs = 60000)
    {
        return runCliProcess(arguments, timeoutMs);
    }

    /// The open-loop plan the tests split: 1500 calls of Sum at 1500/s (one second), at most 16 in flight.
    QStringList plan() const
    {
        return { m_server.address(), QStringLiteral("--insecure"), QStringLiteral("--call"),
            QStringLiteral("rpcscope.bench.v1.Bench/Sum"), QStringLiteral("-d"), QStringLiteral(R"({"nums":[1,2,3]})"),
            QStringLiteral("--rps"), QStringLiteral("1500"), QStringLiteral("-n"), QStringLiteral("1500"),
            QStringLiteral("-c"), QStringLiteral("16"), QStringLiteral("--interval"), QStringLiteral("250ms") };
    }

    /// Runs the plan as @p workers processes at once (segments 0..workers-1), their reports in @p folder.
    QList<Result> runSegments(int workers, const QString &folder)
    {
        QDir().mkpath(folder);
        // A start time far enough ahead for every process to have started and connected, also on a busy machine under
        // ASan (1.5 s was not: a worker that started late began its timed phase 162 ms after the others, in a clean-
        // clone CI run beside the Chromium report test).
        const QString startAt = QString::number(QDateTime::currentMSecsSinceEpoch() / 1000.0 + 4.0, 'f', 3);
        std::vector<std::unique_ptr<QProcess>> processes;
        for (int i = 0; i < workers; ++i) {
            auto process = std::make_unique<QProcess>();
            process->start(QStringLiteral(RPCSCOPE_CLI),
                QStringList { QStringLiteral("run") } + plan()
                    + QStringList { QStringLiteral("--segment"), QStringLiteral("%1/%2").arg(i).arg(workers),
                        QStringLiteral("--start-at"), startAt, QStringLiteral("-O"), QStringLiteral("json"),
                        QStringLiteral("-o"), QStringLiteral("%1/segment-%2.json").arg(folder).arg(i) });
            processes.push_back(std::move(process));
        }
        QList<Result> results;
        for (auto &process : processes) {
            if (!process->waitForFinished(60000))
                process->kill();
            results.append({ process->exitCode(), QString::fromUtf8(process->readAllStandardOutput()),
                QString::fromUtf8(process->readAllStandardError()) });
        }
        return results;
    }

    static RunRecord readRun(const QString &path)
    {
        QString error;
        const std::optional<RunRecord> run = importRunFile(path, &error);
        if (!run)
            qFatal("%s: %s", qPrintable(path), qPrintable(error));
        return *run;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        QString error;
        QVERIFY2(m_server.start(QStringLiteral("127.0.0.1"), 0, 0, &error), qPrintable(error));
    }

    void fourWorkersMergeIntoTheWholeRun()
    {
        const QString folder = m_dir.filePath(QStringLiteral("four"));
        const QList<Result> workers = runSegments(4, folder);
        for (const Result &r : workers)
            QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QString merged = m_dir.filePath(QStringLiteral("merged.json"));
        const Result m = cli({ QStringLiteral("merge"), folder, QStringLiteral("-o"), merged });
        QVERIFY2(m.exitCode == 0, qPrintable(m.err));
        QVERIFY2(m.out.contains(QStringLiteral("Count:\t1500")), qPrintable(m.out));
        QVERIFY2(m.out.contains(QStringLiteral("Workers (4 of 4):")), qPrintable(m.out));

        const RunRecord run = readRun(merged);
        QCOMPARE(run.snapshot.callsOk(), 1500ULL);
        QCOMPARE(run.snapshot.callsSent, 1500ULL);
        QCOMPARE(run.split.count, 4);
        QCOMPARE(run.split.workers.size(), 4);
        QVERIFY(!run.scenario.value(QStringLiteral("load")).toObject().contains(QStringLiteral("segment")));
        LatencyHistogram parts;
        int64_t firstStart = INT64_MAX;
        int64_t lastStart = 0;
        for (int i = 0; i < 4; ++i) {
            const RunRecord part = readRun(QStringLiteral("%1/segment-%2.json").arg(folder).arg(i));
            QCOMPARE(part.split.workers.size(), 1);
            QCOMPARE(part.split.workers[0].index, i);
            QCOMPARE(part.split.planId, run.split.planId);
            QCOMPARE(part.snapshot.callsOk(), 375ULL); // 1500 / 4, at the whole plan's times
            parts.merge(part.snapshot.latency);
            firstStart = std::min(firstStart, part.snapshot.timedStartUnixUs);
            lastStart = std::max(lastStart, part.snapshot.timedStartUnixUs);
            QVERIFY(!part.snapshot.timeline.isEmpty() && !part.snapshot.timeline[0].okBuckets.empty());
        }
        QVERIFY2(run.snapshot.latency == parts, "the merged histogram is the sum of the parts, exactly");
        // Lined up by the start time: the workers' timed phases began within 100 ms of each other.
        QVERIFY2(lastStart - firstStart < 100000, qPrintable(QString::number(lastStart - firstStart)));
        // Time series on the wall clock: intervals of 250 ms covering the second, calls adding up.
        uint64_t calls = 0;
        for (const IntervalPoint &p : run.snapshot.timeline)
            calls += p.calls;
        QCOMPARE(calls, 1500ULL);
        QVERIFY2(run.snapshot.timeline.size() >= 4 && run.snapshot.timeline.size() <= 6,
            qPrintable(QString::number(run.snapshot.timeline.size())));
        // The open-loop rate split over four workers is the whole rate: 1500 calls over about one second.
        const double rps = run.snapshot.requestsPerSecond();
        QVERIFY2(rps > 1500 * 0.9 && rps < 1500 * 1.1, qPrintable(QString::number(rps)));
        QVERIFY2(run.snapshot.intendedCalls == 1500.0, qPrintable(QString::number(run.snapshot.intendedCalls)));

        // One process running the whole plan: the same load, the same throughput within a few percent.
        const QString single = m_dir.filePath(QStringLiteral("single.json"));
        const Result one = cli(QStringList { QStringLiteral("run") } + plan()
            + QStringList { QStringLiteral("-O"), QStringLiteral("json"), QStringLiteral("-o"), single });
        QVERIFY2(one.exitCode == 0, qPrintable(one.err));
        const RunRecord whole = readRun(single);
        QCOMPARE(whole.snapshot.callsOk(), 1500ULL);
        const double ratio = rps / whole.snapshot.requestsPerSecond();
        QVERIFY2(ratio > 0.95 && ratio < 1.05,
            qPrintable(
                QStringLiteral("merged %1/s, one process %2/s").arg(rps).arg(whole.snapshot.requestsPerSecond())));
    }

    void mergeRefusesMissingAndDuplicateSegments()
    {
        const QString folder = m_dir.filePath(QStringLiteral("three"));
        const QList<Result> workers = runSegments(3, folder);
        for (const Result &r : workers)
            QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QString first = folder + QStringLiteral("/segment-0.json");
        const QString third = folder + QStringLiteral("/segment-2.json");
        Result m = cli({ QStringLiteral("merge"), first, third });
        QCOMPARE(m.exitCode, 2);
        QVERIFY2(m.err.contains(QStringLiteral("segment 1/3 missing (of 3); merge what is there with --partial")),
            qPrintable(m.err));
        m = cli({ QStringLiteral("merge"), first, third, QStringLiteral("--partial") });
        QVERIFY2(m.exitCode == 0, qPrintable(m.err));
        QVERIFY2(m.out.contains(QStringLiteral("PARTIAL: segment(s) 1/3 missing")), qPrintable(m.out));
        QVERIFY2(m.out.contains(QStringLiteral("Count:\t1000")), qPrintable(m.out));
        m = cli({ QStringLiteral("merge"), first, first, third });
        QCOMPARE(m.exitCode, 2);
        QVERIFY2(m.err.contains(QStringLiteral("segment 0/3 is there twice")), qPrintable(m.err));
        // A segment of another plan (another request) is not part of this run.
        const QString other = m_dir.filePath(QStringLiteral("other.json"));
        const Result r = cli(QStringList { QStringLiteral("run") } + plan()
            + QStringList { QStringLiteral("-d"), QStringLiteral(R"({"nums":[4]})"), QStringLiteral("--segment"),
                QStringLiteral("1/3"), QStringLiteral("-O"), QStringLiteral("json"), QStringLiteral("-o"), other });
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        m = cli({ QStringLiteral("merge"), first, other, third });
        QCOMPARE(m.exitCode, 2);
        QVERIFY2(m.err.contains(QStringLiteral("ran different plans")), qPrintable(m.err));
    }

    void indivisiblePlansAndBadStartTimesAreRefused()
    {
        Result r = cli(QStringList { QStringLiteral("run") } + plan()
            + QStringList {
                QStringLiteral("-c"), QStringLiteral("3"), QStringLiteral("--segment"), QStringLiteral("0/4") });
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QStringLiteral("--segment"))
                && r.err.contains(QStringLiteral("a cap of 3 cannot be "
                                                 "split over 4 workers")),
            qPrintable(r.err));
        r = cli(QStringList { QStringLiteral("run") } + plan()
            + QStringList { QStringLiteral("--segment"), QStringLiteral("4/4") });
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QStringLiteral("segment 4 of 4 does not exist")), qPrintable(r.err));
        r = cli(QStringList { QStringLiteral("run") } + plan()
            + QStringList { QStringLiteral("--start-at"), QStringLiteral("2026-12-03T15:00:00") });
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QStringLiteral("--start-at")) && r.err.contains(QStringLiteral("has no time zone")),
            qPrintable(r.err));
    }
};

QTEST_GUILESS_MAIN(TestCliSplit)
#include "tst_clisplit.moc"
