#pragma once

#include "transport/grpctransport.h"

#include <QByteArray>
#include <QString>
#include <QStringList>

#include <optional>

namespace rpcscope {

/// What to call and with which request, as a user states it (CLI flags, GUI fields, scenario files).
struct RequestSpec
{
    QString call; ///< "pkg.Service/Method"
    QByteArray json; ///< request in the proto3 JSON mapping; empty = all defaults
    QStringList fills; ///< size knobs, "payload=1KiB"
    bool decodeResponse = true;
};

/**
 * Resolves the method, builds the request from JSON plus fills and serializes it once. Streaming methods are
 * refused for now (unary only). Returns std::nullopt with a message naming the method, field or JSON position.
 */
std::optional<GrpcCall> prepareGrpcCall(const Schema &schema, const RequestSpec &spec, QString *error);

} // namespace rpcscope
