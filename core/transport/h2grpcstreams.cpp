// h2grpc: streaming calls (see h2grpcparts.h). A streaming call's messages, each framed with gRPC's 5-byte prefix,
// queued for nghttp2's data provider (which waits, DEFERRED, while none is queued); the replies cut from the DATA as
// it comes, each timed as the gRPC transport times it (MessageTiming). Everything here runs on the connection's
// thread.

#include "h2grpcparts.h"

#include <algorithm>
#include <cstring>

namespace rpcscope::h2grpc {

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
    // NOLINTNEXTLINE(bugprone-not-null-terminated-result): binary frame data, not a C string
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
        const size_t size = (size_t(p[1]) << 24) | (size_t(p[2]) << 16) | (size_t(p[3]) << 8) | size_t(p[4]);
        if (size > limit)
            return failStream(CallStatus::ResourceExhausted,
                "message " + std::to_string(m_messagesReceived + 1) + " is larger than the receive limit of "
                    + std::to_string(limit) + " bytes (raise it with --max-recv-size)");
        if (m_inbox.size() - at - 5 < size)
            break;
        if (p[0] != 0) {
            CallOutcome failed;
            const std::string_view message = inflated(std::string_view(m_inbox).substr(at + 5, size), &failed);
            if (failed.status != CallStatus::Ok)
                return failStream(failed.status,
                    "message " + std::to_string(m_messagesReceived + 1) + " of the stream: " + failed.errorMessage);
            messageArrived(message.data(), message.size());
        } else {
            messageArrived(m_inbox.data() + at + 5, size);
        }
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
    const auto [latency, timing]
        = timeStreamMessage(m_clientStreams, m_serverStreams, m_messagesReceived, m_sendTimes, m_lastReceived, now);
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

} // namespace rpcscope::h2grpc
