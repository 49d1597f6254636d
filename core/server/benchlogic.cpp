#include "benchlogic.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <ctime>
#include <string>

namespace rpcscope {

std::optional<BenchMethod> benchMethodByName(std::string_view name)
{
    constexpr std::string_view service = "rpcscope.bench.v1.Bench";
    if (name.starts_with('/'))
        name.remove_prefix(1);
    if (name.starts_with(service) && name.size() > service.size()
        && (name[service.size()] == '/' || name[service.size()] == '.'))
        name.remove_prefix(service.size() + 1);
    if (name == "Echo")
        return BenchMethod::Echo;
    if (name == "Sum")
        return BenchMethod::Sum;
    if (name == "List")
        return BenchMethod::List;
    return std::nullopt;
}

namespace {

/// The work a burn is made of: xorshift steps (a few instructions each), inlined so that a profile names the burn by
/// burnCpu alone.
[[gnu::always_inline]] inline uint64_t burnSteps(uint64_t steps, uint64_t x)
{
    for (uint64_t step = 0; step < steps; ++step) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        asm volatile("" : "+r"(x)); // kept: the compiler may not fold the steps away
    }
    return x;
}

std::chrono::nanoseconds threadCpu()
{
    timespec now {};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return std::chrono::seconds(now.tv_sec) + std::chrono::nanoseconds(now.tv_nsec);
}

/// CPU nanoseconds a step takes on this machine, measured once (about 3 ms of steps).
double nsPerStep()
{
    static const double measured = [] {
        constexpr uint64_t steps = 1'000'000;
        const auto before = threadCpu();
        burnSteps(steps, 88172645463325252ULL);
        const auto spent = threadCpu() - before;
        return std::max(1e-3, static_cast<double>(spent.count()) / steps);
    }();
    return measured;
}

/// Below this a burn is counted out from the measured rate alone: two reads of the thread's CPU clock (a system
/// call, a microsecond or two in a virtual machine) would add more than a tenth to it.
constexpr double kClockFreeBelowNs = 20'000;

} // namespace

void burnCpu(std::chrono::nanoseconds cpuTime)
{
    if (cpuTime.count() <= 0)
        return;
    static std::atomic<uint64_t> sink { 0 };
    const auto target = static_cast<double>(cpuTime.count());
    double rate = nsPerStep();
    uint64_t x = 88172645463325252ULL;
    if (target < kClockFreeBelowNs) {
        // A burn of a few percent of a call (500 ns): steps counted from the rate, which is within a few percent.
        sink.fetch_add(burnSteps(static_cast<uint64_t>(std::llround(target / rate)), x), std::memory_order_relaxed);
        return;
    }
    // Most of the burn is steps of arithmetic counted out from a measured rate, not the thread's CPU clock read as
    // it goes: that clock is a system call (a microsecond or two in a virtual machine), and a profile should find a
    // burn in this function, as it would a server's own work, not in the kernel's clock. The rest is topped up from
    // the clock, read once a pass (two or three times a burn): the rate alone fell 2% short of 300 us when the CPU
    // ran faster than when the rate was measured, and a burn must never be shorter than asked.
    const auto start = threadCpu();
    uint64_t done = 0;
    auto next = static_cast<uint64_t>(std::llround(0.9 * target / rate));
    for (int pass = 0; pass < 16; ++pass) {
        next = std::max<uint64_t>(1, next);
        x = burnSteps(next, x);
        done += next;
        const auto spent = static_cast<double>((threadCpu() - start).count());
        if (spent >= target)
            break;
        rate = std::max(1e-3, spent / static_cast<double>(done)); // this burn's own rate, clock reads included
        next = static_cast<uint64_t>(std::llround((target - spent) / rate));
    }
    sink.fetch_add(x, std::memory_order_relaxed);
}

std::chrono::microseconds runEcho(benchpb::EchoRequest &request, benchpb::EchoResponse &reply)
{
    if (request.has_response_size())
        reply.mutable_payload()->assign(request.response_size(), 'x');
    else
        reply.set_payload(std::move(*request.mutable_payload()));
    return std::chrono::microseconds(request.delay_us());
}

std::chrono::microseconds runSum(const benchpb::SumRequest &request, benchpb::SumResponse &reply)
{
    int64_t sum = 0;
    for (int64_t n : request.nums())
        sum += n;
    reply.set_result(sum);
    return std::chrono::microseconds(0);
}

std::chrono::microseconds runList(const benchpb::ListRequest &request, benchpb::ListResponse &reply)
{
    constexpr uint32_t kMaxItems = 10'000'000;
    const uint32_t count = std::min(request.count(), kMaxItems);
    const std::string name(std::min<uint32_t>(request.name_size(), 1'000'000), 'n');
    reply.mutable_items()->Reserve(static_cast<int>(count));
    for (uint32_t i = 0; i < count; ++i) {
        benchpb::Item *item = reply.add_items();
        item->set_id(i);
        item->set_name(name);
        item->set_score(i * 0.5);
    }
    return std::chrono::microseconds(0);
}

google::protobuf::Message *BenchMessages::request(BenchMethod method)
{
    switch (method) {
    case BenchMethod::Echo:
        return &m_echoRequest;
    case BenchMethod::Sum:
        return &m_sumRequest;
    case BenchMethod::List:
        return &m_listRequest;
    }
    return nullptr;
}

google::protobuf::Message *BenchMessages::reply(BenchMethod method)
{
    switch (method) {
    case BenchMethod::Echo:
        return &m_echoReply;
    case BenchMethod::Sum:
        return &m_sumReply;
    case BenchMethod::List:
        return &m_listReply;
    }
    return nullptr;
}

std::chrono::microseconds BenchMessages::run(BenchMethod method)
{
    switch (method) {
    case BenchMethod::Echo:
        m_echoReply.Clear();
        return runEcho(m_echoRequest, m_echoReply);
    case BenchMethod::Sum:
        m_sumReply.Clear();
        return runSum(m_sumRequest, m_sumReply);
    case BenchMethod::List:
        m_listReply.Clear();
        return runList(m_listRequest, m_listReply);
    }
    return std::chrono::microseconds(0);
}

} // namespace rpcscope
