#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace google::protobuf {
class Message;
}

namespace rpcscope {

/// Header or trailer lines of a reply, in the order received.
using MetadataLines = std::vector<std::pair<std::string, std::string>>;

/// How one call ended, as the transport saw it.
struct CallOutcome {
    int status = 0; ///< a CallStatus value
    uint64_t bytesSent = 0;
    uint64_t bytesReceived = 0;
    std::string errorMessage; ///< empty on success
    /// Streaming calls only: messages the client sent and received on the stream (unary calls leave both 0).
    uint64_t messagesSent = 0;
    uint64_t messagesReceived = 0;
    /// msgpack-rpc: notifications ([2, method, params]) the server sent since the connection's previous reply, skipped.
    uint64_t notifications = 0;
    bool fatal = false; ///< the call could not even be made (a broken request): the run must stop
    /// A unary call's reply as the transport decoded it (a stream's messages, a client stream's one reply included,
    /// come through CallSink::messageReceived()). Owned by the slot and valid only inside callDone(); nullptr when
    /// nothing was decoded (--discard-response, a failed call, a reply that did not decode).
    const google::protobuf::Message *reply = nullptr;
    /// Only when the call asked for them (GrpcCall::captureMetadata, for a call shown to the user, never in a load
    /// run): the server's headers (gRPC initial metadata, HTTP response headers) and gRPC trailing metadata.
    MetadataLines headers;
    MetadataLines trailers;
};

/// What a stream message's time is measured from.
enum class MessageTiming {
    Untimed, ///< a client stream's one reply
    FirstMessage, ///< a server stream's first message: from the start of the call
    Gap, ///< a server stream's later messages: from the message before
    RoundTrip, ///< a bidi stream's replies: from the request it answers going out
};

/// The time of a streaming call's message number @p received (1-based), arrived @p now, and what it is measured
/// from: a server stream's from @p lastReceived (the call's start, for the first); a bidi stream's from when the
/// request it answers went out (@p sendTimes), or from @p lastReceived for a reply past the requests; a client
/// stream's one reply is untimed (-1).
inline std::pair<int64_t, MessageTiming> timeStreamMessage(bool clientStreams, bool serverStreams, uint64_t received,
    const std::vector<std::chrono::steady_clock::time_point> &sendTimes,
    std::chrono::steady_clock::time_point lastReceived, std::chrono::steady_clock::time_point now)
{
    if (!clientStreams)
        return { (now - lastReceived).count(), received == 1 ? MessageTiming::FirstMessage : MessageTiming::Gap };
    if (serverStreams)
        return { (now - (received <= sendTimes.size() ? sendTimes[received - 1] : lastReceived)).count(),
            MessageTiming::RoundTrip };
    return { -1, MessageTiming::Untimed };
}

/// Told when a slot's call ends; called on a transport thread.
class CallSink {
public:
    virtual ~CallSink() = default;
    virtual void callDone(int slot, CallOutcome &outcome) = 0;
    /**
     * A streaming call of @p slot received a message, @p latencyNs after what @p timing says; negative when nothing
     * is timed for it (a client stream's one reply). @p message is the message decoded (valid only during this call;
     * nullptr when not decoded). Called on a transport thread, before the call's callDone().
     */
    virtual void messageReceived(
        int slot, MessageTiming timing, int64_t latencyNs, const google::protobuf::Message *message)
        = 0;
};

/**
 * One concurrent caller's handle on a transport: it has at most one call in flight. start() issues the next call
 * and returns at once; the sink hears of its end on a transport thread, from where start() may be called again.
 */
class CallSlot {
public:
    virtual ~CallSlot() = default;
    /// Starts call number @p callNumber (0-based in sending order; picks the request when they vary).
    virtual void start(uint64_t callNumber) = 0;
    /// Ends the call in flight, if any, as soon as possible. Thread-safe.
    virtual void cancel() = 0;
};

/// A way of making calls to one target (gRPC, later HTTP/JSON, msgpack-rpc, in-process).
class Transport {
public:
    virtual ~Transport() = default;
    virtual std::unique_ptr<CallSlot> makeSlot(int index, CallSink *sink) = 0;
};

} // namespace rpcscope
