#pragma once

#include <QByteArray>
#include <QString>

#include <optional>

namespace rpcscope {

/// Limits on what one input file may hold: above them a file is refused by name, never read until memory runs out.
namespace inputlimits {
constexpr qint64 kDocument = 16LL << 20; ///< a scenario document (JSON)
constexpr qint64 kProto = 16LL << 20; ///< one .proto file
constexpr qint64 kProtoset = 256LL << 20; ///< a protoset
constexpr qint64 kReport = 1LL << 30; ///< a JSON run report (import, merge, compare), raw samples included
constexpr qint64 kRequest = 1LL << 30; ///< a request body (-D JSON, -b binary): gRPC's own cap is 2 GiB
constexpr qint64 kPem = 1LL << 20; ///< a certificate or key
} // namespace inputlimits

/**
 * The one way rpcscope reads a file a user or a document names: whole, from a regular file only (a FIFO or a
 * device such as /dev/zero would block forever or never end), at most @p maxBytes (checked before reading and while
 * reading, in case it grows). std::nullopt with @p error saying what the path is or which limit it passed (the
 * caller names the path, or the flag or field it came from).
 */
std::optional<QByteArray> readInputFile(const QString &path, qint64 maxBytes, QString *error);

/// "16 MiB": a limit as the errors give it.
QString inputLimitText(qint64 bytes);

} // namespace rpcscope
