#pragma once

#include <QList>
#include <QString>
#include <QStringList>

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace google::protobuf {
class Descriptor;
class DescriptorPool;
class FileDescriptorSet;
class Message;
class MessageFactory;
class MethodDescriptor;
} // namespace google::protobuf

namespace rpcscope {

/// A problem in a schema source: `file:line:col: message` (line and column 1-based, 0 when not known).
struct SchemaError {
    QString file;
    int line = 0;
    int column = 0;
    QString message;

    QString toString() const;
};

struct MethodInfo {
    QString service; ///< fully qualified, "rpcscope.bench.v1.Bench"
    QString name; ///< "Echo"
    QString inputType; ///< fully qualified message name
    QString outputType;
    bool clientStreaming = false;
    bool serverStreaming = false;

    QString fullName() const { return service + QLatin1Char('/') + name; } ///< ghz's --call spelling
    QString path() const { return QLatin1Char('/') + fullName(); } ///< the HTTP/2 :path gRPC uses
    QString kindName() const; ///< "unary", "server streaming", "client streaming", "bidi streaming"
};

struct ServiceInfo {
    QString name; ///< fully qualified
    QString file;
    QList<MethodInfo> methods;
};

/**
 * A loaded set of protobuf descriptors, whatever its source (.proto files, a protoset, server reflection): all of
 * them end up as a FileDescriptorSet turned into one DescriptorPool. Cheap to copy (shared, immutable); messages
 * made from it keep working as long as any copy is alive.
 */
class Schema {
public:
    Schema();

    /// Builds a schema from serialized file descriptors; files may come in any order.
    static Schema fromFileDescriptorSet(const google::protobuf::FileDescriptorSet &set, QList<SchemaError> *errors);

    bool isEmpty() const;
    QStringList fileNames() const;
    QList<ServiceInfo> services() const;

    /**
     * Finds a method by "pkg.Service/Method" (ghz), "pkg.Service.Method" or "/pkg.Service/Method".
     * On failure, @p error says what is missing and lists close candidates.
     */
    const google::protobuf::MethodDescriptor *findMethod(const QString &name, QString *error = nullptr) const;
    const google::protobuf::Descriptor *findMessage(const QString &fullName) const;
    static MethodInfo methodInfo(const google::protobuf::MethodDescriptor *method);

    const google::protobuf::DescriptorPool *pool() const;
    /// Makes an empty message of @p type (owned by the caller).
    std::unique_ptr<google::protobuf::Message> newMessage(const google::protobuf::Descriptor *type) const;
    /// The set this schema was built from.
    const google::protobuf::FileDescriptorSet &fileDescriptorSet() const;

private:
    struct Data;
    std::shared_ptr<const Data> d;
};

/// The result of loading schema sources: a schema, or every error found (all at once, not the first only).
struct SchemaLoadResult {
    Schema schema;
    QList<SchemaError> errors;
    /// Server reflection: the server could not be reached or did not answer (not the input's fault).
    bool unreachable = false;

    bool ok() const { return errors.isEmpty(); }
    QString errorText() const; ///< one error per line
};

/**
 * Loads .proto files at run time, like protoc: @p importPaths are searched first, then the folder of each file, then
 * the well-known types (google/protobuf/...) and rpcscope's own protos, which are built in so users never
 * have to name their folder. Every syntax error, unknown type and missing import is reported.
 */
SchemaLoadResult loadProtoFiles(const QStringList &files, const QStringList &importPaths = {});
/// The protos an installed copy ships (the bench proto: `--proto rpcscope/bench/v1/bench.proto` from anywhere),
/// searched after the import paths given: PREFIX/share/rpcscope/proto beside PREFIX/bin; empty when absent.
QString installedProtoDir();

/**
 * Loads FileDescriptorSet files, as `protoc --descriptor_set_out=FILE --include_imports` writes them, merged into
 * one schema. The same .proto in several sets is fine when the copies are identical; differing copies are an error
 * naming both sets. Every import must be in some set, except the well-known types (google/protobuf/...), which
 * are built in.
 */
SchemaLoadResult loadProtoset(const QStringList &files);

/// Where and how to ask a server for its schema by gRPC server reflection.
struct ReflectionTarget {
    QString address; ///< "host:port"
    std::chrono::milliseconds timeout { 10000 }; ///< bounds the whole exchange, connecting included
    bool tls = false;
    std::string rootCerts; ///< PEM; empty = the system's roots
    std::string certChain; ///< PEM client certificate, for mutual TLS
    std::string privateKey;
    std::string serverNameOverride;
    bool skipVerify = false; ///< encrypted, but any server certificate is accepted
    std::vector<std::pair<std::string, std::string>> metadata; ///< sent with the reflection call
    QStringList services; ///< fully qualified; empty = every service except reflection itself
};

/**
 * Asks the server at @p target for the files defining its services (and their imports) by gRPC server reflection,
 * grpc.reflection.v1 first, then v1alpha, as grpcurl and ghz do. Never takes longer than target.timeout.
 * Errors start with the address: "host:port: cannot connect (UNAVAILABLE: ...)".
 */
SchemaLoadResult loadSchemaFromReflection(const ReflectionTarget &target);

/// The bench service's schema, from the copy built into rpcscope.
Schema builtinBenchSchema();

} // namespace rpcscope
