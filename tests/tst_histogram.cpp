#include "metrics/latencyhistogram.h"
#include "metrics/runsnapshot.h"

#include <QTest>

#include <algorithm>
#include <random>
#include <type_traits>

using rpcscope::LatencyHistogram;

class TestHistogram : public QObject {
    Q_OBJECT

private:
    static void checkPercentiles(const std::vector<uint64_t> &samples)
    {
        LatencyHistogram h;
        for (uint64_t v : samples)
            h.record(v);
        std::vector<uint64_t> sorted = samples;
        std::sort(sorted.begin(), sorted.end());
        QCOMPARE(h.count(), sorted.size());
        QCOMPARE(h.min(), sorted.front());
        QCOMPARE(h.max(), sorted.back());
        for (double p : { 1.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.9, 99.99 }) {
            const auto rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
            const double exact = static_cast<double>(sorted[std::max<size_t>(rank, 1) - 1]);
            const double got = static_cast<double>(h.percentile(p));
            const double relative = std::abs(got - exact) / exact;
            if (relative > 0.01)
                QFAIL(qPrintable(
                    QStringLiteral("p%1: got %2, exact %3 (%4% off)").arg(p).arg(got).arg(exact).arg(relative * 100)));
        }
        // Mean and standard deviation come from exact sums, not buckets.
        double sum = 0;
        for (uint64_t v : samples)
            sum += static_cast<double>(v);
        const double mean = sum / static_cast<double>(samples.size());
        QVERIFY(std::abs(h.mean() - mean) <= mean * 1e-9);
        double squares = 0;
        for (uint64_t v : samples)
            squares += (static_cast<double>(v) - mean) * (static_cast<double>(v) - mean);
        const double sd = std::sqrt(squares / static_cast<double>(samples.size()));
        QVERIFY2(
            std::abs(h.stddev() - sd) <= sd * 1e-6, qPrintable(QStringLiteral("%1 vs %2").arg(h.stddev()).arg(sd)));
    }

private Q_SLOTS:
    void bucketsCoverEveryValueOnce()
    {
        // Bucket bounds are contiguous and each value maps into the bucket whose bounds contain it.
        for (int i = 0; i < LatencyHistogram::kBucketCount - 1; ++i) {
            QCOMPARE(LatencyHistogram::bucketHigh(i) + 1, LatencyHistogram::bucketLow(i + 1));
            QCOMPARE(LatencyHistogram::bucketIndex(LatencyHistogram::bucketLow(i)), i);
            QCOMPARE(LatencyHistogram::bucketIndex(LatencyHistogram::bucketHigh(i)), i);
        }
        // Relative width stays under 1/64 above the exact range, so midpoints are within 1%.
        for (int i = 128; i < LatencyHistogram::kBucketCount - 1; ++i) {
            const double low = static_cast<double>(LatencyHistogram::bucketLow(i));
            const double width = static_cast<double>(LatencyHistogram::bucketHigh(i)) - low + 1;
            QVERIFY(width / low <= 1.0 / 64 + 1e-12);
        }
        // 1 us to 1 h is inside the resolved range.
        QVERIFY(LatencyHistogram::bucketIndex(3'600'000'000'000ULL) < LatencyHistogram::kBucketCount - 1);
    }

    void uniform()
    {
        std::mt19937_64 rng(1);
        std::uniform_int_distribution<uint64_t> dist(1'000, 50'000'000); // 1 us .. 50 ms
        std::vector<uint64_t> samples(200'000);
        for (auto &v : samples)
            v = dist(rng);
        checkPercentiles(samples);
    }

    void logNormal()
    {
        std::mt19937_64 rng(2);
        std::lognormal_distribution<double> dist(std::log(2e6), 0.8); // around 2 ms, long tail
        std::vector<uint64_t> samples(200'000);
        for (auto &v : samples)
            v = static_cast<uint64_t>(std::max(1000.0, dist(rng)));
        checkPercentiles(samples);
    }

    void bimodal()
    {
        std::mt19937_64 rng(3);
        std::normal_distribution<double> fast(300e3, 20e3); // 300 us
        std::normal_distribution<double> slow(40e6, 5e6); // 40 ms
        std::bernoulli_distribution pickSlow(0.1);
        std::vector<uint64_t> samples(200'000);
        for (auto &v : samples)
            v = static_cast<uint64_t>(std::max(1000.0, pickSlow(rng) ? slow(rng) : fast(rng)));
        checkPercentiles(samples);
    }

    void hourLongValues()
    {
        std::vector<uint64_t> samples;
        for (uint64_t v = 1'000; v <= 3'600'000'000'000ULL; v = v * 3 / 2 + 7)
            samples.push_back(v);
        checkPercentiles(samples);
    }

    void mergeEqualsRecordingAll()
    {
        std::mt19937_64 rng(4);
        std::lognormal_distribution<double> dist(std::log(1e6), 1.0);
        LatencyHistogram all;
        LatencyHistogram parts[4];
        for (int i = 0; i < 100'000; ++i) {
            const auto v = static_cast<uint64_t>(dist(rng));
            all.record(v);
            parts[i % 4].record(v);
        }
        LatencyHistogram merged;
        for (const auto &part : parts)
            merged.merge(part);
        QVERIFY(merged == all);
        QCOMPARE(merged.percentile(99.9), all.percentile(99.9));
        QCOMPARE(merged.stddev(), all.stddev());
        QVERIFY(!(merged == parts[0]));
    }

    void memoryDoesNotGrowWithSamples()
    {
        // No heap storage at all: the histogram is one fixed block, whatever it has recorded.
        static_assert(std::is_trivially_copyable_v<LatencyHistogram>);
        QVERIFY(sizeof(LatencyHistogram) < 32 * 1024);
        auto h = std::make_unique<LatencyHistogram>();
        const LatencyHistogram empty;
        std::mt19937_64 rng(5);
        for (int i = 0; i < 5'000'000; ++i)
            h->record(rng() >> 24);
        QCOMPARE(h->count(), 5'000'000ULL);
        QVERIFY(h->buckets().size() <= static_cast<size_t>(LatencyHistogram::kBucketCount));
        QCOMPARE(sizeof(*h), sizeof(empty));
    }

    void emptyAndSingle()
    {
        LatencyHistogram h;
        QCOMPARE(h.percentile(50), 0ULL);
        QCOMPARE(h.mean(), 0.0);
        h.record(12345);
        QCOMPARE(h.percentile(0), 12345ULL);
        QCOMPARE(h.percentile(50), 12345ULL); // clamped to min/max: one sample is exact
        QCOMPARE(h.percentile(100), 12345ULL);
        QCOMPARE(h.stddev(), 0.0);
    }

    void restoreChecksItsParts()
    {
        LatencyHistogram h;
        for (uint64_t v : { 5ULL, 700ULL, 123456ULL, 99999999ULL })
            h.record(v);
        LatencyHistogram back;
        QVERIFY(
            LatencyHistogram::restore(h.bucketCounts(), h.min(), h.max(), h.exactSum(), h.exactSumOfSquares(), &back));
        QVERIFY(back == h);
        QVERIFY(!LatencyHistogram::restore({ { LatencyHistogram::kBucketCount, 1 } }, 1, 1, 1, 1, &back));
        QVERIFY(!LatencyHistogram::restore(h.bucketCounts(), h.max(), h.min(), 0, 0, &back)); // min > max
        QVERIFY(!LatencyHistogram::restore(h.bucketCounts(), 6, h.max(), 0, 0, &back)); // min outside its bucket
    }

    void appendRunAddsBlocks()
    {
        rpcscope::RunSnapshot a;
        rpcscope::RunSnapshot b;
        a.latency.record(1000);
        a.statusCounts[0] = 1;
        a.elapsed = std::chrono::seconds(2);
        a.timeline.append({ 1.0, 1.0, 1, 0, 1000, 1000, 1000, 1 });
        a.errors.append({ 14, QStringLiteral("refused"), 2 });
        a.clientPeakRssBytes = 10;
        b.latency.record(3000);
        b.latency.record(5000);
        b.statusCounts[0] = 2;
        b.elapsed = std::chrono::seconds(1);
        b.timeline.append({ 0.5, 0.5, 2, 0, 3000, 5000, 5000, 1 });
        b.errors.append({ 14, QStringLiteral("refused"), 3 });
        b.errors.append({ 4, QStringLiteral("deadline"), 1 });
        b.clientPeakRssBytes = 7;
        b.state = rpcscope::RunState::Finished;
        rpcscope::RunSnapshot total;
        rpcscope::appendRun(total, a);
        rpcscope::appendRun(total, b);
        QCOMPARE(total.latency.count(), 3ULL);
        QCOMPARE(total.statusCounts[0], 3ULL);
        QCOMPARE(total.elapsed, std::chrono::nanoseconds(std::chrono::seconds(3)));
        QCOMPARE(total.timeline.size(), 2);
        QCOMPARE(total.timeline.at(1).endSeconds, 2.5); // continues after the first block's 2 s
        QCOMPARE(total.errors.size(), 2);
        QCOMPARE(total.errors.at(0).count, 5ULL);
        QCOMPARE(total.clientPeakRssBytes, 10ULL);
        QCOMPARE(total.state, rpcscope::RunState::Finished);
        QCOMPARE(total.latency.max(), 5000ULL);
    }

    void backToBackGapsAreToldApart()
    {
        // A server stream whose messages came two by two: every other gap is a read of a message already in (1 us),
        // the others the server's pace (99 us).
        rpcscope::RunSnapshot batched;
        batched.firstMessageLatency.record(300'000);
        for (int i = 0; i < 500; ++i) {
            batched.messageLatency.record(1000);
            batched.messageLatency.record(99'000);
        }
        const auto found = rpcscope::backToBackGaps(batched);
        QVERIFY(found.has_value());
        QCOMPARE(found->shortestNs, 1000ULL);
        QCOMPARE(found->thresholdNs, 2000ULL);
        QCOMPARE(found->count, 500ULL);
        QCOMPARE(found->share, 0.5);
        QCOMPARE(batched.messageLatency.mean(), 50'000.0); // the pace, whatever the batching

        // Messages each in their own read: the shortest gap is a wake-up from the network, nothing is flagged.
        rpcscope::RunSnapshot paced;
        paced.firstMessageLatency.record(300'000);
        for (int i = 0; i < 100; ++i)
            paced.messageLatency.record(8000 + 10 * static_cast<uint64_t>(i));
        QVERIFY(!rpcscope::backToBackGaps(paced).has_value());

        // A few short gaps among many are not worth a word (under 5%).
        rpcscope::RunSnapshot few;
        few.firstMessageLatency.record(300'000);
        few.messageLatency.record(1000);
        for (int i = 0; i < 99; ++i)
            few.messageLatency.record(50'000);
        QVERIFY(!rpcscope::backToBackGaps(few).has_value());

        // Bidi round trips (no first message apart) are not gaps.
        rpcscope::RunSnapshot bidi = batched;
        bidi.firstMessageLatency.reset();
        QVERIFY(!rpcscope::backToBackGaps(bidi).has_value());
    }
};

QTEST_GUILESS_MAIN(TestHistogram)
#include "tst_histogram.moc"
