#include "grpctls.h"

#include <grpcpp/security/credentials.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_certificate_verifier.h>
#include <grpcpp/security/tls_credentials_options.h>

#include <vector>

namespace rpcscope {

std::shared_ptr<grpc::ChannelCredentials> grpcChannelCredentials(const GrpcTls &tls)
{
    if (!tls.enabled)
        return grpc::InsecureChannelCredentials();
    if (!tls.skipVerify) {
        grpc::SslCredentialsOptions options;
        options.pem_root_certs = tls.rootCerts;
        options.pem_cert_chain = tls.certChain;
        options.pem_private_key = tls.privateKey;
        return grpc::SslCredentials(options);
    }
    // --skipTLS: encrypted, but any server certificate is accepted.
    grpc::experimental::TlsChannelCredentialsOptions options;
    options.set_verify_server_certs(false);
    options.set_check_call_host(false);
    options.set_certificate_verifier(std::make_shared<grpc::experimental::NoOpCertificateVerifier>());
    if (!tls.certChain.empty()) {
        options.set_certificate_provider(std::make_shared<grpc::experimental::StaticDataCertificateProvider>(
            std::vector<grpc::experimental::IdentityKeyCertPair> { { tls.privateKey, tls.certChain } }));
        options.watch_identity_key_cert_pairs();
    }
    return grpc::experimental::TlsCredentials(options);
}

} // namespace rpcscope
