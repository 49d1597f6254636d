#pragma once

// Internal to core: the msgpack form of protobuf messages, for the msgpack codec and msgpack-rpc.

#include <msgpack.hpp>

#include <string>

namespace google::protobuf {
class FieldDescriptor;
class Message;
} // namespace google::protobuf

namespace rpcscope {

/// A msgpack output stream appending to a std::string (no intermediate buffer).
struct StringSink {
    std::string *out;
    void write(const char *data, size_t size) { out->append(data, size); }
};
using MsgpackPacker = msgpack::packer<StringSink>;

/// The message as a map keyed by field name (fields present per proto presence rules; repeated as arrays,
/// map fields as maps, bytes as bin, enums as numbers, nested messages as maps).
void packMessage(MsgpackPacker &packer, const google::protobuf::Message &message);
/// The message as an array of all its fields' values in declaration order (msgpack-rpc positional params).
void packMessageFields(MsgpackPacker &packer, const google::protobuf::Message &message);
/// One field's value as packMessage writes it under its key.
void packFieldValue(
    MsgpackPacker &packer, const google::protobuf::Message &message, const google::protobuf::FieldDescriptor *field);

/// Fills @p message from a map keyed by field name (json_name accepted too). Errors name the field path and
/// what was found ("items[2].score: expected a number, got str"). nil leaves a field at its default.
bool unpackMessage(const msgpack::object &object, google::protobuf::Message *message, std::string *error,
    bool ignoreUnknownFields = false);
/// Fills @p message from an array of field values in declaration order (shorter arrays leave the rest default).
bool unpackMessageFields(const msgpack::object &array, google::protobuf::Message *message, std::string *error);
/// Sets one field from a value as packFieldValue writes it (an array for a repeated field).
bool unpackFieldValue(const msgpack::object &object, google::protobuf::Message *message,
    const google::protobuf::FieldDescriptor *field, std::string *error);

/**
 * An unpacker for messages of at most @p maxMessageBytes: no array, map, string, binary or extension a header claims
 * can be larger than such a message could hold (an element takes a byte at least, a map entry two), so a hostile
 * header ("4G elements follow") is refused with msgpack::size_overflow before anything is allocated for it. Strings
 * and binaries refer into the unpacker's buffer, as by default.
 */
inline msgpack::unpacker boundedUnpacker(size_t maxMessageBytes)
{
    return { [](msgpack::type::object_type, std::size_t, void *) { return true; }, nullptr,
        MSGPACK_UNPACKER_INIT_BUFFER_SIZE,
        msgpack::unpack_limit(
            maxMessageBytes, maxMessageBytes / 2, maxMessageBytes, maxMessageBytes, maxMessageBytes, 1000) };
}

} // namespace rpcscope
