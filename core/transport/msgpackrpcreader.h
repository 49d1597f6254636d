#pragma once

// Internal to core: the byte-handling half of the msgpack-rpc transport, apart from its socket, so that tests and the
// fuzzer (tests/fuzz/fuzz_msgpackrpcreader.cpp) feed it bytes as a server would send them.

#include <msgpack.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

namespace rpcscope {

/// One message from a msgpack-rpc server, as MsgpackRpcReader::next() classifies it.
struct MsgpackRpcMessage {
    enum class Kind {
        Reply, ///< [1, msgid, error, result]
        Notification, ///< [2, method, params]: no call's reply (the spec allows them, Neovim sends them)
    };
    Kind kind = Kind::Reply;
    uint64_t msgid = 0; ///< a reply's
    const msgpack::object *error = nullptr; ///< a reply's; nil when the call succeeded
    const msgpack::object *result = nullptr; ///< a reply's
    size_t bytes = 0; ///< the message's size on the wire
};

/**
 * Splits what a msgpack-rpc server sends into messages of at most a receive limit. A larger message is refused
 * before it is buffered whole, and a header's claimed element count before anything is allocated for it
 * (boundedUnpacker()).
 */
class MsgpackRpcReader {
public:
    enum class Result {
        Message, ///< *message holds the next message (valid until the next call of next() or reset())
        NeedMore, ///< no whole message is buffered: read more
        TooLarge, ///< a message is (or will be) larger than the limit
        NotMsgpack, ///< the bytes are not msgpack; *why says what the parser found
        NotRpc, ///< valid msgpack, but neither a reply nor a notification
    };

    explicit MsgpackRpcReader(size_t receiveLimit);

    size_t limit() const { return m_limit; }
    /// Where the next read writes and how much it may write: at most @p chunk bytes, so that the limit is checked
    /// every @p chunk bytes (the buffer's capacity grows with what it holds).
    std::pair<char *, size_t> readBuffer(size_t chunk);
    /// @p n bytes were written at readBuffer().
    void consumed(size_t n);
    /// The next whole message among what was consumed. Anything but Message or NeedMore leaves the stream unusable.
    Result next(MsgpackRpcMessage *message, std::string *why);
    /// Drops everything buffered (the connection was closed).
    void reset();

private:
    const size_t m_limit;
    msgpack::unpacker m_unpacker;
    msgpack::object_handle m_handle;
};

} // namespace rpcscope
