#include "grpctransport.h"

#include "metrics/callstatus.h"

#include <google/protobuf/message.h>
#include <grpc/support/time.h>
#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/completion_queue.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_certificate_verifier.h>
#include <grpcpp/security/tls_credentials_options.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/channel_arguments.h>
#include <grpcpp/support/proto_buffer_reader.h>
#include <grpcpp/support/stub_options.h>

#include <algorithm>
#include <mutex>
#include <thread>
#include <vector>

namespace rpcscope {

namespace {

class GrpcTransport;

class GrpcSlot final : public CallSlot
{
public:
    GrpcSlot(GrpcTransport *transport, grpc::GenericStub *stub, grpc::CompletionQueue *queue, int index, CallSink *sink);
    void start(uint64_t callNumber) override;
    void cancel() override;
    /// The call's Finish tag came out of the completion queue (on its poller thread).
    void finished();

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
};

class GrpcTransport final : public Transport
{
public:
    GrpcTransport(const GrpcTarget &target, const GrpcCall &call)
        : m_target(target)
        , m_call(call)
    {
        for (const std::string &request : m_call.requests) {
            const grpc::Slice slice(request.data(), request.size());
            m_requests.emplace_back(&slice, 1);
        }
        const int connections = std::max(1, target.connections);
        for (int i = 0; i < connections; ++i) {
            grpc::ChannelArguments args;
            // Separate subchannel pools give each channel its own TCP connection.
            args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
            args.SetInt("rpcscope.connection_index", i);
            if (target.maxReceiveBytes >= 0)
                args.SetMaxReceiveMessageSize(target.maxReceiveBytes);
            if (target.maxSendBytes >= 0)
                args.SetMaxSendMessageSize(target.maxSendBytes);
            if (!target.authority.empty())
                args.SetString(GRPC_ARG_DEFAULT_AUTHORITY, target.authority);
            if (!target.tls.serverNameOverride.empty())
                args.SetSslTargetNameOverride(target.tls.serverNameOverride);
            auto channel = grpc::CreateCustomChannel(target.address.toStdString(), grpcChannelCredentials(target.tls), args);
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
                    static_cast<GrpcSlot *>(tag)->finished();
            });
        }
    }

    ~GrpcTransport() override
    {
        // Every call has ended by now (the engine waits for them): the queues only have to close.
        for (auto &queue : m_queues)
            queue->Shutdown();
        for (auto &poller : m_pollers)
            poller.join();
    }

    std::unique_ptr<CallSlot> makeSlot(int index, CallSink *sink) override
    {
        const auto i = static_cast<size_t>(index);
        return std::make_unique<GrpcSlot>(this, m_stubs[i % m_stubs.size()].get(), m_queues[i % m_queues.size()].get(),
                                          index, sink);
    }

    const GrpcTarget m_target;
    const GrpcCall m_call;
    std::vector<grpc::ByteBuffer> m_requests;
    std::vector<std::unique_ptr<grpc::GenericStub>> m_stubs;
    std::vector<std::unique_ptr<grpc::CompletionQueue>> m_queues;
    std::vector<std::thread> m_pollers;
};

GrpcSlot::GrpcSlot(GrpcTransport *transport, grpc::GenericStub *stub, grpc::CompletionQueue *queue, int index,
                   CallSink *sink)
    : m_transport(transport)
    , m_stub(stub)
    , m_queue(queue)
    , m_index(index)
    , m_sink(sink)
    , m_rng(std::random_device{}() ^ static_cast<uint64_t>(index))
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
        const size_t which = static_cast<size_t>(callNumber % m_transport->m_requests.size());
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
    if (m_transport->m_target.timeout.count() > 0) {
        // A monotonic deadline: a wall-clock step (NTP) during a run must not cut calls short or stretch them.
        const auto timeoutUs = std::chrono::duration_cast<std::chrono::microseconds>(m_transport->m_target.timeout);
        context->set_deadline(gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                                           gpr_time_from_micros(timeoutUs.count(), GPR_TIMESPAN)));
    }
    for (const auto &[key, value] : m_transport->m_target.metadata)
        context->AddMetadata(key, value);
    m_response.Clear();
    m_reader = m_stub->PrepareUnaryCall(context, m_transport->m_call.methodPath, *m_request, m_queue);
    m_reader->StartCall();
    m_reader->Finish(&m_response, &m_status, this);
}

void GrpcSlot::cancel()
{
    std::lock_guard lock(m_contextMutex);
    if (m_contexts[m_current])
        m_contexts[m_current]->TryCancel();
}

void GrpcSlot::finished()
{
    const grpc::Status &status = m_status;
    CallOutcome outcome;
    outcome.bytesSent = m_requestBytes;
    outcome.bytesReceived = m_response.Length();
    if (!status.ok()) {
        outcome.status = static_cast<int>(status.error_code());
        outcome.errorMessage = status.error_message();
    } else if (m_decoded) {
        grpc::ProtoBufferReader reader(&m_response);
        if (!m_decoded->ParseFromZeroCopyStream(&reader)) {
            outcome.status = CallStatus::DecodeError;
            outcome.errorMessage = "reply does not parse as " + m_decoded->GetDescriptor()->full_name();
        }
    }
    m_sink->callDone(m_index, outcome);
}

} // namespace

int autoClientThreads(int concurrency)
{
    const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    return std::clamp(concurrency / 64, 1, cores);
}

std::unique_ptr<Transport> makeGrpcTransport(const GrpcTarget &target, const GrpcCall &call)
{
    return std::make_unique<GrpcTransport>(target, call);
}

} // namespace rpcscope
