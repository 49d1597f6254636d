#pragma once

// The client protocol (docs/client-protocol.md): how a client command rpcscope starts is told what to run, and
// reports each call back. Version 1, JSON lines both ways.
//
// client -> rpcscope, first, once it has connected (its start-up is then not in any block's CPU or profile):
//     {"ready": true}
// rpcscope -> client, on its stdin, one object a line:
//     {"block": 3, "calls": 500, "concurrency": 1, "warmup_calls": 5}      (or "duration_ms": 1000 for "calls")
//   run that block now: the warm-up calls first (report them with "warmup": true, or not at all), then the timed
//   ones with that many in flight. End of input: exit.
// client -> rpcscope, on its stdout, one object a line:
//     {"latency_ns": 53000, "ok": true, "status": "OK", "bytes_sent": 10, "bytes_received": 12}   a call
//     {"done": 3}                                                                                 block 3 ended
//     {"fatal": "cannot connect to 127.0.0.1:50051"}                                              it cannot go on
// Logs go to stderr, which rpcscope keeps for error messages.

#include <QByteArray>
#include <QString>

#include <cstdint>
#include <optional>

namespace rpcscope {

/// One line a client printed, understood.
struct ClientEvent {
    enum Kind {
        Call, ///< one call's result
        Done, ///< the block @c block ended
        Fatal, ///< the client cannot go on: @c message says why
        Ready, ///< the client has started and connected: it may be told its first block
    };
    Kind kind = Call;
    // Call
    uint64_t latencyNs = 0;
    bool ok = false;
    bool warmup = false;
    QString status; ///< as the client named it ("OK", "UNAVAILABLE", "503"); empty: OK or UNKNOWN by @c ok
    QString message; ///< a failed call's error, or Fatal's reason
    uint64_t bytesSent = 0;
    uint64_t bytesReceived = 0;
    // Done
    int64_t block = 0;
};

/**
 * Reads one line of a client's stdout (without its newline). std::nullopt with @p error saying what is wrong with
 * it ("not a JSON object", "\"latency_ns\" must be a whole number of nanoseconds") when it is not a line of the
 * protocol; the caller names the line. Flat objects of numbers, strings, true, false and null are read by hand, at
 * well under a microsecond a line; anything else goes through QJsonDocument.
 */
std::optional<ClientEvent> parseClientLine(const QByteArray &line, QString *error);

/// The line that tells a client to run block @p block: @p calls timed calls (0: for @p durationMs instead), with
/// @p concurrency in flight, after @p warmupCalls untimed ones.
QByteArray clientBlockLine(int block, uint64_t calls, int64_t durationMs, int concurrency, uint64_t warmupCalls);

} // namespace rpcscope
