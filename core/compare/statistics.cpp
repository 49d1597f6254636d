#include "statistics.h"
#include "util/cpuset.h"

#include <QStringList>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <random>
#include <thread>

namespace rpcscope {

namespace {

// NOLINTNEXTLINE(modernize-use-using): __extension__ (which keeps -Wpedantic quiet) takes a typedef, not a using
__extension__ typedef unsigned __int128 Wide;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Nearest rank as LatencyHistogram::percentile computes it, so a point estimate here equals the report's number.
uint64_t nearestRank(double p, uint64_t n)
{
    const auto rank = static_cast<uint64_t>(std::ceil(p / 100.0 * static_cast<double>(n)));
    return std::clamp<uint64_t>(rank, 1, n);
}

// Linear interpolation between order statistics (R's type 7): a stable quantile of the replicate ratios.
double sortedQuantile(const std::vector<double> &sorted, double q)
{
    if (sorted.empty())
        return kNaN;
    const double position = q * static_cast<double>(sorted.size() - 1);
    const auto low = static_cast<size_t>(std::floor(position));
    const size_t high = std::min(low + 1, sorted.size() - 1);
    const double fraction = position - static_cast<double>(low);
    if (fraction == 0 || std::isinf(sorted[low]) || std::isinf(sorted[high]))
        return sorted[low];
    return sorted[low] + (sorted[high] - sorted[low]) * fraction;
}

double ratioOf(double b, double a)
{
    if (a == 0)
        return b == 0 ? 1.0 : std::numeric_limits<double>::infinity();
    return b / a;
}

/**
 * The statistics of one (re)sample given per-value counts, in one walk: percentiles (sorted by rank on the way)
 * and the mean of the stored values. NaN slots ask for the mean.
 */
class StatisticsWalker {
public:
    explicit StatisticsWalker(const QList<double> &percentiles) : m_percentiles(percentiles)
    {
        for (int i = 0; i < percentiles.size(); ++i) {
            if (std::isnan(percentiles[i]))
                m_wantsMean = true;
            else
                m_order.push_back(i);
        }
        std::sort(m_order.begin(), m_order.end(), [&](int x, int y) { return m_percentiles[x] < m_percentiles[y]; });
    }

    // @p counts parallel to @p values; @p n their sum. Writes one statistic per requested slot (mean: stored mean).
    template<typename Count>
    void evaluate(const std::vector<EmpiricalDistribution::Value> &values, const Count *counts, uint64_t n,
        std::vector<double> &out) const
    {
        out.assign(static_cast<size_t>(m_percentiles.size()), kNaN);
        if (n == 0 || values.empty())
            return;
        size_t next = 0;
        uint64_t seen = 0;
        long double sum = 0;
        for (size_t i = 0; i < values.size(); ++i) {
            const auto c = static_cast<uint64_t>(counts[i]);
            if (c == 0)
                continue;
            seen += c;
            sum += static_cast<long double>(values[i].ns) * static_cast<long double>(c);
            while (next < m_order.size()) {
                const double p = m_percentiles[m_order[next]];
                const uint64_t rank = p <= 0 ? 1 : (p >= 100 ? n : nearestRank(p, n));
                if (seen < rank)
                    break;
                out[static_cast<size_t>(m_order[next])] = values[i].ns;
                ++next;
            }
            if (!m_wantsMean && next == m_order.size())
                break;
        }
        if (m_wantsMean) {
            const auto mean = static_cast<double>(sum / static_cast<long double>(n));
            for (int i = 0; i < m_percentiles.size(); ++i) {
                if (std::isnan(m_percentiles[i]))
                    out[static_cast<size_t>(i)] = mean;
            }
        }
    }

private:
    QList<double> m_percentiles;
    std::vector<int> m_order;
    bool m_wantsMean = false;
};

/**
 * One Binomial(n, p) draw. Below a mean of kInversionMean it inverts the CDF by walking the pmf recurrence from 0:
 * exact, and about as many steps as the mean. Measured here, libstdc++'s std::binomial_distribution costs 250 to
 * 750 ns per draw at means of 3 to 30 (it sets up its rejection sampler on every new parameter, and each bucket of
 * each replicate has new parameters), the inversion 2 to 4 times less; most buckets of a latency histogram have
 * small counts, so this is most of the bootstrap's time. Large means keep std::binomial_distribution.
 */
int64_t drawBinomial(std::mt19937_64 &rng, int64_t n, double p)
{
    constexpr double kInversionMean = 30;
    if (p <= 0 || n <= 0)
        return 0;
    if (p >= 1)
        return n;
    if (p > 0.5) // symmetric: keep the walk short
        return n - drawBinomial(rng, n, 1 - p);
    const auto trials = static_cast<double>(n);
    if (trials * p >= kInversionMean) {
        std::binomial_distribution<int64_t> binomial(n, p);
        return binomial(rng);
    }
    double probability = std::exp(trials * std::log1p(-p)); // P(X = 0)
    auto u = std::generate_canonical<double, 53>(rng);
    const double odds = p / (1 - p);
    int64_t k = 0;
    while (u > probability && k < n) {
        u -= probability;
        probability *= odds * static_cast<double>(n - k) / static_cast<double>(k + 1);
        ++k;
    }
    return k;
}

/**
 * Draws a multinomial resample of @p source (same size) into @p out as sequential conditional binomials: value i
 * gets Binomial(calls left, count_i / count left). That is exact and costs one binomial draw per distinct value.
 */
void resample(const EmpiricalDistribution &source, std::mt19937_64 &rng, std::vector<int64_t> &out)
{
    const auto &values = source.values();
    out.assign(values.size(), 0);
    auto callsLeft = static_cast<int64_t>(source.count());
    uint64_t weightLeft = source.count();
    for (size_t i = 0; i < values.size() && callsLeft > 0; ++i) {
        const uint64_t c = values[i].count;
        const int64_t drawn = c >= weightLeft
            ? callsLeft
            : drawBinomial(rng, callsLeft, static_cast<double>(c) / static_cast<double>(weightLeft));
        out[i] = drawn;
        callsLeft -= drawn;
        weightLeft -= c;
    }
}

QString statisticLabel(double percentile)
{
    if (std::isnan(percentile))
        return QStringLiteral("mean");
    return QStringLiteral("p") + QString::number(percentile, 'g', 6);
}

// The Mann-Whitney walk over two increasing (key, count) lists; equal keys are ties.
struct KeyCount {
    double key;
    uint64_t count;
};

MannWhitneyResult mannWhitneyOf(const std::vector<KeyCount> &a, const std::vector<KeyCount> &b)
{
    MannWhitneyResult result;
    for (const auto &v : a)
        result.countA += v.count;
    for (const auto &v : b)
        result.countB += v.count;
    if (result.countA == 0 || result.countB == 0)
        return result;
    result.valid = true;

    // 2U stays an integer: each b counts 2 per a below it and 1 per a tied with it.
    Wide twoU = 0;
    long double tieTerm = 0; // sum over tie groups of t^3 - t
    uint64_t aBelow = 0;
    size_t i = 0;
    size_t j = 0;
    while (i < a.size() || j < b.size()) {
        double key;
        if (j >= b.size() || (i < a.size() && a[i].key < b[j].key))
            key = a[i].key;
        else
            key = b[j].key;
        const uint64_t ca = i < a.size() && a[i].key == key ? a[i++].count : 0;
        const uint64_t cb = j < b.size() && b[j].key == key ? b[j++].count : 0;
        twoU += static_cast<Wide>(cb) * (static_cast<Wide>(aBelow) * 2 + ca);
        const auto t = static_cast<long double>(ca + cb);
        tieTerm += t * t * t - t;
        aBelow += ca;
    }

    const auto nA = static_cast<long double>(result.countA);
    const auto nB = static_cast<long double>(result.countB);
    const long double n = nA + nB;
    const auto u = static_cast<long double>(twoU) / 2;
    result.u = static_cast<double>(u);
    result.probabilityBGreater = static_cast<double>(u / (nA * nB));

    const long double mean = nA * nB / 2;
    const long double variance = n > 1 ? nA * nB / 12 * ((n + 1) - tieTerm / (n * (n - 1))) : 0;
    if (variance <= 0) {
        // Every sample tied: no evidence of any difference.
        result.z = 0;
        result.pValue = 1;
        return result;
    }
    // Continuity correction: U moves in steps of 1/2 and the normal is continuous.
    const long double distance = std::max<long double>(0, std::fabs(u - mean) - 0.5L);
    const long double z = (u >= mean ? distance : -distance) / std::sqrt(variance);
    result.z = static_cast<double>(z);
    result.pValue = std::erfc(std::fabs(result.z) / std::sqrt(2.0));
    return result;
}

} // namespace

EmpiricalDistribution EmpiricalDistribution::fromHistogram(const LatencyHistogram &histogram)
{
    EmpiricalDistribution d;
    if (histogram.isEmpty())
        return d;
    const uint64_t lo = histogram.min();
    const uint64_t hi = histogram.max();
    const auto buckets = histogram.buckets();
    d.m_values.reserve(buckets.size());
    for (const auto &bucket : buckets) {
        // The last bucket is open-ended; its real top is the histogram's max (as in LatencyHistogram::percentile).
        const uint64_t high = std::min(bucket.highNs, hi);
        const uint64_t mid = bucket.lowNs + (high - bucket.lowNs) / 2;
        d.m_values.push_back({ static_cast<double>(std::clamp(mid, lo, hi)), bucket.count });
    }
    d.m_count = histogram.count();
    d.m_mean = histogram.mean();
    return d;
}

EmpiricalDistribution EmpiricalDistribution::fromMicroseconds(const std::vector<uint32_t> &latenciesUs)
{
    EmpiricalDistribution d;
    if (latenciesUs.empty())
        return d;
    std::vector<uint32_t> sorted = latenciesUs;
    std::sort(sorted.begin(), sorted.end());
    long double sum = 0;
    for (size_t i = 0; i < sorted.size();) {
        size_t j = i;
        while (j < sorted.size() && sorted[j] == sorted[i])
            ++j;
        const double ns = static_cast<double>(sorted[i]) * 1000.0;
        d.m_values.push_back({ ns, static_cast<uint64_t>(j - i) });
        sum += static_cast<long double>(ns) * static_cast<long double>(j - i);
        i = j;
    }
    d.m_count = sorted.size();
    d.m_mean = static_cast<double>(sum / static_cast<long double>(d.m_count));
    return d;
}

double EmpiricalDistribution::storedMean() const
{
    if (m_count == 0)
        return 0;
    long double sum = 0;
    for (const auto &v : m_values)
        sum += static_cast<long double>(v.ns) * static_cast<long double>(v.count);
    return static_cast<double>(sum / static_cast<long double>(m_count));
}

double EmpiricalDistribution::percentile(double p) const
{
    if (m_count == 0)
        return 0;
    if (p <= 0)
        return m_values.front().ns;
    if (p >= 100)
        return m_values.back().ns;
    const uint64_t rank = nearestRank(p, m_count);
    uint64_t seen = 0;
    for (const auto &v : m_values) {
        seen += v.count;
        if (seen >= rank)
            return v.ns;
    }
    return m_values.back().ns;
}

SampleCheck checkSamples(
    uint64_t countA, uint64_t countB, double percentile, const QString &label, const SampleRules &rules)
{
    uint64_t required = rules.minSamples;
    if (!std::isnan(percentile) && percentile > 0 && percentile < 100) {
        // The small epsilon keeps 10 / (1 - 0.99) = 1000.0000000000009 from asking for 1001.
        const double tail = rules.minTailSamples / (1.0 - percentile / 100.0);
        required = std::max(required, static_cast<uint64_t>(std::ceil(tail - 1e-6)));
    }
    SampleCheck check;
    if (countA >= required && countB >= required)
        return check;
    check.enough = false;
    QStringList shortSides;
    if (countA < required)
        shortSides << QStringLiteral("A has %1").arg(countA);
    if (countB < required)
        shortSides << QStringLiteral("B has %1").arg(countB);
    check.reason = QStringLiteral("%1 needs at least %2 OK calls per run (%3)")
                       .arg(label)
                       .arg(required)
                       .arg(shortSides.join(QStringLiteral(", ")));
    return check;
}

QList<BootstrapResult> bootstrapChanges(const EmpiricalDistribution &a, const EmpiricalDistribution &b,
    const QList<double> &percentiles, const BootstrapOptions &options)
{
    QList<BootstrapResult> results;
    results.reserve(percentiles.size());
    const int replicates = std::max(options.replicates, 1);
    for (const double p : percentiles) {
        BootstrapResult r;
        r.percentile = p;
        r.confidence = options.confidence;
        const QString label = statisticLabel(p);
        if (a.isEmpty() || b.isEmpty()) {
            r.reason = a.isEmpty() ? QStringLiteral("run A has no OK calls") : QStringLiteral("run B has no OK calls");
            r.tooFewSamples = true;
        } else {
            r.valueA = std::isnan(p) ? a.mean() : a.percentile(p);
            r.valueB = std::isnan(p) ? b.mean() : b.percentile(p);
            if (r.valueA <= 0) {
                r.reason = QStringLiteral("%1 of run A is 0: no relative change").arg(label);
            } else {
                r.valid = true;
                r.estimate = r.valueB / r.valueA - 1;
                const SampleCheck check = checkSamples(a.count(), b.count(), p, label, options.rules);
                r.tooFewSamples = !check.enough;
                r.reason = check.reason;
            }
        }
        results.push_back(r);
    }
    const bool anyValid = std::any_of(results.cbegin(), results.cend(), [](const auto &r) { return r.valid; });
    if (!anyValid)
        return results;

    // The mean is resampled from stored values (bucket midpoints); rescaling each side by exact / stored mean
    // centres its replicates on the exact means the estimate uses, removing the midpoint rounding bias.
    const double scaleA = a.storedMean() > 0 ? a.mean() / a.storedMean() : 1.0;
    const double scaleB = b.storedMean() > 0 ? b.mean() / b.storedMean() : 1.0;

    const StatisticsWalker walker(percentiles);
    std::vector<std::vector<double>> ratios(
        static_cast<size_t>(percentiles.size()), std::vector<double>(static_cast<size_t>(replicates)));
    // The replicates come in a fixed number of chunks, each with its own seeded generator, so the result depends on
    // the seed alone, not on how many cores share the chunks. With raw samples (thousands of distinct values) a
    // bootstrap is seconds of CPU: spread over the cores it is that much shorter.
    constexpr int kChunks = 8;
    auto runChunk = [&](int chunk) {
        const auto seed = static_cast<uint64_t>(options.seed);
        std::seed_seq seeds { static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
            static_cast<uint32_t>(chunk) };
        std::mt19937_64 rng(seeds);
        std::vector<int64_t> countsA;
        std::vector<int64_t> countsB;
        std::vector<double> statsA;
        std::vector<double> statsB;
        const int first = replicates * chunk / kChunks;
        const int last = replicates * (chunk + 1) / kChunks;
        for (int rep = first; rep < last; ++rep) {
            resample(a, rng, countsA);
            resample(b, rng, countsB);
            walker.evaluate(a.values(), countsA.data(), a.count(), statsA);
            walker.evaluate(b.values(), countsB.data(), b.count(), statsB);
            for (size_t k = 0; k < ratios.size(); ++k) {
                const bool isMean = std::isnan(percentiles[static_cast<qsizetype>(k)]);
                const double sa = isMean ? statsA[k] * scaleA : statsA[k];
                const double sb = isMean ? statsB[k] * scaleB : statsB[k];
                ratios[k][static_cast<size_t>(rep)] = ratioOf(sb, sa);
            }
        }
    };
    // Small jobs stay on this thread: starting threads would cost more than it saves.
    const double work = static_cast<double>(replicates) * static_cast<double>(a.values().size() + b.values().size());
    const int threads = work < 2e6 ? 1 : std::clamp(usableCpuCount(), 1, kChunks);
    std::atomic<int> nextChunk { 0 };
    auto worker = [&] {
        for (int chunk = nextChunk++; chunk < kChunks; chunk = nextChunk++)
            runChunk(chunk);
    };
    std::vector<std::thread> helpers;
    for (int t = 1; t < threads; ++t)
        helpers.emplace_back(worker);
    worker();
    for (std::thread &helper : helpers)
        helper.join();
    const double alpha = 1 - std::clamp(options.confidence, 0.0, 1.0);
    for (qsizetype k = 0; k < results.size(); ++k) {
        auto &r = results[k];
        if (!r.valid)
            continue;
        auto &sorted = ratios[static_cast<size_t>(k)];
        std::sort(sorted.begin(), sorted.end());
        r.replicates = replicates;
        r.ciLow = sortedQuantile(sorted, alpha / 2) - 1;
        r.ciHigh = sortedQuantile(sorted, 1 - alpha / 2) - 1;
    }
    return results;
}

BootstrapResult bootstrapPercentileChange(
    const LatencyHistogram &a, const LatencyHistogram &b, double percentile, const BootstrapOptions &options)
{
    return bootstrapChanges(
        EmpiricalDistribution::fromHistogram(a), EmpiricalDistribution::fromHistogram(b), { percentile }, options)
        .constFirst();
}

BootstrapResult bootstrapMeanChange(
    const LatencyHistogram &a, const LatencyHistogram &b, const BootstrapOptions &options)
{
    return bootstrapChanges(
        EmpiricalDistribution::fromHistogram(a), EmpiricalDistribution::fromHistogram(b), { kNaN }, options)
        .constFirst();
}

MannWhitneyResult mannWhitney(const EmpiricalDistribution &a, const EmpiricalDistribution &b)
{
    auto keys = [](const EmpiricalDistribution &d) {
        std::vector<KeyCount> out;
        out.reserve(d.values().size());
        for (const auto &v : d.values())
            out.push_back({ v.ns, v.count });
        return out;
    };
    return mannWhitneyOf(keys(a), keys(b));
}

MannWhitneyResult mannWhitney(const LatencyHistogram &a, const LatencyHistogram &b)
{
    // Keyed by bucket, not by the clamped midpoint: the first and last buckets of two histograms would otherwise
    // get different values (each clamped to its own min or max) although they are the same bucket, i.e. ties.
    auto keys = [](const LatencyHistogram &h) {
        std::vector<KeyCount> out;
        for (const auto &bucket : h.buckets())
            out.push_back({ static_cast<double>(bucket.lowNs), bucket.count });
        return out;
    };
    return mannWhitneyOf(keys(a), keys(b));
}

} // namespace rpcscope
