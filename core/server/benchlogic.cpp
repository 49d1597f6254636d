#include "benchlogic.h"

#include <algorithm>
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

void burnCpu(std::chrono::microseconds cpuTime)
{
    if (cpuTime.count() <= 0)
        return;
    auto threadCpu = [] {
        timespec now {};
        ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
        return std::chrono::seconds(now.tv_sec) + std::chrono::nanoseconds(now.tv_nsec);
    };
    const auto until = threadCpu() + cpuTime;
    // Reading the thread's CPU clock is a system call: most of the time goes to plain arithmetic between reads,
    // as a server's own work would (about a microsecond a round), not to the kernel.
    volatile uint64_t sink = 0;
    uint64_t x = 88172645463325252ULL;
    do {
        for (int i = 0; i < 256; ++i) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        sink = sink + x;
    } while (threadCpu() < until);
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
