#pragma once

// Chart conventions shared by the pages: latency axes are in milliseconds on a log scale.

class QCPAxis;

namespace rpcscope {

/// Ticks at 1-2-5 steps across the visible log range of a millisecond axis, labelled with adaptive units (us, ms, s).
void setLatencyTicks(QCPAxis *axis);

} // namespace rpcscope
