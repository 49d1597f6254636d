// Loads a schema from a running server by gRPC server reflection, as grpcurl and ghz do.
//
// The reflection messages are encoded and decoded by hand here rather than generated: libgrpc++_reflection
// already contains generated code for grpc/reflection/v1alpha/reflection.proto, and a second generated copy in
// our binaries would register the same file twice in protobuf's generated pool, which aborts at start-up. The
// messages are small, wire-identical between v1 and v1alpha, and frozen.
#include "filesetbuilder.h"
#include "metrics/callstatus.h"
#include "net/grpctls.h"
#include "schema.h"
#include "util/inputfile.h"
#include "util/units.h"

#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/impl/rpc_method.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_certificate_verifier.h>
#include <grpcpp/security/tls_credentials_options.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/channel_arguments.h>
#include <grpcpp/support/sync_stream.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>

namespace gp = google::protobuf;

namespace rpcscope {

namespace {

/// The largest reflection reply rpcscope receives (a whole schema may come in one).
constexpr qint64 kMaxReflectionReply = 64LL << 20;

} // namespace

namespace {

constexpr const char *kReflectionV1 = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo";
constexpr const char *kReflectionV1alpha = "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo";

// Field numbers of grpc.reflection.v1(alpha).ServerReflectionRequest / ServerReflectionResponse.
enum RequestField { FileByFilename = 3, FileContainingSymbol = 4, ListServices = 7 };
enum ResponseField { FileDescriptorResponse = 4, ListServicesResponse = 6, ErrorResponse = 7 };

QString qs(const std::string &text)
{
    return QString::fromStdString(text);
}

std::string encodeRequest(RequestField field, const std::string &value)
{
    std::string out;
    {
        gp::io::StringOutputStream stream(&out);
        gp::io::CodedOutputStream coded(&stream);
        coded.WriteTag(static_cast<uint32_t>(field) << 3 | 2); // wire type 2: length-delimited
        coded.WriteVarint32(static_cast<uint32_t>(value.size()));
        coded.WriteString(value);
    }
    return out;
}

// Calls onBytes for each length-delimited field and onVarint for each varint; skips the rest.
bool forEachField(const std::string &bytes, const std::function<bool(int, std::string)> &onBytes,
    const std::function<void(int, uint64_t)> &onVarint = {})
{
    gp::io::CodedInputStream in(reinterpret_cast<const uint8_t *>(bytes.data()), static_cast<int>(bytes.size()));
    while (const uint32_t tag = in.ReadTag()) {
        const int field = static_cast<int>(tag >> 3);
        switch (tag & 7) {
        case 0: {
            uint64_t value = 0;
            if (!in.ReadVarint64(&value))
                return false;
            if (onVarint)
                onVarint(field, value);
            break;
        }
        case 1:
            if (!in.Skip(8))
                return false;
            break;
        case 2: {
            uint32_t size = 0;
            std::string value;
            if (!in.ReadVarint32(&size) || !in.ReadString(&value, static_cast<int>(size)))
                return false;
            if (!onBytes(field, std::move(value)))
                return false;
            break;
        }
        case 5:
            if (!in.Skip(4))
                return false;
            break;
        default: // groups: never in these messages
            return false;
        }
    }
    return in.ConsumedEntireMessage();
}

struct ReflectionReply {
    enum Kind { None, Files, Services, Error } kind = None;
    std::vector<std::string> files; // serialized FileDescriptorProto
    std::vector<std::string> services;
    int errorCode = 0;
    std::string errorMessage;
};

bool decodeReply(const std::string &bytes, ReflectionReply *reply)
{
    return forEachField(bytes, [reply](int field, const std::string &value) {
        switch (field) {
        case FileDescriptorResponse:
            reply->kind = ReflectionReply::Files;
            return forEachField(value, [reply](int f, std::string file) {
                if (f == 1)
                    reply->files.push_back(std::move(file));
                return true;
            });
        case ListServicesResponse:
            reply->kind = ReflectionReply::Services;
            return forEachField(value, [reply](int f, const std::string &service) {
                if (f != 1)
                    return true;
                return forEachField(service, [reply](int g, std::string name) {
                    if (g == 1)
                        reply->services.push_back(std::move(name));
                    return true;
                });
            });
        case ErrorResponse:
            reply->kind = ReflectionReply::Error;
            return forEachField(
                value,
                [reply](int f, std::string message) {
                    if (f == 2)
                        reply->errorMessage = std::move(message);
                    return true;
                },
                [reply](int f, uint64_t code) {
                    if (f == 1)
                        reply->errorCode = static_cast<int>(code);
                });
        default:
            return true;
        }
    });
}

/// The transport's channel security, so reflection reaches every server a run can.
std::shared_ptr<grpc::ChannelCredentials> credentials(const ReflectionTarget &target)
{
    GrpcTls tls;
    tls.enabled = target.tls;
    tls.rootCerts = target.rootCerts;
    tls.certChain = target.certChain;
    tls.privateKey = target.privateKey;
    tls.skipVerify = target.skipVerify;
    return grpcChannelCredentials(tls);
}

/// One ServerReflectionInfo stream: requests answered one at a time, all under the one deadline.
class ReflectionStream {
public:
    ReflectionStream(grpc::Channel *channel, const char *method, const ReflectionTarget &target,
        std::chrono::system_clock::time_point deadline)
        : m_method(method, grpc::internal::RpcMethod::BIDI_STREAMING)
    {
        m_context.set_deadline(deadline);
        for (const auto &[key, value] : target.metadata)
            m_context.AddMetadata(key, value);
        // The factory generated stubs use: a synchronous bidi stream of raw bytes, with no generated code.
        m_stream.reset(grpc::internal::ClientReaderWriterFactory<grpc::ByteBuffer, grpc::ByteBuffer>::Create(
            channel, m_method, &m_context));
    }

    ~ReflectionStream()
    {
        if (!m_finished) {
            m_context.TryCancel();
            m_stream->Finish();
        }
    }

    /// Sends @p request and reads its reply. False when the stream ended: status() says why.
    bool ask(const std::string &request, ReflectionReply *reply, QString *error)
    {
        grpc::Slice slice(request);
        grpc::ByteBuffer out(&slice, 1);
        grpc::ByteBuffer in;
        if (!m_stream->Write(out) || !m_stream->Read(&in)) {
            finish();
            return false;
        }
        grpc::Slice bytes;
        if (!in.DumpToSingleSlice(&bytes).ok()
            || !decodeReply(std::string(reinterpret_cast<const char *>(bytes.begin()), bytes.size()), reply)) {
            *error = QStringLiteral("the server's reflection reply does not parse");
            return false;
        }
        return true;
    }

    /// Ends the stream politely; its status, or the status it ended with.
    grpc::Status finish()
    {
        if (!m_finished) {
            m_stream->WritesDone();
            m_status = m_stream->Finish();
            m_finished = true;
        }
        return m_status;
    }

    const grpc::Status &status() const { return m_status; }

private:
    grpc::internal::RpcMethod m_method;
    grpc::ClientContext m_context;
    std::unique_ptr<grpc::ClientReaderWriter<grpc::ByteBuffer, grpc::ByteBuffer>> m_stream;
    grpc::Status m_status;
    bool m_finished = false;
};

QString statusText(const grpc::Status &status)
{
    QString text = callStatusName(status.error_code());
    if (!status.error_message().empty())
        text += QStringLiteral(": ") + qs(status.error_message());
    return text;
}

QString errorResponseText(const ReflectionReply &reply)
{
    return qs(reply.errorMessage) + QStringLiteral(" (") + callStatusName(reply.errorCode) + QLatin1Char(')');
}

enum class Outcome { Done, Unimplemented, Failed };

/// Whether one of the files in @p reply defines @p service (package.Service); @p sent gets the files' names.
bool definesService(const ReflectionReply &reply, const std::string &service, QStringList *sent)
{
    bool defined = false;
    for (const std::string &bytes : reply.files) {
        gp::FileDescriptorProto file;
        file.ParseFromString(bytes);
        *sent << qs(file.name());
        for (const gp::ServiceDescriptorProto &s : file.service())
            defined = defined || (file.package().empty() ? s.name() : file.package() + '.' + s.name()) == service;
    }
    return defined;
}

// The whole exchange on one stream. Fills @p builder, or says in @p error why it could not. The files sent may add up
// to what a protoset may hold (util/inputfile.h), each reply to kMaxReflectionReply.
Outcome fetchSchema(ReflectionStream &stream, const ReflectionTarget &target, FileSetBuilder *builder, QString *error)
{
    auto streamError = [&](const QString &step) {
        const grpc::Status &status = stream.status();
        if (status.error_code() == grpc::StatusCode::UNIMPLEMENTED)
            return Outcome::Unimplemented;
        if (status.error_code() == grpc::StatusCode::UNAVAILABLE)
            *error = QStringLiteral("cannot connect (") + statusText(status) + QLatin1Char(')');
        else if (status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED)
            *error = QStringLiteral("a server reflection reply is larger than %1, the most rpcscope takes for a schema "
                                    "by reflection; give --proto or --protoset (%2)")
                         .arg(inputLimitText(kMaxReflectionReply), statusText(status));
        else if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED)
            *error = QStringLiteral("no answer to server reflection within ") + formatDuration(target.timeout)
                + QStringLiteral(" (") + statusText(status) + QLatin1Char(')');
        else if (error->isEmpty())
            *error = QStringLiteral("server reflection failed while ") + step + QStringLiteral(" (")
                + statusText(status) + QLatin1Char(')');
        return Outcome::Failed;
    };

    ReflectionReply listed;
    if (!stream.ask(encodeRequest(ListServices, "*"), &listed, error))
        return streamError(QStringLiteral("listing services"));
    if (listed.kind == ReflectionReply::Error) {
        *error = QStringLiteral("server reflection cannot list services: ") + errorResponseText(listed);
        return Outcome::Failed;
    }
    QStringList offered;
    for (const std::string &name : listed.services)
        offered << qs(name);
    QStringList wanted;
    if (target.services.isEmpty()) {
        for (const QString &name : std::as_const(offered)) {
            if (!name.startsWith(QStringLiteral("grpc.reflection.")))
                wanted << name;
        }
        if (wanted.isEmpty()) {
            *error = QStringLiteral("the server lists no services besides reflection");
            return Outcome::Failed;
        }
    } else {
        QStringList unknown;
        for (const QString &name : target.services) {
            if (offered.contains(name))
                wanted << name;
            else
                unknown << name;
        }
        if (!unknown.isEmpty()) {
            *error = QStringLiteral("the server does not offer %1 (it offers: %2)")
                         .arg(unknown.join(QStringLiteral(", ")), offered.join(QStringLiteral(", ")));
            return Outcome::Failed;
        }
    }

    qint64 received = 0;
    auto addFiles = [&](const ReflectionReply &reply, const QString &what) {
        if (reply.kind != ReflectionReply::Files) {
            *error = QStringLiteral("server reflection sent no file for ") + what;
            return false;
        }
        for (const std::string &bytes : reply.files) {
            received += static_cast<qint64>(bytes.size());
            if (received > inputlimits::kProtoset) {
                *error = QStringLiteral("server reflection sent more than %1 of file descriptors, the most a schema "
                                        "may hold; give --proto or --protoset")
                             .arg(inputLimitText(inputlimits::kProtoset));
                return false;
            }
            gp::FileDescriptorProto file;
            QString conflict;
            if (!file.ParseFromString(bytes)) {
                *error
                    = QStringLiteral("server reflection sent a file descriptor for %1 that does not parse").arg(what);
                return false;
            }
            // A server may send a file again on another request; a changed copy means it is inconsistent.
            if (!builder->add(file, QStringLiteral("the server's reflection"), &conflict)) {
                *error = QStringLiteral("server reflection sent two different copies: ") + conflict;
                return false;
            }
        }
        return true;
    };

    for (const QString &service : std::as_const(wanted)) {
        ReflectionReply reply;
        if (!stream.ask(encodeRequest(FileContainingSymbol, service.toStdString()), &reply, error))
            return streamError(QStringLiteral("asking for ") + service);
        if (reply.kind == ReflectionReply::Error) {
            *error = QStringLiteral("server reflection has no file for %1: %2").arg(service, errorResponseText(reply));
            return Outcome::Failed;
        }
        if (!addFiles(reply, service))
            return Outcome::Failed;
        // The service it listed must be in what it sent for it: otherwise `methods` would list nothing, and say
        // nothing either.
        if (QStringList sent; !definesService(reply, service.toStdString(), &sent)) {
            *error = QStringLiteral("server reflection lists %1, but the file it sent for it (%2) does not define it")
                         .arg(service, sent.join(QStringLiteral(", ")));
            return Outcome::Failed;
        }
    }

    // Servers usually send a file with its imports; ask for any they left out until the set is closed.
    std::set<std::string> asked;
    std::map<std::string, QString> notFound;
    for (;;) {
        bool askedAny = false;
        for (const auto &missing : builder->missingImports()) {
            if (!asked.insert(missing.import).second)
                continue;
            askedAny = true;
            ReflectionReply reply;
            const QString name = qs(missing.import);
            if (!stream.ask(encodeRequest(FileByFilename, missing.import), &reply, error))
                return streamError(QStringLiteral("asking for ") + name);
            if (reply.kind == ReflectionReply::Error)
                notFound[missing.import] = errorResponseText(reply);
            else if (!addFiles(reply, name))
                return Outcome::Failed;
        }
        if (!askedAny)
            break;
    }
    builder->addBuiltinWellKnownTypes();
    QStringList missingText;
    for (const auto &missing : builder->missingImports()) {
        const auto reason = notFound.find(missing.import);
        missingText << QStringLiteral("\"%1\" (imported by \"%2\"%3)")
                           .arg(qs(missing.import), qs(missing.importer),
                               reason == notFound.end() ? QString() : QStringLiteral(": ") + reason->second);
    }
    if (!missingText.isEmpty()) {
        *error = QStringLiteral("server reflection does not provide ") + missingText.join(QStringLiteral(", "));
        return Outcome::Failed;
    }
    stream.finish(); // everything is here; how the stream ends no longer matters
    return Outcome::Done;
}

} // namespace

SchemaLoadResult loadSchemaFromReflection(const ReflectionTarget &target)
{
    SchemaLoadResult result;
    auto fail = [&](const QString &message) {
        result.errors.append({ target.address, 0, 0, message });
        return result;
    };
    if (target.address.isEmpty())
        return fail(QStringLiteral("no server address given for server reflection"));

    grpc::ChannelArguments args;
    // Larger than gRPC's default 4 MiB (a large schema comes in one reply), but bounded: a 400 MB descriptor once took
    // 2.4 GB to receive and parse.
    args.SetMaxReceiveMessageSize(static_cast<int>(kMaxReflectionReply));
    args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0); // trailers without grpc-status abort libgrpc 1.51's retry filter
    if (!target.serverNameOverride.empty())
        args.SetSslTargetNameOverride(target.serverNameOverride);
    const auto channel = grpc::CreateCustomChannel(target.address.toStdString(), credentials(target), args);
    const auto deadline = std::chrono::system_clock::now() + target.timeout;

    for (const char *method : { kReflectionV1, kReflectionV1alpha }) {
        FileSetBuilder builder;
        QString error;
        ReflectionStream stream(channel.get(), method, target, deadline);
        switch (fetchSchema(stream, target, &builder, &error)) {
        case Outcome::Unimplemented:
            continue;
        case Outcome::Failed:
            result.unreachable = true; // the exchange failed; a server without reflection says UNIMPLEMENTED
            return fail(error);
        case Outcome::Done:
            result.schema = Schema::fromFileDescriptorSet(builder.fileDescriptorSet(), &result.errors);
            return result;
        }
    }
    return fail(QStringLiteral("server does not offer reflection (UNIMPLEMENTED for v1 and v1alpha); "
                               "give --proto or --protoset"));
}

} // namespace rpcscope
