#pragma once

// Internal to core: a call's requests in the form a non-gRPC transport sends (a JSON or msgpack body, msgpack-rpc
// params), made once from the prepared protobuf requests, or per call for templates.

#include "grpctransport.h"
#include "metrics/callstatus.h"

#include <google/protobuf/message.h>

#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace rpcscope {

class RequestBodies {
public:
    /// Encodes a request message into the form sent on the wire.
    using Encoder = std::function<bool(const google::protobuf::Message &, std::string *, std::string *)>;

    /// False with @p error when a prepared request cannot be put in this form.
    bool init(const GrpcCall &call, Encoder encoder, std::string *error)
    {
        m_call = &call;
        m_encoder = std::move(encoder);
        m_bodies.clear();
        std::unique_ptr<google::protobuf::Message> message = call.schema.newMessage(call.method->input_type());
        for (const std::string &bytes : call.requests) {
            if (!message->ParseFromString(bytes)) {
                *error = "a prepared request does not parse";
                return false;
            }
            std::string body;
            if (!m_encoder(*message, &body, error))
                return false;
            m_bodies.push_back(std::move(body));
        }
        return true;
    }

    bool perCall() const { return m_call->perCall != nullptr; }

    /// The body of call @p callNumber: a prepared one, or @p scratch filled anew (templates). nullptr with @p error.
    const std::string *body(uint64_t callNumber, int workerId, std::mt19937_64 &rng,
        google::protobuf::Message *scratchMessage, std::string *scratch, std::string *error) const
    {
        if (!m_call->perCall)
            return &m_bodies[callNumber % m_bodies.size()];
        std::string bytes;
        if (!m_call->perCall->encode(callNumber, workerId, rng, &bytes, error))
            return nullptr;
        if (!scratchMessage->ParseFromString(bytes)) {
            *error = "the rendered request does not parse";
            return nullptr;
        }
        scratch->clear();
        if (!m_encoder(*scratchMessage, scratch, error))
            return nullptr;
        return scratch;
    }

private:
    const GrpcCall *m_call = nullptr;
    Encoder m_encoder;
    std::vector<std::string> m_bodies;
};

/// What the HTTP and msgpack-rpc slots share: each call's request body and the message replies decode into.
class BodySlot : public CallSlot {
protected:
    BodySlot(const GrpcCall &call, const RequestBodies &bodies, int index, CallSink *sink)
        : m_bodies(bodies), m_index(index), m_sink(sink), m_rng(std::random_device {}() ^ static_cast<uint64_t>(index))
    {
        if (call.responseType)
            m_decoded = call.schema.newMessage(call.responseType);
        if (call.perCall)
            m_scratchMessage = call.schema.newMessage(call.method->input_type());
    }

    /// Points m_body at call @p callNumber's body; false after reporting why not (a template that cannot render:
    /// nothing was sent, the run must stop) to the sink, from this thread, like any other ending.
    bool prepareBody(uint64_t callNumber)
    {
        std::string error;
        m_body = m_bodies.body(callNumber, m_index, m_rng, m_scratchMessage.get(), &m_scratch, &error);
        if (m_body)
            return true;
        CallOutcome outcome;
        outcome.status = CallStatus::InvalidArgument;
        outcome.errorMessage = "request template: " + error + " (run stopped)";
        outcome.fatal = true;
        m_sink->callDone(m_index, outcome);
        return false;
    }

public:
    const RequestBodies &m_bodies;
    const int m_index;
    CallSink *const m_sink;
    std::mt19937_64 m_rng;
    std::unique_ptr<google::protobuf::Message> m_scratchMessage;
    std::string m_scratch;
    const std::string *m_body = nullptr; ///< this call's request body
    /// m_body is one of the run's bodies, encoded before it and unchanged until the transport goes (not m_scratch,
    /// which the slot's next call overwrites).
    bool bodyLivesOn() const { return m_body && m_body != &m_scratch; }
    std::unique_ptr<google::protobuf::Message> m_decoded; ///< nullptr: replies are not decoded
};

} // namespace rpcscope
