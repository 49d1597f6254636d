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

std::string grpcTimeout(std::chrono::nanoseconds left)
{
    // At most 8 digits and a unit: milliseconds, rounded up (at least 1), up to ~27 hours, then seconds.
    const auto ms = std::max<int64_t>(1, std::chrono::ceil<std::chrono::milliseconds>(left).count());
    return ms < 100000000 ? std::to_string(ms) + "m" : std::to_string((ms + 999) / 1000) + "S";
}

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
    // A user-agent given as metadata goes first, as gRPC C++ puts an application's before its own.
    // The encodings offered, gRPC C++'s unless the caller names its own ("identity": no compressed replies).
    std::string userAgent = "rpcscope-h2grpc";
    std::string acceptEncoding(kGrpcAcceptEncoding);
    for (const auto &[key, value] : target.metadata) {
        if (key == "user-agent")
            userAgent = value + " " + userAgent;
        else if (key == "grpc-accept-encoding")
            acceptEncoding = value;
    }
    m_headers = {
        { ":method", "POST" },
        { ":scheme", target.tls.enabled ? "https" : "http" },
        { ":path", call.methodPath },
        { ":authority", m_authority },
        { "content-type", "application/grpc" },
        { "te", "trailers" },
        { "user-agent", userAgent },
        { "grpc-accept-encoding", acceptEncoding },
    };
    if (target.timeout.count() > 0) {
        m_timeoutHeader = static_cast<int>(m_headers.size());
        m_headers.emplace_back("grpc-timeout", grpcTimeout(target.timeout)); // each call's own: see startStream()
    }
    for (const auto &[key, value] : target.metadata) {
        if (key == "user-agent" || key == "grpc-accept-encoding")
            continue;
        // A "-bin" value is the user's bytes, base64 on the wire (unpadded, as gRPC C++ sends it).
        if (key.size() > 4 && key.compare(key.size() - 4, 4, "-bin") == 0) {
            const QByteArray encoded = QByteArray::fromRawData(value.data(), qsizetype(value.size()))
                                           .toBase64(QByteArray::Base64Encoding | QByteArray::OmitTrailingEquals);
            m_headers.emplace_back(key, encoded.toStdString());
        } else {
            m_headers.emplace_back(key, value);
        }
    }
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
    // As gRPC C++ names the server: --authority, else the TLS name override, else the address ("[v6]:port").
    std::string authority = target.authority;
    if (authority.empty() && target.tls.enabled)
        authority = target.tls.serverNameOverride;
    if (authority.empty())
        authority = (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + port;
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
