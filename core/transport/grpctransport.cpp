#include "grpctransport.h"

#include "grpccompression.h"
#include "metrics/callstatus.h"
#include "util/cpuset.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <grpc/byte_buffer.h>
#include <grpc/slice.h>
#include <grpc/support/time.h>
#include <grpcpp/alarm.h>
#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>
#include <grpcpp/completion_queue.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/resource_quota.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_certificate_verifier.h>
#include <grpcpp/security/tls_credentials_options.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/channel_arguments.h>
#include <grpcpp/support/proto_buffer_reader.h>
#include <grpcpp/support/stub_options.h>

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace grpc::internal {

/**
 * grpc++ declares this peer of ByteBuffer (and befriends it) for its own tests, and ships no definition of it.
 * rpcscope defines it to learn one thing ByteBuffer does not say: whether a received message is still compressed
 * (inflateReceived()).
 */
class GrpcByteBufferPeer {
public:
    explicit GrpcByteBufferPeer(ByteBuffer *buffer) : m_buffer(buffer) { }
    grpc_byte_buffer *c_buffer() { return m_buffer->c_buffer(); }

private:
    ByteBuffer *m_buffer;
};

} // namespace grpc::internal

namespace rpcscope {

namespace {

/**
 * libgrpc 1.51 inflates a compressed message whole before it checks the receive limit: a 1 MB gzip bomb made it
 * hold 1.1 GB. Our channels turn its per-message decompression off, so a compressed message arrives as it was sent,
 * marked with its algorithm; it is inflated here, and stops at @p limit bytes (RESOURCE_EXHAUSTED, as h2grpc says).
 * True when @p message is ready to parse (inflated, or never compressed); else @p status and @p error say why.
 */
bool inflateReceived(grpc::ByteBuffer *message, size_t limit, int *status, std::string *error)
{
    grpc_byte_buffer *raw = grpc::internal::GrpcByteBufferPeer(message).c_buffer();
    if (!raw || raw->type != GRPC_BB_RAW || raw->data.raw.compression == GRPC_COMPRESS_NONE)
        return true;
    const grpc_compression_algorithm algorithm = raw->data.raw.compression;
    const GrpcEncoding encoding = algorithm == GRPC_COMPRESS_GZIP ? GrpcEncoding::Gzip
        : algorithm == GRPC_COMPRESS_DEFLATE                      ? GrpcEncoding::Deflate
                                                                  : GrpcEncoding::Other;
    std::string compressed;
    const grpc_slice_buffer &slices = raw->data.raw.slice_buffer;
    for (size_t i = 0; i < slices.count; ++i)
        compressed.append(reinterpret_cast<const char *>(GRPC_SLICE_START_PTR(slices.slices[i])),
            GRPC_SLICE_LENGTH(slices.slices[i]));
    std::string inflated;
    const InflateResult result = inflateGrpcMessage(encoding, compressed, limit, &inflated);
    if (result.status != CallStatus::Ok) {
        *status = result.status;
        *error = result.error;
        return false;
    }
    const grpc::Slice slice(inflated);
    *message = grpc::ByteBuffer(&slice, 1);
    return true;
}

/// A call's status and message from gRPC's: a code gRPC does not define counts UNKNOWN, the code named in the message.
void takeStatus(const grpc::Status &status, CallOutcome *outcome)
{
    const int code = static_cast<int>(status.error_code());
    outcome->status = callStatusFromGrpcCode(code);
    outcome->errorMessage = outcome->status == code
        ? status.error_message()
        : unknownGrpcStatusError(std::to_string(code), status.error_message());
}

class GrpcTransport;

/// What a completion queue hands back: every tag given to gRPC is one of these (never a class deriving from two).
class QueueTag {
public:
    virtual void done(bool ok) = 0;

protected:
    ~QueueTag() = default;
};

/// A tag for one kind of operation of a slot: done() calls the slot's member for it.
template<typename Slot> class OpTag final : public QueueTag {
public:
    OpTag(Slot *slot, void (Slot::*handler)(bool)) : m_slot(slot), m_handler(handler) { }
    void done(bool ok) override { (m_slot->*m_handler)(ok); }

private:
    Slot *m_slot;
    void (Slot::*m_handler)(bool);
};

/// A monotonic deadline @p after from now: a wall-clock step (NTP) must not cut calls short or stretch them.
gpr_timespec deadlineAfter(std::chrono::nanoseconds after)
{
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(after);
    return gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_micros(us.count(), GPR_TIMESPAN));
}

/**
 * Fires alarms at their time, to tens of microseconds: gRPC's own timers fire on the next millisecond tick, which
 * made a 200 us --stream-interval take 1.2 ms and a 5 ms one 6 ms. A thread sleeps until the earliest deadline,
 * then sets the alarm to a deadline already past, which gRPC delivers on its completion queue at once. Every Set
 * happens on that thread, and nothing is cancelled: a wait cut short is moved to now instead.
 */
class AlarmThread {
public:
    using Clock = std::chrono::steady_clock;

    AlarmThread() : m_thread([this] { fireOnTime(); }) { }

    ~AlarmThread()
    {
        {
            std::lock_guard lock(m_mutex);
            m_stopping = true;
        }
        m_wake.notify_one();
        m_thread.join();
    }

    /// Sets @p alarm on @p queue with @p tag at @p when.
    void at(Clock::time_point when, grpc::Alarm *alarm, grpc::CompletionQueue *queue, QueueTag *tag)
    {
        std::lock_guard lock(m_mutex);
        const auto it = m_due.emplace(when, Entry { alarm, queue, tag });
        if (it == m_due.begin())
            m_wake.notify_one();
    }

    /// Fires @p alarm at once if it is still waiting.
    void now(grpc::Alarm *alarm)
    {
        std::lock_guard lock(m_mutex);
        for (auto it = m_due.begin(); it != m_due.end(); ++it) {
            if (it->second.alarm == alarm) {
                const Entry entry = it->second;
                m_due.erase(it);
                m_due.emplace(Clock::time_point::min(), entry);
                m_wake.notify_one();
                return;
            }
        }
    }

private:
    struct Entry {
        grpc::Alarm *alarm;
        grpc::CompletionQueue *queue;
        QueueTag *tag;
    };

    void fireOnTime()
    {
        std::unique_lock lock(m_mutex);
        for (;;) {
            // Stopping waits for the alarms still due: each is a call's outstanding operation.
            if (m_due.empty()) {
                if (m_stopping)
                    return;
                m_wake.wait(lock);
                continue;
            }
            const auto first = m_due.begin();
            if (first->first > Clock::now()) {
                // A copy: wait_until reads its deadline again after waking, and now() may have erased the entry
                // (ASan caught the map node's time being read after it was freed).
                const Clock::time_point deadline = first->first;
                m_wake.wait_until(lock, deadline);
                continue;
            }
            const Entry entry = first->second;
            m_due.erase(first);
            lock.unlock();
            entry.alarm->Set(entry.queue, gpr_inf_past(GPR_CLOCK_MONOTONIC), static_cast<void *>(entry.tag));
            lock.lock();
        }
    }

    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::multimap<Clock::time_point, Entry> m_due;
    bool m_stopping = false;
    std::thread m_thread;
};

/// The server's initial and trailing metadata of a finished call, for a call shown to the user.
void captureMetadata(const grpc::ClientContext &context, CallOutcome *outcome)
{
    auto lines = [](const std::multimap<grpc::string_ref, grpc::string_ref> &map) {
        MetadataLines result;
        for (const auto &[key, value] : map)
            result.emplace_back(std::string(key.data(), key.size()), std::string(value.data(), value.size()));
        return result;
    };
    outcome->headers = lines(context.GetServerInitialMetadata());
    outcome->trailers = lines(context.GetServerTrailingMetadata());
}

class GrpcSlot final : public CallSlot {
public:
    GrpcSlot(
        GrpcTransport *transport, grpc::GenericStub *stub, grpc::CompletionQueue *queue, int index, CallSink *sink);
    void start(uint64_t callNumber) override;
    void cancel() override;
    /// The call's Finish tag came out of the completion queue (on its poller thread).
    void finished(bool ok);

private:
    GrpcTransport *m_transport;
    grpc::GenericStub *m_stub;
    grpc::CompletionQueue *m_queue;
    int m_index;
    std::unique_ptr<grpc::ClientAsyncResponseReader<grpc::ByteBuffer>> m_reader;
    grpc::Status m_status;
    CallSink *m_sink;
    grpc::ByteBuffer m_response;
    grpc::ByteBuffer m_ownRequest; // this call's request, when encoded per call
    const grpc::ByteBuffer *m_request = nullptr;
    uint64_t m_requestBytes = 0;
    std::string m_encodeError;
    std::mt19937_64 m_rng;
    std::unique_ptr<google::protobuf::Message> m_decoded;
    // A ClientContext serves one call. Two alternate, so the one being replaced belongs to the call before the
    // previous one and is certainly no longer touched by gRPC.
    std::unique_ptr<grpc::ClientContext> m_contexts[2];
    int m_current = 0;
    std::mutex m_contextMutex; // guards m_contexts against cancel() from another thread
    OpTag<GrpcSlot> m_finishTag { this, &GrpcSlot::finished };
};

/**
 * One caller's streaming calls (server, client or bidi), as StreamOptions describes. Every operation of a call
 * (start, read, write, writes-done, finish, the interval and call-duration alarms) comes back on the slot's one
 * completion queue, so they never run at the same time; the call is reported once its status is in and no
 * operation is outstanding.
 */
class GrpcStreamSlot final : public CallSlot {
public:
    GrpcStreamSlot(
        GrpcTransport *transport, grpc::GenericStub *stub, grpc::CompletionQueue *queue, int index, CallSink *sink);
    void start(uint64_t callNumber) override;
    void cancel() override;

private:
    using Clock = std::chrono::steady_clock;

    void started(bool ok);
    void read(bool ok);
    void written(bool ok);
    void writesClosed(bool ok);
    void intervalOver(bool ok);
    void callTimeUp(bool ok);
    void finished(bool ok);

    void postRead();
    void sendNext();
    void write();
    void closeWrites();
    void finishCall();
    void endByClient();
    void maybeReport();

    GrpcTransport *m_transport;
    grpc::GenericStub *m_stub;
    grpc::CompletionQueue *m_queue;
    const int m_index;
    CallSink *m_sink;
    const bool m_clientStreams; // the client sends a stream (client or bidi); else one request
    const bool m_serverStreams;
    const bool m_pingPong; // bidi, each message waiting for the previous one's reply
    std::unique_ptr<google::protobuf::Message> m_decoded;
    std::mt19937_64 m_rng;

    // The call in flight. Contexts alternate as in GrpcSlot; the stream of the previous call is done with.
    std::unique_ptr<grpc::ClientContext> m_contexts[2];
    int m_current = 0;
    std::mutex m_contextMutex; // guards m_contexts against cancel() from another thread
    std::unique_ptr<grpc::GenericClientAsyncReaderWriter> m_stream;
    std::unique_ptr<grpc::Alarm> m_intervalAlarm;
    std::unique_ptr<grpc::Alarm> m_callAlarm;
    grpc::ByteBuffer m_outgoing;
    grpc::ByteBuffer m_incoming;
    grpc::Status m_status;
    uint64_t m_callNumber = 0;
    int m_pending = 0; // operations given to gRPC whose tags have not come back
    uint64_t m_sent = 0;
    uint64_t m_received = 0;
    uint64_t m_bytesSent = 0;
    uint64_t m_bytesReceived = 0;
    Clock::time_point m_callStart;
    Clock::time_point m_lastReceived;
    Clock::time_point m_lastSent;
    std::vector<Clock::time_point> m_sendTimes; // bidi: when each request went out, to pair replies with
    bool m_writing = false; // a write or an interval wait is outstanding
    bool m_intervalWait = false; // the interval alarm is set
    bool m_writesClosed = false;
    bool m_finishing = false;
    bool m_finished = false;
    bool m_timeUp = false;
    bool m_endedByClient = false;
    bool m_callAlarmSet = false;
    std::string m_failure; // set: the call failed on our side (a reply that does not parse, a request template)
    int m_failureStatus = 0;

    OpTag<GrpcStreamSlot> m_startTag { this, &GrpcStreamSlot::started };
    OpTag<GrpcStreamSlot> m_readTag { this, &GrpcStreamSlot::read };
    OpTag<GrpcStreamSlot> m_writeTag { this, &GrpcStreamSlot::written };
    OpTag<GrpcStreamSlot> m_writesDoneTag { this, &GrpcStreamSlot::writesClosed };
    OpTag<GrpcStreamSlot> m_intervalTag { this, &GrpcStreamSlot::intervalOver };
    OpTag<GrpcStreamSlot> m_callTimeTag { this, &GrpcStreamSlot::callTimeUp };
    OpTag<GrpcStreamSlot> m_finishTag { this, &GrpcStreamSlot::finished };
};

/**
 * The memory quota of channel @p index of @p connections: room, for each call it carries at once (the callers are
 * spread evenly over the channels), for two replies at the receive limit and two of the largest request (a message
 * being read or written is held whole, and once more while it is copied), plus 64 MiB for the transport itself.
 */
size_t channelMemoryBudget(const GrpcTarget &target, size_t largestRequest, int index, int connections)
{
    const int callers = std::max(1, target.concurrency);
    const int calls = callers / connections + (index < callers % connections ? 1 : 0);
    const size_t perCall = 2 * target.receiveLimit() + 2 * largestRequest;
    return static_cast<size_t>(std::max(1, calls)) * perCall + (size_t { 64 } << 20);
}

class GrpcTransport final : public Transport {
public:
    GrpcTransport(const GrpcTarget &target, GrpcCall call) : m_target(target), m_call(std::move(call))
    {
        for (const std::string &request : m_call.requests) {
            const grpc::Slice slice(request.data(), request.size());
            m_requests.emplace_back(&slice, 1);
        }
        // Requests made anew for each call (templates) are not known yet: counted as large as the receive limit.
        size_t largestRequest = m_call.perCall ? target.receiveLimit() : 0;
        for (const std::string &request : m_call.requests)
            largestRequest = std::max(largestRequest, request.size());
        const int connections = std::max(1, target.connections);
        for (int i = 0; i < connections; ++i) {
            grpc::ChannelArguments args;
            // Separate subchannel pools give each channel its own TCP connection.
            args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
            args.SetInt("rpcscope.connection_index", i);
            // No retry filter: a load test counts every attempt, and libgrpc 1.51's retry filter aborts the process
            // (an assertion on the status) when a server's trailers lack grpc-status; without it such a call ends
            // UNKNOWN "No status received", as the nghttp2 client reports it INTERNAL.
            args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
            // Compressed replies are inflated by inflateReceived(), bounded by the receive limit, not by libgrpc.
            args.SetInt(GRPC_ARG_ENABLE_PER_MESSAGE_DECOMPRESSION, 0);
            if (target.maxReceiveBytes >= 0)
                args.SetMaxReceiveMessageSize(target.maxReceiveBytes);
            // libgrpc 1.51 opens a stream's window as far as a reply's length prefix announces and holds what comes
            // until the message is whole: the receive limit applies only then, so a server announcing 2 GiB had us
            // hold up to 2 GiB. A memory quota per channel bounds what its transport may hold; past it a call fails
            // RESOURCE_EXHAUSTED ("Buffers full") at once.
            m_quotas.push_back(std::make_unique<grpc::ResourceQuota>());
            m_quotas.back()->Resize(channelMemoryBudget(target, largestRequest, i, connections));
            args.SetResourceQuota(*m_quotas.back());
            if (target.maxSendBytes >= 0)
                args.SetMaxSendMessageSize(target.maxSendBytes);
            if (!target.authority.empty())
                args.SetString(GRPC_ARG_DEFAULT_AUTHORITY, target.authority);
            if (!target.tls.serverNameOverride.empty())
                args.SetSslTargetNameOverride(target.tls.serverNameOverride);
            // gRPC C++ writes its own user-agent over a call's: the channel puts the caller's first, as h2grpc does.
            for (const auto &[key, value] : target.metadata)
                if (key == "user-agent")
                    args.SetUserAgentPrefix(value);
            auto channel
                = grpc::CreateCustomChannel(target.address.toStdString(), grpcChannelCredentials(target.tls), args);
            m_stubs.push_back(std::make_unique<grpc::GenericStub>(channel));
        }
        // Completion queues, each drained by its own thread, rather than gRPC's callback API: a reply is handled,
        // and the caller's next call started, on the thread that read it, with no hand-off to another thread
        // (measured at c=1 against the same server: p50 171 -> 123 us, client CPU 127 -> 77 us per call).
        const int queues = std::clamp(target.clientThreads, 1, 64);
        for (int i = 0; i < queues; ++i) {
            m_queues.push_back(std::make_unique<grpc::CompletionQueue>());
            m_pollers.emplace_back([queue = m_queues.back().get()] {
                void *tag = nullptr;
                bool ok = false;
                while (queue->Next(&tag, &ok))
                    static_cast<QueueTag *>(tag)->done(ok);
            });
        }
    }

    ~GrpcTransport() override
    {
        // Every call has ended by now (the engine waits for them): the queues only have to close.
        m_alarms.reset();
        for (auto &queue : m_queues)
            queue->Shutdown();
        for (auto &poller : m_pollers)
            poller.join();
    }

    std::unique_ptr<CallSlot> makeSlot(int index, CallSink *sink) override
    {
        const auto i = static_cast<size_t>(index);
        grpc::GenericStub *stub = m_stubs[i % m_stubs.size()].get();
        grpc::CompletionQueue *queue = m_queues[i % m_queues.size()].get();
        if (m_call.method && (m_call.method->client_streaming() || m_call.method->server_streaming()))
            return std::make_unique<GrpcStreamSlot>(this, stub, queue, index, sink);
        return std::make_unique<GrpcSlot>(this, stub, queue, index, sink);
    }

    /// The thread pacing the streams' messages, started at the first use.
    AlarmThread &alarms()
    {
        std::call_once(m_alarmsOnce, [this] { m_alarms = std::make_unique<AlarmThread>(); });
        return *m_alarms;
    }

    /// Applies the per-call settings (deadline, metadata) to a fresh context.
    void prepareContext(grpc::ClientContext *context) const
    {
        if (m_target.timeout.count() > 0)
            context->set_deadline(deadlineAfter(m_target.timeout));
        for (const auto &[key, value] : m_target.metadata)
            if (key != "user-agent") // the channel's (see the constructor)
                context->AddMetadata(key, value);
    }

    const GrpcTarget m_target;
    const GrpcCall m_call;
    std::vector<grpc::ByteBuffer> m_requests;
    std::vector<std::unique_ptr<grpc::ResourceQuota>> m_quotas; ///< one a channel, outliving it
    std::vector<std::unique_ptr<grpc::GenericStub>> m_stubs;
    std::vector<std::unique_ptr<grpc::CompletionQueue>> m_queues;
    std::vector<std::thread> m_pollers;
    std::once_flag m_alarmsOnce;
    std::unique_ptr<AlarmThread> m_alarms;
};

GrpcSlot::GrpcSlot(
    GrpcTransport *transport, grpc::GenericStub *stub, grpc::CompletionQueue *queue, int index, CallSink *sink)
    : m_transport(transport)
    , m_stub(stub)
    , m_queue(queue)
    , m_index(index)
    , m_sink(sink)
    , m_rng(std::random_device {}() ^ static_cast<uint64_t>(index))
{
    if (m_transport->m_call.responseType)
        m_decoded = m_transport->m_call.schema.newMessage(m_transport->m_call.responseType);
}

void GrpcSlot::start(uint64_t callNumber)
{
    const GrpcCall &call = m_transport->m_call;
    if (call.perCall) {
        std::string bytes;
        m_encodeError.clear();
        if (!call.perCall->encode(callNumber, m_index, m_rng, &bytes, &m_encodeError)) {
            // Nothing was sent: report it as this call's outcome, from this thread, like any other ending.
            CallOutcome outcome;
            outcome.status = CallStatus::InvalidArgument;
            outcome.errorMessage = "request template: " + m_encodeError + " (run stopped)";
            outcome.fatal = true;
            m_sink->callDone(m_index, outcome);
            return;
        }
        const grpc::Slice slice(bytes.data(), bytes.size());
        m_ownRequest = grpc::ByteBuffer(&slice, 1);
        m_request = &m_ownRequest;
        m_requestBytes = bytes.size();
    } else {
        const auto which = static_cast<size_t>(callNumber % m_transport->m_requests.size());
        m_request = &m_transport->m_requests[which];
        m_requestBytes = call.requests[which].size();
    }
    grpc::ClientContext *context;
    {
        std::lock_guard lock(m_contextMutex);
        m_current ^= 1;
        m_contexts[m_current] = std::make_unique<grpc::ClientContext>();
        context = m_contexts[m_current].get();
    }
    m_transport->prepareContext(context);
    m_response.Clear();
    m_reader = m_stub->PrepareUnaryCall(context, m_transport->m_call.methodPath, *m_request, m_queue);
    m_reader->StartCall();
    m_reader->Finish(&m_response, &m_status, static_cast<QueueTag *>(&m_finishTag));
}

void GrpcSlot::cancel()
{
    std::lock_guard lock(m_contextMutex);
    if (m_contexts[m_current])
        m_contexts[m_current]->TryCancel();
}

void GrpcSlot::finished(bool /*ok: a Finish always comes back with the status filled in*/)
{
    const grpc::Status &status = m_status;
    CallOutcome outcome;
    outcome.bytesSent = m_requestBytes;
    outcome.bytesReceived = m_response.Length();
    int inflateStatus = CallStatus::Ok;
    std::string inflateError;
    if (!status.ok()) {
        takeStatus(status, &outcome);
    } else if (m_response.Valid()
        && !inflateReceived(&m_response, m_transport->m_target.receiveLimit(), &inflateStatus, &inflateError)) {
        outcome.status = inflateStatus;
        outcome.errorMessage = inflateError;
    } else if (!m_response.Valid()) {
        // gRPC C++ ends a unary call OK with no message when the server sent none (trailers-only grpc-status 0) or
        // a length prefix the message never filled: no reply is no success, as the nghttp2 client says too.
        outcome.status = CallStatus::Internal;
        outcome.errorMessage = "OK without a reply message";
    } else if (m_decoded) {
        grpc::ProtoBufferReader reader(&m_response);
        if (m_decoded->ParseFromZeroCopyStream(&reader)) {
            outcome.reply = m_decoded.get();
        } else {
            outcome.status = CallStatus::DecodeError;
            outcome.errorMessage = "reply does not parse as " + m_decoded->GetDescriptor()->full_name();
        }
    }
    if (m_transport->m_call.captureMetadata)
        captureMetadata(*m_contexts[m_current], &outcome);
    m_sink->callDone(m_index, outcome);
}

GrpcStreamSlot::GrpcStreamSlot(
    GrpcTransport *transport, grpc::GenericStub *stub, grpc::CompletionQueue *queue, int index, CallSink *sink)
    : m_transport(transport)
    , m_stub(stub)
    , m_queue(queue)
    , m_index(index)
    , m_sink(sink)
    , m_clientStreams(transport->m_call.method->client_streaming())
    , m_serverStreams(transport->m_call.method->server_streaming())
    , m_pingPong(m_clientStreams && m_serverStreams && transport->m_call.stream.pingPong)
    , m_rng(std::random_device {}() ^ static_cast<uint64_t>(index))
{
    if (m_transport->m_call.responseType)
        m_decoded = m_transport->m_call.schema.newMessage(m_transport->m_call.responseType);
}

void GrpcStreamSlot::start(uint64_t callNumber)
{
    m_callNumber = callNumber;
    m_pending = 0;
    m_sent = m_received = m_bytesSent = m_bytesReceived = 0;
    m_sendTimes.clear();
    m_writing = m_intervalWait = m_writesClosed = m_finishing = m_finished = m_timeUp = m_endedByClient = m_callAlarmSet
        = false;
    m_failure.clear();
    m_failureStatus = CallStatus::Ok;
    m_status = grpc::Status();
    grpc::ClientContext *context;
    {
        std::lock_guard lock(m_contextMutex);
        m_current ^= 1;
        m_contexts[m_current] = std::make_unique<grpc::ClientContext>();
        context = m_contexts[m_current].get();
    }
    m_transport->prepareContext(context);
    m_callStart = m_lastReceived = Clock::now();
    m_stream = m_stub->PrepareCall(context, m_transport->m_call.methodPath, m_queue);
    ++m_pending;
    m_stream->StartCall(static_cast<QueueTag *>(&m_startTag));
    const StreamOptions &options = m_transport->m_call.stream;
    if (options.callDuration.count() > 0) {
        m_callAlarm = std::make_unique<grpc::Alarm>();
        m_callAlarmSet = true;
        ++m_pending;
        m_callAlarm->Set(m_queue, deadlineAfter(options.callDuration), static_cast<QueueTag *>(&m_callTimeTag));
    }
}

void GrpcStreamSlot::cancel()
{
    std::lock_guard lock(m_contextMutex);
    if (m_contexts[m_current])
        m_contexts[m_current]->TryCancel();
}

void GrpcStreamSlot::started(bool ok)
{
    --m_pending;
    if (!ok) { // the call never started (the channel is down): Finish says why
        finishCall();
        return;
    }
    if (m_finishing) { // the client's time ran out first: no reads or writes after the Finish
        maybeReport();
        return;
    }
    postRead();
    sendNext();
}

void GrpcStreamSlot::postRead()
{
    m_incoming.Clear();
    ++m_pending;
    m_stream->Read(&m_incoming, static_cast<QueueTag *>(&m_readTag));
}

void GrpcStreamSlot::read(bool ok)
{
    --m_pending;
    if (!ok) { // the server is done sending (or the call ended): the status is next
        finishCall();
        return;
    }
    const auto now = Clock::now();
    ++m_received;
    m_bytesReceived += m_incoming.Length();
    if (int status = CallStatus::Ok;
        m_failure.empty() && !inflateReceived(&m_incoming, m_transport->m_target.receiveLimit(), &status, &m_failure)) {
        m_failureStatus = status;
        m_failure = "message " + std::to_string(m_received) + " of the stream: " + m_failure;
        cancel();
    }
    const auto [latency, timing]
        = timeStreamMessage(m_clientStreams, m_serverStreams, m_received, m_sendTimes, m_lastReceived, now);
    m_lastReceived = now;
    const google::protobuf::Message *message = nullptr;
    if (m_decoded && m_failure.empty()) {
        grpc::ProtoBufferReader reader(&m_incoming);
        if (m_decoded->ParseFromZeroCopyStream(&reader)) {
            message = m_decoded.get();
        } else {
            m_failureStatus = CallStatus::DecodeError;
            m_failure = "message " + std::to_string(m_received) + " of the stream does not parse as "
                + m_decoded->GetDescriptor()->full_name();
            cancel();
        }
    }
    m_sink->messageReceived(m_index, timing, latency, message);
    const uint64_t enough = m_transport->m_call.stream.callCount;
    if (!m_clientStreams && enough > 0 && m_received >= enough) {
        endByClient();
        return;
    }
    if (m_finishing) { // ended by the client's time limit meanwhile: the Finish is under way
        maybeReport();
        return;
    }
    postRead();
    if (m_pingPong && m_received >= m_sent)
        sendNext(); // the reply to the last message sent: the next one may go
}

void GrpcStreamSlot::sendNext()
{
    if (m_finishing || m_writesClosed || m_writing)
        return;
    if (m_timeUp || m_sent >= streamMessagesToSend(m_transport->m_call)) {
        closeWrites();
        return;
    }
    const std::chrono::nanoseconds interval = m_transport->m_call.stream.interval;
    if (m_sent > 0 && interval.count() > 0) {
        m_writing = m_intervalWait = true;
        m_intervalAlarm = std::make_unique<grpc::Alarm>();
        ++m_pending;
        // From the previous message's send, not its completion: the messages keep the cadence asked for.
        m_transport->alarms().at(m_lastSent + interval, m_intervalAlarm.get(), m_queue, &m_intervalTag);
        return;
    }
    write();
}

void GrpcStreamSlot::write()
{
    const GrpcCall &call = m_transport->m_call;
    if (call.perCall) {
        std::string bytes;
        std::string why;
        if (!call.perCall->encode(m_callNumber, m_index, m_rng, &bytes, &why)) {
            m_failureStatus = CallStatus::InvalidArgument;
            m_failure = "request template: " + why + " (run stopped)";
            cancel();
            closeWrites();
            return;
        }
        const grpc::Slice slice(bytes.data(), bytes.size());
        m_outgoing = grpc::ByteBuffer(&slice, 1);
    } else {
        m_outgoing = m_transport->m_requests[static_cast<size_t>(m_sent % m_transport->m_requests.size())];
    }
    m_bytesSent += m_outgoing.Length();
    m_lastSent = Clock::now();
    if (m_clientStreams && m_serverStreams)
        m_sendTimes.push_back(m_lastSent);
    m_writing = true;
    ++m_pending;
    m_stream->Write(m_outgoing, static_cast<QueueTag *>(&m_writeTag));
}

void GrpcStreamSlot::written(bool ok)
{
    --m_pending;
    m_writing = false;
    if (!ok) { // the stream is broken: the read side sees it too and fetches the status
        m_writesClosed = true;
        maybeReport();
        return;
    }
    ++m_sent;
    // Ping-pong: the next message waits for this one's reply (read() sends it), unless the reply beat the write.
    if (!m_pingPong || m_received >= m_sent)
        sendNext();
    maybeReport();
}

void GrpcStreamSlot::intervalOver(bool ok)
{
    --m_pending;
    m_writing = m_intervalWait = false;
    if (ok && !m_finishing && !m_timeUp)
        write();
    else
        sendNext();
    maybeReport();
}

void GrpcStreamSlot::closeWrites()
{
    if (m_writesClosed)
        return;
    m_writesClosed = true;
    ++m_pending;
    m_stream->WritesDone(static_cast<QueueTag *>(&m_writesDoneTag));
}

void GrpcStreamSlot::writesClosed(bool /*ok*/)
{
    --m_pending;
    maybeReport();
}

void GrpcStreamSlot::callTimeUp(bool ok)
{
    --m_pending;
    m_callAlarmSet = false;
    if (ok && !m_finishing) {
        m_timeUp = true;
        if (!m_clientStreams) {
            endByClient();
        } else if (m_intervalWait) {
            m_transport->alarms().now(m_intervalAlarm.get()); // its tag comes back at once and closes the writes
        } else {
            sendNext();
        }
    }
    maybeReport();
}

void GrpcStreamSlot::endByClient()
{
    m_endedByClient = true;
    cancel();
    finishCall();
}

void GrpcStreamSlot::finishCall()
{
    if (m_finishing)
        return;
    m_finishing = true;
    if (m_intervalWait)
        m_transport->alarms().now(m_intervalAlarm.get());
    if (m_callAlarmSet)
        m_callAlarm->Cancel();
    ++m_pending;
    m_stream->Finish(&m_status, static_cast<QueueTag *>(&m_finishTag));
}

void GrpcStreamSlot::finished(bool /*ok*/)
{
    --m_pending;
    m_finished = true;
    maybeReport();
}

void GrpcStreamSlot::maybeReport()
{
    if (!m_finished || m_pending > 0)
        return;
    CallOutcome outcome;
    outcome.bytesSent = m_bytesSent;
    outcome.bytesReceived = m_bytesReceived;
    outcome.messagesSent = m_sent;
    outcome.messagesReceived = m_received;
    if (!m_failure.empty()) {
        outcome.status = m_failureStatus;
        outcome.errorMessage = m_failure;
        outcome.fatal = m_failureStatus == CallStatus::InvalidArgument;
    } else if (!m_status.ok() && !(m_endedByClient && m_status.error_code() == grpc::StatusCode::CANCELLED)) {
        takeStatus(m_status, &outcome);
    } else if (m_clientStreams && !m_serverStreams && m_received == 0) {
        outcome.status = CallStatus::DecodeError;
        outcome.errorMessage = "the client stream ended OK without a reply";
    }
    if (m_transport->m_call.captureMetadata)
        captureMetadata(*m_contexts[m_current], &outcome);
    // The sink may start the next call from here, which resets this slot's state.
    m_sink->callDone(m_index, outcome);
}

} // namespace

uint64_t streamMessagesToSend(const GrpcCall &call)
{
    if (!call.method || !call.method->client_streaming())
        return 1;
    if (call.stream.callCount > 0)
        return call.stream.callCount;
    if (call.stream.callDuration.count() > 0)
        return UINT64_MAX; // until the time is up
    return call.perCall ? 1 : call.requests.size();
}

int autoClientThreads(int concurrency)
{
    return std::clamp(concurrency / 64, 1, usableCpuCount());
}

std::unique_ptr<Transport> makeGrpcTransport(const GrpcTarget &target, const GrpcCall &call)
{
    return std::make_unique<GrpcTransport>(target, call);
}

} // namespace rpcscope
