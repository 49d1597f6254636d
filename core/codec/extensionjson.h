#pragma once

#include <QByteArray>
#include <QString>

#include <string_view>

namespace google::protobuf {
class Message;
namespace util {
struct JsonPrintOptions;
}
} // namespace google::protobuf

namespace rpcscope {

/**
 * proto2 extensions in JSON. protobuf 3.21's JSON parser refuses a key "[pkg.ext]" ("Cannot find field") and its
 * printer drops set extensions without a word; these fill both gaps the way protobuf's later JSON does: an extension
 * is the key "[" + its full name + "]" inside the object of the message it extends, its value in the proto3 JSON
 * mapping. Plain JSON keeps protobuf's own (faster, exact) path: callers check jsonHasExtensionKeys() and
 * messageHasExtensions() first.
 */

/// True when @p json may hold an extension key (a string starting with "["): a cheap textual test.
bool jsonHasExtensionKeys(std::string_view json);

/**
 * Parses the JSON object @p json into @p message (cleared first), extension keys included, at any depth (inside
 * singular, repeated and map-valued message fields). An error names the path of the field ("child.[p.ext]").
 */
bool jsonToMessageWithExtensions(
    const QByteArray &json, google::protobuf::Message *message, bool ignoreUnknownFields, QString *error);

/// True when @p message or a message inside it has an extension set.
bool messageHasExtensions(const google::protobuf::Message &message);

/// @p message as JSON with its extensions (see above); the rest as protobuf prints it with @p options.
QByteArray messageToJsonWithExtensions(
    const google::protobuf::Message &message, const google::protobuf::util::JsonPrintOptions &options, bool indented);

} // namespace rpcscope
