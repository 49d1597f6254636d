#pragma once

// The client side of TLS for rpcscope's own HTTP/2 gRPC client (OpenSSL through Asio's TLS streams).

#include "net/grpctls.h"

#include <boost/asio/ssl/context.hpp>

#include <memory>
#include <string>

namespace rpcscope::net {

/**
 * A TLS client context as gRPC's client makes one: HTTP/2 offered by ALPN, the server's certificate checked against
 * @p tls's CAs (or the system's) unless skipVerify, our certificate and key for mutual TLS. nullptr with @p error
 * naming the flag whose file did not load. The host name check and SNI are per connection (the stream's).
 */
std::unique_ptr<boost::asio::ssl::context> tlsClientContext(const GrpcTls &tls, std::string *error);

} // namespace rpcscope::net
