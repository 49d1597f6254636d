#pragma once

#include <QString>

#include <array>
#include <cstdint>

namespace rpcscope {

/**
 * The outcome of one call as a small integer, so the hot path counts it in a fixed array.
 * 0..16 are gRPC's status codes; the slots after them are client-side outcomes that no server sent.
 */
namespace CallStatus {
enum : int {
    Ok = 0,
    Cancelled = 1,
    Unknown = 2,
    InvalidArgument = 3,
    DeadlineExceeded = 4,
    NotFound = 5,
    AlreadyExists = 6,
    PermissionDenied = 7,
    ResourceExhausted = 8,
    FailedPrecondition = 9,
    Aborted = 10,
    OutOfRange = 11,
    Unimplemented = 12,
    Internal = 13,
    Unavailable = 14,
    DataLoss = 15,
    Unauthenticated = 16,
    /// The reply arrived but does not parse as the method's response type.
    DecodeError = 17,
    /// The reply decoded but failed an --expect (only sampled replies are checked).
    UnexpectedReply = 18,
    SlotCount = 19,
};
}

/// "OK", "UNAVAILABLE", ..., "DECODE_ERROR": the names ghz and grpcurl print.
QString callStatusName(int status);

/// Per-status call counts.
using StatusCounts = std::array<uint64_t, CallStatus::SlotCount>;

} // namespace rpcscope
