#pragma once

namespace rpcscope {

/// How far this machine's wall clock can be trusted, as the kernel keeps it (adjtimex): what lines up the time series
/// of workers on several machines.
struct WallClockState {
    bool known = false; ///< adjtimex answered
    bool synchronized = false; ///< an NTP/PTP daemon keeps it (the kernel's "unsynchronized" flag is clear)
    double estimatedErrorUs = -1; ///< synchronized: the daemon's estimate of the clock's error; -1 = unknown
};

WallClockState wallClockState();

} // namespace rpcscope
