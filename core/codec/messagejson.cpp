#include "messagejson.h"

#include "extensionjson.h"

#include "schema/schema.h"
#include "util/units.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QStringList>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/message.h>
#include <google/protobuf/util/json_util.h>

#include <limits>

namespace gp = google::protobuf;

namespace rpcscope {

namespace {

/// Line and column (1-based) of a byte offset, for JSON syntax errors.
QString lineColumn(const QByteArray &text, qsizetype offset)
{
    int line = 1;
    int column = 1;
    for (qsizetype i = 0; i < offset && i < text.size(); ++i) {
        if (text[i] == '\n') {
            ++line;
            column = 1;
        } else {
            ++column;
        }
    }
    return QStringLiteral("line %1, column %2").arg(line).arg(column);
}

QString cleanStatusMessage(const std::string &message)
{
    // protobuf prefixes its JSON errors with the status code ("INVALID_ARGUMENT:"): keep only the reason.
    QString text = QString::fromStdString(message).trimmed();
    const qsizetype colon = text.indexOf(QLatin1Char(':'));
    if (colon > 0 && text.left(colon).toUpper() == text.left(colon) && !text.left(colon).contains(QLatin1Char(' ')))
        text = text.mid(colon + 1).trimmed();
    return text;
}

void fillExample(gp::Message *message, int depth)
{
    const gp::Descriptor *type = message->GetDescriptor();
    const gp::Reflection *reflection = message->GetReflection();
    for (int i = 0; i < type->field_count(); ++i) {
        const gp::FieldDescriptor *field = type->field(i);
        const gp::OneofDescriptor *oneof = field->real_containing_oneof();
        if (oneof && oneof->field(0) != field)
            continue; // one member per oneof
        if (field->is_map())
            continue; // an empty map says enough
        if (field->cpp_type() == gp::FieldDescriptor::CPPTYPE_MESSAGE) {
            if (depth >= 3 || field->message_type()->file()->name().rfind("google/protobuf/", 0) == 0)
                continue; // recursion guard; well-known types have special JSON forms
            gp::Message *child = field->is_repeated() ? reflection->AddMessage(message, field)
                                                      : reflection->MutableMessage(message, field);
            fillExample(child, depth + 1);
            continue;
        }
        if (field->is_repeated())
            continue; // printed as [] (always_print_primitive_fields)
        if (oneof) {
            // A oneof member prints only when set: set the first one to its default. (proto3 `optional` fields
            // stay unset: setting them changes what the request means, e.g. Echo's response_size.)
            switch (field->cpp_type()) {
            case gp::FieldDescriptor::CPPTYPE_INT32:
                reflection->SetInt32(message, field, 0);
                break;
            case gp::FieldDescriptor::CPPTYPE_INT64:
                reflection->SetInt64(message, field, 0);
                break;
            case gp::FieldDescriptor::CPPTYPE_UINT32:
                reflection->SetUInt32(message, field, 0);
                break;
            case gp::FieldDescriptor::CPPTYPE_UINT64:
                reflection->SetUInt64(message, field, 0);
                break;
            case gp::FieldDescriptor::CPPTYPE_DOUBLE:
                reflection->SetDouble(message, field, 0);
                break;
            case gp::FieldDescriptor::CPPTYPE_FLOAT:
                reflection->SetFloat(message, field, 0);
                break;
            case gp::FieldDescriptor::CPPTYPE_BOOL:
                reflection->SetBool(message, field, false);
                break;
            case gp::FieldDescriptor::CPPTYPE_ENUM:
                reflection->SetEnumValue(message, field, field->enum_type()->value(0)->number());
                break;
            case gp::FieldDescriptor::CPPTYPE_STRING:
                reflection->SetString(message, field, std::string());
                break;
            case gp::FieldDescriptor::CPPTYPE_MESSAGE:
                break;
            }
        }
    }
}

const gp::FieldDescriptor *findField(const gp::Descriptor *type, const QString &name)
{
    const std::string n = name.toStdString();
    if (const gp::FieldDescriptor *field = type->FindFieldByName(n))
        return field;
    return type->FindFieldByCamelcaseName(n);
}

QString fieldNames(const gp::Descriptor *type)
{
    QStringList names;
    for (int i = 0; i < type->field_count(); ++i)
        names << QString::fromStdString(type->field(i)->name());
    return names.join(QStringLiteral(", "));
}

} // namespace

std::unique_ptr<gp::Message> messageFromJson(
    const Schema &schema, const gp::Descriptor *type, const QByteArray &json, QString *error)
{
    auto fail = [&](const QString &message) -> std::unique_ptr<gp::Message> {
        if (error)
            *error = message;
        return nullptr;
    };
    if (!type)
        return fail(QStringLiteral("no message type"));
    std::unique_ptr<gp::Message> message = schema.newMessage(type);
    if (!message)
        return fail(QStringLiteral("cannot make a message of type %1").arg(QString::fromStdString(type->full_name())));
    if (json.trimmed().isEmpty())
        return message; // an empty request is the all-defaults message

    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(json, &parseError);
    if (parseError.error != QJsonParseError::NoError) {
        // Valid JSON that is not an object or array ("hello", 42) is not a parse error: say what it is instead.
        const QJsonDocument wrapped = QJsonDocument::fromJson('[' + json + ']');
        if (wrapped.isArray() && wrapped.array().size() == 1) {
            const QJsonValue value = wrapped.array().first();
            const QString kind = value.isString() ? QStringLiteral("a string")
                : value.isDouble()                ? QStringLiteral("a number")
                : value.isBool()                  ? QStringLiteral("a boolean")
                                                  : QStringLiteral("null");
            return fail(QStringLiteral("the request must be a JSON object ({...}) for %1, not %2")
                            .arg(QString::fromStdString(type->full_name()), kind));
        }
        return fail(QStringLiteral("invalid JSON at %1: %2")
                        .arg(lineColumn(json, parseError.offset), parseError.errorString()));
    }
    if (!document.isObject())
        return fail(QStringLiteral("the request must be a JSON object ({...}) for %1, not an array")
                        .arg(QString::fromStdString(type->full_name())));

    if (jsonHasExtensionKeys(std::string_view(json.constData(), static_cast<size_t>(json.size())))) {
        // "[pkg.ext]" keys name proto2 extensions, which protobuf's own JSON parser does not know.
        QString why;
        if (!jsonToMessageWithExtensions(json, message.get(), false, &why))
            return fail(QStringLiteral("%1: %2").arg(
                QString::fromStdString(type->full_name()), cleanStatusMessage(why.toStdString())));
        return message;
    }
    gp::util::JsonParseOptions options;
    options.ignore_unknown_fields = false;
    const auto status = gp::util::JsonStringToMessage(json.toStdString(), message.get(), options);
    if (!status.ok())
        return fail(QStringLiteral("%1: %2").arg(
            QString::fromStdString(type->full_name()), cleanStatusMessage(std::string(status.message()))));
    return message;
}

QByteArray messageToJson(const gp::Message &message, bool indented)
{
    gp::util::JsonPrintOptions options;
    options.add_whitespace = indented;
    options.always_print_primitive_fields = true;
    options.preserve_proto_field_names = false;
    if (messageHasExtensions(message)) // protobuf's printer would drop them
        return messageToJsonWithExtensions(message, options, indented);
    std::string out;
    const auto status = gp::util::MessageToJsonString(message, &out, options);
    if (!status.ok())
        return {};
    return QByteArray::fromStdString(out).trimmed();
}

QByteArray exampleJson(const Schema &schema, const gp::Descriptor *type)
{
    std::unique_ptr<gp::Message> message = schema.newMessage(type);
    if (!message)
        return QByteArrayLiteral("{}");
    fillExample(message.get(), 0);
    return messageToJson(*message, true);
}

bool applyFill(gp::Message *message, const QString &spec, QString *error)
{
    auto fail = [&](const QString &why) {
        if (error)
            *error = QStringLiteral("fill \"%1\": %2").arg(spec, why);
        return false;
    };
    const qsizetype eq = spec.indexOf(QLatin1Char('='));
    if (eq <= 0)
        return fail(QStringLiteral("expected FIELD=SIZE, e.g. payload=1KiB or nums=1000"));
    const QStringList path = spec.left(eq).split(QLatin1Char('.'));
    QString sizeError;
    const std::optional<qint64> size = parseByteSize(spec.mid(eq + 1), &sizeError);
    if (!size)
        return fail(sizeError);

    gp::Message *target = message;
    const gp::FieldDescriptor *field = nullptr;
    for (qsizetype i = 0; i < path.size(); ++i) {
        const gp::Descriptor *type = target->GetDescriptor();
        field = findField(type, path[i]);
        if (!field)
            return fail(QStringLiteral("no field \"%1\" in %2 (fields: %3)")
                            .arg(path[i], QString::fromStdString(type->full_name()), fieldNames(type)));
        if (i + 1 < path.size()) {
            if (field->cpp_type() != gp::FieldDescriptor::CPPTYPE_MESSAGE || field->is_repeated())
                return fail(QStringLiteral("field \"%1\" is not a singular message, cannot go into it").arg(path[i]));
            target = target->GetReflection()->MutableMessage(target, field);
        }
    }
    const gp::Reflection *reflection = target->GetReflection();
    const qint64 n = *size;
    if (!field->is_repeated()) {
        if (field->cpp_type() != gp::FieldDescriptor::CPPTYPE_STRING)
            return fail(QStringLiteral("field \"%1\" is %2; a size fills bytes, string or repeated fields")
                            .arg(QString::fromStdString(field->name()), QString::fromLatin1(field->type_name())));
        // Checked before anything is allocated: a message cannot be encoded past protobuf's 2 GiB.
        if (n >= std::numeric_limits<int32_t>::max())
            return fail(QStringLiteral("%1 bytes is past protobuf's 2 GiB limit for a message").arg(n));
        std::string value(static_cast<size_t>(n), '\0');
        for (qint64 i = 0; i < n; ++i)
            value[static_cast<size_t>(i)] = static_cast<char>('a' + i % 26); // valid UTF-8 for string fields too
        reflection->SetString(target, field, std::move(value));
        return true;
    }
    if (n > 100'000'000)
        return fail(QStringLiteral("%1 elements is too many").arg(n));
    if (field->cpp_type() == gp::FieldDescriptor::CPPTYPE_MESSAGE) {
        std::unique_ptr<gp::Message> model;
        if (reflection->FieldSize(*target, field) > 0) {
            const gp::Message &first = reflection->GetRepeatedMessage(*target, field, 0);
            model.reset(first.New());
            model->CopyFrom(first);
        }
        reflection->ClearField(target, field);
        for (qint64 i = 0; i < n; ++i) {
            gp::Message *added = reflection->AddMessage(target, field);
            if (model)
                added->CopyFrom(*model);
        }
        return true;
    }
    reflection->ClearField(target, field);
    for (qint64 i = 1; i <= n; ++i) {
        switch (field->cpp_type()) {
        case gp::FieldDescriptor::CPPTYPE_INT32:
            reflection->AddInt32(target, field, static_cast<int32_t>(i));
            break;
        case gp::FieldDescriptor::CPPTYPE_INT64:
            reflection->AddInt64(target, field, i);
            break;
        case gp::FieldDescriptor::CPPTYPE_UINT32:
            reflection->AddUInt32(target, field, static_cast<uint32_t>(i));
            break;
        case gp::FieldDescriptor::CPPTYPE_UINT64:
            reflection->AddUInt64(target, field, static_cast<uint64_t>(i));
            break;
        case gp::FieldDescriptor::CPPTYPE_DOUBLE:
            reflection->AddDouble(target, field, static_cast<double>(i));
            break;
        case gp::FieldDescriptor::CPPTYPE_FLOAT:
            reflection->AddFloat(target, field, static_cast<float>(i));
            break;
        case gp::FieldDescriptor::CPPTYPE_BOOL:
            reflection->AddBool(target, field, i % 2 == 1);
            break;
        case gp::FieldDescriptor::CPPTYPE_ENUM:
            reflection->AddEnumValue(target, field, field->enum_type()->value(0)->number());
            break;
        case gp::FieldDescriptor::CPPTYPE_STRING:
            reflection->AddString(target, field, std::to_string(i));
            break;
        case gp::FieldDescriptor::CPPTYPE_MESSAGE:
            break;
        }
    }
    return true;
}

} // namespace rpcscope
