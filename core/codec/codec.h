#pragma once

#include <QString>

#include <optional>
#include <string>
#include <string_view>

namespace google::protobuf {
class Message;
} // namespace google::protobuf

namespace rpcscope {

/// How a message becomes bytes on the wire. Every codec works on any message of a loaded schema.
enum class Codec {
    Protobuf, ///< protobuf binary
    Json, ///< the proto3 JSON mapping, field names as in the .proto, default-valued fields included
    Msgpack, ///< a map keyed by field name; bytes as bin, nested messages as maps, repeated as arrays, enums as numbers
};

QString codecName(Codec codec); ///< "protobuf", "json", "msgpack"
/// Reads a codec name ("protobuf"/"proto"/"pb", "json", "msgpack"/"mp"), case-insensitive.
std::optional<Codec> parseCodec(const QString &name);
/// The HTTP Content-Type of a body in @p codec.
const char *codecContentType(Codec codec);

/// Options for decoding; the defaults are strict.
struct DecodeOptions {
    bool ignoreUnknownFields = false; ///< JSON/msgpack: skip keys that name no field (replies of foreign servers)
};

/// Appends @p message encoded with @p codec to @p out (cleared first); false with @p error.
bool encodeMessage(Codec codec, const google::protobuf::Message &message, std::string *out, std::string *error);
/// Decodes @p bytes into @p message (cleared first); false with @p error naming the field or position.
bool decodeMessage(Codec codec, std::string_view bytes, google::protobuf::Message *message, std::string *error,
    const DecodeOptions &options = {});

} // namespace rpcscope
