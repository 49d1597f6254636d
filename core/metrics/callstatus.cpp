#include "callstatus.h"

namespace rpcscope {

QString callStatusName(int status)
{
    static const char *const names[CallStatus::SlotCount] = {
        "OK",
        "CANCELLED",
        "UNKNOWN",
        "INVALID_ARGUMENT",
        "DEADLINE_EXCEEDED",
        "NOT_FOUND",
        "ALREADY_EXISTS",
        "PERMISSION_DENIED",
        "RESOURCE_EXHAUSTED",
        "FAILED_PRECONDITION",
        "ABORTED",
        "OUT_OF_RANGE",
        "UNIMPLEMENTED",
        "INTERNAL",
        "UNAVAILABLE",
        "DATA_LOSS",
        "UNAUTHENTICATED",
        "DECODE_ERROR",
        "UNEXPECTED_REPLY",
    };
    if (status >= 0 && status < CallStatus::SlotCount)
        return QString::fromLatin1(names[status]);
    return QStringLiteral("STATUS_%1").arg(status);
}

} // namespace rpcscope
