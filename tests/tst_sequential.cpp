#include "compare/replicatetest.h"
#include "compare/sequential.h"
#include "compare/sequentialab.h"
#include "metrics/runsnapshot.h"

#include <QtTest>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <vector>

using namespace rpcscope;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

SequentialRatio withMixing(double mixingVariance, double confidence, const std::vector<double> &logRatios)
{
    SequentialOptions options;
    options.mixingVariance = mixingVariance;
    options.confidence = confidence;
    SequentialRatio s(options);
    for (double d : logRatios)
        s.add(d);
    return s;
}

// One simulated experiment: draws log ratios from @p draw and watches up to @p maxPairs pairs.
struct Watch {
    int firstExcludingZero = 0; ///< the first pair whose anytime interval excluded 0; 0 = never
    int firstNaiveRejection = 0; ///< the first pair at which a fixed-sample t test at the same level rejected 0
    int firstDecision = 0; ///< the first pair with a decision at the threshold; 0 = none
    SequentialDecision decision = SequentialDecision::Undecided;
    bool pValueAgrees = true; ///< anytimePValue() <= alpha exactly when some interval so far excluded 0
};

Watch watch(std::mt19937_64 &rng, const std::function<double(std::mt19937_64 &)> &draw, int maxPairs,
    const std::vector<double> &tQuantiles, double threshold)
{
    SequentialRatio s; // 95%, tuned for 200 pairs
    const double alpha = 1 - s.confidence();
    Watch w;
    for (int n = 1; n <= maxPairs; ++n) {
        s.add(draw(rng));
        if (w.firstExcludingZero == 0 && (s.lowerLog() > 0 || s.upperLog() < 0))
            w.firstExcludingZero = n;
        if (w.firstNaiveRejection == 0 && n >= 2
            && std::fabs(s.meanLog()) > tQuantiles[n] * s.sdLog() / std::sqrt(double(n)))
            w.firstNaiveRejection = n;
        if (w.firstDecision == 0 && s.decide(threshold) != SequentialDecision::Undecided) {
            w.firstDecision = n;
            w.decision = s.decide(threshold);
        }
        // Equality at the boundary has probability 0; the two are computed differently (interval ends against
        // the e-value), so compare away from it.
        if ((s.anytimePValue() <= alpha * (1 - 1e-9)) && w.firstExcludingZero == 0)
            w.pValueAgrees = false;
        if (w.firstExcludingZero != 0 && s.anytimePValue() > alpha * (1 + 1e-9))
            w.pValueAgrees = false;
    }
    return w;
}

// The two-sided 95% quantiles of Student's t with n - 1 degrees of freedom, for n = 2..maxPairs (index n).
std::vector<double> naiveQuantiles(int maxPairs)
{
    std::vector<double> q(maxPairs + 1, kInf);
    for (int n = 2; n <= maxPairs; ++n)
        q[n] = studentTQuantile(0.975, n - 1);
    return q;
}

} // namespace

class TestSequential : public QObject {
    Q_OBJECT

private slots:
    // The closed form against an independent computation, tests/data/sequential_reference.py (Python, standard
    // library only): the mixture likelihood ratio M_n(m) is integrated numerically, by trapezoid rules over the mixed
    // mean and over log sigma (the right Haar measure d sigma / sigma), and each end of {m : M_n(m) < 1/alpha} is
    // found by bisection. None of the algebra of the closed form is used there; the two agree to about 1e-10.
    void referenceIntervals_data()
    {
        QTest::addColumn<std::vector<double>>("data");
        QTest::addColumn<double>("mixingVariance");
        QTest::addColumn<double>("confidence");
        QTest::addColumn<double>("lowerLog");
        QTest::addColumn<double>("upperLog");
        QTest::addColumn<double>("logEValueAtZero");
        QTest::newRow("n=5, c^2=1, 95%") << std::vector<double> { 0.10, -0.05, 0.20, 0.07, 0.12 } << 1.0 << 0.95
                                         << -0.25578604104858815 << 0.4317860410485883 << 0.5959709607826316;
        QTest::newRow("n=2, c^2=1000, 95%") << std::vector<double> { 0.031, 0.094 } << 1000.0 << 0.95
                                            << -1.2039028989092913 << 1.3289028989092913 << -2.205957407627422;
        QTest::newRow("n=3, c^2=100, 90%") << std::vector<double> { 0.02, -0.01, 0.05 } << 100.0 << 0.90
                                           << -0.12193689261446708 << 0.16193689261446706 << -2.0906352821498633;
    }
    void referenceIntervals()
    {
        QFETCH(std::vector<double>, data);
        QFETCH(double, mixingVariance);
        QFETCH(double, confidence);
        QFETCH(double, lowerLog);
        QFETCH(double, upperLog);
        QFETCH(double, logEValueAtZero);
        const SequentialRatio s = withMixing(mixingVariance, confidence, data);
        QVERIFY(s.bounded());
        QVERIFY2(std::fabs(s.lowerLog() - lowerLog) < 1e-8, qPrintable(QString::number(s.lowerLog(), 'g', 17)));
        QVERIFY2(std::fabs(s.upperLog() - upperLog) < 1e-8, qPrintable(QString::number(s.upperLog(), 'g', 17)));
        QVERIFY2(std::fabs(std::log(s.eValue()) - logEValueAtZero) < 1e-6,
            qPrintable(QString::number(std::log(s.eValue()), 'g', 17)));
        QCOMPARE(s.lower(), std::expm1(s.lowerLog()));
        QCOMPARE(s.upper(), std::expm1(s.upperLog()));
        // The interval is symmetric about the mean log ratio, and the estimate is its ratio.
        QVERIFY(std::fabs((s.lowerLog() + s.upperLog()) / 2 - s.meanLog()) < 1e-12);
        QCOMPARE(s.estimate(), std::expm1(s.meanLog()));
    }

    // The tuning against tests/data/sequential_reference.py: a ternary search over log c^2 in [-20, 20] of the same
    // u_n formula (this checks the search, not the formula), and the first bounded pair by counting up.
    void tuning_data()
    {
        QTest::addColumn<int>("planned");
        QTest::addColumn<double>("confidence");
        QTest::addColumn<double>("mixingVariance");
        QTest::addColumn<double>("factorAtPlanned");
        QTest::addColumn<int>("firstBounded");
        QTest::newRow("200 pairs, 95%") << 200 << 0.95 << 0.04202218302285733 << 0.0472584736652168 << 14;
        QTest::newRow("50 pairs, 95%") << 50 << 0.95 << 0.18049043678176913 << 0.2045820782467107 << 8;
        QTest::newRow("20 pairs, 99%") << 20 << 0.99 << 0.8291750769673204 << 0.9254474139437378 << 7;
    }
    void tuning()
    {
        QFETCH(int, planned);
        QFETCH(double, confidence);
        QFETCH(double, mixingVariance);
        QFETCH(double, factorAtPlanned);
        QFETCH(int, firstBounded);
        const double c2 = SequentialRatio::tunedMixingVariance(planned, confidence);
        QVERIFY2(std::fabs(c2 / mixingVariance - 1) < 1e-6, qPrintable(QString::number(c2, 'g', 17)));
        const double u = SequentialRatio::boundaryFactor(planned, c2, confidence);
        QVERIFY2(std::fabs(u / factorAtPlanned - 1) < 1e-9, qPrintable(QString::number(u, 'g', 17)));
        QCOMPARE(SequentialRatio::firstBoundedPair(c2, confidence), firstBounded);
        QVERIFY(std::isinf(SequentialRatio::boundaryFactor(firstBounded - 1, c2, confidence)));
        // Tuned for the planned number of pairs means narrowest there: other mixing variances are wider at it.
        QVERIFY(SequentialRatio::boundaryFactor(planned, c2 * 1.5, confidence) > u);
        QVERIFY(SequentialRatio::boundaryFactor(planned, c2 / 1.5, confidence) > u);
        // The search for the first bounded pair against counting up, where it takes tens of thousands of pairs.
        int counted = 1;
        while (std::isinf(SequentialRatio::boundaryFactor(counted, 1e-9, confidence)))
            ++counted;
        QVERIFY(counted > 10000);
        QCOMPARE(SequentialRatio::firstBoundedPair(1e-9, confidence), counted);
        QCOMPARE(SequentialRatio::firstBoundedPair(0, confidence), 0);
        // The default options are 95% tuned for 200 pairs.
        if (planned == 200 && confidence == 0.95)
            QCOMPARE(SequentialRatio().mixingVariance(), c2);
    }

    void aRoundsBlocksPairInEitherOrder()
    {
        // ab runs B first in some rounds: a round's pair is the same whichever block came first, and B / A either way.
        SequentialAb aFirst(40, 0.05);
        SequentialAb mixed(40, 0.05);
        int judgedInOrder = 0;
        int judgedMixed = 0;
        for (int round = 1; round <= 6; ++round) {
            const uint64_t a = 100000 + 7000 * uint64_t(round % 3);
            const uint64_t b = a * (round % 2 ? 130 : 110) / 100; // B slower by 10% or 30%
            QVERIFY(!aFirst.addBlock(0, round, a));
            judgedInOrder += aFirst.addBlock(1, round, b) ? 1 : 0;
            if (round % 2 == 0) {
                QVERIFY(!mixed.addBlock(1, round, b));
                judgedMixed += mixed.addBlock(0, round, a) ? 1 : 0;
            } else {
                QVERIFY(!mixed.addBlock(0, round, a));
                judgedMixed += mixed.addBlock(1, round, b) ? 1 : 0;
            }
        }
        QVERIFY(judgedInOrder >= 2);
        QCOMPARE(judgedMixed, judgedInOrder);
        QCOMPARE(mixed.pairs(), aFirst.pairs());
        QCOMPARE(mixed.statusLine(), aFirst.statusLine());
        QVERIFY2(mixed.statusLine().contains(QStringLiteral("p50 +")), qPrintable(mixed.statusLine()));
        // A block whose round's other block never came pairs with nothing; a later round's blocks still do.
        SequentialAb gap(10, 0.05);
        QVERIFY(!gap.addBlock(1, 1, 120000));
        QVERIFY(!gap.addBlock(0, 2, 100000));
        QVERIFY(gap.addBlock(1, 2, 120000));
        QCOMPARE(gap.pairs(), 1);
    }

    void aVerdictOnTwoUnpinnedProcessesSaysSo()
    {
        // One server process a side, not pinned: a regression or an improvement says where the processes ran may
        // have decided it; no change beyond the threshold, or undecided, does not need to.
        for (const double ratio : { 1.3, 1 / 1.3, 1.0 }) {
            SequentialAb judged(40, 0.05);
            judged.setUnpinnedProcesses(true);
            SequentialAb plain(40, 0.05);
            for (int round = 1; round <= 40 && !judged.decided(); ++round) {
                const auto a = uint64_t(100000 + 3000 * (round % 4));
                const auto b = uint64_t(double(a) * ratio * (round % 2 ? 1.01 : 0.99));
                for (SequentialAb *s : { &judged, &plain }) {
                    s->addBlock(0, round, a);
                    s->addBlock(1, round, b);
                }
            }
            QVERIFY2(judged.decided(), qPrintable(judged.statusLine()));
            const bool changed = judged.decision() != SequentialDecision::NoChangeBeyondThreshold;
            QCOMPARE(changed, ratio != 1.0);
            const QString caveat
                = QStringLiteral("; two unpinned server processes: where they ran may have decided it");
            QCOMPARE(judged.verdictLine(QString()).endsWith(caveat), changed);
            QCOMPARE(judged.statusLine().endsWith(caveat), changed);
            QVERIFY(!plain.verdictLine(QString()).contains(caveat));
            // Otherwise the line says what a verdict pair by pair rests on: one process a side.
            const QString oneProcess = QStringLiteral("; judged on one process a side");
            QVERIFY(plain.verdictLine(QString()).endsWith(oneProcess));
            QCOMPARE(judged.verdictLine(QString()),
                changed ? plain.verdictLine(QString()).chopped(oneProcess.size()) + caveat
                        : plain.verdictLine(QString()));
        }
    }

    void emptyAndFirstPairs()
    {
        SequentialRatio s;
        QCOMPARE(s.count(), 0);
        QVERIFY(std::isnan(s.meanLog()));
        QVERIFY(std::isnan(s.estimate()));
        QVERIFY(!s.bounded());
        QCOMPARE(s.lower(), -1.0);
        QCOMPARE(s.upper(), kInf);
        QCOMPARE(s.eValue(), 1.0);
        QCOMPARE(s.anytimePValue(), 1.0);
        QCOMPARE(s.decide(0.05), SequentialDecision::Undecided);

        // One pair: only its sign is information about the mean in units of an unknown sigma, and the symmetric
        // mixture gives it no weight: M_1 = 1, and no interval is finite, whatever the mixing variance.
        QVERIFY(s.add(0.3));
        QCOMPARE(s.count(), 1);
        QCOMPARE(s.estimate(), std::expm1(0.3));
        QVERIFY(std::isnan(s.sdLog()));
        QVERIFY(!s.bounded());
        QVERIFY(std::fabs(s.eValue() - 1) < 1e-12);
        QVERIFY(std::isinf(SequentialRatio::boundaryFactor(1, 1e300, 0.5)));

        // Two pairs: finite only for a mixture tuned for very few pairs (the reference case above), not by default.
        QVERIFY(s.add(0.31));
        QVERIFY(!s.bounded());
        QCOMPARE(s.decide(0.05), SequentialDecision::Undecided);
        QVERIFY(withMixing(1000, 0.95, { 0.31, 0.3 }).bounded());

        s.reset();
        QCOMPARE(s.count(), 0);
        QCOMPARE(s.anytimePValue(), 1.0);
    }

    // Pairs that all land in the same buckets: without a floor the interval is the point (Gaussian data never do
    // this; the floor is there for histograms), with one it has the floor's width and stays in closed form.
    void zeroVariance()
    {
        SequentialRatio bare;
        SequentialOptions floored;
        floored.minimumSd = 0.01;
        SequentialRatio withFloor(floored);
        for (int i = 0; i < 30; ++i) {
            bare.add(0.1);
            withFloor.add(0.1);
        }
        QVERIFY(bare.bounded());
        QCOMPARE(bare.sdLog(), 0.0);
        QCOMPARE(bare.lowerLog(), 0.1);
        QCOMPARE(bare.upperLog(), 0.1);
        QCOMPARE(bare.decide(0.05), SequentialDecision::Regression);
        QVERIFY(std::isfinite(bare.eValue()));
        QVERIFY(bare.anytimePValue() < 0.05);

        const double u = SequentialRatio::boundaryFactor(30, withFloor.mixingVariance(), 0.95);
        const double half = std::sqrt(u * 29 * 0.01 * 0.01 / 30);
        QVERIFY(std::fabs(withFloor.upperLog() - (0.1 + half)) < 1e-12);
        QVERIFY(std::fabs(withFloor.lowerLog() - (0.1 - half)) < 1e-12);
        QVERIFY(half > 0.005);
        // The floor can only weaken the evidence.
        QVERIFY(withFloor.eValue() < bare.eValue());

        // All pairs exactly equal on both sides: the whole interval is at 0, which is no change beyond any threshold.
        SequentialRatio same;
        for (int i = 0; i < 30; ++i)
            same.add(0);
        QCOMPARE(same.lowerLog(), 0.0);
        QCOMPARE(same.decide(0.05), SequentialDecision::NoChangeBeyondThreshold);
        QVERIFY(same.eValue() < 1);
        QCOMPARE(same.anytimePValue(), 1.0);
    }

    void hugeAndInvalidValues()
    {
        SequentialRatio s;
        QVERIFY(!s.add(std::numeric_limits<double>::quiet_NaN()));
        QVERIFY(!s.add(kInf));
        QVERIFY(!s.add(-kInf));
        QVERIFY(!s.add(1e200));
        QCOMPARE(s.count(), 0);

        // Ratios of e^800: beyond a double once exponentiated, but the log interval stays finite and decides.
        for (int i = 0; i < 40; ++i)
            QVERIFY(s.add(i % 2 ? 800.0 : 801.0));
        QVERIFY(s.bounded());
        QCOMPARE(s.estimate(), kInf);
        QCOMPARE(s.lower(), kInf);
        QVERIFY(std::isfinite(s.lowerLog()) && s.lowerLog() > 799);
        QCOMPARE(s.decide(0.05), SequentialDecision::Regression);
        // The evidence n pairs can give is bounded, (1 + n c^2)^((n - 1) / 2) as r grows; this is close to it.
        const double most = std::exp(0.5 * 39 * std::log1p(40 * s.mixingVariance()));
        QVERIFY(s.eValue() <= most * (1 + 1e-12));
        QVERIFY(s.eValue() > 0.99 * most);
        QVERIFY(s.anytimePValue() < 1e-8);

        // Magnitudes close to the accepted limit: no overflow in the sums, no NaN anywhere.
        SequentialRatio big;
        for (int i = 0; i < 40; ++i)
            QVERIFY(big.add(i % 2 ? 1e150 : -1e150));
        QVERIFY(std::isfinite(big.sdLog()));
        QVERIFY(std::isfinite(big.lowerLog()) && std::isfinite(big.upperLog()));
        QVERIFY(!std::isnan(big.eValue()));
        QCOMPARE(big.lower(), -1.0);
        QCOMPARE(big.upper(), kInf);
        QCOMPARE(big.decide(0.05), SequentialDecision::Undecided);

        // Improvements of e^-800. No change can be below -100%, so at a threshold of 150% this one is within it.
        SequentialRatio faster;
        for (int i = 0; i < 40; ++i)
            faster.add(i % 2 ? -800.0 : -801.0);
        QCOMPARE(faster.upper(), -1.0);
        QCOMPARE(faster.decide(0.05), SequentialDecision::Improvement);
        QCOMPARE(faster.decide(1.5), SequentialDecision::NoChangeBeyondThreshold);
        QCOMPARE(faster.decide(std::numeric_limits<double>::quiet_NaN()), SequentialDecision::Undecided);
        QCOMPARE(faster.decide(-0.05), SequentialDecision::Undecided);
    }

    void monotoneNarrowing()
    {
        // The half-width in units of the sample sd, sqrt(u_n (n - 1) / n), shrinks with every pair, at several levels
        // and tunings; and it is never narrower than the fixed-sample t interval (a sequence that is valid at every n
        // must at least be valid at each n, where the t interval is the narrowest scale-equivariant one).
        for (double confidence : { 0.8, 0.95, 0.99 }) {
            for (int planned : { 10, 200, 5000 }) {
                const double c2 = SequentialRatio::tunedMixingVariance(planned, confidence);
                const int first = SequentialRatio::firstBoundedPair(c2, confidence);
                QVERIFY(first >= 2);
                double previous = kInf;
                for (int n = first; n <= 3000; ++n) {
                    const double u = SequentialRatio::boundaryFactor(n, c2, confidence);
                    const double width = std::sqrt(u * (n - 1) / n);
                    QVERIFY2(width < previous, qPrintable(QStringLiteral("n=%1").arg(n)));
                    previous = width;
                    if (n % 50 == 0 || n == first) {
                        const double t = studentTQuantile(1 - (1 - confidence) / 2, n - 1);
                        QVERIFY(width * std::sqrt(double(n)) > t);
                    }
                }
            }
        }

        // On data: pairs alternating around 5% with a constant spread, the interval narrows pair after pair.
        SequentialRatio s;
        double previous = kInf;
        for (int n = 1; n <= 400; ++n) {
            s.add(std::log(1.05) + (n % 2 ? 0.05 : -0.05));
            if (n % 2 == 0 && s.bounded()) {
                const double width = s.upperLog() - s.lowerLog();
                QVERIFY(width < previous);
                previous = width;
            }
        }
        QVERIFY(previous < 0.03);
    }

    // Scale invariance: multiplying every log ratio by k multiplies the interval by k and leaves the evidence alone.
    void scaleInvariance()
    {
        std::mt19937_64 rng(11);
        std::normal_distribution<double> noise(0.02, 0.05);
        SequentialRatio a;
        SequentialRatio b;
        for (int i = 0; i < 60; ++i) {
            const double d = noise(rng);
            a.add(d);
            b.add(d * 7.5);
        }
        QVERIFY(std::fabs(b.upperLog() - 7.5 * a.upperLog()) < 1e-12);
        QVERIFY(std::fabs(b.lowerLog() - 7.5 * a.lowerLog()) < 1e-12);
        QVERIFY(std::fabs(b.eValue() / a.eValue() - 1) < 1e-9);
    }

    /**
     * Under no change, the anytime interval watched after every one of 200 pairs ever excludes 0 in at most alpha of
     * the experiments (5%, with a margin for 2000 runs: 6%); a 95% t interval recomputed after every pair does so far
     * more often. Normal log ratios at three spreads, Student's t with 5 degrees of freedom, and a scale mixture
     * (1 pair in 10 ten times as noisy as the rest), all symmetric about 0 as the log ratios of an A/A experiment are.
     */
    void nullCalibration_data()
    {
        QTest::addColumn<int>("kind");
        QTest::addColumn<double>("scale");
        QTest::addColumn<quint64>("seed");
        QTest::newRow("normal sd 0.01") << 0 << 0.01 << quint64(101);
        QTest::newRow("normal sd 0.05") << 0 << 0.05 << quint64(102);
        QTest::newRow("normal sd 0.2") << 0 << 0.2 << quint64(103);
        QTest::newRow("t(5) sd 0.05") << 1 << 0.05 << quint64(104);
        QTest::newRow("scale mixture 0.03/0.3") << 2 << 0.03 << quint64(105);
    }
    void nullCalibration()
    {
        QFETCH(int, kind);
        QFETCH(double, scale);
        QFETCH(quint64, seed);
        constexpr int kRuns = 2000;
        constexpr int kPairs = 200;
        const std::vector<double> tQuantiles = naiveQuantiles(kPairs);
        std::function<double(std::mt19937_64 &)> draw;
        if (kind == 0) {
            draw = [scale](std::mt19937_64 &rng) { return std::normal_distribution<double>(0, scale)(rng); };
        } else if (kind == 1) {
            // t(5) has variance 5/3: scaled to an sd of @p scale.
            draw = [scale](std::mt19937_64 &rng) {
                return scale * std::sqrt(3.0 / 5.0) * std::student_t_distribution<double>(5)(rng);
            };
        } else {
            draw = [scale](std::mt19937_64 &rng) {
                const bool noisy = std::uniform_real_distribution<double>(0, 1)(rng) < 0.1;
                return std::normal_distribution<double>(0, noisy ? 10 * scale : scale)(rng);
            };
        }
        std::mt19937_64 rng(seed);
        int sequentialFalse = 0;
        int naiveFalse = 0;
        int wrongDecisions = 0;
        int noChangeDecisions = 0;
        for (int run = 0; run < kRuns; ++run) {
            const Watch w = watch(rng, draw, kPairs, tQuantiles, 0.05);
            QVERIFY(w.pValueAgrees);
            sequentialFalse += w.firstExcludingZero != 0;
            naiveFalse += w.firstNaiveRejection != 0;
            wrongDecisions
                += w.decision == SequentialDecision::Regression || w.decision == SequentialDecision::Improvement;
            noChangeDecisions += w.decision == SequentialDecision::NoChangeBeyondThreshold;
        }
        const double sequentialRate = double(sequentialFalse) / kRuns;
        const double naiveRate = double(naiveFalse) / kRuns;
        qInfo("%s: interval ever excluded 0 in %.2f%% of %d runs (repeated t test: %.2f%%); stopped at a "
              "regression/improvement %.2f%%, at no change beyond 5%% %.2f%%",
            QTest::currentDataTag(), 100 * sequentialRate, kRuns, 100 * naiveRate, 100.0 * wrongDecisions / kRuns,
            100.0 * noChangeDecisions / kRuns);
        QVERIFY2(sequentialRate <= 0.06, qPrintable(QString::number(sequentialRate)));
        QVERIFY2(naiveRate >= 0.25, qPrintable(QString::number(naiveRate)));
        QVERIFY(naiveRate > 4 * sequentialRate);
        // A decision of regression or improvement under no change needs an interval that excludes 0.
        QVERIFY(wrongDecisions <= sequentialFalse);
        // At a noise the 5% threshold can resolve in 200 pairs, the experiment ends with "no change" nearly always.
        if (kind == 0 && scale <= 0.05)
            QVERIFY(noChangeDecisions >= 0.9 * kRuns);
    }

    void processesShareTheRounds()
    {
        // Ten rounds among three processes: 4, 3, 3 (the first take a round more), never beyond the last process.
        const std::vector<int> expected { 1, 1, 1, 1, 2, 2, 2, 3, 3, 3 };
        for (int round = 1; round <= 10; ++round)
            QCOMPARE(processOfRound(round, 3, 10), expected[size_t(round - 1)]);
        QCOMPARE(processOfRound(11, 3, 10), 3);
        QCOMPARE(processOfRound(5, 1, 10), 1);
        for (int round = 1; round <= 40; ++round)
            QCOMPARE(processOfRound(round, 10, 40), 1 + (round - 1) / 4);
    }

    void pairsOfProcessesAreJudgedWhole()
    {
        // Ten processes a side over 40 rounds: a pair of processes is judged when its fourth round pairs, on the mean
        // of its four log ratios; the lines count both.
        SequentialAb judged(40, 0.05, 10);
        SequentialRatio reference(SequentialOptions { 0.95, 10, 0, 0.0065 });
        QCOMPARE(judged.processes(), 10);
        double sum = 0;
        for (int round = 1; round <= 12; ++round) {
            const double ratio = 1.2 + 0.01 * (round % 3);
            QVERIFY(!judged.addBlock(round % 2, round, 100000));
            // True when it judged: at a pair of processes' last round.
            QCOMPARE(judged.addBlock(1 - round % 2, round, uint64_t(100000 * (round % 2 ? 1 / ratio : ratio))),
                round % 4 == 0);
            sum += std::log(ratio); // B / A whichever side came first
            QCOMPARE(judged.blockPairs(), round);
            QCOMPARE(judged.pairs(), round / 4);
            if (round % 4 == 0) {
                reference.add(sum / 4);
                sum = 0;
                QVERIFY(std::fabs(judged.ratio().meanLog() - reference.meanLog()) < 1e-4);
            }
        }
        QVERIFY2(judged.statusLine().startsWith(QStringLiteral("not yet decided after 3 of 10 process pairs (12 of "
                                                               "40 pairs of blocks)")),
            qPrintable(judged.statusLine()));
        QVERIFY2(
            judged.statusLine().contains(QStringLiteral("needs 5 process pairs")), qPrintable(judged.statusLine()));
        QVERIFY2(
            judged.progressLine().startsWith(QStringLiteral("process pair 3/10 (12 of 40 pairs of blocks): p50 +")),
            qPrintable(judged.progressLine()));
        for (int round = 13; round <= 40 && !judged.decided(); ++round) {
            judged.addBlock(0, round, 100000);
            judged.addBlock(1, round, 121000);
        }
        QCOMPARE(judged.decision(), SequentialDecision::Regression);
        QCOMPARE(judged.blockPairs() % 4, 0); // decided at a process pair's end
        const QString line = judged.verdictLine(QString());
        QVERIFY2(line.startsWith(QStringLiteral("regression after %1 process pairs: p50 +").arg(judged.pairs())),
            qPrintable(line));
        QVERIFY2(line.endsWith(QStringLiteral("; judged on %1 processes a side, each started anew (%2 pairs of blocks)")
                                   .arg(judged.pairs())
                                   .arg(judged.blockPairs())),
            qPrintable(line));
        // The same blocks, saved and judged again, give the same verdict.
        RunSnapshot a;
        RunSnapshot b;
        for (int round = 1; round <= judged.blockPairs(); ++round) {
            const double ratio = round <= 12 ? 1.2 + 0.01 * (round % 3) : 1.21;
            RunBlock block;
            block.round = round;
            block.latency.record(100000);
            a.blocks.push_back(block);
            block.latency = {};
            block.latency.record(uint64_t(100000 * ratio));
            b.blocks.push_back(block);
        }
        const SequentialAb again = SequentialAb::fromBlocks(a, b, 40, 0.05, 10);
        QCOMPARE(again.decision(), judged.decision());
        QCOMPARE(again.pairs(), judged.pairs());
        QCOMPARE(again.oneProcessSide(), -1);
        // B at an address (its blocks name no process) against A's servers started anew: the verdict does not say
        // "processes a side", for B had one.
        for (RunBlock &block : a.blocks)
            block.process = (block.round - 1) / 4 + 1;
        const SequentialAb oneSided = SequentialAb::fromBlocks(a, b, 40, 0.05, 10);
        QCOMPARE(oneSided.oneProcessSide(), 1);
        QCOMPARE(oneSided.decision(), judged.decision());
        const QString oneSidedLine = oneSided.verdictLine(QString());
        QVERIFY2(oneSidedLine.endsWith(QStringLiteral("; judged on %1 processes of A, each started anew, against B's "
                                                      "one process at its address (%2 pairs of blocks)")
                                           .arg(judged.pairs())
                                           .arg(judged.blockPairs())),
            qPrintable(oneSidedLine));
        QVERIFY(!oneSidedLine.contains(QStringLiteral("a side")));
    }

    void serverCpuIsJudgedBesideTheP50()
    {
        // The same p50 a side (give or take 1%), B's server spending 20% more CPU a call: the p50 alone never calls it,
        // the CPU does, and the verdict says which decided. Each metric at 97.5%, so that the two together keep 95%.
        const auto feed = [](SequentialAb *s, double cpuRatio) {
            for (int round = 1; round <= 40 && !s->decided(); ++round) {
                const double wobble = 1 + 0.01 * ((round % 3) - 1);
                s->addBlock(0, round, 100000, 40000 * wobble);
                s->addBlock(1, round, uint64_t(100000 * wobble), 40000 * cpuRatio / wobble);
            }
        };
        SequentialAb judged(40, 0.05, 10);
        feed(&judged, 1.2);
        QVERIFY(judged.judgesServerCpu());
        QCOMPARE(judged.decision(), SequentialDecision::Regression);
        QCOMPARE(judged.decidedBy(), QStringLiteral("server CPU/call"));
        QCOMPARE(judged.ratio().confidence(), 0.975);
        QCOMPARE(judged.serverCpuRatio().confidence(), 0.975);
        const QString line = judged.verdictLine(QString());
        QVERIFY2(
            line.startsWith(QStringLiteral("regression after %1 process pairs, by server CPU/call: server CPU/call "
                                           "+19.9% (anytime 97.5% CI +")
                                .arg(judged.pairs())),
            qPrintable(line));
        QVERIFY(std::fabs(judged.serverCpuRatio().estimate() - 0.2) < 0.005); // 1.2 against the wobble's mean
        QVERIFY2(line.contains(QStringLiteral("), p50 ")), qPrintable(line)); // the other metric, with its interval
        QVERIFY2(judged.basis().startsWith(QStringLiteral("p50 and server CPU/call")), qPrintable(judged.basis()));
        // Not allowed (a client command's A/B), or not measured: the p50 alone, at 95%; it finds no change.
        SequentialAb p50Only(40, 0.05, 10);
        p50Only.setServerCpuAllowed(false);
        feed(&p50Only, 1.2);
        QVERIFY(!p50Only.judgesServerCpu());
        QCOMPARE(p50Only.ratio().confidence(), 0.95);
        QCOMPARE(p50Only.decision(), SequentialDecision::NoChangeBeyondThreshold);
        QVERIFY2(!p50Only.verdictLine(QString()).contains(QStringLiteral("CPU")), qPrintable(p50Only.verdictLine({})));
        // Neither moved: "no change beyond" needs both within the threshold, and names no decider.
        SequentialAb same(40, 0.05, 10);
        feed(&same, 1.0);
        QCOMPARE(same.decision(), SequentialDecision::NoChangeBeyondThreshold);
        QVERIFY(same.decidedBy().isEmpty());
        QVERIFY2(same.verdictLine(QString()).contains(QStringLiteral(", server CPU/call ")),
            qPrintable(same.verdictLine(QString())));
        // Saved and judged again: the blocks' CPU over their calls gives the same verdict.
        RunSnapshot a;
        RunSnapshot b;
        for (int round = 1; round <= judged.blockPairs(); ++round) {
            const double wobble = 1 + 0.01 * ((round % 3) - 1);
            RunBlock block;
            block.round = round;
            block.calls = 100;
            block.latency.record(100000);
            block.serverCpuSeconds = 100 * 40000e-9 * wobble;
            a.blocks.push_back(block);
            block.latency = {};
            block.latency.record(uint64_t(100000 * wobble));
            block.serverCpuSeconds = 100 * 40000e-9 * 1.2 / wobble;
            b.blocks.push_back(block);
        }
        const SequentialAb again = SequentialAb::fromBlocks(a, b, 40, 0.05, 10);
        QCOMPARE(again.decision(), SequentialDecision::Regression);
        QCOMPARE(again.decidedBy(), QStringLiteral("server CPU/call"));
        QCOMPARE(again.pairs(), judged.pairs());
        b.blocksByClient = true; // a client command's blocks: the server's CPU is not judged
        QVERIFY(!SequentialAb::fromBlocks(a, b, 40, 0.05, 10).judgesServerCpu());
    }

    void processEffectsDoNotDecideAnAa()
    {
        // A/A with processes that differ from each other (each process's blocks share an offset, sd 0.15 on the log
        // scale, as the seed's bimodal Python server's do) and blocks that vary about it (sd 0.03), 10 processes a
        // side over 40 rounds. Judged pair of blocks by pair, the sequence decides about those processes; judged on
        // pairs of processes, at most its 5%. With B 40% slower, the pairs of processes still find it.
        constexpr int kRuns = 400;
        std::mt19937_64 rng(303);
        std::normal_distribution<double> process(0, 0.15);
        std::normal_distribution<double> block(0, 0.03);
        int byBlocks = 0;
        int byProcesses = 0;
        int found = 0;
        for (int run = 0; run < kRuns; ++run) {
            SequentialAb blocks(40, 0.05);
            SequentialAb processes(40, 0.05, 10);
            SequentialAb slower(40, 0.05, 10);
            double offsetA = 0;
            double offsetB = 0;
            for (int round = 1; round <= 40; ++round) {
                if ((round - 1) % 4 == 0) {
                    offsetA = process(rng);
                    offsetB = process(rng);
                }
                const auto a = uint64_t(1e5 * std::exp(offsetA + block(rng)));
                const auto b = uint64_t(1e5 * std::exp(offsetB + block(rng)));
                for (SequentialAb *s : { &blocks, &processes }) {
                    s->addBlock(0, round, a);
                    s->addBlock(1, round, b);
                }
                slower.addBlock(0, round, a);
                slower.addBlock(1, round, uint64_t(double(b) * 1.4));
            }
            const auto changed = [](const SequentialAb &s) {
                return s.decision() == SequentialDecision::Regression
                    || s.decision() == SequentialDecision::Improvement;
            };
            byBlocks += changed(blocks) ? 1 : 0;
            byProcesses += changed(processes) ? 1 : 0;
            found += slower.decision() == SequentialDecision::Regression ? 1 : 0;
        }
        qInfo("A/A with process effects: decided a change in %d of %d runs pair of blocks by pair, %d judged on "
              "pairs of processes; B 40%% slower found in %d",
            byBlocks, kRuns, byProcesses, found);
        QVERIFY2(byProcesses <= 0.05 * kRuns, qPrintable(QString::number(byProcesses)));
        QVERIFY2(byBlocks >= 0.25 * kRuns, qPrintable(QString::number(byBlocks)));
        QVERIFY2(found >= 0.8 * kRuns, qPrintable(QString::number(found)));
    }

    // B 10% slower, log ratios with sd 0.05: decided as a regression well before 200 pairs in most runs.
    void tenPercentRegression()
    {
        constexpr int kRuns = 1000;
        constexpr int kPairs = 200;
        const std::vector<double> tQuantiles = naiveQuantiles(kPairs);
        auto draw = [](std::mt19937_64 &rng) { return std::normal_distribution<double>(std::log(1.1), 0.05)(rng); };
        std::mt19937_64 rng(202);
        std::vector<int> pairsToDecision;
        int regressions = 0;
        for (int run = 0; run < kRuns; ++run) {
            const Watch w = watch(rng, draw, kPairs, tQuantiles, 0.05);
            QVERIFY(w.decision != SequentialDecision::Improvement);
            QVERIFY(w.decision != SequentialDecision::NoChangeBeyondThreshold);
            if (w.decision == SequentialDecision::Regression) {
                ++regressions;
                pairsToDecision.push_back(w.firstDecision);
            }
        }
        std::sort(pairsToDecision.begin(), pairsToDecision.end());
        QVERIFY(!pairsToDecision.empty());
        const int median = pairsToDecision[pairsToDecision.size() / 2];
        const int p90 = pairsToDecision[pairsToDecision.size() * 9 / 10];
        qInfo("10%% slower, sd 0.05: regression in %d of %d runs; pairs to decision: median %d, 90th percentile %d, "
              "first bounded interval at pair %d",
            regressions, kRuns, median, p90,
            SequentialRatio::firstBoundedPair(SequentialRatio().mixingVariance(), 0.95));
        QVERIFY(regressions >= 0.95 * kRuns);
        QVERIFY(median <= 30);
        QVERIFY(p90 <= 50);
    }
};

QTEST_GUILESS_MAIN(TestSequential)
#include "tst_sequential.moc"
