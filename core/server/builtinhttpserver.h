#pragma once

#include <QString>

#include <chrono>
#include <cstdint>
#include <memory>

namespace rpcscope {

/// A built-in server on TCP (HTTP or msgpack-rpc): I/O threads, each with its own connections.
class BuiltinTcpServer {
public:
    virtual ~BuiltinTcpServer();
    BuiltinTcpServer(const BuiltinTcpServer &) = delete;
    BuiltinTcpServer &operator=(const BuiltinTcpServer &) = delete;

    /// Every reply waits this much longer (a timer, no thread held): a server made slower on purpose, for A/B
    /// tests and demos. Set before start().
    void setExtraDelay(std::chrono::microseconds delay) { m_extraDelay = delay; }
    /// Every reply first costs this much CPU time, spent busy on the I/O thread handling the call: server work
    /// made heavier on purpose, finer than the delay's timer. Set before start().
    void setBurn(std::chrono::nanoseconds cpuTime) { m_burn = cpuTime; }

    /// Binds @p host:@p port (0 = a free port) and serves; @p threads 0 = one per CPU this process may run on
    /// (usableCpuCount()).
    bool start(
        const QString &host = QStringLiteral("127.0.0.1"), quint16 port = 0, int threads = 0, QString *error = nullptr);
    void stop();
    bool isRunning() const;
    quint16 port() const;
    QString address() const; ///< "host:port"
    uint64_t callsServed() const;

protected:
    enum class Protocol { Http, Msgpack };
    explicit BuiltinTcpServer(Protocol protocol);

private:
    struct Impl;
    const Protocol m_protocol;
    std::unique_ptr<Impl> d;
    std::chrono::microseconds m_extraDelay { 0 };
    std::chrono::nanoseconds m_burn { 0 };
};

/**
 * The bench service over HTTP/1.1 with keep-alive: `POST /rpcscope.bench.v1.Bench/{Echo,Sum,List}` (the short
 * `/Echo`, `/Sum`, `/List` too) with a JSON (`application/json`, the default), msgpack (`application/msgpack`) or
 * protobuf (`application/x-protobuf`) body; the reply uses the request's content type. Errors: 404 for an unknown
 * path, 405 for another method than POST, 415 for an unknown content type, 400 with the decoder's message for a
 * body that does not decode. A request with the header `rpcscope-http-status: N` is answered with status N (for
 * error-path tests). One thread per core (or as asked), each with its own connections.
 */
class BuiltinHttpServer : public BuiltinTcpServer {
public:
    BuiltinHttpServer() : BuiltinTcpServer(Protocol::Http) { }
    QString url() const; ///< "http://host:port", ready to use as a target
};

/**
 * The bench service over msgpack-rpc on TCP (methods `Echo`, `Sum`, `List`; full names accepted too). Params are
 * the request's fields in declaration order, or one map keyed by field name. The result is the reply's only field
 * when it has one field (Sum gives a number), else a map by field name. Requests are answered as they complete,
 * so several may be in flight on one connection.
 */
class BuiltinMsgpackServer : public BuiltinTcpServer {
public:
    BuiltinMsgpackServer() : BuiltinTcpServer(Protocol::Msgpack) { }
};

} // namespace rpcscope
