// The msgpack form of protobuf messages read back (see msgpackcodec.h); the writing side is msgpackcodec.cpp.
#include "msgpackcodec.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/message.h>
#include <google/protobuf/repeated_field.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string_view>

namespace gp = google::protobuf;
using FD = gp::FieldDescriptor;

namespace rpcscope {

namespace {

// Reflection::MutableRepeatedField is deprecated in favour of MutableRepeatedFieldRef, whose every element access
// is a virtual call. The direct RepeatedField is what makes a 1000-number array cheap, so the deprecated calls
// are kept, here only (msgpackcodec.cpp does the same for reading).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
template<class T>
gp::RepeatedField<T> *mutableRepeatedScalars(const gp::Reflection *reflection, gp::Message *message, const FD *field)
{
    return reflection->MutableRepeatedField<T>(message, field);
}

gp::RepeatedPtrField<std::string> *mutableRepeatedStrings(
    const gp::Reflection *reflection, gp::Message *message, const FD *field)
{
    return reflection->MutableRepeatedPtrField<std::string>(message, field);
}
#pragma GCC diagnostic pop

/// Deeper input is refused rather than recursed into (a hostile or broken payload must not overflow the stack).
constexpr int kMaxMessageDepth = 64;

const char *objectTypeName(const msgpack::object &object)
{
    switch (object.type) {
    case msgpack::type::NIL:
        return "nil";
    case msgpack::type::BOOLEAN:
        return "bool";
    case msgpack::type::POSITIVE_INTEGER:
    case msgpack::type::NEGATIVE_INTEGER:
        return "int";
    case msgpack::type::FLOAT32:
        return "float32";
    case msgpack::type::FLOAT64:
        return "float64";
    case msgpack::type::STR:
        return "str";
    case msgpack::type::BIN:
        return "bin";
    case msgpack::type::ARRAY:
        return "array";
    case msgpack::type::MAP:
        return "map";
    case msgpack::type::EXT:
        return "ext";
    }
    return "unknown";
}

std::string formatDouble(double value)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", value);
    return text;
}

/// Whether @p text is valid UTF-8: shortest forms only, no surrogates, nothing past U+10FFFF. ASCII, the usual case,
/// is checked eight bytes at a time.
bool isValidUtf8(std::string_view text)
{
    const auto *p = reinterpret_cast<const unsigned char *>(text.data());
    const auto *end = p + text.size();
    while (p < end) {
        if (end - p >= 8) {
            uint64_t chunk;
            std::memcpy(&chunk, p, sizeof chunk);
            if ((chunk & 0x8080808080808080ULL) == 0) {
                p += 8;
                continue;
            }
        }
        const unsigned char lead = *p;
        if (lead < 0x80) {
            ++p;
            continue;
        }
        int length = 0;
        uint32_t point = 0;
        uint32_t smallest = 0;
        if ((lead & 0xE0) == 0xC0) {
            length = 2;
            point = lead & 0x1F;
            smallest = 0x80;
        } else if ((lead & 0xF0) == 0xE0) {
            length = 3;
            point = lead & 0x0F;
            smallest = 0x800;
        } else if ((lead & 0xF8) == 0xF0) {
            length = 4;
            point = lead & 0x07;
            smallest = 0x10000;
        } else {
            return false;
        }
        if (end - p < length)
            return false;
        for (int i = 1; i < length; ++i) {
            if ((p[i] & 0xC0) != 0x80)
                return false;
            point = (point << 6) | (p[i] & 0x3F);
        }
        if (point < smallest || point > 0x10FFFF || (point >= 0xD800 && point <= 0xDFFF))
            return false;
        p += length;
    }
    return true;
}

/// proto3 `string` fields must hold UTF-8: protobuf refuses to parse anything else, so a message decoded from msgpack
/// must not hold it either.
bool needsUtf8(const FD *field)
{
    return field->type() == FD::TYPE_STRING && field->file()->syntax() == gp::FileDescriptor::SYNTAX_PROTO3;
}

std::string_view stringOf(const msgpack::object &object)
{
    return object.type == msgpack::type::STR ? std::string_view(object.via.str.ptr, object.via.str.size)
                                             : std::string_view(object.via.bin.ptr, object.via.bin.size);
}

/// One step of the path to the value being read, kept as pointers so that nothing is formatted unless it fails.
/// (No initializers: the path array is made per decode, and push() sets every member.)
struct PathStep {
    const FD *field;
    int64_t index; ///< element of a repeated field, or -1
    const msgpack::object *mapKey; ///< entry of a map field, or nullptr
};

/**
 * Fills messages from msgpack objects. The path to the value being read is a fixed array (the depth is bounded), so
 * reading allocates nothing beyond what the message keeps; it is turned into text only for an error.
 */
class Unpacker {
public:
    Unpacker(std::string *error, bool ignoreUnknownFields) : m_error(error), m_ignoreUnknownFields(ignoreUnknownFields)
    {
    }

    bool message(const msgpack::object &object, gp::Message *message)
    {
        if (object.type != msgpack::type::MAP)
            return fail(
                "expected a map for " + message->GetDescriptor()->full_name() + ", got " + objectTypeName(object));
        if (++m_messageDepth > kMaxMessageDepth)
            return fail("messages nested more than " + std::to_string(kMaxMessageDepth) + " deep");
        const gp::Descriptor *type = message->GetDescriptor();
        const gp::Reflection *reflection = message->GetReflection();
        const int fieldCount = type->field_count();
        int hint = 0;
        const msgpack::object_kv *end = object.via.map.ptr + object.via.map.size;
        for (const msgpack::object_kv *kv = object.via.map.ptr; kv != end; ++kv) {
            if (kv->key.type != msgpack::type::STR)
                return fail(
                    std::string("a key of ") + type->full_name() + " is " + objectTypeName(kv->key) + ", expected str");
            const std::string_view key(kv->key.via.str.ptr, kv->key.via.str.size);
            // Our own encoder writes fields in declaration order: try the next one first, which finds the field
            // without hashing or building a std::string from the key.
            const FD *field = nullptr;
            if (hint < fieldCount && type->field(hint)->name() == key)
                field = type->field(hint);
            else
                field = findField(type, key);
            if (!field) {
                if (m_ignoreUnknownFields)
                    continue;
                return fail("unknown field \"" + std::string(key) + "\" in " + type->full_name());
            }
            hint = field->index() + 1;
            if (kv->val.type == msgpack::type::NIL)
                continue; // nil leaves the field at its default
            if (!push(field) || !value(kv->val, message, reflection, field))
                return false;
            pop();
        }
        --m_messageDepth;
        return true;
    }

    bool fields(const msgpack::object &object, gp::Message *message)
    {
        const gp::Descriptor *type = message->GetDescriptor();
        if (object.type != msgpack::type::ARRAY)
            return fail("expected an array of the fields of " + type->full_name() + ", got " + objectTypeName(object));
        if (object.via.array.size > static_cast<uint32_t>(type->field_count()))
            return fail(type->full_name() + " has " + std::to_string(type->field_count()) + " fields, got an array of "
                + std::to_string(object.via.array.size));
        const gp::Reflection *reflection = message->GetReflection();
        for (uint32_t i = 0; i < object.via.array.size; ++i) {
            const msgpack::object &item = object.via.array.ptr[i];
            if (item.type == msgpack::type::NIL)
                continue;
            const FD *field = type->field(static_cast<int>(i));
            if (!push(field) || !value(item, message, reflection, field))
                return false;
            pop();
        }
        return true;
    }

    /// unpackFieldValue: the field's name starts the path of errors.
    bool field(const msgpack::object &object, gp::Message *message, const FD *field)
    {
        if (object.type == msgpack::type::NIL)
            return true;
        return push(field) && value(object, message, message->GetReflection(), field);
    }

private:
    /// Sets @p field of @p message from @p object: an array for a repeated field, a map for a map field.
    bool value(const msgpack::object &object, gp::Message *message, const gp::Reflection *reflection, const FD *field)
    {
        if (!field->is_repeated())
            return singular(object, message, reflection, field);
        reflection->ClearField(message, field); // a repeated key replaces, as a singular one does
        if (object.type == msgpack::type::NIL)
            return true;
        if (field->is_map())
            return mapField(object, message, reflection, field);
        if (object.type != msgpack::type::ARRAY)
            return expected("an array", object);
        const uint32_t size = object.via.array.size;
        const msgpack::object *items = object.via.array.ptr;
        switch (field->cpp_type()) {
        case FD::CPPTYPE_INT32:
            return numbers<int32_t>(items, size, mutableRepeatedScalars<int32_t>(reflection, message, field));
        case FD::CPPTYPE_INT64:
            return numbers<int64_t>(items, size, mutableRepeatedScalars<int64_t>(reflection, message, field));
        case FD::CPPTYPE_UINT32:
            return numbers<uint32_t>(items, size, mutableRepeatedScalars<uint32_t>(reflection, message, field));
        case FD::CPPTYPE_UINT64:
            return numbers<uint64_t>(items, size, mutableRepeatedScalars<uint64_t>(reflection, message, field));
        case FD::CPPTYPE_FLOAT:
            return numbers<float>(items, size, mutableRepeatedScalars<float>(reflection, message, field));
        case FD::CPPTYPE_DOUBLE:
            return numbers<double>(items, size, mutableRepeatedScalars<double>(reflection, message, field));
        case FD::CPPTYPE_BOOL:
            return numbers<bool>(items, size, mutableRepeatedScalars<bool>(reflection, message, field));
        case FD::CPPTYPE_ENUM:
            for (uint32_t i = 0; i < size; ++i) {
                setIndex(i);
                int number = 0;
                if (!enumNumber(items[i], field, &number))
                    return false;
                reflection->AddEnumValue(message, field, number);
            }
            return true;
        case FD::CPPTYPE_STRING: {
            gp::RepeatedPtrField<std::string> *strings = mutableRepeatedStrings(reflection, message, field);
            strings->Reserve(static_cast<int>(size));
            const bool utf8 = needsUtf8(field);
            for (uint32_t i = 0; i < size; ++i) {
                setIndex(i);
                std::string_view text;
                if (!stringValue(items[i], utf8, &text))
                    return false;
                strings->Add()->assign(text.data(), text.size()); // Add() reuses a cleared element's buffer
            }
            return true;
        }
        case FD::CPPTYPE_MESSAGE:
            for (uint32_t i = 0; i < size; ++i) {
                setIndex(i);
                if (!this->message(items[i], reflection->AddMessage(message, field)))
                    return false;
            }
            return true;
        }
        return true;
    }

    static const FD *findField(const gp::Descriptor *type, std::string_view key)
    {
        // FindFieldByName takes a const std::string&; keys are short, so this stays in the small-string buffer.
        if (const FD *field = type->FindFieldByName(std::string(key)))
            return field;
        for (int i = 0; i < type->field_count(); ++i) {
            if (type->field(i)->json_name() == key)
                return type->field(i);
        }
        return nullptr;
    }

    bool push(const FD *field)
    {
        if (m_depth == m_path.size())
            return fail("messages nested more than " + std::to_string(kMaxMessageDepth) + " deep");
        m_path[m_depth++] = PathStep { field, -1, nullptr };
        return true;
    }
    void pop() { --m_depth; }
    void setIndex(int64_t index) { m_path[m_depth - 1].index = index; }

    template<class T> bool numbers(const msgpack::object *items, uint32_t size, gp::RepeatedField<T> *into)
    {
        into->Reserve(static_cast<int>(size));
        for (uint32_t i = 0; i < size; ++i) {
            setIndex(i);
            T number {};
            if (!scalar(items[i], &number))
                return false;
            into->AddAlreadyReserved(number);
        }
        return true;
    }

    bool mapField(
        const msgpack::object &object, gp::Message *message, const gp::Reflection *reflection, const FD *field)
    {
        if (object.type != msgpack::type::MAP)
            return expected("a map", object);
        const FD *keyField = field->message_type()->map_key();
        const FD *valueField = field->message_type()->map_value();
        const msgpack::object_kv *end = object.via.map.ptr + object.via.map.size;
        for (const msgpack::object_kv *kv = object.via.map.ptr; kv != end; ++kv) {
            m_path[m_depth - 1].mapKey = &kv->key;
            gp::Message *entry = reflection->AddMessage(message, field);
            const gp::Reflection *entryReflection = entry->GetReflection();
            if (!singular(kv->key, entry, entryReflection, keyField))
                return false;
            if (kv->val.type != msgpack::type::NIL && !singular(kv->val, entry, entryReflection, valueField))
                return false;
        }
        return true;
    }

    bool singular(
        const msgpack::object &object, gp::Message *message, const gp::Reflection *reflection, const FD *field)
    {
        switch (field->cpp_type()) {
        case FD::CPPTYPE_INT32:
            return setScalar<int32_t>(object, [&](int32_t v) { reflection->SetInt32(message, field, v); });
        case FD::CPPTYPE_INT64:
            return setScalar<int64_t>(object, [&](int64_t v) { reflection->SetInt64(message, field, v); });
        case FD::CPPTYPE_UINT32:
            return setScalar<uint32_t>(object, [&](uint32_t v) { reflection->SetUInt32(message, field, v); });
        case FD::CPPTYPE_UINT64:
            return setScalar<uint64_t>(object, [&](uint64_t v) { reflection->SetUInt64(message, field, v); });
        case FD::CPPTYPE_FLOAT:
            return setScalar<float>(object, [&](float v) { reflection->SetFloat(message, field, v); });
        case FD::CPPTYPE_DOUBLE:
            return setScalar<double>(object, [&](double v) { reflection->SetDouble(message, field, v); });
        case FD::CPPTYPE_BOOL:
            return setScalar<bool>(object, [&](bool v) { reflection->SetBool(message, field, v); });
        case FD::CPPTYPE_ENUM: {
            int number = 0;
            if (!enumNumber(object, field, &number))
                return false;
            reflection->SetEnumValue(message, field, number);
            return true;
        }
        case FD::CPPTYPE_STRING: {
            std::string_view text;
            if (!stringValue(object, needsUtf8(field), &text))
                return false;
            reflection->SetString(message, field, std::string(text));
            return true;
        }
        case FD::CPPTYPE_MESSAGE:
            return this->message(object, reflection->MutableMessage(message, field));
        }
        return true;
    }

    template<class T, class Set> bool setScalar(const msgpack::object &object, Set &&set)
    {
        T number {};
        if (!scalar(object, &number))
            return false;
        set(number);
        return true;
    }

    template<class T> bool scalar(const msgpack::object &object, T *out)
    {
        if constexpr (std::is_same_v<T, bool>) {
            if (object.type != msgpack::type::BOOLEAN)
                return expected("a bool", object);
            *out = object.via.boolean;
            return true;
        } else if constexpr (std::is_floating_point_v<T>) {
            switch (object.type) {
            case msgpack::type::FLOAT32:
            case msgpack::type::FLOAT64:
                // A double beyond float's range has no float value (converting it is undefined behaviour).
                if constexpr (std::is_same_v<T, float>) {
                    if (std::isfinite(object.via.f64)
                        && std::fabs(object.via.f64) > static_cast<double>(std::numeric_limits<float>::max()))
                        return fail(formatDouble(object.via.f64) + " is out of range for float");
                }
                *out = static_cast<T>(object.via.f64);
                return true;
            case msgpack::type::POSITIVE_INTEGER:
                *out = static_cast<T>(object.via.u64);
                return true;
            case msgpack::type::NEGATIVE_INTEGER:
                *out = static_cast<T>(object.via.i64);
                return true;
            default:
                return expected("a number", object);
            }
        } else {
            constexpr const char *kTypeName = std::is_same_v<T, int32_t> ? "int32"
                : std::is_same_v<T, int64_t>                             ? "int64"
                : std::is_same_v<T, uint32_t>                            ? "uint32"
                                                                         : "uint64";
            if (object.type == msgpack::type::POSITIVE_INTEGER) {
                if (object.via.u64 > static_cast<uint64_t>(std::numeric_limits<T>::max()))
                    return fail(std::to_string(object.via.u64) + " is out of range for " + kTypeName);
                *out = static_cast<T>(object.via.u64);
                return true;
            }
            if (object.type == msgpack::type::NEGATIVE_INTEGER) {
                if constexpr (std::is_unsigned_v<T>) {
                    return fail("negative value " + std::to_string(object.via.i64) + " for " + kTypeName);
                } else {
                    if (object.via.i64 < static_cast<int64_t>(std::numeric_limits<T>::min()))
                        return fail(std::to_string(object.via.i64) + " is out of range for " + kTypeName);
                    *out = static_cast<T>(object.via.i64);
                    return true;
                }
            }
            return expected("an integer", object);
        }
    }

    bool enumNumber(const msgpack::object &object, const FD *field, int *number)
    {
        const gp::EnumDescriptor *type = field->enum_type();
        if (object.type == msgpack::type::STR) {
            const gp::EnumValueDescriptor *value = type->FindValueByName(std::string(stringOf(object)));
            if (!value)
                return fail("\"" + std::string(stringOf(object)) + "\" is not a value of " + type->full_name());
            *number = value->number();
            return true;
        }
        if (object.type != msgpack::type::POSITIVE_INTEGER && object.type != msgpack::type::NEGATIVE_INTEGER)
            return expected("an enum number", object);
        int32_t value = 0;
        if (!scalar(object, &value))
            return false;
        // A closed (proto2) enum cannot hold an unknown number; reflection would move it to the unknown fields.
        if (type->file()->syntax() == gp::FileDescriptor::SYNTAX_PROTO2 && !type->FindValueByNumber(value))
            return fail(std::to_string(value) + " is not a value of " + type->full_name());
        *number = value;
        return true;
    }

    bool stringValue(const msgpack::object &object, bool utf8, std::string_view *text)
    {
        if (object.type != msgpack::type::STR && object.type != msgpack::type::BIN)
            return expected("str or bin", object);
        *text = stringOf(object);
        if (utf8 && !isValidUtf8(*text))
            return fail("invalid UTF-8 in a string field (bytes fields take any bytes)");
        return true;
    }

    bool expected(const char *what, const msgpack::object &object)
    {
        return fail(std::string("expected ") + what + ", got " + objectTypeName(object));
    }

    bool fail(const std::string &message)
    {
        if (!m_error)
            return false;
        std::string path;
        for (size_t i = 0; i < m_depth; ++i) {
            const PathStep &step = m_path[i];
            if (!path.empty())
                path += '.';
            path += step.field->name();
            if (step.index >= 0) {
                path += '[' + std::to_string(step.index) + ']';
            } else if (step.mapKey) {
                const msgpack::object &key = *step.mapKey;
                if (key.type == msgpack::type::STR)
                    path += "[\"" + std::string(stringOf(key)) + "\"]";
                else if (key.type == msgpack::type::POSITIVE_INTEGER)
                    path += '[' + std::to_string(key.via.u64) + ']';
                else if (key.type == msgpack::type::NEGATIVE_INTEGER)
                    path += '[' + std::to_string(key.via.i64) + ']';
                else if (key.type == msgpack::type::BOOLEAN)
                    path += key.via.boolean ? "[true]" : "[false]";
                else
                    path += std::string("[<") + objectTypeName(key) + ">]";
            }
        }
        *m_error = path.empty() ? message : path + ": " + message;
        return false;
    }

    std::string *m_error;
    bool m_ignoreUnknownFields;
    int m_messageDepth = 0;
    // A field step per nested message plus the one being read; more is refused as too deep anyway.
    std::array<PathStep, kMaxMessageDepth + 2> m_path;
    size_t m_depth = 0;
};

} // namespace

bool unpackMessage(const msgpack::object &object, gp::Message *message, std::string *error, bool ignoreUnknownFields)
{
    Unpacker unpacker(error, ignoreUnknownFields);
    return unpacker.message(object, message);
}

bool unpackMessageFields(const msgpack::object &array, gp::Message *message, std::string *error)
{
    Unpacker unpacker(error, false);
    return unpacker.fields(array, message);
}

bool unpackFieldValue(const msgpack::object &object, gp::Message *message, const FD *field, std::string *error)
{
    Unpacker unpacker(error, false);
    return unpacker.field(object, message, field);
}

} // namespace rpcscope
