// gRPC message compression as rpcscope's own HTTP/2 client meets it: a reply's grpc-encoding, and the inflating of a
// message whose compressed flag is set (gzip and deflate, the two gRPC C++ offers).

#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace rpcscope {

enum class GrpcEncoding {
    Identity, ///< no grpc-encoding header, or "identity"
    Gzip,
    Deflate, ///< zlib's format (RFC 1950), as gRPC names it
    Other, ///< one this client cannot inflate (snappy, zstd, ...)
};

/// The grpc-encoding header's value, as the encoding it names.
GrpcEncoding grpcEncoding(std::string_view header);

/// What a client offers in grpc-accept-encoding: what gRPC C++ offers, so a server compresses for both clients alike.
inline constexpr std::string_view kGrpcAcceptEncoding = "identity,deflate,gzip";

struct InflateResult {
    int status = 0; ///< a CallStatus: Ok, ResourceExhausted (over @p limit), Internal (not valid data)
    std::string error;
};

/**
 * Inflates one compressed message @p in (its 5-byte prefix taken off) into @p out, replacing what it held. A message
 * that inflates past @p limit bytes stops there: ResourceExhausted, as one that came that large (a small message
 * that inflates to gigabytes is not inflated).
 */
InflateResult inflateGrpcMessage(GrpcEncoding encoding, std::string_view in, size_t limit, std::string *out);

} // namespace rpcscope
