#include "charts.h"

#include "qcp.h"

#include <cmath>

namespace rpcscope {

void setLatencyTicks(QCPAxis *axis)
{
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    const double lower = axis->range().lower;
    const double upper = axis->range().upper;
    QList<double> ticks;
    for (int exponent = static_cast<int>(std::floor(std::log10(lower))); exponent <= static_cast<int>(std::ceil(std::log10(upper))); ++exponent) {
        for (double mantissa : {1.0, 2.0, 5.0}) {
            const double v = mantissa * std::pow(10.0, exponent);
            if (v >= lower && v <= upper)
                ticks << v;
        }
    }
    if (ticks.size() > 12) { // wide ranges: decades only
        QList<double> decades;
        for (double v : std::as_const(ticks))
            if (std::abs(std::log10(v) - std::round(std::log10(v))) < 1e-9)
                decades << v;
        ticks = decades;
    }
    for (double v : std::as_const(ticks)) {
        // Compact labels for round tick values: "200 us", "1 ms", "10 s".
        const double ns = v * 1e6;
        const auto [scale, unit] = ns < 1e3 ? std::pair(1.0, "ns") : ns < 1e6 ? std::pair(1e3, "us")
                                 : ns < 1e9 ? std::pair(1e6, "ms") : std::pair(1e9, "s");
        ticker->addTick(v, QString::number(ns / scale, 'g', 3) + QLatin1Char(' ') + QLatin1String(unit));
    }
    axis->setTicker(ticker);
}

} // namespace rpcscope
