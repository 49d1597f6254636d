#!/usr/bin/env python3
"""Reference values for tests/tst_sequential.cpp, computed without the closed form that core/compare/sequential.cpp
uses. Standard library only; several minutes.

For a candidate mean m, the mixture likelihood ratio

    M(m) = int dsigma/sigma int dmu prod_i N(x_i; mu, sigma^2) N(mu; m, c^2 sigma^2)
           / int dsigma/sigma prod_i N(x_i; m, sigma^2)

is integrated numerically (trapezoid rules in log sigma and in mu, in log space), and each end of the interval
{m : M(m) < 1/alpha} is found by bisection. The tuning is a ternary search over log c^2 of the boundary factor u_n;
the first bounded pair is found by counting up.
"""

import math


def logsumexp(values):
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))


def log_normal_pdf(x, mean, var):
    return -0.5 * math.log(2 * math.pi * var) - (x - mean) ** 2 / (2 * var)


def log_mixture_ratio(x, m, c2, sigma_points=1000, mu_points=601):
    n = len(x)
    xbar = sum(x) / n
    # The scale of the data about m; log sigma runs from far below it to far above (the integrands fall like
    # sigma^-n there, so the upper end must be far for small n).
    scale = math.sqrt(sum((xi - xbar) ** 2 for xi in x) / n + (xbar - m) ** 2)
    lo, hi = math.log(scale) - 9, math.log(scale) + 20
    numerator, denominator = [], []
    for j in range(sigma_points):
        log_sigma = lo + (hi - lo) * j / (sigma_points - 1)
        var = math.exp(2 * log_sigma)
        edge = math.log(0.5) if j in (0, sigma_points - 1) else 0.0
        denominator.append(edge + sum(log_normal_pdf(xi, m, var) for xi in x))
        # mu over the bulk of the product of the likelihood and the mixture: their joint mean +- 14 sds.
        centre = (xbar * c2 * n + m) / (c2 * n + 1)
        spread = math.sqrt(var * c2 / (1 + n * c2))
        a, b = centre - 14 * spread, centre + 14 * spread
        step = (b - a) / (mu_points - 1)
        terms = []
        for k in range(mu_points):
            mu = a + step * k
            weight = 0.5 * step if k in (0, mu_points - 1) else step
            likelihood = sum(log_normal_pdf(xi, mu, var) for xi in x)
            terms.append(math.log(weight) + log_normal_pdf(mu, m, c2 * var) + likelihood)
        numerator.append(edge + logsumexp(terms))
    return logsumexp(numerator) - logsumexp(denominator)


def interval_end(x, c2, alpha, inside, outside):
    target = math.log(1 / alpha)
    for _ in range(34):
        mid = 0.5 * (inside + outside)
        if log_mixture_ratio(x, mid, c2) < target:
            inside = mid
        else:
            outside = mid
    return 0.5 * (inside + outside)


def boundary_factor(n, c2, alpha):
    g = math.log1p(n * c2)
    level = (g + 2 * math.log(1 / alpha)) / n
    if level >= g:
        return math.inf
    return math.expm1(level) / -math.expm1(level - g)


def tuned_mixing_variance(n, alpha):
    lo, hi = -20.0, 20.0
    for _ in range(200):
        m1, m2 = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        if boundary_factor(n, math.exp(m1), alpha) < boundary_factor(n, math.exp(m2), alpha):
            hi = m2
        else:
            lo = m1
    return math.exp((lo + hi) / 2)


if __name__ == "__main__":
    for x, c2, alpha in [
        ([0.10, -0.05, 0.20, 0.07, 0.12], 1.0, 0.05),
        ([0.031, 0.094], 1000.0, 0.05),
        ([0.02, -0.01, 0.05], 100.0, 0.10),
    ]:
        xbar = sum(x) / len(x)
        lower = interval_end(x, c2, alpha, xbar, xbar - 5)
        upper = interval_end(x, c2, alpha, xbar, xbar + 5)
        print(f"{x} c2={c2} alpha={alpha}: [{lower!r}, {upper!r}], log M(0) = {log_mixture_ratio(x, 0.0, c2)!r}")
    for planned, alpha in [(200, 0.05), (50, 0.05), (20, 0.01)]:
        c2 = tuned_mixing_variance(planned, alpha)
        first = 1
        while math.isinf(boundary_factor(first, c2, alpha)):
            first += 1
        print(f"planned {planned} alpha={alpha}: c2 = {c2!r}, u = {boundary_factor(planned, c2, alpha)!r}, "
              f"first bounded pair {first}")
