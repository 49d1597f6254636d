#pragma once

#include "transport/grpctransport.h"

#include <QByteArray>
#include <QString>
#include <QStringList>

#include <optional>

namespace rpcscope {

/// What to call and with which request, as a user states it (CLI flags, GUI fields, scenario files).
struct RequestSpec {
    RequestSpec() = default;
    RequestSpec(QString call_, QByteArray json_ = {}, QStringList fills_ = {}, bool decodeResponse_ = true)
        : call(std::move(call_)), json(std::move(json_)), fills(std::move(fills_)), decodeResponse(decodeResponse_)
    {
    }

    QString call; ///< "pkg.Service/Method"
    /// The request in the proto3 JSON mapping: an object, or an array of objects sent round-robin. Empty = all
    /// defaults. Placeholders like {{.RequestNumber}} make it a per-call template.
    QByteArray json;
    QStringList fills; ///< size knobs, "payload=1KiB"
    bool decodeResponse = true;
    std::optional<QByteArray> binary; ///< the serialized request instead of JSON (-b)
};

/**
 * Resolves the method, builds the request(s) from JSON or binary plus fills, and serializes them once (or, for a
 * template, checks it by rendering it once). Streaming methods too (the gRPC transport alone carries them).
 * Returns std::nullopt with a message naming the method, field, array element or JSON position.
 */
std::optional<GrpcCall> prepareGrpcCall(const Schema &schema, const RequestSpec &spec, QString *error);

} // namespace rpcscope
