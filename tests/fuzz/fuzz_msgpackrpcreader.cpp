// The msgpack-rpc transport's reader (core/transport/msgpackrpcreader.h) on bytes a server could send: split into
// reads of any size, under a receive limit from the input, and each reply's result decoded as the transport does.

#include "fuzzapp.h"

#include "codec/msgpackcodec.h"
#include "schema/schema.h"
#include "transport/msgpackrpcreader.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <sstream>

RPCSCOPE_FUZZ_INITIALIZE_QT

using namespace rpcscope;

namespace {

const Schema &benchSchema()
{
    static const Schema schema = builtinBenchSchema();
    return schema;
}

/// What MsgpackSlot::finished() does with a result.
void decodeResult(const msgpack::object &result, const char *typeName)
{
    const google::protobuf::Descriptor *type = benchSchema().findMessage(QString::fromLatin1(typeName));
    if (!type)
        abort();
    std::unique_ptr<google::protobuf::Message> message = benchSchema().newMessage(type);
    std::string why;
    if (result.type == msgpack::type::MAP)
        unpackMessage(result, message.get(), &why, true);
    else
        unpackFieldValue(result, message.get(), type->field(0), &why);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    // Two bytes of settings: the receive limit (up to 64 KiB, so that TooLarge is reached) and the read size.
    if (size < 2)
        return 0;
    const size_t limit = 1 + size_t(data[0]) * 256;
    const size_t chunk = 1 + data[1] % 64;
    data += 2;
    size -= 2;

    MsgpackRpcReader reader(limit);
    MsgpackRpcMessage message;
    std::string why;
    size_t offset = 0;
    while (offset < size) {
        const auto [buffer, room] = reader.readBuffer(chunk);
        const size_t n = std::min(room, size - offset);
        memcpy(buffer, data + offset, n);
        offset += n;
        reader.consumed(n);
        for (;;) {
            const MsgpackRpcReader::Result result = reader.next(&message, &why);
            if (result == MsgpackRpcReader::Result::NeedMore)
                break;
            if (result != MsgpackRpcReader::Result::Message)
                return 0; // the transport breaks the connection here
            if (message.bytes > limit)
                abort(); // a message past the limit must never be handed on
            if (message.kind == MsgpackRpcMessage::Kind::Reply) {
                if (message.error->type != msgpack::type::NIL && message.error->type != msgpack::type::STR) {
                    std::ostringstream text;
                    text << *message.error;
                }
                decodeResult(*message.result, "rpcscope.bench.v1.SumResponse");
                decodeResult(*message.result, "rpcscope.bench.v1.ListResponse");
            }
        }
    }
    return 0;
}
