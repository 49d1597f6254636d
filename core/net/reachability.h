#pragma once

#include <QString>

#include <chrono>

namespace rpcscope {

/**
 * Whether a server at @p address (HOST:PORT, [V6]:PORT, an http:// URL, or gRPC's dns:/// and ipv4: forms) accepts
 * a TCP connection within @p timeout: the name resolves and one of its addresses accepts. False with @p why ("cannot
 * resolve HOST: ...", "HOST:PORT: connection refused", "no answer within 5 s"). A form it cannot judge (unix:, a
 * name with no port) counts as reachable: the transport then says what it makes of it.
 *
 * The front ends ask it before a run against an address, so that a target nobody can reach is "could not do the
 * work" (exit 3) for every transport, before any load is sent, rather than a run of failed calls for one transport
 * and a usage error for another.
 */
bool probeReachable(const QString &address, std::chrono::milliseconds timeout, QString *why);

/// How long a front end gives the probe for a run whose calls time out after @p callTimeout (0: none): that, within
/// 1 to 10 s.
std::chrono::milliseconds probeTimeoutFor(std::chrono::nanoseconds callTimeout);

} // namespace rpcscope
