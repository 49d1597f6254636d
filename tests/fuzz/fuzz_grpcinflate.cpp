// The bare HTTP/2 gRPC client's inflater (core/transport/grpccompression.h) on a compressed message a server could
// send: the first byte picks gzip or deflate, the next two the receive limit, the rest is the message. Whatever it
// is, the result keeps to the limit and says why it failed.

#include "fuzzapp.h"

#include "metrics/callstatus.h"
#include "transport/grpccompression.h"

#include <cstdlib>
#include <string>
#include <string_view>

RPCSCOPE_FUZZ_INITIALIZE_QT

using namespace rpcscope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    const GrpcEncoding encoding = data[0] & 1 ? GrpcEncoding::Deflate : GrpcEncoding::Gzip;
    const size_t limit = (size_t(data[1]) << 8 | data[2]) * 16; // up to ~1 MiB
    const std::string_view message(reinterpret_cast<const char *>(data + 3), size - 3);
    std::string out = "left from the message before";
    const InflateResult result = inflateGrpcMessage(encoding, message, limit, &out);
    if (result.status == CallStatus::Ok) {
        if (out.size() > limit || !result.error.empty())
            std::abort();
    } else if (result.status == CallStatus::ResourceExhausted) {
        if (out.size() <= limit || out.size() > limit + 1 || result.error.empty())
            std::abort(); // stopped one byte past the limit, not inflated in full
    } else if (result.status != CallStatus::Internal || result.error.empty()) {
        std::abort();
    }
    return 0;
}
