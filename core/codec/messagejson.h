#pragma once

#include <QByteArray>
#include <QString>

#include <memory>

namespace google::protobuf {
class Descriptor;
class Message;
} // namespace google::protobuf

namespace rpcscope {

class Schema;

/**
 * Builds a message of @p type from JSON in the proto3 JSON mapping. A syntax error is reported with its line and
 * column; an unknown field or a value of the wrong type names the field. Returns nullptr and sets @p error then.
 */
std::unique_ptr<google::protobuf::Message> messageFromJson(
    const Schema &schema, const google::protobuf::Descriptor *type, const QByteArray &json, QString *error);

/// The message in the proto3 JSON mapping, with default-valued fields included.
QByteArray messageToJson(const google::protobuf::Message &message, bool indented = true);

/// An example request for @p type: every field present with a placeholder value, nested messages filled in.
QByteArray exampleJson(const Schema &schema, const google::protobuf::Descriptor *type);

/**
 * Applies a size knob "field=SIZE" to @p message: a bytes or string field gets SIZE bytes ("payload=10MiB"),
 * a repeated numeric field gets the values 1..SIZE ("nums=1000"), another repeated field gets SIZE elements
 * (copies of its first, or defaults). Nested fields are named with dots ("inner.payload").
 */
bool applyFill(google::protobuf::Message *message, const QString &spec, QString *error);

} // namespace rpcscope
