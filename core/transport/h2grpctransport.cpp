// gRPC on bare HTTP/2: calls framed by nghttp2 over our own sockets (Boost.Asio), no gRPC C++ runtime in the way.
// See makeH2GrpcTransport() in transportfactories.h for what it does, and h2grpcparts.h for its parts.

#include "h2grpcparts.h"

#include "net/tlsclient.h"

#include <google/protobuf/message.h>

#include <algorithm>

namespace rpcscope {

namespace h2grpc {

namespace {
constexpr auto kSweepPeriod = std::chrono::milliseconds(5); ///< how often the calls' deadlines are checked
} // namespace

H2GrpcTransport::H2GrpcTransport(
    const GrpcTarget &target, const GrpcCall &call, tcp::resolver::results_type addresses, std::string authority)
    : m_target(target)
    , m_call(call)
    , m_addresses(std::move(addresses))
    , m_authority(std::move(authority))
    , m_threads(std::clamp(target.clientThreads, 1, 64))
{
    const int connections = std::max(1, target.connections);
    for (int i = 0; i < connections; ++i)
        m_connections.push_back(std::make_unique<H2GrpcConnection>(this, m_threads.context(static_cast<size_t>(i))));
    if (target.timeout.count() > 0) {
        m_sweep.start(m_threads, kSweepPeriod, [this](size_t thread, Clock::time_point now) {
            for (size_t c = thread; c < m_connections.size(); c += static_cast<size_t>(m_threads.size()))
                m_connections[c]->checkDeadlines(now);
        });
    }
    m_headers = {
        { ":method", "POST" },
        { ":scheme", target.tls.enabled ? "https" : "http" },
        { ":path", call.methodPath },
        { ":authority", m_authority },
        { "content-type", "application/grpc" },
        { "te", "trailers" },
        { "user-agent", "rpcscope-h2grpc" },
    };
    if (target.timeout.count() > 0) {
        // gRPC's timeout header: at most 8 digits and a unit; milliseconds up to ~27 hours, then seconds.
        const auto ms = std::chrono::ceil<std::chrono::milliseconds>(target.timeout).count();
        m_headers.emplace_back(
            "grpc-timeout", ms < 100000000 ? std::to_string(ms) + "m" : std::to_string(ms / 1000) + "S");
    }
    for (const auto &[key, value] : target.metadata)
        m_headers.emplace_back(key, value);
    for (const auto &[name, value] : m_headers)
        m_nv.push_back({ reinterpret_cast<uint8_t *>(const_cast<char *>(name.data())),
            reinterpret_cast<uint8_t *>(const_cast<char *>(value.data())), name.size(), value.size(),
            NGHTTP2_NV_FLAG_NONE });
    m_threads.start();
}

H2GrpcTransport::~H2GrpcTransport()
{
    m_sweep.stop();
    m_threads.stop();
}

bool H2GrpcTransport::initBodies(std::string *error)
{
    return m_bodies.init(
        m_call,
        [](const google::protobuf::Message &message, std::string *out, std::string *) {
            return message.SerializeToString(out);
        },
        error);
}

std::unique_ptr<CallSlot> H2GrpcTransport::makeSlot(int index, CallSink *sink)
{
    H2GrpcConnection *connection = m_connections[static_cast<size_t>(index) % m_connections.size()].get();
    return std::make_unique<H2GrpcSlot>(this, connection, index, sink);
}

} // namespace h2grpc

std::unique_ptr<Transport> makeH2GrpcTransport(const std::string &host, const std::string &port,
    const GrpcTarget &target, const GrpcCall &call, std::string *error)
{
    net::tcp::resolver::results_type addresses;
    if (!net::resolve(host, port, &addresses, error))
        return nullptr;
    const std::string authority = target.authority.empty() ? host + ":" + port : target.authority;
    auto transport = std::make_unique<h2grpc::H2GrpcTransport>(target, call, std::move(addresses), authority);
    if (!transport->initBodies(error))
        return nullptr;
    if (target.tls.enabled) {
        transport->m_tls = net::tlsClientContext(target.tls, error);
        if (!transport->m_tls)
            return nullptr;
        transport->m_tlsName = target.tls.serverNameOverride.empty() ? host : target.tls.serverNameOverride;
    }
    return transport;
}

} // namespace rpcscope
