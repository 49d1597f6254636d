// The HTTP transport's reply parser: Boost.Beast's response parser with the body limit, read as
// core/transport/httptransport.cpp reads it (the header, then the body, over a keep-alive connection, leftover bytes
// kept for the next reply), on bytes a server could send, arriving in reads of any size.

#include "fuzzapp.h"

#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>

RPCSCOPE_FUZZ_INITIALIZE_QT

namespace http = boost::beast::http;

namespace {

/// A SyncReadStream handing out the input @p chunk bytes at a time, then end of file (the server closed).
class InputStream {
public:
    using executor_type = boost::asio::any_io_executor;

    InputStream(const uint8_t *data, size_t size, size_t chunk) : m_data(data), m_size(size), m_chunk(chunk) { }

    template<class Buffers> size_t read_some(const Buffers &buffers, boost::system::error_code &ec)
    {
        if (m_offset == m_size) {
            ec = boost::asio::error::eof;
            return 0;
        }
        ec = {};
        size_t n = std::min(m_chunk, m_size - m_offset);
        n = boost::asio::buffer_copy(buffers, boost::asio::buffer(m_data + m_offset, n));
        m_offset += n;
        return n;
    }
    template<class Buffers> size_t read_some(const Buffers &buffers)
    {
        boost::system::error_code ec;
        const size_t n = read_some(buffers, ec);
        if (ec)
            throw boost::system::system_error(ec);
        return n;
    }

private:
    const uint8_t *m_data;
    size_t m_size;
    size_t m_chunk;
    size_t m_offset = 0;
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    // Two bytes of settings: the receive limit (so that body_limit is reached) and the read size.
    if (size < 2)
        return 0;
    const uint64_t limit = uint64_t(data[0]) * 64;
    const size_t chunk = 1 + data[1] % 128;
    InputStream stream(data + 2, size - 2, chunk);
    boost::beast::flat_buffer buffer; // one per connection, as HttpConnection::m_buffer
    for (int reply = 0; reply < 8; ++reply) {
        std::optional<http::response_parser<http::string_body>> parser;
        parser.emplace();
        parser->body_limit(limit);
        // The header, then the body, as HttpConnection::read() and readBody() do.
        boost::system::error_code ec;
        http::read_header(stream, buffer, *parser, ec);
        if (ec)
            return 0;
        http::read(stream, buffer, *parser, ec);
        if (ec)
            return 0;
        http::response<http::string_body> &response = parser->get();
        // What HttpConnection::read() looks at.
        const bool keepAlive = response.keep_alive();
        if (response.body().size() > limit)
            abort(); // the limit must hold
        std::string message = "HTTP " + std::to_string(response.result_int());
        if (const auto reason = response.reason(); !reason.empty())
            message += " " + std::string(reason);
        if (!keepAlive)
            return 0;
    }
    return 0;
}
