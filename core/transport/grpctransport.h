#pragma once

#include "net/grpctls.h"
#include "schema/schema.h"
#include "transport.h"

#include <QString>

#include <chrono>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace google::protobuf {
class Descriptor;
class MethodDescriptor;
} // namespace google::protobuf

namespace rpcscope {

/// The largest reply any transport takes unless --max-recv-size says otherwise: gRPC's default, 4 MiB.
inline constexpr int kDefaultMaxReceiveBytes = 4 * 1024 * 1024;

/// Where and how calls go; every transport reads the fields that apply to it.
struct GrpcTarget {
    QString address; ///< host:port (gRPC, msgpack-rpc) or a URL (HTTP)
    /// gRPC: separate HTTP/2 connections, callers spread evenly over them; msgpack-rpc: TCP connections, each
    /// carrying many calls; HTTP/1.1: keep-alive connections, each one call at a time (0 = one per caller).
    int connections = 1;
    std::chrono::nanoseconds timeout { 0 }; ///< per-call deadline; 0 = none
    int maxReceiveBytes = -1; ///< -1 = the default, kDefaultMaxReceiveBytes (gRPC's: 4 MiB) for every transport
    int maxSendBytes = -1; ///< -1 = gRPC's default (unlimited)
    /// h2grpc: the HTTP/2 flow-control window offered per stream, in bytes (the connection's is 4 times it, at most
    /// 2^31-1); 0 = 16 MiB, enough for a 10 MiB reply without waiting for window updates.
    int http2Window = 0;
    std::string authority; ///< :authority override (empty = from the address)
    std::vector<std::pair<std::string, std::string>> metadata; ///< sent with every call
    GrpcTls tls;
    /// Client threads, each polling its own completion queue (ghz's --cpus). See autoClientThreads().
    int clientThreads = 1;
    /// The callers sharing the channels (the run's -c): gRPC C++ sizes each channel's memory quota by it.
    int concurrency = 1;

    /// The largest reply to accept, in bytes: maxReceiveBytes, or the default.
    size_t receiveLimit() const
    {
        return static_cast<size_t>(maxReceiveBytes >= 0 ? maxReceiveBytes : kDefaultMaxReceiveBytes);
    }
};

/**
 * The default number of client threads for @p concurrency callers: one until there are many callers. Measured on
 * 2 cores: with the client pinned to one core, one thread beats two (c=1 p50 123 vs 163 us, c=50 21.9k vs 18.3k
 * calls/s), since gRPC hands replies between polling threads; unpinned at high concurrency, more threads help.
 */
int autoClientThreads(int concurrency);

/// Makes call number n's request when it changes from call to call (templates); thread-safe.
class RequestEncoder {
public:
    virtual ~RequestEncoder() = default;
    /// False with @p error when this call's request cannot be made.
    virtual bool encode(
        uint64_t callNumber, int workerId, std::mt19937_64 &rng, std::string *out, std::string *error) const = 0;
};

/**
 * How the client drives a streaming call (ghz's --stream-* flags); unary calls ignore it.
 *
 * Client and bidi streams send the requests in order (the -D array, or the one request), each @c interval after
 * the previous one, then close their side; a server stream sends its one request. Per received message the
 * latency is, on a server stream, the time since the previous message (the first: since the call began, the
 * time to first message) and, on a bidi stream, the time since the request it answers was sent (replies pair
 * with requests in order, as an echoing chat does). The call's latency is the whole stream's.
 */
struct StreamOptions {
    /// Client and bidi streams: messages to send per call, cycling through the requests (0 = each request once,
    /// or, with callDuration, as many as fit). Server streams: replies after which the client ends the call
    /// (0 = read until the server ends it).
    uint64_t callCount = 0;
    std::chrono::nanoseconds interval { 0 }; ///< from one of the client's messages going out to the next
    /// The client ends each call after this long (0 = no limit): client and bidi streams close their side (and
    /// read the rest), server streams are cancelled. A call ended by the client's own limit counts as OK.
    std::chrono::nanoseconds callDuration { 0 };
    /// Bidi streams: send each message only once the reply to the previous one is in, so every message's latency
    /// is one round trip with nothing queued before it (for servers that answer every message, as Chat does).
    bool pingPong = false;
};

struct GrpcCall {
    std::string methodPath; ///< "/pkg.Service/Method"
    /// Serialized once, reused: call n sends requests[n % size] (one entry unless -D gave an array).
    std::vector<std::string> requests;
    std::shared_ptr<const RequestEncoder> perCall; ///< set: encode each call's request anew instead
    Schema schema; ///< keeps the response type alive
    const google::protobuf::Descriptor *responseType = nullptr; ///< decode replies into this; nullptr = don't
    const google::protobuf::MethodDescriptor *method = nullptr; ///< the method called
    StreamOptions stream; ///< streaming methods only
    /// Fill CallOutcome::headers and trailers (one call shown to the user; a load run leaves it off: copying them
    /// costs every call).
    bool captureMetadata = false;
};

/// Calls (unary or streaming) through the generic stub on gRPC's completion queues: no generated code, no thread
/// per call.
std::unique_ptr<Transport> makeGrpcTransport(const GrpcTarget &target, const GrpcCall &call);

/// How many messages a streaming call of @p call sends (both gRPC clients plan their streams alike): one for a
/// server stream; else stream.callCount, or as many as fit in stream.callDuration (UINT64_MAX), or each request
/// once.
uint64_t streamMessagesToSend(const GrpcCall &call);

} // namespace rpcscope
