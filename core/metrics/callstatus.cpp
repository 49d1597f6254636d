#include "callstatus.h"

namespace rpcscope {

std::string unknownGrpcStatusError(std::string_view status, const std::string &message)
{
    return "grpc-status \"" + std::string(status) + "\" is no gRPC status code"
        + (message.empty() ? std::string() : ": " + message);
}

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

std::optional<int> parseCallStatus(const QString &name)
{
    QString key = name.trimmed().toUpper();
    key.remove(u'_');
    key.remove(u' ');
    if (key.isEmpty())
        return std::nullopt;
    if (key == u"CANCELED") // Go's spelling
        return CallStatus::Cancelled;
    bool number = false;
    const int code = key.toInt(&number);
    if (number)
        return code >= 0 && code <= CallStatus::Unauthenticated ? std::optional<int>(code) : std::nullopt;
    for (int i = 0; i < CallStatus::SlotCount; ++i) {
        if (key == callStatusName(i).remove(u'_'))
            return i;
    }
    return std::nullopt;
}

std::optional<ExpectedStatuses> ExpectedStatuses::parse(const QStringList &names, QString *error)
{
    ExpectedStatuses expected;
    uint32_t bits = 0;
    for (const QString &item : names) {
        for (const QString &name : item.split(u',', Qt::SkipEmptyParts)) {
            const std::optional<int> status = parseCallStatus(name);
            if (!status) {
                *error = QStringLiteral("\"%1\" is not a status (a gRPC status name such as NOT_FOUND, or its number "
                                        "0..16)")
                             .arg(name.trimmed());
                return std::nullopt;
            }
            bits |= 1u << *status;
        }
    }
    if (bits)
        expected.m_bits = bits;
    return expected;
}

uint64_t ExpectedStatuses::count(const StatusCounts &counts) const
{
    uint64_t n = 0;
    for (int i = 0; i < CallStatus::SlotCount; ++i) {
        if (has(i))
            n += counts[static_cast<size_t>(i)];
    }
    return n;
}

QStringList ExpectedStatuses::names() const
{
    QStringList out;
    for (int i = 0; i < CallStatus::SlotCount; ++i) {
        if (has(i))
            out << callStatusName(i);
    }
    return out;
}

} // namespace rpcscope
