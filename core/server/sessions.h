#pragma once

// Internal to core: the built-in TCP servers' connection handlers, one kind per protocol (BuiltinTcpServer).

#include "net/tcplistener.h"

#include <atomic>
#include <chrono>
#include <cstdint>

namespace rpcscope {

/// HTTP/1.1 keep-alive sessions serving the bench service (builtinhttpserver.cpp).
net::TcpListener::SessionFactory httpSessions(
    std::atomic<uint64_t> *served, std::chrono::microseconds extraDelay, std::chrono::nanoseconds burn);
/// msgpack-rpc sessions serving the bench service (builtinmsgpackserver.cpp).
net::TcpListener::SessionFactory msgpackSessions(
    std::atomic<uint64_t> *served, std::chrono::microseconds extraDelay, std::chrono::nanoseconds burn);

} // namespace rpcscope
