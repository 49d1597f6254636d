#include "compare/checks.h"
#include "compare/comparison.h"
#include "compare/replicatetest.h"
#include "compare/statistics.h"
#include "report/comparereport.h"
#include "store/runjson.h"

#include <QJsonArray>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

using namespace rpcscope;

namespace {

// Lognormal latencies around 1 ms (median), times @p scale: a shift of the whole distribution by a known factor,
// so every percentile and the mean move by exactly that factor.
LatencyHistogram lognormalHistogram(uint64_t seed, int n, double scale = 1.0, double sigma = 0.3)
{
    std::mt19937_64 rng(seed);
    std::lognormal_distribution<double> dist(std::log(1e6), sigma);
    LatencyHistogram h;
    for (int i = 0; i < n; ++i)
        h.record(static_cast<uint64_t>(std::llround(dist(rng) * scale)));
    return h;
}

std::vector<uint32_t> lognormalMicros(uint64_t seed, int n, double scale = 1.0)
{
    std::mt19937_64 rng(seed);
    std::lognormal_distribution<double> dist(std::log(1000.0), 0.3);
    std::vector<uint32_t> out;
    for (int i = 0; i < n; ++i)
        out.push_back(static_cast<uint32_t>(std::llround(dist(rng) * scale)));
    return out;
}

RunSnapshot snapshotOf(const LatencyHistogram &latency)
{
    RunSnapshot run;
    run.state = RunState::Finished;
    run.latency = latency;
    run.statusCounts[CallStatus::Ok] = latency.count();
    run.elapsed = std::chrono::seconds(10);
    run.clientCpuSeconds = 0.5;
    run.clientPeakRssBytes = 50ull << 20;
    return run;
}

// One run against one run, judged call by call as asked for (perCallWhenSingleRun): the first version's method.
CompareOptions optionsWithSeed(uint64_t seed, int replicates = 2000)
{
    CompareOptions options;
    options.perCallWhenSingleRun = true;
    options.seed = seed;
    options.replicates = replicates;
    return options;
}

// One side of an interleaved A/B: @p blocks blocks of @p calls calls, each block's latencies scaled by a factor of
// its own, as measured on a 2-core machine: a block's connection lands on one of two placements, and the slow one
// is @p blockSpread slower (Echo at c=1: block p50s of 53 or 74 us, +40%). Calls inside a block vary around it.
// With @p processes > 1 the blocks are split evenly between that many server processes.
RunSnapshot blockedSide(
    std::mt19937_64 &rng, int blocks, int calls, double scale, double blockSpread, int processes = 1)
{
    RunSnapshot run;
    std::lognormal_distribution<double> call(std::log(60e3), 0.15);
    std::bernoulli_distribution slowPlacement(0.5);
    for (int i = 0; i < blocks; ++i) {
        const double factor = scale * (slowPlacement(rng) ? 1.0 + blockSpread : 1.0);
        RunBlock b;
        b.round = i + 1;
        b.process = processes > 1 ? 1 + i * processes / blocks : 0;
        for (int k = 0; k < calls; ++k)
            b.latency.record(static_cast<uint64_t>(call(rng) * factor));
        b.calls = static_cast<uint64_t>(calls);
        RunSnapshot block = snapshotOf(b.latency);
        block.elapsed = std::chrono::seconds(1);
        block.blocks.push_back(b);
        appendRun(run, block);
    }
    run.state = RunState::Finished;
    run.blocksConnection = QStringLiteral("kept");
    return run;
}

// blockedSide() with the server's and the client's CPU per block: @p serverUs and @p clientUs per call, each block's
// varying by a factor of its own (sd @p cpuNoise on the log scale), as a busy machine leaves CPU clocks nearly alone.
RunSnapshot blockedSideWithCpu(
    std::mt19937_64 &rng, int blocks, double serverUs, double clientUs, double cpuNoise, int processes = 1)
{
    RunSnapshot run = blockedSide(rng, blocks, 400, 1.0, 0.4, processes);
    std::normal_distribution<double> noise(0, cpuNoise);
    for (RunBlock &b : run.blocks) {
        b.serverCpuSeconds = serverUs * 1e-6 * static_cast<double>(b.calls) * std::exp(noise(rng));
        b.clientCpuSeconds = clientUs * 1e-6 * static_cast<double>(b.calls) * std::exp(noise(rng));
        run.serverCpuSeconds += b.serverCpuSeconds;
        run.clientCpuSeconds += b.clientCpuSeconds;
    }
    run.hasServerStats = true;
    return run;
}

// An A/B side of @p blocks blocks of 400 calls, two blocks a server process (process 1 + i / 2), block i's calls
// (lognormal, sd 0.1 on the log scale, around 60 us) scaled by @p factor(i); @p abRunId is the A/B run's.
RunSnapshot processBlocks(
    std::mt19937_64 &rng, int blocks, const std::function<double(int)> &factor, const QString &abRunId = QString())
{
    RunSnapshot run;
    std::lognormal_distribution<double> call(std::log(60e3), 0.1);
    for (int i = 0; i < blocks; ++i) {
        RunBlock b;
        b.round = i + 1;
        b.process = 1 + i / 2;
        const double scale = factor(i);
        for (int k = 0; k < 400; ++k)
            b.latency.record(static_cast<uint64_t>(call(rng) * scale));
        b.calls = 400;
        RunSnapshot block = snapshotOf(b.latency);
        block.elapsed = std::chrono::seconds(1);
        block.blocks.push_back(b);
        block.abRunId = abRunId;
        appendRun(run, block);
    }
    return run;
}

RunSnapshot withoutBlocks(RunSnapshot run)
{
    run.blocks.clear();
    return run;
}

// U of B against A the slow way: every pair, ties by key, half a point each.
double bruteForceU(const std::vector<uint64_t> &a, const std::vector<uint64_t> &b)
{
    double u = 0;
    for (const auto x : a) {
        for (const auto y : b) {
            if (y > x)
                u += 1;
            else if (y == x)
                u += 0.5;
        }
    }
    return u;
}

// The textbook tie-corrected normal approximation from mid-ranks of the pooled sample (ranks sum for B).
double bruteForceP(const std::vector<uint64_t> &a, const std::vector<uint64_t> &b)
{
    std::vector<uint64_t> pooled = a;
    pooled.insert(pooled.end(), b.begin(), b.end());
    std::sort(pooled.begin(), pooled.end());
    const double n = static_cast<double>(pooled.size());
    double rankSumB = 0;
    for (const auto y : b) {
        const auto lower = std::lower_bound(pooled.begin(), pooled.end(), y) - pooled.begin();
        const auto upper = std::upper_bound(pooled.begin(), pooled.end(), y) - pooled.begin();
        rankSumB += (static_cast<double>(lower + 1) + static_cast<double>(upper)) / 2; // mid-rank
    }
    double tieTerm = 0;
    for (size_t i = 0; i < pooled.size();) {
        size_t j = i;
        while (j < pooled.size() && pooled[j] == pooled[i])
            ++j;
        const double t = static_cast<double>(j - i);
        tieTerm += t * t * t - t;
        i = j;
    }
    const double nA = static_cast<double>(a.size());
    const double nB = static_cast<double>(b.size());
    const double u = rankSumB - nB * (nB + 1) / 2;
    const double sigma = std::sqrt(nA * nB / 12 * ((n + 1) - tieTerm / (n * (n - 1))));
    const double z = std::max(0.0, std::fabs(u - nA * nB / 2) - 0.5) / sigma;
    return std::erfc(z / std::sqrt(2.0));
}

// The cells of a Markdown table line, split on unescaped pipes.
QStringList markdownCells(const QString &line)
{
    QStringList cells;
    QString current;
    for (qsizetype i = 0; i < line.size(); ++i) {
        if (line[i] == u'\\' && i + 1 < line.size() && line[i + 1] == u'|') {
            current += u'|';
            ++i;
        } else if (line[i] == u'|') {
            cells << current.trimmed();
            current.clear();
        } else {
            current += line[i];
        }
    }
    cells << current.trimmed();
    // A line "| a | b |" splits into "", a, b, "": the outer empties are the frame, not cells.
    if (!cells.isEmpty() && cells.first().isEmpty())
        cells.removeFirst();
    if (!cells.isEmpty() && cells.last().isEmpty())
        cells.removeLast();
    return cells;
}

} // namespace

class TestCompare : public QObject {
    Q_OBJECT

private slots:
    void distributionMatchesHistogramPercentiles()
    {
        const LatencyHistogram h = lognormalHistogram(7, 3000);
        const auto dist = EmpiricalDistribution::fromHistogram(h);
        QCOMPARE(dist.count(), h.count());
        QCOMPARE(dist.mean(), h.mean());
        for (const double p : { 1.0, 10.0, 50.0, 90.0, 95.0, 99.0, 99.9 })
            QCOMPARE(dist.percentile(p), static_cast<double>(h.percentile(p)));
        // Midpoints are within a bucket of the exact values, so their mean is within 0.8%.
        QVERIFY(std::fabs(dist.storedMean() / h.mean() - 1) < 0.008);
    }

    void shiftIsDetected_data()
    {
        QTest::addColumn<double>("scale");
        QTest::addColumn<int>("verdict");
        QTest::newRow("+10% regression") << 1.10 << int(Verdict::Regression);
        QTest::newRow("-10% improvement") << 0.90 << int(Verdict::Improvement);
        QTest::newRow("+2% within threshold") << 1.02 << int(Verdict::WithinThreshold);
    }

    void shiftIsDetected()
    {
        QFETCH(double, scale);
        QFETCH(int, verdict);
        const int n = 20000;
        const RunSnapshot a = snapshotOf(lognormalHistogram(1, n));
        const RunSnapshot b = snapshotOf(lognormalHistogram(2, n, scale));
        const Comparison c = compareRuns(a, b, optionsWithSeed(3));
        const double shift = scale - 1;

        QCOMPARE(int(c.overall), verdict);
        // A +2% shift is within the histogram's resolution of a single percentile (buckets are 1 to 1.6% wide
        // here), so p95 and p99 may well not see it; p50 and the mean, with most samples behind them, do.
        const QList<MetricKind> judged = std::fabs(shift) > 0.05
            ? QList<MetricKind> { MetricKind::P50, MetricKind::P95, MetricKind::P99, MetricKind::Mean }
            : QList<MetricKind> { MetricKind::P50, MetricKind::Mean };
        for (const auto kind : judged) {
            const MetricRow *row = c.row(kind);
            QVERIFY(row);
            QVERIFY2(row->hasVerdict && row->hasInterval, qPrintable(row->name));
            QVERIFY2(int(row->verdict) == verdict, qPrintable(c.verdictText(*row)));
            // Right sign and size; the interval holds the true shift (up to bucket rounding, about 1%).
            QVERIFY2(std::fabs(row->relativeChange - shift) < 0.02, qPrintable(row->name));
            QCOMPARE(row->interval.estimate, row->relativeChange);
            const ChangeInterval &ci = row->interval;
            QVERIFY2(ci.ciLow <= ci.estimate && ci.estimate <= ci.ciHigh, qPrintable(row->name));
            QVERIFY2(ci.ciLow <= shift + 0.01 && ci.ciHigh >= shift - 0.01,
                qPrintable(row->name + QStringLiteral(" [%1, %2]").arg(ci.ciLow).arg(ci.ciHigh)));
        }
        QVERIFY(c.mannWhitney.pValue < 0.001);
        QCOMPARE(c.mannWhitney.z > 0, scale > 1);
        QCOMPARE(c.mannWhitney.probabilityBGreater > 0.5, scale > 1);
        if (verdict == int(Verdict::Regression)) {
            const QStringList all { QStringLiteral("p50"), QStringLiteral("p95"), QStringLiteral("p99"),
                QStringLiteral("mean") };
            QCOMPARE(c.regressions, all);
            QVERIFY(c.improvements.isEmpty());
            QVERIFY2(c.verdictLine().startsWith(QStringLiteral("regression: p50 +")), qPrintable(c.verdictLine()));
            QVERIFY(c.verdictLine().contains(QStringLiteral("Mann-Whitney p < 0.001")));
        } else if (verdict == int(Verdict::Improvement)) {
            QCOMPARE(c.improvements.size(), 4);
            QVERIFY(c.regressions.isEmpty());
            QVERIFY2(c.verdictLine().startsWith(QStringLiteral("improvement: p50 -")), qPrintable(c.verdictLine()));
        } else {
            QVERIFY(c.regressions.isEmpty() && c.improvements.isEmpty());
            QVERIFY2(c.verdictLine().startsWith(QStringLiteral("change within threshold: p50 +")),
                qPrintable(c.verdictLine()));
        }
    }

    // Throughput is better when higher: fewer req/s is the bad direction, and the row says so.
    void tailOnlyRegressionIsFlagged()
    {
        // 97% of calls unchanged, the slowest 3% twice as slow: p99 regresses, p50 does not.
        std::mt19937_64 rng(77);
        std::lognormal_distribution<double> dist(std::log(1e6), 0.2);
        LatencyHistogram a;
        LatencyHistogram b;
        for (int i = 0; i < 20000; ++i) {
            a.record(static_cast<uint64_t>(dist(rng)));
            const double v = dist(rng);
            b.record(static_cast<uint64_t>(i % 100 < 3 ? v * 2.5 : v));
        }
        const Comparison c = compareRuns(snapshotOf(a), snapshotOf(b), optionsWithSeed(5));
        QCOMPARE(c.row(MetricKind::P99)->verdict, Verdict::Regression);
        QVERIFY(c.row(MetricKind::P50)->verdict != Verdict::Regression);
        QCOMPARE(c.overall, Verdict::Regression);
        QVERIFY(c.regressions.contains(QStringLiteral("p99")) && !c.regressions.contains(QStringLiteral("p50")));
    }

    void streamMessagesHaveTheirOwnVerdict()
    {
        // Streams of the same length (the calls' latencies alike), the messages 15% slower in B: the message rows
        // say so, with their own rank test, and the overall verdict counts them.
        RunSnapshot a = snapshotOf(lognormalHistogram(11, 4000));
        RunSnapshot b = snapshotOf(lognormalHistogram(12, 4000));
        a.messageLatency = lognormalHistogram(13, 20000, 0.001);
        b.messageLatency = lognormalHistogram(14, 20000, 0.00115);
        a.messagesReceived = b.messagesReceived = 20000;
        Comparison c = compareRuns(a, b, optionsWithSeed(3));
        const MetricRow *p50 = c.row(MetricKind::MessageP50);
        QVERIFY(p50 && p50->hasVerdict && p50->hasInterval);
        QCOMPARE(p50->verdict, Verdict::Regression);
        QVERIFY(std::abs(p50->relativeChange - 0.15) < 0.03);
        QVERIFY(c.messageMannWhitney.valid && c.messageMannWhitney.pValue < 0.001);
        QVERIFY(c.row(MetricKind::P50)->verdict != Verdict::Regression);
        QCOMPARE(c.overall, Verdict::Regression);
        QVERIFY(c.regressions.contains(QStringLiteral("message p50")));
        QVERIFY2(
            c.verdictText(*p50).contains(QStringLiteral("Mann-Whitney p < 0.001")), qPrintable(c.verdictText(*p50)));
        const MetricRow *rate = c.row(MetricKind::MessagesPerSecond);
        QVERIFY(rate && !rate->lowerIsBetter);
        QCOMPARE(rate->valueA, 2000.0); // 20000 messages in 10 s

        // The same messages on both sides: nothing to report. Unary runs have no message rows at all.
        b.messageLatency = lognormalHistogram(15, 20000, 0.001);
        c = compareRuns(a, b, optionsWithSeed(3));
        QVERIFY(c.row(MetricKind::MessageP50)->verdict != Verdict::Regression);
        QVERIFY(c.row(MetricKind::MessageP99)->verdict != Verdict::Regression);
        QVERIFY(
            !compareRuns(snapshotOf(a.latency), snapshotOf(b.latency), optionsWithSeed(3)).row(MetricKind::MessageP50));
    }

    void studentTAndHolm()
    {
        // Table values: t(0.975; 10) = 2.228, t(0.975; 4) = 2.776; df = 1 is Cauchy.
        QVERIFY(std::fabs(studentTQuantile(0.975, 10) - 2.2281) < 1e-3);
        QVERIFY(std::fabs(studentTQuantile(0.975, 4) - 2.7764) < 1e-3);
        QVERIFY(std::fabs(studentTCdf(1, 1) - 0.75) < 1e-9);
        QVERIFY(std::fabs(studentTCdf(0, 7.5) - 0.5) < 1e-12);
        QVERIFY(std::fabs(studentTCdf(-2.2281, 10) - 0.025) < 1e-4);
        QVERIFY(std::fabs(studentTCdf(1.96, 1e6) - 0.975) < 1e-4); // towards the normal

        const std::vector<double> adjusted = holmAdjust({ 0.01, 0.04, 0.03, std::nan("") });
        QCOMPARE(adjusted.size(), size_t(4));
        QVERIFY(std::fabs(adjusted[0] - 0.03) < 1e-12); // smallest of 3: times 3
        QVERIFY(std::fabs(adjusted[2] - 0.06) < 1e-12); // next: times 2
        QVERIFY(std::fabs(adjusted[1] - 0.06) < 1e-12); // times 1 is 0.04, but never below the one before
        QVERIFY(std::isnan(adjusted[3]));
    }

    void welchIntervalAndTestAgree()
    {
        // The interval excludes no change exactly when p < 1 - confidence (both from the same t).
        std::mt19937_64 rng(5);
        std::lognormal_distribution<double> value(std::log(100.0), 0.2);
        for (int trial = 0; trial < 200; ++trial) {
            std::vector<double> a(5);
            std::vector<double> b(7);
            for (double &v : a)
                v = value(rng);
            for (double &v : b)
                v = value(rng) * 1.15;
            const ReplicateChange c = welchLogChange(a, b, 0.95);
            QVERIFY(c.valid);
            QVERIFY(c.ciLow <= c.estimate && c.estimate <= c.ciHigh);
            QCOMPARE(c.ciLow > 0 || c.ciHigh < 0, c.pValue < 0.05);
        }
        const ReplicateChange few = welchLogChange({ 100 }, { 110, 120 });
        QVERIFY(!few.valid);
        QVERIFY2(few.reason.contains(QStringLiteral("at least 2 replicates")), qPrintable(few.reason));
        // A detectable change shrinks with more replicates.
        QVERIFY(minimumDetectableChange(0.05, 18, 0.05) < minimumDetectableChange(0.05, 4, 0.05));
    }

    // What broke: interleaved A/A runs of one server called "43% slower" than itself. Calls inside a block share
    // its connection's placement, so per-call statistics see block effects as a difference between A and B.
    void blockEffectsAreNotVerdicts()
    {
        int perCallFalse = 0;
        int blockFalse = 0;
        int blockSignificant = 0;
        for (uint64_t seed = 0; seed < 100; ++seed) {
            std::mt19937_64 rng(9000 + seed);
            const RunSnapshot a = blockedSide(rng, 10, 400, 1.0, 0.4);
            const RunSnapshot b = blockedSide(rng, 10, 400, 1.0, 0.4);
            CompareOptions perCall = optionsWithSeed(seed, 200);
            const Comparison old = compareRuns(withoutBlocks(a), withoutBlocks(b), perCall);
            if (old.overall == Verdict::Regression || old.overall == Verdict::Improvement)
                ++perCallFalse;
            const Comparison c = compareRuns(a, b);
            QCOMPARE(c.unitA, ReplicateUnit::Block);
            QCOMPARE(c.replicatesA, qint64(10));
            if (c.overall == Verdict::Regression || c.overall == Verdict::Improvement)
                ++blockFalse;
            if (c.overall == Verdict::Regression || c.overall == Verdict::Improvement
                || c.overall == Verdict::WithinThreshold)
                ++blockSignificant;
        }
        qInfo("A/A with block effects: per call %d/100 false verdicts, per block %d/100 (%d/100 significant)",
            perCallFalse, blockFalse, blockSignificant);
        QVERIFY2(perCallFalse >= 30, qPrintable(QString::number(perCallFalse))); // the old method is fooled
        QVERIFY2(blockFalse <= 8, qPrintable(QString::number(blockFalse)));
        QVERIFY2(blockSignificant <= 8, qPrintable(QString::number(blockSignificant)));
    }

    void blockShiftIsDetected()
    {
        // 40% slower (40 us on a ~100 us echo), under the same block noise: found nearly every time.
        int found = 0;
        for (uint64_t seed = 0; seed < 100; ++seed) {
            std::mt19937_64 rng(7000 + seed);
            const RunSnapshot a = blockedSide(rng, 10, 400, 1.0, 0.4);
            const RunSnapshot b = blockedSide(rng, 10, 400, 1.4, 0.4);
            const Comparison c = compareRuns(a, b);
            if (c.overall == Verdict::Regression)
                ++found;
            if (seed == 0) {
                const MetricRow *p50 = c.row(MetricKind::P50);
                QVERIFY(p50->hasInterval);
                QCOMPARE(p50->replicatesA.size(), size_t(10));
                QVERIFY(p50->interval.ciLow < 0.4 && 0.4 < p50->interval.ciHigh);
                // 400 calls a block: p99 needs 1000 in each, and says so instead of judging.
                const MetricRow *p99 = c.row(MetricKind::P99);
                QCOMPARE(p99->verdict, Verdict::TooFewSamples);
                QVERIFY2(p99->reason.contains(QStringLiteral("1000 OK calls per block (A's smallest has 400")),
                    qPrintable(p99->reason));
                QCOMPARE(c.testedMetrics, 3); // p50, p95, mean
                const QString line = c.verdictLine();
                QVERIFY2(line.startsWith(QStringLiteral("regression: p50 +")), qPrintable(line));
                QVERIFY2(
                    line.contains(QStringLiteral("[10 vs 10 blocks (connection kept across blocks), p Holm-adjusted "
                                                 "over 3 metrics]")),
                    qPrintable(line));
                QVERIFY(std::isfinite(p50->interval.detectable) && p50->interval.detectable > 0);
            }
        }
        qInfo("+40%% under block noise: found in %d/100", found);
        QVERIFY2(found >= 95, qPrintable(QString::number(found)));
    }

    void cpuPerCallIsJudgedOnTheReplicates()
    {
        // Latency drowned in block noise (+0%), the server's CPU per call +30% with little noise: the verdict is a
        // regression, and says it came from the server's CPU.
        std::mt19937_64 rng(4242);
        const RunSnapshot a = blockedSideWithCpu(rng, 10, 40, 25, 0.05);
        const RunSnapshot b = blockedSideWithCpu(rng, 10, 52, 25, 0.05);
        const Comparison c = compareRuns(a, b);
        const MetricRow *server = c.row(MetricKind::ServerCpuPerCall);
        QVERIFY(server && server->hasVerdict && server->hasInterval);
        QCOMPARE(server->unit, MetricUnit::Microseconds);
        QCOMPARE(server->replicatesA.size(), size_t(10));
        QVERIFY2(server->interval.ciLow < 0.3 && 0.3 < server->interval.ciHigh,
            qPrintable(QStringLiteral("%1 .. %2").arg(server->interval.ciLow).arg(server->interval.ciHigh)));
        QCOMPARE(server->verdict, Verdict::Regression);
        QVERIFY(std::fabs(server->valueA - 40) < 2 && std::fabs(server->valueB - 52) < 3);
        const MetricRow *client = c.row(MetricKind::ClientCpuPerCall);
        QVERIFY(client && client->hasVerdict);
        QVERIFY(client->verdict != Verdict::Regression && client->verdict != Verdict::Improvement);
        QCOMPARE(c.testedMetrics, 5); // p50, p95, mean, and the two CPU rows (p99 needs more calls a block)
        QCOMPARE(c.overall, Verdict::Regression);
        QCOMPARE(c.regressions, QStringList { QStringLiteral("server CPU/call") });
        QVERIFY2(
            c.verdictLine().startsWith(QStringLiteral("regression: server CPU/call +")), qPrintable(c.verdictLine()));
        // Each row once: the CPU rows are not listed again unjudged.
        QCOMPARE(std::count_if(c.rows.cbegin(), c.rows.cend(),
                     [](const MetricRow &r) { return r.kind == MetricKind::ServerCpuPerCall; }),
            1);
        // The table says it too.
        const QString table = formatComparisonTable(c, QStringLiteral("A"), QStringLiteral("B"));
        QVERIFY2(table.contains(QRegularExpression(QStringLiteral("server CPU/call[^\n]*regression \\[\\+"))),
            qPrintable(table));

        // Per server process: the blocks a process served add up, CPU as latency.
        const RunSnapshot pa = blockedSideWithCpu(rng, 10, 40, 25, 0.05, 5);
        const RunSnapshot pb = blockedSideWithCpu(rng, 10, 52, 25, 0.05, 5);
        const Comparison byProcess = compareRuns(pa, pb);
        QCOMPARE(byProcess.unitA, ReplicateUnit::ServerProcess);
        QCOMPARE(byProcess.row(MetricKind::ServerCpuPerCall)->replicatesA.size(), size_t(5));

        // A client command's A/B judges the client: the server's CPU per call is shown with its interval, unjudged,
        // and the table says why.
        RunSnapshot ca = pa;
        RunSnapshot cb = pb;
        ca.blocksByClient = cb.blocksByClient = true;
        const Comparison clients = compareRuns(ca, cb);
        QCOMPARE(clients.unitA, ReplicateUnit::ClientProcess);
        const MetricRow *serverOfClients = clients.row(MetricKind::ServerCpuPerCall);
        QVERIFY(serverOfClients && !serverOfClients->hasVerdict && serverOfClients->hasInterval);
        QVERIFY(clients.row(MetricKind::ClientCpuPerCall)->hasVerdict);
        QVERIFY(!clients.regressions.contains(QStringLiteral("server CPU/call")));
        QVERIFY2(formatComparisonTable(clients, QStringLiteral("A"), QStringLiteral("B"))
                     .contains(QStringLiteral("note: server CPU/call is not judged when client commands are compared")),
            qPrintable(formatComparisonTable(clients, QStringLiteral("A"), QStringLiteral("B"))));

        // One block not measured (a clock read in ticks): the row is shown as measured, unjudged.
        RunSnapshot partial = b;
        partial.blocks[3].serverCpuSeconds = -1;
        const Comparison unjudged = compareRuns(a, partial);
        QVERIFY(unjudged.row(MetricKind::ServerCpuPerCall) && !unjudged.row(MetricKind::ServerCpuPerCall)->hasVerdict);
        QCOMPARE(unjudged.testedMetrics, 4);

        // Kept with the run: a saved A/B side is judged the same when read back.
        QString error;
        const std::optional<RunSnapshot> back = snapshotFromJson(snapshotToJson(b), QStringLiteral("b"), &error);
        QVERIFY2(back, qPrintable(error));
        QCOMPARE(back->blocks[3].serverCpuSeconds, b.blocks[3].serverCpuSeconds);
        QCOMPARE(compareRuns(a, *back).row(MetricKind::ServerCpuPerCall)->verdict, Verdict::Regression);
        QJsonObject bad = snapshotToJson(b);
        QJsonArray blocks = bad.value(QStringLiteral("blocks")).toArray();
        QJsonObject first = blocks.at(0).toObject();
        first.insert(QStringLiteral("server_cpu_s"), -5);
        blocks.replace(0, first);
        bad.insert(QStringLiteral("blocks"), blocks);
        const std::optional<RunSnapshot> read = snapshotFromJson(bad, QStringLiteral("b"), &error);
        QVERIFY2(read, qPrintable(error));
        const QString why = snapshotInconsistency(*read); // what an import checks before it keeps a file's run
        QVERIFY2(why.contains(QStringLiteral("blocks[0].server_cpu_s")) && why.contains(QStringLiteral("-5")),
            qPrintable(why));
    }

    void anIntervalBeyondZeroBesideNoVerdictSaysWhy()
    {
        // A metric's interval (its own, unadjusted) can exclude zero while Holm's correction over the family leaves it
        // not significant: the row and the line say both, never the interval alone beside "inconclusive".
        bool seen = false;
        for (uint64_t seed = 0; seed < 400 && !seen; ++seed) {
            std::mt19937_64 rng(31000 + seed);
            const RunSnapshot a = blockedSide(rng, 3, 400, 1.0, 0.4);
            const RunSnapshot b = blockedSide(rng, 3, 400, 1.25, 0.4);
            const Comparison c = compareRuns(a, b);
            for (const MetricRow &row : c.rows) {
                if (!row.hasVerdict || !row.interval.lostToCorrection())
                    continue;
                seen = true;
                QVERIFY(row.verdict != Verdict::Regression && row.verdict != Verdict::Improvement);
                QVERIFY(row.interval.pValue < 0.05 && row.interval.pAdjusted >= 0.05);
                const QString text = c.verdictText(row);
                QVERIFY2(text.contains(QStringLiteral("for this metric alone, p = "))
                        && text.contains(
                            QStringLiteral("after Holm's correction over %1 metrics").arg(c.testedMetrics)),
                    qPrintable(text));
                const QString table = formatComparisonTable(c, QStringLiteral("A"), QStringLiteral("B"));
                QVERIFY2(table.contains(QStringLiteral("(Holm p ")), qPrintable(table));
            }
        }
        QVERIFY2(seen, "no seed gave an interval beyond zero without a verdict");
    }

    void anAbRunsSidesAreJudgedPairByPair()
    {
        // One A/B run: its i-th server process of A and of B ran side by side, and what drifted over the run (here
        // +-10% from one pair of processes to the next) moved both. Judged pair by pair, a 3% change in B stands
        // out; judged as two unpaired sets of processes, the drift hides it.
        std::mt19937_64 rng(2026);
        std::normal_distribution<double> drift(0, 0.10);
        std::normal_distribution<double> own(0, 0.01);
        std::vector<double> drifts;
        for (int i = 0; i < 10; ++i)
            drifts.push_back(std::exp(drift(rng)));
        auto side = [&](double scale, const QString &runId) {
            RunSnapshot run = processBlocks(
                rng, 20, [&](int i) { return scale * drifts[static_cast<size_t>(i / 2)] * std::exp(own(rng)); }, runId);
            run.blocksConnection = QStringLiteral("kept");
            return run;
        };
        const RunSnapshot a = side(1.0, QStringLiteral("run-1"));
        const RunSnapshot b = side(1.03, QStringLiteral("run-1"));
        QCOMPARE(a.abRunId, QStringLiteral("run-1"));
        const Comparison paired = compareRuns(a, b);
        QVERIFY(paired.paired);
        const MetricRow *p50 = paired.row(MetricKind::P50);
        QVERIFY(p50 && p50->interval.valid);
        QVERIFY2(p50->interval.ciLow > 0 && p50->interval.ciLow < 0.03 && p50->interval.ciHigh > 0.03,
            qPrintable(QStringLiteral("%1 .. %2").arg(p50->interval.ciLow).arg(p50->interval.ciHigh)));
        QVERIFY2(paired.basis().startsWith(QStringLiteral("10 pairs of server processes, run side by side")),
            qPrintable(paired.basis()));
        QVERIFY(formatComparisonTable(paired, QStringLiteral("A"), QStringLiteral("B"))
                    .contains(QStringLiteral("(Student's t on the log ratio of each pair's statistic)")));

        // Kept with the run (a report, the history), so that comparing the two later pairs them again.
        RunRecord record;
        record.snapshot = b;
        QString error;
        const std::optional<RunRecord> reread = runFromJson(runToJson(record), &error);
        QVERIFY2(reread, qPrintable(error));
        QCOMPARE(reread->snapshot.abRunId, QStringLiteral("run-1"));

        // Two runs not of one A/B (another id, or none): the same processes judged unpaired, far wider.
        RunSnapshot other = b;
        other.abRunId = QStringLiteral("run-2");
        const Comparison unpaired = compareRuns(a, other);
        QVERIFY(!unpaired.paired);
        const MetricRow *wide = unpaired.row(MetricKind::P50);
        QVERIFY(wide && wide->interval.valid);
        QVERIFY2(wide->interval.ciLow < 0, qPrintable(QString::number(wide->interval.ciLow)));
        QVERIFY((wide->interval.ciHigh - wide->interval.ciLow) > 3 * (p50->interval.ciHigh - p50->interval.ciLow));
        QVERIFY(unpaired.basis().startsWith(QStringLiteral("10 vs 10 server processes")));
        // A side stopped between a pair's two blocks has a process the other lacks: unpaired.
        RunSnapshot stopped = b;
        stopped.blocks.pop_back();
        stopped.blocks.pop_back();
        QVERIFY(!compareRuns(a, stopped).paired);

        const ReplicateChange uneven = pairedLogChange({ 1, 2, 3 }, { 1, 2 });
        QVERIFY(!uneven.valid);
        QCOMPARE(uneven.reason, QStringLiteral("has 3 replicates in A and 2 in B: they do not pair"));
        // Exact pairs: B twice A in every pair.
        const ReplicateChange doubled = pairedLogChange({ 10, 20, 40 }, { 20, 40, 80 });
        QVERIFY(doubled.valid);
        QVERIFY(std::fabs(doubled.estimate - 1.0) < 1e-9);
        QCOMPARE(doubled.degreesOfFreedom, 2.0);
    }

    void processesThatDifferAreNamedWithTheirValues()
    {
        // Two of A's five server processes are 50% slower than the others (placement, memory layout): the verdict
        // is about those processes as much as about A, and the advice is more processes, not more calls.
        std::mt19937_64 rng(555);
        auto side = [&rng](bool bimodal) {
            return processBlocks(rng, 10, [bimodal](int i) { return bimodal && 1 + i / 2 <= 2 ? 1.5 : 1.0; });
        };
        const Comparison c = compareRuns(side(true), side(false));
        QCOMPARE(c.unitA, ReplicateUnit::ServerProcess);
        const QString note = c.processSpreadNote();
        QVERIFY2(
            note.startsWith(QStringLiteral("A's server processes differ from each other: p50 ")), qPrintable(note));
        QVERIFY2(!note.contains(QStringLiteral("B's")), qPrintable(note));
        QVERIFY2(note.contains(QStringLiteral("more processes will (--restarts)")), qPrintable(note));
        QCOMPARE(c.narrowedBy(), QStringLiteral("more server processes, --restarts"));
        const QString table = formatComparisonTable(c, QStringLiteral("A"), QStringLiteral("B"));
        QVERIFY2(table.contains(QStringLiteral("note: A's server processes differ")), qPrintable(table));
        if (c.overall == Verdict::Inconclusive)
            QVERIFY2(c.verdictLine().contains(QStringLiteral("(more server processes, --restarts would narrow it)")),
                qPrintable(c.verdictLine()));
        // Processes that agree are not remarked on.
        QVERIFY(compareRuns(side(false), side(false)).processSpreadNote().isEmpty());
    }

    void cpuRowsKeepAaFalseVerdictsRare()
    {
        // A/A with CPU rows in the family: Holm keeps the chance of any false verdict near 5%.
        int falseVerdicts = 0;
        for (uint64_t seed = 0; seed < 200; ++seed) {
            std::mt19937_64 rng(9100 + seed);
            const RunSnapshot a = blockedSideWithCpu(rng, 10, 40, 25, 0.1);
            const RunSnapshot b = blockedSideWithCpu(rng, 10, 40, 25, 0.1);
            const Verdict v = compareRuns(a, b).overall;
            if (v == Verdict::Regression || v == Verdict::Improvement)
                ++falseVerdicts;
        }
        qInfo("A/A with CPU rows: %d/200 false verdicts", falseVerdicts);
        QVERIFY2(falseVerdicts <= 16, qPrintable(QString::number(falseVerdicts)));
    }

    void oneEstimatePerMetric()
    {
        // Blocks of unequal size and spread: the pooled p50 moves differently from the blocks' own. Every view shows
        // one estimate, the verdict's: A and B are the geometric means of the blocks' p50, their ratio the change
        // and the interval's estimate; the pooled p50 is kept apart, labelled as such by the views.
        std::mt19937_64 rng(99);
        RunSnapshot a = blockedSide(rng, 6, 400, 1.0, 0.5);
        RunSnapshot b = blockedSide(rng, 6, 2000, 1.3, 0.5);
        const Comparison c = compareRuns(a, b);
        const MetricRow *p50 = c.row(MetricKind::P50);
        QVERIFY(p50->hasInterval && p50->interval.valid);
        QVERIFY(p50->judgedOnReplicates());
        QCOMPARE(p50->relativeChange, p50->interval.estimate);
        QVERIFY(std::fabs(p50->valueB / p50->valueA - 1 - p50->interval.estimate) < 1e-9);
        QVERIFY(std::fabs(p50->delta - (p50->valueB - p50->valueA)) < 1e-6);
        auto geometricMean = [](const std::vector<double> &values) {
            double logs = 0;
            for (double v : values)
                logs += std::log(v);
            return std::exp(logs / static_cast<double>(values.size()));
        };
        QVERIFY(std::fabs(p50->valueA - geometricMean(p50->replicatesA)) < 1e-6 * p50->valueA);
        QCOMPARE(p50->pooledA, static_cast<double>(a.latency.percentile(50)));
        QCOMPARE(p50->pooledB, static_cast<double>(b.latency.percentile(50)));
        // Rows without replicates keep the pooled values and no second one.
        const MetricRow *rate = c.row(MetricKind::RequestsPerSecond);
        QVERIFY(rate && !rate->judgedOnReplicates());
    }

    void noisyExperimentIsInconclusive()
    {
        // Four blocks a side with placements 2x apart cannot see a 3% change, nor rule out a 5% one.
        std::mt19937_64 rng(3);
        const RunSnapshot a = blockedSide(rng, 4, 400, 1.0, 1.0);
        const RunSnapshot b = blockedSide(rng, 4, 400, 1.03, 1.0);
        const Comparison c = compareRuns(a, b);
        const MetricRow *p50 = c.row(MetricKind::P50);
        QVERIFY(p50->interval.detectable > 0.05);
        QCOMPARE(p50->verdict, Verdict::Inconclusive);
        QCOMPARE(c.overall, Verdict::Inconclusive);
        QVERIFY2(c.verdictLine().startsWith(QStringLiteral("inconclusive: noise too high for the 5.0% threshold")),
            qPrintable(c.verdictLine()));
        QVERIFY2(c.verdictLine().contains(QStringLiteral("could detect changes above")), qPrintable(c.verdictLine()));
    }

    void oneRunPerSideIsInconclusive()
    {
        const RunSnapshot a = snapshotOf(lognormalHistogram(1, 20000));
        const RunSnapshot b = snapshotOf(lognormalHistogram(2, 20000, 1.3));
        const Comparison c = compareRuns(a, b);
        QVERIFY(c.singleRun && !c.perCall);
        QCOMPARE(c.overall, Verdict::Inconclusive);
        QVERIFY(!c.row(MetricKind::P50)->hasInterval);
        QVERIFY(c.regressions.isEmpty());
        QVERIFY2(c.verdictLine().startsWith(QStringLiteral("inconclusive: one run per side: p50 +2")),
            qPrintable(c.verdictLine()));
        QVERIFY(c.verdictLine().contains(QStringLiteral("may be run-to-run noise")));
        // Asked for, the same pair is judged call by call, and the line says what that ignores.
        const Comparison perCall = compareRuns(a, b, optionsWithSeed(1, 300));
        QCOMPARE(perCall.overall, Verdict::Regression);
        QVERIFY2(perCall.verdictLine().contains(QStringLiteral("run-to-run noise is not counted")),
            qPrintable(perCall.verdictLine()));
    }

    void serverProcessesAndRunsAreReplicates()
    {
        std::mt19937_64 rng(4);
        const RunSnapshot a = blockedSide(rng, 10, 300, 1.0, 0.2, 5);
        const RunSnapshot b = blockedSide(rng, 10, 300, 1.0, 0.2, 5);
        const CompareSide side = CompareSide::fromRun(a);
        QCOMPARE(side.unit, ReplicateUnit::ServerProcess);
        QCOMPARE(side.replicates.size(), size_t(5));
        QCOMPARE(side.replicates[0].latency.count(), uint64_t(600)); // two blocks each
        const Comparison c = compareRuns(a, b);
        QCOMPARE(c.replicatesB, qint64(5));
        QVERIFY2(c.basis().startsWith(QStringLiteral("5 vs 5 server processes")), qPrintable(c.basis()));
        // A client command's blocks (ab --a-client): its processes are the replicates, and named so.
        RunSnapshot byClient = a;
        byClient.blocksByClient = true;
        byClient.blocksConnection.clear();
        QCOMPARE(CompareSide::fromRun(byClient).unit, ReplicateUnit::ClientProcess);
        RunSnapshot otherClient = b;
        otherClient.blocksByClient = true;
        otherClient.blocksConnection.clear();
        const Comparison clients = compareRuns(byClient, otherClient);
        QVERIFY2(clients.basis().startsWith(QStringLiteral("5 vs 5 client processes,")), qPrintable(clients.basis()));

        // Runs as replicates: three against three, pooled for the values shown.
        QList<RunSnapshot> runsA;
        QList<RunSnapshot> runsB;
        for (int i = 0; i < 3; ++i) {
            runsA << snapshotOf(lognormalHistogram(100 + i, 3000));
            runsB << snapshotOf(lognormalHistogram(200 + i, 3000, 1.5));
        }
        const CompareSide groupA = CompareSide::fromRuns(runsA);
        QCOMPARE(groupA.unit, ReplicateUnit::Run);
        QCOMPARE(groupA.total.latency.count(), uint64_t(9000));
        const Comparison g = compareSides(groupA, CompareSide::fromRuns(runsB));
        QCOMPARE(g.unitA, ReplicateUnit::Run);
        QCOMPARE(g.overall, Verdict::Regression);
        QVERIFY2(g.verdictLine().contains(QStringLiteral("[3 vs 3 runs")), qPrintable(g.verdictLine()));
        QCOMPARE(g.row(MetricKind::P99)->verdict, Verdict::Regression); // 3000 calls a run: p99 is judged
        QCOMPARE(replicateCountText(ReplicateUnit::ServerProcess, 1), QStringLiteral("1 server process"));
        QCOMPARE(replicateCountText(ReplicateUnit::ClientProcess, 2), QStringLiteral("2 client processes"));
    }

    void throughputDirection()
    {
        RunSnapshot a = snapshotOf(lognormalHistogram(1, 1000));
        RunSnapshot b = snapshotOf(lognormalHistogram(2, 1000));
        b.elapsed = std::chrono::seconds(20);
        const Comparison c = compareRuns(a, b, optionsWithSeed(1, 200));
        const MetricRow *rps = c.row(MetricKind::RequestsPerSecond);
        QVERIFY(rps);
        QVERIFY(!rps->lowerIsBetter);
        QCOMPARE(rps->valueA, 100.0);
        QCOMPARE(rps->valueB, 50.0);
        QCOMPARE(rps->relativeChange, -0.5);
        QVERIFY(!c.row(MetricKind::ServerCpuPerCall)); // no server stats on either side
        QVERIFY(!c.row(MetricKind::ServerPeakRss));
    }

    void identicalDistributionsAreNotFlagged()
    {
        int regressions = 0;
        int notNoChange = 0;
        int mannWhitneyRejects = 0;
        int p50Excludes = 0;
        for (uint64_t seed = 0; seed < 100; ++seed) {
            const RunSnapshot a = snapshotOf(lognormalHistogram(1000 + 2 * seed, 2000));
            const RunSnapshot b = snapshotOf(lognormalHistogram(1001 + 2 * seed, 2000));
            // 400 replicates keep the loop fast; the false alarm rate hardly depends on them.
            const Comparison c = compareRuns(a, b, optionsWithSeed(seed, 400));
            if (c.overall == Verdict::Regression)
                ++regressions;
            if (c.overall != Verdict::NoSignificantChange)
                ++notNoChange;
            if (c.mannWhitney.pValue < 0.05)
                ++mannWhitneyRejects;
            if (c.row(MetricKind::P50)->interval.excludesZero())
                ++p50Excludes;
        }
        qInfo("identical distributions: %d/100 regressions, %d/100 other than no significant change, Mann-Whitney "
              "p < 0.05 in %d/100, p50 CI excludes 0 in %d/100",
            regressions, notNoChange, mannWhitneyRejects, p50Excludes);
        QVERIFY2(regressions <= 5, qPrintable(QString::number(regressions)));
        // Each test alone is calibrated: about 5 of 100 by chance (more than 12 has probability 0.2%).
        QVERIFY2(mannWhitneyRejects <= 12, qPrintable(QString::number(mannWhitneyRejects)));
        QVERIFY2(p50Excludes <= 12, qPrintable(QString::number(p50Excludes)));
    }

    void confidenceIntervalCoverage()
    {
        const double shift = 0.10;
        int coveredP50 = 0;
        int coveredP95 = 0;
        int coveredMean = 0;
        for (uint64_t seed = 0; seed < 100; ++seed) {
            const auto a = EmpiricalDistribution::fromHistogram(lognormalHistogram(5000 + 2 * seed, 2000));
            const auto b = EmpiricalDistribution::fromHistogram(lognormalHistogram(5001 + 2 * seed, 2000, 1 + shift));
            BootstrapOptions options;
            options.seed = seed;
            options.replicates = 500;
            const auto results = bootstrapChanges(a, b, { 50, 95, std::nan("") }, options);
            auto covers = [&](const BootstrapResult &r) { return r.ciLow <= shift && shift <= r.ciHigh; };
            coveredP50 += covers(results[0]);
            coveredP95 += covers(results[1]);
            coveredMean += covers(results[2]);
        }
        qInfo("95%% CI coverage of a +10%% shift over 100 seeds: p50 %d, p95 %d, mean %d", coveredP50, coveredP95,
            coveredMean);
        QVERIFY2(coveredP50 >= 88, qPrintable(QString::number(coveredP50)));
        QVERIFY2(coveredP95 >= 88, qPrintable(QString::number(coveredP95)));
        QVERIFY2(coveredMean >= 88, qPrintable(QString::number(coveredMean)));
    }

    void bootstrapIsReproducible()
    {
        const LatencyHistogram a = lognormalHistogram(11, 3000);
        const LatencyHistogram b = lognormalHistogram(12, 3000, 1.05);
        BootstrapOptions options;
        options.seed = 42;
        const BootstrapResult first = bootstrapPercentileChange(a, b, 99, options);
        const BootstrapResult second = bootstrapPercentileChange(a, b, 99, options);
        QVERIFY(first.valid && !first.tooFewSamples);
        QCOMPARE(first.replicates, 2000);
        QCOMPARE(first.ciLow, second.ciLow);
        QCOMPARE(first.ciHigh, second.ciHigh);
        QCOMPARE(first.valueA, static_cast<double>(a.percentile(99)));
        QCOMPARE(first.valueB, static_cast<double>(b.percentile(99)));
        options.seed = 43;
        const BootstrapResult other = bootstrapPercentileChange(a, b, 99, options);
        QCOMPARE(other.estimate, first.estimate); // the estimate is the data's, not the replicates'
        QVERIFY(other.ciLow != first.ciLow || other.ciHigh != first.ciHigh);

        const BootstrapResult mean = bootstrapMeanChange(a, b, options);
        QCOMPARE(mean.valueA, a.mean());
        QVERIFY(mean.ciLow < mean.estimate && mean.estimate < mean.ciHigh);
        // A wider confidence gives a wider interval from the same replicates.
        options.confidence = 0.99;
        const BootstrapResult wide = bootstrapMeanChange(a, b, options);
        QVERIFY(wide.ciLow < mean.ciLow && wide.ciHigh > mean.ciHigh);
    }

    void mannWhitneyMatchesBruteForce()
    {
        std::mt19937_64 rng(99);
        for (int round = 0; round < 40; ++round) {
            const int nA = std::uniform_int_distribution<int>(1, 60)(rng);
            const int nB = std::uniform_int_distribution<int>(1, 60)(rng);
            // 100..300 ns: exact buckets below 128 and 2 ns wide ones above, so there are plenty of ties.
            std::uniform_int_distribution<uint64_t> value(100, 100 + static_cast<uint64_t>(round) * 5);
            LatencyHistogram ha;
            LatencyHistogram hb;
            std::vector<uint64_t> keysA;
            std::vector<uint64_t> keysB;
            for (int i = 0; i < nA; ++i) {
                const uint64_t v = value(rng);
                ha.record(v);
                keysA.push_back(static_cast<uint64_t>(LatencyHistogram::bucketIndex(v)));
            }
            for (int i = 0; i < nB; ++i) {
                const uint64_t v = value(rng) + (round % 3); // B a little slower in some rounds
                hb.record(v);
                keysB.push_back(static_cast<uint64_t>(LatencyHistogram::bucketIndex(v)));
            }
            const MannWhitneyResult mw = mannWhitney(ha, hb);
            QVERIFY(mw.valid);
            QCOMPARE(mw.countA, uint64_t(nA));
            QCOMPARE(mw.countB, uint64_t(nB));
            QCOMPARE(mw.u, bruteForceU(keysA, keysB)); // exact, ties included
            QCOMPARE(mw.probabilityBGreater, mw.u / (double(nA) * nB));
            const double p = bruteForceP(keysA, keysB);
            if (std::isnan(p)) // every sample tied: no variance, nothing to test
                QCOMPARE(mw.pValue, 1.0);
            else
                QVERIFY2(std::fabs(mw.pValue - p) < 1e-9, qPrintable(QStringLiteral("%1 vs %2").arg(mw.pValue).arg(p)));
        }
    }

    void mannWhitneyOnRawSamples()
    {
        std::mt19937_64 rng(5);
        std::uniform_int_distribution<uint32_t> value(900, 960);
        std::vector<uint32_t> a;
        std::vector<uint32_t> b;
        for (int i = 0; i < 50; ++i)
            a.push_back(value(rng));
        for (int i = 0; i < 70; ++i)
            b.push_back(value(rng) + 10);
        const MannWhitneyResult mw
            = mannWhitney(EmpiricalDistribution::fromMicroseconds(a), EmpiricalDistribution::fromMicroseconds(b));
        const std::vector<uint64_t> wideA(a.begin(), a.end());
        const std::vector<uint64_t> wideB(b.begin(), b.end());
        QCOMPARE(mw.u, bruteForceU(wideA, wideB));
        QVERIFY(std::fabs(mw.pValue - bruteForceP(wideA, wideB)) < 1e-9);
        QVERIFY(mw.z > 0);

        // Complete separation: U is nA * nB, P(B > A) is 1.
        const MannWhitneyResult separated = mannWhitney(EmpiricalDistribution::fromMicroseconds({ 1, 2, 3 }),
            EmpiricalDistribution::fromMicroseconds({ 4, 5, 6, 7 }));
        QCOMPARE(separated.u, 12.0);
        QCOMPARE(separated.probabilityBGreater, 1.0);
        // Everything tied: no evidence either way.
        const MannWhitneyResult tied = mannWhitney(
            EmpiricalDistribution::fromMicroseconds({ 5, 5, 5 }), EmpiricalDistribution::fromMicroseconds({ 5, 5 }));
        QCOMPARE(tied.u, 3.0);
        QCOMPARE(tied.probabilityBGreater, 0.5);
        QCOMPARE(tied.pValue, 1.0);
    }

    void rawSampleComparison()
    {
        const auto rawA = lognormalMicros(21, 5000);
        const auto rawB = lognormalMicros(22, 5000, 1.10);
        const RunSnapshot a = snapshotOf(lognormalHistogram(1, 10)); // histograms ignored when raw samples exist
        const RunSnapshot b = snapshotOf(lognormalHistogram(2, 10));
        const Comparison c = compareRuns(a, b, rawA, rawB, optionsWithSeed(4, 500));
        QVERIFY(c.fromRawSamples);
        QCOMPARE(int(c.overall), int(Verdict::Regression));
        const MetricRow *p50 = c.row(MetricKind::P50);
        auto sorted = rawA;
        std::sort(sorted.begin(), sorted.end());
        QCOMPARE(p50->valueA, sorted[2499] * 1000.0); // nearest rank: the 2500th of 5000, exact
        QVERIFY(std::fabs(p50->relativeChange - 0.10) < 0.03);

        const std::vector<RawSample> samples { { 0, 10, CallStatus::Ok }, { 1, 20, CallStatus::Unavailable },
            { 2, 30, CallStatus::Ok } };
        QCOMPARE(okLatenciesUs(samples, ExpectedStatuses()), (std::vector<uint32_t> { 10, 30 }));
        // A run that expected UNAVAILABLE (--expect-status) is compared on those calls.
        QString error;
        const auto unavailable = ExpectedStatuses::parse({ QStringLiteral("UNAVAILABLE") }, &error);
        QVERIFY2(unavailable, qPrintable(error));
        QCOMPARE(okLatenciesUs(samples, *unavailable), (std::vector<uint32_t> { 20 }));
    }

    void tooFewSamples()
    {
        QVERIFY(checkSamples(20, 20, 50, QStringLiteral("p50")).enough);
        QVERIFY(!checkSamples(19, 20, 50, QStringLiteral("p50")).enough);
        QVERIFY(checkSamples(1000, 1000, 99, QStringLiteral("p99")).enough);
        const SampleCheck p99 = checkSamples(999, 5000, 99, QStringLiteral("p99"));
        QVERIFY(!p99.enough);
        QCOMPARE(p99.reason, QStringLiteral("p99 needs at least 1000 OK calls per run (A has 999)"));
        QVERIFY(checkSamples(200, 200, 95, QStringLiteral("p95")).enough);
        QVERIFY(!checkSamples(200, 199, 95, QStringLiteral("p95")).enough);

        // Tiny runs: even p50 is not judged, whatever the shift.
        {
            const RunSnapshot a = snapshotOf(lognormalHistogram(1, 10));
            const RunSnapshot b = snapshotOf(lognormalHistogram(2, 10, 2.0));
            const Comparison c = compareRuns(a, b, optionsWithSeed(1, 200));
            QCOMPARE(int(c.overall), int(Verdict::TooFewSamples));
            QCOMPARE(int(c.row(MetricKind::P50)->verdict), int(Verdict::TooFewSamples));
            QVERIFY2(c.verdictLine().startsWith(QStringLiteral(
                         "too few samples: p50 needs at least 20 OK calls per run (A has 10, B has 10) [")),
                qPrintable(c.verdictLine()));
            QVERIFY(c.regressions.isEmpty());
        }
        // 500 calls: enough for p50 and p95, not for p99, which says so instead of a verdict.
        {
            const RunSnapshot a = snapshotOf(lognormalHistogram(1, 500));
            const RunSnapshot b = snapshotOf(lognormalHistogram(2, 500, 1.3));
            const Comparison c = compareRuns(a, b, optionsWithSeed(1, 500));
            QCOMPARE(int(c.row(MetricKind::P50)->verdict), int(Verdict::Regression));
            QCOMPARE(int(c.row(MetricKind::P99)->verdict), int(Verdict::TooFewSamples));
            QVERIFY(!c.row(MetricKind::P99)->hasInterval);
            QVERIFY(c.row(MetricKind::P99)->reason.startsWith(QStringLiteral("p99 needs at least 1000")));
            QCOMPARE(
                c.regressions, (QStringList { QStringLiteral("p50"), QStringLiteral("p95"), QStringLiteral("mean") }));
            const QString table = formatComparisonTable(c, QStringLiteral("base"), QStringLiteral("new"));
            QVERIFY2(table.contains(QStringLiteral("note: p99 needs at least 1000")), qPrintable(table));
        }
        // No OK calls at all.
        {
            const RunSnapshot a = snapshotOf(LatencyHistogram());
            const RunSnapshot b = snapshotOf(lognormalHistogram(2, 500));
            const Comparison c = compareRuns(a, b, optionsWithSeed(1, 100));
            QCOMPARE(int(c.overall), int(Verdict::TooFewSamples));
            QVERIFY(!c.mannWhitney.valid);
            QVERIFY2(c.verdictLine().startsWith(QStringLiteral("too few samples: A has no OK call")),
                qPrintable(c.verdictLine()));
        }
    }

    void aSideWithoutOkCallsIsUnknownNotZero()
    {
        // B's 200 calls all failed (a server that was down): it has no latency and no throughput. Its figures are
        // unknown ("-"), not 0 ns and "-100%", and the verdict says why there is none; its error rate is known.
        RunSnapshot failed = snapshotOf(LatencyHistogram());
        failed.statusCounts[CallStatus::Unavailable] = 200;
        for (int i = 0; i < 200; ++i)
            failed.errorLatency.record(300'000); // connection refused in 0.3 ms
        std::mt19937_64 rng(3);
        const RunSnapshot blocked = blockedSide(rng, 10, 400, 1.0, 0.1);
        RunSnapshot failedBlocks = blocked; // the same blocks, their calls failed
        failedBlocks.errorLatency = blocked.latency;
        failedBlocks.latency = LatencyHistogram();
        failedBlocks.statusCounts = {};
        failedBlocks.statusCounts[CallStatus::Unavailable] = blocked.callsCompleted();
        for (RunBlock &b : failedBlocks.blocks)
            b.latency = LatencyHistogram();
        const struct {
            const char *how;
            RunSnapshot a, b;
            CompareOptions options;
        } cases[] = {
            { "one run a side", snapshotOf(lognormalHistogram(1, 500)), failed, {} },
            { "per call", snapshotOf(lognormalHistogram(1, 500)), failed, optionsWithSeed(1, 100) },
            { "blocks", blocked, failedBlocks, {} },
        };
        for (const auto &k : cases) {
            const Comparison c = compareRuns(k.a, k.b, k.options);
            for (const MetricKind kind :
                { MetricKind::P50, MetricKind::P99, MetricKind::Mean, MetricKind::RequestsPerSecond }) {
                const MetricRow *row = c.row(kind);
                QVERIFY2(row && std::isfinite(row->valueA) && std::isnan(row->valueB), k.how);
                QVERIFY2(std::isnan(row->delta) && std::isnan(row->relativeChange), k.how);
            }
            QCOMPARE(c.row(MetricKind::P50)->verdict, Verdict::TooFewSamples);
            QCOMPARE(c.row(MetricKind::P50)->reason, QStringLiteral("B has no OK call"));
            QCOMPARE(c.row(MetricKind::ErrorRate)->valueB, 1.0);
            QCOMPARE(c.overall, Verdict::TooFewSamples);
            QVERIFY(c.regressions.isEmpty() && c.improvements.isEmpty());
            QCOMPARE(c.verdictLine(),
                QStringLiteral("too few samples: B has no OK call: no latency to compare (see the error rate)"));
            const QString table = formatComparisonTable(c, QStringLiteral("up"), QStringLiteral("down"));
            const QString p50Line = table.split(u'\n').filter(QRegularExpression(QStringLiteral("^p50 "))).value(0);
            QVERIFY2(p50Line.contains(QStringLiteral(" - ")) && !p50Line.contains(QStringLiteral("0 ns"))
                    && !p50Line.contains(QStringLiteral("-100")),
                qPrintable(QLatin1String(k.how) + u'\n' + table));
            QCOMPARE(table.count(QStringLiteral("B has no OK call")), 1); // said once, not once a row
        }
    }

    void formats()
    {
        RunSnapshot a = snapshotOf(lognormalHistogram(1, 5000));
        RunSnapshot b = snapshotOf(lognormalHistogram(2, 5000, 1.2));
        for (RunSnapshot *run : { &a, &b }) {
            run->hasServerStats = true;
            run->serverCpuSeconds = 0.25;
            run->serverPeakRssBytes = 30ull << 20;
        }
        b.statusCounts[CallStatus::Unavailable] = 50;
        b.errorLatency = lognormalHistogram(3, 50);
        b.clientPeakRssBytes = 60ull << 20;
        const Comparison c = compareRuns(a, b, optionsWithSeed(8, 500));
        QCOMPARE(c.rows.size(), 12);
        QCOMPARE(int(c.overall), int(Verdict::Regression));
        QVERIFY2(c.verdictLine().startsWith(QStringLiteral("regression: p50 +")), qPrintable(c.verdictLine()));
        QVERIFY(c.verdictLine().contains(QStringLiteral("; p99 +")));
        const MetricRow *errors = c.row(MetricKind::ErrorRate);
        QCOMPARE(errors->valueA, 0.0);
        QCOMPARE(errors->valueB, 50.0 / 5050.0);
        QVERIFY(std::isnan(errors->relativeChange)); // from zero: no ratio
        QCOMPARE(c.row(MetricKind::ClientPeakRss)->delta, double(10ull << 20));

        const QString table = formatComparisonTable(c, QStringLiteral("baseline"), QStringLiteral("candidate"));
        const QStringList lines = table.split(u'\n');
        QVERIFY(lines[0].startsWith(QStringLiteral("metric")));
        QVERIFY(lines[0].contains(QStringLiteral("baseline")) && lines[0].contains(QStringLiteral("candidate")));
        QVERIFY(lines[1].startsWith(QStringLiteral("------")));
        for (qsizetype i = 0; i < c.rows.size(); ++i)
            QVERIFY2(lines[2 + i].startsWith(c.rows[i].name), qPrintable(lines[2 + i]));
        // Aligned: every value column of A ends at the same place as its header.
        const qsizetype endOfA = lines[0].indexOf(QStringLiteral("baseline")) + 8;
        for (qsizetype i = 0; i < c.rows.size(); ++i)
            QVERIFY2(lines[2 + i].at(endOfA) == u' ' && lines[2 + i].at(endOfA - 1) != u' ', qPrintable(lines[2 + i]));
        QVERIFY(table.contains(QStringLiteral("regression [+")));
        QVERIFY(table.contains(QStringLiteral("+10.0 MiB")));
        QVERIFY(table.contains(QStringLiteral("+0.99 pp")));
        QVERIFY(table.contains(c.verdictLine()));
        QVERIFY(table.contains(QStringLiteral("Mann-Whitney (histograms): U = ")));

        const QString markdown = formatComparisonMarkdown(c, QStringLiteral("base|line"), QStringLiteral("cand"));
        QStringList tableLines;
        for (const auto &line : markdown.split(u'\n')) {
            if (line.startsWith(u'|'))
                tableLines << line;
        }
        QCOMPARE(tableLines.size(), c.rows.size() + 2);
        for (const auto &line : std::as_const(tableLines))
            QVERIFY2(markdownCells(line).size() == 7, qPrintable(line));
        QCOMPARE(markdownCells(tableLines[0])[1], QStringLiteral("base|line")); // the pipe escaped, not a column
        QVERIFY(tableLines[1].contains(QStringLiteral("--:")));
        for (qsizetype i = 0; i < c.rows.size(); ++i) {
            const QStringList cells = markdownCells(tableLines[2 + i]);
            QVERIFY(cells[0].startsWith(c.rows[i].name));
            QCOMPARE(cells[4], formatPercentChange(c.rows[i].relativeChange));
        }
        QCOMPARE(markdownCells(tableLines[2])[6].section(u' ', 0, 0), QStringLiteral("regression"));
        QVERIFY(markdown.contains(QStringLiteral("**") + c.verdictLine() + QStringLiteral("**")));
    }

    void formattingHelpers()
    {
        QCOMPARE(formatPercentChange(0.191), QStringLiteral("+19.1%"));
        QCOMPARE(formatPercentChange(-0.004), QStringLiteral("-0.4%"));
        QCOMPARE(formatPercentChange(-0.0001), QStringLiteral("+0.0%"));
        QCOMPARE(formatPercentChange(std::nan("")), QStringLiteral("n/a"));
        QCOMPARE(formatPValue(0.0001), QStringLiteral("p < 0.001"));
        QCOMPARE(formatPValue(0.0123), QStringLiteral("p = 0.01"));
        QCOMPARE(formatPValue(0.004), QStringLiteral("p = 0.004"));
        QCOMPARE(formatMetricValue(1.5e6, MetricUnit::Nanoseconds), QStringLiteral("1.50 ms"));
        QCOMPARE(formatMetricValue(12.3, MetricUnit::Microseconds), QStringLiteral("12.3 us"));
        QCOMPARE(formatMetricDelta(-2048, MetricUnit::Bytes), QStringLiteral("-2.0 KiB"));
        QCOMPARE(formatMetricValue(0.005, MetricUnit::Fraction), QStringLiteral("0.50%"));
        QCOMPARE(verdictName(Verdict::WithinThreshold), QStringLiteral("change within threshold"));
    }

    void checksHoldOrFailOnTheRunsNumbers()
    {
        RunSnapshot s;
        for (uint64_t i = 1; i <= 1000; ++i)
            s.latency.record(i * 10'000); // 10 us .. 10 ms, OK calls
        for (int i = 0; i < 10; ++i)
            s.errorLatency.record(1'000'000);
        s.statusCounts[CallStatus::Ok] = 1000;
        s.statusCounts[CallStatus::Unavailable] = 10;
        s.elapsed = std::chrono::seconds(2);
        QString error;
        auto check = [&](const char *text) {
            const std::optional<Check> c = parseCheck(QLatin1String(text), &error);
            if (!c)
                qFatal("%s: %s", text, qPrintable(error));
            return evaluateCheck(*c, s);
        };
        const double p99 = static_cast<double>(s.latency.percentile(99));
        QVERIFY(p99 > 9.8e6 && p99 < 10e6);
        QVERIFY(check("p99<10ms").passed);
        QVERIFY(!check("p99 < 9ms").passed);
        QCOMPARE(check("p99<10ms").actual, p99);
        QVERIFY(check("p99.9 <= 10.1ms").passed);
        QVERIFY(!check("p50>6ms").passed);
        QVERIFY(check("mean<5.1ms").passed && !check("mean<4.9ms").passed);
        QVERIFY(check("max>=9ms").passed && check("min<=11us").passed);
        QVERIFY(check("rps>=500").passed && !check("rps>=506").passed); // 1010 calls in 2 s
        QVERIFY(check("errors==10").passed && !check("errors==0").passed);
        QVERIFY(check("error_rate<1%").passed && !check("error_rate<0.9%").passed);
        QVERIFY(check("error_rate<0.01").passed);

        // No OK call: a latency bound is not met (there is nothing that meets it), and says so.
        RunSnapshot failed;
        failed.errorLatency.record(5);
        failed.statusCounts[CallStatus::Unavailable] = 1;
        const CheckResult none = evaluateCheck(*parseCheck(QStringLiteral("p99<1s"), &error), failed);
        QVERIFY(!none.passed && !none.measured);
        QVERIFY(formatCheckResults({ none }).contains(QStringLiteral("not measured")));
        QVERIFY(formatCheckResults({ check("p99<10ms") }).contains(QStringLiteral("ok    p99<10ms")));
        QVERIFY(formatCheckResults({ check("p99<9ms") }).contains(QStringLiteral("FAIL  p99<9ms")));

        // A stored run's checks: a scenario document's list, or the CLI's flags kept as its arguments.
        const QJsonObject document { { QStringLiteral("checks"),
            QJsonArray { QStringLiteral("p99<10ms"), QStringLiteral("errors==0") } } };
        QCOMPARE(checksOfRun(document), (QStringList { QStringLiteral("p99<10ms"), QStringLiteral("errors==0") }));
        const QJsonObject cli { { QStringLiteral("arguments"),
            QJsonArray { QStringLiteral("--builtin"), QStringLiteral("--check"), QStringLiteral("p99<9ms"),
                QStringLiteral("-n"), QStringLiteral("5"), QStringLiteral("--check=rps>=1"),
                QStringLiteral("--check") } } };
        QCOMPARE(checksOfRun(cli), (QStringList { QStringLiteral("p99<9ms"), QStringLiteral("rps>=1") }));
        QVERIFY(checksOfRun(QJsonObject {}).isEmpty());
        const std::vector<CheckResult> judged = evaluateChecks(
            { QStringLiteral("p99<10ms"), QStringLiteral("not a check"), QStringLiteral("p99<9ms") }, s);
        QCOMPARE(judged.size(), size_t(2)); // what no longer parses is left out
        QVERIFY(judged[0].passed && !judged[1].passed);

        for (const char *bad : { "p99", "p99<", "<10ms", "p99<fast", "p0<1ms", "p101<1ms", "latency<1ms", "rps>many",
                 "error_rate<150%", "error_rate<2", "p99=10ms" }) {
            QVERIFY2(!parseCheck(QLatin1String(bad), &error), bad);
            QVERIFY2(error.contains(QLatin1String(bad)), qPrintable(error));
        }
    }
};

QTEST_GUILESS_MAIN(TestCompare)
#include "tst_compare.moc"
