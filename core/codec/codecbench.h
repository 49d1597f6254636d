#pragma once

#include "codec.h"

#include <chrono>
#include <string>
#include <vector>

namespace google::protobuf {
class Message;
} // namespace google::protobuf

namespace rpcscope {

/// One codec's cost on one message, without any network: what the serialization alone costs per call.
struct CodecTiming {
    Codec codec = Codec::Protobuf;
    size_t encodedBytes = 0; ///< the message's size in this codec
    double encodeNs = 0; ///< per call, median of the batches
    double decodeNs = 0; ///< per call, median of the batches (into a reused message of the same type)
    double encodeMBps = 0; ///< encodedBytes per encode, in MB/s (10^6 bytes)
    double decodeMBps = 0; ///< encodedBytes per decode, in MB/s
    std::string error; ///< set when the codec cannot encode or decode this message; the times are 0 then
};

struct CodecBenchResult {
    std::vector<CodecTiming> codecs; ///< in the order asked for
    size_t floorBytes = 0; ///< the protobuf-encoded size, copied by the floor
    double memcpyNs = 0; ///< a memcpy of floorBytes: what no codec can beat
    double memcpyMBps = 0;
};

/**
 * Encodes and decodes @p message repeatedly with each of @p codecs, in batches of about 10 ms, and keeps the median
 * time per call of the batches. Each codec takes about @p budgetPerCodec (half encoding, half decoding), longer only
 * when one call takes longer than that; the memcpy floor takes half a budget. Runs on the calling thread.
 */
CodecBenchResult benchmarkCodecs(const google::protobuf::Message &message, const std::vector<Codec> &codecs,
    std::chrono::nanoseconds budgetPerCodec);

} // namespace rpcscope
