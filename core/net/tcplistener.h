#pragma once

// Internal to core: accepts TCP connections for the built-in servers and hands each to one of the I/O threads.

#include "asio.h"
#include "portowners.h"
#include "util/cpuset.h"

#include <QString>

#include <atomic>
#include <functional>
#include <string>
#include <thread>

namespace rpcscope::net {

class TcpListener {
public:
    /// Called on the I/O thread that owns the new connection.
    using SessionFactory = std::function<void(tcp::socket socket)>;

    bool listen(const QString &host, quint16 port, int threads, SessionFactory factory, QString *error)
    {
        const int count = threads > 0 ? threads : usableCpuCount();
        m_threads = std::make_unique<IoThreads>(count);
        m_factory = std::move(factory);
        boost::system::error_code ec;
        const auto address = asio::ip::make_address(host.toStdString(), ec);
        if (ec) {
            if (error)
                *error = QStringLiteral("%1: not an IP address (%2)").arg(host, QString::fromStdString(ec.message()));
            return false;
        }
        if (const QString inUse = portInUseMessage(port); !inUse.isEmpty()) {
            if (error)
                *error = inUse;
            m_threads.reset();
            return false;
        }
        m_acceptor = std::make_unique<tcp::acceptor>(m_threads->context(0));
        const tcp::endpoint endpoint(address, port);
        m_acceptor->open(endpoint.protocol(), ec);
        if (!ec)
            m_acceptor->set_option(asio::socket_base::reuse_address(true), ec);
        if (!ec)
            m_acceptor->bind(endpoint, ec);
        if (!ec)
            m_acceptor->listen(asio::socket_base::max_listen_connections, ec);
        if (ec) {
            if (error)
                *error = QStringLiteral("cannot listen on %1:%2: %3")
                             .arg(host)
                             .arg(port)
                             .arg(QString::fromStdString(ec.message()));
            m_acceptor.reset();
            m_threads.reset();
            return false;
        }
        m_port = m_acceptor->local_endpoint().port();
        m_host = host;
        accept();
        m_threads->start();
        return true;
    }

    void stop()
    {
        if (!m_threads)
            return;
        asio::post(m_threads->context(0), [this] {
            boost::system::error_code ignored;
            m_acceptor->close(ignored);
        });
        m_threads->stop(); // sessions are owned by their handlers, which are destroyed with the contexts
        m_acceptor.reset();
        m_threads.reset();
    }

    bool isListening() const { return m_threads != nullptr; }
    quint16 port() const { return m_port; }
    QString host() const { return m_host; }

private:
    void accept()
    {
        asio::io_context &target = m_threads->context(m_next++);
        m_acceptor->async_accept(target, [this, &target](boost::system::error_code ec, tcp::socket socket) {
            if (ec == asio::error::operation_aborted)
                return;
            if (!ec) {
                socket.set_option(tcp::no_delay(true), ec);
                asio::post(target, [this, s = std::move(socket)]() mutable { m_factory(std::move(s)); });
            }
            accept();
        });
    }

    std::unique_ptr<IoThreads> m_threads;
    std::unique_ptr<tcp::acceptor> m_acceptor;
    SessionFactory m_factory;
    size_t m_next = 0;
    quint16 m_port = 0;
    QString m_host;
};

} // namespace rpcscope::net
