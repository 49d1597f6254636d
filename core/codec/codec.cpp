#include "codec.h"

#include "extensionjson.h"
#include "msgpackcodec.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <google/protobuf/util/json_util.h>

#include <climits>

namespace gp = google::protobuf;

namespace rpcscope {

namespace {

bool fail(std::string *error, std::string message)
{
    if (error)
        *error = std::move(message);
    return false;
}

bool encodeProtobuf(const gp::Message &message, std::string *out, std::string *error)
{
    if (message.SerializeToString(out))
        return true;
    if (!message.IsInitialized())
        return fail(error,
            "protobuf: cannot encode " + message.GetDescriptor()->full_name()
                + ", missing required fields: " + message.InitializationErrorString());
    return fail(error, "protobuf: cannot encode " + message.GetDescriptor()->full_name() + " (over 2 GiB?)");
}

bool decodeProtobuf(std::string_view bytes, gp::Message *message, std::string *error)
{
    if (bytes.size() > static_cast<size_t>(INT_MAX))
        return fail(error, "protobuf: " + std::to_string(bytes.size()) + " bytes is over protobuf's 2 GiB limit");
    if (message->ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
        return true;
    return fail(error,
        "protobuf: the " + std::to_string(bytes.size()) + " bytes are not a valid "
            + message->GetDescriptor()->full_name());
}

bool encodeJson(const gp::Message &message, std::string *out, std::string *error)
{
    gp::util::JsonPrintOptions options;
    // Foreign JSON servers (FastAPI, Flask...) declare snake_case models and want every field.
    options.preserve_proto_field_names = true;
    options.always_print_primitive_fields = true;
    out->clear(); // MessageToJsonString appends
    if (messageHasExtensions(message)) { // protobuf's printer would drop them
        *out = messageToJsonWithExtensions(message, options, false).toStdString();
        if (!out->empty())
            return true;
    }
    const auto status = gp::util::MessageToJsonString(message, out, options);
    if (status.ok())
        return true;
    return fail(
        error, "json: cannot encode " + message.GetDescriptor()->full_name() + ": " + std::string(status.message()));
}

bool decodeJson(std::string_view bytes, gp::Message *message, std::string *error, const DecodeOptions &decodeOptions)
{
    gp::util::JsonParseOptions options;
    options.ignore_unknown_fields = decodeOptions.ignoreUnknownFields;
    message->Clear();
    const auto status = gp::util::JsonStringToMessage(gp::StringPiece(bytes.data(), bytes.size()), message, options);
    if (status.ok())
        return true;
    if (jsonHasExtensionKeys(bytes)) { // "[pkg.ext]" keys, which protobuf's parser does not know
        QString why;
        if (jsonToMessageWithExtensions(QByteArray::fromRawData(bytes.data(), static_cast<qsizetype>(bytes.size())),
                message, decodeOptions.ignoreUnknownFields, &why))
            return true;
        return fail(error, "json: " + message->GetDescriptor()->full_name() + ": " + why.toStdString());
    }
    return fail(error, "json: " + message->GetDescriptor()->full_name() + ": " + std::string(status.message()));
}

bool encodeMsgpack(const gp::Message &message, std::string *out, std::string *error)
{
    out->clear();
    if (messageHasExtensions(message)) // better refused than dropped without a word
        return fail(error,
            "msgpack: " + message.GetDescriptor()->full_name()
                + " has proto2 extensions set, which the msgpack mapping (a map keyed by field name) cannot carry");
    try {
        StringSink sink { out };
        MsgpackPacker packer(sink);
        packMessage(packer, message);
        return true;
    } catch (const std::exception &e) {
        return fail(error, std::string("msgpack: ") + e.what());
    }
}

bool decodeMsgpack(std::string_view bytes, gp::Message *message, std::string *error, const DecodeOptions &options)
{
    message->Clear();
    if (bytes.empty())
        return fail(error, "msgpack: no data (an empty message is an empty map, 0x80)");
    // One zone per thread, emptied after each use: its first chunk (room for ~2700 objects) is kept, so decoding
    // costs no malloc unless the message is large.
    thread_local msgpack::zone zone(size_t(64) * 1024);
    struct ZoneClear {
        ~ZoneClear() { zone.clear(); }
    } zoneClear;
    // Limits no valid input can exceed, so a forged length cannot make msgpack allocate gigabytes up front: every
    // array element takes at least a byte, every map entry two. The depth limit covers containers other than
    // messages (the message depth itself is checked while filling the message, with a clearer error).
    const size_t n = bytes.size();
    const msgpack::unpack_limit limit(n, n / 2, n, n, n, 4 * 64 + 16);
    // Strings and bins point into @p bytes instead of being copied into the zone: they are only read until the
    // message is filled, before this function returns.
    const msgpack::unpack_reference_func referenceInput
        = [](msgpack::type::object_type, size_t, void *) { return true; };
    try {
        size_t offset = 0;
        const msgpack::object object = msgpack::unpack(zone, bytes.data(), n, offset, referenceInput, nullptr, limit);
        if (offset != n)
            return fail(error,
                "msgpack: " + std::to_string(n - offset) + " byte(s) after the value, which ends at byte "
                    + std::to_string(offset));
        return unpackMessage(object, message, error, options.ignoreUnknownFields);
    } catch (const msgpack::insufficient_bytes &) {
        return fail(error, "msgpack: truncated data (" + std::to_string(n) + " bytes end in the middle of a value)");
    } catch (const msgpack::depth_size_overflow &) {
        return fail(error, "msgpack: containers nested too deep");
    } catch (const msgpack::size_overflow &e) {
        return fail(error, std::string("msgpack: invalid data (") + e.what() + " beyond the data's length)");
    } catch (const std::exception &e) {
        return fail(error, std::string("msgpack: invalid data (") + e.what() + ')');
    }
}

} // namespace

QString codecName(Codec codec)
{
    switch (codec) {
    case Codec::Protobuf:
        return QStringLiteral("protobuf");
    case Codec::Json:
        return QStringLiteral("json");
    case Codec::Msgpack:
        return QStringLiteral("msgpack");
    }
    return {};
}

std::optional<Codec> parseCodec(const QString &name)
{
    const QString n = name.trimmed().toLower();
    if (n == u"protobuf" || n == u"proto" || n == u"pb")
        return Codec::Protobuf;
    if (n == u"json")
        return Codec::Json;
    if (n == u"msgpack" || n == u"mp")
        return Codec::Msgpack;
    return std::nullopt;
}

const char *codecContentType(Codec codec)
{
    switch (codec) {
    case Codec::Protobuf:
        return "application/x-protobuf";
    case Codec::Json:
        return "application/json";
    case Codec::Msgpack:
        return "application/x-msgpack"; // what msgpack-asgi and most servers match on
    }
    return "application/octet-stream";
}

bool encodeMessage(Codec codec, const gp::Message &message, std::string *out, std::string *error)
{
    switch (codec) {
    case Codec::Protobuf:
        return encodeProtobuf(message, out, error);
    case Codec::Json:
        return encodeJson(message, out, error);
    case Codec::Msgpack:
        return encodeMsgpack(message, out, error);
    }
    return fail(error, "unknown codec");
}

bool decodeMessage(
    Codec codec, std::string_view bytes, gp::Message *message, std::string *error, const DecodeOptions &options)
{
    switch (codec) {
    case Codec::Protobuf:
        return decodeProtobuf(bytes, message, error);
    case Codec::Json:
        return decodeJson(bytes, message, error, options);
    case Codec::Msgpack:
        return decodeMsgpack(bytes, message, error, options);
    }
    return fail(error, "unknown codec");
}

} // namespace rpcscope
