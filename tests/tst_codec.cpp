#include "codec/codec.h"
#include "codec/codecbench.h"
#include "codec/msgpackcodec.h"
#include "schema/schema.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTest>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/message.h>
#include <google/protobuf/text_format.h>
#include <google/protobuf/util/field_comparator.h>
#include <google/protobuf/util/message_differencer.h>

#include <limits>

using namespace rpcscope;
namespace gp = google::protobuf;

Q_DECLARE_METATYPE(rpcscope::Codec)

namespace {

/// Builds msgpack bytes from JSON for readable test inputs: null is nil, a string "bin:..." is a bin (of the Latin-1
/// bytes of the rest), an object key "int:N" is the integer N, whole numbers are integers and other numbers float64.
void packJson(msgpack::packer<msgpack::sbuffer> &packer, const QJsonValue &value)
{
    switch (value.type()) {
    case QJsonValue::Null:
    case QJsonValue::Undefined:
        packer.pack_nil();
        break;
    case QJsonValue::Bool:
        packer.pack(value.toBool());
        break;
    case QJsonValue::Double: {
        const double d = value.toDouble();
        // A whole number in int64's range is packed as one; converting one outside it is undefined (clang's UBSan
        // stops on 1e300 here).
        if (d >= -9223372036854775808.0 && d < 9223372036854775808.0
            && d == static_cast<double>(static_cast<int64_t>(d)))
            packer.pack_int64(static_cast<int64_t>(d));
        else
            packer.pack_double(d);
        break;
    }
    case QJsonValue::String: {
        const QString s = value.toString();
        if (s.startsWith(QLatin1String("bin:"))) {
            const QByteArray bytes = s.mid(4).toLatin1(); // "\u00ff" is the byte 0xff
            packer.pack_bin(static_cast<uint32_t>(bytes.size()));
            packer.pack_bin_body(bytes.data(), static_cast<uint32_t>(bytes.size()));
        } else {
            packer.pack(s.toStdString());
        }
        break;
    }
    case QJsonValue::Array: {
        const QJsonArray array = value.toArray();
        packer.pack_array(static_cast<uint32_t>(array.size()));
        for (const QJsonValue &item : array)
            packJson(packer, item);
        break;
    }
    case QJsonValue::Object: {
        const QJsonObject object = value.toObject();
        packer.pack_map(static_cast<uint32_t>(object.size()));
        for (auto it = object.begin(); it != object.end(); ++it) {
            if (it.key().startsWith(QLatin1String("int:")))
                packer.pack_int64(it.key().mid(4).toLongLong());
            else
                packer.pack(it.key().toStdString());
            packJson(packer, it.value());
        }
        break;
    }
    }
}

std::string msgpackFromJson(const char *json)
{
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(QByteArray(json), &error);
    if (error.error != QJsonParseError::NoError)
        qFatal("bad test JSON %s: %s", json, qPrintable(error.errorString()));
    msgpack::sbuffer buffer;
    msgpack::packer<msgpack::sbuffer> packer(buffer);
    packJson(packer, document.isObject() ? QJsonValue(document.object()) : QJsonValue(document.array()));
    return std::string(buffer.data(), buffer.size());
}

QByteArray mp(const char *json)
{
    return QByteArray::fromStdString(msgpackFromJson(json));
}

/// Equal as protobuf defines it, except that NaN equals NaN (the full message carries some).
bool sameMessage(const gp::Message &a, const gp::Message &b, std::string *report, bool unsetEqualsDefault = false)
{
    gp::util::DefaultFieldComparator comparator;
    comparator.set_treat_nan_as_equal(true);
    gp::util::MessageDifferencer differencer;
    differencer.set_field_comparator(&comparator);
    if (unsetEqualsDefault)
        differencer.set_message_field_comparison(gp::util::MessageDifferencer::EQUIVALENT);
    differencer.ReportDifferencesToString(report);
    return differencer.Compare(a, b);
}

} // namespace

class TestCodec : public QObject {
    Q_OBJECT

    const QString m_data = QStringLiteral(RPCSCOPE_TEST_DATA);
    Schema m_schema;
    std::string m_fullText; ///< alltypes.txtpb: every field set, with the extremes of each type
    const gp::Descriptor *m_allTypes = nullptr;
    const gp::Descriptor *m_recursive = nullptr;

    std::unique_ptr<gp::Message> fullMessage()
    {
        std::unique_ptr<gp::Message> message = m_schema.newMessage(m_allTypes);
        if (!gp::TextFormat::ParseFromString(m_fullText, message.get()))
            qFatal("alltypes.txtpb does not parse");
        return message;
    }

    /// The error of decoding @p bytes as msgpack into an AllTypes; empty when it decodes.
    std::string msgpackError(const std::string &bytes, bool ignoreUnknown = false)
    {
        std::unique_ptr<gp::Message> message = m_schema.newMessage(m_allTypes);
        std::string error;
        DecodeOptions options;
        options.ignoreUnknownFields = ignoreUnknown;
        if (decodeMessage(Codec::Msgpack, bytes, message.get(), &error, options))
            return std::string();
        return error.empty() ? std::string("(failed with no message)") : error;
    }

    std::unique_ptr<gp::Message> fromMsgpack(const char *json)
    {
        std::unique_ptr<gp::Message> message = m_schema.newMessage(m_allTypes);
        std::string error;
        if (!decodeMessage(Codec::Msgpack, msgpackFromJson(json), message.get(), &error))
            qWarning("decode failed: %s", error.c_str());
        return message;
    }

private Q_SLOTS:
    void initTestCase()
    {
        const SchemaLoadResult loaded = loadProtoFiles({ m_data + QStringLiteral("/alltypes.proto") });
        QVERIFY2(loaded.ok(), qPrintable(loaded.errorText()));
        m_schema = loaded.schema;
        m_allTypes = m_schema.findMessage(QStringLiteral("rpcscope.test.AllTypes"));
        m_recursive = m_schema.findMessage(QStringLiteral("rpcscope.test.Recursive"));
        QVERIFY(m_allTypes && m_recursive);
        QFile full(m_data + QStringLiteral("/alltypes.txtpb"));
        QVERIFY(full.open(QIODevice::ReadOnly));
        m_fullText = full.readAll().toStdString();
    }

    void names()
    {
        QCOMPARE(codecName(Codec::Protobuf), QStringLiteral("protobuf"));
        QCOMPARE(codecName(Codec::Msgpack), QStringLiteral("msgpack"));
        QCOMPARE(parseCodec(QStringLiteral("PB")), std::optional(Codec::Protobuf));
        QCOMPARE(parseCodec(QStringLiteral("proto")), std::optional(Codec::Protobuf));
        QCOMPARE(parseCodec(QStringLiteral("Json")), std::optional(Codec::Json));
        QCOMPARE(parseCodec(QStringLiteral("mp")), std::optional(Codec::Msgpack));
        QVERIFY(!parseCodec(QStringLiteral("xml")));
        QCOMPARE(QByteArray(codecContentType(Codec::Json)), QByteArray("application/json"));
    }

    void roundTrip_data()
    {
        QTest::addColumn<Codec>("codec");
        QTest::newRow("protobuf") << Codec::Protobuf;
        QTest::newRow("json") << Codec::Json;
        QTest::newRow("msgpack") << Codec::Msgpack;
    }

    void roundTrip()
    {
        QFETCH(Codec, codec);
        const std::unique_ptr<gp::Message> original = fullMessage();
        std::string bytes;
        std::string error;
        QVERIFY2(encodeMessage(codec, *original, &bytes, &error), error.c_str());
        QVERIFY(!bytes.empty());
        // Decoding into a message that already holds data must start from scratch.
        const std::unique_ptr<gp::Message> decoded = fullMessage();
        QVERIFY2(decodeMessage(codec, bytes, decoded.get(), &error), error.c_str());
        std::string differences;
        QVERIFY2(sameMessage(*original, *decoded, &differences), differences.c_str());
        // Presence survives: an `optional` set to its default is still set, an unset one still unset.
        const gp::Reflection *reflection = decoded->GetReflection();
        QVERIFY(reflection->HasField(*decoded, m_allTypes->FindFieldByName("opt_int32")));
        QVERIFY(!reflection->HasField(*decoded, m_allTypes->FindFieldByName("opt_double")));
    }

    void roundTripEmpty_data() { roundTrip_data(); }

    void roundTripEmpty()
    {
        QFETCH(Codec, codec);
        const std::unique_ptr<gp::Message> empty = m_schema.newMessage(m_allTypes);
        std::string bytes;
        std::string error;
        QVERIFY2(encodeMessage(codec, *empty, &bytes, &error), error.c_str());
        if (codec == Codec::Msgpack)
            QCOMPARE(bytes, std::string("\x80", 1));
        if (codec == Codec::Protobuf)
            QVERIFY(bytes.empty());
        const std::unique_ptr<gp::Message> decoded = fullMessage();
        QVERIFY2(decodeMessage(codec, bytes, decoded.get(), &error), error.c_str());
        std::string differences;
        QVERIFY2(sameMessage(*empty, *decoded, &differences), differences.c_str());
    }

    void roundTripGeneratedMessage_data() { roundTrip_data(); }

    void roundTripGeneratedMessage()
    {
        // A generated proto2 message (explicit presence everywhere, closed enums, nested repeated messages).
        QFETCH(Codec, codec);
        const gp::FileDescriptorSet &original = m_schema.fileDescriptorSet();
        QVERIFY(original.file_size() > 0);
        std::string bytes;
        std::string error;
        QVERIFY2(encodeMessage(codec, original, &bytes, &error), error.c_str());
        gp::FileDescriptorSet decoded;
        QVERIFY2(decodeMessage(codec, bytes, &decoded, &error), error.c_str());
        std::string differences;
        // JSON prints unset proto2 fields with their defaults (always_print_primitive_fields), which read back as
        // set: the values survive, the presence does not.
        QVERIFY2(sameMessage(original, decoded, &differences, codec == Codec::Json), differences.c_str());
    }

    void jsonUsesProtoNamesAndPrintsEveryField()
    {
        const std::unique_ptr<gp::Message> message = m_schema.newMessage(m_allTypes);
        message->GetReflection()->SetInt32(message.get(), m_allTypes->FindFieldByName("f_int32"), 5);
        std::string json;
        std::string error;
        QVERIFY2(encodeMessage(Codec::Json, *message, &json, &error), error.c_str());
        const QJsonObject object = QJsonDocument::fromJson(QByteArray::fromStdString(json)).object();
        QCOMPARE(object.value(QStringLiteral("f_int32")).toInt(), 5);
        QVERIFY(object.contains(QStringLiteral("f_uint32"))); // default-valued, printed anyway
        QVERIFY(object.contains(QStringLiteral("r_string")));
        QVERIFY(!object.contains(QStringLiteral("fInt32")));
    }

    void msgpackShape()
    {
        const std::unique_ptr<gp::Message> message = fullMessage();
        std::string bytes;
        std::string error;
        QVERIFY2(encodeMessage(Codec::Msgpack, *message, &bytes, &error), error.c_str());
        const msgpack::object_handle handle = msgpack::unpack(bytes.data(), bytes.size());
        const msgpack::object &root = handle.get();
        QCOMPARE(root.type, msgpack::type::MAP);
        QMap<QString, msgpack::object> fields;
        for (uint32_t i = 0; i < root.via.map.size; ++i) {
            const msgpack::object_kv &kv = root.via.map.ptr[i];
            QCOMPARE(kv.key.type, msgpack::type::STR);
            fields.insert(QString::fromStdString(kv.key.as<std::string>()), kv.val);
        }
        // Keys are the .proto names; only present fields are there (opt_double is unset, one oneof member set).
        QVERIFY(fields.contains(QStringLiteral("f_int32")));
        QVERIFY(fields.contains(QStringLiteral("opt_int32")));
        QVERIFY(!fields.contains(QStringLiteral("fInt32")));
        QVERIFY(!fields.contains(QStringLiteral("opt_double")));
        QVERIFY(!fields.contains(QStringLiteral("o_string")));
        QCOMPARE(fields.value(QStringLiteral("f_bytes")).type, msgpack::type::BIN);
        QCOMPARE(fields.value(QStringLiteral("f_string")).type, msgpack::type::STR);
        QCOMPARE(fields.value(QStringLiteral("f_enum")).type, msgpack::type::NEGATIVE_INTEGER);
        QCOMPARE(fields.value(QStringLiteral("f_enum")).as<int>(), -5);
        QCOMPARE(fields.value(QStringLiteral("f_float")).type, msgpack::type::FLOAT32);
        QCOMPARE(fields.value(QStringLiteral("f_double")).type, msgpack::type::FLOAT64);
        QCOMPARE(fields.value(QStringLiteral("f_uint64")).as<uint64_t>(), std::numeric_limits<uint64_t>::max());
        QCOMPARE(fields.value(QStringLiteral("f_nested")).type, msgpack::type::MAP);
        QCOMPARE(fields.value(QStringLiteral("r_int32")).type, msgpack::type::ARRAY);
        QCOMPARE(fields.value(QStringLiteral("r_bytes")).via.array.ptr[1].type, msgpack::type::BIN);
        const msgpack::object enums = fields.value(QStringLiteral("r_enum"));
        QCOMPARE(enums.via.array.size, 3u);
        QCOMPARE(enums.via.array.ptr[0].as<int>(), 1);
        const msgpack::object map = fields.value(QStringLiteral("m_int32_nested"));
        QCOMPARE(map.type, msgpack::type::MAP);
        QCOMPARE(map.via.map.size, 2u);
        QCOMPARE(map.via.map.ptr[0].key.type, msgpack::type::NEGATIVE_INTEGER);
        QCOMPARE(map.via.map.ptr[0].val.type, msgpack::type::MAP);
    }

    void msgpackSmallestIntegers()
    {
        const std::unique_ptr<gp::Message> message = m_schema.newMessage(m_allTypes);
        const gp::Reflection *reflection = message->GetReflection();
        reflection->SetInt64(message.get(), m_allTypes->FindFieldByName("f_sfixed64"), 1);
        std::string bytes;
        std::string error;
        QVERIFY(encodeMessage(Codec::Msgpack, *message, &bytes, &error));
        QCOMPARE(bytes,
            std::string("\x81\xaa"
                        "f_sfixed64\x01"));
        reflection->SetInt64(message.get(), m_allTypes->FindFieldByName("f_sfixed64"), -200);
        QVERIFY(encodeMessage(Codec::Msgpack, *message, &bytes, &error));
        QCOMPARE(bytes,
            std::string("\x81\xaa"
                        "f_sfixed64\xd1\xff\x38")); // int16
    }

    void msgpackPositional()
    {
        const std::unique_ptr<gp::Message> original = fullMessage();
        std::string bytes;
        StringSink sink { &bytes };
        MsgpackPacker packer(sink);
        packMessageFields(packer, *original);
        const msgpack::object_handle handle = msgpack::unpack(bytes.data(), bytes.size());
        QCOMPARE(handle.get().type, msgpack::type::ARRAY);
        QCOMPARE(handle.get().via.array.size, static_cast<uint32_t>(m_allTypes->field_count()));
        // Unset fields with presence are nil (opt_double, the unset oneof members); the others have a value.
        const int optDouble = m_allTypes->FindFieldByName("opt_double")->index();
        QCOMPARE(handle.get().via.array.ptr[optDouble].type, msgpack::type::NIL);
        const int uint32Index = m_allTypes->FindFieldByName("f_uint32")->index();
        QCOMPARE(handle.get().via.array.ptr[uint32Index].as<uint32_t>(), 4294967295u);

        const std::unique_ptr<gp::Message> decoded = m_schema.newMessage(m_allTypes);
        std::string error;
        QVERIFY2(unpackMessageFields(handle.get(), decoded.get(), &error), error.c_str());
        std::string differences;
        QVERIFY2(sameMessage(*original, *decoded, &differences), differences.c_str());

        // Fewer values leave the rest at their defaults.
        const std::string two = msgpackFromJson("[1.5, 2]");
        const msgpack::object_handle short_ = msgpack::unpack(two.data(), two.size());
        const std::unique_ptr<gp::Message> partial = m_schema.newMessage(m_allTypes);
        QVERIFY2(unpackMessageFields(short_.get(), partial.get(), &error), error.c_str());
        QCOMPARE(partial->GetReflection()->GetFloat(*partial, m_allTypes->FindFieldByName("f_float")), 2.0f);

        // One field on its own, as packFieldValue writes it.
        std::string one;
        StringSink oneSink { &one };
        MsgpackPacker onePacker(oneSink);
        const gp::FieldDescriptor *nested = m_allTypes->FindFieldByName("r_nested");
        packFieldValue(onePacker, *original, nested);
        const msgpack::object_handle value = msgpack::unpack(one.data(), one.size());
        QVERIFY2(unpackFieldValue(value.get(), partial.get(), nested, &error), error.c_str());
        QCOMPARE(partial->GetReflection()->FieldSize(*partial, nested), 3);
    }

    void msgpackLenientInputs()
    {
        const auto m = fromMsgpack(R"({"fInt32": 5, "f_float": 3, "f_double": -2, "f_bytes": "text", )"
                                   R"("f_string": "bin:raw", "f_enum": "COLOR_GREEN", "r_enum": [1, "COLOR_RED", 9], )"
                                   R"("f_nested": null, "f_uint64": null, "m_int32_nested": {"int:-4": {"id": 4}}, )"
                                   R"("m_bool_string": {}})");
        const gp::Reflection *r = m->GetReflection();
        QCOMPARE(r->GetInt32(*m, m_allTypes->FindFieldByName("f_int32")), 5); // json_name accepted
        QCOMPARE(r->GetFloat(*m, m_allTypes->FindFieldByName("f_float")), 3.0f); // an int into a float
        QCOMPARE(r->GetDouble(*m, m_allTypes->FindFieldByName("f_double")), -2.0);
        QCOMPARE(r->GetString(*m, m_allTypes->FindFieldByName("f_bytes")), std::string("text"));
        QCOMPARE(r->GetString(*m, m_allTypes->FindFieldByName("f_string")), std::string("raw"));
        QCOMPARE(r->GetEnumValue(*m, m_allTypes->FindFieldByName("f_enum")), 2);
        QCOMPARE(r->GetRepeatedEnumValue(*m, m_allTypes->FindFieldByName("r_enum"), 2), 9); // open enum
        QVERIFY(!r->HasField(*m, m_allTypes->FindFieldByName("f_nested"))); // nil leaves it unset
        QCOMPARE(r->FieldSize(*m, m_allTypes->FindFieldByName("m_int32_nested")), 1);
    }

    void msgpackErrors_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("expected");
        QTest::newRow("wrong type, nested")
            << mp(R"({"f_nested": {"score": "x"}})") << QStringLiteral("f_nested.score: expected a number, got str");
        QTest::newRow("wrong type, element") << mp(R"({"r_nested": [{}, {}, {"score": "high"}]})")
                                             << QStringLiteral("r_nested[2].score: expected a number, got str");
        QTest::newRow("wrong type, number element")
            << mp(R"({"r_int64": [1, 2, 3.5]})") << QStringLiteral("r_int64[2]: expected an integer, got float64");
        QTest::newRow("wrong type, map value") << mp(R"({"m_int32_nested": {"int:5": {"id": "x"}}})")
                                               << QStringLiteral("m_int32_nested[5].id: expected an integer, got str");
        QTest::newRow("wrong type, map key") << mp(R"({"m_string_int64": {"int:5": 1}})")
                                             << QStringLiteral("m_string_int64[5]: expected str or bin, got int");
        QTest::newRow("array for a message") << mp(
            R"({"f_nested": [1]})") << QStringLiteral("f_nested: expected a map for rpcscope.test.Nested, got array");
        QTest::newRow("scalar for a repeated")
            << mp(R"({"r_string": "a"})") << QStringLiteral("r_string: expected an array, got str");
        QTest::newRow("int32 overflow") << mp(R"({"f_int32": 2147483648})")
                                        << QStringLiteral("f_int32: 2147483648 is out of range for int32");
        QTest::newRow("int32 underflow") << mp(R"({"f_sfixed32": -2147483649})")
                                         << QStringLiteral("f_sfixed32: -2147483649 is out of range for int32");
        QTest::newRow("uint32 overflow") << mp(R"({"r_uint32": [4294967296]})")
                                         << QStringLiteral("r_uint32[0]: 4294967296 is out of range for uint32");
        QTest::newRow("negative into uint32")
            << mp(R"({"f_uint32": -1})") << QStringLiteral("f_uint32: negative value -1 for uint32");
        QTest::newRow("negative into uint64")
            << mp(R"({"f_fixed64": -7})") << QStringLiteral("f_fixed64: negative value -7 for uint64");
        QTest::newRow("float overflow") << mp(R"({"f_float": 1e300})")
                                        << QStringLiteral("f_float: 1.0000000000000001e+300 is out of range for float");
        QTest::newRow("bool from int") << mp(R"({"f_bool": 1})") << QStringLiteral("f_bool: expected a bool, got int");
        QTest::newRow("unknown enum name")
            << mp(R"({"opt_enum": "PURPLE"})")
            << QStringLiteral("opt_enum: \"PURPLE\" is not a value of rpcscope.test.Color");
        QTest::newRow("unknown key") << mp(R"({"f_int32": 1, "nope": 2})")
                                     << QStringLiteral("unknown field \"nope\" in rpcscope.test.AllTypes");
        QTest::newRow("unknown nested key") << mp(
            R"({"f_nested": {"idx": 2}})") << QStringLiteral("f_nested: unknown field \"idx\" in rpcscope.test.Nested");
        QTest::newRow("non-string key") << mp(R"({"int:1": 2})")
                                        << QStringLiteral("a key of rpcscope.test.AllTypes is int, expected str");
        QTest::newRow("not a map") << mp("[1, 2]")
                                   << QStringLiteral("expected a map for rpcscope.test.AllTypes, got array");
        QTest::newRow("invalid UTF-8") << mp("{\"f_string\": \"bin:ok \\u00ff\"}")
                                       << QStringLiteral("f_string: invalid UTF-8 in a string field");
        QTest::newRow("invalid UTF-8, element") << mp("{\"r_string\": [\"a\", \"bin:\\u00c0\\u0080\"]}")
                                                << QStringLiteral("r_string[1]: invalid UTF-8 in a string field");
        QTest::newRow("empty") << QByteArray() << QStringLiteral("msgpack: no data");
        QTest::newRow("forged array length")
            << QByteArray("\x81\xa7r_int32\xdd\xff\xff\xff\xff") << QStringLiteral("msgpack: invalid data");
        QTest::newRow("deep arrays") << QByteArray(100000, '\x91') + '\xc0'
                                     << QStringLiteral("msgpack: containers nested too deep");
        QTest::newRow("invalid byte") << QByteArray("\xc1") << QStringLiteral("msgpack: invalid data");
    }

    void msgpackErrors()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, expected);
        const QString error = QString::fromStdString(msgpackError(bytes.toStdString()));
        QVERIFY2(error.startsWith(expected), qPrintable(QStringLiteral("got: ") + error));
    }

    void msgpackUnknownKeysIgnoredOnRequest()
    {
        const std::string bytes = msgpackFromJson(R"({"f_int32": 1, "nope": {"deep": [1, 2]}, "f_string": "s"})");
        QVERIFY(!msgpackError(bytes).empty());
        QCOMPARE(msgpackError(bytes, true), std::string());
    }

    void msgpackTruncatedAndTrailing()
    {
        std::string bytes;
        std::string error;
        QVERIFY(encodeMessage(Codec::Msgpack, *fullMessage(), &bytes, &error));
        // Every cut short of the whole is refused, without an exception escaping.
        for (size_t size = 1; size < bytes.size(); ++size) {
            const std::string message = msgpackError(bytes.substr(0, size));
            QVERIFY2(!message.empty(), qPrintable(QStringLiteral("cut at %1 decoded").arg(size)));
        }
        QVERIFY(QString::fromStdString(msgpackError(bytes.substr(0, bytes.size() - 1)))
                    .startsWith(QStringLiteral("msgpack: truncated")));
        const QString trailing = QString::fromStdString(msgpackError(bytes + '\x00'));
        QVERIFY2(trailing.startsWith(QStringLiteral("msgpack: 1 byte(s) after the value")), qPrintable(trailing));
        QCOMPARE(msgpackError(bytes), std::string());
    }

    void msgpackDepthLimit()
    {
        auto nested = [](int depth) {
            std::string bytes;
            for (int i = 0; i < depth - 1; ++i)
                bytes += "\x81\xa5"
                         "child";
            bytes += '\x80';
            return bytes;
        };
        for (const auto &[depth, ok] : { std::pair(64, true), std::pair(65, false), std::pair(100, false) }) {
            const std::unique_ptr<gp::Message> message = m_schema.newMessage(m_recursive);
            std::string error;
            QCOMPARE(decodeMessage(Codec::Msgpack, nested(depth), message.get(), &error), ok);
            if (!ok)
                QVERIFY2(error.find("messages nested more than 64 deep") != std::string::npos, error.c_str());
        }
    }

    void protobufGarbage()
    {
        const std::unique_ptr<gp::Message> message = m_schema.newMessage(m_allTypes);
        std::string error;
        QVERIFY(!decodeMessage(Codec::Protobuf, std::string("\xff\xff\xff\xff\xff", 5), message.get(), &error));
        QVERIFY2(error.find("rpcscope.test.AllTypes") != std::string::npos, error.c_str());
        // A length prefix running past the end.
        QVERIFY(!decodeMessage(Codec::Protobuf,
            std::string("\x72\x10"
                        "ab",
                4),
            message.get(), &error));
    }

    void jsonErrors()
    {
        const std::unique_ptr<gp::Message> message = m_schema.newMessage(m_allTypes);
        std::string error;
        QVERIFY(!decodeMessage(Codec::Json, R"({"f_int32": "abc"})", message.get(), &error));
        QVERIFY2(error.find("f_int32") != std::string::npos, error.c_str());
        QVERIFY(!decodeMessage(Codec::Json, R"({"f_nested": {"score": [1]}})", message.get(), &error));
        QVERIFY2(error.find("score") != std::string::npos, error.c_str());
        QVERIFY(!decodeMessage(Codec::Json, R"({"nope": 1})", message.get(), &error));
        QVERIFY2(error.find("nope") != std::string::npos, error.c_str());
        DecodeOptions lenient;
        lenient.ignoreUnknownFields = true;
        QVERIFY2(
            decodeMessage(Codec::Json, R"({"nope": 1, "fInt32": 4})", message.get(), &error, lenient), error.c_str());
        QCOMPARE(message->GetReflection()->GetInt32(*message, m_allTypes->FindFieldByName("f_int32")), 4);
        QVERIFY(!decodeMessage(Codec::Json, "{", message.get(), &error));
    }

    void benchmarkIsSane()
    {
        const std::unique_ptr<gp::Message> message = fullMessage();
        const std::vector<Codec> codecs { Codec::Protobuf, Codec::Json, Codec::Msgpack };
        const CodecBenchResult result = benchmarkCodecs(*message, codecs, std::chrono::milliseconds(30));
        QCOMPARE(result.floorBytes, message->ByteSizeLong());
        QVERIFY(result.memcpyNs > 0);
        QVERIFY(result.memcpyMBps > 0);
        QCOMPARE(result.codecs.size(), codecs.size());
        for (size_t i = 0; i < codecs.size(); ++i) {
            const CodecTiming &timing = result.codecs[i];
            QCOMPARE(timing.codec, codecs[i]);
            QVERIFY2(timing.error.empty(), timing.error.c_str());
            std::string bytes;
            QVERIFY(encodeMessage(timing.codec, *message, &bytes, nullptr));
            QCOMPARE(timing.encodedBytes, bytes.size());
            QVERIFY(timing.encodeNs > 0);
            QVERIFY(timing.decodeNs > 0);
            QVERIFY(timing.encodeMBps > 0);
            QVERIFY(timing.decodeMBps > 0);
        }
        QCOMPARE(result.codecs[0].encodedBytes, result.floorBytes);
    }

    void cliCodecs()
    {
        QProcess process;
        process.start(QStringLiteral(RPCSCOPE_CLI),
            { QStringLiteral("codecs"), QStringLiteral("--call"), QStringLiteral("rpcscope.bench.v1.Bench/Sum"),
                QStringLiteral("--fill"), QStringLiteral("nums=100"), QStringLiteral("--time"), QStringLiteral("20ms"),
                QStringLiteral("--format"), QStringLiteral("csv") });
        QVERIFY(process.waitForFinished(30000));
        QCOMPARE(process.exitCode(), 0);
        const QStringList lines
            = QString::fromUtf8(process.readAllStandardOutput()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 5);
        QVERIFY2(lines[0].startsWith(QStringLiteral("codec,bytes,encode_ns,decode_ns")), qPrintable(lines[0]));
        QVERIFY(lines[1].startsWith(QStringLiteral("protobuf,")));
        QVERIFY(lines[2].startsWith(QStringLiteral("json,")));
        QVERIFY(lines[3].startsWith(QStringLiteral("msgpack,")));
        QVERIFY(lines[4].startsWith(QStringLiteral("memcpy,")));

        QProcess bad;
        bad.start(QStringLiteral(RPCSCOPE_CLI),
            { QStringLiteral("codecs"), QStringLiteral("--call"), QStringLiteral("rpcscope.bench.v1.Bench/Sum"),
                QStringLiteral("--codecs"), QStringLiteral("json,xml") });
        QVERIFY(bad.waitForFinished(30000));
        QCOMPARE(bad.exitCode(), 2);
        const QString err = QString::fromUtf8(bad.readAllStandardError());
        QVERIFY2(err.contains(QStringLiteral("--codecs")) && err.contains(QStringLiteral("xml")), qPrintable(err));

        // --response times the reply type: a request's field in --fill is named, with the fields it does have.
        QProcess response;
        response.start(QStringLiteral(RPCSCOPE_CLI),
            { QStringLiteral("codecs"), QStringLiteral("--call"), QStringLiteral("rpcscope.bench.v1.Bench/List"),
                QStringLiteral("--response"), QStringLiteral("--fill"), QStringLiteral("count=10") });
        QVERIFY(response.waitForFinished(30000));
        QCOMPARE(response.exitCode(), 2);
        const QString why = QString::fromUtf8(response.readAllStandardError());
        QVERIFY2(why.contains(QStringLiteral("--fill count=10: "))
                && why.contains(
                    QStringLiteral("the response, rpcscope.bench.v1.ListResponse, whose fields are: items")),
            qPrintable(why));
        QProcess filled;
        filled.start(QStringLiteral(RPCSCOPE_CLI),
            { QStringLiteral("codecs"), QStringLiteral("--call"), QStringLiteral("rpcscope.bench.v1.Bench/List"),
                QStringLiteral("--response"), QStringLiteral("--fill"), QStringLiteral("items=100"),
                QStringLiteral("--time"), QStringLiteral("20ms") });
        QVERIFY(filled.waitForFinished(30000));
        QVERIFY2(filled.exitCode() == 0, filled.readAllStandardError().constData());
    }
};

QTEST_GUILESS_MAIN(TestCodec)
#include "tst_codec.moc"
