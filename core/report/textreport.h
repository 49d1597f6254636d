#pragma once

#include "metrics/runsnapshot.h"

#include <QString>

namespace rpcscope {

/// The percentiles every report shows (ghz's set plus 99.9 and 99.99).
const QList<double> &reportPercentiles();

/// A finished (or stopped) run as text, in ghz's summary shape: summary, histogram, distribution, status codes.
QString formatTextSummary(const RunSnapshot &run);

} // namespace rpcscope
