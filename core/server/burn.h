#pragma once

// A server's CPU cost per call made on purpose (serve --burn): public, so that its size can be checked by itself.

#include <chrono>

namespace rpcscope {

/**
 * Keeps the calling thread busy until it has used @p cpuTime of CPU time of its own (CLOCK_THREAD_CPUTIME_ID), so
 * time it spends preempted does not count: a server made to cost CPU per call, below what a timer can add. From
 * 20 us on it reads that clock to be never short; below, the steps are counted from a rate measured once, as two
 * reads of the clock would cost more than a tenth of the burn. Returns at once for zero.
 */
void burnCpu(std::chrono::nanoseconds cpuTime);

/**
 * burnCpu() when there is a burn: a server without one never enters it, so its profile never names it (under
 * AddressSanitizer even an early return costs a fake stack frame, and an A/A profile showed 0.37 us a call in it).
 */
inline void burnCpuIfAsked(std::chrono::nanoseconds cpuTime)
{
    if (cpuTime.count() > 0)
        burnCpu(cpuTime);
}

} // namespace rpcscope
