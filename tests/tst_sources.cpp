// Schema sources besides .proto files: protosets and gRPC server reflection, against real servers on 127.0.0.1.
#include "codec/messagejson.h"
#include "schema/schema.h"
#include "server/builtingrpcserver.h"

#include <QElapsedTimer>
#include <QFile>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/message.h>

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/impl/server_builder_option.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>

#include <atomic>
#include <set>

using namespace rpcscope;
using namespace std::chrono_literals;

namespace gp = google::protobuf;

namespace {

const QString kProtosets = QStringLiteral(RPCSCOPE_TEST_PROTOSETS);
const char *const kReflectionV1 = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo";

bool inDependencyOrder(const gp::FileDescriptorSet &set)
{
    std::set<std::string> seen;
    for (const auto &file : set.file()) {
        for (const auto &import : file.dependency()) {
            if (!seen.count(import))
                return false;
        }
        seen.insert(file.name());
    }
    return true;
}

QString writeFile(const QTemporaryDir &dir, const QString &name, const QByteArray &bytes)
{
    const QString path = dir.filePath(name);
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size())
        qFatal("cannot write %s", qPrintable(path));
    return path;
}

// Every ServerBuilder gets the reflection plugin once BuiltinGrpcServer has registered it; these servers must not.
class NoPlugins : public grpc::ServerBuilderOption {
public:
    void UpdateArguments(grpc::ChannelArguments *) override { }
    void UpdatePlugins(std::vector<std::unique_ptr<grpc::ServerBuilderPlugin>> *plugins) override { plugins->clear(); }
};

/**
 * A reflection v1 server written by hand (gRPC 1.51's own serves only v1alpha). It sends each file alone, without
 * its imports, so the client has to ask for them by name; files in `refused` get an error_response instead.
 */
class FakeReflectionV1 : public grpc::CallbackGenericService {
public:
    FakeReflectionV1(Schema reflection, Schema served, std::set<std::string> refused)
        : m_reflection(std::move(reflection)), m_served(std::move(served)), m_refused(std::move(refused))
    {
    }

    std::atomic<int> filesByName { 0 };
    /// When set, the file sent for any symbol (a server whose reflection is out of step with what it lists).
    std::string fileForSymbols;

    grpc::ServerGenericBidiReactor *CreateReactor(grpc::GenericCallbackServerContext *context) override
    {
        if (context->method() != kReflectionV1)
            return grpc::CallbackGenericService::CreateReactor(context); // UNIMPLEMENTED
        return new Reactor(this);
    }

private:
    class Reactor : public grpc::ServerGenericBidiReactor {
    public:
        explicit Reactor(FakeReflectionV1 *service) : m_service(service) { StartRead(&m_in); }
        void OnReadDone(bool ok) override
        {
            if (!ok) {
                Finish(grpc::Status::OK);
                return;
            }
            m_out = m_service->answer(m_in);
            StartWrite(&m_out);
        }
        void OnWriteDone(bool ok) override
        {
            if (ok)
                StartRead(&m_in);
            else
                Finish(grpc::Status(grpc::StatusCode::CANCELLED, "write failed"));
        }
        void OnDone() override { delete this; }

    private:
        FakeReflectionV1 *m_service;
        grpc::ByteBuffer m_in;
        grpc::ByteBuffer m_out;
    };

    grpc::ByteBuffer answer(const grpc::ByteBuffer &in)
    {
        const gp::Descriptor *requestType
            = m_reflection.findMessage(QStringLiteral("grpc.reflection.v1.ServerReflectionRequest"));
        const gp::Descriptor *responseType
            = m_reflection.findMessage(QStringLiteral("grpc.reflection.v1.ServerReflectionResponse"));
        grpc::Slice slice;
        (void)in.DumpToSingleSlice(&slice);
        auto request = m_reflection.newMessage(requestType);
        request->ParseFromArray(slice.begin(), static_cast<int>(slice.size()));
        const gp::FieldDescriptor *asked = request->GetReflection()->GetOneofFieldDescriptor(
            *request, requestType->FindOneofByName("message_request"));
        const std::string value = asked ? request->GetReflection()->GetString(*request, asked) : std::string();
        const std::string kind = asked ? asked->name() : std::string();

        QByteArray json = R"({"errorResponse":{"errorCode":3,"errorMessage":"unsupported request"}})";
        const gp::FileDescriptor *file = nullptr;
        if (kind == "list_services") {
            json = R"({"listServicesResponse":{"service":[{"name":"test.shapes.Shapes"},)"
                   R"({"name":"grpc.reflection.v1.ServerReflection"}]}})";
        } else if (kind == "file_containing_symbol") {
            if (const gp::ServiceDescriptor *service = m_served.pool()->FindServiceByName(value))
                file = service->file();
            if (!fileForSymbols.empty())
                file = m_served.pool()->FindFileByName(fileForSymbols);
        } else if (kind == "file_by_filename") {
            ++filesByName;
            file = m_served.pool()->FindFileByName(value);
        }
        if (!kind.empty() && kind != "list_services") {
            if (file && !m_refused.count(file->name())) {
                gp::FileDescriptorProto proto;
                file->CopyTo(&proto);
                json = R"({"fileDescriptorResponse":{"fileDescriptorProto":[")"
                    + QByteArray::fromStdString(proto.SerializeAsString()).toBase64() + R"("]}})";
            } else {
                json = R"({"errorResponse":{"errorCode":5,"errorMessage":"no such file: )"
                    + QByteArray::fromStdString(value) + R"("}})";
            }
        }
        QString error;
        const auto response = messageFromJson(m_reflection, responseType, json, &error);
        if (!response)
            qFatal("fake reflection reply: %s", qPrintable(error));
        const std::string bytes = response->SerializeAsString();
        grpc::Slice out(bytes);
        return grpc::ByteBuffer(&out, 1);
    }

    Schema m_reflection;
    Schema m_served;
    std::set<std::string> m_refused;
};

/// A gRPC server on 127.0.0.1:0 answering with @p service only: no reflection unless it provides it.
struct GenericServer {
    std::unique_ptr<grpc::Server> server;
    int port = 0;

    explicit GenericServer(grpc::CallbackGenericService *service)
    {
        grpc::ServerBuilder builder;
        builder.SetOption(std::make_unique<NoPlugins>());
        builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
        builder.RegisterCallbackGenericService(service);
        server = builder.BuildAndStart();
        if (!server || port == 0)
            qFatal("cannot start a gRPC server on 127.0.0.1");
    }
    ~GenericServer() { server->Shutdown(std::chrono::system_clock::now()); }

    QString address() const { return QStringLiteral("127.0.0.1:") + QString::number(port); }
};

} // namespace

class TestSources : public QObject {
    Q_OBJECT

    BuiltinGrpcServer m_server;

    static QString protoset(const char *name) { return kProtosets + QLatin1Char('/') + QLatin1String(name); }

    ReflectionTarget target(const QString &address, std::chrono::milliseconds timeout = 5s)
    {
        ReflectionTarget t;
        t.address = address;
        t.timeout = timeout;
        return t;
    }

    static QStringList methodNames(const Schema &schema, const QString &service)
    {
        QStringList names;
        for (const auto &info : schema.services()) {
            if (info.name == service) {
                for (const auto &method : info.methods)
                    names << method.name;
            }
        }
        return names;
    }

    Schema reflectionProtoSchema()
    {
        const QString file = QStringLiteral(RPCSCOPE_REFLECTION_V1_PROTO);
        if (file.isEmpty())
            return {};
        const SchemaLoadResult result = loadProtoFiles({ file });
        if (!result.ok())
            qFatal("%s", qPrintable(result.errorText()));
        return result.schema;
    }

    Schema shapesSchema()
    {
        const QString imports = QStringLiteral(RPCSCOPE_TEST_DATA "/imports");
        const SchemaLoadResult result = loadProtoFiles({ imports + QStringLiteral("/shapes.proto") }, { imports });
        if (!result.ok())
            qFatal("%s", qPrintable(result.errorText()));
        return result.schema;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QString error;
        QVERIFY2(m_server.start(QStringLiteral("127.0.0.1"), 0, 2, &error), qPrintable(error));
    }

    // Protosets

    void protosetWithImportsLoads()
    {
        const SchemaLoadResult result = loadProtoset({ protoset("shapes.protoset") });
        QVERIFY2(result.ok(), qPrintable(result.errorText()));
        const QStringList files = result.schema.fileNames();
        QVERIFY(files.contains(QStringLiteral("shapes.proto")));
        QVERIFY(files.contains(QStringLiteral("common/types.proto")));
        QVERIFY(files.contains(QStringLiteral("google/protobuf/timestamp.proto")));
        QCOMPARE(methodNames(result.schema, QStringLiteral("test.shapes.Shapes")),
            (QStringList { QStringLiteral("Get"), QStringLiteral("Clear"), QStringLiteral("Watch"),
                QStringLiteral("Upload"), QStringLiteral("Chat") }));
        QString error;
        const gp::MethodDescriptor *get = result.schema.findMethod(QStringLiteral("test.shapes.Shapes/Get"), &error);
        QVERIFY2(get, qPrintable(error));
        QVERIFY(result.schema.newMessage(get->input_type()));
        QVERIFY(inDependencyOrder(result.schema.fileDescriptorSet()));
    }

    void protosetWithoutIncludeImportsNamesTheMissingImport()
    {
        const QString file = protoset("shapes-no-imports.protoset");
        const SchemaLoadResult result = loadProtoset({ file });
        QVERIFY(!result.ok());
        QVERIFY(result.schema.isEmpty());
        const QString text = result.errorText();
        QVERIFY2(text.startsWith(file + QStringLiteral(": \"shapes.proto\" imports \"common/types.proto\"")),
            qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("--include_imports")), qPrintable(text));
        // The well-known types are built in, as for .proto files: only the user's own import is missing.
        QCOMPARE(result.errors.size(), 1);
    }

    void garbageIsNotAProtoset()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString garbage = writeFile(dir, QStringLiteral("garbage.protoset"), "this is not a protoset\n\xff\xfe");
        SchemaLoadResult result = loadProtoset({ garbage });
        QCOMPARE(result.errors.size(), 1);
        QCOMPARE(result.errors.first().file, garbage);
        QVERIFY2(
            result.errors.first().message.startsWith(QStringLiteral("not a protoset")), qPrintable(result.errorText()));

        // Field 2 as a varint: protobuf parses it as an unknown field, so only a closer look rejects it.
        const QString parses = writeFile(dir, QStringLiteral("parses.protoset"), QByteArray("\x10\x01", 2));
        result = loadProtoset({ parses });
        QCOMPARE(result.errors.size(), 1);
        QVERIFY2(
            result.errors.first().message.startsWith(QStringLiteral("not a protoset")), qPrintable(result.errorText()));

        const QString empty = writeFile(dir, QStringLiteral("empty.protoset"), {});
        result = loadProtoset({ empty });
        QCOMPARE(result.errorText(), empty + QStringLiteral(": the protoset holds no files"));
    }

    void missingProtosetFile()
    {
        const QString missing = kProtosets + QStringLiteral("/nowhere.protoset");
        const SchemaLoadResult result = loadProtoset({ missing, protoset("shapes.protoset") });
        QCOMPARE(result.errorText(), missing + QStringLiteral(": file not found"));
    }

    void twoProtosetsMerge()
    {
        // One supplies the import the other lacks.
        SchemaLoadResult result = loadProtoset({ protoset("shapes-no-imports.protoset"), protoset("types.protoset") });
        QVERIFY2(result.ok(), qPrintable(result.errorText()));
        QVERIFY(result.schema.findMessage(QStringLiteral("test.common.Point")));
        QVERIFY(result.schema.findMethod(QStringLiteral("test.shapes.Shapes/Watch")));
        QVERIFY(inDependencyOrder(result.schema.fileDescriptorSet()));

        // Both hold common/types.proto, identical: fine.
        result = loadProtoset({ protoset("shapes.protoset"), protoset("types.protoset") });
        QVERIFY2(result.ok(), qPrintable(result.errorText()));
        QCOMPARE(result.schema.fileNames().count(QStringLiteral("common/types.proto")), 1);
    }

    void differingCopiesOfOneFileNameBothProtosets()
    {
        QFile original(protoset("types.protoset"));
        QVERIFY(original.open(QIODevice::ReadOnly));
        gp::FileDescriptorSet set;
        QVERIFY(set.ParseFromString(original.readAll().toStdString()));
        set.mutable_file(0)->mutable_message_type(0)->set_name("Dot");
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString changed
            = writeFile(dir, QStringLiteral("changed.protoset"), QByteArray::fromStdString(set.SerializeAsString()));

        const SchemaLoadResult result = loadProtoset({ protoset("shapes.protoset"), changed });
        QCOMPARE(result.errorText(),
            changed + QStringLiteral(": \"common/types.proto\" differs from the copy in ")
                + protoset("shapes.protoset"));
    }

    // Server reflection

    void reflectionOnBuiltinServer()
    {
        const SchemaLoadResult result = loadSchemaFromReflection(target(m_server.address()));
        QVERIFY2(result.ok(), qPrintable(result.errorText()));
        QStringList services;
        for (const auto &service : result.schema.services())
            services << service.name;
        QCOMPARE(services, QStringList { QStringLiteral("rpcscope.bench.v1.Bench") }); // reflection itself left out

        const QStringList expected = methodNames(builtinBenchSchema(), QStringLiteral("rpcscope.bench.v1.Bench"));
        QVERIFY(expected.contains(QStringLiteral("Echo")));
        QCOMPARE(methodNames(result.schema, QStringLiteral("rpcscope.bench.v1.Bench")), expected);
        QVERIFY(inDependencyOrder(result.schema.fileDescriptorSet()));

        QString error;
        const gp::MethodDescriptor *echo
            = result.schema.findMethod(QStringLiteral("rpcscope.bench.v1.Bench/Echo"), &error);
        QVERIFY2(echo, qPrintable(error));
        QVERIFY(result.schema.newMessage(echo->input_type()));
        const auto request = messageFromJson(result.schema, echo->input_type(), R"({"payload":"aGVsbG8="})", &error);
        QVERIFY2(request, qPrintable(error));
    }

    void reflectionServicesFilter()
    {
        ReflectionTarget t = target(m_server.address());
        t.services = { QStringLiteral("rpcscope.bench.v1.Bench") };
        SchemaLoadResult result = loadSchemaFromReflection(t);
        QVERIFY2(result.ok(), qPrintable(result.errorText()));
        QVERIFY(result.schema.findMethod(QStringLiteral("rpcscope.bench.v1.Bench/Echo")));

        // Only the files of the services asked for: here reflection's own, and not the bench service's.
        t.services = { QStringLiteral("grpc.reflection.v1alpha.ServerReflection") };
        result = loadSchemaFromReflection(t);
        QVERIFY2(result.ok(), qPrintable(result.errorText()));
        QVERIFY(
            result.schema.findMethod(QStringLiteral("grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo")));
        QVERIFY(!result.schema.findMethod(QStringLiteral("rpcscope.bench.v1.Bench/Echo")));

        t.services = { QStringLiteral("nope.Service") };
        result = loadSchemaFromReflection(t);
        QVERIFY(!result.ok());
        const QString text = result.errorText();
        QVERIFY2(text.startsWith(m_server.address() + QStringLiteral(": the server does not offer nope.Service")),
            qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("rpcscope.bench.v1.Bench")), qPrintable(text));
    }

    void reflectionWhereNothingListens()
    {
        QTcpServer probe;
        QVERIFY(probe.listen(QHostAddress::LocalHost));
        const QString address = QStringLiteral("127.0.0.1:") + QString::number(probe.serverPort());
        probe.close();

        QElapsedTimer timer;
        timer.start();
        const SchemaLoadResult result = loadSchemaFromReflection(target(address, 3s));
        QVERIFY2(timer.elapsed() < 4000, qPrintable(QString::number(timer.elapsed())));
        QVERIFY(!result.ok());
        QVERIFY2(result.errorText().startsWith(address + QStringLiteral(": cannot connect (UNAVAILABLE: ")),
            qPrintable(result.errorText()));
    }

    void reflectionOnSilentServerEndsAtTheTimeout()
    {
        // Accepts TCP connections (the kernel does, unasked) but never speaks HTTP/2.
        QTcpServer silent;
        QVERIFY(silent.listen(QHostAddress::LocalHost));
        const QString address = QStringLiteral("127.0.0.1:") + QString::number(silent.serverPort());

        QElapsedTimer timer;
        timer.start();
        const SchemaLoadResult result = loadSchemaFromReflection(target(address, 1s));
        QVERIFY2(timer.elapsed() < 2000, qPrintable(QString::number(timer.elapsed())));
        QVERIFY(!result.ok());
        QVERIFY2(result.errorText().startsWith(address + QStringLiteral(": no answer to server reflection within ")),
            qPrintable(result.errorText()));
        QVERIFY2(result.errorText().contains(QStringLiteral("DEADLINE_EXCEEDED")), qPrintable(result.errorText()));
    }

    void reflectionOnServerWithoutIt()
    {
        grpc::CallbackGenericService unimplemented; // answers every method UNIMPLEMENTED
        GenericServer server(&unimplemented);
        QElapsedTimer timer;
        timer.start();
        const SchemaLoadResult result = loadSchemaFromReflection(target(server.address(), 3s));
        QVERIFY(timer.elapsed() < 3000);
        QCOMPARE(result.errorText(),
            server.address()
                + QStringLiteral(": server does not offer reflection (UNIMPLEMENTED for v1 and v1alpha); "
                                 "give --proto or --protoset"));
    }

    void reflectionV1FetchesImportsByName()
    {
        const Schema reflection = reflectionProtoSchema();
        if (reflection.isEmpty())
            QSKIP("grpc/reflection/v1/reflection.proto not installed (Debian package grpc-proto)");
        FakeReflectionV1 service(reflection, shapesSchema(), {});
        GenericServer server(&service);
        const SchemaLoadResult result = loadSchemaFromReflection(target(server.address()));
        QVERIFY2(result.ok(), qPrintable(result.errorText()));
        QVERIFY(result.schema.findMethod(QStringLiteral("test.shapes.Shapes/Chat")));
        QVERIFY(result.schema.findMessage(QStringLiteral("test.common.Point")));
        QVERIFY(inDependencyOrder(result.schema.fileDescriptorSet()));
        QCOMPARE(service.filesByName.load(), 4); // common/types, timestamp, empty, wrappers
    }

    void reflectionMissingImportIsNamed()
    {
        const Schema reflection = reflectionProtoSchema();
        if (reflection.isEmpty())
            QSKIP("grpc/reflection/v1/reflection.proto not installed (Debian package grpc-proto)");
        FakeReflectionV1 service(reflection, shapesSchema(), { "common/types.proto" });
        GenericServer server(&service);
        const SchemaLoadResult result = loadSchemaFromReflection(target(server.address()));
        QCOMPARE(result.errorText(),
            server.address()
                + QStringLiteral(": server reflection does not provide \"common/types.proto\" (imported by "
                                 "\"shapes.proto\": no such file: common/types.proto (NOT_FOUND))"));
    }

    void reflectionFallsBackToBuiltinWellKnownTypes()
    {
        const Schema reflection = reflectionProtoSchema();
        if (reflection.isEmpty())
            QSKIP("grpc/reflection/v1/reflection.proto not installed (Debian package grpc-proto)");
        FakeReflectionV1 service(reflection, shapesSchema(),
            { "google/protobuf/timestamp.proto", "google/protobuf/empty.proto", "google/protobuf/wrappers.proto" });
        GenericServer server(&service);
        const SchemaLoadResult result = loadSchemaFromReflection(target(server.address()));
        QVERIFY2(result.ok(), qPrintable(result.errorText()));
        QVERIFY(result.schema.findMessage(QStringLiteral("google.protobuf.Timestamp")));
    }

    void reflectionListingAServiceItsFilesLackIsAnError()
    {
        const Schema reflection = reflectionProtoSchema();
        if (reflection.isEmpty())
            QSKIP("grpc/reflection/v1/reflection.proto not installed (Debian package grpc-proto)");
        FakeReflectionV1 service(reflection, shapesSchema(), {});
        service.fileForSymbols = "common/types.proto";
        GenericServer server(&service);
        const SchemaLoadResult result = loadSchemaFromReflection(target(server.address()));
        QVERIFY(!result.ok());
        QVERIFY2(result.errorText().contains(QStringLiteral("server reflection lists test.shapes.Shapes, but the file "
                                                            "it sent for it (common/types.proto) does not define it")),
            qPrintable(result.errorText()));
    }

    void reflectionErrorResponsePassedThrough()
    {
        const Schema reflection = reflectionProtoSchema();
        if (reflection.isEmpty())
            QSKIP("grpc/reflection/v1/reflection.proto not installed (Debian package grpc-proto)");
        FakeReflectionV1 service(reflection, shapesSchema(), { "shapes.proto" });
        GenericServer server(&service);
        const SchemaLoadResult result = loadSchemaFromReflection(target(server.address()));
        QCOMPARE(result.errorText(),
            server.address()
                + QStringLiteral(": server reflection has no file for test.shapes.Shapes: no such file: "
                                 "test.shapes.Shapes (NOT_FOUND)"));
    }
};

QTEST_GUILESS_MAIN(TestSources)
#include "tst_sources.moc"
