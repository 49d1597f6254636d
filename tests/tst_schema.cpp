#include "codec/codec.h"
#include "codec/messagejson.h"
#include "codec/requesttemplate.h"
#include "engine/callsetup.h"
#include "schema/schema.h"
#include "transport/transports.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

using namespace rpcscope;
namespace gp = google::protobuf;

class TestSchema : public QObject {
    Q_OBJECT

    const QString m_data = QStringLiteral(RPCSCOPE_TEST_DATA);

    SchemaLoadResult loadShapes()
    {
        return loadProtoFiles(
            { m_data + QStringLiteral("/imports/shapes.proto") }, { m_data + QStringLiteral("/imports") });
    }

private Q_SLOTS:
    void importsAndWellKnownTypes()
    {
        const SchemaLoadResult result = loadShapes();
        QVERIFY2(result.ok(), qPrintable(result.errorText()));
        const QStringList files = result.schema.fileNames();
        QVERIFY(files.contains(QStringLiteral("shapes.proto")));
        QVERIFY(files.contains(QStringLiteral("common/types.proto")));
        QVERIFY(files.contains(QStringLiteral("google/protobuf/timestamp.proto")));
        const auto services = result.schema.services();
        QCOMPARE(services.size(), 1);
        QCOMPARE(services[0].name, QStringLiteral("test.shapes.Shapes"));
        QStringList kinds;
        for (const auto &m : services[0].methods)
            kinds << m.name + QLatin1Char('=') + m.kindName();
        QCOMPARE(kinds,
            (QStringList { QStringLiteral("Get=unary"), QStringLiteral("Clear=unary"),
                QStringLiteral("Watch=server streaming"), QStringLiteral("Upload=client streaming"),
                QStringLiteral("Chat=bidi streaming") }));
        QCOMPARE(services[0].methods[0].inputType, QStringLiteral("test.shapes.Shape"));
    }

    void fileFoundWithoutImportPath()
    {
        // Like ghz: the file's own folder is an import root, so a file with no imports of its own loads alone.
        const SchemaLoadResult result = loadProtoFiles({ m_data + QStringLiteral("/imports/common/types.proto") });
        QVERIFY2(result.ok(), qPrintable(result.errorText()));
        QVERIFY(result.schema.findMessage(QStringLiteral("test.common.Point")));
    }

    void syntaxErrorHasLineAndColumn()
    {
        const QString file = m_data + QStringLiteral("/broken/syntax.proto");
        const SchemaLoadResult result = loadProtoFiles({ file });
        QVERIFY(!result.ok());
        QVERIFY(result.schema.isEmpty());
        // "int32 a = 1" lacks its ';': protoc reports it where the next token starts (line 6, column 3).
        QCOMPARE(result.errors.first().file, file);
        QCOMPARE(result.errors.first().line, 6);
        QCOMPARE(result.errors.first().column, 3);
        QVERIFY(result.errors.first().toString().startsWith(file + QStringLiteral(":6:3: ")));
        QVERIFY(result.errors.first().message.contains(QStringLiteral("Expected \";\"")));
    }

    void missingImportAndUnknownTypeReportedTogether()
    {
        const QString file = m_data + QStringLiteral("/broken/missing_import.proto");
        const SchemaLoadResult result = loadProtoFiles({ file });
        QVERIFY(!result.ok());
        const QString text = result.errorText();
        QVERIFY2(text.contains(file + QStringLiteral(":4:1: Import \"nowhere/missing.proto\" was not found")),
            qPrintable(text));
        QVERIFY2(text.contains(file + QStringLiteral(":7:3: \"Unknown\" is not defined.")), qPrintable(text));
    }

    void errorsFromSeveralFilesAtOnce()
    {
        const SchemaLoadResult result = loadProtoFiles({ m_data + QStringLiteral("/broken/syntax.proto"),
            m_data + QStringLiteral("/broken/missing_import.proto"), m_data + QStringLiteral("/no/such/file.proto") });
        const QString text = result.errorText();
        QVERIFY2(text.contains(QStringLiteral("syntax.proto:6:3")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("missing_import.proto:7:3")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("no/such/file.proto: file not found")), qPrintable(text));
    }

    void garbageStopsAtAHundredErrors()
    {
        // 20 KB that is not a .proto made thousands of errors (and took 12-16 s to collect them; protoc 0.34 s).
        QTemporaryDir dir;
        QFile file(dir.filePath(QStringLiteral("garbage.proto")));
        QVERIFY(file.open(QIODevice::WriteOnly));
        QByteArray garbage;
        for (int i = 0; garbage.size() < 20000; ++i)
            garbage += QByteArray::number(i * 7919 % 1000) + " }{ ;= \"" + char('a' + i % 26) + "\n";
        file.write(garbage);
        file.close();
        const SchemaLoadResult result = loadProtoFiles({ file.fileName() });
        QVERIFY(!result.ok());
        QCOMPARE(result.errors.size(), 101);
        QVERIFY2(result.errors.last().message.contains(QStringLiteral("the first 100 are shown")),
            qPrintable(result.errors.last().message));
    }

    void findMethodSpellings()
    {
        const Schema schema = builtinBenchSchema();
        QVERIFY(!schema.isEmpty());
        for (const char *name :
            { "rpcscope.bench.v1.Bench/Echo", "rpcscope.bench.v1.Bench.Echo", "/rpcscope.bench.v1.Bench/Echo" })
            QVERIFY2(schema.findMethod(QString::fromLatin1(name)), name);
        QString error;
        QVERIFY(!schema.findMethod(QStringLiteral("rpcscope.bench.v1.Bench/Ech"), &error));
        QVERIFY2(error.contains(QStringLiteral("\"Ech\" not found")) && error.contains(QStringLiteral("Bench/Echo")),
            qPrintable(error));
        QVERIFY(!schema.findMethod(QStringLiteral("nope.Svc/M"), &error));
        QVERIFY(error.contains(QStringLiteral("service \"nope.Svc\" not found")));
    }

    void exampleJsonParsesBack()
    {
        const SchemaLoadResult result = loadShapes();
        QVERIFY(result.ok());
        const auto *type = result.schema.findMessage(QStringLiteral("test.shapes.Shape"));
        QVERIFY(type);
        const QByteArray example = exampleJson(result.schema, type);
        const QJsonObject object = QJsonDocument::fromJson(example).object();
        for (const char *key : { "name", "points", "color", "blob", "weights", "radius", "parent" })
            QVERIFY2(object.contains(QLatin1String(key)), key);
        QCOMPARE(object.value(QStringLiteral("color")).toString(), QStringLiteral("COLOR_UNSPECIFIED"));
        QVERIFY(object.value(QStringLiteral("points")).isArray());
        QVERIFY(!object.contains(QStringLiteral("side"))); // one member per oneof
        QVERIFY(!object.contains(QStringLiteral("version"))); // proto3 optional: unset means something
        QString error;
        QVERIFY2(messageFromJson(result.schema, type, example, &error), qPrintable(error));
    }

    void jsonErrorsNameTheField()
    {
        const Schema schema = builtinBenchSchema();
        const auto *sum = schema.findMessage(QStringLiteral("rpcscope.bench.v1.SumRequest"));
        QString error;
        QVERIFY(!messageFromJson(schema, sum, R"({"numz": [1]})", &error));
        QVERIFY2(error.contains(QStringLiteral("numz")), qPrintable(error));
        QVERIFY(!messageFromJson(schema, sum, R"({"nums": ["abc"]})", &error));
        QVERIFY2(error.contains(QStringLiteral("nums")), qPrintable(error));
        QVERIFY(!messageFromJson(schema, sum, "{\n  \"nums\": [1,\n}", &error));
        QVERIFY2(error.contains(QStringLiteral("line 3")), qPrintable(error));
        QVERIFY(!messageFromJson(schema, sum, "[1]", &error));
        QVERIFY(error.contains(QStringLiteral("JSON object")));
        auto message = messageFromJson(schema, sum, R"({"nums": [1, "2", 3]})", &error);
        QVERIFY2(message, qPrintable(error));
        QCOMPARE(
            QJsonDocument::fromJson(messageToJson(*message)).object().value(QStringLiteral("nums")).toArray().size(),
            3);
    }

    void proto2ExtensionsInJson()
    {
        // protobuf 3.21's JSON parser said "cannot find field" for "[ext.v1.level]" though the schema declares it,
        // and its printer dropped set extensions without a word.
        const SchemaLoadResult result = loadProtoFiles({ m_data + QStringLiteral("/extensions.proto") });
        QVERIFY2(result.ok(), qPrintable(result.errorText()));
        const auto *base = result.schema.findMessage(QStringLiteral("ext.v1.Base"));
        QVERIFY(base);
        const gp::DescriptorPool *pool = base->file()->pool();
        const QByteArray json = R"({"name": "top", "[ext.v1.level]": 7, "[ext.v1.big]": "9007199254740993",
            "[ext.v1.colour]": "BLUE", "[ext.v1.blob]": "AAEC", "[ext.v1.tags]": ["a", "b"], "[ext.v1.ratio]": 0.1,
            "[ext.v1.Holder.flagged]": true, "[ext.v1.linked]": {"name": "l", "[ext.v1.level]": 1},
            "child": {"name": "c", "[ext.v1.level]": 2}, "items": [{"name": "i0"}, {"[ext.v1.level]": 3}],
            "named": {"k": {"[ext.v1.level]": 4}}})";
        QString error;
        const auto message = messageFromJson(result.schema, base, json, &error);
        QVERIFY2(message, qPrintable(error));
        const gp::Reflection *r = message->GetReflection();
        auto extension = [&](const char *name) {
            const gp::FieldDescriptor *field = pool->FindExtensionByName(name);
            if (!field)
                qFatal("no extension %s", name);
            return field;
        };
        QCOMPARE(r->GetString(*message, base->FindFieldByName("name")), std::string("top"));
        QCOMPARE(r->GetInt32(*message, extension("ext.v1.level")), 7);
        QCOMPARE(r->GetInt64(*message, extension("ext.v1.big")), Q_INT64_C(9007199254740993)); // not rounded
        QCOMPARE(r->GetEnumValue(*message, extension("ext.v1.colour")), 2);
        QCOMPARE(r->GetString(*message, extension("ext.v1.blob")), std::string("\x00\x01\x02", 3));
        QCOMPARE(r->FieldSize(*message, extension("ext.v1.tags")), 2);
        QCOMPARE(r->GetFloat(*message, extension("ext.v1.ratio")), 0.1f);
        QVERIFY(r->GetBool(*message, extension("ext.v1.Holder.flagged")));
        const gp::Message &linked = r->GetMessage(*message, extension("ext.v1.linked"));
        QCOMPARE(linked.GetReflection()->GetInt32(linked, extension("ext.v1.level")), 1);
        const gp::Message &child = r->GetMessage(*message, base->FindFieldByName("child"));
        QCOMPARE(child.GetReflection()->GetString(child, base->FindFieldByName("name")), std::string("c"));
        QCOMPARE(child.GetReflection()->GetInt32(child, extension("ext.v1.level")), 2);
        QCOMPARE(r->FieldSize(*message, base->FindFieldByName("items")), 2);
        const gp::Message &item = r->GetRepeatedMessage(*message, base->FindFieldByName("items"), 1);
        QCOMPARE(item.GetReflection()->GetInt32(item, extension("ext.v1.level")), 3);
        QCOMPARE(r->FieldSize(*message, base->FindFieldByName("named")), 1);

        // Printed back with the extensions, and read back to the same message (printed the same: the print names
        // proto2 fields left unset with their defaults, so the bytes differ); the same over the JSON codec, and
        // protobuf's wire format byte for byte.
        const QByteArray printed = messageToJson(*message);
        const QJsonObject object = QJsonDocument::fromJson(printed).object();
        QCOMPARE(object.value(QStringLiteral("[ext.v1.level]")).toInt(), 7);
        QCOMPARE(object.value(QStringLiteral("[ext.v1.big]")).toString(), QStringLiteral("9007199254740993"));
        QCOMPARE(object.value(QStringLiteral("[ext.v1.colour]")).toString(), QStringLiteral("BLUE"));
        QCOMPARE(object.value(QStringLiteral("[ext.v1.ratio]")).toDouble(), 0.1);
        QCOMPARE(object.value(QStringLiteral("child")).toObject().value(QStringLiteral("[ext.v1.level]")).toInt(), 2);
        QCOMPARE(object.value(QStringLiteral("named"))
                     .toObject()
                     .value(QStringLiteral("k"))
                     .toObject()
                     .value(QStringLiteral("[ext.v1.level]"))
                     .toInt(),
            4);
        const auto reread = messageFromJson(result.schema, base, printed, &error);
        QVERIFY2(reread, qPrintable(error));
        QCOMPARE(messageToJson(*reread), printed);
        for (const Codec codec : { Codec::Json, Codec::Protobuf }) {
            std::string bytes;
            std::string codecError;
            QVERIFY2(encodeMessage(codec, *message, &bytes, &codecError), codecError.c_str());
            std::unique_ptr<gp::Message> decoded(message->New());
            QVERIFY2(decodeMessage(codec, bytes, decoded.get(), &codecError), codecError.c_str());
            if (codec == Codec::Protobuf)
                QCOMPARE(decoded->SerializeAsString(), message->SerializeAsString());
            else
                QCOMPARE(messageToJson(*decoded), printed);
        }

        std::string bytes;
        std::string codecError;
        QVERIFY(!encodeMessage(Codec::Msgpack, *message, &bytes, &codecError));
        QVERIFY2(QString::fromStdString(codecError).contains(QStringLiteral("proto2 extensions")), codecError.c_str());

        // Errors name the key and say what is wrong with it.
        QVERIFY(!messageFromJson(result.schema, base, R"({"[ext.v1.nope]": 1})", &error));
        QVERIFY2(error.contains(QStringLiteral("[ext.v1.nope]: no extension of that name")), qPrintable(error));
        QVERIFY(!messageFromJson(result.schema, base, R"({"child": {"[ext.v1.level]": "x"}})", &error));
        QVERIFY2(error.contains(QStringLiteral("child.[ext.v1.level]: \"x\" is not an integer")), qPrintable(error));
        QVERIFY(!messageFromJson(result.schema, base, R"({"[ext.v1.level]": 3000000000})", &error));
        QVERIFY2(error.contains(QStringLiteral("out of range")), qPrintable(error));
        QVERIFY(!messageFromJson(result.schema, base, R"({"[ext.v1.colour]": "GREEN"})", &error));
        QVERIFY2(error.contains(QStringLiteral("\"GREEN\" is not a value of ext.v1.Colour")), qPrintable(error));
        QVERIFY(!messageFromJson(result.schema, base, R"({"items": [{"[ext.v1.level]": 1, "nope": 2}]})", &error));
        QVERIFY2(
            error.contains(QStringLiteral("items[0]")) && error.contains(QStringLiteral("nope")), qPrintable(error));
        const auto *other = result.schema.findMessage(QStringLiteral("ext.v1.Other"));
        QVERIFY(!messageFromJson(result.schema, other, R"({"[ext.v1.level]": 1})", &error));
        QVERIFY2(error.contains(QStringLiteral("extends ext.v1.Base, not ext.v1.Other")), qPrintable(error));
    }

    void fillSizes()
    {
        const Schema schema = builtinBenchSchema();
        QString error;
        auto echo = schema.newMessage(schema.findMessage(QStringLiteral("rpcscope.bench.v1.EchoRequest")));
        QVERIFY2(applyFill(echo.get(), QStringLiteral("payload=10MiB"), &error), qPrintable(error));
        const auto *payload = echo->GetDescriptor()->FindFieldByName("payload");
        QCOMPARE(echo->GetReflection()->GetString(*echo, payload).size(), size_t(10 * 1024 * 1024));

        auto sum = schema.newMessage(schema.findMessage(QStringLiteral("rpcscope.bench.v1.SumRequest")));
        QVERIFY(applyFill(sum.get(), QStringLiteral("nums=1000"), &error));
        const auto *nums = sum->GetDescriptor()->FindFieldByName("nums");
        QCOMPARE(sum->GetReflection()->FieldSize(*sum, nums), 1000);
        QCOMPARE(sum->GetReflection()->GetRepeatedInt64(*sum, nums, 999), int64_t(1000));

        QVERIFY(!applyFill(sum.get(), QStringLiteral("payload=10"), &error));
        QVERIFY2(error.contains(QStringLiteral("no field \"payload\"")) && error.contains(QStringLiteral("nums")),
            qPrintable(error));
        QVERIFY(!applyFill(echo.get(), QStringLiteral("response_size=10"), &error));
        QVERIFY2(error.contains(QStringLiteral("response_size")) && error.contains(QStringLiteral("uint32")),
            qPrintable(error));
        QVERIFY(!applyFill(echo.get(), QStringLiteral("payload=lots"), &error));
        QVERIFY(error.contains(QStringLiteral("invalid size")));
        // Past protobuf's 2 GiB: refused before 3 GiB are allocated (which took 17 s before the refusal).
        QVERIFY(!applyFill(echo.get(), QStringLiteral("payload=3GiB"), &error));
        QVERIFY2(error.contains(QStringLiteral("2 GiB")), qPrintable(error));
    }

    void requestArraysAndBinary()
    {
        const Schema schema = builtinBenchSchema();
        QString error;
        // 2^53 + 1 does not survive a trip through double: the elements must be taken as written.
        const auto arr = prepareGrpcCall(schema,
            { QStringLiteral("rpcscope.bench.v1.Bench/Sum"),
                R"([{"nums": ["9007199254740993"]}, {"nums": [9007199254740993, 2]}, {}])" },
            &error);
        QVERIFY2(arr, qPrintable(error));
        QCOMPARE(arr->requests.size(), size_t(3));
        auto message = schema.newMessage(schema.findMessage(QStringLiteral("rpcscope.bench.v1.SumRequest")));
        QVERIFY(message->ParseFromString(arr->requests[1]));
        const auto *nums = message->GetDescriptor()->FindFieldByName("nums");
        QCOMPARE(message->GetReflection()->GetRepeatedInt64(*message, nums, 0), int64_t(9007199254740993LL));
        QVERIFY(arr->requests[2].empty());

        QVERIFY(!prepareGrpcCall(
            schema, { QStringLiteral("rpcscope.bench.v1.Bench/Sum"), R"([{"nums": [1]}, {"numz": 1}])" }, &error));
        QVERIFY2(
            error.contains(QStringLiteral("element 1")) && error.contains(QStringLiteral("numz")), qPrintable(error));
        QVERIFY(!prepareGrpcCall(schema, { QStringLiteral("rpcscope.bench.v1.Bench/Sum"), R"([1])" }, &error));
        QVERIFY(error.contains(QStringLiteral("not a JSON object")));
        QVERIFY(!prepareGrpcCall(schema, { QStringLiteral("rpcscope.bench.v1.Bench/Sum"), R"([])" }, &error));

        RequestSpec binary(QStringLiteral("rpcscope.bench.v1.Bench/Echo"));
        binary.binary = QByteArray("\x0a\x05hello", 7);
        const auto bin = prepareGrpcCall(schema, binary, &error);
        QVERIFY2(bin, qPrintable(error));
        QCOMPARE(bin->requests.front(), std::string("\x0a\x05hello", 7));
        binary.binary = QByteArray("\x0a\x7fhello", 7); // length past the end
        QVERIFY(!prepareGrpcCall(schema, binary, &error));
        QVERIFY(error.contains(QStringLiteral("does not parse as rpcscope.bench.v1.EchoRequest")));
    }

    void templates()
    {
        const Schema schema = builtinBenchSchema();
        QString error;
        const auto call = prepareGrpcCall(schema,
            { QStringLiteral("rpcscope.bench.v1.Bench/Sum"),
                R"({"nums": [{{.RequestNumber}}, {{.WorkerID}}, {{randomInt 5 9}}]})" },
            &error);
        QVERIFY2(call, qPrintable(error));
        QVERIFY(call->perCall);
        QVERIFY(call->requests.empty());
        std::mt19937_64 rng(7);
        std::string bytes;
        std::string why;
        QVERIFY(call->perCall->encode(300, 4, rng, &bytes, &why));
        auto message = schema.newMessage(schema.findMessage(QStringLiteral("rpcscope.bench.v1.SumRequest")));
        QVERIFY(message->ParseFromString(bytes));
        const auto *nums = message->GetDescriptor()->FindFieldByName("nums");
        QCOMPARE(message->GetReflection()->GetRepeatedInt64(*message, nums, 0), int64_t(300));
        QCOMPARE(message->GetReflection()->GetRepeatedInt64(*message, nums, 1), int64_t(4));
        const int64_t random = message->GetReflection()->GetRepeatedInt64(*message, nums, 2);
        QVERIFY(random >= 5 && random <= 9);

        RequestTemplate t = *RequestTemplate::parse("{{.UUID}} {{randomString 12}}", &error);
        const std::string rendered = t.render({ 0, 0, &rng });
        QCOMPARE(rendered.size(), size_t(36 + 1 + 12));
        QCOMPARE(rendered[14], '4');

        QVERIFY(!prepareGrpcCall(
            schema, { QStringLiteral("rpcscope.bench.v1.Bench/Sum"), R"({"nums": [{{.Nope}}]})" }, &error));
        QVERIFY2(error.contains(QStringLiteral("{{.Nope}}")), qPrintable(error));
        QVERIFY(!prepareGrpcCall(
            schema, { QStringLiteral("rpcscope.bench.v1.Bench/Sum"), R"({"nums": [{{.RequestNumber]})" }, &error));
        QVERIFY(error.contains(QStringLiteral("never closed")));
        // A template whose rendering is not a valid request fails when prepared, not mid-run.
        QVERIFY(!prepareGrpcCall(
            schema, { QStringLiteral("rpcscope.bench.v1.Bench/Sum"), R"({"nums": ["{{randomString 3}}"]})" }, &error));
        QVERIFY2(error.startsWith(QStringLiteral("request template:")), qPrintable(error));
        // A known placeholder with a bad value says what is wrong with the value, not "malformed".
        QVERIFY(!RequestTemplate::parse("{{randomInt 5 1}}", &error));
        QVERIFY2(error.contains(QStringLiteral("MIN 5 is greater than MAX 1")), qPrintable(error));
        QVERIFY(!RequestTemplate::parse("{{randomString 1000000000000}}", &error));
        QVERIFY2(error.contains(QStringLiteral("too large")), qPrintable(error));
        // The whole int64 range: its span wraps to 0 in 64 bits (a division by zero before).
        const auto wide = RequestTemplate::parse("{{randomInt -9223372036854775808 9223372036854775807}}", &error);
        QVERIFY2(wide, qPrintable(error));
        bool parsed = false;
        QString::fromStdString(wide->render({ 0, 0, &rng })).toLongLong(&parsed);
        QVERIFY(parsed);
        // Valid JSON that is not an object is named for what it is.
        for (const auto &[json, kind] : { std::pair(QByteArray(R"("hello")"), QStringLiteral("not a string")),
                 std::pair(QByteArray("42"), QStringLiteral("not a number")),
                 std::pair(QByteArray("true"), QStringLiteral("not a boolean")) }) {
            QVERIFY(!prepareGrpcCall(schema, { QStringLiteral("rpcscope.bench.v1.Bench/Sum"), json }, &error));
            QVERIFY2(
                error.contains(QStringLiteral("must be a JSON object")) && error.contains(kind), qPrintable(error));
        }
    }

    void streamingMethodsPrepareButGoOverGrpcOnly()
    {
        const SchemaLoadResult result = loadShapes();
        QString error;
        const auto watch
            = prepareGrpcCall(result.schema, { QStringLiteral("test.shapes.Shapes/Watch"), {}, {}, true }, &error);
        QVERIFY2(watch, qPrintable(error));
        QVERIFY(watch->method->server_streaming());
        for (TransportKind kind : { TransportKind::Http, TransportKind::Msgpack, TransportKind::InProcess }) {
            TransportOptions options;
            options.kind = kind;
            GrpcTarget target;
            target.address
                = kind == TransportKind::Http ? QStringLiteral("http://127.0.0.1:1/") : QStringLiteral("127.0.0.1:1");
            QVERIFY(!makeTransport(options, target, *watch, &error));
            QVERIFY2(error.contains(QStringLiteral("server streaming")) && error.contains(QStringLiteral("gRPC only")),
                qPrintable(error));
        }
        const auto call = prepareGrpcCall(result.schema,
            { QStringLiteral("test.shapes.Shapes/Get"), R"({"name":"sq"})", { QStringLiteral("blob=100") }, true },
            &error);
        QVERIFY2(call, qPrintable(error));
        QCOMPARE(QString::fromStdString(call->methodPath), QStringLiteral("/test.shapes.Shapes/Get"));
        QCOMPARE(call->requests.size(), size_t(1));
        QVERIFY(call->requests.front().size() > 100);
    }
};

QTEST_GUILESS_MAIN(TestSchema)
#include "tst_schema.moc"
