#pragma once

// Internal to core: the non-gRPC transports, made through makeTransport() (transports.h).

#include "codec/codec.h"
#include "grpctransport.h"

#include <memory>
#include <string>

namespace rpcscope {

struct HttpEndpoint {
    std::string host;
    std::string port;
    std::string path; ///< request target, e.g. "/rpcscope.bench.v1.Bench/Echo"
    std::string hostHeader;
};

std::unique_ptr<Transport> makeHttpTransport(
    const HttpEndpoint &endpoint, const GrpcTarget &target, const GrpcCall &call, Codec codec, std::string *error);
std::unique_ptr<Transport> makeMsgpackTransport(const std::string &host, const std::string &port,
    const GrpcTarget &target, const GrpcCall &call, const std::string &method, bool paramsMap, std::string *error);
/**
 * gRPC on bare HTTP/2 (nghttp2) over our own sockets: each call a stream with gRPC's length-prefixed message, its
 * status and message from the trailers (or a trailers-only reply's headers), grpc-timeout, metadata, message size
 * limits, identity encoding, many calls in flight per connection (--connections K), windows large enough for big
 * messages; TLS with ALPN h2 (OpenSSL) and mutual TLS as --cacert/--cert/--key/--cname/--skipTLS say. Unary calls and
 * server, client and bidi streams. nullptr with @p error when a TLS file does not load.
 */
std::unique_ptr<Transport> makeH2GrpcTransport(const std::string &host, const std::string &port,
    const GrpcTarget &target, const GrpcCall &call, std::string *error);
std::unique_ptr<Transport> makeInProcessTransport(
    const GrpcTarget &target, const GrpcCall &call, Codec codec, std::string *error);

/// gRPC's mapping of HTTP status codes to gRPC codes (for counting HTTP errors like gRPC ones).
int grpcStatusForHttp(unsigned httpStatus);

} // namespace rpcscope
