#pragma once

#include <QString>
#include <QStringList>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

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

/// The status a server's gRPC status code counts as: itself for 0..16; UNKNOWN for a code gRPC does not define (so a
/// server's 17 never reads as rpcscope's own DECODE_ERROR).
constexpr int callStatusFromGrpcCode(int code)
{
    return code >= CallStatus::Ok && code <= CallStatus::Unauthenticated ? code : CallStatus::Unknown;
}

/// The error of a call whose grpc-status (@p status, as it came) is no gRPC code: that code named, then the server's
/// message if it sent one. Both gRPC clients say it so.
std::string unknownGrpcStatusError(std::string_view status, const std::string &message);

/// "OK", "UNAVAILABLE", ..., "DECODE_ERROR": the names ghz and grpcurl print.
QString callStatusName(int status);

/**
 * A status by name or number: "NOT_FOUND", "not_found", "NotFound" (ghz's Go names, "Canceled" too), or 0..16; the
 * client-side ones by name only (DECODE_ERROR, UNEXPECTED_REPLY). std::nullopt when it is none of them.
 */
std::optional<int> parseCallStatus(const QString &name);

/// Per-status call counts.
using StatusCounts = std::array<uint64_t, CallStatus::SlotCount>;

/**
 * The statuses a run counts as success (--expect-status): OK unless told otherwise. A run that benchmarks an error
 * path (a lookup that must answer NOT_FOUND, a login that must be refused) expects that status instead: its calls
 * are timed as the successful ones, and a call that ends OK is then unexpected. Status counts keep what the server
 * really said either way.
 */
class ExpectedStatuses {
public:
    /// From status names or numbers (a list, or one comma-separated item); std::nullopt with @p error naming the
    /// one that is not a status. An empty list is OK alone.
    static std::optional<ExpectedStatuses> parse(const QStringList &names, QString *error);
    bool has(int status) const { return status >= 0 && status < CallStatus::SlotCount && (m_bits >> status) & 1u; }
    bool onlyOk() const { return m_bits == kOk; }
    uint64_t count(const StatusCounts &counts) const;
    QStringList names() const; ///< in status order
    bool operator==(const ExpectedStatuses &other) const = default;

private:
    static constexpr uint32_t kOk = 1u << CallStatus::Ok;
    uint32_t m_bits = kOk;
};

} // namespace rpcscope
