#pragma once

#include "engine/expectations.h"
#include "transport/transport.h"

#include <QByteArray>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace rpcscope {

/// One call made to be looked at: its reply (or replies, for a stream), status, headers and trailers, latency.
struct SingleCallResult {
    int status = 0; ///< a CallStatus value
    std::string errorMessage; ///< empty on success
    bool answered = false; ///< false: no end came within the wait (the call was cancelled)
    std::chrono::nanoseconds latency { 0 }; ///< from start() to the end of the call
    uint64_t bytesSent = 0;
    uint64_t bytesReceived = 0;
    /// The reply in the proto3 JSON mapping (indented); for a stream, each message in the order received. Empty
    /// when nothing was decoded (--discard-response, a failure).
    std::vector<QByteArray> replies;
    /// Stream messages only: each message's time, as the load run times it (see StreamOptions; -1 when untimed).
    std::vector<std::chrono::nanoseconds> messageLatencies;
    MetadataLines headers; ///< when the call captured them (GrpcCall::captureMetadata)
    MetadataLines trailers;
    /// --expect: each expectation checked on the reply, in order (empty when none were given or nothing decoded).
    struct Checked {
        QString expectation;
        bool held = false;
        QString got; ///< what the reply has instead, when it did not hold
    };
    std::vector<Checked> expectations;
    ExpectedStatuses expectedStatuses; ///< --expect-status: the statuses that count as success (OK unless told)
    bool asExpected() const { return answered && expectedStatuses.has(status); }
};

/**
 * Makes call number 0 on @p transport and waits for it, at most @p wait (then cancels it and waits for the end the
 * cancel brings, a second at most). The transport's GrpcCall should set captureMetadata for headers and trailers.
 * Blocks: the GUI calls it off its own thread. A reply that ends OK (a stream's every message) is checked against
 * @p expectations (--expect): one that fails any turns the status into UNEXPECTED_REPLY, as does an OK when @p
 * expectedStatuses (--expect-status) leaves OK out.
 */
/// How long sendOnce() waits for a call with the per-call @p timeout (--timeout; 0: none): a second more than it, so
/// the call's own deadline ends it (DEADLINE_EXCEEDED, as in a load run) before the wait does; 30 s without one.
std::chrono::nanoseconds sendOnceWait(std::chrono::nanoseconds timeout);

SingleCallResult sendOnce(Transport &transport, std::chrono::nanoseconds wait,
    const std::vector<Expectation> &expectations = {}, const ExpectedStatuses &expectedStatuses = {});

} // namespace rpcscope
