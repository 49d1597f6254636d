// A plan split over N workers (--segment I/N): the shares, the per-segment plans, the start time, and the merge of
// the workers' reports into one run. The workers themselves, as processes, are in tst_clisplit.
#include "engine/loadengine.h"
#include "load/segment.h"
#include "store/segmentmerge.h"
#include "util/units.h"

#include <QtTest>

#include <random>
#include <set>

using namespace rpcscope;
using namespace std::chrono_literals;

namespace {

Segment segment(int index, int count)
{
    Segment s;
    s.index = index;
    s.count = count;
    return s;
}

/// A segment's report as `run --segment` writes it: @p calls OK calls of @p latencyNs each, started at @p startUs,
/// with one time-series interval per second (each holding its share of the calls).
RunRecord segmentRun(int index, int count, uint64_t calls, uint64_t latencyNs, int64_t startUs, int seconds = 2,
    const QString &plan = QStringLiteral("plan-a"))
{
    RunRecord run;
    run.method = QStringLiteral("rpcscope.bench.v1.Bench/Sum");
    run.transport = QStringLiteral("grpc");
    run.split.count = count;
    run.split.planId = plan;
    WorkerRecord worker;
    worker.index = index;
    worker.host = QStringLiteral("worker-%1").arg(index);
    run.split.workers << worker;
    RunSnapshot &s = run.snapshot;
    s.state = RunState::Finished;
    s.timedStartUnixUs = startUs;
    s.elapsed = std::chrono::seconds(seconds);
    s.clientCpuSeconds = 0.5;
    s.clientPeakRssBytes = 1000;
    for (int t = 0; t < seconds; ++t) {
        IntervalPoint p;
        p.endSeconds = t + 1;
        p.seconds = 1;
        LatencyHistogram interval;
        for (uint64_t k = 0; k < calls / static_cast<uint64_t>(seconds); ++k) {
            s.latency.record(latencyNs + k);
            interval.record(latencyNs + k);
        }
        p.calls = interval.count();
        p.p50 = interval.percentile(50);
        p.p99 = interval.percentile(99);
        p.okBuckets = interval.bucketCounts();
        p.okMinNs = interval.min();
        p.okMaxNs = interval.max();
        s.timeline.append(p);
    }
    s.statusCounts[CallStatus::Ok] = s.latency.count();
    return run;
}

} // namespace

class TestSegment : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void parsesSegments_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<int>("index");
        QTest::addColumn<int>("count");
        QTest::addColumn<QString>("error");
        QTest::newRow("first of four") << "0/4" << 0 << 4 << QString();
        QTest::newRow("last of four, spaced") << " 3 / 4 " << 3 << 4 << QString();
        QTest::newRow("whole") << "0/1" << 0 << 1 << QString();
        QTest::newRow("past the last") << "4/4" << -1 << -1
                                       << "segment 4 of 4 does not exist: segments are numbered 0 to 3";
        QTest::newRow("no workers") << "0/0" << -1 << -1 << "0 workers: expected 1 to 1000";
        QTest::newRow("too many") << "0/1001" << -1 << -1 << "1001 workers: expected 1 to 1000";
        QTest::newRow("negative") << "-1/4" << -1 << -1
                                  << "expected I/N, e.g. 0/4 for the first of four workers, got \"-1/4\"";
        QTest::newRow("one number") << "4" << -1 << -1
                                    << "expected I/N, e.g. 0/4 for the first of four workers, got \"4\"";
    }
    void parsesSegments()
    {
        QFETCH(QString, text);
        QFETCH(int, index);
        QFETCH(int, count);
        QFETCH(QString, error);
        QString why;
        const std::optional<Segment> s = Segment::parse(text, &why);
        QCOMPARE(s.has_value(), error.isEmpty());
        QCOMPARE(why, error);
        if (s) {
            QCOMPARE(s->index, index);
            QCOMPARE(s->count, count);
        }
    }

    void sharesAddUpToTheWhole()
    {
        std::mt19937_64 random(7);
        for (int n = 1; n <= 8; ++n) {
            for (int round = 0; round < 200; ++round) {
                const uint64_t total = round < 40 ? static_cast<uint64_t>(round) : random() % 1000000;
                uint64_t sum = 0;
                uint64_t least = UINT64_MAX;
                uint64_t most = 0;
                std::set<uint64_t> numbers;
                for (int i = 0; i < n; ++i) {
                    const uint64_t share = segment(i, n).share(total);
                    sum += share;
                    least = std::min(least, share);
                    most = std::max(most, share);
                    // Each segment's calls are numbered in the whole plan: together every number below total, once.
                    if (total <= 1000) {
                        for (uint64_t k = 0; k < share; ++k)
                            QVERIFY(numbers.insert(segment(i, n).globalNumber(k)).second);
                    }
                }
                QCOMPARE(sum, total);
                QVERIFY2(most - least <= 1, "remainders are spread, one each");
                if (total <= 1000) {
                    QCOMPARE(numbers.size(), size_t(total));
                    QVERIFY(numbers.empty() || *numbers.rbegin() == total - 1);
                }
            }
        }
    }

    void plansAreDividedExactly_data()
    {
        QTest::addColumn<bool>("openLoop");
        QTest::addColumn<bool>("schedule");
        QTest::addColumn<int>("concurrency");
        QTest::addColumn<quint64>("calls");
        QTest::addColumn<quint64>("warmup");
        QTest::newRow("closed loop") << false << false << 50 << quint64(10007) << quint64(0);
        QTest::newRow("closed loop with warm-up") << false << false << 13 << quint64(999) << quint64(101);
        QTest::newRow("closed loop by duration") << false << false << 8 << quint64(0) << quint64(0);
        QTest::newRow("open loop") << true << false << 100 << quint64(30001) << quint64(0);
        QTest::newRow("concurrency schedule") << false << true << 40 << quint64(0) << quint64(7);
    }
    void plansAreDividedExactly()
    {
        QFETCH(bool, openLoop);
        QFETCH(bool, schedule);
        QFETCH(int, concurrency);
        QFETCH(quint64, calls);
        QFETCH(quint64, warmup);
        LoadPlan whole;
        whole.concurrency = concurrency;
        whole.totalCalls = calls;
        whole.warmupCalls = warmup;
        whole.duration = calls == 0 ? 10s : 0s;
        if (openLoop) {
            whole.rate = RateSchedule {};
            whole.rate->kind = RateSchedule::Kind::Step;
            whole.rate->start = 100;
            whole.rate->step = 50;
            whole.rate->stepDuration = 1s;
        }
        if (schedule) {
            RateSchedule callers;
            callers.kind = RateSchedule::Kind::Line;
            callers.start = 1;
            callers.step = 3.5;
            callers.end = concurrency;
            whole.concurrencySchedule = callers;
        }
        for (int n = 1; n <= 8; ++n) {
            int callers = 0;
            uint64_t timed = 0;
            uint64_t warm = 0;
            for (int i = 0; i < n; ++i) {
                QString error;
                const std::optional<LoadPlan> part = segmentPlan(whole, segment(i, n), &error);
                QVERIFY2(part, qPrintable(error));
                QVERIFY(part->concurrency >= 1);
                QCOMPARE(part->segment, segment(i, n));
                QCOMPARE(part->duration, whole.duration); // every worker runs as long as the whole
                QCOMPARE(part->rate.has_value(), openLoop); // schedules stay whole: the engine shares them out
                QCOMPARE(part->concurrencySchedule.has_value(), schedule);
                callers += part->concurrency;
                timed += part->totalCalls;
                warm += part->warmupCalls;
            }
            QCOMPARE(callers, concurrency);
            QCOMPARE(timed, calls);
            QCOMPARE(warm, warmup);
        }
        // The open-loop schedule, shared by call number: by any time, the segments' intended calls add up to the
        // whole's (each segment sends the whole plan's calls I, I+N, ... at their own times).
        if (openLoop) {
            for (int n = 1; n <= 8; ++n) {
                for (const std::chrono::nanoseconds t : { 100ms, 1500ms, 4000ms }) {
                    uint64_t whole_k = 0;
                    while (whole.rate->intendedTime(whole_k) <= t)
                        ++whole_k;
                    uint64_t sum = 0;
                    for (int i = 0; i < n; ++i) {
                        uint64_t k = 0;
                        while (whole.rate->intendedTime(segment(i, n).globalNumber(k)) <= t)
                            ++k;
                        sum += k;
                    }
                    QCOMPARE(sum, whole_k);
                }
            }
        }
    }

    void indivisiblePlansAreRefused_data()
    {
        QTest::addColumn<int>("concurrency");
        QTest::addColumn<quint64>("calls");
        QTest::addColumn<bool>("openLoop");
        QTest::addColumn<QString>("error");
        QTest::newRow("3 callers over 4")
            << 3 << quint64(100) << false << "concurrency 3 cannot be split over 4 workers: each needs at least one";
        QTest::newRow("3 in flight over 4")
            << 3 << quint64(100) << true << "a cap of 3 cannot be split over 4 workers: each needs at least one";
        QTest::newRow("3 calls over 4") << 8 << quint64(3) << false
                                        << "3 calls cannot be split over 4 workers: each needs at least one";
    }
    void indivisiblePlansAreRefused()
    {
        QFETCH(int, concurrency);
        QFETCH(quint64, calls);
        QFETCH(bool, openLoop);
        QFETCH(QString, error);
        LoadPlan whole;
        whole.concurrency = concurrency;
        whole.totalCalls = calls;
        if (openLoop) {
            whole.rate = RateSchedule {};
            whole.rate->start = 100;
        }
        QString why;
        QVERIFY(!segmentPlan(whole, segment(1, 4), &why));
        QCOMPARE(why, error);
    }

    void readsWallClockTimes_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<qint64>("unixMs"); // -1: refused
        QTest::newRow("UTC") << "2026-12-03T15:00:00Z" << qint64(1796310000000);
        QTest::newRow("offset and fraction") << "2026-12-03T16:00:00.25+01:00" << qint64(1796310000250);
        QTest::newRow("Unix seconds") << "1796310000" << qint64(1796310000000);
        QTest::newRow("Unix seconds, fraction") << "1796310000.5" << qint64(1796310000500);
        QTest::newRow("no zone") << "2026-12-03T15:00:00" << qint64(-1);
        QTest::newRow("not a date") << "2026-13-03T15:00:00Z" << qint64(-1);
        QTest::newRow("words") << "tomorrow" << qint64(-1);
    }
    void readsWallClockTimes()
    {
        QFETCH(QString, text);
        QFETCH(qint64, unixMs);
        QString error;
        const auto t = parseWallTime(text, &error);
        QCOMPARE(t.has_value(), unixMs >= 0);
        if (t)
            QCOMPARE(std::chrono::duration_cast<std::chrono::milliseconds>(t->time_since_epoch()).count(), unixMs);
        else
            QVERIFY2(error.contains(text), qPrintable(error));
    }

    void mergeIsTheWholeRun()
    {
        // Four workers, the third 1 s late (its intervals land one interval later on the wall clock).
        const int64_t start = 1796310000000000;
        QList<SegmentReport> reports;
        for (int i = 0; i < 4; ++i)
            reports.append({ QStringLiteral("seg-%1.json").arg(i),
                segmentRun(i, 4, 200, 1000000 * (i + 1), start + (i == 2 ? 1000000 : 0) + i * 1000) });
        QString error;
        const std::optional<RunRecord> merged = mergeSegments(reports, false, &error);
        QVERIFY2(merged, qPrintable(error));
        const RunSnapshot &s = merged->snapshot;
        LatencyHistogram all;
        for (const SegmentReport &r : reports)
            all.merge(r.run.snapshot.latency);
        QVERIFY(s.latency == all); // exact: the percentiles are the whole run's
        QCOMPARE(s.callsOk(), 800ULL);
        QCOMPARE(s.clientCpuSeconds, 2.0);
        QCOMPARE(s.clientPeakRssBytes, 4000ULL);
        QCOMPARE(s.timedStartUnixUs, start);
        // From the first start to the last end: the late worker ran from 1 s to 3 s.
        QVERIFY2(std::abs(std::chrono::duration<double>(s.elapsed).count() - 3.001) < 1e-3,
            qPrintable(QString::number(s.elapsed.count())));
        // Three wall-clock intervals: the on-time workers' first second, both seconds overlapping, the late one's
        // last second.
        QCOMPARE(s.timeline.size(), 3);
        QCOMPARE(s.timeline[0].calls, 300ULL);
        QCOMPARE(s.timeline[1].calls, 400ULL);
        QCOMPARE(s.timeline[2].calls, 100ULL);
        uint64_t calls = 0;
        for (const IntervalPoint &p : s.timeline)
            calls += p.calls;
        QCOMPARE(calls, 800ULL);
        // An interval's percentiles come from its merged buckets: the late worker (3 ms) alone in the last one.
        QVERIFY2(s.timeline[2].p50 >= 3000000 && s.timeline[2].p50 < 3100000,
            qPrintable(QString::number(s.timeline[2].p50)));
        QVERIFY2(s.timeline[2].p99 < 3100000, qPrintable(QString::number(s.timeline[2].p99)));
        QVERIFY2(s.timeline[0].p99 >= 4000000, qPrintable(QString::number(s.timeline[0].p99))); // worker 3's 4 ms
        QCOMPARE(merged->split.count, 4);
        QCOMPARE(merged->split.workers.size(), 4);
        QCOMPARE(merged->split.workers[3].host, QStringLiteral("worker-3"));
        QCOMPARE(merged->split.workers[3].calls, 200ULL);
        QCOMPARE(merged->split.workers[3].p50Ns, reports[3].run.snapshot.latency.percentile(50));
        QVERIFY(!merged->split.partial);
    }

    void mergeRefusesWhatIsNotOneRun_data()
    {
        QTest::addColumn<QList<int>>("indexes"); // of 4
        QTest::addColumn<bool>("otherPlan"); // the last report is of another plan
        QTest::addColumn<bool>("partial");
        QTest::addColumn<QString>("error");
        QTest::newRow("missing") << QList<int> { 0, 1, 3 } << false << false
                                 << "segment 2/4 missing (of 4); merge what is there with --partial";
        QTest::newRow("two missing") << QList<int> { 0, 3 } << false << false
                                     << "segments 1/4, 2/4 missing (of 4); merge what is there with --partial";
        QTest::newRow("twice") << QList<int> { 0, 1, 1, 2, 3 } << false << false
                               << "segment 1/4 is there twice: seg-1.json and seg-2.json";
        QTest::newRow("another plan") << QList<int> { 0, 1, 2, 3 } << true << false
                                      << "seg-0.json (segment 0/4) and seg-3.json (segment 3/4) ran different plans "
                                         "(plan plan-a and plan-b): not one run";
        QTest::newRow("twice, even partial")
            << QList<int> { 0, 0 } << false << true << "segment 0/4 is there twice: seg-0.json and seg-1.json";
    }
    void mergeRefusesWhatIsNotOneRun()
    {
        QFETCH(QList<int>, indexes);
        QFETCH(bool, otherPlan);
        QFETCH(bool, partial);
        QFETCH(QString, error);
        QList<SegmentReport> reports;
        for (qsizetype k = 0; k < indexes.size(); ++k) {
            const bool other = otherPlan && k == indexes.size() - 1;
            reports.append({ QStringLiteral("seg-%1.json").arg(k),
                segmentRun(indexes[k], 4, 10, 1000, 1796310000000000, 1,
                    other ? QStringLiteral("plan-b") : QStringLiteral("plan-a")) });
        }
        QString why;
        QVERIFY(!mergeSegments(reports, partial, &why));
        QCOMPARE(why, error);
    }

    void mergeRefusesReportsThatAreNotSegments()
    {
        RunRecord plain = segmentRun(0, 4, 10, 1000, 1);
        plain.split = {};
        QString why;
        QVERIFY(!mergeSegments({ { QStringLiteral("plain.json"), plain } }, true, &why));
        QCOMPARE(why, QStringLiteral("plain.json is not a segment's report (its run had no --segment I/N)"));
        QList<SegmentReport> four;
        for (int i = 0; i < 4; ++i)
            four.append({ QStringLiteral("seg-%1.json").arg(i), segmentRun(i, 4, 10, 1000, 1) });
        const std::optional<RunRecord> merged = mergeSegments(four, false, &why);
        QVERIFY2(merged, qPrintable(why));
        QVERIFY(!mergeSegments({ { QStringLiteral("merged.json"), *merged } }, true, &why));
        QCOMPARE(why, QStringLiteral("merged.json is already a merge of 4 segments; merge the segments' own reports"));
        RunRecord other = segmentRun(1, 3, 10, 1000, 1);
        QVERIFY(!mergeSegments({ four[0], { QStringLiteral("three.json"), other } }, true, &why));
        QCOMPARE(why,
            QStringLiteral("seg-0.json (segment 0/4) splits its plan over 4 workers, but three.json (segment 1/3) over "
                           "3: not one run"));
    }

    void segmentsOfAnotherDayAreNotOneRun()
    {
        // The same plan run again a week later: the reports look alike, but they are not one run.
        QList<SegmentReport> reports;
        reports.append({ QStringLiteral("monday.json"), segmentRun(0, 2, 10, 1000, 1796310000000000) });
        reports.append({ QStringLiteral("next-monday.json"), segmentRun(1, 2, 10, 1000, 1796914800000000) });
        QString why;
        QVERIFY(!mergeSegments(reports, false, &why));
        QCOMPARE(
            why, QStringLiteral("the segments started 168.0 hours apart: not one run (its workers start together)"));
        // A time series that says it ends at 1e300 s merges without overflowing anything.
        reports[1].run.snapshot.timedStartUnixUs = 1796310000000000;
        reports[1].run.snapshot.timeline[0].endSeconds = 1e300;
        QVERIFY2(mergeSegments(reports, false, &why), qPrintable(why));
    }

    void partialMergeSaysWhatIsMissing()
    {
        QList<SegmentReport> reports;
        for (int i : { 0, 2 })
            reports.append({ QStringLiteral("seg-%1.json").arg(i), segmentRun(i, 4, 10, 1000, 1796310000000000) });
        QString why;
        const std::optional<RunRecord> merged = mergeSegments(reports, true, &why);
        QVERIFY2(merged, qPrintable(why));
        QVERIFY(merged->split.partial);
        QCOMPARE(merged->split.missing, (QList<int> { 1, 3 }));
        QVERIFY(merged->labels.contains(QStringLiteral("partial")));
        QCOMPARE(merged->snapshot.callsOk(), 20ULL);
    }
};

QTEST_GUILESS_MAIN(TestSegment)
#include "tst_segment.moc"
