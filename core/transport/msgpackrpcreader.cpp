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
    if (!m_claimsTooLarge && !m_claims.feed(reinterpret_cast<const unsigned char *>(m_unpacker.buffer()), n, m_limit))
        m_claimsTooLarge = true;
    m_unpacker.buffer_consumed(n);
}

namespace {

/// The header size of the msgpack element whose type byte is @p t (1 to 9 bytes).
size_t headerSize(unsigned char t)
{
    if (t <= 0xbf || t >= 0xe0) // fixint, fixmap, fixarray, fixstr, negative fixint
        return 1;
    switch (t) {
    case 0xc4:
    case 0xcc:
    case 0xd0:
    case 0xd9:
        return 2; // 8-bit lengths, 8-bit ints
    case 0xc5:
    case 0xcd:
    case 0xd1:
    case 0xda:
    case 0xdc:
    case 0xde:
        return 3;
    case 0xc7:
        return 3; // ext 8: length and type
    case 0xc8:
        return 4; // ext 16: length and type
    case 0xc6:
    case 0xca:
    case 0xce:
    case 0xd2:
    case 0xdb:
    case 0xdd:
    case 0xdf:
        return 5;
    case 0xc9:
        return 6; // ext 32: length and type
    case 0xcb:
    case 0xcf:
    case 0xd3:
        return 9;
    case 0xd4:
    case 0xd5:
    case 0xd6:
    case 0xd7:
    case 0xd8:
        return 2; // fixext: type byte
    default:
        return 1; // nil, false, true, 0xc1 (the parser refuses it)
    }
}

uint64_t bigEndian(const unsigned char *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i)
        v = (v << 8) | p[i];
    return v;
}

} // namespace

bool MsgpackRpcReader::ClaimScanner::feed(const unsigned char *data, size_t n, size_t limit)
{
    for (size_t i = 0; i < n;) {
        if (m_skip > 0) { // payload bytes: skipped as they come
            const uint64_t take = std::min<uint64_t>(m_skip, n - i);
            m_skip -= take;
            m_offset += take;
            i += static_cast<size_t>(take);
            if (m_skip == 0)
                elementDone();
            continue;
        }
        if (m_headerNeed == 0) {
            m_headerNeed = headerSize(data[i]);
            m_headerHave = 0;
        }
        m_header[m_headerHave++] = data[i++];
        ++m_offset;
        if (m_headerHave < m_headerNeed)
            continue;
        const unsigned char t = m_header[0];
        m_headerNeed = 0;
        uint64_t payload = 0; // bytes that follow the header
        uint64_t children = 0; // elements that follow inside it
        if (t >= 0x80 && t <= 0x8f)
            children = 2 * uint64_t(t & 0x0f);
        else if (t >= 0x90 && t <= 0x9f)
            children = t & 0x0f;
        else if (t >= 0xa0 && t <= 0xbf)
            payload = t & 0x1f;
        else if (t == 0xc4 || t == 0xd9 || t == 0xc7)
            payload = m_header[1];
        else if (t == 0xc5 || t == 0xda || t == 0xc8)
            payload = bigEndian(m_header + 1, 2);
        else if (t == 0xc6 || t == 0xdb || t == 0xc9)
            payload = bigEndian(m_header + 1, 4);
        else if (t >= 0xd4 && t <= 0xd8)
            payload = uint64_t(1) << (t - 0xd4); // fixext 1, 2, 4, 8, 16
        else if (t == 0xdc || t == 0xde)
            children = bigEndian(m_header + 1, 2) * (t == 0xde ? 2 : 1);
        else if (t == 0xdd || t == 0xdf)
            children = bigEndian(m_header + 1, 4) * (t == 0xdf ? 2 : 1);
        if (m_offset + payload > limit)
            return false; // claimed before it came
        if (payload > 0) {
            m_skip = payload;
        } else if (children > 0) {
            if (m_open.size() >= 1000)
                return true; // deeper than the parser goes: it refuses the message itself
            m_open.push_back(children);
        } else {
            elementDone();
        }
    }
    return true;
}

void MsgpackRpcReader::ClaimScanner::elementDone()
{
    // The element that ended counts against the innermost open container; containers that are full end too.
    while (!m_open.empty() && --m_open.back() == 0)
        m_open.pop_back();
    if (m_open.empty())
        m_offset = 0; // a whole message: the next one starts
}

MsgpackRpcReader::Result MsgpackRpcReader::next(MsgpackRpcMessage *message, std::string *why)
{
    if (m_claimsTooLarge)
        return Result::TooLarge;
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
    m_claims.reset();
    m_claimsTooLarge = false;
    m_unpacker.reset();
    m_unpacker.remove_nonparsed_buffer();
}

} // namespace rpcscope
