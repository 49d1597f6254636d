#include "msgpackrpcreader.h"

#include "codec/msgpackcodec.h"

#include <algorithm>

namespace rpcscope {

MsgpackRpcReader::MsgpackRpcReader(size_t receiveLimit)
    : m_limit(receiveLimit), m_unpacker(boundedUnpacker(receiveLimit))
{
}

std::pair<char *, size_t> MsgpackRpcReader::readBuffer(size_t chunk)
{
    m_unpacker.reserve_buffer(chunk);
    return { m_unpacker.buffer(), std::min(m_unpacker.buffer_capacity(), chunk) };
}

void MsgpackRpcReader::consumed(size_t n)
{
    m_unpacker.buffer_consumed(n);
}

MsgpackRpcReader::Result MsgpackRpcReader::next(MsgpackRpcMessage *message, std::string *why)
{
    try {
        // The parser is incremental: parsed_size() is what it consumed of the message in progress in earlier reads
        // (0 after each message), nonparsed_size() what it has not looked at yet.
        const size_t earlier = m_unpacker.parsed_size();
        const size_t unparsed = m_unpacker.nonparsed_size();
        if (!m_unpacker.next(m_handle)) {
            // A message still incomplete past the limit is refused before more of it is buffered.
            return m_unpacker.message_size() > m_limit ? Result::TooLarge : Result::NeedMore;
        }
        message->bytes = earlier + unparsed - m_unpacker.nonparsed_size();
    } catch (const msgpack::size_overflow &) {
        return Result::TooLarge;
    } catch (const std::exception &e) {
        *why = e.what();
        return Result::NotMsgpack;
    }
    if (message->bytes > m_limit) // it came whole within one read
        return Result::TooLarge;
    const msgpack::object &object = m_handle.get();
    if (object.type != msgpack::type::ARRAY || object.via.array.size < 1
        || object.via.array.ptr[0].type != msgpack::type::POSITIVE_INTEGER)
        return Result::NotRpc;
    const msgpack::object *fields = object.via.array.ptr;
    if (object.via.array.size == 3 && fields[0].via.u64 == 2) {
        message->kind = MsgpackRpcMessage::Kind::Notification;
        message->msgid = 0;
        message->error = message->result = nullptr;
        return Result::Message;
    }
    if (object.via.array.size != 4 || fields[0].via.u64 != 1 || fields[1].type != msgpack::type::POSITIVE_INTEGER)
        return Result::NotRpc;
    message->kind = MsgpackRpcMessage::Kind::Reply;
    message->msgid = fields[1].via.u64;
    message->error = &fields[2];
    message->result = &fields[3];
    return Result::Message;
}

void MsgpackRpcReader::reset()
{
    m_unpacker.reset();
    m_unpacker.remove_nonparsed_buffer();
}

} // namespace rpcscope
