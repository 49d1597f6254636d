// h2grpc: a caller's unary calls (see h2grpcparts.h): the request framed with gRPC's 5-byte prefix and written
// straight into the connection's output, the call's outcome from its status, trailers and reply, the reply decoded.

#include "h2grpcparts.h"

#include <google/protobuf/descriptor.h>

#include <algorithm>
#include <limits>

namespace rpcscope::h2grpc {

namespace {
/// DATA at least this long is written from the request body where it is, not copied (see appendRequest()).
constexpr size_t kLendFrom = 4096;
} // namespace

void H2GrpcSlot::appendRequest(net::BatchedWriter &writer, size_t length)
{
    if (m_sent < 5) {
        const size_t n = std::min(length, 5 - m_sent);
        writer.pending().append(m_prefix + m_sent, n);
        m_sent += n;
        m_announced -= n;
        length -= n;
    }
    // A 10 MiB request is otherwise copied once more on its way out: 16% of the client's CPU on that call (perf).
    if (length >= kLendFrom && bodyLivesOn())
        writer.lend(m_body->data() + (m_sent - 5), length);
    else
        writer.pending().append(*m_body, m_sent - 5, length);
    m_sent += length;
    m_announced -= length;
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

void H2GrpcSlot::finished(CallOutcome &outcome, const std::string_view *message)
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
        if (message->size() <= static_cast<size_t>(std::numeric_limits<int>::max())
            && m_decoded->ParseFromArray(message->data(), static_cast<int>(message->size()))) {
            outcome.reply = m_decoded.get();
        } else {
            outcome.status = CallStatus::DecodeError;
            outcome.errorMessage = "the reply does not parse as " + m_decoded->GetDescriptor()->full_name();
        }
    }
    m_sink->callDone(m_index, outcome);
}

std::string_view H2GrpcSlot::inflated(std::string_view compressed, CallOutcome *outcome)
{
    if (m_encoding == GrpcEncoding::Identity || m_encoding == GrpcEncoding::Other) {
        outcome->status = m_encoding == GrpcEncoding::Other ? CallStatus::Unimplemented : CallStatus::Internal;
        outcome->errorMessage = m_encoding == GrpcEncoding::Other
            ? "the reply is compressed with \"" + m_encodingName
                + "\"; rpcscope's HTTP/2 client inflates gzip and deflate"
            : "a message marked compressed in a reply without grpc-encoding";
        return {};
    }
    const InflateResult result
        = inflateGrpcMessage(m_encoding, compressed, m_transport->m_target.receiveLimit(), &m_inflated);
    outcome->status = result.status;
    outcome->errorMessage = result.error;
    return m_inflated;
}

void H2GrpcSlot::streamEnded(uint32_t errorCode, bool goingAway)
{
    CallOutcome outcome;
    outcome.bytesSent = messageBytesSent();
    outcome.bytesReceived = messageBytesReceived();
    outcome.headers = std::move(m_headers);
    outcome.trailers = std::move(m_trailers);
    std::string_view reply;
    const std::string_view *message = nullptr;
    if (streaming() && (!m_failure.empty() || m_endedByClient)) {
        outcome.status = m_failure.empty() ? CallStatus::Ok : m_failureStatus;
        outcome.errorMessage = m_failure;
        outcome.fatal = m_failureStatus == CallStatus::InvalidArgument; // a request template that broke
    } else if (m_tooLarge) {
        outcome.status = CallStatus::ResourceExhausted;
        outcome.errorMessage = "reply larger than the receive limit of "
            + std::to_string(m_transport->m_target.receiveLimit()) + " bytes (raise it with --max-recv-size)";
    } else if (m_grpcStatus >= 0) {
        outcome.status = m_grpcStatus;
        outcome.errorMessage
            = m_badGrpcStatus.empty() ? m_grpcMessage : unknownGrpcStatusError(m_badGrpcStatus, m_grpcMessage);
        if (outcome.status == CallStatus::Ok && streaming()) {
            if (!m_inbox.empty()) {
                outcome.status = CallStatus::Internal;
                outcome.errorMessage
                    = "the stream ended inside a message (" + std::to_string(m_inbox.size()) + " bytes of it came)";
            } else if (m_clientStreams && !m_serverStreams && m_messagesReceived == 0) {
                outcome.status = CallStatus::DecodeError;
                outcome.errorMessage = "the client stream ended OK without a reply";
            }
        } else if (outcome.status == CallStatus::Ok) {
            // One length-prefixed message: a flag byte (0: not compressed) and a 4-byte big-endian length.
            const std::string &r = m_reply;
            if (r.size() < 5) {
                outcome.status = CallStatus::Internal;
                outcome.errorMessage = "OK without a reply message";
            } else {
                const uint32_t length = (uint32_t(uint8_t(r[1])) << 24) | (uint32_t(uint8_t(r[2])) << 16)
                    | (uint32_t(uint8_t(r[3])) << 8) | uint32_t(uint8_t(r[4]));
                if (length != r.size() - 5) {
                    outcome.status = CallStatus::Internal;
                    outcome.errorMessage = "the reply's length prefix says " + std::to_string(length) + " bytes, "
                        + std::to_string(r.size() - 5) + " came";
                } else if (r[0] != 0) {
                    reply = inflated(std::string_view(r).substr(5), &outcome);
                    if (outcome.status == CallStatus::Ok)
                        message = &reply;
                } else {
                    reply = std::string_view(r).substr(5); // not erased from the string: a move of the whole reply
                    message = &reply;
                }
            }
        }
    } else if (errorCode == NGHTTP2_REFUSED_STREAM && goingAway) {
        outcome.status = CallStatus::Unavailable;
        outcome.errorMessage = "the server is going away (GOAWAY) and did not take this call";
    } else if (errorCode != NGHTTP2_NO_ERROR) {
        outcome.status = errorCode == NGHTTP2_REFUSED_STREAM ? CallStatus::Unavailable : CallStatus::Internal;
        outcome.errorMessage = std::string("stream reset by the server: ") + nghttp2_http2_strerror(errorCode);
    } else if (m_httpStatus != 200) {
        outcome.status = grpcStatusForHttp(static_cast<unsigned>(m_httpStatus));
        outcome.errorMessage = "HTTP " + std::to_string(m_httpStatus) + " without a gRPC status";
    } else {
        outcome.status = CallStatus::Internal;
        outcome.errorMessage = "the stream ended without a gRPC status";
    }
    finished(outcome, message);
}

} // namespace rpcscope::h2grpc
