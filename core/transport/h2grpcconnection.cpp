// h2grpc: one HTTP/2 connection carrying many calls (see h2grpcparts.h): connecting (TCP, TLS with ALPN h2), the
// nghttp2 session and its callbacks, reads and writes, deadlines and cancels as stream resets, GOAWAY (calls the
// server refused unseen go on the next connection) and a broken connection's calls.

#include "h2grpcparts.h"

#include <charconv>

#include <boost/asio/connect.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>

#include <QByteArray>

#include <openssl/ssl.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace rpcscope::h2grpc {

namespace {

/// Headers of HTTP/2 and the gRPC protocol itself, not the server's metadata (gRPC C++ does not show them either).
bool isReservedHeader(std::string_view key)
{
    return key.empty() || key[0] == ':' || key == "content-type" || key == "grpc-status" || key == "grpc-message"
        || key == "grpc-encoding" || key == "grpc-accept-encoding" || key == "te";
}

/// After a failed write, how long the reads may take to bring in what the server sent before it reset.
constexpr auto kSendFailureGrace = std::chrono::milliseconds(500);
/// The flow-control window we offer the server per stream unless --http2-window says otherwise: large enough for a
/// 10 MiB reply in flight without a round trip per 64 KiB (HTTP/2's default window), the way gRPC C++'s BDP probing
/// ends up. The connection's is 4 times the stream's.
constexpr int32_t kStreamWindow = 16 * 1024 * 1024;
/// The largest DATA frame we send, whatever the server takes: nghttp2 grows its frame buffer to it (a streamed
/// message is copied there), once per connection.
constexpr int64_t kMaxDataFrame = int64_t(4) * 1024 * 1024;

} // namespace

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
    slot->m_badGrpcStatus.clear();
    slot->m_encoding = GrpcEncoding::Identity;
    slot->m_encodingName.clear();
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
    const std::vector<nghttp2_nv> *headers = &m_transport->m_nv;
    if (const int at = m_transport->m_timeoutHeader; at >= 0) {
        // The time the call has left, not the whole timeout: it may have waited for a connection or been refused
        // by a server going away (nghttp2 copies the headers it is given). The other headers are every call's.
        if (m_callNv.empty())
            m_callNv = m_transport->m_nv;
        m_callTimeout = grpcTimeout(slot->m_deadline - Clock::now());
        m_callNv[static_cast<size_t>(at)].value = reinterpret_cast<uint8_t *>(m_callTimeout.data());
        m_callNv[static_cast<size_t>(at)].valuelen = m_callTimeout.size();
        headers = &m_callNv;
    }
    const auto &nv = *headers;
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
    nghttp2_session_callbacks_set_data_source_read_length_callback(callbacks, &H2GrpcConnection::dataFrameLength);
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
    self->m_writer.pending().append(reinterpret_cast<const char *>(frameHeader), 9);
    if (frame->data.padlen > 0) // nghttp2 pads only when asked to (a select_padding callback): we never do
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    slot->appendRequest(self->m_writer, length);
    return 0;
}

ssize_t H2GrpcConnection::dataFrameLength(
    nghttp2_session *, uint8_t, int32_t, int32_t connectionWindow, int32_t streamWindow, uint32_t maxFrame, void *)
{
    // DATA frames as large as the server takes (its SETTINGS_MAX_FRAME_SIZE) and the windows allow, as gRPC C++
    // sends them, rather than nghttp2's 16 KiB: the built-in server takes 4 MiB frames, and a 10 MiB request in 640
    // frames instead of 3 took it 5% longer to answer (tests/perf/h2grpc_vs_grpc.sh).
    const auto length = std::min<int64_t>({ connectionWindow, streamWindow, maxFrame, kMaxDataFrame });
    return static_cast<ssize_t>(std::max<int64_t>(length, 1));
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
        int code = -1;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), code);
        const bool number = error == std::errc() && end == text.data() + text.size();
        slot->m_grpcStatus = callStatusFromGrpcCode(number ? code : -1);
        if (!number || slot->m_grpcStatus != code)
            slot->m_badGrpcStatus = text;
    } else if (key == "grpc-encoding") {
        slot->m_encoding = grpcEncoding(text);
        slot->m_encodingName = text;
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
    slot->streamEnded(errorCode, m_goingAway);
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

void H2GrpcConnection::cancel(H2GrpcSlot *slot)
{
    const bool inFlight
        = std::any_of(m_streams.begin(), m_streams.end(), [slot](const auto &entry) { return entry.second == slot; });
    if (inFlight) {
        endCall(slot, CallStatus::Cancelled, "cancelled", NGHTTP2_CANCEL);
        flush();
    } else if (const auto it = std::find(m_waiting.begin(), m_waiting.end(), slot); it != m_waiting.end()) {
        m_waiting.erase(it);
        endWaiting(slot, CallStatus::Cancelled, "cancelled while connecting");
    }
}

void H2GrpcConnection::checkDeadlines(Clock::time_point now)
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

void H2GrpcConnection::endCall(H2GrpcSlot *slot, int status, std::string message, uint32_t resetCode)
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

void H2GrpcConnection::endWaiting(H2GrpcSlot *slot, int status, std::string message)
{
    CallOutcome outcome;
    outcome.status = status;
    outcome.errorMessage = std::move(message);
    slot->finished(outcome, nullptr);
}

} // namespace rpcscope::h2grpc
