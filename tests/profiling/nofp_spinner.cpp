// A process that burns CPU three calls deep, built without frame pointers (tests/CMakeLists.txt): a profile's stacks
// reach its callers only when perf unwinds them from a copy of the stack (--profile-call-graph dwarf). It prints
// "ready" once spinning and stops by itself after the seconds given (default 60), or when killed.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

volatile std::uint64_t g_sink = 1; // kept: the compiler may not fold the work away

[[gnu::noinline]] void spinInner(int rounds)
{
    std::uint64_t x = g_sink;
    for (int i = 0; i < rounds; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    g_sink = x;
}

[[gnu::noinline]] void spinMiddle(int rounds)
{
    spinInner(rounds);
    g_sink = g_sink + 1; // not a tail call: spinMiddle stays on the stack
}

[[gnu::noinline]] void spinOuter(std::chrono::steady_clock::time_point until)
{
    while (std::chrono::steady_clock::now() < until) {
        spinMiddle(100000);
        g_sink = g_sink + 1;
    }
}

} // namespace

int main(int argc, char **argv)
{
    const int seconds = argc > 1 ? std::atoi(argv[1]) : 60;
    std::puts("ready");
    std::fflush(stdout);
    spinOuter(std::chrono::steady_clock::now() + std::chrono::seconds(seconds > 0 ? seconds : 60));
    return 0;
}
