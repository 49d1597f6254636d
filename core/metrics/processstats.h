#pragma once

#include <cstdint>
#include <sys/types.h>

namespace rpcscope {

/// User + system CPU seconds used by this process so far.
double processCpuSeconds();
/// Resident set size of this process now, in bytes (0 when unknown).
uint64_t processRssBytes();

/// CPU seconds and resident set of another process (e.g. a server rpcscope started), from /proc.
struct ProcessSample {
    bool valid = false;
    double cpuSeconds = 0;
    uint64_t rssBytes = 0;
};
ProcessSample sampleProcess(pid_t pid);

} // namespace rpcscope
