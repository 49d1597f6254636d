#pragma once

// Internal to core: Boost.Asio and Beast (header-only in Debian's libboost-dev), compiled once in asioimpl.cpp
// (BOOST_ASIO_SEPARATE_COMPILATION) so the HTTP and msgpack-rpc code stays quick to build.

#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace rpcscope::net {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

/// Threads each running their own io_context: a connection lives on one thread, so it needs no locks, and the
/// next call of a caller starts on the thread that read the previous reply (as the gRPC transport does).
class IoThreads {
public:
    explicit IoThreads(int count)
    {
        for (int i = 0; i < std::max(1, count); ++i) {
            auto context = std::make_unique<asio::io_context>(1);
            m_guards.emplace_back(asio::make_work_guard(*context));
            m_contexts.push_back(std::move(context));
        }
    }
    ~IoThreads() { stop(); }
    IoThreads(const IoThreads &) = delete;
    IoThreads &operator=(const IoThreads &) = delete;

    void start()
    {
        for (auto &context : m_contexts)
            m_threads.emplace_back([c = context.get()] { c->run(); });
    }
    /// Lets the contexts run out of work, then joins (pending handlers still run).
    void finish()
    {
        m_guards.clear();
        for (auto &thread : m_threads)
            thread.join();
        m_threads.clear();
    }
    /// Stops at once and joins.
    void stop()
    {
        for (auto &context : m_contexts)
            context->stop();
        for (auto &thread : m_threads)
            thread.join();
        m_threads.clear();
        m_guards.clear();
    }
    int size() const { return static_cast<int>(m_contexts.size()); }
    asio::io_context &context(size_t i) { return *m_contexts[i % m_contexts.size()]; }

private:
    std::vector<std::unique_ptr<asio::io_context>> m_contexts;
    std::vector<asio::executor_work_guard<asio::io_context::executor_type>> m_guards;
    std::vector<std::thread> m_threads;
};

/**
 * Calls check(thread, now) every @p period on each I/O thread: the transports' deadline checks, one timer per
 * thread instead of one armed and cancelled per call. Must be stopped before the threads are.
 */
class PeriodicSweep {
public:
    using Check = std::function<void(size_t thread, std::chrono::steady_clock::time_point now)>;

    void start(IoThreads &threads, std::chrono::milliseconds period, Check check)
    {
        m_period = period;
        m_check = std::move(check);
        for (int i = 0; i < threads.size(); ++i)
            m_timers.push_back(std::make_unique<asio::steady_timer>(threads.context(static_cast<size_t>(i))));
        for (size_t i = 0; i < m_timers.size(); ++i)
            arm(i);
    }
    void stop() { m_stopping = true; }

private:
    void arm(size_t i)
    {
        m_timers[i]->expires_after(m_period);
        m_timers[i]->async_wait([this, i](boost::system::error_code ec) {
            if (ec || m_stopping)
                return;
            m_check(i, std::chrono::steady_clock::now());
            arm(i);
        });
    }

    std::vector<std::unique_ptr<asio::steady_timer>> m_timers;
    std::chrono::milliseconds m_period { 5 };
    Check m_check;
    std::atomic<bool> m_stopping { false };
};

/**
 * What a connection of many calls at once writes: bytes appended to pending() while a write is on the wire go out
 * together in the next one (requests batched, one write at a time). Large bytes that live on unchanged (a request
 * body encoded once for the run) can be lent (lend()) instead of copied: the write gathers them from where they are.
 * For one I/O thread.
 */
class BatchedWriter {
public:
    std::string &pending() { return m_pending; }
    /// Appends @p size bytes at @p data without copying them: they must stay as they are until the write that
    /// carries them is done or the writer is cleared (the connection broke).
    void lend(const char *data, size_t size)
    {
        if (size > 0)
            m_lent.push_back({ m_pending.size(), data, size });
    }
    /// Forgets what is pending (the connection broke); a write on the wire ends on its own.
    void clear()
    {
        m_pending.clear();
        m_lent.clear();
    }
    /// Writes what is pending unless a write is on the wire already; @p done(error) when it is out, from where the
    /// connection flushes again (what came meanwhile) or breaks.
    template<class Stream> // a tcp::socket, or a TLS stream over one
    void flush(Stream &socket, std::function<void(boost::system::error_code)> done)
    {
        if (m_writing || (m_pending.empty() && m_lent.empty()))
            return;
        m_writing = true;
        m_sending.swap(m_pending);
        m_pending.clear();
        m_sendingLent.swap(m_lent);
        m_lent.clear();
        m_buffers.clear();
        size_t size = 0;
        size_t copied = 0; // of m_sending, in m_buffers so far
        const auto add = [&](const char *data, size_t n) {
            if (n > 0)
                m_buffers.emplace_back(data, n);
            size += n;
        };
        for (const Lent &lent : m_sendingLent) {
            add(m_sending.data() + copied, lent.at - copied);
            copied = lent.at;
            add(lent.data, lent.size);
        }
        add(m_sending.data() + copied, m_sending.size() - copied);
        if constexpr (std::is_same_v<Stream, tcp::socket>) {
            // Asio hands at most 64 pieces to each send(): lent DATA between frame headers, 32 frames a system
            // call. Plain TCP takes them all at once (IOV_MAX a call).
            if (m_buffers.size() > 64) {
                m_done = std::move(done);
                m_next = 0;
                m_nextOffset = 0;
                return gather(socket);
            }
        }
        // Asio's own completion conditions hand at most 64 KiB to each send(); a 10 MiB request then takes 160
        // system calls and as many waits. This one offers the kernel all that is left each time.
        asio::async_write(
            socket, m_buffers,
            [size](const boost::system::error_code &ec, size_t written) -> size_t { return ec ? 0 : size - written; },
            [this, done = std::move(done)](boost::system::error_code ec, size_t) {
                m_writing = false;
                m_sending.clear();
                m_sendingLent.clear();
                done(ec);
            });
    }

private:
    /// Sends m_buffers from m_next (m_nextOffset bytes into it) on: as much as the kernel takes, then waits until it
    /// takes more; m_done when all is out or on an error.
    void gather(tcp::socket &socket)
    {
        for (;;) {
            std::array<iovec, IOV_MAX> pieces;
            int count = 0;
            for (size_t i = m_next; i < m_buffers.size() && count < IOV_MAX; ++i, ++count) {
                const size_t skip = i == m_next ? m_nextOffset : 0;
                pieces[static_cast<size_t>(count)].iov_base
                    = const_cast<char *>(static_cast<const char *>(m_buffers[i].data())) + skip;
                pieces[static_cast<size_t>(count)].iov_len = m_buffers[i].size() - skip;
            }
            msghdr message {};
            message.msg_iov = pieces.data();
            message.msg_iovlen = static_cast<size_t>(count);
            const ssize_t sent = ::sendmsg(socket.native_handle(), &message, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (sent < 0 && errno == EINTR)
                continue;
            if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                socket.async_wait(tcp::socket::wait_write, [this, &socket](boost::system::error_code ec) {
                    if (ec)
                        return gathered(socket, ec);
                    gather(socket);
                });
                return;
            }
            if (sent < 0)
                return gathered(socket, boost::system::error_code(errno, boost::system::system_category()));
            for (auto left = static_cast<size_t>(sent); left > 0;) {
                const size_t here = std::min(left, m_buffers[m_next].size() - m_nextOffset);
                left -= here;
                m_nextOffset += here;
                if (m_nextOffset == m_buffers[m_next].size()) {
                    ++m_next;
                    m_nextOffset = 0;
                }
            }
            if (m_next == m_buffers.size())
                return gathered(socket, {});
        }
    }
    /// The gathered write ended: told from the I/O loop, never from inside flush(), as Asio's writes are.
    void gathered(tcp::socket &socket, boost::system::error_code ec)
    {
        asio::post(socket.get_executor(), [this, ec] {
            m_writing = false;
            m_sending.clear();
            m_sendingLent.clear();
            std::exchange(m_done, nullptr)(ec);
        });
    }

    struct Lent {
        size_t at; ///< where in the copied bytes they go
        const char *data;
        size_t size;
    };
    std::string m_pending;
    std::vector<Lent> m_lent;
    std::string m_sending;
    std::vector<Lent> m_sendingLent;
    std::vector<asio::const_buffer> m_buffers; ///< the write on the wire: copied and lent bytes in order
    size_t m_next = 0; ///< gather(): the first of m_buffers not all sent
    size_t m_nextOffset = 0; ///< of it, the bytes sent
    std::function<void(boost::system::error_code)> m_done; ///< gather()'s
    bool m_writing = false;
};

/// @p host and @p port as addresses to connect to; false with @p error ("cannot resolve HOST: why").
inline bool resolve(
    const std::string &host, const std::string &port, tcp::resolver::results_type *addresses, std::string *error)
{
    asio::io_context context;
    tcp::resolver resolver(context);
    boost::system::error_code ec;
    *addresses = resolver.resolve(host, port, ec);
    if (ec)
        *error = "cannot resolve " + host + ": " + ec.message();
    return !ec;
}

} // namespace rpcscope::net
