#pragma once

// gRPC channel security, shared by the transport and server reflection (so reflection reaches every server a run
// can). No gRPC headers here: the transport's public header includes this.

#include <memory>
#include <string>

namespace grpc {
class ChannelCredentials;
} // namespace grpc

namespace rpcscope {

/// TLS settings in ghz's terms. The PEM contents are read by the caller (so file errors name the flag).
struct GrpcTls {
    bool enabled = false;
    std::string rootCerts; ///< --cacert: trust these CAs (empty = the system's)
    std::string certChain; ///< --cert: our certificate, for mutual TLS
    std::string privateKey; ///< --key
    std::string serverNameOverride; ///< --cname: the name checked against the server's certificate
    bool skipVerify = false; ///< --skipTLS: accept any server certificate
};

/// Plaintext, TLS verified against rootCerts (or the system's), or TLS accepting any certificate (skipVerify).
std::shared_ptr<grpc::ChannelCredentials> grpcChannelCredentials(const GrpcTls &tls);

} // namespace rpcscope
