#include "expectations.h"

#include "codec/messagejson.h"
#include "transport/transport.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include <cmath>

namespace gp = google::protobuf;
using Field = gp::FieldDescriptor;

namespace rpcscope {

namespace {

const QString kLength = QStringLiteral("length");

bool isIndex(const QString &segment)
{
    if (segment.isEmpty())
        return false;
    for (const QChar c : segment) {
        if (!c.isDigit())
            return false;
    }
    return true;
}

const Field *findField(const gp::Descriptor *type, const QString &name)
{
    const std::string n = name.toStdString();
    if (const Field *field = type->FindFieldByName(n))
        return field;
    if (const Field *field = type->FindFieldByCamelcaseName(n))
        return field;
    for (int i = 0; i < type->field_count(); ++i) {
        if (type->field(i)->json_name() == n)
            return type->field(i);
    }
    return nullptr;
}

QString fieldNames(const gp::Descriptor *type)
{
    QStringList names;
    for (int i = 0; i < type->field_count(); ++i)
        names << QString::fromStdString(type->field(i)->name());
    return names.isEmpty() ? QStringLiteral("none") : names.join(QStringLiteral(", "));
}

/// "items[0].name" -> items, 0, name.
QStringList splitPath(const QString &path)
{
    QString flat = path;
    flat.replace(QLatin1Char('['), QLatin1Char('.')).remove(QLatin1Char(']'));
    return flat.split(QLatin1Char('.'), Qt::KeepEmptyParts);
}

/// @p value as JSON on one line (a string quoted and escaped, so a reply's control characters are not printed raw).
QString compactJson(const QJsonValue &value)
{
    const QByteArray wrapped = QJsonDocument(QJsonArray { value }).toJson(QJsonDocument::Compact);
    return QString::fromUtf8(wrapped.mid(1, wrapped.size() - 2));
}

/// A number from a JSON number, or from a string that holds one (proto3 JSON writes 64-bit integers as strings).
std::optional<long double> numberOf(const QJsonValue &value)
{
    if (value.isDouble()) {
        const double d = value.toDouble();
        if (std::isfinite(d) && std::floor(d) == d && std::abs(d) < 9.2e18)
            return static_cast<long double>(value.toInteger()); // exact for the integers Qt keeps as integers
        return d;
    }
    if (value.isString()) {
        const QString text = value.toString().trimmed();
        bool ok = false;
        if (const qlonglong i = text.toLongLong(&ok); ok)
            return static_cast<long double>(i);
        if (const qulonglong u = text.toULongLong(&ok); ok)
            return static_cast<long double>(u);
        if (const double d = text.toDouble(&ok); ok)
            return d;
    }
    return std::nullopt;
}

bool jsonEqual(const QJsonValue &expected, const QJsonValue &actual)
{
    if (expected.isDouble() || actual.isDouble()) {
        const auto a = numberOf(expected);
        const auto b = numberOf(actual);
        return a && b && *a == *b;
    }
    return expected == actual;
}

/// True when @p actual contains @p expected (see Expectation); else false with @p why naming where it differs.
bool containsJson(const QJsonValue &expected, const QJsonValue &actual, const QString &at, QString *why)
{
    const QString where = at.isEmpty() ? QStringLiteral("the reply") : at;
    if (expected.isObject()) {
        if (!actual.isObject()) {
            *why = where + QStringLiteral(" is ") + compactJson(actual) + QStringLiteral(", not an object");
            return false;
        }
        const QJsonObject want = expected.toObject();
        const QJsonObject have = actual.toObject();
        for (auto it = want.begin(); it != want.end(); ++it) {
            QString key = it.key();
            if (!have.contains(key)) {
                // snake_case as in the .proto, the reply printed in lowerCamelCase
                QString camel;
                bool upper = false;
                for (const QChar c : key) {
                    if (c == QLatin1Char('_')) {
                        upper = true;
                        continue;
                    }
                    camel += upper ? c.toUpper() : c;
                    upper = false;
                }
                key = camel;
            }
            const QString path = at.isEmpty() ? it.key() : at + QLatin1Char('.') + it.key();
            if (!have.contains(key)) {
                *why = path + QStringLiteral(" is missing");
                return false;
            }
            if (!containsJson(it.value(), have.value(key), path, why))
                return false;
        }
        return true;
    }
    if (expected.isArray()) {
        const QJsonArray want = expected.toArray();
        const QJsonArray have = actual.toArray();
        if (!actual.isArray() || have.size() != want.size()) {
            *why = where + QStringLiteral(" is ")
                + (actual.isArray() ? QStringLiteral("%1 elements long").arg(have.size()) : compactJson(actual))
                + QStringLiteral(", expected %1 elements").arg(want.size());
            return false;
        }
        for (qsizetype i = 0; i < want.size(); ++i) {
            if (!containsJson(want.at(i), have.at(i), where + QStringLiteral("[%1]").arg(i), why))
                return false;
        }
        return true;
    }
    if (jsonEqual(expected, actual))
        return true;
    *why = where + QStringLiteral(" is ") + compactJson(actual);
    return false;
}

/// What a path leads to in a reply.
struct Actual {
    enum Kind { Number, Text, Bool, Enum, Json } kind = Json;
    long double number = 0;
    QString text; ///< also the number as printed, the enum's name
    bool flag = false;
    int enumNumber = 0;
    QJsonValue json;
};

QJsonValue fieldJson(const gp::Message &message, const Field *field)
{
    const QJsonObject object = QJsonDocument::fromJson(messageToJson(message, false)).object();
    const QString json = QString::fromStdString(field->json_name());
    return object.contains(json) ? object.value(json) : object.value(QString::fromStdString(field->name()));
}

Actual scalar(const gp::Message &message, const Field *field, int index)
{
    const gp::Reflection *r = message.GetReflection();
    const bool one = index < 0;
    Actual a;
    auto number = [&a](auto v) {
        a.kind = Actual::Number;
        a.number = static_cast<long double>(v);
        if constexpr (std::is_floating_point_v<decltype(v)>)
            a.text = QString::number(static_cast<double>(v), 'g', QLocale::FloatingPointShortest);
        else
            a.text = QString::number(v);
    };
    switch (field->cpp_type()) {
    case Field::CPPTYPE_INT32:
        number(one ? r->GetInt32(message, field) : r->GetRepeatedInt32(message, field, index));
        break;
    case Field::CPPTYPE_INT64:
        number(one ? r->GetInt64(message, field) : r->GetRepeatedInt64(message, field, index));
        break;
    case Field::CPPTYPE_UINT32:
        number(one ? r->GetUInt32(message, field) : r->GetRepeatedUInt32(message, field, index));
        break;
    case Field::CPPTYPE_UINT64:
        number(one ? r->GetUInt64(message, field) : r->GetRepeatedUInt64(message, field, index));
        break;
    case Field::CPPTYPE_DOUBLE:
        number(one ? r->GetDouble(message, field) : r->GetRepeatedDouble(message, field, index));
        break;
    case Field::CPPTYPE_FLOAT:
        number(one ? r->GetFloat(message, field) : r->GetRepeatedFloat(message, field, index));
        break;
    case Field::CPPTYPE_BOOL:
        a.kind = Actual::Bool;
        a.flag = one ? r->GetBool(message, field) : r->GetRepeatedBool(message, field, index);
        a.text = a.flag ? QStringLiteral("true") : QStringLiteral("false");
        break;
    case Field::CPPTYPE_ENUM: {
        a.kind = Actual::Enum;
        a.enumNumber = one ? r->GetEnumValue(message, field) : r->GetRepeatedEnumValue(message, field, index);
        const gp::EnumValueDescriptor *value = field->enum_type()->FindValueByNumber(a.enumNumber);
        a.text = value ? QString::fromStdString(value->name()) : QString::number(a.enumNumber);
        break;
    }
    case Field::CPPTYPE_STRING: {
        a.kind = Actual::Text;
        const std::string v = one ? r->GetString(message, field) : r->GetRepeatedString(message, field, index);
        // bytes as the JSON mapping writes them (base64), so a value copied from a shown reply matches
        a.text = field->type() == Field::TYPE_BYTES ? QString::fromLatin1(QByteArray::fromStdString(v).toBase64())
                                                    : QString::fromStdString(v);
        break;
    }
    case Field::CPPTYPE_MESSAGE:
        a.kind = Actual::Json;
        a.json = QJsonDocument::fromJson(
            messageToJson(one ? r->GetMessage(message, field) : r->GetRepeatedMessage(message, field, index), false))
                     .object();
        break;
    }
    return a;
}

} // namespace

std::optional<Expectation> Expectation::parse(const QString &input, const gp::Descriptor *type, QString *error)
{
    auto fail = [&](const QString &why) -> std::optional<Expectation> {
        if (error)
            *error = QStringLiteral("\"%1\": %2").arg(input, why);
        return std::nullopt;
    };
    Expectation e;
    e.m_text = input.trimmed();
    if (e.m_text.startsWith(QLatin1Char('{'))) {
        QJsonParseError parseError;
        const QJsonDocument document = QJsonDocument::fromJson(e.m_text.toUtf8(), &parseError);
        if (!document.isObject())
            return fail(QStringLiteral("not a JSON object: %1 at offset %2")
                            .arg(parseError.errorString())
                            .arg(parseError.offset));
        e.m_subset = true;
        e.m_value = document.object();
        return e;
    }
    const qsizetype at = e.m_text.indexOf(QRegularExpression(QStringLiteral("[=!<>]")));
    if (at <= 0)
        return fail(QStringLiteral("expected FIELD OP VALUE (OP one of = != < <= > >=) or a JSON object"));
    const QString path = e.m_text.left(at).trimmed();
    QString rest = e.m_text.mid(at);
    static const std::pair<const char *, Op> ops[]
        = { { "==", Op::Equal }, { "!=", Op::NotEqual }, { "<=", Op::LessEqual }, { ">=", Op::GreaterEqual },
              { "=", Op::Equal }, { "<", Op::Less }, { ">", Op::Greater } };
    bool found = false;
    for (const auto &[text, op] : ops) {
        if (rest.startsWith(QLatin1String(text))) {
            e.m_op = op;
            rest = rest.mid(qsizetype(qstrlen(text))).trimmed();
            found = true;
            break;
        }
    }
    if (!found)
        return fail(QStringLiteral("\"%1\" is not an operator (= != < <= > >=)").arg(rest.left(2)));
    if (rest.isEmpty())
        return fail(QStringLiteral("no value after the operator"));
    // An integer stays text, read exactly when compared: as a JSON number it would be a double, and 64-bit values
    // above 2^53 would be rounded.
    static const QRegularExpression integer(QStringLiteral("^-?[0-9]+$"));
    const QJsonDocument literal = QJsonDocument::fromJson('[' + rest.toUtf8() + ']');
    e.m_value = integer.match(rest).hasMatch()             ? QJsonValue(rest)
        : literal.isArray() && literal.array().size() == 1 ? literal.array().at(0)
                                                           : QJsonValue(rest);
    e.m_path = splitPath(path);
    for (const QString &segment : std::as_const(e.m_path)) {
        if (segment.isEmpty())
            return fail(QStringLiteral("\"%1\" has an empty field name").arg(path));
    }
    if (!type)
        return e;
    // Checked against the reply type now, so a typo is a usage error and not a run of failed calls.
    const gp::Descriptor *message = type;
    const Field *field = nullptr;
    bool indexed = false;
    bool ordered = e.m_op != Op::Equal && e.m_op != Op::NotEqual;
    for (qsizetype i = 0; i < e.m_path.size(); ++i) {
        const QString &segment = e.m_path[i];
        const bool last = i == e.m_path.size() - 1;
        if (message) {
            field = findField(message, segment);
            if (!field)
                return fail(QStringLiteral("no field \"%1\" in %2 (fields: %3)")
                                .arg(segment, QString::fromStdString(message->full_name()), fieldNames(message)));
            indexed = false;
            message = nullptr;
            if (!field->is_repeated() && field->cpp_type() == Field::CPPTYPE_MESSAGE && !last)
                message = field->message_type();
            continue;
        }
        if (field->is_repeated() && !indexed && isIndex(segment) && !field->is_map()) {
            indexed = true;
            if (field->cpp_type() == Field::CPPTYPE_MESSAGE && !last)
                message = field->message_type();
            continue;
        }
        const bool sized = (field->is_repeated() && !indexed) || field->cpp_type() == Field::CPPTYPE_STRING;
        if (segment == kLength && last && sized) {
            ordered = false; // a length compares as a number
            break;
        }
        return fail(QStringLiteral("\"%1\" cannot follow %2 (%3)")
                        .arg(segment, QString::fromStdString(field->name()),
                            field->is_repeated() && !indexed
                                ? QStringLiteral("a repeated field: an index or length")
                                : QStringLiteral("only a message field has fields; length is for repeated, string and "
                                                 "bytes fields")));
    }
    if (ordered && field && (!field->is_repeated() || indexed)
        && (field->cpp_type() == Field::CPPTYPE_MESSAGE || field->cpp_type() == Field::CPPTYPE_BOOL
            || field->cpp_type() == Field::CPPTYPE_ENUM))
        return fail(QStringLiteral("%1 is %2: only = and != compare it")
                        .arg(path,
                            field->cpp_type() == Field::CPPTYPE_MESSAGE    ? QStringLiteral("a message")
                                : field->cpp_type() == Field::CPPTYPE_BOOL ? QStringLiteral("a bool")
                                                                           : QStringLiteral("an enum")));
    return e;
}

bool Expectation::holds(int order) const
{
    switch (m_op) {
    case Op::Equal:
        return order == 0;
    case Op::NotEqual:
        return order != 0;
    case Op::Less:
        return order < 0;
    case Op::LessEqual:
        return order <= 0;
    case Op::Greater:
        return order > 0;
    case Op::GreaterEqual:
        return order >= 0;
    }
    return false;
}

bool Expectation::check(const gp::Message &reply, QString *got) const
{
    if (m_subset) {
        const QJsonValue actual = QJsonDocument::fromJson(messageToJson(reply, false)).object();
        return containsJson(m_value, actual, QString(), got);
    }
    // Walk the path through the reply.
    const gp::Message *message = &reply;
    const Field *field = nullptr;
    int index = -1;
    Actual actual;
    bool resolved = false;
    for (qsizetype i = 0; i < m_path.size() && !resolved; ++i) {
        const QString &segment = m_path[i];
        if (!field) {
            field = findField(message->GetDescriptor(), segment);
            if (!field) {
                *got = QStringLiteral("no field \"%1\" in the reply").arg(segment);
                return false;
            }
            index = -1;
            continue;
        }
        const gp::Reflection *r = message->GetReflection();
        if (field->is_repeated() && index < 0 && isIndex(segment) && !field->is_map()) {
            index = segment.toInt();
            if (index >= r->FieldSize(*message, field)) {
                *got = QStringLiteral("%1 has %2 elements, no [%3]")
                           .arg(QString::fromStdString(field->name()))
                           .arg(r->FieldSize(*message, field))
                           .arg(segment);
                return false;
            }
            continue;
        }
        if (segment == kLength && i == m_path.size() - 1) {
            actual.kind = Actual::Number;
            if (field->is_repeated() && index < 0)
                actual.number = r->FieldSize(*message, field);
            else {
                const std::string v
                    = index < 0 ? r->GetString(*message, field) : r->GetRepeatedString(*message, field, index);
                actual.number = static_cast<long double>(v.size());
            }
            actual.text = QString::number(static_cast<qulonglong>(actual.number));
            resolved = true;
            continue;
        }
        if (field->cpp_type() == Field::CPPTYPE_MESSAGE && (!field->is_repeated() || index >= 0)) {
            message = index < 0 ? &r->GetMessage(*message, field) : &r->GetRepeatedMessage(*message, field, index);
            field = findField(message->GetDescriptor(), segment);
            if (!field) {
                *got = QStringLiteral("no field \"%1\" in %2")
                           .arg(segment, QString::fromStdString(message->GetDescriptor()->full_name()));
                return false;
            }
            index = -1;
            continue;
        }
        *got = QStringLiteral("\"%1\" cannot follow %2").arg(segment, QString::fromStdString(field->name()));
        return false;
    }
    if (!resolved) {
        if (field->is_repeated() && index < 0) {
            actual.kind = Actual::Json;
            actual.json = fieldJson(*message, field);
        } else {
            actual = scalar(*message, field, index);
        }
    }

    bool ok = false;
    switch (actual.kind) {
    case Actual::Number: {
        const std::optional<long double> want = numberOf(m_value);
        if (!want) {
            *got = actual.text + QStringLiteral(" (a number; ") + compactJson(m_value) + QStringLiteral(" is not)");
            return false;
        }
        // NaN is unordered: only != holds for it, as with the operators themselves.
        if (std::isnan(actual.number) || std::isnan(*want))
            ok = m_op == Op::NotEqual;
        else
            ok = holds(actual.number < *want ? -1 : actual.number > *want ? 1 : 0);
        break;
    }
    case Actual::Text: {
        const QString want = m_value.isString() ? m_value.toString() : compactJson(m_value);
        ok = holds(QString::compare(actual.text, want));
        actual.text = compactJson(actual.text);
        break;
    }
    case Actual::Bool:
    case Actual::Enum: {
        bool same;
        if (actual.kind == Actual::Bool)
            same = m_value.isBool() ? m_value.toBool() == actual.flag : m_value.toString() == actual.text;
        else
            same = numberOf(m_value) ? numberOf(m_value) == static_cast<long double>(actual.enumNumber)
                                     : m_value.toString() == actual.text;
        ok = m_op == Op::NotEqual ? !same : same;
        break;
    }
    case Actual::Json: {
        const bool same = jsonEqual(m_value, actual.json);
        ok = m_op == Op::NotEqual ? !same : same;
        actual.text = compactJson(actual.json);
        break;
    }
    }
    if (!ok)
        *got = actual.text;
    return ok;
}

ReplyChecker::ReplyChecker(std::vector<Expectation> expectations, ExpectSampling sampling, size_t slotCount)
    : m_expectations(std::move(expectations)), m_sampling(sampling), m_streams(slotCount)
{
}

bool ReplyChecker::sampleNext()
{
    if (!m_sampling.sampled(m_seen.fetch_add(1, std::memory_order_relaxed)))
        return false;
    m_checked.fetch_add(1, std::memory_order_relaxed);
    return true;
}

const Expectation *ReplyChecker::firstFailed(const gp::Message &reply, const QString &where)
{
    for (const Expectation &expectation : m_expectations) {
        QString got;
        if (expectation.check(reply, &got))
            continue;
        std::lock_guard lock(m_keptMutex);
        if (m_kept.size() < kKeptUnexpectedReplies) {
            QByteArray json = messageToJson(reply, true);
            if (json.size() > kUnexpectedReplyBytes)
                json = json.left(kUnexpectedReplyBytes) + "\n... (cut at 4 KiB)";
            m_kept.push_back({ expectation.text(), got + where, json });
        }
        return &expectation;
    }
    return nullptr;
}

void ReplyChecker::check(int slot, CallOutcome &outcome)
{
    if (m_expectations.empty())
        return;
    Stream &stream = m_streams[static_cast<size_t>(slot)];
    if (stream.begun) {
        if (outcome.status == CallStatus::Ok && !stream.failure.empty()) {
            outcome.status = CallStatus::UnexpectedReply;
            outcome.errorMessage = stream.failure;
        }
        stream = Stream();
        return;
    }
    if (outcome.status != CallStatus::Ok || !outcome.reply || !sampleNext())
        return;
    // One message per expectation, so the error table groups them; what each reply had is in the kept ones.
    if (const Expectation *failed = firstFailed(*outcome.reply, QString())) {
        outcome.status = CallStatus::UnexpectedReply;
        outcome.errorMessage = "reply failed --expect " + failed->text().toStdString();
    }
}

void ReplyChecker::checkMessage(int slot, const gp::Message *message)
{
    if (m_expectations.empty())
        return;
    Stream &stream = m_streams[static_cast<size_t>(slot)];
    if (!stream.begun) {
        stream.begun = true;
        stream.sampled = sampleNext();
    }
    ++stream.messages;
    if (!stream.sampled || !message || !stream.failure.empty())
        return; // a stream is failed by its first message that fails
    const QString where = QStringLiteral(" (message %1)").arg(stream.messages);
    if (const Expectation *failed = firstFailed(*message, where))
        stream.failure = "a message failed --expect " + failed->text().toStdString();
}

std::vector<UnexpectedReply> ReplyChecker::kept() const
{
    std::lock_guard lock(m_keptMutex);
    return m_kept;
}

} // namespace rpcscope
