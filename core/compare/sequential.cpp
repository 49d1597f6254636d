#include "sequential.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rpcscope {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kLargestInput = 1e150;

double validConfidence(double confidence)
{
    return confidence > 0 && confidence < 1 ? confidence : 0.95;
}

} // namespace

SequentialRatio::SequentialRatio(const SequentialOptions &options)
    : m_confidence(validConfidence(options.confidence))
    , m_mixingVariance(options.mixingVariance > 0 && std::isfinite(options.mixingVariance)
              ? options.mixingVariance
              : tunedMixingVariance(options.plannedPairs, m_confidence))
    , m_minimumSd(options.minimumSd > 0 && std::isfinite(options.minimumSd) ? options.minimumSd : 0)
{
}

bool SequentialRatio::add(double logRatio)
{
    if (!std::isfinite(logRatio) || std::fabs(logRatio) > kLargestInput)
        return false;
    ++m_count;
    const double delta = logRatio - m_mean;
    m_mean += delta / m_count;
    m_m2 += delta * (logRatio - m_mean);
    m_maxLogE = std::max(m_maxLogE, logEValue(0));
    return true;
}

void SequentialRatio::reset()
{
    m_count = 0;
    m_mean = 0;
    m_m2 = 0;
    m_maxLogE = 0;
}

double SequentialRatio::meanLog() const
{
    return m_count > 0 ? m_mean : kNaN;
}

double SequentialRatio::sdLog() const
{
    return m_count > 1 ? std::sqrt(std::max(m_m2, 0.0) / (m_count - 1)) : kNaN;
}

double SequentialRatio::estimate() const
{
    return std::expm1(meanLog());
}

double SequentialRatio::sumOfSquares() const
{
    const double floor = (m_count - 1) * m_minimumSd * m_minimumSd;
    return std::max({ m_m2, floor, 0.0 });
}

double SequentialRatio::halfWidthLog() const
{
    if (m_count < 1)
        return kInf;
    const double u = boundaryFactor(m_count, m_mixingVariance, m_confidence);
    if (std::isinf(u))
        return kInf;
    return std::sqrt(u * (sumOfSquares() / m_count));
}

bool SequentialRatio::bounded() const
{
    return std::isfinite(halfWidthLog());
}

double SequentialRatio::lowerLog() const
{
    const double h = halfWidthLog();
    return std::isfinite(h) ? m_mean - h : -kInf;
}

double SequentialRatio::upperLog() const
{
    const double h = halfWidthLog();
    return std::isfinite(h) ? m_mean + h : kInf;
}

double SequentialRatio::lower() const
{
    return std::expm1(lowerLog());
}

double SequentialRatio::upper() const
{
    return std::expm1(upperLog());
}

double SequentialRatio::logEValue(double mean) const
{
    if (m_count < 1)
        return 0;
    const double n = m_count;
    const double g = std::log1p(n * m_mixingVariance); // log(1 + n c^2)
    const double k = 1 / (1 + n * m_mixingVariance);
    const double s = sumOfSquares();
    const double y = m_mean - mean;
    // r = n y^2 / S, the squared t statistic over n - 1; computed from y / sqrt(S / n) so that it does not overflow
    // before it has to. All pairs equal: r is 0 at their value and infinite elsewhere.
    double r;
    if (s > 0) {
        const double z = y / std::sqrt(s / n);
        r = z * z;
    } else {
        r = y == 0 ? 0 : kInf;
    }
    // log((1 + r) / (1 + k r)), which tends to log(1/k) = g as r grows.
    const double logRatio = std::isinf(r) ? g : std::log1p(r) - std::log1p(k * r);
    return -0.5 * g + 0.5 * n * logRatio;
}

double SequentialRatio::eValue() const
{
    return std::exp(logEValue(0));
}

double SequentialRatio::anytimePValue() const
{
    return std::min(1.0, std::exp(-m_maxLogE));
}

SequentialDecision SequentialRatio::decide(double threshold) const
{
    if (!(threshold >= 0) || !bounded())
        return SequentialDecision::Undecided;
    const double up = std::log1p(threshold);
    const double down = threshold < 1 ? std::log1p(-threshold) : -kInf;
    const double lo = lowerLog();
    const double hi = upperLog();
    if (lo > 0 && m_mean > up)
        return SequentialDecision::Regression;
    if (hi < 0 && m_mean < down)
        return SequentialDecision::Improvement;
    if (lo > down && hi < up)
        return SequentialDecision::NoChangeBeyondThreshold;
    return SequentialDecision::Undecided;
}

double SequentialRatio::boundaryFactor(int n, double mixingVariance, double confidence)
{
    if (n < 1 || !(mixingVariance > 0))
        return kInf;
    const double g = std::log1p(n * mixingVariance);
    const double level = -2 * std::log1p(-validConfidence(confidence)); // 2 log(1/alpha)
    const double l = (g + level) / n;
    if (!(l < g))
        return kInf;
    // (e^L - 1) / (1 - e^(L - g)), with both differences from expm1 so that large n loses nothing.
    return std::expm1(l) / -std::expm1(l - g);
}

int SequentialRatio::firstBoundedPair(double mixingVariance, double confidence)
{
    // Boundedness is (n - 1) log(1 + n c^2) > 2 log(1/alpha), which only grows with n: double, then bisect.
    constexpr int kLimit = 1000000000;
    auto isBounded = [&](int n) { return std::isfinite(boundaryFactor(n, mixingVariance, confidence)); };
    int lo = 1; // never bounded
    int hi = 2;
    while (!isBounded(hi)) {
        if (hi == kLimit)
            return 0;
        lo = hi;
        hi = hi > kLimit / 2 ? kLimit : hi * 2;
    }
    while (hi - lo > 1) {
        const int mid = lo + (hi - lo) / 2;
        (isBounded(mid) ? hi : lo) = mid;
    }
    return hi;
}

double SequentialRatio::tunedMixingVariance(int plannedPairs, double confidence)
{
    const int n = std::max(plannedPairs, 2);
    // u_n as a function of log c^2 is infinite for small c^2, then falls to one minimum and rises: golden-section
    // search on [-20, 20] converges to it (an infinite value compares like any value too far left).
    auto f = [&](double logC2) { return boundaryFactor(n, std::exp(logC2), confidence); };
    const double invPhi = (std::sqrt(5.0) - 1) / 2;
    double a = -20;
    double b = 20;
    double x1 = b - invPhi * (b - a);
    double x2 = a + invPhi * (b - a);
    double f1 = f(x1);
    double f2 = f(x2);
    for (int i = 0; i < 200 && b - a > 1e-12; ++i) {
        if (f1 < f2) {
            b = x2;
            x2 = x1;
            f2 = f1;
            x1 = b - invPhi * (b - a);
            f1 = f(x1);
        } else {
            a = x1;
            x1 = x2;
            f1 = f2;
            x2 = a + invPhi * (b - a);
            f2 = f(x2);
        }
    }
    return std::exp((a + b) / 2);
}

} // namespace rpcscope
