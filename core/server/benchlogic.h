#pragma once

// Internal to core: the bench service's methods on generated messages, shared by every built-in server (gRPC,
// HTTP, msgpack-rpc) and by the in-process baseline, so they all do exactly the same work per call.

#include "rpcscope/bench/v1/bench.pb.h"
#include "server/burn.h"

#include <chrono>
#include <optional>
#include <string_view>

namespace rpcscope {

namespace benchpb = ::rpcscope::bench::v1;

enum class BenchMethod { Echo, Sum, List };

/// "Echo", "rpcscope.bench.v1.Bench/Echo", "/rpcscope.bench.v1.Bench/Echo" or "rpcscope.bench.v1.Bench.Echo".
std::optional<BenchMethod> benchMethodByName(std::string_view name);

/// Returns the delay the reply must wait (Echo's delay_us); zero for the others.
std::chrono::microseconds runEcho(benchpb::EchoRequest &request, benchpb::EchoResponse &reply);
std::chrono::microseconds runSum(const benchpb::SumRequest &request, benchpb::SumResponse &reply);
std::chrono::microseconds runList(const benchpb::ListRequest &request, benchpb::ListResponse &reply);

/// One request and one reply message per method, reused call after call (one per connection or thread).
class BenchMessages {
public:
    google::protobuf::Message *request(BenchMethod method);
    google::protobuf::Message *reply(BenchMethod method);
    /// Runs @p method from request(method) into reply(method) (cleared first).
    std::chrono::microseconds run(BenchMethod method);

private:
    benchpb::EchoRequest m_echoRequest;
    benchpb::EchoResponse m_echoReply;
    benchpb::SumRequest m_sumRequest;
    benchpb::SumResponse m_sumReply;
    benchpb::ListRequest m_listRequest;
    benchpb::ListResponse m_listReply;
};

} // namespace rpcscope
