#pragma once

// Internal to core: the byte-handling half of the msgpack-rpc transport, apart from its socket, so that tests and the
// fuzzer (tests/fuzz/fuzz_msgpackrpcreader.cpp) feed it bytes as a server would send them.

#include <msgpack.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

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
    /// Follows the bytes as they arrive, element by element, to see what the message in progress claims: a string,
    /// binary or extension header says how long it is before its bytes come, and one claiming more than the limit
    /// leaves (msgpack-c checks those lengths only once the bytes are all there: it would wait for 2 GiB).
    class ClaimScanner {
    public:
        /// Reads @p n more bytes; false once the message in progress claims more than @p limit bytes.
        bool feed(const unsigned char *data, size_t n, size_t limit);
        void reset() { *this = ClaimScanner(); }

    private:
        void elementDone();
        unsigned char m_header[9] = {}; ///< an element's header as far as it came
        size_t m_headerHave = 0;
        size_t m_headerNeed = 0; ///< 0: between elements
        uint64_t m_skip = 0; ///< payload bytes of the current element still to come
        uint64_t m_offset = 0; ///< bytes of the message in progress so far
        std::vector<uint64_t> m_open; ///< elements still to come in each open array or map, outermost first
    };

    const size_t m_limit;
    msgpack::unpacker m_unpacker;
    msgpack::object_handle m_handle;
    ClaimScanner m_claims;
    bool m_claimsTooLarge = false;
};

} // namespace rpcscope
