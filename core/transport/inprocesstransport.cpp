#include "metrics/callstatus.h"
#include "net/asio.h"
#include "requestbodies.h"
#include "server/benchlogic.h"
#include "transportfactories.h"
#include "transports.h"

#include <google/protobuf/descriptor.h>

namespace rpcscope {

namespace {

namespace asio = boost::asio;

class InProcessTransport;

/**
 * No RPC: the codec work one real call pays, in one process. The request is encoded once per run, as every transport
 * sends a fixed request (per call with a template, which every transport renders and encodes per call too); each
 * call decodes it (as a server would), runs the method, encodes the reply and decodes it (as the client does). What
 * is left of a real call's latency beyond this is the network stack and the RPC library. Calls run as handlers on
 * the client threads, so a caller's next call never nests inside the previous one's completion.
 */
class InProcessSlot final : public CallSlot {
public:
    InProcessSlot(InProcessTransport *transport, asio::io_context &context, int index, CallSink *sink);
    void start(uint64_t callNumber) override;
    void cancel() override { }

private:
    void run(uint64_t callNumber);

    InProcessTransport *m_transport;
    asio::io_context &m_context;
    int m_index;
    CallSink *m_sink;
    std::mt19937_64 m_rng;
    std::unique_ptr<google::protobuf::Message> m_request; // the caller's side
    std::unique_ptr<google::protobuf::Message> m_serverRequest; // the "server's" side, for methods other than bench
    std::unique_ptr<google::protobuf::Message> m_serverReply;
    std::unique_ptr<google::protobuf::Message> m_reply;
    BenchMessages m_bench;
    std::string m_wire;
    std::string m_replyWire;
    std::string m_scratch;
};

class InProcessTransport final : public Transport {
public:
    InProcessTransport(const GrpcTarget &target, const GrpcCall &call, Codec codec)
        : m_call(call), m_codec(codec), m_threads(std::clamp(target.clientThreads, 1, 64))
    {
        if (inProcessRunsMethod(call))
            m_bench = benchMethodByName(call.method->name());
        m_threads.start();
    }
    ~InProcessTransport() override { m_threads.stop(); }

    bool init(std::string *error)
    {
        // Fixed requests are encoded once with the codec, as the transports encode theirs once per run.
        for (const std::string &bytes : m_call.requests) {
            m_messages.push_back(m_call.schema.newMessage(m_call.method->input_type()));
            if (!m_messages.back()->ParseFromString(bytes)) {
                *error = "a prepared request does not parse";
                return false;
            }
            m_wires.emplace_back();
            if (!encodeMessage(m_codec, *m_messages.back(), &m_wires.back(), error)) {
                *error = "request codec: " + *error;
                return false;
            }
        }
        return m_requests.init(
            m_call,
            [](const google::protobuf::Message &message, std::string *out, std::string *) {
                return message.SerializeToString(out);
            },
            error);
    }

    std::unique_ptr<CallSlot> makeSlot(int index, CallSink *sink) override
    {
        return std::make_unique<InProcessSlot>(this, m_threads.context(static_cast<size_t>(index)), index, sink);
    }

    const GrpcCall m_call;
    const Codec m_codec;
    std::optional<BenchMethod> m_bench;
    std::vector<std::unique_ptr<google::protobuf::Message>> m_messages; // read-only: shared by all slots
    std::vector<std::string> m_wires; // m_messages encoded with the codec, once
    RequestBodies m_requests; // templates: rendered per call
    net::IoThreads m_threads;
};

InProcessSlot::InProcessSlot(InProcessTransport *transport, asio::io_context &context, int index, CallSink *sink)
    : m_transport(transport)
    , m_context(context)
    , m_index(index)
    , m_sink(sink)
    , m_rng(std::random_device {}() ^ static_cast<uint64_t>(index))
{
    const GrpcCall &call = transport->m_call;
    m_request = call.schema.newMessage(call.method->input_type());
    m_reply = call.schema.newMessage(call.method->output_type());
    if (!transport->m_bench) {
        m_serverRequest = call.schema.newMessage(call.method->input_type());
        m_serverReply = call.schema.newMessage(call.method->output_type());
    }
}

void InProcessSlot::start(uint64_t callNumber)
{
    asio::post(m_context, [this, callNumber] { run(callNumber); });
}

void InProcessSlot::run(uint64_t callNumber)
{
    InProcessTransport &t = *m_transport;
    CallOutcome outcome;
    std::string error;
    const std::string *wire;
    if (t.m_messages.empty()) {
        // A template: rendered into m_request (the rendering is part of the call, as with every transport).
        if (!t.m_requests.body(callNumber, m_index, m_rng, m_request.get(), &m_scratch, &error)) {
            outcome.status = CallStatus::InvalidArgument;
            outcome.errorMessage = "request template: " + error + " (run stopped)";
            outcome.fatal = true;
            m_sink->callDone(m_index, outcome);
            return;
        }
        if (!encodeMessage(t.m_codec, *m_request, &m_wire, &error)) {
            outcome.status = CallStatus::Internal;
            outcome.errorMessage = "request codec: " + error;
            m_sink->callDone(m_index, outcome);
            return;
        }
        wire = &m_wire;
    } else {
        wire = &t.m_wires[callNumber % t.m_wires.size()];
    }
    google::protobuf::Message *serverRequest = t.m_bench ? m_bench.request(*t.m_bench) : m_serverRequest.get();
    if (!decodeMessage(t.m_codec, *wire, serverRequest, &error)) {
        outcome.status = CallStatus::Internal;
        outcome.errorMessage = "request codec: " + error;
        m_sink->callDone(m_index, outcome);
        return;
    }
    const google::protobuf::Message *serverReply;
    if (t.m_bench) {
        m_bench.run(*t.m_bench); // Echo's delay_us is not slept: no server here to be slow
        serverReply = m_bench.reply(*t.m_bench);
    } else {
        serverReply = m_serverReply.get(); // a method only the real server knows: an empty reply
    }
    outcome.bytesSent = wire->size();
    if (!encodeMessage(t.m_codec, *serverReply, &m_replyWire, &error)) {
        outcome.status = CallStatus::Internal;
        outcome.errorMessage = "reply codec: " + error;
    } else {
        outcome.bytesReceived = m_replyWire.size();
        if (t.m_call.responseType && !decodeMessage(t.m_codec, m_replyWire, m_reply.get(), &error)) {
            outcome.status = CallStatus::DecodeError;
            outcome.errorMessage = "reply does not decode: " + error;
        } else if (t.m_call.responseType) {
            outcome.reply = m_reply.get();
        }
    }
    m_sink->callDone(m_index, outcome);
}

} // namespace

bool inProcessRunsMethod(const GrpcCall &call)
{
    return call.method && call.method->service()->full_name() == "rpcscope.bench.v1.Bench"
        && benchMethodByName(call.method->name());
}

std::unique_ptr<Transport> makeInProcessTransport(
    const GrpcTarget &target, const GrpcCall &call, Codec codec, std::string *error)
{
    auto transport = std::make_unique<InProcessTransport>(target, call, codec);
    if (!transport->init(error))
        return nullptr;
    return transport;
}

} // namespace rpcscope
