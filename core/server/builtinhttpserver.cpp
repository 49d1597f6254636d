#include "builtinhttpserver.h"

#include "benchlogic.h"
#include "codec/codec.h"
#include "net/tcplistener.h"
#include "sessions.h"

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <atomic>
#include <charconv>

namespace rpcscope {

namespace {

namespace http = boost::beast::http;
namespace asio = boost::asio;
using net::tcp;

constexpr uint64_t kBodyLimit = uint64_t(1) << 30;

std::optional<Codec> codecOfContentType(std::string_view type)
{
    if (const auto semicolon = type.find(';'); semicolon != std::string_view::npos)
        type = type.substr(0, semicolon);
    while (!type.empty() && type.back() == ' ')
        type.remove_suffix(1);
    if (type.empty() || type == "application/json")
        return Codec::Json;
    if (type == "application/msgpack" || type == "application/x-msgpack" || type == "application/vnd.msgpack")
        return Codec::Msgpack;
    if (type == "application/x-protobuf" || type == "application/protobuf" || type == "application/octet-stream")
        return Codec::Protobuf;
    return std::nullopt;
}

class HttpSession : public std::enable_shared_from_this<HttpSession> {
public:
    HttpSession(tcp::socket socket, std::atomic<uint64_t> *served, std::chrono::microseconds extraDelay,
        std::chrono::nanoseconds burn)
        : m_socket(std::move(socket))
        , m_timer(m_socket.get_executor())
        , m_served(served)
        , m_extraDelay(extraDelay)
        , m_burn(burn)
    {
    }

    void read()
    {
        m_parser.emplace();
        m_parser->body_limit(kBodyLimit);
        http::async_read(m_socket, m_buffer, *m_parser,
            [self = shared_from_this()](boost::system::error_code ec, size_t) { self->onRead(ec); });
    }

private:
    void onRead(boost::system::error_code ec)
    {
        if (ec) {
            if (ec != http::error::end_of_stream && ec != asio::error::operation_aborted) {
                // A malformed request: say so once, then close.
                if (ec.category() == make_error_code(http::error::bad_target).category()) {
                    m_response = {};
                    fail(http::status::bad_request, "bad HTTP request: " + ec.message(), false);
                    return;
                }
            }
            boost::system::error_code ignored;
            m_socket.shutdown(tcp::socket::shutdown_both, ignored);
            return;
        }
        handle(m_parser->get());
    }

    void fail(http::status status, std::string message, bool keepAlive)
    {
        m_response.result(status);
        m_response.set(http::field::content_type, "text/plain; charset=utf-8");
        m_response.body() = std::move(message);
        m_response.keep_alive(keepAlive);
        write(std::chrono::microseconds(0));
    }

    void handle(http::request<http::string_body> &request)
    {
        m_response.clear();
        m_response.body().clear();
        m_response.version(request.version());
        m_response.result(http::status::ok);
        const bool keepAlive = request.keep_alive();

        if (const auto forced = request.find("rpcscope-http-status"); forced != request.end()) {
            unsigned code = 0;
            const std::string_view value(forced->value().data(), forced->value().size());
            std::from_chars(value.data(), value.data() + value.size(), code);
            if (code >= 100 && code <= 999) {
                m_response.result(code);
                m_response.set(http::field::content_type, "text/plain");
                m_response.body() = "status asked for by rpcscope-http-status";
                m_response.keep_alive(keepAlive);
                write(std::chrono::microseconds(0));
                return;
            }
        }
        const std::string_view target(request.target().data(), request.target().size());
        const std::optional<BenchMethod> method = benchMethodByName(target.substr(0, target.find('?')));
        if (!method)
            return fail(http::status::not_found, "no such method: " + std::string(target), keepAlive);
        if (request.method() != http::verb::post)
            return fail(http::status::method_not_allowed, "use POST", keepAlive);
        const auto contentType = request[http::field::content_type];
        const std::optional<Codec> codec = codecOfContentType({ contentType.data(), contentType.size() });
        if (!codec)
            return fail(http::status::unsupported_media_type,
                "unsupported content type: " + std::string(contentType) + " (json, msgpack or x-protobuf)", keepAlive);
        std::string why;
        if (!decodeMessage(*codec, request.body(), m_messages.request(*method), &why))
            return fail(http::status::bad_request, "request does not decode: " + why, keepAlive);
        const std::chrono::microseconds delay = m_messages.run(*method) + m_extraDelay;
        burnCpuIfAsked(m_burn);
        if (!encodeMessage(*codec, *m_messages.reply(*method), &m_response.body(), &why))
            return fail(http::status::internal_server_error, "reply does not encode: " + why, keepAlive);
        m_response.set(http::field::content_type, codecContentType(*codec));
        m_response.keep_alive(keepAlive);
        m_served->fetch_add(1, std::memory_order_relaxed);
        write(delay);
    }

    void write(std::chrono::microseconds delay)
    {
        m_response.prepare_payload();
        if (delay.count() > 0) {
            m_timer.expires_after(delay);
            m_timer.async_wait([self = shared_from_this()](boost::system::error_code ec) {
                if (!ec)
                    self->write(std::chrono::microseconds(0));
            });
            return;
        }
        http::async_write(m_socket, m_response, [self = shared_from_this()](boost::system::error_code ec, size_t) {
            if (ec)
                return;
            if (!self->m_response.keep_alive()) {
                boost::system::error_code ignored;
                self->m_socket.shutdown(tcp::socket::shutdown_send, ignored);
                return;
            }
            self->read();
        });
    }

    tcp::socket m_socket;
    asio::steady_timer m_timer;
    std::atomic<uint64_t> *m_served;
    std::chrono::microseconds m_extraDelay;
    std::chrono::nanoseconds m_burn;
    boost::beast::flat_buffer m_buffer;
    std::optional<http::request_parser<http::string_body>> m_parser;
    http::response<http::string_body> m_response;
    BenchMessages m_messages;
};

} // namespace

net::TcpListener::SessionFactory httpSessions(
    std::atomic<uint64_t> *served, std::chrono::microseconds extraDelay, std::chrono::nanoseconds burn)
{
    return [served, extraDelay, burn](tcp::socket socket) {
        std::make_shared<HttpSession>(std::move(socket), served, extraDelay, burn)->read();
    };
}

struct BuiltinTcpServer::Impl {
    net::TcpListener listener;
    std::atomic<uint64_t> served { 0 };
};

BuiltinTcpServer::BuiltinTcpServer(Protocol protocol) : m_protocol(protocol) { }

BuiltinTcpServer::~BuiltinTcpServer()
{
    stop();
}

bool BuiltinTcpServer::start(const QString &host, quint16 port, int threads, QString *error)
{
    if (d) {
        if (error)
            *error = QStringLiteral("the server is already running");
        return false;
    }
    auto impl = std::make_unique<Impl>();
    auto *served = &impl->served;
    if (!impl->listener.listen(host, port, threads,
            m_protocol == Protocol::Http ? httpSessions(served, m_extraDelay, m_burn)
                                         : msgpackSessions(served, m_extraDelay, m_burn),
            error))
        return false;
    d = std::move(impl);
    return true;
}

void BuiltinTcpServer::stop()
{
    if (d) {
        d->listener.stop();
        d.reset();
    }
}

bool BuiltinTcpServer::isRunning() const
{
    return d != nullptr;
}

quint16 BuiltinTcpServer::port() const
{
    return d ? d->listener.port() : 0;
}

QString BuiltinTcpServer::address() const
{
    return d ? QStringLiteral("%1:%2").arg(d->listener.host()).arg(d->listener.port()) : QString();
}

uint64_t BuiltinTcpServer::callsServed() const
{
    return d ? d->served.load(std::memory_order_relaxed) : 0;
}

QString BuiltinHttpServer::url() const
{
    return isRunning() ? QStringLiteral("http://") + address() : QString();
}

} // namespace rpcscope
