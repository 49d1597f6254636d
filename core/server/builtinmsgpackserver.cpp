#include "sessions.h"

#include "benchlogic.h"
#include "codec/msgpackcodec.h"
#include "net/tcplistener.h"

#include <google/protobuf/descriptor.h>

#include <atomic>
#include <deque>

namespace rpcscope {

namespace {

namespace asio = boost::asio;
using net::tcp;

constexpr size_t kReadChunk = size_t(64) * 1024;
constexpr size_t kMaxMessage = size_t(1) << 30;

/// Writes the reply's value as msgpack-rpc servers usually do: a one-field reply as its bare value.
void packResult(MsgpackPacker &packer, const google::protobuf::Message &reply)
{
    const google::protobuf::Descriptor *type = reply.GetDescriptor();
    if (type->field_count() == 1)
        packFieldValue(packer, reply, type->field(0));
    else
        packMessage(packer, reply);
}

class MsgpackSession : public std::enable_shared_from_this<MsgpackSession> {
public:
    MsgpackSession(tcp::socket socket, std::atomic<uint64_t> *served, std::chrono::microseconds extraDelay,
        std::chrono::nanoseconds burn)
        : m_socket(std::move(socket)), m_served(served), m_extraDelay(extraDelay), m_burn(burn)
    {
    }

    void read()
    {
        m_unpacker.reserve_buffer(kReadChunk);
        m_socket.async_read_some(asio::buffer(m_unpacker.buffer(), m_unpacker.buffer_capacity()),
            [self = shared_from_this()](boost::system::error_code ec, size_t n) { self->onRead(ec, n); });
    }

private:
    void onRead(boost::system::error_code ec, size_t n)
    {
        if (ec)
            return close();
        m_unpacker.buffer_consumed(n);
        try {
            msgpack::object_handle handle;
            while (m_unpacker.next(handle))
                handle_(handle.get());
        } catch (const std::exception &e) {
            // Not msgpack: nothing more on this connection can be trusted.
            return close();
        }
        if (m_unpacker.message_size() > kMaxMessage) // the message in progress, parsed or not
            return close();
        flush();
        read();
    }

    void handle_(const msgpack::object &message)
    {
        // [0, msgid, method, params]; notifications [2, method, params] are accepted and not answered.
        if (message.type != msgpack::type::ARRAY || message.via.array.size < 3)
            return;
        const msgpack::object *items = message.via.array.ptr;
        if (items[0].type != msgpack::type::POSITIVE_INTEGER)
            return;
        if (items[0].via.u64 != 0 || message.via.array.size != 4)
            return;
        if (items[1].type != msgpack::type::POSITIVE_INTEGER) {
            return;
        }
        const uint64_t msgid = items[1].via.u64;
        std::string_view name;
        if (items[2].type == msgpack::type::STR)
            name = { items[2].via.str.ptr, items[2].via.str.size };
        else if (items[2].type == msgpack::type::BIN)
            name = { items[2].via.bin.ptr, items[2].via.bin.size };
        const std::optional<BenchMethod> method = benchMethodByName(name);
        if (!method)
            return replyError(msgid, "no such method: " + std::string(name));
        const msgpack::object &params = items[3];
        google::protobuf::Message *request = m_messages.request(*method);
        request->Clear();
        std::string why;
        bool ok;
        if (params.type == msgpack::type::ARRAY && params.via.array.size == 1
            && params.via.array.ptr[0].type == msgpack::type::MAP)
            ok = unpackMessage(params.via.array.ptr[0], request, &why);
        else if (params.type == msgpack::type::ARRAY)
            ok = unpackMessageFields(params, request, &why);
        else
            ok = (why = "params must be an array", false);
        if (!ok)
            return replyError(msgid, "bad params: " + why);
        const std::chrono::microseconds delay = m_messages.run(*method) + m_extraDelay;
        burnCpuIfAsked(m_burn);
        m_served->fetch_add(1, std::memory_order_relaxed);
        if (delay.count() > 0) {
            // Answer later without holding up the calls behind it.
            std::string reply;
            packReply(&reply, msgid, *m_messages.reply(*method));
            auto timer = std::make_shared<asio::steady_timer>(m_socket.get_executor(), delay);
            timer->async_wait(
                [self = shared_from_this(), timer, reply = std::move(reply)](boost::system::error_code ec) {
                    if (ec)
                        return;
                    self->m_writer.pending().append(reply);
                    self->flush();
                });
            return;
        }
        packReply(&m_writer.pending(), msgid, *m_messages.reply(*method));
    }

    static void packReply(std::string *out, uint64_t msgid, const google::protobuf::Message &reply)
    {
        StringSink sink { out };
        MsgpackPacker packer(sink);
        packer.pack_array(4);
        packer.pack_uint8(1);
        packer.pack_uint64(msgid);
        packer.pack_nil();
        packResult(packer, reply);
    }

    void replyError(uint64_t msgid, const std::string &text)
    {
        StringSink sink { &m_writer.pending() };
        MsgpackPacker packer(sink);
        packer.pack_array(4);
        packer.pack_uint8(1);
        packer.pack_uint64(msgid);
        packer.pack(text);
        packer.pack_nil();
    }

    /// Replies go out in batches: whatever piled up while the previous write was on the wire.
    void flush()
    {
        m_writer.flush(m_socket, [self = shared_from_this()](boost::system::error_code ec) {
            if (ec)
                return self->close();
            self->flush();
        });
    }

    void close()
    {
        boost::system::error_code ignored;
        m_socket.close(ignored);
    }

    tcp::socket m_socket;
    std::atomic<uint64_t> *m_served;
    std::chrono::microseconds m_extraDelay;
    std::chrono::nanoseconds m_burn;
    msgpack::unpacker m_unpacker = boundedUnpacker(kMaxMessage);
    net::BatchedWriter m_writer;
    BenchMessages m_messages;
};

} // namespace

net::TcpListener::SessionFactory msgpackSessions(
    std::atomic<uint64_t> *served, std::chrono::microseconds extraDelay, std::chrono::nanoseconds burn)
{
    return [served, extraDelay, burn](tcp::socket socket) {
        std::make_shared<MsgpackSession>(std::move(socket), served, extraDelay, burn)->read();
    };
}

} // namespace rpcscope
