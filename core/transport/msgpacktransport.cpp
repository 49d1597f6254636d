#include "codec/msgpackcodec.h"
#include "metrics/callstatus.h"
#include "net/asio.h"

#include "msgpackrpcreader.h"
#include "requestbodies.h"
#include "transportfactories.h"
#include <boost/asio/connect.hpp>

#include <google/protobuf/descriptor.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <sstream>
#include <unordered_map>
#include <utility>

namespace rpcscope {

namespace {

namespace asio = boost::asio;
using net::tcp;
using Clock = std::chrono::steady_clock;

constexpr auto kSweepPeriod = std::chrono::milliseconds(5);
constexpr size_t kReadChunk = 64 * 1024;

class MsgpackTransport;
class MsgpackConnection;

class MsgpackSlot final : public BodySlot {
public:
    MsgpackSlot(MsgpackTransport *transport, MsgpackConnection *connection, int index, CallSink *sink);
    void start(uint64_t callNumber) override;
    void cancel() override;
    /// The reply's result (nullptr on failure) arrived; decodes it and reports.
    void finished(CallOutcome &outcome, const msgpack::object *result);

    MsgpackTransport *m_transport;
    MsgpackConnection *m_connection;
    uint32_t m_msgid = 0;
    uint64_t m_frameBytes = 0; ///< the request as sent: [0, msgid, method, params], as received counts the reply
    Clock::time_point m_deadline;
};

/**
 * One TCP connection carrying many calls at once: requests are written back to back (batched while a write is on
 * the wire) and replies matched to callers by msgid, in whatever order they come. Lives on one I/O thread.
 */
class MsgpackConnection {
public:
    /// Replies larger than @p receiveLimit bytes fail with RESOURCE_EXHAUSTED, checked before they are buffered whole
    /// and before a header's claimed element count is allocated.
    MsgpackConnection(MsgpackTransport *transport, asio::io_context &context, size_t receiveLimit)
        : m_transport(transport), m_context(context), m_socket(context), m_reader(receiveLimit)
    {
    }

    asio::io_context &context() { return m_context; }

    void submit(MsgpackSlot *slot, const std::string &method);
    /// @p slot may be gone (the engine cancels on its way out): it is only compared until found in flight.
    void cancel(MsgpackSlot *slot)
    {
        for (auto it = m_inFlight.begin(); it != m_inFlight.end(); ++it) {
            if (it->second == slot)
                return endCall(it, CallStatus::Cancelled, "cancelled");
        }
    }
    void checkDeadlines(Clock::time_point now)
    {
        for (auto it = m_inFlight.begin(); it != m_inFlight.end();) {
            auto current = it++;
            if (now >= current->second->m_deadline)
                endCall(current, CallStatus::DeadlineExceeded, "deadline exceeded");
        }
    }

private:
    using InFlight = std::unordered_map<uint32_t, MsgpackSlot *>;

    void endCall(InFlight::iterator it, int status, std::string message)
    {
        // A late reply to this msgid, if it ever comes, is dropped as unknown... unless it arrives on a fresh msgid
        // space: msgids grow, so it cannot be mistaken for a newer call.
        MsgpackSlot *slot = it->second;
        m_inFlight.erase(it);
        CallOutcome outcome;
        outcome.status = status;
        outcome.errorMessage = std::move(message);
        outcome.bytesSent = slot->m_frameBytes;
        m_late.insert(slot->m_msgid);
        slot->finished(outcome, nullptr);
    }
    void connect();
    void flush();
    void read();
    void onMessage(const MsgpackRpcMessage &message);
    std::string tooLarge() const;
    /// The connection is unusable: every call on it fails with @p message; the next call reconnects.
    void breakConnection(int status, const std::string &message);

    MsgpackTransport *m_transport;
    asio::io_context &m_context;
    tcp::socket m_socket;
    enum class State { Closed, Connecting, Open } m_state = State::Closed;
    uint32_t m_nextMsgid = 0;
    InFlight m_inFlight;
    struct LateSet {
        // msgids whose calls ended early (deadline, cancel): their replies may still come and are skipped.
        std::unordered_map<uint32_t, char> ids;
        void insert(uint32_t id)
        {
            if (ids.size() > 100000)
                ids.clear();
            ids.emplace(id, 0);
        }
        bool take(uint32_t id) { return ids.erase(id) > 0; }
    } m_late;
    net::BatchedWriter m_writer;
    MsgpackRpcReader m_reader;
    uint64_t m_notifications = 0; ///< skipped since the last reply
};

class MsgpackTransport final : public Transport {
public:
    MsgpackTransport(const GrpcTarget &target, const GrpcCall &call, tcp::resolver::results_type addresses,
        std::string method, bool paramsMap)
        : m_target(target)
        , m_call(call)
        , m_addresses(std::move(addresses))
        , m_method(std::move(method))
        , m_paramsMap(paramsMap)
        , m_threads(std::clamp(target.clientThreads, 1, 64))
    {
        const int connections = std::max(1, target.connections);
        for (int i = 0; i < connections; ++i)
            m_connections.push_back(std::make_unique<MsgpackConnection>(
                this, m_threads.context(static_cast<size_t>(i)), target.receiveLimit()));
        if (target.timeout.count() > 0) {
            m_sweep.start(m_threads, kSweepPeriod, [this](size_t thread, Clock::time_point now) {
                for (size_t c = thread; c < m_connections.size(); c += static_cast<size_t>(m_threads.size()))
                    m_connections[c]->checkDeadlines(now);
            });
        }
        m_threads.start();
    }

    ~MsgpackTransport() override
    {
        m_sweep.stop();
        m_threads.stop();
    }

    bool initParams(std::string *error)
    {
        const bool map = m_paramsMap;
        return m_params.init(
            m_call,
            [map](const google::protobuf::Message &message, std::string *out, std::string *) {
                StringSink sink { out };
                MsgpackPacker packer(sink);
                if (map) {
                    packer.pack_array(1);
                    packMessage(packer, message);
                } else {
                    packMessageFields(packer, message);
                }
                return true;
            },
            error);
    }

    std::unique_ptr<CallSlot> makeSlot(int index, CallSink *sink) override
    {
        MsgpackConnection *connection = m_connections[static_cast<size_t>(index) % m_connections.size()].get();
        return std::make_unique<MsgpackSlot>(this, connection, index, sink);
    }

    const GrpcTarget m_target;
    const GrpcCall m_call;
    const tcp::resolver::results_type m_addresses;
    const std::string m_method;
    const bool m_paramsMap;
    RequestBodies m_params;
    net::IoThreads m_threads;
    std::vector<std::unique_ptr<MsgpackConnection>> m_connections;
    net::PeriodicSweep m_sweep;
};

void MsgpackConnection::submit(MsgpackSlot *slot, const std::string &method)
{
    // msgids are 32-bit in practice (many servers reject larger); wrapping after 4 billion calls is harmless
    // because calls that old have long ended.
    slot->m_msgid = m_nextMsgid++;
    const auto timeout = m_transport->m_target.timeout;
    slot->m_deadline = timeout.count() > 0 ? Clock::now() + timeout : Clock::time_point::max();
    m_inFlight[slot->m_msgid] = slot;
    std::string &pending = m_writer.pending();
    const size_t before = pending.size();
    StringSink sink { &pending };
    MsgpackPacker packer(sink);
    packer.pack_array(4);
    packer.pack_uint8(0);
    packer.pack_uint32(slot->m_msgid);
    packer.pack_str(static_cast<uint32_t>(method.size()));
    packer.pack_str_body(method.data(), static_cast<uint32_t>(method.size()));
    pending.append(*slot->m_body); // the params, encoded once
    slot->m_frameBytes = pending.size() - before;
    if (m_state == State::Closed)
        connect();
    else if (m_state == State::Open)
        flush();
}

void MsgpackConnection::connect()
{
    m_state = State::Connecting;
    asio::async_connect(
        m_socket, m_transport->m_addresses, [this](boost::system::error_code ec, const tcp::endpoint &) {
            if (ec)
                return breakConnection(CallStatus::Unavailable, "connect: " + ec.message());
            m_socket.set_option(tcp::no_delay(true), ec);
            m_state = State::Open;
            read();
            flush();
        });
}

void MsgpackConnection::flush()
{
    m_writer.flush(m_socket, [this](boost::system::error_code ec) {
        if (ec) {
            if (m_state == State::Open)
                breakConnection(CallStatus::Unavailable, "send: " + ec.message());
            return;
        }
        flush();
    });
}

void MsgpackConnection::read()
{
    const auto [buffer, size] = m_reader.readBuffer(kReadChunk);
    m_socket.async_read_some(asio::buffer(buffer, size), [this](boost::system::error_code ec, size_t n) {
        if (ec) {
            if (m_state == State::Open)
                breakConnection(CallStatus::Unavailable,
                    ec == asio::error::eof ? std::string("connection closed by the server")
                                           : "receive: " + ec.message());
            return;
        }
        m_reader.consumed(n);
        bool needMore = false;
        try {
            MsgpackRpcMessage message;
            std::string why;
            while (m_state == State::Open && !needMore) {
                switch (m_reader.next(&message, &why)) {
                case MsgpackRpcReader::Result::Message:
                    onMessage(message); // may break the connection (an unknown msgid)
                    break;
                case MsgpackRpcReader::Result::NeedMore:
                    needMore = true;
                    break;
                case MsgpackRpcReader::Result::TooLarge:
                    return breakConnection(CallStatus::ResourceExhausted, tooLarge());
                case MsgpackRpcReader::Result::NotMsgpack:
                    return breakConnection(CallStatus::Internal, "not msgpack-rpc: " + why);
                case MsgpackRpcReader::Result::NotRpc:
                    return breakConnection(CallStatus::Internal, "not a msgpack-rpc reply ([1, msgid, error, result])");
                }
            }
        } catch (const std::exception &e) {
            return breakConnection(CallStatus::Internal, std::string("not msgpack-rpc: ") + e.what());
        }
        if (needMore)
            read();
    });
}

std::string MsgpackConnection::tooLarge() const
{
    return "reply larger than the receive limit of " + std::to_string(m_reader.limit())
        + " bytes (raise it with --max-recv-size)";
}

void MsgpackConnection::onMessage(const MsgpackRpcMessage &message)
{
    if (message.kind == MsgpackRpcMessage::Kind::Notification) {
        ++m_notifications; // counted with the next reply
        return;
    }
    const uint64_t msgid = message.msgid;
    const auto it = msgid <= UINT32_MAX ? m_inFlight.find(static_cast<uint32_t>(msgid)) : m_inFlight.end();
    if (it == m_inFlight.end()) {
        if (msgid <= UINT32_MAX && m_late.take(static_cast<uint32_t>(msgid)))
            return; // the reply to a call that already ended (deadline, cancel)
        return breakConnection(CallStatus::Internal, "msgpack-rpc reply with unknown msgid " + std::to_string(msgid));
    }
    MsgpackSlot *slot = it->second;
    m_inFlight.erase(it);
    CallOutcome outcome;
    outcome.bytesSent = slot->m_frameBytes;
    outcome.bytesReceived = message.bytes;
    outcome.notifications = std::exchange(m_notifications, 0);
    const msgpack::object &error = *message.error;
    if (error.type != msgpack::type::NIL) {
        outcome.status = CallStatus::Unknown;
        if (error.type == msgpack::type::STR)
            outcome.errorMessage.assign(error.via.str.ptr, error.via.str.size);
        else {
            std::ostringstream text;
            text << error;
            outcome.errorMessage = text.str();
        }
        outcome.errorMessage = "msgpack-rpc error: " + outcome.errorMessage;
        slot->finished(outcome, nullptr);
        return;
    }
    slot->finished(outcome, message.result);
}

void MsgpackConnection::breakConnection(int status, const std::string &message)
{
    boost::system::error_code ignored;
    m_socket.close(ignored);
    m_state = State::Closed;
    m_writer.clear();
    m_reader.reset();
    InFlight calls;
    calls.swap(m_inFlight);
    for (const auto &[msgid, slot] : calls) {
        CallOutcome outcome;
        outcome.status = status;
        outcome.errorMessage = message;
        slot->finished(outcome, nullptr); // may submit again: that call goes on a new connection
    }
}

MsgpackSlot::MsgpackSlot(MsgpackTransport *transport, MsgpackConnection *connection, int index, CallSink *sink)
    : BodySlot(transport->m_call, transport->m_params, index, sink), m_transport(transport), m_connection(connection)
{
}

void MsgpackSlot::start(uint64_t callNumber)
{
    if (!prepareBody(callNumber))
        return;
    asio::dispatch(m_connection->context(), [this] { m_connection->submit(this, m_transport->m_method); });
}

void MsgpackSlot::cancel()
{
    asio::post(m_connection->context(), [connection = m_connection, slot = this] { connection->cancel(slot); });
}

void MsgpackSlot::finished(CallOutcome &outcome, const msgpack::object *result)
{
    if (result && m_decoded) {
        // A map fills the reply by field name; a bare value (a number, an array) is the reply's first field.
        m_decoded->Clear();
        std::string why;
        bool ok;
        if (result->type == msgpack::type::MAP)
            ok = unpackMessage(*result, m_decoded.get(), &why, true);
        else if (m_decoded->GetDescriptor()->field_count() > 0)
            ok = unpackFieldValue(*result, m_decoded.get(), m_decoded->GetDescriptor()->field(0), &why);
        else
            ok = result->type == msgpack::type::NIL || (why = "the reply type has no fields", false);
        if (ok) {
            outcome.reply = m_decoded.get();
        } else {
            outcome.status = CallStatus::DecodeError;
            outcome.errorMessage = "result does not decode as " + m_decoded->GetDescriptor()->full_name() + ": " + why;
        }
    }
    m_sink->callDone(m_index, outcome);
}

} // namespace

std::unique_ptr<Transport> makeMsgpackTransport(const std::string &host, const std::string &port,
    const GrpcTarget &target, const GrpcCall &call, const std::string &method, bool paramsMap, std::string *error)
{
    tcp::resolver::results_type addresses;
    if (!net::resolve(host, port, &addresses, error))
        return nullptr;
    auto transport = std::make_unique<MsgpackTransport>(target, call, std::move(addresses), method, paramsMap);
    if (!transport->initParams(error))
        return nullptr;
    return transport;
}

} // namespace rpcscope
