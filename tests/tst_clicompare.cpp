// compare's logic in process: run groups from the history, and the verdict they get. The process tests (tst_cli)
// keep the exit codes and the printed shape.
#include "cli/cliapp.h"
#include "cli/comparecommand.h"

#include "report/comparereport.h"
#include "store/runstore.h"

#include <QTemporaryDir>
#include <QtTest>

#include <random>

using namespace rpcscope;
using namespace rpcscope::cli;

class TestCliCompare : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_path;
    RunStore m_store;

    /// Saves a finished run of @p calls latencies around @p medianUs (log-normal, seeded) with @p labels.
    qint64 save(double medianUs, const QStringList &labels, unsigned seed)
    {
        RunRecord run;
        run.method = QStringLiteral("rpcscope.bench.v1.Bench/Echo");
        run.transport = QStringLiteral("grpc");
        run.labels = labels;
        run.startedAt = QDateTime::currentDateTimeUtc();
        QString error;
        if (!m_store.beginRun(&run, &error))
            qFatal("beginRun: %s", qPrintable(error));
        RunSnapshot snapshot;
        snapshot.state = RunState::Finished;
        std::mt19937_64 rng(seed);
        std::lognormal_distribution<double> latency(std::log(medianUs * 1000), 0.2);
        for (int i = 0; i < 3000; ++i)
            snapshot.latency.record(static_cast<int64_t>(latency(rng)));
        snapshot.statusCounts[CallStatus::Ok] = 3000;
        snapshot.elapsed = std::chrono::seconds(1);
        if (!m_store.finishRun(run.id, snapshot, {}, QString::fromUtf16(RunStatus::Finished), &error))
            qFatal("finishRun: %s", qPrintable(error));
        return run.id;
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_path = m_dir.filePath(QStringLiteral("runs.sqlite"));
        QString error;
        QVERIFY2(m_store.open(m_path, &error), qPrintable(error));
        // Five runs before (about 100 us, each a little different, as runs are) and five after, 30% slower.
        for (unsigned i = 0; i < 5; ++i)
            save(100 * (1 + 0.02 * (i % 3)), { QStringLiteral("before") }, i);
        for (unsigned i = 0; i < 5; ++i)
            save(130 * (1 + 0.02 * ((i + 1) % 3)), { QStringLiteral("after") }, 100 + i);
    }

    void groupsNameTheirRuns()
    {
        QString error;
        const auto before = loadRunGroup(m_store, m_path, QStringLiteral("label:before"), &error);
        QVERIFY2(before, qPrintable(error));
        QCOMPARE(before->size(), 5);
        const auto listed = loadRunGroup(m_store, m_path, QStringLiteral("1,2,last"), &error);
        QVERIFY2(listed, qPrintable(error));
        QCOMPARE(listed->size(), 3);
        QCOMPARE(listed->last().id, qint64(10));
        const auto one = loadRunGroup(m_store, m_path, QStringLiteral("label:after~1"), &error);
        QVERIFY2(one, qPrintable(error));
        QCOMPARE(one->size(), 1); // label:NAME~N stays one run
        QVERIFY(!loadRunGroup(m_store, m_path, QStringLiteral("label:nope"), &error));
        QVERIFY2(error.contains(QStringLiteral("nope")), qPrintable(error));
        QVERIFY(!loadRunGroup(m_store, m_path, QStringLiteral("2,oops"), &error));
        QVERIFY2(error.contains(QStringLiteral("in \"2,oops\"")), qPrintable(error));
    }

    void severalRunsASideGetAVerdictAndOneRunDoesNot()
    {
        QString error;
        const auto before = loadRunGroup(m_store, m_path, QStringLiteral("label:before"), &error);
        const auto after = loadRunGroup(m_store, m_path, QStringLiteral("label:after"), &error);
        QVERIFY(before && after);
        CompareOptions options;
        const Comparison groups = printComparison(*before, *after, options, false);
        QCOMPARE(groups.overall, Verdict::Regression);
        // These runs measured no CPU or memory (as an imported report): unknown, never 0.
        for (const MetricRow &row : groups.rows) {
            if (row.kind == MetricKind::ClientCpuPerCall || row.kind == MetricKind::ClientPeakRss) {
                QCOMPARE(formatMetricValue(row.valueA, row.unit), QStringLiteral("-"));
                QCOMPARE(formatMetricDelta(row.delta, row.unit), QStringLiteral("-"));
            }
        }
        QCOMPARE(groups.replicatesA, qint64(5));
        QVERIFY2(groups.basis().contains(QStringLiteral("5 vs 5 runs")), qPrintable(groups.basis()));
        // One run against one run cannot know run-to-run noise: never a verdict on its own.
        const Comparison single = printComparison(before->first(), after->first(), options, false);
        QCOMPARE(single.overall, Verdict::Inconclusive);
        QVERIFY(single.singleRun);
        // A/A: the same group on both sides is refused, two halves of "before" are not a regression.
        const auto firstHalf = loadRunGroup(m_store, m_path, QStringLiteral("1,2"), &error);
        const auto secondHalf = loadRunGroup(m_store, m_path, QStringLiteral("3,4,5"), &error);
        QVERIFY(firstHalf && secondHalf);
        const Comparison same = printComparison(*firstHalf, *secondHalf, options, false);
        QVERIFY2(same.overall != Verdict::Regression && same.overall != Verdict::Improvement,
            qPrintable(same.verdictLine()));
    }
};

QTEST_GUILESS_MAIN(TestCliCompare)
#include "tst_clicompare.moc"
