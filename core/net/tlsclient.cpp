#include "tlsclient.h"

#include <openssl/ssl.h>

namespace rpcscope::net {

namespace asio = boost::asio;

std::unique_ptr<asio::ssl::context> tlsClientContext(const GrpcTls &tls, std::string *error)
{
    auto context = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_client);
    boost::system::error_code ec;
    context->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2
        | asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 | asio::ssl::context::no_tlsv1_1);
    static const unsigned char kAlpn[] = { 2, 'h', '2' };
    if (SSL_CTX_set_alpn_protos(context->native_handle(), kAlpn, sizeof kAlpn) != 0) {
        *error = "TLS: cannot offer HTTP/2 (ALPN)";
        return nullptr;
    }
    if (tls.skipVerify) {
        context->set_verify_mode(asio::ssl::verify_none);
    } else {
        context->set_verify_mode(asio::ssl::verify_peer);
        if (tls.rootCerts.empty())
            context->set_default_verify_paths(ec);
        else
            context->add_certificate_authority(asio::buffer(tls.rootCerts), ec);
        if (ec) {
            *error = "TLS: the CA certificates (--cacert) do not load: " + ec.message();
            return nullptr;
        }
    }
    if (!tls.certChain.empty() || !tls.privateKey.empty()) {
        context->use_certificate_chain(asio::buffer(tls.certChain), ec);
        if (ec) {
            *error = "TLS: the client certificate (--cert) does not load: " + ec.message();
            return nullptr;
        }
        context->use_private_key(asio::buffer(tls.privateKey), asio::ssl::context::pem, ec);
        if (ec) {
            *error = "TLS: the client key (--key) does not load or does not match the certificate: " + ec.message();
            return nullptr;
        }
    }
    return context;
}

} // namespace rpcscope::net
