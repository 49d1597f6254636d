// The gRPC-on-bare-HTTP/2 transport's parts, shared by its files (not a public header of core):
// - H2GrpcSlot, one caller's calls: the unary request and reply (h2grpccall.cpp), streams (h2grpcstreams.cpp);
// - H2GrpcConnection, one HTTP/2 connection carrying many calls: socket, TLS, nghttp2 session, GOAWAY
//   (h2grpcconnection.cpp);
// - H2GrpcTransport, the connections and what every call shares (h2grpctransport.cpp, with makeH2GrpcTransport()).

#pragma once

#include "metrics/callstatus.h"
#include "net/asio.h"

#include "grpccompression.h"
#include "requestbodies.h"
#include "transportfactories.h"

#include <boost/asio/ssl/stream.hpp>

#include <nghttp2/nghttp2.h>

#include <chrono>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace rpcscope::h2grpc {

namespace asio = boost::asio;
using net::tcp;
using Clock = std::chrono::steady_clock;
using TlsStream = asio::ssl::stream<tcp::socket>;

/// How much one read of the socket takes at most.
inline constexpr size_t kReadChunk = size_t(64) * 1024;

class H2GrpcTransport;
class H2GrpcConnection;

/// gRPC's grpc-timeout header value for @p left (rounded up, never 0).
std::string grpcTimeout(std::chrono::nanoseconds left);

class H2GrpcSlot final : public BodySlot {
public:
    H2GrpcSlot(H2GrpcTransport *transport, H2GrpcConnection *connection, int index, CallSink *sink);
    /// Message bytes, as the gRPC transport counts them: without gRPC's 5-byte prefixes, HTTP/2 framing or headers.
    uint64_t messageBytesSent() const { return streaming() ? m_streamBytesSent : m_sent > 5 ? m_sent - 5 : 0; }
    uint64_t messageBytesReceived() const
    {
        return streaming() ? m_streamBytesReceived : m_received > 5 ? m_received - 5 : 0;
    }
    void start(uint64_t callNumber) override;
    void cancel() override;
    /// Reports the call's end; decodes a unary call's reply (@p message, without its prefix; nullptr: none) when
    /// replies are decoded.
    void finished(CallOutcome &outcome, const std::string_view *message);
    /// Its stream closed (and it is not tried again): the outcome from its headers, trailers and data, reported.
    /// @p goingAway: the server sent GOAWAY, which a REFUSED_STREAM reset then means.
    void streamEnded(uint32_t errorCode, bool goingAway);
    /// A message whose compressed flag is set, inflated as the reply's grpc-encoding says (into m_inflated); a
    /// failure's status and message in @p outcome.
    std::string_view inflated(std::string_view compressed, CallOutcome *outcome);

    // Streaming calls, on the connection's thread (h2grpcstreams.cpp).
    bool streaming() const { return m_clientStreams || m_serverStreams; }
    /// The stream is open: the call's clock starts, its first message goes, its call-duration timer is set.
    void beginStream();
    /// Sends the next message when the plan wants one now, or waits (interval, ping-pong), or closes the writes.
    void sendNext();
    /// nghttp2 wants request bytes: from the queued messages, DEFERRED when none is queued, EOF once closed.
    ssize_t readStreamRequest(uint8_t *buffer, size_t length, uint32_t *flags);
    /// DATA of a streaming call: cut into messages, each timed, decoded and told to the sink as it completes.
    void takeData(const uint8_t *data, size_t length);
    /// The call failed on our side (a reply that does not parse, a message over the limit): its stream is reset.
    void failStream(int status, std::string message);

    H2GrpcTransport *m_transport;
    H2GrpcConnection *m_connection;
    // The call in flight, owned by the connection's thread.
    int32_t m_stream = -1;
    /// The request as sent is the 5-byte gRPC message prefix, then m_body; DATA frames are copied from them once,
    /// into the connection's output (nghttp2's no-copy mode: not through nghttp2's own buffer as well).
    char m_prefix[5] = {};
    size_t requestSize() const { return 5 + m_body->size(); }
    /// Appends @p length bytes of the request from m_sent on to what @p writer writes: copied, or lent when they
    /// are many and the body lives on (a write of a call cancelled meanwhile still reads them).
    void appendRequest(net::BatchedWriter &writer, size_t length);
    size_t m_sent = 0; ///< of the request, written out so far
    size_t m_announced = 0; ///< of the request, in DATA frames nghttp2 was told of and has not had written yet
    std::string m_reply; ///< the reply's DATA as received (prefix included)
    uint64_t m_received = 0; ///< DATA bytes received, the 5-byte prefix included
    int m_httpStatus = 0;
    int m_grpcStatus = -1; ///< -1: not seen (yet)
    std::string m_badGrpcStatus; ///< a grpc-status that is no gRPC code, as it came (the call counts UNKNOWN)
    GrpcEncoding m_encoding = GrpcEncoding::Identity; ///< the reply's grpc-encoding
    std::string m_encodingName; ///< as it came, for an error naming one this client cannot inflate
    std::string m_inflated; ///< a compressed message, inflated
    std::string m_grpcMessage;
    /// The server's metadata, kept only for a call shown to the user (GrpcCall::captureMetadata).
    MetadataLines m_headers;
    MetadataLines m_trailers;
    bool m_tooLarge = false;
    bool m_onWire = false; ///< its HEADERS went out (nghttp2 may hold a request back: MAX_CONCURRENT_STREAMS)
    int m_retries = 0; ///< times the call went out and a GOAWAY refused it (then it is tried once more)
    Clock::time_point m_deadline;

    const bool m_clientStreams;
    const bool m_serverStreams;
    const bool m_pingPong; ///< bidi: each message waits for the reply to the one before
    uint64_t m_callNumber = 0;
    uint64_t m_callId = 0; ///< counts the slot's calls: a timer set for an earlier call does nothing
    std::deque<std::string> m_outbox; ///< framed messages not yet handed to nghttp2 (the front from m_outboxOffset)
    size_t m_outboxOffset = 0;
    bool m_writesClosed = false; ///< no more messages: the request ends once the outbox is empty
    bool m_deferred = false; ///< nghttp2 waits for a message: resumed when one is queued or the writes close
    uint64_t m_messagesSent = 0;
    uint64_t m_messagesReceived = 0;
    uint64_t m_streamBytesSent = 0;
    uint64_t m_streamBytesReceived = 0;
    std::string m_inbox; ///< DATA received that is not a whole message yet
    Clock::time_point m_lastReceived;
    Clock::time_point m_lastSent;
    std::vector<Clock::time_point> m_sendTimes; ///< bidi: when each message went, to pair replies with
    asio::steady_timer m_intervalTimer;
    asio::steady_timer m_callTimer;
    bool m_intervalWait = false;
    bool m_timeUp = false; ///< --stream-call-duration is over
    bool m_endedByClient = false; ///< the client ended it as planned (enough messages, time up): OK
    std::string m_failure;
    int m_failureStatus = 0;

private:
    void writeMessage();
    void closeWrites();
    void messageArrived(const char *data, size_t length);
    void endByClient();
};

/**
 * One HTTP/2 connection carrying many calls at once, each on its own stream; nghttp2 does the framing, HPACK and
 * flow control, this class the socket. Lives on one I/O thread.
 */
class H2GrpcConnection {
public:
    H2GrpcConnection(H2GrpcTransport *transport, asio::io_context &context);
    ~H2GrpcConnection() { closeSession(); }

    asio::io_context &context() { return m_context; }

    /// Sets @p slot's call up and sends it, or queues it for the connection to come; @p again: a call the server
    /// refused unseen (see streamClosed()), keeping its deadline.
    void submit(H2GrpcSlot *slot, bool again = false);
    /// A streaming call queued a message or closed its writes while nghttp2 waited: it goes out.
    void resume(H2GrpcSlot *slot)
    {
        if (slot->m_stream > 0 && m_session && nghttp2_session_resume_data(m_session, slot->m_stream) == 0)
            flush();
    }
    /// Resets @p slot's stream (a streaming call the client ends); the call ends when the stream closes.
    void reset(H2GrpcSlot *slot)
    {
        if (slot->m_stream > 0 && m_session) {
            nghttp2_submit_rst_stream(m_session, NGHTTP2_FLAG_NONE, slot->m_stream, NGHTTP2_CANCEL);
            flush();
        }
    }
    /// Posted from the engine's thread: the slot may be gone by the time this runs (a run ended and destroyed while a
    /// cancel of its last call was queued), so only its address is used until it is found among the calls in
    /// flight or waiting, as the HTTP and msgpack-rpc connections do.
    void cancel(H2GrpcSlot *slot);
    void checkDeadlines(Clock::time_point now);

private:
    /// Opens @p slot's stream on the open connection (its call was set up by submit()).
    void startStream(H2GrpcSlot *slot);
    void connect();
    /// The TCP connection is up (and its TLS handshake done): the HTTP/2 session starts, the waiting calls go.
    void opened();
    /// TLS: checks what the handshake agreed on (HTTP/2 by ALPN); false after breaking the connection.
    bool tlsAgreed();
    bool startSession(std::string *error);
    /// The TCP socket under TLS, or the plaintext one.
    tcp::socket &socket() { return m_tls ? m_tls->next_layer() : m_socket; }
    /// Runs @p f with the stream the connection reads and writes: the TLS stream or the plaintext socket.
    template<class F> void withStream(F &&f)
    {
        if (m_tls)
            f(*m_tls);
        else
            f(m_socket);
    }
    void closeSession()
    {
        if (m_session)
            nghttp2_session_del(m_session);
        m_session = nullptr;
    }
    void flush();
    void read();
    /// Ends @p slot's call before its stream closed (deadline, cancel): resets the stream; a late reply is dropped.
    void endCall(H2GrpcSlot *slot, int status, std::string message, uint32_t resetCode);
    /// Ends a call that never got a stream (it waited for the connection).
    void endWaiting(H2GrpcSlot *slot, int status, std::string message);
    /// The stream closed: the call's outcome from its headers, trailers and data.
    void streamClosed(H2GrpcSlot *slot, uint32_t errorCode);
    /// The connection is unusable: every call on it fails with @p message; the next call reconnects.
    void breakConnection(int status, const std::string &message);

    // nghttp2's callbacks, with the connection as user data.
    static ssize_t readRequest(nghttp2_session *, int32_t stream, uint8_t *buffer, size_t length, uint32_t *flags,
        nghttp2_data_source *source, void *);
    static int onHeader(nghttp2_session *, const nghttp2_frame *frame, const uint8_t *name, size_t nameLength,
        const uint8_t *value, size_t valueLength, uint8_t, void *);
    static int onData(nghttp2_session *, uint8_t, int32_t stream, const uint8_t *data, size_t length, void *);
    static int onStreamClose(nghttp2_session *, int32_t stream, uint32_t errorCode, void *user);
    static int onFrame(nghttp2_session *, const nghttp2_frame *frame, void *user);
    static int onFrameSent(nghttp2_session *session, const nghttp2_frame *frame, void *);
    /// Once a server going away has answered (or refused) the calls it took: a new connection for those waiting.
    void drainedLater();
    /// A write failed: see m_sendFailure.
    void sendFailed(const std::string &message);
    static int sendRequestData(nghttp2_session *, nghttp2_frame *frame, const uint8_t *frameHeader, size_t length,
        nghttp2_data_source *source, void *user);
    static ssize_t dataFrameLength(
        nghttp2_session *, uint8_t, int32_t, int32_t connectionWindow, int32_t streamWindow, uint32_t maxFrame, void *);

    H2GrpcTransport *m_transport;
    asio::io_context &m_context;
    tcp::socket m_socket; ///< plaintext
    /// TLS: a new stream for each connection (one that broke cannot be used again). The ones before it are kept
    /// until the next TCP connect completes, by when the handlers their close cancelled have run.
    std::unique_ptr<TlsStream> m_tls;
    std::vector<std::unique_ptr<TlsStream>> m_retiredTls;
    nghttp2_session *m_session = nullptr;
    enum class State { Closed, Connecting, Open } m_state = State::Closed;
    /// The server sent GOAWAY: the calls it took finish here, new ones wait for the connection made after.
    bool m_goingAway = false;
    /// A write failed (the server reset the connection): what it said. The connection is not broken yet: what the
    /// server sent before its reset, a GOAWAY above all, is still to be read, and the calls it refused unseen go on
    /// the next connection instead of failing. The read that ends breaks it, or the timer if no read ends.
    std::string m_sendFailure;
    asio::steady_timer m_sendFailureTimer;
    /// Counts broken connections: a handler of the socket's earlier life (one already queued when it was closed)
    /// sees another epoch and does nothing, instead of feeding or breaking the connection made since.
    uint64_t m_epoch = 0;
    std::unordered_map<int32_t, H2GrpcSlot *> m_streams; ///< the calls in flight, by stream
    std::vector<H2GrpcSlot *> m_waiting; ///< submitted while connecting
    net::BatchedWriter m_writer; ///< what nghttp2 produces, written out
    /// Inside nghttp2_session_mem_recv(): its callbacks end calls, whose callers may submit the next at once, but
    /// nghttp2 must not be asked to send from inside them; read() flushes once it returns.
    bool m_receiving = false;
    bool m_sending = false; ///< inside flush()'s nghttp2_session_mem_send() loop
    std::vector<uint8_t> m_readBuffer = std::vector<uint8_t>(kReadChunk);
    /// A call's request headers when it has a deadline: the transport's (copied once), with its own grpc-timeout.
    std::vector<nghttp2_nv> m_callNv;
    std::string m_callTimeout;
};

class H2GrpcTransport final : public Transport {
public:
    H2GrpcTransport(
        const GrpcTarget &target, const GrpcCall &call, tcp::resolver::results_type addresses, std::string authority);

    ~H2GrpcTransport() override;

    bool initBodies(std::string *error);

    std::unique_ptr<CallSlot> makeSlot(int index, CallSink *sink) override;

    const GrpcTarget m_target;
    const GrpcCall m_call;
    /// TLS (nullptr: plaintext): set by makeH2GrpcTransport() before the first call, as the name to check.
    std::unique_ptr<asio::ssl::context> m_tls;
    std::string m_tlsName;
    const tcp::resolver::results_type m_addresses;
    const std::string m_authority;
    std::vector<std::pair<std::string, std::string>> m_headers; ///< every request's, in order
    std::vector<nghttp2_nv> m_nv; ///< m_headers as nghttp2 takes them (pointing into m_headers)
    int m_timeoutHeader = -1; ///< grpc-timeout's place in m_nv: each call sends its own time left (-1: no deadline)
    RequestBodies m_bodies;
    net::IoThreads m_threads;
    std::vector<std::unique_ptr<H2GrpcConnection>> m_connections;
    net::PeriodicSweep m_sweep;
};

} // namespace rpcscope::h2grpc
