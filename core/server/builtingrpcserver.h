#pragma once

#include <QString>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace rpcscope {

/**
 * The bench service (rpcscope.bench.v1.Bench) over gRPC, with server reflection. Asynchronous: one completion
 * queue and one thread per core, so it is not the bottleneck when a client measures itself against it.
 * A call carrying the metadata `rpcscope-status: N` is answered with status code N (for error-path tests).
 */
/// TLS for the built-in server: PEM contents. With clientCa set, clients must present a certificate it signed.
struct ServerTls {
    std::string certChain;
    std::string privateKey;
    std::string clientCa;
};

class BuiltinGrpcServer {
public:
    BuiltinGrpcServer();
    ~BuiltinGrpcServer();
    BuiltinGrpcServer(const BuiltinGrpcServer &) = delete;
    BuiltinGrpcServer &operator=(const BuiltinGrpcServer &) = delete;

    /// Every reply waits this much longer (without holding a thread): a server made slower on purpose, for A/B
    /// tests and demos. Set before start().
    void setExtraDelay(std::chrono::microseconds delay) { m_extraDelay = delay; }
    /// Every reply (every message of a stream) first costs this much CPU time, spent busy on the thread handling
    /// the call: server work made heavier on purpose, finer than the delay's timer. Set before start().
    void setBurn(std::chrono::nanoseconds cpuTime) { m_burn = cpuTime; }

    /// Binds @p host:@p port (0 = a free port) and serves; @p threads 0 = one per CPU this process may run on
    /// (usableCpuCount()).
    bool start(const QString &host = QStringLiteral("127.0.0.1"), quint16 port = 0, int threads = 0,
        QString *error = nullptr, const std::optional<ServerTls> &tls = std::nullopt);
    /// Stops serving and joins the threads; calls in flight are cancelled.
    void stop();
    bool isRunning() const;

    quint16 port() const;
    QString address() const; ///< "host:port", ready to dial
    /// Calls answered since start(), all methods together.
    uint64_t callsServed() const;
    /// Calls that have arrived and wait out their delay (setExtraDelay(), the request's own) now.
    uint64_t callsDelayed() const;

private:
    struct Impl;
    std::unique_ptr<Impl> d;
    std::chrono::microseconds m_extraDelay { 0 };
    std::chrono::nanoseconds m_burn { 0 };
};

} // namespace rpcscope
