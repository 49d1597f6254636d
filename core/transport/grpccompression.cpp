#include "grpccompression.h"

#include "metrics/callstatus.h"

#include <zlib.h>

#include <algorithm>
#include <limits>

namespace rpcscope {

GrpcEncoding grpcEncoding(std::string_view header)
{
    if (header.empty() || header == "identity")
        return GrpcEncoding::Identity;
    if (header == "gzip")
        return GrpcEncoding::Gzip;
    if (header == "deflate")
        return GrpcEncoding::Deflate;
    return GrpcEncoding::Other;
}

InflateResult inflateGrpcMessage(GrpcEncoding encoding, std::string_view in, size_t limit, std::string *out)
{
    out->clear();
    if (encoding != GrpcEncoding::Gzip && encoding != GrpcEncoding::Deflate)
        return { CallStatus::Internal, "a compressed message without an encoding this client inflates" };
    z_stream z {};
    // 16 + window bits: a gzip header and trailer around the data; the window bits alone: zlib's.
    if (inflateInit2(&z, encoding == GrpcEncoding::Gzip ? 16 + MAX_WBITS : MAX_WBITS) != Z_OK)
        return { CallStatus::Internal, "zlib could not start inflating" };
    const char *name = encoding == GrpcEncoding::Gzip ? "gzip" : "deflate";
    z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(in.data()));
    z.avail_in = static_cast<uInt>(std::min<size_t>(in.size(), std::numeric_limits<uInt>::max()));
    // Room grows as the message does, up to the limit and one byte past it (to see that it goes past).
    size_t room = std::min(limit + 1, std::max<size_t>(in.size() * 4, 4096));
    int result = Z_OK;
    while (result == Z_OK) {
        if (out->size() == room) {
            if (room > limit)
                break;
            room = std::min(limit + 1, room * 2);
        }
        const size_t done = out->size();
        out->resize(room);
        z.next_out = reinterpret_cast<Bytef *>(out->data() + done);
        z.avail_out = static_cast<uInt>(std::min<size_t>(room - done, std::numeric_limits<uInt>::max()));
        result = inflate(&z, Z_NO_FLUSH);
        out->resize(room - z.avail_out);
        if (result == Z_BUF_ERROR && z.avail_out > 0)
            break; // no progress with room to spare: the input ended early
        if (result == Z_BUF_ERROR)
            result = Z_OK; // out of room: grow and go on
    }
    const bool ended = result == Z_STREAM_END;
    const size_t left = z.avail_in;
    const std::string why = z.msg ? std::string(": ") + z.msg : std::string(" (it ends early)");
    inflateEnd(&z);
    if (out->size() > limit)
        return { CallStatus::ResourceExhausted,
            std::string("a ") + name + " message inflates past the receive limit of " + std::to_string(limit)
                + " bytes (raise it with --max-recv-size)" };
    if (!ended || left > 0)
        return { CallStatus::Internal,
            std::string("a message marked ") + name + " does not inflate"
                + (ended ? std::string(" (data after its end)") : why) };
    return {};
}

} // namespace rpcscope
