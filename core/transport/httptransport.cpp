#include "metrics/callstatus.h"
#include "net/asio.h"
#include "requestbodies.h"
#include "transportfactories.h"

#include <boost/asio/connect.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <google/protobuf/descriptor.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <optional>

namespace rpcscope {

namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using net::tcp;
using Clock = std::chrono::steady_clock;

constexpr auto kSweepPeriod = std::chrono::milliseconds(5);

class HttpTransport;
class HttpConnection;

class HttpSlot final : public BodySlot {
public:
    HttpSlot(HttpTransport *transport, HttpConnection *connection, int index, CallSink *sink);
    void start(uint64_t callNumber) override;
    void cancel() override;
    void finished(CallOutcome &outcome, const std::string &body);

    HttpTransport *m_transport;
    HttpConnection *m_connection;
};

/// One keep-alive HTTP/1.1 connection: one call at a time, callers queued. Lives on one I/O thread.
class HttpConnection {
public:
    HttpConnection(HttpTransport *transport, asio::io_context &context);

    /// On this connection's thread.
    void submit(HttpSlot *slot)
    {
        m_queue.push_back(slot);
        if (!m_current)
            next();
    }
    void cancelCurrent(HttpSlot *slot)
    {
        if (m_current == slot) {
            m_cancelled = true;
            closeSocket();
        } else {
            // Still queued: take it out and end it as cancelled.
            for (auto it = m_queue.begin(); it != m_queue.end(); ++it) {
                if (*it == slot) {
                    m_queue.erase(it);
                    CallOutcome outcome;
                    outcome.status = CallStatus::Cancelled;
                    outcome.errorMessage = "cancelled";
                    slot->finished(outcome, {});
                    return;
                }
            }
        }
    }
    /// Called by the sweeper on this connection's thread.
    void checkDeadline(Clock::time_point now)
    {
        if (m_current && now >= m_deadline && !m_timedOut) {
            m_timedOut = true;
            closeSocket();
        }
    }
    asio::io_context &context() { return m_context; }

private:
    void next();
    void connect();
    void write();
    void read();
    void readBody();
    void fail(boost::system::error_code ec, const char *stage);
    void complete(CallOutcome &outcome, const std::string &body)
    {
        HttpSlot *slot = m_current;
        m_current = nullptr;
        slot->finished(outcome, body); // may submit the slot's next call right here
        if (!m_current && !m_queue.empty())
            next();
    }
    void closeSocket()
    {
        boost::system::error_code ignored;
        m_socket.close(ignored);
        m_connected = false;
    }

    HttpTransport *m_transport;
    asio::io_context &m_context;
    tcp::socket m_socket;
    bool m_connected = false;
    std::deque<HttpSlot *> m_queue;
    HttpSlot *m_current = nullptr;
    Clock::time_point m_deadline = Clock::time_point::max();
    bool m_timedOut = false;
    bool m_cancelled = false;
    boost::beast::flat_buffer m_buffer;
    http::request<http::span_body<const char>> m_request;
    std::optional<http::response_parser<http::string_body>> m_parser;
};

class HttpTransport final : public Transport {
public:
    HttpTransport(HttpEndpoint endpoint, const GrpcTarget &target, GrpcCall call, Codec codec,
        tcp::resolver::results_type addresses)
        : m_endpoint(std::move(endpoint))
        , m_target(target)
        , m_call(std::move(call))
        , m_codec(codec)
        , m_addresses(std::move(addresses))
        , m_threads(std::clamp(target.clientThreads, 1, 64))
    {
    }

    /// The threads start with the first call, once every slot (and so every connection) exists.
    void ensureStarted()
    {
        std::call_once(m_started, [this] {
            if (m_target.timeout.count() > 0) {
                m_sweep.start(m_threads, kSweepPeriod, [this](size_t thread, Clock::time_point now) {
                    for (size_t c = thread; c < m_connections.size(); c += static_cast<size_t>(m_threads.size()))
                        m_connections[c]->checkDeadline(now);
                });
            }
            m_threads.start();
        });
    }

    ~HttpTransport() override
    {
        m_sweep.stop();
        m_threads.stop();
    }

    bool initBodies(std::string *error)
    {
        const Codec codec = m_codec;
        return m_bodies.init(
            m_call,
            [codec](const google::protobuf::Message &m, std::string *out, std::string *why) {
                return encodeMessage(codec, m, out, why);
            },
            error);
    }

    /// Slot i uses connection i % --connections (0: a connection of its own, as wrk's -c).
    std::unique_ptr<CallSlot> makeSlot(int index, CallSink *sink) override
    {
        const auto i = static_cast<size_t>(index);
        const size_t limit = m_target.connections > 0 ? static_cast<size_t>(m_target.connections) : SIZE_MAX;
        if (m_connections.size() < limit && m_connections.size() <= i)
            m_connections.push_back(std::make_unique<HttpConnection>(this, m_threads.context(m_connections.size())));
        HttpConnection *connection = m_connections[i % m_connections.size()].get();
        return std::make_unique<HttpSlot>(this, connection, index, sink);
    }

    const HttpEndpoint m_endpoint;
    const GrpcTarget m_target;
    const GrpcCall m_call;
    const Codec m_codec;
    const tcp::resolver::results_type m_addresses;
    RequestBodies m_bodies;
    net::IoThreads m_threads;
    std::vector<std::unique_ptr<HttpConnection>> m_connections;
    net::PeriodicSweep m_sweep;
    std::once_flag m_started;
};

HttpConnection::HttpConnection(HttpTransport *transport, asio::io_context &context)
    : m_transport(transport), m_context(context), m_socket(context)
{
    // The headers are the same for every call; only the body changes.
    m_request.method(http::verb::post);
    m_request.target(transport->m_endpoint.path);
    m_request.version(11);
    m_request.set(http::field::host, transport->m_endpoint.hostHeader);
    m_request.set(http::field::user_agent, "rpcscope/" RPCSCOPE_VERSION);
    m_request.set(http::field::content_type, codecContentType(transport->m_codec));
    m_request.set(http::field::accept, codecContentType(transport->m_codec));
    for (const auto &[key, value] : transport->m_target.metadata)
        m_request.insert(key, value);
    m_request.keep_alive(true);
}

void HttpConnection::next()
{
    m_current = m_queue.front();
    m_queue.pop_front();
    m_timedOut = false;
    m_cancelled = false;
    const auto timeout = m_transport->m_target.timeout;
    m_deadline = timeout.count() > 0 ? Clock::now() + timeout : Clock::time_point::max();
    m_request.body() = { m_current->m_body->data(), m_current->m_body->size() };
    m_request.prepare_payload();
    if (m_connected)
        write();
    else
        connect();
}

void HttpConnection::connect()
{
    m_buffer.clear();
    asio::async_connect(
        m_socket, m_transport->m_addresses, [this](boost::system::error_code ec, const tcp::endpoint &) {
            if (ec)
                return fail(ec, "connect");
            m_socket.set_option(tcp::no_delay(true), ec);
            m_connected = true;
            write();
        });
}

void HttpConnection::write()
{
    http::async_write(m_socket, m_request, [this](boost::system::error_code ec, size_t) {
        if (ec)
            return fail(ec, "send");
        read();
    });
}

void HttpConnection::read()
{
    m_parser.emplace();
    m_parser->body_limit(m_transport->m_target.receiveLimit());
    // The header first, then the body. Boost 1.74's parser, reading eagerly as async_read makes it, does not stop
    // when it refuses a Content-Length past the limit: with body bytes already buffered it goes on into the body,
    // reserves the claimed length (std::bad_alloc for an absurd one) and drops the error, so the limit no longer
    // holds (found by tests/fuzz/fuzz_httpreply). Reading the header alone, the parser stops at the refusal.
    http::async_read_header(m_socket, m_buffer, *m_parser, [this](boost::system::error_code ec, size_t) {
        if (ec)
            return fail(ec, "receive");
        readBody();
    });
}

void HttpConnection::readBody()
{
    http::async_read(m_socket, m_buffer, *m_parser, [this](boost::system::error_code ec, size_t) {
        if (ec)
            return fail(ec, "receive");
        http::response<http::string_body> &response = m_parser->get();
        if (!response.keep_alive())
            closeSocket();
        CallOutcome outcome;
        outcome.bytesSent = m_current->m_body->size();
        outcome.bytesReceived = response.body().size();
        const unsigned code = response.result_int();
        if (code < 200 || code > 299) {
            outcome.status = grpcStatusForHttp(code);
            outcome.errorMessage = "HTTP " + std::to_string(code);
            if (const auto reason = response.reason(); !reason.empty())
                outcome.errorMessage += " " + std::string(reason);
        }
        if (m_transport->m_call.captureMetadata) {
            // A call shown to the user: the status line and headers, and what an error reply says.
            outcome.headers.emplace_back(":status", std::to_string(code));
            for (const auto &field : response)
                outcome.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
            if (outcome.status != CallStatus::Ok && !response.body().empty())
                outcome.errorMessage += ": " + response.body().substr(0, 4096);
        }
        complete(outcome, response.body());
    });
}

void HttpConnection::fail(boost::system::error_code ec, const char *stage)
{
    closeSocket();
    CallOutcome outcome;
    outcome.bytesSent = stage == std::string_view("connect") ? 0 : m_current->m_body->size();
    if (m_timedOut) {
        outcome.status = CallStatus::DeadlineExceeded;
        outcome.errorMessage = "deadline exceeded";
    } else if (m_cancelled) {
        outcome.status = CallStatus::Cancelled;
        outcome.errorMessage = "cancelled";
    } else if (ec == http::error::body_limit) {
        outcome.status = CallStatus::ResourceExhausted;
        outcome.errorMessage = "reply larger than --max-recv-size";
    } else if (ec.category() == make_error_code(http::error::bad_target).category()) {
        outcome.status = CallStatus::Internal;
        outcome.errorMessage = "not an HTTP reply: " + ec.message();
    } else {
        outcome.status = CallStatus::Unavailable;
        outcome.errorMessage = std::string(stage) + ": " + ec.message();
    }
    complete(outcome, {});
}

HttpSlot::HttpSlot(HttpTransport *transport, HttpConnection *connection, int index, CallSink *sink)
    : BodySlot(transport->m_call, transport->m_bodies, index, sink), m_transport(transport), m_connection(connection)
{
}

void HttpSlot::start(uint64_t callNumber)
{
    if (!prepareBody(callNumber))
        return;
    m_transport->ensureStarted();
    asio::dispatch(m_connection->context(), [this] { m_connection->submit(this); });
}

void HttpSlot::cancel()
{
    // The slot may be gone by the time this runs (the engine cancels on its way out): only its address is used,
    // and only a call still in flight (so a slot still alive) is touched.
    asio::post(m_connection->context(), [connection = m_connection, slot = this] { connection->cancelCurrent(slot); });
}

void HttpSlot::finished(CallOutcome &outcome, const std::string &body)
{
    if (outcome.status == CallStatus::Ok && m_decoded) {
        std::string why;
        DecodeOptions options;
        options.ignoreUnknownFields = true;
        if (decodeMessage(m_transport->m_codec, body, m_decoded.get(), &why, options)) {
            outcome.reply = m_decoded.get();
        } else {
            outcome.status = CallStatus::DecodeError;
            outcome.errorMessage = "reply does not decode as " + m_decoded->GetDescriptor()->full_name() + ": " + why;
        }
    }
    m_sink->callDone(m_index, outcome);
}

} // namespace

int grpcStatusForHttp(unsigned httpStatus)
{
    switch (httpStatus) {
    case 400:
        return CallStatus::Internal;
    case 401:
        return CallStatus::Unauthenticated;
    case 403:
        return CallStatus::PermissionDenied;
    case 404:
        return CallStatus::Unimplemented;
    case 429:
    case 502:
    case 503:
    case 504:
        return CallStatus::Unavailable;
    default:
        return CallStatus::Unknown;
    }
}

std::unique_ptr<Transport> makeHttpTransport(
    const HttpEndpoint &endpoint, const GrpcTarget &target, const GrpcCall &call, Codec codec, std::string *error)
{
    // Resolved once, up front: a name that does not resolve is a setup error, not thousands of failed calls.
    tcp::resolver::results_type addresses;
    if (!net::resolve(endpoint.host, endpoint.port, &addresses, error))
        return nullptr;
    auto transport = std::make_unique<HttpTransport>(endpoint, target, call, codec, std::move(addresses));
    if (!transport->initBodies(error))
        return nullptr;
    return transport;
}

} // namespace rpcscope
