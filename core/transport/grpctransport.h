#pragma once

#include "schema/schema.h"
#include "transport.h"

#include <QString>

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace google::protobuf {
class Descriptor;
}

namespace rpcscope {

/// TLS settings in ghz's terms. The PEM contents are read by the caller (so file errors name the flag).
struct GrpcTls
{
    bool enabled = false;
    std::string rootCerts; ///< --cacert: trust these CAs (empty = the system's)
    std::string certChain; ///< --cert: our certificate, for mutual TLS
    std::string privateKey; ///< --key
    std::string serverNameOverride; ///< --cname: the name checked against the server's certificate
    bool skipVerify = false; ///< --skipTLS: accept any server certificate
};

struct GrpcTarget
{
    QString address; ///< host:port
    int connections = 1; ///< separate HTTP/2 connections; callers are spread evenly over them
    std::chrono::nanoseconds timeout{0}; ///< per-call deadline; 0 = none
    int maxReceiveBytes = -1; ///< -1 = gRPC's default (4 MiB)
    int maxSendBytes = -1; ///< -1 = gRPC's default (unlimited)
    std::string authority; ///< :authority override (empty = from the address)
    std::vector<std::pair<std::string, std::string>> metadata; ///< sent with every call
    GrpcTls tls;
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
