#pragma once

#include "engine/loadengine.h"

#include <QString>

#include <vector>

class QIODevice;

namespace rpcscope {

/**
 * Writes @p samples as CSV, one timed call a line: `sent_ns,latency_us,status` (the status by name, e.g. OK),
 * under that header. Written in chunks, so a long run's samples are not copied into one string. False when a
 * write fails (the device's errorString() says why).
 */
bool writeRawSamplesCsv(QIODevice &device, const std::vector<RawSample> &samples);

/// Writes @p path atomically (never half-written); false with @p error naming the path.
bool saveRawSamplesCsv(const QString &path, const std::vector<RawSample> &samples, QString *error);

} // namespace rpcscope
