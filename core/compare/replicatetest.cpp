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

namespace {

/// The logs of @p values into @p out; false, with the reason in @p r, when one is not a positive number.
bool logsOf(const std::vector<double> &values, std::vector<double> *out, ReplicateChange *r)
{
    for (const double v : values) {
        if (!(v > 0) || !std::isfinite(v)) {
            r->reason = QStringLiteral("a replicate's value is not positive");
            return false;
        }
        out->push_back(std::log(v));
    }
    return true;
}

double meanOf(const std::vector<double> &x)
{
    return std::accumulate(x.cbegin(), x.cend(), 0.0) / static_cast<double>(x.size());
}

/// The sample variance of @p x (about its mean), plus the bucket rounding of @p roundings values.
double varianceOf(const std::vector<double> &x, double roundings)
{
    const double mean = meanOf(x);
    double ss = 0;
    for (const double v : x)
        ss += (v - mean) * (v - mean);
    return ss / static_cast<double>(x.size() - 1) + roundings * kRoundingVariance;
}

/// Completes @p r from the mean logs of A and B and the standard error and degrees of freedom of their difference:
/// its t test, interval and estimate as ratios.
void judgeLogDifference(double meanA, double meanB, double standardError, double df, ReplicateChange *r)
{
    r->standardError = standardError;
    r->degreesOfFreedom = df;
    const double difference = meanB - meanA;
    const double t = difference / standardError;
    r->pValue = std::clamp(2 * studentTCdf(-std::fabs(t), df), 0.0, 1.0);
    const double half = studentTQuantile(0.5 + r->confidence / 2, df) * standardError;
    r->geometricMeanA = std::exp(meanA);
    r->geometricMeanB = std::exp(meanB);
    r->estimate = std::expm1(difference);
    r->ciLow = std::expm1(difference - half);
    r->ciHigh = std::expm1(difference + half);
    r->valid = true;
}

} // namespace

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
    std::vector<double> la;
    std::vector<double> lb;
    if (!logsOf(a, &la, &r) || !logsOf(b, &lb, &r))
        return r;
    const auto nA = static_cast<double>(la.size());
    const auto nB = static_cast<double>(lb.size());
    const double sa = varianceOf(la, 1) / nA;
    const double sb = varianceOf(lb, 1) / nB;
    judgeLogDifference(meanOf(la), meanOf(lb), std::sqrt(sa + sb),
        (sa + sb) * (sa + sb) / (sa * sa / (nA - 1) + sb * sb / (nB - 1)), &r);
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
    std::vector<double> la;
    std::vector<double> lb;
    if (!logsOf(a, &la, &r) || !logsOf(b, &lb, &r))
        return r;
    std::vector<double> differences;
    for (size_t i = 0; i < la.size(); ++i)
        differences.push_back(lb[i] - la[i]);
    const auto n = static_cast<double>(differences.size());
    // each ratio carries both its values' bucket rounding
    judgeLogDifference(meanOf(la), meanOf(lb), std::sqrt(varianceOf(differences, 2) / n), n - 1, &r);
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
