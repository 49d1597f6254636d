// gRPC on bare HTTP/2: unary calls framed by nghttp2 over our own sockets (Boost.Asio), no gRPC C++ runtime in the
// way. See makeH2GrpcTransport() in transportfactories.h for what it does and does not do yet.

#include "metrics/callstatus.h"
#include "net/asio.h"
#include "net/tlsclient.h"

#include "requestbodies.h"
#include "transportfactories.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/ssl/stream.hpp>

#include <QByteArray>

#include <google/protobuf/descriptor.h>

#include <nghttp2/nghttp2.h>

#include <openssl/ssl.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <limits>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace rpcscope {

namespace {

namespace asio = boost::asio;
using net::tcp;
using Clock = std::chrono::steady_clock;
using TlsStream = asio::ssl::stream<tcp::socket>;

/// Headers of HTTP/2 and the gRPC protocol itself, not the server's metadata (gRPC C++ does not show them either).
bool isReservedHeader(std::string_view key)
{
    return key.empty() || key[0] == ':' || key == "content-type" || key == "grpc-status" || key == "grpc-message"
        || key == "grpc-encoding" || key == "grpc-accept-encoding" || key == "te";
}

constexpr auto kSweepPeriod = std::chrono::milliseconds(5);
constexpr size_t kReadChunk = 64 * 1024;
/// After a failed write, how long the reads may take to bring in what the server sent before it reset.
constexpr auto kSendFailureGrace = std::chrono::milliseconds(500);
/// The flow-control window we offer the server per stream unless --http2-window says otherwise: large enough for a
/// 10 MiB reply in flight without a round trip per 64 KiB (HTTP/2's default window), the way gRPC C++'s BDP probing
/// ends up. The connection's is 4 times the stream's.
constexpr int32_t kStreamWindow = 16 * 1024 * 1024;

class H2GrpcTransport;
class H2GrpcConnection;

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
    /// Reports the call's end; decodes a unary call's reply when there is one and replies are decoded.
    void finished(CallOutcome &outcome, const std::string *message);

    // Streaming calls, on the connection's thread (see the part of this file below "Streams").
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
    /// Appends @p length bytes of the request from m_sent on to @p out.
    void appendRequest(std::string &out, size_t length);
    size_t m_sent = 0; ///< of the request, written out so far
    size_t m_announced = 0; ///< of the request, in DATA frames nghttp2 was told of and has not had written yet
    std::string m_reply; ///< the reply's DATA as received (prefix included)
    uint64_t m_received = 0; ///< DATA bytes received, the 5-byte prefix included
    int m_httpStatus = 0;
    int m_grpcStatus = -1; ///< -1: not seen (yet)
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
    void cancel(H2GrpcSlot *slot)
    {
        const bool inFlight = std::any_of(
            m_streams.begin(), m_streams.end(), [slot](const auto &entry) { return entry.second == slot; });
        if (inFlight) {
            endCall(slot, CallStatus::Cancelled, "cancelled", NGHTTP2_CANCEL);
            flush();
        } else if (const auto it = std::find(m_waiting.begin(), m_waiting.end(), slot); it != m_waiting.end()) {
            m_waiting.erase(it);
            endWaiting(slot, CallStatus::Cancelled, "cancelled while connecting");
        }
    }
    void checkDeadlines(Clock::time_point now)
    {
        std::vector<H2GrpcSlot *> late;
        for (const auto &[stream, slot] : m_streams) {
            if (now >= slot->m_deadline)
                late.push_back(slot);
        }
        for (H2GrpcSlot *slot : late)
            endCall(slot, CallStatus::DeadlineExceeded, "deadline exceeded", NGHTTP2_CANCEL);
        if (!late.empty())
            flush();
        // Calls still waiting for the connection (a server that does not answer the handshake) time out too.
        std::vector<H2GrpcSlot *> waiting;
        for (auto it = m_waiting.begin(); it != m_waiting.end();) {
            if (now >= (*it)->m_deadline) {
                waiting.push_back(*it);
                it = m_waiting.erase(it);
            } else {
                ++it;
            }
        }
        for (H2GrpcSlot *slot : waiting)
            endWaiting(slot, CallStatus::DeadlineExceeded, "deadline exceeded while connecting");
    }

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
    void endCall(H2GrpcSlot *slot, int status, std::string message, uint32_t resetCode)
    {
        m_streams.erase(slot->m_stream);
        nghttp2_session_set_stream_user_data(m_session, slot->m_stream, nullptr);
        nghttp2_submit_rst_stream(m_session, NGHTTP2_FLAG_NONE, slot->m_stream, resetCode);
        CallOutcome outcome;
        outcome.status = status;
        outcome.errorMessage = std::move(message);
        outcome.bytesSent = slot->messageBytesSent();
        outcome.bytesReceived = slot->messageBytesReceived();
        slot->m_stream = -1;
        slot->finished(outcome, nullptr);
        drainedLater();
    }
    /// Ends a call that never got a stream (it waited for the connection).
    void endWaiting(H2GrpcSlot *slot, int status, std::string message)
    {
        CallOutcome outcome;
        outcome.status = status;
        outcome.errorMessage = std::move(message);
        slot->finished(outcome, nullptr);
    }
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
};

class H2GrpcTransport final : public Transport {
public:
    H2GrpcTransport(
        const GrpcTarget &target, const GrpcCall &call, tcp::resolver::results_type addresses, std::string authority)
        : m_target(target)
        , m_call(call)
        , m_addresses(std::move(addresses))
        , m_authority(std::move(authority))
        , m_threads(std::clamp(target.clientThreads, 1, 64))
    {
        const int connections = std::max(1, target.connections);
        for (int i = 0; i < connections; ++i)
            m_connections.push_back(
                std::make_unique<H2GrpcConnection>(this, m_threads.context(static_cast<size_t>(i))));
        if (target.timeout.count() > 0) {
            m_sweep.start(m_threads, kSweepPeriod, [this](size_t thread, Clock::time_point now) {
                for (size_t c = thread; c < m_connections.size(); c += static_cast<size_t>(m_threads.size()))
                    m_connections[c]->checkDeadlines(now);
            });
        }
        m_headers = {
            { ":method", "POST" },
            { ":scheme", target.tls.enabled ? "https" : "http" },
            { ":path", call.methodPath },
            { ":authority", m_authority },
            { "content-type", "application/grpc" },
            { "te", "trailers" },
            { "user-agent", "rpcscope-h2grpc" },
        };
        if (target.timeout.count() > 0) {
            // gRPC's timeout header: at most 8 digits and a unit; milliseconds up to ~27 hours, then seconds.
            const auto ms = std::chrono::ceil<std::chrono::milliseconds>(target.timeout).count();
            m_headers.emplace_back(
                "grpc-timeout", ms < 100000000 ? std::to_string(ms) + "m" : std::to_string(ms / 1000) + "S");
        }
        for (const auto &[key, value] : target.metadata)
            m_headers.emplace_back(key, value);
        for (const auto &[name, value] : m_headers)
            m_nv.push_back({ reinterpret_cast<uint8_t *>(const_cast<char *>(name.data())),
                reinterpret_cast<uint8_t *>(const_cast<char *>(value.data())), name.size(), value.size(),
                NGHTTP2_NV_FLAG_NONE });
        m_threads.start();
    }

    ~H2GrpcTransport() override
    {
        m_sweep.stop();
        m_threads.stop();
    }

    bool initBodies(std::string *error)
    {
        return m_bodies.init(
            m_call,
            [](const google::protobuf::Message &message, std::string *out, std::string *) {
                return message.SerializeToString(out);
            },
            error);
    }

    std::unique_ptr<CallSlot> makeSlot(int index, CallSink *sink) override
    {
        H2GrpcConnection *connection = m_connections[static_cast<size_t>(index) % m_connections.size()].get();
        return std::make_unique<H2GrpcSlot>(this, connection, index, sink);
    }

    const GrpcTarget m_target;
    const GrpcCall m_call;
    /// TLS (nullptr: plaintext): set by makeH2GrpcTransport() before the first call, as the name to check.
    std::unique_ptr<asio::ssl::context> m_tls;
    std::string m_tlsName;
    const tcp::resolver::results_type m_addresses;
    const std::string m_authority;
    std::vector<std::pair<std::string, std::string>> m_headers; ///< every request's, in order
    std::vector<nghttp2_nv> m_nv; ///< m_headers as nghttp2 takes them (pointing into m_headers)
    RequestBodies m_bodies;
    net::IoThreads m_threads;
    std::vector<std::unique_ptr<H2GrpcConnection>> m_connections;
    net::PeriodicSweep m_sweep;
};

void H2GrpcConnection::submit(H2GrpcSlot *slot, bool again)
{
    const auto timeout = m_transport->m_target.timeout;
    if (!again) {
        slot->m_deadline = timeout.count() > 0 ? Clock::now() + timeout : Clock::time_point::max();
        slot->m_retries = 0;
    }
    slot->m_onWire = false;
    slot->m_sent = 0;
    slot->m_announced = 0;
    slot->m_received = 0;
    slot->m_reply.clear();
    slot->m_httpStatus = 0;
    slot->m_grpcStatus = -1;
    slot->m_grpcMessage.clear();
    slot->m_headers.clear();
    slot->m_trailers.clear();
    slot->m_tooLarge = false;
    ++slot->m_callId;
    slot->m_outbox.clear();
    slot->m_outboxOffset = 0;
    slot->m_writesClosed = slot->m_deferred = slot->m_intervalWait = slot->m_timeUp = slot->m_endedByClient = false;
    slot->m_messagesSent = slot->m_messagesReceived = slot->m_streamBytesSent = slot->m_streamBytesReceived = 0;
    slot->m_inbox.clear();
    slot->m_sendTimes.clear();
    slot->m_failure.clear();
    slot->m_failureStatus = CallStatus::Ok;
    if (m_state != State::Open || m_goingAway) { // a server going away takes no new calls: they wait for the next
        m_waiting.push_back(slot);
        if (m_state == State::Closed)
            connect();
        return;
    }
    startStream(slot);
}

void H2GrpcConnection::startStream(H2GrpcSlot *slot)
{
    nghttp2_data_provider provider {};
    provider.source.ptr = slot;
    provider.read_callback = &H2GrpcConnection::readRequest;
    const auto &nv = m_transport->m_nv;
    const int32_t stream = nghttp2_submit_request(m_session, nullptr, nv.data(), nv.size(), &provider, slot);
    if (stream < 0) {
        // Stream ids run out after 2^30 calls on one connection: start a new one for this call and the next.
        if (stream == NGHTTP2_ERR_STREAM_ID_NOT_AVAILABLE) {
            m_waiting.push_back(slot);
            return breakConnection(CallStatus::Unavailable, "stream ids used up; reconnecting");
        }
        CallOutcome outcome;
        outcome.status = CallStatus::Internal;
        outcome.errorMessage = std::string("HTTP/2: ") + nghttp2_strerror(stream);
        slot->finished(outcome, nullptr);
        return;
    }
    slot->m_stream = stream;
    m_streams[stream] = slot;
    if (slot->streaming())
        slot->beginStream();
    flush();
}

H2GrpcConnection::H2GrpcConnection(H2GrpcTransport *transport, asio::io_context &context)
    : m_transport(transport), m_context(context), m_socket(context), m_sendFailureTimer(context)
{
}

void H2GrpcConnection::connect()
{
    m_state = State::Connecting;
    if (m_transport->m_tls) {
        if (m_tls)
            m_retiredTls.push_back(std::move(m_tls));
        m_tls = std::make_unique<TlsStream>(m_context, *m_transport->m_tls);
        const std::string &name = m_transport->m_tlsName;
        // SNI, except for an address (RFC 6066), and the name the certificate must carry.
        boost::system::error_code ignored;
        asio::ip::make_address(name, ignored);
        if (ignored)
            SSL_set_tlsext_host_name(m_tls->native_handle(), name.c_str());
        if (!m_transport->m_target.tls.skipVerify)
            m_tls->set_verify_callback(asio::ssl::host_name_verification(name));
    }
    asio::async_connect(socket(), m_transport->m_addresses,
        [this, epoch = m_epoch](boost::system::error_code ec, const tcp::endpoint &) {
            if (epoch != m_epoch)
                return;
            m_retiredTls.clear();
            if (ec)
                return breakConnection(CallStatus::Unavailable, "connect: " + ec.message());
            socket().set_option(tcp::no_delay(true), ec);
            if (!m_tls)
                return opened();
            m_tls->async_handshake(TlsStream::client, [this, epoch](boost::system::error_code ec) {
                if (epoch != m_epoch)
                    return;
                if (ec)
                    return breakConnection(CallStatus::Unavailable, "TLS handshake: " + ec.message());
                if (tlsAgreed())
                    opened();
            });
        });
}

bool H2GrpcConnection::tlsAgreed()
{
    const unsigned char *protocol = nullptr;
    unsigned int length = 0;
    SSL_get0_alpn_selected(m_tls->native_handle(), &protocol, &length);
    if (length == 2 && std::memcmp(protocol, "h2", 2) == 0)
        return true;
    breakConnection(CallStatus::Unavailable,
        length == 0 ? "the server did not agree to HTTP/2 in the TLS handshake (no ALPN protocol chosen)"
                    : "the server chose " + std::string(reinterpret_cast<const char *>(protocol), length)
                + " in the TLS handshake (ALPN), not HTTP/2 (h2)");
    return false;
}

void H2GrpcConnection::opened()
{
    m_goingAway = false;
    std::string error;
    if (!startSession(&error))
        return breakConnection(CallStatus::Internal, error);
    m_state = State::Open;
    read();
    std::vector<H2GrpcSlot *> waiting;
    waiting.swap(m_waiting);
    for (H2GrpcSlot *slot : waiting)
        startStream(slot); // their deadlines count from their submission, the wait included
    flush(); // the connection preface and SETTINGS, even with no call waiting
}

bool H2GrpcConnection::startSession(std::string *error)
{
    closeSession();
    nghttp2_session_callbacks *callbacks = nullptr;
    nghttp2_session_callbacks_new(&callbacks);
    nghttp2_session_callbacks_set_on_header_callback(callbacks, &H2GrpcConnection::onHeader);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, &H2GrpcConnection::onData);
    nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, &H2GrpcConnection::onStreamClose);
    nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, &H2GrpcConnection::onFrame);
    nghttp2_session_callbacks_set_on_frame_send_callback(callbacks, &H2GrpcConnection::onFrameSent);
    nghttp2_session_callbacks_set_send_data_callback(callbacks, &H2GrpcConnection::sendRequestData);
    const int made = nghttp2_session_client_new(&m_session, callbacks, this);
    nghttp2_session_callbacks_del(callbacks);
    if (made != 0) {
        *error = std::string("HTTP/2 session: ") + nghttp2_strerror(made);
        return false;
    }
    const int32_t window = m_transport->m_target.http2Window > 0 ? m_transport->m_target.http2Window : kStreamWindow;
    const auto connectionWindow
        = static_cast<int32_t>(std::min<int64_t>(int64_t(window) * 4, std::numeric_limits<int32_t>::max()));
    const nghttp2_settings_entry settings[] = {
        { NGHTTP2_SETTINGS_ENABLE_PUSH, 0 },
        { NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, static_cast<uint32_t>(window) },
        { NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, 16 * 1024 * 1024 },
    };
    int rv = nghttp2_submit_settings(m_session, NGHTTP2_FLAG_NONE, settings, std::size(settings));
    if (rv == 0)
        rv = nghttp2_session_set_local_window_size(m_session, NGHTTP2_FLAG_NONE, 0, connectionWindow);
    if (rv != 0) {
        *error = std::string("HTTP/2 settings: ") + nghttp2_strerror(rv);
        return false;
    }
    return true;
}

void H2GrpcConnection::flush()
{
    // Not from inside nghttp2: a stream that closes as its reset goes out ends a call, whose caller submits the
    // next one at once; that request is sent by the loop below, still running (a nested nghttp2_session_mem_send()
    // would reuse the buffer the outer one is about to hand back, and interleave frames).
    if (!m_session || m_receiving || m_sending || !m_sendFailure.empty())
        return; // after a failed write, what nghttp2 has to send stays unsent: GOAWAY's refusals see it so
    m_sending = true;
    ssize_t n = 0;
    for (;;) {
        const uint8_t *data = nullptr;
        n = nghttp2_session_mem_send(m_session, &data);
        if (n <= 0)
            break;
        m_writer.pending().append(reinterpret_cast<const char *>(data), static_cast<size_t>(n));
    }
    m_sending = false;
    if (n < 0)
        return breakConnection(CallStatus::Internal, std::string("HTTP/2: ") + nghttp2_strerror(static_cast<int>(n)));
    withStream([this](auto &stream) {
        m_writer.flush(stream, [this, epoch = m_epoch](boost::system::error_code ec) {
            if (ec && epoch == m_epoch) {
                if (m_state == State::Open && m_sendFailure.empty())
                    sendFailed("send: " + ec.message());
                return;
            }
            flush(); // what came meanwhile; for a write of a connection since broken, what the new one has
        });
    });
}

void H2GrpcConnection::sendFailed(const std::string &message)
{
    m_sendFailure = message;
    m_sendFailureTimer.expires_after(kSendFailureGrace);
    m_sendFailureTimer.async_wait([this, epoch = m_epoch](boost::system::error_code ec) {
        if (!ec && epoch == m_epoch && m_state == State::Open)
            breakConnection(CallStatus::Unavailable, m_sendFailure);
    });
}

void H2GrpcConnection::read()
{
    withStream([this](auto &stream) {
        stream.async_read_some(asio::buffer(m_readBuffer.data(), m_readBuffer.size()),
            [this, epoch = m_epoch](boost::system::error_code ec, size_t n) {
                if (epoch != m_epoch)
                    return; // a read of a connection since broken (its data may have come before the break)
                if (ec) {
                    if (m_state != State::Open)
                        return;
                    if (!m_sendFailure.empty()) {
                        breakConnection(CallStatus::Unavailable, m_sendFailure);
                    } else if (ec == asio::ssl::error::stream_truncated) {
                        // TLS 1.3: a server that wants a client certificate it did not get says so after the handshake,
                        // often by closing the connection.
                        const bool noCert = m_transport->m_target.tls.certChain.empty();
                        breakConnection(CallStatus::Unavailable,
                            std::string("the server closed the TLS connection without a close_notify")
                                + (noCert ? " (does it want a client certificate? --cert and --key)" : ""));
                    } else {
                        breakConnection(CallStatus::Unavailable,
                            ec == asio::error::eof ? std::string("connection closed by the server")
                                                   : "receive: " + ec.message());
                    }
                    return;
                }
                m_receiving = true;
                const ssize_t used = nghttp2_session_mem_recv(m_session, m_readBuffer.data(), n);
                m_receiving = false;
                if (used < 0)
                    return breakConnection(
                        CallStatus::Internal, std::string("HTTP/2: ") + nghttp2_strerror(static_cast<int>(used)));
                flush(); // SETTINGS and PING acknowledgements, window updates, resets
                if (m_state != State::Open)
                    return;
                if (!nghttp2_session_want_read(m_session) && !nghttp2_session_want_write(m_session))
                    return breakConnection(CallStatus::Unavailable, "the server ended the connection (GOAWAY)");
                read();
            });
    });
}

ssize_t H2GrpcConnection::readRequest(
    nghttp2_session *, int32_t, uint8_t *buffer, size_t length, uint32_t *flags, nghttp2_data_source *source, void *)
{
    auto *slot = static_cast<H2GrpcSlot *>(source->ptr);
    if (slot->streaming())
        return slot->readStreamRequest(buffer, length, flags);
    // How much the next DATA frame carries; sendRequestData() writes it. Until then m_sent stays where it is: the
    // bytes of frames announced so far and not yet written are counted on from there.
    const size_t n = std::min(length, slot->requestSize() - slot->m_sent - slot->m_announced);
    slot->m_announced += n;
    *flags |= NGHTTP2_DATA_FLAG_NO_COPY;
    if (slot->m_sent + slot->m_announced == slot->requestSize())
        *flags |= NGHTTP2_DATA_FLAG_EOF;
    return static_cast<ssize_t>(n);
}

int H2GrpcConnection::sendRequestData(nghttp2_session *, nghttp2_frame *frame, const uint8_t *frameHeader,
    size_t length, nghttp2_data_source *source, void *user)
{
    auto *self = static_cast<H2GrpcConnection *>(user);
    auto *slot = static_cast<H2GrpcSlot *>(source->ptr);
    std::string &out = self->m_writer.pending();
    out.append(reinterpret_cast<const char *>(frameHeader), 9);
    if (frame->data.padlen > 0) // nghttp2 pads only when asked to (a select_padding callback): we never do
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    slot->appendRequest(out, length);
    return 0;
}

void H2GrpcSlot::appendRequest(std::string &out, size_t length)
{
    if (m_sent < 5) {
        const size_t n = std::min(length, 5 - m_sent);
        out.append(m_prefix + m_sent, n);
        m_sent += n;
        m_announced -= n;
        length -= n;
    }
    out.append(*m_body, m_sent - 5, length);
    m_sent += length;
    m_announced -= length;
}

int H2GrpcConnection::onHeader(nghttp2_session *session, const nghttp2_frame *frame, const uint8_t *name,
    size_t nameLength, const uint8_t *value, size_t valueLength, uint8_t, void *)
{
    if (frame->hd.type != NGHTTP2_HEADERS)
        return 0;
    auto *slot = static_cast<H2GrpcSlot *>(nghttp2_session_get_stream_user_data(session, frame->hd.stream_id));
    if (!slot)
        return 0; // a call that already ended (deadline, cancel)
    const std::string_view key(reinterpret_cast<const char *>(name), nameLength);
    const std::string_view text(reinterpret_cast<const char *>(value), valueLength);
    if (key == ":status") {
        slot->m_httpStatus = std::atoi(std::string(text).c_str());
    } else if (key == "grpc-status") {
        slot->m_grpcStatus = std::atoi(std::string(text).c_str());
    } else if (key == "grpc-message") {
        // Percent-encoded (gRPC's spec): decoded for the error shown.
        auto hex = [](char c) {
            return c >= '0' && c <= '9' ? c - '0'
                : c >= 'a' && c <= 'f'  ? c - 'a' + 10
                : c >= 'A' && c <= 'F'  ? c - 'A' + 10
                                        : -1;
        };
        std::string decoded;
        for (size_t i = 0; i < text.size(); ++i) {
            if (text[i] == '%' && i + 2 < text.size() && hex(text[i + 1]) >= 0 && hex(text[i + 2]) >= 0) {
                decoded += static_cast<char>(hex(text[i + 1]) * 16 + hex(text[i + 2]));
                i += 2;
            } else {
                decoded += text[i];
            }
        }
        slot->m_grpcMessage = std::move(decoded);
    }
    if (slot->m_transport->m_call.captureMetadata && !isReservedHeader(key)) {
        // As gRPC C++ hands them over: a trailers-only reply's one HEADERS frame is trailing metadata, and a
        // "-bin" value is base64 on the wire, raw bytes to the user.
        const bool trailing
            = frame->headers.cat != NGHTTP2_HCAT_RESPONSE || (frame->hd.flags & NGHTTP2_FLAG_END_STREAM);
        std::string data(text);
        if (key.size() > 4 && key.substr(key.size() - 4) == "-bin") {
            const QByteArray raw = QByteArray::fromBase64(QByteArray::fromRawData(data.data(), qsizetype(data.size())));
            data.assign(raw.constData(), size_t(raw.size()));
        }
        (trailing ? slot->m_trailers : slot->m_headers).emplace_back(std::string(key), std::move(data));
    }
    return 0;
}

int H2GrpcConnection::onData(
    nghttp2_session *session, uint8_t, int32_t stream, const uint8_t *data, size_t length, void *)
{
    auto *slot = static_cast<H2GrpcSlot *>(nghttp2_session_get_stream_user_data(session, stream));
    if (!slot)
        return 0;
    if (slot->streaming()) {
        slot->takeData(data, length);
        return 0;
    }
    slot->m_received += length;
    // The limit is on the message; the 5-byte prefix comes on top.
    if (slot->m_reply.size() + length > slot->m_transport->m_target.receiveLimit() + 5) {
        if (!slot->m_tooLarge)
            nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, stream, NGHTTP2_CANCEL);
        slot->m_tooLarge = true;
        return 0;
    }
    slot->m_reply.append(reinterpret_cast<const char *>(data), length);
    return 0;
}

int H2GrpcConnection::onStreamClose(nghttp2_session *session, int32_t stream, uint32_t errorCode, void *user)
{
    auto *self = static_cast<H2GrpcConnection *>(user);
    auto *slot = static_cast<H2GrpcSlot *>(nghttp2_session_get_stream_user_data(session, stream));
    if (!slot || !self->m_streams.erase(stream))
        return 0;
    self->streamClosed(slot, errorCode);
    return 0;
}

int H2GrpcConnection::onFrame(nghttp2_session *, const nghttp2_frame *frame, void *user)
{
    if (frame->hd.type == NGHTTP2_GOAWAY)
        static_cast<H2GrpcConnection *>(user)->m_goingAway = true;
    return 0;
}

int H2GrpcConnection::onFrameSent(nghttp2_session *session, const nghttp2_frame *frame, void *)
{
    if (frame->hd.type == NGHTTP2_HEADERS && frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
        if (auto *slot = static_cast<H2GrpcSlot *>(nghttp2_session_get_stream_user_data(session, frame->hd.stream_id)))
            slot->m_onWire = true;
    }
    return 0;
}

void H2GrpcConnection::drainedLater()
{
    if (!m_goingAway || !m_streams.empty())
        return;
    asio::post(m_context, [this, epoch = m_epoch] {
        if (epoch == m_epoch && m_state == State::Open && m_goingAway && m_streams.empty())
            breakConnection(CallStatus::Unavailable, "the server went away (GOAWAY)"); // none left to fail
    });
}

void H2GrpcConnection::streamClosed(H2GrpcSlot *slot, uint32_t errorCode)
{
    slot->m_stream = -1;
    if (errorCode == NGHTTP2_REFUSED_STREAM && m_goingAway && (!slot->m_onWire || slot->m_retries == 0)) {
        // Refused by the server's GOAWAY (a stream past its last one, which HTTP/2 says it did not process), or held
        // back by nghttp2 and never sent: the call goes on the next connection, as gRPC C++ retries such calls
        // transparently; once, for one the server saw.
        slot->m_retries += slot->m_onWire ? 1 : 0;
        submit(slot, true);
        return drainedLater();
    }
    CallOutcome outcome;
    outcome.bytesSent = slot->messageBytesSent();
    outcome.bytesReceived = slot->messageBytesReceived();
    outcome.headers = std::move(slot->m_headers);
    outcome.trailers = std::move(slot->m_trailers);
    const std::string *message = nullptr;
    if (slot->streaming() && (!slot->m_failure.empty() || slot->m_endedByClient)) {
        outcome.status = slot->m_failure.empty() ? CallStatus::Ok : slot->m_failureStatus;
        outcome.errorMessage = slot->m_failure;
        outcome.fatal = slot->m_failureStatus == CallStatus::InvalidArgument; // a request template that broke
    } else if (slot->m_tooLarge) {
        outcome.status = CallStatus::ResourceExhausted;
        outcome.errorMessage = "reply larger than the receive limit of "
            + std::to_string(m_transport->m_target.receiveLimit()) + " bytes (raise it with --max-recv-size)";
    } else if (slot->m_grpcStatus >= 0) {
        outcome.status = std::clamp(slot->m_grpcStatus, 0, CallStatus::SlotCount - 1);
        outcome.errorMessage = slot->m_grpcMessage;
        if (outcome.status == CallStatus::Ok && slot->streaming()) {
            if (!slot->m_inbox.empty()) {
                outcome.status = CallStatus::Internal;
                outcome.errorMessage = "the stream ended inside a message (" + std::to_string(slot->m_inbox.size())
                    + " bytes of it came)";
            } else if (slot->m_clientStreams && !slot->m_serverStreams && slot->m_messagesReceived == 0) {
                outcome.status = CallStatus::DecodeError;
                outcome.errorMessage = "the client stream ended OK without a reply";
            }
        } else if (outcome.status == CallStatus::Ok) {
            // One length-prefixed message: a flag byte (0: not compressed) and a 4-byte big-endian length.
            const std::string &r = slot->m_reply;
            if (r.size() < 5 || r[0] != 0) {
                outcome.status = r.size() >= 5 ? CallStatus::Unimplemented : CallStatus::Internal;
                outcome.errorMessage = r.size() >= 5
                    ? "the reply is compressed; rpcscope's HTTP/2 client takes identity encoding only"
                    : "OK without a reply message";
            } else {
                const uint32_t length = (uint32_t(uint8_t(r[1])) << 24) | (uint32_t(uint8_t(r[2])) << 16)
                    | (uint32_t(uint8_t(r[3])) << 8) | uint32_t(uint8_t(r[4]));
                if (length != r.size() - 5) {
                    outcome.status = CallStatus::Internal;
                    outcome.errorMessage = "the reply's length prefix says " + std::to_string(length) + " bytes, "
                        + std::to_string(r.size() - 5) + " came";
                } else {
                    slot->m_reply.erase(0, 5);
                    message = &slot->m_reply;
                }
            }
        }
    } else if (errorCode == NGHTTP2_REFUSED_STREAM && m_goingAway) {
        outcome.status = CallStatus::Unavailable;
        outcome.errorMessage = "the server is going away (GOAWAY) and did not take this call";
    } else if (errorCode != NGHTTP2_NO_ERROR) {
        outcome.status = errorCode == NGHTTP2_REFUSED_STREAM ? CallStatus::Unavailable : CallStatus::Internal;
        outcome.errorMessage = std::string("stream reset by the server: ") + nghttp2_http2_strerror(errorCode);
    } else if (slot->m_httpStatus != 200) {
        outcome.status = grpcStatusForHttp(static_cast<unsigned>(slot->m_httpStatus));
        outcome.errorMessage = "HTTP " + std::to_string(slot->m_httpStatus) + " without a gRPC status";
    } else {
        outcome.status = CallStatus::Internal;
        outcome.errorMessage = "the stream ended without a gRPC status";
    }
    slot->finished(outcome, message);
    drainedLater();
}

void H2GrpcConnection::breakConnection(int status, const std::string &message)
{
    if (m_receiving || m_sending) { // from an nghttp2 callback: the session must outlive the call into it
        asio::post(m_context, [this, epoch = m_epoch, status, message] {
            if (epoch == m_epoch)
                breakConnection(status, message);
        });
        return;
    }
    boost::system::error_code ignored;
    socket().close(ignored); // under TLS too: no close_notify, the connection is given up
    m_sendFailureTimer.cancel();
    m_sendFailure.clear();
    m_state = State::Closed;
    ++m_epoch; // the closed socket's reads and writes still to come are for a connection that is no more
    closeSession();
    m_writer.clear();
    std::vector<H2GrpcSlot *> calls;
    for (const auto &[stream, slot] : m_streams)
        calls.push_back(slot);
    m_streams.clear();
    // The calls waiting for this connection fail with it, unless it was going away: they were waiting for the
    // next one, never sent, and go on it.
    const bool wentAway = m_goingAway;
    m_goingAway = false;
    if (!wentAway) {
        calls.insert(calls.end(), m_waiting.begin(), m_waiting.end());
        m_waiting.clear();
    }
    for (H2GrpcSlot *slot : calls) {
        slot->m_stream = -1;
        CallOutcome outcome;
        outcome.status = status;
        outcome.errorMessage = wentAway ? message + " before answering" : message;
        slot->finished(outcome, nullptr); // may submit again: that call goes on a new connection
    }
    if (!m_waiting.empty() && m_state == State::Closed)
        connect();
}

H2GrpcSlot::H2GrpcSlot(H2GrpcTransport *transport, H2GrpcConnection *connection, int index, CallSink *sink)
    : BodySlot(transport->m_call, transport->m_bodies, index, sink)
    , m_transport(transport)
    , m_connection(connection)
    , m_clientStreams(transport->m_call.method && transport->m_call.method->client_streaming())
    , m_serverStreams(transport->m_call.method && transport->m_call.method->server_streaming())
    , m_pingPong(m_clientStreams && m_serverStreams && transport->m_call.stream.pingPong)
    , m_intervalTimer(connection->context())
    , m_callTimer(connection->context())
{
}

void H2GrpcSlot::start(uint64_t callNumber)
{
    m_callNumber = callNumber;
    if (streaming()) { // its messages are made as they go (beginStream)
        asio::dispatch(m_connection->context(), [this] { m_connection->submit(this); });
        return;
    }
    if (!prepareBody(callNumber))
        return;
    const auto size = static_cast<uint32_t>(m_body->size());
    const int sendLimit = m_transport->m_target.maxSendBytes;
    if (sendLimit >= 0 && size > static_cast<uint32_t>(sendLimit)) {
        CallOutcome outcome;
        outcome.status = CallStatus::ResourceExhausted;
        outcome.errorMessage = "request of " + std::to_string(size) + " bytes is larger than --max-send-size "
            + std::to_string(sendLimit);
        m_sink->callDone(m_index, outcome);
        return;
    }
    m_prefix[0] = 0; // not compressed
    m_prefix[1] = static_cast<char>(size >> 24);
    m_prefix[2] = static_cast<char>(size >> 16);
    m_prefix[3] = static_cast<char>(size >> 8);
    m_prefix[4] = static_cast<char>(size);
    asio::dispatch(m_connection->context(), [this] { m_connection->submit(this); });
}

void H2GrpcSlot::cancel()
{
    asio::post(m_connection->context(), [connection = m_connection, slot = this] { connection->cancel(slot); });
}

void H2GrpcSlot::finished(CallOutcome &outcome, const std::string *message)
{
    if (streaming()) {
        ++m_callId; // its timers are done with
        m_intervalTimer.cancel();
        m_callTimer.cancel();
        outcome.messagesSent = m_messagesSent;
        outcome.messagesReceived = m_messagesReceived;
        outcome.bytesSent = m_streamBytesSent;
        outcome.bytesReceived = m_streamBytesReceived;
    }
    if (message && m_decoded) {
        m_decoded->Clear();
        if (m_decoded->ParseFromString(*message)) {
            outcome.reply = m_decoded.get();
        } else {
            outcome.status = CallStatus::DecodeError;
            outcome.errorMessage = "the reply does not parse as " + m_decoded->GetDescriptor()->full_name();
        }
    }
    m_sink->callDone(m_index, outcome);
}

// Streams: a streaming call's messages, each framed with gRPC's 5-byte prefix, queued for nghttp2's data provider
// (which waits, DEFERRED, while none is queued); the replies cut from the DATA as it comes, each timed as the gRPC
// transport times it (MessageTiming). Everything here runs on the connection's thread.

void H2GrpcSlot::beginStream()
{
    m_lastReceived = Clock::now(); // the call's start: a server stream's first message is timed from it
    const auto duration = m_transport->m_call.stream.callDuration;
    if (duration.count() > 0) {
        m_callTimer.expires_after(duration);
        m_callTimer.async_wait([this, id = m_callId](boost::system::error_code ec) {
            if (ec || id != m_callId || m_stream < 0)
                return;
            m_timeUp = true;
            if (!m_clientStreams) {
                endByClient(); // a server stream is cancelled; what came counts
            } else if (m_intervalWait) {
                m_intervalWait = false; // the message it waits for will not go: its timer's handler does nothing
                closeWrites();
            } else {
                sendNext();
            }
        });
    }
    sendNext();
}

void H2GrpcSlot::sendNext()
{
    if (m_writesClosed || m_intervalWait || !m_outbox.empty() || m_stream < 0)
        return; // a message is still going out: the next follows it (readStreamRequest)
    if (m_timeUp || m_messagesSent >= streamMessagesToSend(m_transport->m_call))
        return closeWrites();
    if (m_pingPong && m_messagesReceived < m_messagesSent)
        return; // the reply to the last one first (messageArrived)
    const auto interval = m_transport->m_call.stream.interval;
    if (m_messagesSent > 0 && interval.count() > 0) {
        // From the previous message's send, not its completion: the messages keep the cadence asked for.
        m_intervalWait = true;
        m_intervalTimer.expires_at(m_lastSent + interval);
        // Every handler here checks its error first: a wait cancelled (the call ended, or the slot is being destroyed
        // with the timer) must not touch the slot.
        m_intervalTimer.async_wait([this, id = m_callId](boost::system::error_code ec) {
            if (ec || id != m_callId || m_stream < 0 || !m_intervalWait)
                return;
            m_intervalWait = false;
            writeMessage();
        });
        return;
    }
    writeMessage();
}

void H2GrpcSlot::writeMessage()
{
    std::string error;
    const uint64_t number = m_transport->m_call.perCall ? m_callNumber : m_messagesSent;
    const std::string *body = m_bodies.body(number, m_index, m_rng, m_scratchMessage.get(), &m_scratch, &error);
    if (!body)
        return failStream(CallStatus::InvalidArgument, "request template: " + error + " (run stopped)");
    const int sendLimit = m_transport->m_target.maxSendBytes;
    if (sendLimit >= 0 && body->size() > static_cast<size_t>(sendLimit))
        return failStream(CallStatus::ResourceExhausted,
            "message of " + std::to_string(body->size()) + " bytes is larger than --max-send-size "
                + std::to_string(sendLimit));
    const auto size = static_cast<uint32_t>(body->size());
    std::string framed;
    framed.reserve(5 + size);
    framed.push_back(0); // not compressed
    framed.push_back(static_cast<char>(size >> 24));
    framed.push_back(static_cast<char>(size >> 16));
    framed.push_back(static_cast<char>(size >> 8));
    framed.push_back(static_cast<char>(size));
    framed.append(*body);
    m_outbox.push_back(std::move(framed));
    m_streamBytesSent += size;
    ++m_messagesSent;
    m_lastSent = Clock::now();
    if (m_clientStreams && m_serverStreams)
        m_sendTimes.push_back(m_lastSent);
    if (m_deferred) {
        m_deferred = false;
        m_connection->resume(this);
    }
}

void H2GrpcSlot::closeWrites()
{
    if (m_writesClosed)
        return;
    m_writesClosed = true;
    if (m_deferred) {
        m_deferred = false;
        m_connection->resume(this);
    }
}

ssize_t H2GrpcSlot::readStreamRequest(uint8_t *buffer, size_t length, uint32_t *flags)
{
    if (m_outbox.empty()) {
        sendNext(); // the previous message is out: the next, a wait, or the end
        if (m_outbox.empty()) {
            if (m_writesClosed) {
                *flags |= NGHTTP2_DATA_FLAG_EOF;
                return 0;
            }
            m_deferred = true;
            return NGHTTP2_ERR_DEFERRED;
        }
    }
    const std::string &front = m_outbox.front();
    const size_t n = std::min(length, front.size() - m_outboxOffset);
    std::memcpy(buffer, front.data() + m_outboxOffset, n);
    m_outboxOffset += n;
    if (m_outboxOffset == front.size()) {
        m_outbox.pop_front();
        m_outboxOffset = 0;
    }
    return static_cast<ssize_t>(n);
}

void H2GrpcSlot::takeData(const uint8_t *data, size_t length)
{
    if (!m_failure.empty() || m_endedByClient)
        return; // reset already: what still comes is dropped
    m_inbox.append(reinterpret_cast<const char *>(data), length);
    size_t at = 0;
    const size_t limit = m_transport->m_target.receiveLimit();
    while (m_inbox.size() - at >= 5) {
        const auto *p = reinterpret_cast<const uint8_t *>(m_inbox.data() + at);
        if (p[0] != 0)
            return failStream(CallStatus::Unimplemented,
                "a message is compressed; rpcscope's HTTP/2 client takes identity encoding only");
        const size_t size = (size_t(p[1]) << 24) | (size_t(p[2]) << 16) | (size_t(p[3]) << 8) | size_t(p[4]);
        if (size > limit)
            return failStream(CallStatus::ResourceExhausted,
                "message " + std::to_string(m_messagesReceived + 1) + " is larger than the receive limit of "
                    + std::to_string(limit) + " bytes (raise it with --max-recv-size)");
        if (m_inbox.size() - at - 5 < size)
            break;
        messageArrived(m_inbox.data() + at + 5, size);
        at += 5 + size;
        if (!m_failure.empty() || m_endedByClient || m_stream < 0)
            return;
    }
    m_inbox.erase(0, at);
}

void H2GrpcSlot::messageArrived(const char *data, size_t length)
{
    const auto now = Clock::now();
    ++m_messagesReceived;
    m_streamBytesReceived += length;
    int64_t latency = -1;
    MessageTiming timing = MessageTiming::Untimed;
    if (!m_clientStreams) { // server stream: since the previous message, the first since the call began
        latency = (now - m_lastReceived).count();
        timing = m_messagesReceived == 1 ? MessageTiming::FirstMessage : MessageTiming::Gap;
    } else if (m_serverStreams) { // bidi: since the message this one answers went out, when there is one
        const bool paired = m_messagesReceived <= m_sendTimes.size();
        latency = (now - (paired ? m_sendTimes[m_messagesReceived - 1] : m_lastReceived)).count();
        timing = MessageTiming::RoundTrip;
    }
    m_lastReceived = now;
    const google::protobuf::Message *message = nullptr;
    if (m_decoded) {
        m_decoded->Clear();
        if (!m_decoded->ParseFromArray(data, static_cast<int>(length)))
            return failStream(CallStatus::DecodeError,
                "message " + std::to_string(m_messagesReceived) + " of the stream does not parse as "
                    + m_decoded->GetDescriptor()->full_name());
        message = m_decoded.get();
    }
    m_sink->messageReceived(m_index, timing, latency, message);
    const uint64_t enough = m_transport->m_call.stream.callCount;
    if (!m_clientStreams && enough > 0 && m_messagesReceived >= enough)
        return endByClient();
    if (m_pingPong && m_messagesReceived >= m_messagesSent)
        sendNext(); // the reply to the last message sent: the next one may go
}

void H2GrpcSlot::endByClient()
{
    m_endedByClient = true;
    m_connection->reset(this);
}

void H2GrpcSlot::failStream(int status, std::string message)
{
    if (!m_failure.empty())
        return;
    m_failureStatus = status;
    m_failure = std::move(message);
    m_connection->reset(this);
}

} // namespace

std::unique_ptr<Transport> makeH2GrpcTransport(const std::string &host, const std::string &port,
    const GrpcTarget &target, const GrpcCall &call, std::string *error)
{
    tcp::resolver::results_type addresses;
    if (!net::resolve(host, port, &addresses, error))
        return nullptr;
    const std::string authority = target.authority.empty() ? host + ":" + port : target.authority;
    auto transport = std::make_unique<H2GrpcTransport>(target, call, std::move(addresses), authority);
    if (!transport->initBodies(error))
        return nullptr;
    if (target.tls.enabled) {
        transport->m_tls = net::tlsClientContext(target.tls, error);
        if (!transport->m_tls)
            return nullptr;
        transport->m_tlsName = target.tls.serverNameOverride.empty() ? host : target.tls.serverNameOverride;
    }
    return transport;
}

} // namespace rpcscope
