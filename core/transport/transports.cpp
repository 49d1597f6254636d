#include "transports.h"

#include "transportfactories.h"

#include <google/protobuf/descriptor.h>

#include <QUrl>

namespace rpcscope {

QString transportName(TransportKind kind)
{
    switch (kind) {
    case TransportKind::Grpc:
        return QStringLiteral("grpc");
    case TransportKind::Http:
        return QStringLiteral("http");
    case TransportKind::Msgpack:
        return QStringLiteral("msgpack");
    case TransportKind::InProcess:
        return QStringLiteral("none");
    case TransportKind::H2Grpc:
        return QStringLiteral("h2grpc");
    }
    return {};
}

std::optional<TransportKind> parseTransport(const QString &name)
{
    const QString n = name.trimmed().toLower();
    if (n == u"grpc")
        return TransportKind::Grpc;
    if (n == u"http" || n == u"http-json" || n == u"json")
        return TransportKind::Http;
    if (n == u"msgpack" || n == u"msgpack-rpc" || n == u"msgpackrpc")
        return TransportKind::Msgpack;
    if (n == u"none" || n == u"inprocess" || n == u"in-process")
        return TransportKind::InProcess;
    if (n == u"h2grpc" || n == u"grpc-h2")
        return TransportKind::H2Grpc;
    return std::nullopt;
}

Codec defaultCodec(TransportKind kind)
{
    switch (kind) {
    case TransportKind::Http:
        return Codec::Json;
    case TransportKind::Msgpack:
        return Codec::Msgpack;
    case TransportKind::Grpc:
    case TransportKind::H2Grpc:
    case TransportKind::InProcess:
        break;
    }
    return Codec::Protobuf;
}

namespace {

/// "host:port", "[v6]:port"; false when there is no port.
bool splitHostPort(const QString &address, std::string *host, std::string *port)
{
    const qsizetype colon = address.lastIndexOf(QLatin1Char(':'));
    if (colon <= 0 || colon == address.size() - 1)
        return false;
    QString h = address.left(colon);
    if (h.startsWith(QLatin1Char('[')) && h.endsWith(QLatin1Char(']')))
        h = h.mid(1, h.size() - 2);
    bool ok = false;
    const uint p = address.mid(colon + 1).toUInt(&ok);
    if (!ok || p > 65535)
        return false;
    *host = h.toStdString();
    *port = std::to_string(p);
    return true;
}

} // namespace

std::unique_ptr<Transport> makeTransport(
    const TransportOptions &options, const GrpcTarget &target, const GrpcCall &call, QString *error)
{
    auto fail = [error](const QString &why) -> std::unique_ptr<Transport> {
        if (error)
            *error = why;
        return nullptr;
    };
    const Codec codec = options.codec.value_or(defaultCodec(options.kind));
    if (!speaksGrpc(options.kind) && call.method
        && (call.method->client_streaming() || call.method->server_streaming()))
        return fail(QStringLiteral("%1 is a %2 method: streaming calls go over gRPC only (transport grpc or h2grpc)")
                        .arg(Schema::methodInfo(call.method).fullName(), Schema::methodInfo(call.method).kindName()));
    std::string why;
    std::unique_ptr<Transport> transport;
    switch (options.kind) {
    case TransportKind::Grpc:
        if (codec != Codec::Protobuf)
            return fail(QStringLiteral("gRPC carries protobuf only, not %1").arg(codecName(codec)));
        return makeGrpcTransport(target, call);
    case TransportKind::Http: {
        const QUrl url(target.address, QUrl::StrictMode);
        if (!url.isValid() || url.host().isEmpty() || url.scheme().isEmpty())
            return fail(QStringLiteral("\"%1\" is not a URL (expected e.g. http://127.0.0.1:8000/rpc)%2")
                            .arg(target.address, url.isValid() ? QString() : QStringLiteral(": ") + url.errorString()));
        if (url.scheme() != u"http")
            return fail(
                QStringLiteral("\"%1\": only http:// URLs are supported (no TLS for HTTP yet)").arg(target.address));
        HttpEndpoint endpoint;
        endpoint.host = url.host().toStdString();
        const int port = url.port(80);
        endpoint.port = std::to_string(port);
        endpoint.hostHeader = url.port() > 0 ? endpoint.host + ':' + endpoint.port : endpoint.host;
        if (url.host().contains(QLatin1Char(':')))
            endpoint.hostHeader = '[' + endpoint.host + "]:" + endpoint.port;
        QString path = url.path(QUrl::FullyEncoded);
        if ((path.isEmpty() || path == u"/") && !options.httpPath.isEmpty()) {
            path = options.httpPath; // the path a server command's address cannot carry (checked by prepareRun)
        } else if (path.isEmpty() || path == u"/") {
            path = Schema::methodInfo(call.method).path(); // POST /pkg.Service/Method, as the built-in server expects
        }
        if (url.hasQuery())
            path += QLatin1Char('?') + url.query(QUrl::FullyEncoded);
        endpoint.path = path.toStdString();
        transport = makeHttpTransport(endpoint, target, call, codec, &why);
        break;
    }
    case TransportKind::Msgpack: {
        if (codec != Codec::Msgpack)
            return fail(QStringLiteral("msgpack-rpc carries msgpack only, not %1").arg(codecName(codec)));
        std::string host;
        std::string port;
        if (!splitHostPort(target.address, &host, &port))
            return fail(QStringLiteral("\"%1\" is not HOST:PORT").arg(target.address));
        const std::string method = options.rpcMethod.isEmpty() ? call.method->name() : options.rpcMethod.toStdString();
        transport = makeMsgpackTransport(host, port, target, call, method, options.msgpackParamsMap, &why);
        break;
    }
    case TransportKind::InProcess:
        transport = makeInProcessTransport(target, call, codec, &why);
        break;
    case TransportKind::H2Grpc: {
        if (codec != Codec::Protobuf)
            return fail(QStringLiteral("gRPC carries protobuf only, not %1").arg(codecName(codec)));
        std::string host;
        std::string port;
        if (!splitHostPort(target.address, &host, &port))
            return fail(QStringLiteral("\"%1\" is not HOST:PORT").arg(target.address));
        transport = makeH2GrpcTransport(host, port, target, call, &why);
        break;
    }
    }
    if (!transport)
        return fail(QString::fromStdString(why));
    return transport;
}

} // namespace rpcscope
