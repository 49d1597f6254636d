#include "transports.h"

#include "transportfactories.h"
#include "util/printable.h"

#include <google/protobuf/descriptor.h>

#include <QUrl>

namespace rpcscope {

const std::vector<TransportInfo> &transportTable()
{
    // One row a transport: a new one is a row here plus its own files (its client, its built-in server, if any).
    static const std::vector<TransportInfo> table {
        { TransportKind::Grpc, u"grpc", { u"grpc" }, u"gRPC", u"gRPC", u"gRPC", Codec::Protobuf, false, u"grpc", true,
            true, true },
        { TransportKind::H2Grpc, u"h2grpc", { u"h2grpc", u"grpc-h2" }, u"gRPC", u"gRPC (nghttp2)",
            u"gRPC, bare HTTP/2 (nghttp2)", Codec::Protobuf, false, u"grpc", true, true, true },
        { TransportKind::Http, u"http", { u"http", u"http-json", u"json" }, u"HTTP", u"HTTP/JSON", u"HTTP/JSON",
            Codec::Json, true, u"http", false, false, true },
        { TransportKind::Msgpack, u"msgpack", { u"msgpack", u"msgpack-rpc", u"msgpackrpc" }, u"msgpack-rpc",
            u"msgpack-rpc", u"msgpack-rpc", Codec::Msgpack, false, u"msgpack", false, false, false },
        { TransportKind::InProcess, u"none", { u"none", u"inprocess", u"in-process" }, u"no RPC", u"no RPC",
            u"No RPC (codec only)", Codec::Protobuf, true, nullptr, false, false, false },
    };
    return table;
}

const TransportInfo &transportInfo(TransportKind kind)
{
    for (const TransportInfo &row : transportTable()) {
        if (row.kind == kind)
            return row;
    }
    return transportTable().front(); // every kind has its row (tst_transports checks)
}

bool speaksGrpc(TransportKind kind)
{
    return transportInfo(kind).speaksGrpc;
}

bool carriesCodec(TransportKind kind, Codec codec)
{
    const TransportInfo &row = transportInfo(kind);
    return row.anyCodec || codec == row.defaultCodec;
}

QString transportName(TransportKind kind)
{
    return QString::fromUtf16(transportInfo(kind).name);
}

std::optional<TransportKind> parseTransport(const QString &name)
{
    const QString n = name.trimmed().toLower();
    for (const TransportInfo &row : transportTable()) {
        for (const char16_t *alias : row.aliases) {
            if (n == QStringView(alias))
                return row.kind;
        }
    }
    return std::nullopt;
}

Codec defaultCodec(TransportKind kind)
{
    return transportInfo(kind).defaultCodec;
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

QString describeByte(unsigned char byte)
{
    switch (byte) {
    case '\r':
        return QStringLiteral("a carriage return (CR)");
    case '\n':
        return QStringLiteral("a line feed (LF)");
    case '\t':
        return QStringLiteral("a tab");
    case 0:
        return QStringLiteral("a NUL byte");
    default:
        break;
    }
    if (byte < 0x20 || byte == 0x7f)
        return QStringLiteral("the control character 0x%1").arg(byte, 2, 16, QLatin1Char('0'));
    if (byte >= 0x80)
        return QStringLiteral("a non-ASCII character");
    return QStringLiteral("'%1'").arg(QLatin1Char(char(byte)));
}

bool isHttpTokenChar(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
        || std::string_view("!#$%&'*+-.^_`|~").find(char(c)) != std::string_view::npos;
}

bool isGrpcKeyChar(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '_' || c == '.' || c == '-';
}

} // namespace

QString metadataProblem(TransportKind kind, std::string_view key, std::string_view value)
{
    const QString name = printable(QString::fromUtf8(key.data(), qsizetype(key.size())));
    if (key.empty())
        return QStringLiteral("a metadata key is empty");
    const bool grpc = speaksGrpc(kind);
    for (const char ch : key) {
        const auto c = static_cast<unsigned char>(ch);
        if (grpc ? !isGrpcKeyChar(c) : !isHttpTokenChar(c))
            return QStringLiteral("metadata key \"%1\" holds %2; %3")
                .arg(name, describeByte(c),
                    grpc ? QStringLiteral("gRPC keys are lowercase letters, digits, '-', '_' and '.'")
                         : QStringLiteral("header names are letters, digits and !#$%&'*+-.^_`|~"));
    }
    // The request's framing is the transport's: a second Content-Length or a Transfer-Encoding would let a value
    // split one request into two on the way (request smuggling).
    if (kind == TransportKind::Http) {
        const QString lower = QString::fromUtf8(key.data(), qsizetype(key.size())).toLower();
        for (const char *own : { "content-length", "transfer-encoding", "connection", "host", "upgrade", "te" })
            if (lower == QLatin1String(own))
                return QStringLiteral("metadata key \"%1\" is a header the HTTP transport sets itself").arg(name);
    }
    const bool binary = grpc && key.size() > 4 && key.substr(key.size() - 4) == "-bin";
    if (binary)
        return {}; // bytes: base64 on the wire
    for (const char ch : value) {
        const auto c = static_cast<unsigned char>(ch);
        const bool control = (c < 0x20 && c != '\t') || c == 0x7f;
        const bool refused = grpc ? (c < 0x20 || c > 0x7e) : control;
        if (refused)
            return QStringLiteral("the value of metadata key \"%1\" holds %2; %3")
                .arg(name, describeByte(c),
                    grpc ? QStringLiteral("gRPC metadata values are printable ASCII (a key ending in \"-bin\" "
                                          "carries bytes)")
                         : QStringLiteral("header values cannot hold line breaks or control characters"));
    }
    return {};
}

std::unique_ptr<Transport> makeTransport(
    const TransportOptions &options, const GrpcTarget &target, const GrpcCall &call, QString *error)
{
    auto fail = [error](const QString &why) -> std::unique_ptr<Transport> {
        if (error)
            *error = why;
        return nullptr;
    };
    for (const auto &[key, value] : target.metadata) // a front end checked them first; a caller of core may not have
        if (const QString problem = metadataProblem(options.kind, key, value); !problem.isEmpty())
            return fail(problem);
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
