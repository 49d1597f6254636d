#pragma once

#include "codec/codec.h"
#include "grpctransport.h"

#include <QString>

#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace rpcscope {

/// The ways rpcscope can carry a call.
enum class TransportKind {
    Grpc, ///< gRPC over HTTP/2, protobuf bodies
    Http, ///< HTTP/1.1 POST with keep-alive; JSON, msgpack or protobuf bodies
    Msgpack, ///< msgpack-rpc over TCP, many calls in flight per connection matched by msgid
    InProcess, ///< no RPC: the method runs in this process on encoded and decoded messages (codec cost only)
    /// gRPC too, on the same servers, with rpcscope's own client on bare HTTP/2 (nghttp2) instead of gRPC C++'s:
    /// far less client CPU per call. Unary methods over plaintext for now.
    H2Grpc,
};

/**
 * What rpcscope knows of a transport, one row each in transportTable(), beside the exporter's format table: its
 * name, the codecs it carries, its built-in server, what it supports. Front ends ask the table, so a new transport is
 * a row plus its own files (docs/architecture.md lists them).
 */
struct TransportInfo {
    TransportKind kind;
    const char16_t *name; ///< in documents and on the command line: "grpc", "h2grpc", "http", "msgpack", "none"
    std::vector<const char16_t *> aliases; ///< what parseTransport() accepts (lower case), the name first
    const char16_t *label; ///< in sentences: "gRPC", "HTTP", "msgpack-rpc", "no RPC"
    const char16_t *title; ///< a target's heading: "gRPC (nghttp2)", "HTTP/JSON"
    const char16_t *choice; ///< in a list to pick from: "gRPC, bare HTTP/2 (nghttp2)", "No RPC (codec only)"
    Codec defaultCodec; ///< what it uses unless told otherwise
    bool anyCodec; ///< carries every codec; else its default codec only
    const char16_t *serve; ///< the `rpcscope-cli serve` subcommand of its built-in server; nullptr: it calls none
    bool speaksGrpc; ///< gRPC's wire protocol: the same servers, schema by reflection
    bool streams; ///< streaming methods
    bool tls; ///< TLS to the server
};
/// Every transport, in the order front ends list them.
const std::vector<TransportInfo> &transportTable();
const TransportInfo &transportInfo(TransportKind kind);
/// True when @p kind can carry @p codec (HTTP and the no-RPC baseline carry any; the others their own).
bool carriesCodec(TransportKind kind, Codec codec);

/// gRPC's wire protocol, whichever client speaks it (Grpc, H2Grpc): the same servers, schema by reflection, TLS.
bool speaksGrpc(TransportKind kind);

QString transportName(TransportKind kind); ///< "grpc", "http", "msgpack", "none", "h2grpc"
/// "grpc", "http", "msgpack" (or "msgpack-rpc"), "none" (or "inprocess"), "h2grpc"; case-insensitive.
std::optional<TransportKind> parseTransport(const QString &name);
/// The codec a transport uses unless told otherwise: protobuf for gRPC, JSON for HTTP, msgpack for msgpack-rpc,
/// protobuf for the in-process baseline.
Codec defaultCodec(TransportKind kind);

struct TransportOptions {
    TransportKind kind = TransportKind::Grpc;
    std::optional<Codec> codec; ///< unset = defaultCodec(kind); gRPC takes protobuf only, msgpack-rpc msgpack only
    QString rpcMethod; ///< msgpack-rpc method name; empty = the proto method's name
    /// HTTP: the path (and query) to POST to when the URL has none (a server command's address); empty = the
    /// method's own, /package.Service/Method.
    QString httpPath;
    bool msgpackParamsMap = false; ///< msgpack-rpc params as one map (true) or the fields in order (false)
};

/**
 * The in-process baseline (TransportKind::InProcess) does @p call's method's own work only for rpcscope's bench
 * service, whose logic the built-in servers run; for any other method it times the request's codec and an empty
 * reply's: false then, and a front end says so.
 */
bool inProcessRunsMethod(const GrpcCall &call);

/**
 * Why the metadata pair @p key, @p value cannot be sent with @p kind, or an empty string when it can. Every transport
 * refuses control characters: a CR or LF in an HTTP header value would start a header or a request of its own (request
 * smuggling), and gRPC C++ aborts the process on them. gRPC keys are [0-9a-z_.-] and values printable ASCII unless the
 * key ends in "-bin" (bytes, base64 on the wire); HTTP keys are RFC 9110 tokens and values may hold a tab and UTF-8.
 * The message names the key (made printable) and the offending character.
 */
QString metadataProblem(TransportKind kind, std::string_view key, std::string_view value);

/**
 * Makes the transport @p options name for @p target and @p call; nullptr with @p error naming the problem (a URL
 * that does not parse, a codec the transport cannot carry, an unresolvable host, metadata it cannot send).
 */
std::unique_ptr<Transport> makeTransport(
    const TransportOptions &options, const GrpcTarget &target, const GrpcCall &call, QString *error);

} // namespace rpcscope
