#pragma once

#include <QSet>

#include <cstdint>
#include <sys/types.h>

namespace rpcscope {

/// User + system CPU seconds used by this process so far.
double processCpuSeconds();
/// Resident set size of this process now, in bytes (0 when unknown).
uint64_t processRssBytes();

/**
 * CPU seconds and resident set of another process (e.g. a server rpcscope started). The CPU time is the process's
 * own CPU-time clock (clock_getcpuclockid: every thread's, in nanoseconds); /proc's clock ticks (10 ms at 100 Hz)
 * only when that clock cannot be read, and then cpuFromTicks says so.
 */
struct ProcessSample {
    bool valid = false;
    double cpuSeconds = 0;
    uint64_t rssBytes = 0;
    bool cpuFromTicks = false;
    /// What its children that ended and were waited for used (the kernel's cutime + cstime: clock ticks).
    double reapedChildrenCpuSeconds = 0;
};
ProcessSample sampleProcess(pid_t pid);

/// All descendants of @p pid with it, from /proc.
QSet<qint64> processTree(qint64 pid);

} // namespace rpcscope
