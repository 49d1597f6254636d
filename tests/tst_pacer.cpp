// The pacer is a pure function: tables of (schedule, elapsed, sent) -> (due, wait, stop), no clock.
#include "load/pacer.h"

#include <QTest>

using namespace rpcscope;
using namespace std::chrono_literals;
using std::chrono::nanoseconds;

Q_DECLARE_METATYPE(rpcscope::RateSchedule)

namespace {
RateSchedule constant(double rps, nanoseconds max = 0ns)
{
    RateSchedule s;
    s.start = rps;
    s.maxDuration = max;
    return s;
}
RateSchedule step(double start, double step, double end, nanoseconds stepDuration, nanoseconds max = 0ns)
{
    RateSchedule s;
    s.kind = RateSchedule::Kind::Step;
    s.start = start;
    s.step = step;
    s.end = end;
    s.stepDuration = stepDuration;
    s.maxDuration = max;
    return s;
}
RateSchedule line(double start, double slope, double end, nanoseconds max = 0ns)
{
    RateSchedule s;
    s.kind = RateSchedule::Kind::Line;
    s.start = start;
    s.step = slope;
    s.end = end;
    s.maxDuration = max;
    return s;
}
} // namespace

class TestPacer : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void pace_data()
    {
        QTest::addColumn<RateSchedule>("schedule");
        QTest::addColumn<qint64>("elapsedNs");
        QTest::addColumn<quint64>("sent");
        QTest::addColumn<qint64>("dueNs");
        QTest::addColumn<qint64>("waitNs");
        QTest::addColumn<bool>("stop");

        // Constant 100/s: call k is due at k * 10 ms.
        QTest::newRow("const first call now")
            << constant(100) << qint64(0) << quint64(0) << qint64(0) << qint64(0) << false;
        QTest::newRow("const on time") << constant(100) << qint64(0) << quint64(1) << qint64(10'000'000)
                                       << qint64(10'000'000) << false;
        QTest::newRow("const mid-wait") << constant(100) << qint64(25'000'000) << quint64(3) << qint64(30'000'000)
                                        << qint64(5'000'000) << false;
        // Behind schedule: due in the past, no wait, and the due time is kept (latency counts from it).
        QTest::newRow("const behind") << constant(100) << qint64(95'000'000) << quint64(5) << qint64(50'000'000)
                                      << qint64(0) << false;
        QTest::newRow("const fractional")
            << constant(3) << qint64(0) << quint64(1) << qint64(333'333'333) << qint64(333'333'333) << false;
        // Max duration: a call due at or after it is never sent.
        QTest::newRow("const max reached")
            << constant(100, 1s) << qint64(0) << quint64(100) << qint64(0) << qint64(0) << true;
        QTest::newRow("const just before max")
            << constant(100, 1s) << qint64(0) << quint64(99) << qint64(990'000'000) << qint64(990'000'000) << false;

        // Step: 10/s for 1 s (calls 0-9), 20/s for 1 s (10-29), then 30/s, capped there: call 60 at 3 s, 120 at 5 s.
        QTest::newRow("step first block")
            << step(10, 10, 30, 1s) << qint64(0) << quint64(5) << qint64(500'000'000) << qint64(500'000'000) << false;
        QTest::newRow("step second block") << step(10, 10, 30, 1s) << qint64(0) << quint64(10) << qint64(1'000'000'000)
                                           << qint64(1'000'000'000) << false;
        QTest::newRow("step inside second") << step(10, 10, 30, 1s) << qint64(1'000'000'000) << quint64(15)
                                            << qint64(1'250'000'000) << qint64(250'000'000) << false;
        QTest::newRow("step capped at end") << step(10, 10, 30, 1s) << qint64(0) << quint64(60) << qint64(3'000'000'000)
                                            << qint64(3'000'000'000) << false;
        QTest::newRow("step capped later") << step(10, 10, 30, 1s) << qint64(0) << quint64(120) << qint64(5'000'000'000)
                                           << qint64(5'000'000'000) << false;
        // A falling step schedule that reaches zero stops.
        QTest::newRow("step down to zero")
            << step(20, -10, 0, 1s) << qint64(0) << quint64(30) << qint64(0) << qint64(0) << true;
        QTest::newRow("step down, still going") << step(20, -10, 0, 1s) << qint64(0) << quint64(25)
                                                << qint64(1'500'000'000) << qint64(1'500'000'000) << false;

        // Line: rate 10 + 10 t; calls by time t: 10t + 5t^2. By 1 s: 15 calls; by 2 s: 40.
        QTest::newRow("line 15 at 1s") << line(10, 10, 0) << qint64(0) << quint64(15) << qint64(1'000'000'000)
                                       << qint64(1'000'000'000) << false;
        QTest::newRow("line 40 at 2s") << line(10, 10, 0) << qint64(500'000'000) << quint64(40) << qint64(2'000'000'000)
                                       << qint64(1'500'000'000) << false;
        // Capped at 20/s from t = 1 s (15 calls by then), linear after: call 35 at 2 s.
        QTest::newRow("line capped") << line(10, 10, 20) << qint64(0) << quint64(35) << qint64(2'000'000'000)
                                     << qint64(2'000'000'000) << false;
        QTest::newRow("line max duration")
            << line(10, 10, 0, 1s) << qint64(0) << quint64(15) << qint64(0) << qint64(0) << true;
    }

    void pace()
    {
        QFETCH(RateSchedule, schedule);
        QFETCH(qint64, elapsedNs);
        QFETCH(quint64, sent);
        QFETCH(qint64, dueNs);
        QFETCH(qint64, waitNs);
        QFETCH(bool, stop);
        const PaceDecision d = rpcscope::pace(schedule, nanoseconds(elapsedNs), sent);
        QCOMPARE(d.stop, stop);
        if (!stop) {
            // Rounding to whole nanoseconds: allow 2 ns.
            QVERIFY2(std::abs(d.due.count() - dueNs) <= 2, qPrintable(QString::number(d.due.count())));
            QVERIFY2(std::abs(d.wait.count() - waitNs) <= 2, qPrintable(QString::number(d.wait.count())));
        }
    }

    void intendedTimesAreMonotonic()
    {
        for (const RateSchedule &s :
            { constant(1000), step(100, 50, 1000, 200ms), line(5, 100, 2000), line(500, -10, 100) }) {
            nanoseconds previous = -1ns;
            for (uint64_t k = 0; k < 20'000; ++k) {
                const nanoseconds t = s.intendedTime(k);
                QVERIFY(t >= previous);
                previous = t;
            }
        }
    }

    void rateAt()
    {
        QCOMPARE(step(10, 10, 30, 1s).rateAt(2500ms), 30.0);
        QCOMPARE(step(10, 10, 30, 1s).rateAt(1500ms), 20.0);
        QCOMPARE(line(10, 10, 0).rateAt(2s), 30.0);
        QCOMPARE(line(10, 10, 25).rateAt(2s), 25.0);
        QCOMPARE(line(20, -10, 0).rateAt(5s), 0.0);
    }

    void invalidSchedules()
    {
        QVERIFY(constant(0).problem());
        QVERIFY(constant(-5).problem());
        QVERIFY(!constant(5).problem());
        QVERIFY(step(10, 1, 0, 0s).problem());
        QVERIFY(line(0, 0, 0).problem());
        QVERIFY(!line(0, 10, 0).problem());
    }
};

QTEST_GUILESS_MAIN(TestPacer)
#include "tst_pacer.moc"
