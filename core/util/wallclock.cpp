#include "wallclock.h"

#include <sys/timex.h>

namespace rpcscope {

WallClockState wallClockState()
{
    WallClockState state;
    timex tx {};
    tx.modes = 0; // read only
    const int result = adjtimex(&tx);
    if (result < 0)
        return state;
    state.known = true;
    state.synchronized = result != TIME_ERROR && (tx.status & STA_UNSYNC) == 0;
    if (state.synchronized)
        state.estimatedErrorUs = static_cast<double>(tx.esterror);
    return state;
}

} // namespace rpcscope
