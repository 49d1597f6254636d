#include "extensionjson.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace gp = google::protobuf;
using Field = gp::FieldDescriptor;

namespace rpcscope {

namespace {

bool isExtensionKey(const QString &key)
{
    return key.size() > 2 && key.startsWith(QLatin1Char('[')) && key.endsWith(QLatin1Char(']'));
}

bool containsExtensionKey(const QJsonValue &value)
{
    if (value.isObject()) {
        const QJsonObject object = value.toObject();
        for (auto it = object.begin(); it != object.end(); ++it) {
            if (isExtensionKey(it.key()) || containsExtensionKey(it.value()))
                return true;
        }
    } else if (value.isArray()) {
        const QJsonArray array = value.toArray();
        for (const auto &element : array) {
            if (containsExtensionKey(element))
                return true;
        }
    }
    return false;
}

QString joinPath(const QString &path, const QString &key)
{
    return path.isEmpty() ? key : path + QLatin1Char('.') + key;
}

QString indexed(const QString &path, const QString &index)
{
    return path + QLatin1Char('[') + index + QLatin1Char(']');
}

QString kindOf(const QJsonValue &value)
{
    switch (value.type()) {
    case QJsonValue::Bool:
        return QStringLiteral("a boolean");
    case QJsonValue::Double:
        return QStringLiteral("a number");
    case QJsonValue::String:
        return QStringLiteral("a string");
    case QJsonValue::Array:
        return QStringLiteral("an array");
    case QJsonValue::Object:
        return QStringLiteral("an object");
    default:
        return QStringLiteral("null");
    }
}

/// An integer of type T from a JSON number or a string of digits (the proto3 JSON mapping allows both); an empty
/// string or the reason it is not one.
template<typename T> QString toInteger(const QJsonValue &value, T *out)
{
    constexpr T lowest = std::numeric_limits<T>::lowest();
    constexpr T highest = std::numeric_limits<T>::max();
    const QString range = QStringLiteral("out of range (%1 to %2)").arg(lowest).arg(highest);
    if (value.isString()) {
        const QString text = value.toString().trimmed();
        bool ok = false;
        if constexpr (std::is_signed_v<T>) {
            const qlonglong v = text.toLongLong(&ok);
            if (!ok)
                return QStringLiteral("\"%1\" is not an integer").arg(text);
            if (v < lowest || v > highest)
                return QStringLiteral("%1 is %2").arg(text, range);
            *out = static_cast<T>(v);
        } else {
            const qulonglong v = text.toULongLong(&ok);
            if (!ok)
                return QStringLiteral("\"%1\" is not an integer of 0 or more").arg(text);
            if (v > highest)
                return QStringLiteral("%1 is %2").arg(text, range);
            *out = static_cast<T>(v);
        }
        return {};
    }
    if (!value.isDouble())
        return QStringLiteral("expected an integer, got %1").arg(kindOf(value));
    const double d = value.toDouble();
    if (!std::isfinite(d) || std::floor(d) != d)
        return QStringLiteral("%1 is not an integer").arg(d);
    // 2^63 and 2^64 are exact doubles: compare against them, not against max() rounded up.
    constexpr double twoTo63 = 9223372036854775808.0;
    if (d < static_cast<double>(lowest) || (std::is_signed_v<T> ? d >= twoTo63 : d >= 2 * twoTo63)
        || (sizeof(T) < 8 && d > static_cast<double>(highest)))
        return QStringLiteral("%1 is %2").arg(d, 0, 'g', 17).arg(range);
    if (!std::is_signed_v<T> && d >= twoTo63)
        *out = static_cast<T>(d); // above qint64: a double, exact since it is integral
    else
        *out = static_cast<T>(value.toInteger()); // exact for integers Qt kept as integers
    return {};
}

QString toDouble(const QJsonValue &value, double *out)
{
    if (value.isDouble()) {
        *out = value.toDouble();
        return {};
    }
    if (!value.isString())
        return QStringLiteral("expected a number, got %1").arg(kindOf(value));
    const QString text = value.toString();
    if (text == QLatin1String("NaN"))
        *out = std::numeric_limits<double>::quiet_NaN();
    else if (text == QLatin1String("Infinity"))
        *out = std::numeric_limits<double>::infinity();
    else if (text == QLatin1String("-Infinity"))
        *out = -std::numeric_limits<double>::infinity();
    else {
        bool ok = false;
        *out = text.trimmed().toDouble(&ok);
        if (!ok)
            return QStringLiteral("\"%1\" is not a number").arg(text);
    }
    return {};
}

/// Sets (or, for a repeated field, appends) a non-message value; an empty string or the reason.
QString setScalar(gp::Message *message, const Field *field, const QJsonValue &value)
{
    const gp::Reflection *r = message->GetReflection();
    const bool repeated = field->is_repeated();
    QString error;
    switch (field->cpp_type()) {
    case Field::CPPTYPE_INT32: {
        int32_t v = 0;
        if ((error = toInteger(value, &v)).isEmpty())
            repeated ? r->AddInt32(message, field, v) : r->SetInt32(message, field, v);
        break;
    }
    case Field::CPPTYPE_INT64: {
        int64_t v = 0;
        if ((error = toInteger(value, &v)).isEmpty())
            repeated ? r->AddInt64(message, field, v) : r->SetInt64(message, field, v);
        break;
    }
    case Field::CPPTYPE_UINT32: {
        uint32_t v = 0;
        if ((error = toInteger(value, &v)).isEmpty())
            repeated ? r->AddUInt32(message, field, v) : r->SetUInt32(message, field, v);
        break;
    }
    case Field::CPPTYPE_UINT64: {
        uint64_t v = 0;
        if ((error = toInteger(value, &v)).isEmpty())
            repeated ? r->AddUInt64(message, field, v) : r->SetUInt64(message, field, v);
        break;
    }
    case Field::CPPTYPE_DOUBLE: {
        double v = 0;
        if ((error = toDouble(value, &v)).isEmpty())
            repeated ? r->AddDouble(message, field, v) : r->SetDouble(message, field, v);
        break;
    }
    case Field::CPPTYPE_FLOAT: {
        double v = 0;
        if ((error = toDouble(value, &v)).isEmpty()) {
            if (std::isfinite(v) && std::abs(v) > std::numeric_limits<float>::max())
                return QStringLiteral("%1 is out of range for a float").arg(v);
            const auto f = static_cast<float>(v);
            repeated ? r->AddFloat(message, field, f) : r->SetFloat(message, field, f);
        }
        break;
    }
    case Field::CPPTYPE_BOOL:
        if (!value.isBool())
            return QStringLiteral("expected true or false, got %1").arg(kindOf(value));
        repeated ? r->AddBool(message, field, value.toBool()) : r->SetBool(message, field, value.toBool());
        break;
    case Field::CPPTYPE_STRING: {
        if (!value.isString())
            return QStringLiteral("expected a string, got %1").arg(kindOf(value));
        std::string v;
        if (field->type() == Field::TYPE_BYTES) {
            const QByteArray text = value.toString().toLatin1();
            auto decoded = QByteArray::fromBase64Encoding(text, QByteArray::AbortOnBase64DecodingErrors);
            if (!decoded)
                decoded = QByteArray::fromBase64Encoding(
                    text, QByteArray::Base64UrlEncoding | QByteArray::AbortOnBase64DecodingErrors);
            if (!decoded)
                return QStringLiteral("bytes must be base64");
            v = decoded.decoded.toStdString();
        } else {
            v = value.toString().toStdString();
        }
        repeated ? r->AddString(message, field, std::move(v)) : r->SetString(message, field, std::move(v));
        break;
    }
    case Field::CPPTYPE_ENUM: {
        const gp::EnumDescriptor *type = field->enum_type();
        int number = 0;
        if (value.isString()) {
            const gp::EnumValueDescriptor *named = type->FindValueByName(value.toString().toStdString());
            if (!named)
                return QStringLiteral("\"%1\" is not a value of %2")
                    .arg(value.toString(), QString::fromStdString(type->full_name()));
            number = named->number();
        } else {
            if (!(error = toInteger(value, &number)).isEmpty())
                return error;
            // proto3 enums are open (any number); proto2 enums are closed.
            if (!type->FindValueByNumber(number) && type->file()->syntax() != gp::FileDescriptor::SYNTAX_PROTO3)
                return QStringLiteral("%1 is not a value of %2")
                    .arg(number)
                    .arg(QString::fromStdString(type->full_name()));
        }
        repeated ? r->AddEnumValue(message, field, number) : r->SetEnumValue(message, field, number);
        break;
    }
    case Field::CPPTYPE_MESSAGE:
        return QStringLiteral("expected a message"); // handled by setValue
    }
    return error;
}

QString parseInto(const QJsonObject &object, gp::Message *message, const QString &path, bool ignoreUnknown);

/// Sets (or appends) one value of @p field, a message or not; @p where names it in errors.
QString setValue(
    gp::Message *message, const Field *field, const QJsonValue &value, const QString &where, bool ignoreUnknown)
{
    if (field->cpp_type() != Field::CPPTYPE_MESSAGE) {
        const QString error = setScalar(message, field, value);
        return error.isEmpty() ? QString() : where + QStringLiteral(": ") + error;
    }
    if (!value.isObject())
        return where + QStringLiteral(": expected an object, got ") + kindOf(value);
    const gp::Reflection *r = message->GetReflection();
    gp::Message *child = field->is_repeated() ? r->AddMessage(message, field) : r->MutableMessage(message, field);
    return parseInto(value.toObject(), child, where, ignoreUnknown);
}

/// The JSON key of a map entry as the map's key type: integer and bool keys are quoted in JSON.
QString setMapKey(gp::Message *entry, const Field *keyField, const QString &key)
{
    if (keyField->cpp_type() == Field::CPPTYPE_BOOL) {
        if (key != QLatin1String("true") && key != QLatin1String("false"))
            return QStringLiteral("\"%1\" is not a bool key (true or false)").arg(key);
        entry->GetReflection()->SetBool(entry, keyField, key == QLatin1String("true"));
        return {};
    }
    return setScalar(entry, keyField, QJsonValue(key));
}

QString setField(
    gp::Message *message, const Field *field, const QJsonValue &value, const QString &where, bool ignoreUnknown)
{
    if (value.isNull())
        return {}; // null is the default, as in protobuf's JSON
    const gp::Reflection *r = message->GetReflection();
    if (field->is_map()) {
        if (!value.isObject())
            return where + QStringLiteral(": expected an object (a map), got ") + kindOf(value);
        const QJsonObject map = value.toObject();
        for (auto it = map.begin(); it != map.end(); ++it) {
            gp::Message *entry = r->AddMessage(message, field);
            const gp::Descriptor *entryType = entry->GetDescriptor();
            const QString at = indexed(where, it.key());
            if (const QString error = setMapKey(entry, entryType->map_key(), it.key()); !error.isEmpty())
                return at + QStringLiteral(": ") + error;
            const Field *valueField = entryType->map_value();
            if (QString error = setValue(entry, valueField, it.value(), at, ignoreUnknown); !error.isEmpty())
                return error;
        }
        return {};
    }
    if (field->is_repeated()) {
        if (!value.isArray())
            return where + QStringLiteral(": expected an array, got ") + kindOf(value);
        const QJsonArray array = value.toArray();
        for (qsizetype i = 0; i < array.size(); ++i) {
            if (QString error
                = setValue(message, field, array.at(i), indexed(where, QString::number(i)), ignoreUnknown);
                !error.isEmpty())
                return error;
        }
        return {};
    }
    return setValue(message, field, value, where, ignoreUnknown);
}

/// Parses @p object into @p message: plain keys through protobuf's parser, then what protobuf cannot read (extension
/// keys, and message fields with extension keys inside) field by field.
QString parseInto(const QJsonObject &object, gp::Message *message, const QString &path, bool ignoreUnknown)
{
    const gp::Descriptor *type = message->GetDescriptor();
    const gp::DescriptorPool *pool = type->file()->pool();
    struct Later {
        const Field *field;
        QString key;
        QJsonValue value;
    };
    QJsonObject plain;
    std::vector<Later> later;
    for (auto it = object.begin(); it != object.end(); ++it) {
        const QString &key = it.key();
        if (isExtensionKey(key)) {
            const std::string name = key.mid(1, key.size() - 2).toStdString();
            const Field *extension = pool->FindExtensionByName(name);
            if (!extension)
                extension = pool->FindExtensionByPrintableName(type, name);
            if (!extension) {
                if (ignoreUnknown)
                    continue;
                return joinPath(path, key) + QStringLiteral(": no extension of that name in the schema");
            }
            if (extension->containing_type() != type)
                return joinPath(path, key)
                    + QStringLiteral(": extends %1, not %2")
                          .arg(QString::fromStdString(extension->containing_type()->full_name()),
                              QString::fromStdString(type->full_name()));
            later.push_back({ extension, key, it.value() });
            continue;
        }
        const std::string name = key.toStdString();
        const Field *field = type->FindFieldByName(name);
        for (int i = 0; !field && i < type->field_count(); ++i) {
            if (type->field(i)->json_name() == name)
                field = type->field(i);
        }
        if (field && field->cpp_type() == Field::CPPTYPE_MESSAGE && containsExtensionKey(it.value()))
            later.push_back({ field, key, it.value() });
        else
            plain.insert(key, it.value());
    }
    message->Clear();
    if (!plain.isEmpty()) {
        gp::util::JsonParseOptions options;
        options.ignore_unknown_fields = ignoreUnknown;
        const QByteArray text = QJsonDocument(plain).toJson(QJsonDocument::Compact);
        const auto status = gp::util::JsonStringToMessage(
            gp::StringPiece(text.constData(), static_cast<size_t>(text.size())), message, options);
        if (!status.ok()) {
            const QString reason = QString::fromStdString(std::string(status.message()));
            return path.isEmpty() ? reason : path + QStringLiteral(": ") + reason;
        }
    }
    for (const Later &item : later) {
        if (QString error = setField(message, item.field, item.value, joinPath(path, item.key), ignoreUnknown);
            !error.isEmpty())
            return error;
    }
    return {};
}

QJsonValue messageValue(const gp::Message &message, const gp::util::JsonPrintOptions &options);

QJsonValue floatingValue(double v)
{
    if (std::isnan(v))
        return QStringLiteral("NaN");
    if (std::isinf(v))
        return v > 0 ? QStringLiteral("Infinity") : QStringLiteral("-Infinity");
    return v;
}

/// One value of @p field (element @p index of a repeated field, or -1) in the proto3 JSON mapping.
QJsonValue fieldValue(
    const gp::Message &message, const Field *field, int index, const gp::util::JsonPrintOptions &options)
{
    const gp::Reflection *r = message.GetReflection();
    const bool one = index < 0;
    switch (field->cpp_type()) {
    case Field::CPPTYPE_INT32:
        return one ? r->GetInt32(message, field) : r->GetRepeatedInt32(message, field, index);
    case Field::CPPTYPE_INT64:
        return QString::number(one ? r->GetInt64(message, field) : r->GetRepeatedInt64(message, field, index));
    case Field::CPPTYPE_UINT32:
        return static_cast<qint64>(one ? r->GetUInt32(message, field) : r->GetRepeatedUInt32(message, field, index));
    case Field::CPPTYPE_UINT64:
        return QString::number(one ? r->GetUInt64(message, field) : r->GetRepeatedUInt64(message, field, index));
    case Field::CPPTYPE_DOUBLE:
        return floatingValue(one ? r->GetDouble(message, field) : r->GetRepeatedDouble(message, field, index));
    case Field::CPPTYPE_FLOAT: {
        const float f = one ? r->GetFloat(message, field) : r->GetRepeatedFloat(message, field, index);
        if (!std::isfinite(f))
            return floatingValue(f);
        // The shortest text that reads back as this float ("0.1", not 0.10000000149011612).
        char text[32];
        const auto end = std::to_chars(text, text + sizeof text, f).ptr;
        return std::stod(std::string(text, end));
    }
    case Field::CPPTYPE_BOOL:
        return one ? r->GetBool(message, field) : r->GetRepeatedBool(message, field, index);
    case Field::CPPTYPE_ENUM: {
        const int number = one ? r->GetEnumValue(message, field) : r->GetRepeatedEnumValue(message, field, index);
        if (const gp::EnumValueDescriptor *value = field->enum_type()->FindValueByNumber(number))
            return QString::fromStdString(value->name());
        return number;
    }
    case Field::CPPTYPE_STRING: {
        const std::string v = one ? r->GetString(message, field) : r->GetRepeatedString(message, field, index);
        if (field->type() == Field::TYPE_BYTES)
            return QString::fromLatin1(QByteArray::fromStdString(v).toBase64());
        return QString::fromStdString(v);
    }
    case Field::CPPTYPE_MESSAGE:
        return messageValue(
            one ? r->GetMessage(message, field) : r->GetRepeatedMessage(message, field, index), options);
    }
    return {};
}

QJsonValue wholeFieldValue(const gp::Message &message, const Field *field, const gp::util::JsonPrintOptions &options)
{
    if (!field->is_repeated())
        return fieldValue(message, field, -1, options);
    const gp::Reflection *r = message.GetReflection();
    const int size = r->FieldSize(message, field);
    if (field->is_map()) {
        QJsonObject map;
        for (int i = 0; i < size; ++i) {
            const gp::Message &entry = r->GetRepeatedMessage(message, field, i);
            const QJsonValue key = fieldValue(entry, entry.GetDescriptor()->map_key(), -1, options);
            const QString keyText = key.isBool() ? (key.toBool() ? QStringLiteral("true") : QStringLiteral("false"))
                : key.isDouble()                 ? QString::number(key.toInteger())
                                                 : key.toString();
            map.insert(keyText, fieldValue(entry, entry.GetDescriptor()->map_value(), -1, options));
        }
        return map;
    }
    QJsonArray array;
    for (int i = 0; i < size; ++i)
        array.append(fieldValue(message, field, i, options));
    return array;
}

/// The message types a descriptor walk has visited, on the stack: this runs for every encode.
struct SeenTypes {
    std::array<const gp::Descriptor *, 32> types {};
    size_t count = 0;
};

/// True when @p type, or a message type reachable through its fields, declares an extension range (or the types are
/// too many to tell cheaply: then the message itself is walked).
bool typeMayHaveExtensions(const gp::Descriptor *type, SeenTypes *seen)
{
    if (type->extension_range_count() > 0 || seen->count == seen->types.size())
        return true;
    seen->types[seen->count++] = type;
    for (int i = 0; i < type->field_count(); ++i) {
        const gp::Descriptor *inner = type->field(i)->message_type();
        const auto seenEnd = seen->types.begin() + static_cast<std::ptrdiff_t>(seen->count);
        if (inner && std::find(seen->types.begin(), seenEnd, inner) == seenEnd && typeMayHaveExtensions(inner, seen))
            return true;
    }
    return false;
}

bool setExtensionsInside(const gp::Message &message);

bool fieldHasExtensions(const gp::Message &message, const Field *field)
{
    if (field->cpp_type() != Field::CPPTYPE_MESSAGE)
        return false;
    const gp::Reflection *r = message.GetReflection();
    if (!field->is_repeated())
        return setExtensionsInside(r->GetMessage(message, field));
    for (int i = 0, n = r->FieldSize(message, field); i < n; ++i) {
        if (setExtensionsInside(r->GetRepeatedMessage(message, field, i)))
            return true;
    }
    return false;
}

/// @p message as protobuf prints it, with its extensions (and those of the messages inside it) added.
QJsonValue messageValue(const gp::Message &message, const gp::util::JsonPrintOptions &options)
{
    std::string text;
    if (!gp::util::MessageToJsonString(message, &text, options).ok())
        return {};
    // Well-known types print as strings or arrays: parse inside an array to accept any JSON value.
    const QJsonDocument document = QJsonDocument::fromJson('[' + QByteArray::fromStdString(text) + ']');
    QJsonValue printed = document.array().at(0);
    if (!printed.isObject() || !messageHasExtensions(message))
        return printed;
    QJsonObject object = printed.toObject();
    const gp::Reflection *r = message.GetReflection();
    std::vector<const Field *> fields;
    r->ListFields(message, &fields);
    for (const Field *field : fields) {
        if (field->is_extension()) {
            object.insert(QLatin1Char('[') + QString::fromStdString(field->full_name()) + QLatin1Char(']'),
                wholeFieldValue(message, field, options));
        } else if (fieldHasExtensions(message, field)) {
            const std::string &key = options.preserve_proto_field_names ? field->name() : field->json_name();
            object.insert(QString::fromStdString(key), wholeFieldValue(message, field, options));
        }
    }
    return object;
}

bool setExtensionsInside(const gp::Message &message)
{
    std::vector<const Field *> fields;
    message.GetReflection()->ListFields(message, &fields);
    for (const Field *field : fields) {
        if (field->is_extension() || fieldHasExtensions(message, field))
            return true;
    }
    return false;
}

} // namespace

bool jsonHasExtensionKeys(std::string_view json)
{
    return json.find("\"[") != std::string_view::npos;
}

bool jsonToMessageWithExtensions(const QByteArray &json, gp::Message *message, bool ignoreUnknownFields, QString *error)
{
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(json, &parseError);
    QString problem;
    if (parseError.error != QJsonParseError::NoError)
        problem = QStringLiteral("invalid JSON at offset %1: %2").arg(parseError.offset).arg(parseError.errorString());
    else if (!document.isObject())
        problem = QStringLiteral("expected a JSON object");
    else
        problem = parseInto(document.object(), message, QString(), ignoreUnknownFields);
    if (problem.isEmpty())
        return true;
    if (error)
        *error = problem;
    return false;
}

bool messageHasExtensions(const gp::Message &message)
{
    // The type first: most have no extension range anywhere inside, and answering from the descriptors costs a few
    // nanoseconds where walking a message of 1000 elements costs microseconds (the codec benchmark encodes per call).
    SeenTypes seen;
    if (!typeMayHaveExtensions(message.GetDescriptor(), &seen))
        return false;
    return setExtensionsInside(message);
}

QByteArray messageToJsonWithExtensions(
    const gp::Message &message, const gp::util::JsonPrintOptions &options, bool indented)
{
    const QJsonValue value = messageValue(message, options);
    if (!value.isObject())
        return {};
    return QJsonDocument(value.toObject())
        .toJson(indented ? QJsonDocument::Indented : QJsonDocument::Compact)
        .trimmed();
}

} // namespace rpcscope
