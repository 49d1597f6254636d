#pragma once

#include "schema/schema.h"
#include "transport.h"

#include <QString>

#include <chrono>
#include <memory>
#include <string>

namespace google::protobuf {
class Descriptor;
}

namespace rpcscope {

struct GrpcTarget
{
    QString address; ///< host:port
    int connections = 1; ///< separate HTTP/2 connections; callers are spread evenly over them
    std::chrono::nanoseconds timeout{0}; ///< per-call deadline; 0 = none
    int maxReceiveBytes = -1; ///< -1 = gRPC's default (4 MiB)
    int maxSendBytes = -1; ///< -1 = gRPC's default (unlimited)
};

struct GrpcCall
{
    std::string methodPath; ///< "/pkg.Service/Method"
    std::string request; ///< serialized once, reused by every call
    Schema schema; ///< keeps the response type alive
    const google::protobuf::Descriptor *responseType = nullptr; ///< decode replies into this; nullptr = don't
};

/// Unary calls on gRPC's callback API through the generic stub: no generated code, no thread per call.
std::unique_ptr<Transport> makeGrpcTransport(const GrpcTarget &target, const GrpcCall &call);

} // namespace rpcscope
