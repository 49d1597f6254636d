// The msgpack form of protobuf messages written (see msgpackcodec.h); reading them back is msgpackunpack.cpp.
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

// Reflection::GetRepeatedField is deprecated in favour of RepeatedFieldRef, whose every element access is a
// virtual call. The direct RepeatedField is what makes a 1000-number array cheap, so the deprecated call is kept,
// here only (msgpackunpack.cpp does the same for writing into a message).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
template<class T>
const gp::RepeatedField<T> &repeatedScalars(
    const gp::Reflection *reflection, const gp::Message &message, const FD *field)
{
    return reflection->GetRepeatedField<T>(message, field);
}
#pragma GCC diagnostic pop

void packString(MsgpackPacker &packer, const std::string &value, bool binary)
{
    const auto size = static_cast<uint32_t>(value.size());
    if (binary) {
        packer.pack_bin(size);
        packer.pack_bin_body(value.data(), size);
    } else {
        packer.pack_str(size);
        packer.pack_str_body(value.data(), size);
    }
}

void packKey(MsgpackPacker &packer, const std::string &name)
{
    packString(packer, name, false);
}

template<class T> void packNumbers(MsgpackPacker &packer, const gp::RepeatedField<T> &values)
{
    packer.pack_array(static_cast<uint32_t>(values.size()));
    for (const T value : values)
        packer.pack(value); // msgpack-c picks the smallest int form; float stays float32, double float64
}

void packSingular(MsgpackPacker &packer, const gp::Message &message, const gp::Reflection *reflection, const FD *field)
{
    switch (field->cpp_type()) {
    case FD::CPPTYPE_INT32:
        packer.pack_int32(reflection->GetInt32(message, field));
        break;
    case FD::CPPTYPE_INT64:
        packer.pack_int64(reflection->GetInt64(message, field));
        break;
    case FD::CPPTYPE_UINT32:
        packer.pack_uint32(reflection->GetUInt32(message, field));
        break;
    case FD::CPPTYPE_UINT64:
        packer.pack_uint64(reflection->GetUInt64(message, field));
        break;
    case FD::CPPTYPE_FLOAT:
        packer.pack_float(reflection->GetFloat(message, field));
        break;
    case FD::CPPTYPE_DOUBLE:
        packer.pack_double(reflection->GetDouble(message, field));
        break;
    case FD::CPPTYPE_BOOL:
        if (reflection->GetBool(message, field))
            packer.pack_true();
        else
            packer.pack_false();
        break;
    case FD::CPPTYPE_ENUM:
        packer.pack_int32(reflection->GetEnumValue(message, field));
        break;
    case FD::CPPTYPE_STRING: {
        std::string scratch;
        packString(packer, reflection->GetStringReference(message, field, &scratch), field->type() == FD::TYPE_BYTES);
        break;
    }
    case FD::CPPTYPE_MESSAGE:
        packMessage(packer, reflection->GetMessage(message, field));
        break;
    }
}

void packRepeated(MsgpackPacker &packer, const gp::Message &message, const gp::Reflection *reflection, const FD *field)
{
    const int size = reflection->FieldSize(message, field);
    if (field->is_map()) {
        // Map fields are repeated entry messages (key = 1, value = 2) to reflection, on generated and dynamic
        // messages alike.
        packer.pack_map(static_cast<uint32_t>(size));
        const FD *keyField = field->message_type()->map_key();
        const FD *valueField = field->message_type()->map_value();
        for (int i = 0; i < size; ++i) {
            const gp::Message &entry = reflection->GetRepeatedMessage(message, field, i);
            const gp::Reflection *entryReflection = entry.GetReflection();
            packSingular(packer, entry, entryReflection, keyField);
            packSingular(packer, entry, entryReflection, valueField);
        }
        return;
    }
    switch (field->cpp_type()) {
    case FD::CPPTYPE_INT32:
        packNumbers(packer, repeatedScalars<int32_t>(reflection, message, field));
        return;
    case FD::CPPTYPE_INT64:
        packNumbers(packer, repeatedScalars<int64_t>(reflection, message, field));
        return;
    case FD::CPPTYPE_UINT32:
        packNumbers(packer, repeatedScalars<uint32_t>(reflection, message, field));
        return;
    case FD::CPPTYPE_UINT64:
        packNumbers(packer, repeatedScalars<uint64_t>(reflection, message, field));
        return;
    case FD::CPPTYPE_FLOAT:
        packNumbers(packer, repeatedScalars<float>(reflection, message, field));
        return;
    case FD::CPPTYPE_DOUBLE:
        packNumbers(packer, repeatedScalars<double>(reflection, message, field));
        return;
    case FD::CPPTYPE_BOOL:
        packNumbers(packer, repeatedScalars<bool>(reflection, message, field));
        return;
    case FD::CPPTYPE_ENUM:
        packer.pack_array(static_cast<uint32_t>(size));
        for (int i = 0; i < size; ++i)
            packer.pack_int32(reflection->GetRepeatedEnumValue(message, field, i));
        return;
    case FD::CPPTYPE_STRING: {
        packer.pack_array(static_cast<uint32_t>(size));
        const bool binary = field->type() == FD::TYPE_BYTES;
        std::string scratch;
        for (int i = 0; i < size; ++i)
            packString(packer, reflection->GetRepeatedStringReference(message, field, i, &scratch), binary);
        return;
    }
    case FD::CPPTYPE_MESSAGE:
        packer.pack_array(static_cast<uint32_t>(size));
        for (int i = 0; i < size; ++i)
            packMessage(packer, reflection->GetRepeatedMessage(message, field, i));
        return;
    }
}

/// A present field of a message being packed. An implicit-presence scalar carries the value that showed it present,
/// so that it is not read through reflection a second time (each read costs about what the presence check does).
struct PresentField {
    // No initializers: an array of these is made per message packed, and findPresent sets what is read.
    const FD *field;
    bool hasValue;
    union {
        int64_t i64;
        uint64_t u64;
        double f64;
        float f32;
        bool b;
        const std::string *str;
    };
};

/// Whether @p field is present, by protobuf's own rules (HasField's): explicit presence (messages, `optional`, oneof
/// members, proto2) when set, implicit presence (proto3 scalars) when not the default, repeated when not empty.
bool findPresent(const gp::Message &message, const gp::Reflection *reflection, const FD *field, PresentField *out)
{
    out->field = field;
    out->hasValue = false;
    if (field->is_repeated())
        return reflection->FieldSize(message, field) > 0;
    if (field->has_presence())
        return reflection->HasField(message, field);
    out->hasValue = true;
    switch (field->cpp_type()) {
    case FD::CPPTYPE_INT32:
        out->i64 = reflection->GetInt32(message, field);
        return out->i64 != 0;
    case FD::CPPTYPE_INT64:
        out->i64 = reflection->GetInt64(message, field);
        return out->i64 != 0;
    case FD::CPPTYPE_ENUM:
        out->i64 = reflection->GetEnumValue(message, field);
        return out->i64 != 0;
    case FD::CPPTYPE_UINT32:
        out->u64 = reflection->GetUInt32(message, field);
        return out->u64 != 0;
    case FD::CPPTYPE_UINT64:
        out->u64 = reflection->GetUInt64(message, field);
        return out->u64 != 0;
    case FD::CPPTYPE_FLOAT: // by bits, as protobuf: -0.0 is present
        out->f32 = reflection->GetFloat(message, field);
        return std::bit_cast<uint32_t>(out->f32) != 0;
    case FD::CPPTYPE_DOUBLE:
        out->f64 = reflection->GetDouble(message, field);
        return std::bit_cast<uint64_t>(out->f64) != 0;
    case FD::CPPTYPE_BOOL:
        out->b = reflection->GetBool(message, field);
        return out->b;
    case FD::CPPTYPE_STRING:
        if (field->options().ctype() == gp::FieldOptions::CORD)
            break; // read into a scratch string: no reference to keep
        {
            std::string scratch;
            out->str = &reflection->GetStringReference(message, field, &scratch);
        }
        return !out->str->empty();
    case FD::CPPTYPE_MESSAGE:
        break;
    }
    out->hasValue = false;
    return reflection->HasField(message, field);
}

void packPresent(
    MsgpackPacker &packer, const gp::Message &message, const gp::Reflection *reflection, const PresentField &present)
{
    const FD *field = present.field;
    packKey(packer, field->name());
    if (!present.hasValue) {
        if (field->is_repeated())
            packRepeated(packer, message, reflection, field);
        else
            packSingular(packer, message, reflection, field);
        return;
    }
    switch (field->cpp_type()) {
    case FD::CPPTYPE_INT32:
    case FD::CPPTYPE_INT64:
    case FD::CPPTYPE_ENUM:
        packer.pack_int64(present.i64);
        break;
    case FD::CPPTYPE_UINT32:
    case FD::CPPTYPE_UINT64:
        packer.pack_uint64(present.u64);
        break;
    case FD::CPPTYPE_FLOAT:
        packer.pack_float(present.f32);
        break;
    case FD::CPPTYPE_DOUBLE:
        packer.pack_double(present.f64);
        break;
    case FD::CPPTYPE_BOOL:
        if (present.b)
            packer.pack_true();
        else
            packer.pack_false();
        break;
    case FD::CPPTYPE_STRING:
        packString(packer, *present.str, field->type() == FD::TYPE_BYTES);
        break;
    case FD::CPPTYPE_MESSAGE:
        break;
    }
}

} // namespace

void packMessage(MsgpackPacker &packer, const gp::Message &message)
{
    const gp::Descriptor *type = message.GetDescriptor();
    const gp::Reflection *reflection = message.GetReflection();
    const int fieldCount = type->field_count();
    // The map's size comes first, so presence is known before packing: remembered on the stack for the usual
    // message, checked twice (no allocation either way) for one with very many fields.
    constexpr int kRemembered = 64;
    if (fieldCount <= kRemembered) {
        std::array<PresentField, kRemembered> present;
        uint32_t count = 0;
        for (int i = 0; i < fieldCount; ++i) {
            if (findPresent(message, reflection, type->field(i), &present[count]))
                ++count;
        }
        packer.pack_map(count);
        for (uint32_t i = 0; i < count; ++i)
            packPresent(packer, message, reflection, present[i]);
        return;
    }
    PresentField present;
    uint32_t count = 0;
    for (int i = 0; i < fieldCount; ++i)
        count += findPresent(message, reflection, type->field(i), &present) ? 1 : 0;
    packer.pack_map(count);
    for (int i = 0; i < fieldCount; ++i) {
        if (findPresent(message, reflection, type->field(i), &present))
            packPresent(packer, message, reflection, present);
    }
}

void packMessageFields(MsgpackPacker &packer, const gp::Message &message)
{
    const gp::Descriptor *type = message.GetDescriptor();
    const gp::Reflection *reflection = message.GetReflection();
    const int fieldCount = type->field_count();
    packer.pack_array(static_cast<uint32_t>(fieldCount));
    for (int i = 0; i < fieldCount; ++i) {
        const FD *field = type->field(i);
        if (field->is_repeated()) {
            packRepeated(packer, message, reflection, field);
        } else if (field->has_presence() && !reflection->HasField(message, field)) {
            // An unset message, `optional` or oneof member is nil, not a default that would read back as set.
            packer.pack_nil();
        } else {
            packSingular(packer, message, reflection, field);
        }
    }
}

void packFieldValue(MsgpackPacker &packer, const gp::Message &message, const FD *field)
{
    const gp::Reflection *reflection = message.GetReflection();
    if (field->is_repeated())
        packRepeated(packer, message, reflection, field);
    else
        packSingular(packer, message, reflection, field);
}

} // namespace rpcscope
