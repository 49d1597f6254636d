#include "replicatetest.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace rpcscope {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A latency histogram keeps values to about 0.8% either side of a bucket's midpoint: a uniform rounding error of
// that width on the log scale has variance width^2 / 12.
constexpr double kBucketLogWidth = 0.016;
constexpr double kRoundingVariance = kBucketLogWidth * kBucketLogWidth / 12;

// The continued fraction of the incomplete beta function (modified Lentz), converging for x < (a+1)/(a+b+2).
double betaContinuedFraction(double a, double b, double x)
{
    constexpr double kTiny = 1e-300;
    constexpr double kEpsilon = 1e-15;
    auto awayFromZero = [](double v) { return std::fabs(v) < kTiny ? kTiny : v; };
    double c = 1;
    double d = 1 / awayFromZero(1 - (a + b) * x / (a + 1));
    double h = d;
    // One Lentz step with the next coefficient: the factor it multiplies h by.
    auto step = [&](double coefficient) {
        d = 1 / awayFromZero(1 + coefficient * d);
        c = awayFromZero(1 + coefficient / c);
        return d * c;
    };
    for (int m = 1; m <= 500; ++m) {
        const double m2 = 2.0 * m;
        h *= step(m * (b - m) * x / ((a + m2 - 1) * (a + m2)));
        const double last = step(-(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1)));
        h *= last;
        if (std::fabs(last - 1) < kEpsilon)
            break;
    }
    return h;
}

// The regularized incomplete beta function I_x(a, b).
double incompleteBeta(double a, double b, double x)
{
    if (x <= 0)
        return 0;
    if (x >= 1)
        return 1;
    const double logFront = std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
    const double front = std::exp(logFront);
    if (x < (a + 1) / (a + b + 2))
        return front * betaContinuedFraction(a, b, x) / a;
    return 1 - front * betaContinuedFraction(b, a, 1 - x) / b;
}

} // namespace

double studentTCdf(double t, double df)
{
    if (std::isnan(t) || !(df > 0))
        return kNaN;
    if (std::isinf(t))
        return t > 0 ? 1.0 : 0.0;
    const double tail = 0.5 * incompleteBeta(df / 2, 0.5, df / (df + t * t)); // P(T > |t|)
    return t > 0 ? 1 - tail : tail;
}

double studentTQuantile(double q, double df)
{
    if (!(q > 0 && q < 1) || !(df > 0))
        return kNaN;
    // The CDF is monotone: bisection to double precision is 100-odd cheap steps, and never diverges.
    double lo = -1;
    double hi = 1;
    while (studentTCdf(lo, df) > q)
        lo *= 2;
    while (studentTCdf(hi, df) < q)
        hi *= 2;
    for (int i = 0; i < 200 && hi - lo > 1e-12 * std::max(1.0, std::fabs(hi)); ++i) {
        const double mid = (lo + hi) / 2;
        (studentTCdf(mid, df) < q ? lo : hi) = mid;
    }
    return (lo + hi) / 2;
}

ReplicateChange welchLogChange(const std::vector<double> &a, const std::vector<double> &b, double confidence)
{
    ReplicateChange r;
    r.countA = static_cast<int>(a.size());
    r.countB = static_cast<int>(b.size());
    r.confidence = confidence;
    if (a.size() < 2 || b.size() < 2) {
        r.reason
            = QStringLiteral("needs at least 2 replicates a side (A has %1, B has %2)").arg(a.size()).arg(b.size());
        return r;
    }
    auto logs = [&r](const std::vector<double> &values, std::vector<double> *out) {
        for (const double v : values) {
            if (!(v > 0) || !std::isfinite(v)) {
                r.reason = QStringLiteral("a replicate's value is not positive");
                return false;
            }
            out->push_back(std::log(v));
        }
        return true;
    };
    std::vector<double> la;
    std::vector<double> lb;
    if (!logs(a, &la) || !logs(b, &lb))
        return r;
    auto meanVariance = [](const std::vector<double> &x) {
        const double mean = std::accumulate(x.cbegin(), x.cend(), 0.0) / static_cast<double>(x.size());
        double ss = 0;
        for (const double v : x)
            ss += (v - mean) * (v - mean);
        return std::pair(mean, ss / static_cast<double>(x.size() - 1) + kRoundingVariance);
    };
    const auto [meanA, varA] = meanVariance(la);
    const auto [meanB, varB] = meanVariance(lb);
    const auto nA = static_cast<double>(la.size());
    const auto nB = static_cast<double>(lb.size());
    const double sa = varA / nA;
    const double sb = varB / nB;
    r.standardError = std::sqrt(sa + sb);
    r.degreesOfFreedom = (sa + sb) * (sa + sb) / (sa * sa / (nA - 1) + sb * sb / (nB - 1));
    const double difference = meanB - meanA;
    const double t = difference / r.standardError;
    r.pValue = std::clamp(2 * studentTCdf(-std::fabs(t), r.degreesOfFreedom), 0.0, 1.0);
    const double half = studentTQuantile(0.5 + confidence / 2, r.degreesOfFreedom) * r.standardError;
    r.geometricMeanA = std::exp(meanA);
    r.geometricMeanB = std::exp(meanB);
    r.estimate = std::expm1(difference);
    r.ciLow = std::expm1(difference - half);
    r.ciHigh = std::expm1(difference + half);
    r.valid = true;
    return r;
}

ReplicateChange pairedLogChange(const std::vector<double> &a, const std::vector<double> &b, double confidence)
{
    ReplicateChange r;
    r.countA = static_cast<int>(a.size());
    r.countB = static_cast<int>(b.size());
    r.confidence = confidence;
    if (a.size() != b.size() || a.size() < 2) {
        r.reason = a.size() != b.size()
            ? QStringLiteral("has %1 replicates in A and %2 in B: they do not pair").arg(a.size()).arg(b.size())
            : QStringLiteral("needs at least 2 pairs (there are %1)").arg(a.size());
        return r;
    }
    std::vector<double> differences;
    double sumA = 0;
    double sumB = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        if (!(a[i] > 0) || !(b[i] > 0) || !std::isfinite(a[i]) || !std::isfinite(b[i])) {
            r.reason = QStringLiteral("a replicate's value is not positive");
            return r;
        }
        sumA += std::log(a[i]);
        sumB += std::log(b[i]);
        differences.push_back(std::log(b[i]) - std::log(a[i]));
    }
    const auto n = static_cast<double>(differences.size());
    const double mean = (sumB - sumA) / n;
    double ss = 0;
    for (const double d : differences)
        ss += (d - mean) * (d - mean);
    const double variance = ss / (n - 1) + 2 * kRoundingVariance;
    r.standardError = std::sqrt(variance / n);
    r.degreesOfFreedom = n - 1;
    const double t = mean / r.standardError;
    r.pValue = std::clamp(2 * studentTCdf(-std::fabs(t), r.degreesOfFreedom), 0.0, 1.0);
    const double half = studentTQuantile(0.5 + confidence / 2, r.degreesOfFreedom) * r.standardError;
    r.geometricMeanA = std::exp(sumA / n);
    r.geometricMeanB = std::exp(sumB / n);
    r.estimate = std::expm1(mean);
    r.ciLow = std::expm1(mean - half);
    r.ciHigh = std::expm1(mean + half);
    r.valid = true;
    return r;
}

std::vector<double> holmAdjust(const std::vector<double> &pValues)
{
    std::vector<size_t> order;
    for (size_t i = 0; i < pValues.size(); ++i) {
        if (!std::isnan(pValues[i]))
            order.push_back(i);
    }
    std::sort(order.begin(), order.end(), [&](size_t x, size_t y) { return pValues[x] < pValues[y]; });
    std::vector<double> adjusted(pValues.size(), kNaN);
    const auto m = static_cast<double>(order.size());
    double running = 0;
    for (size_t k = 0; k < order.size(); ++k) {
        running = std::max(running, std::min(1.0, (m - static_cast<double>(k)) * pValues[order[k]]));
        adjusted[order[k]] = running;
    }
    return adjusted;
}

double minimumDetectableChange(double standardError, double df, double alpha, double power)
{
    if (!(standardError > 0) || !(df > 0) || !(alpha > 0 && alpha < 1))
        return kNaN;
    const double k = studentTQuantile(1 - alpha / 2, df) + studentTQuantile(power, df);
    return std::expm1(k * standardError);
}

} // namespace rpcscope
