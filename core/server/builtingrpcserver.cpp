#include "builtingrpcserver.h"

#include "benchlogic.h"
#include "net/portowners.h"

#include "rpcscope/bench/v1/bench.grpc.pb.h"
#include "util/cpuset.h"

#include <grpcpp/alarm.h>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <pthread.h>

namespace benchpb = ::rpcscope::bench::v1;

namespace rpcscope {

namespace {

constexpr int kMaxMessageBytes = 512 * 1024 * 1024;
constexpr int kPendingPerMethod = 16; // outstanding accepts per method and queue, to absorb bursts

/**
 * The tag of the alarm stop() sets on each completion queue once the server has shut down. The queue's own thread
 * shuts the queue down when it comes, and from then on deletes the handlers whose operations complete instead of
 * letting them start another: gRPC aborts the process on an operation started on a queue that is shut down, and a
 * write still completing after the server's shutdown made a stream's handler start its Finish there.
 */
char closeQueueTag;

class Handler {
public:
    virtual ~Handler() = default;
    virtual void proceed(bool ok) = 0;
    /// The delay is over (or the server stops, @p stopping): send the answer.
    virtual void answer(bool stopping) = 0;
};

/**
 * What the handlers share: the served-call count, and the delayed answers.
 *
 * Delayed answers are sent by a thread of their own that sleeps until the earliest deadline (a futex wait, precise
 * to tens of microseconds). gRPC's alarms fire on the completion queue's next millisecond tick after the deadline,
 * which made a 1 ms delay cost 2 ms: a demo's "B is 1 ms slower" must measure as 1 ms.
 */
struct ServingState {
    std::atomic<uint64_t> served { 0 };
    std::mutex mutex;
    std::condition_variable wake;
    bool stopping = false; ///< guarded
    std::multimap<std::chrono::steady_clock::time_point, Handler *> delayed; ///< guarded
    std::chrono::microseconds extraDelay { 0 };
    std::chrono::nanoseconds burn { 0 }; ///< CPU time each reply costs, spent on the completion queue's thread
    std::thread answering;

    /// Calls waiting out their delay now.
    size_t waiting()
    {
        std::lock_guard lock(mutex);
        return delayed.size();
    }

    /// Queues @p handler's answer for @p when; false once the server stops (answer it at once instead).
    bool delay(Handler *handler, std::chrono::steady_clock::time_point when)
    {
        std::lock_guard lock(mutex);
        if (stopping)
            return false;
        const auto it = delayed.emplace(when, handler);
        if (it == delayed.begin())
            wake.notify_one(); // a new earliest deadline
        return true;
    }

    void answerOnTime()
    {
        std::unique_lock lock(mutex);
        for (;;) {
            if (delayed.empty()) {
                if (stopping)
                    return;
                wake.wait(lock);
                continue;
            }
            const auto first = delayed.begin();
            if (!stopping && first->first > std::chrono::steady_clock::now()) {
                wake.wait_until(lock, first->first);
                continue;
            }
            Handler *handler = first->second;
            delayed.erase(first);
            const bool cutShort = stopping;
            lock.unlock();
            handler->answer(cutShort);
            lock.lock();
        }
    }
};

/// The status a call asks for with the metadata `rpcscope-status: N` (1..16), for error-path tests; none otherwise.
std::optional<grpc::Status> askedStatus(const grpc::ServerContext &context)
{
    const auto &metadata = context.client_metadata();
    const auto it = metadata.find("rpcscope-status");
    if (it == metadata.end())
        return std::nullopt;
    const int code = std::atoi(std::string(it->second.data(), it->second.size()).c_str());
    if (code <= 0 || code > 16)
        return std::nullopt;
    return grpc::Status(static_cast<grpc::StatusCode>(code), "status asked for by rpcscope-status metadata");
}

/// One unary call's life on a completion queue: accept, answer, done. Answering re-arms a fresh accept.
template<typename Request, typename Reply, typename Logic> class UnaryHandler final : public Handler {
public:
    using RequestFn = void (benchpb::Bench::AsyncService::*)(grpc::ServerContext *, Request *,
        grpc::ServerAsyncResponseWriter<Reply> *, grpc::CompletionQueue *, grpc::ServerCompletionQueue *, void *);

    UnaryHandler(
        benchpb::Bench::AsyncService *service, grpc::ServerCompletionQueue *cq, RequestFn request, ServingState *state)
        : m_service(service), m_cq(cq), m_request(request), m_shared(state), m_responder(&m_context)
    {
        (m_service->*m_request)(&m_context, &m_requestMessage, &m_responder, m_cq, m_cq, this);
    }

    void proceed(bool ok) override
    {
        switch (m_state) {
        case State::Accepting: {
            if (!ok) { // shutting down
                delete this;
                return;
            }
            new UnaryHandler(m_service, m_cq, m_request, m_shared);
            if (const std::optional<grpc::Status> asked = askedStatus(m_context)) {
                m_state = State::Finishing;
                m_responder.FinishWithError(*asked, this);
                return;
            }
            const std::chrono::microseconds delay = Logic()(m_requestMessage, m_reply) + m_shared->extraDelay;
            burnCpuIfAsked(m_shared->burn);
            if (delay.count() > 0) {
                // Answered later by the answering thread, without holding this serving thread.
                m_state = State::Delayed;
                if (!m_shared->delay(this, std::chrono::steady_clock::now() + delay))
                    answer(true);
                return;
            }
            finish();
            return;
        }
        case State::Delayed: // never comes from the queue: answer() has moved the call on to Finishing first
        case State::Finishing:
            if (ok)
                m_shared->served.fetch_add(1, std::memory_order_relaxed);
            delete this;
            return;
        }
    }

    void answer(bool stopping) override
    {
        if (!stopping) {
            finish();
            return;
        }
        m_state = State::Finishing;
        m_responder.FinishWithError(grpc::Status(grpc::StatusCode::UNAVAILABLE, "the server is stopping"), this);
    }

private:
    benchpb::Bench::AsyncService *m_service;
    grpc::ServerCompletionQueue *m_cq;
    RequestFn m_request;
    ServingState *m_shared;
    grpc::ServerContext m_context;
    Request m_requestMessage;
    grpc::ServerAsyncResponseWriter<Reply> m_responder;
    Reply m_reply;
    enum class State { Accepting, Delayed, Finishing } m_state = State::Accepting;

    void finish()
    {
        m_state = State::Finishing;
        m_responder.Finish(m_reply, grpc::Status::OK, this);
    }
};

struct EchoLogic {
    std::chrono::microseconds operator()(benchpb::EchoRequest &request, benchpb::EchoResponse &reply) const
    {
        return runEcho(request, reply);
    }
};

struct SumLogic {
    std::chrono::microseconds operator()(const benchpb::SumRequest &request, benchpb::SumResponse &reply) const
    {
        return runSum(request, reply);
    }
};

struct ListLogic {
    std::chrono::microseconds operator()(const benchpb::ListRequest &request, benchpb::ListResponse &reply) const
    {
        return runList(request, reply);
    }
};

/**
 * What the streaming handlers share: a call accepted on a completion queue, then one operation at a time (read,
 * write, a wait on the answering thread, finish), each coming back through proceed(). The stream's own object
 * (writer, reader or both) lives in the derived class, which accepts the next call of its kind in accepted().
 */
class StreamHandler : public Handler {
public:
    void proceed(bool ok) override
    {
        switch (m_state) {
        case State::Accepting:
            if (!ok) { // shutting down
                delete this;
                return;
            }
            accepted();
            if (const std::optional<grpc::Status> asked = askedStatus(m_context)) {
                finish(*asked);
                return;
            }
            begin();
            return;
        case State::Reading:
            if (ok)
                received();
            else
                clientDone(); // the client closed its side (or the call is gone: the finish then fails)
            return;
        case State::Writing:
            if (ok)
                written();
            else
                finish(grpc::Status(grpc::StatusCode::CANCELLED, "the client went away"));
            return;
        case State::Waiting: // never comes from the queue: answer() moves the call on first
        case State::Finishing:
            if (ok)
                m_shared->served.fetch_add(1, std::memory_order_relaxed);
            delete this;
            return;
        }
    }

    void answer(bool stopping) override
    {
        if (stopping)
            finish(grpc::Status(grpc::StatusCode::UNAVAILABLE, "the server is stopping"));
        else
            waited();
    }

protected:
    enum class State { Accepting, Reading, Writing, Waiting, Finishing };

    StreamHandler(benchpb::Bench::AsyncService *service, grpc::ServerCompletionQueue *cq, ServingState *state)
        : m_service(service), m_cq(cq), m_shared(state)
    {
    }

    virtual void accepted() = 0; ///< arms the accept of the next call of this kind
    virtual void begin() = 0; ///< the call is here, with no status asked for
    virtual void received() { } ///< a read came back with a message
    virtual void clientDone() { } ///< a read came back empty
    virtual void written() { } ///< a write went out
    virtual void waited() = 0; ///< a wait() is over
    virtual void finishWith(const grpc::Status &status) = 0; ///< the stream's Finish with @p status

    void finish(const grpc::Status &status)
    {
        m_state = State::Finishing;
        finishWith(status);
    }

    /// Lets the answering thread call waited() after @p delay (plus the server's extra delay), holding no thread.
    void wait(std::chrono::microseconds delay)
    {
        waitUntil(std::chrono::steady_clock::now() + delay + m_shared->extraDelay);
    }

    /// The same until @p when (the extra delay is the caller's to add); at once when that has passed.
    void waitUntil(std::chrono::steady_clock::time_point when)
    {
        if (when <= std::chrono::steady_clock::now()) {
            waited();
            return;
        }
        m_state = State::Waiting;
        if (!m_shared->delay(this, when))
            answer(true);
    }

    benchpb::Bench::AsyncService *m_service;
    grpc::ServerCompletionQueue *m_cq;
    ServingState *m_shared;
    grpc::ServerContext m_context;
    State m_state = State::Accepting;
};

/// Download (server streaming): `count` replies of `size` bytes, `interval_us` apart.
class DownloadHandler final : public StreamHandler {
public:
    DownloadHandler(benchpb::Bench::AsyncService *service, grpc::ServerCompletionQueue *cq, ServingState *state)
        : StreamHandler(service, cq, state), m_writer(&m_context)
    {
        m_service->RequestDownload(&m_context, &m_request, &m_writer, m_cq, m_cq, this);
    }

private:
    void accepted() override { new DownloadHandler(m_service, m_cq, m_shared); }
    void begin() override
    {
        m_reply.mutable_payload()->assign(std::min<size_t>(m_request.size(), kMaxMessageBytes - 16), 'x');
        next();
    }
    void written() override { next(); }
    void waited() override
    {
        if (m_sent == 0)
            m_first = std::chrono::steady_clock::now();
        m_state = State::Writing;
        ++m_sent;
        m_writer.Write(m_reply, this);
    }
    void finishWith(const grpc::Status &status) override { m_writer.Finish(status, this); }

    void next()
    {
        if (m_sent >= m_request.count()) {
            finish(grpc::Status::OK);
            return;
        }
        // Here, on the completion queue's thread: waited() may run on the answering thread, which all calls share.
        burnCpuIfAsked(m_shared->burn);
        // Message k is due k gaps after the first, however long the writes took: the cadence asked for (each gap
        // the interval plus the server's extra delay, which the first message waits too).
        if (m_sent == 0) {
            wait(std::chrono::microseconds(0));
            return;
        }
        waitUntil(m_first + (std::chrono::microseconds(m_request.interval_us()) + m_shared->extraDelay) * m_sent);
    }

    benchpb::DownloadRequest m_request;
    benchpb::EchoResponse m_reply;
    grpc::ServerAsyncWriter<benchpb::EchoResponse> m_writer;
    uint32_t m_sent = 0;
    std::chrono::steady_clock::time_point m_first;
};

/// Upload (client streaming): counts the requests and their payload bytes until the client closes its side.
class UploadHandler final : public StreamHandler {
public:
    UploadHandler(benchpb::Bench::AsyncService *service, grpc::ServerCompletionQueue *cq, ServingState *state)
        : StreamHandler(service, cq, state), m_reader(&m_context)
    {
        m_service->RequestUpload(&m_context, &m_reader, m_cq, m_cq, this);
    }

private:
    void accepted() override { new UploadHandler(m_service, m_cq, m_shared); }
    void begin() override { read(); }
    void received() override
    {
        m_reply.set_messages(m_reply.messages() + 1);
        m_reply.set_bytes(m_reply.bytes() + m_message.payload().size());
        read();
    }
    void clientDone() override
    {
        burnCpuIfAsked(m_shared->burn);
        wait(std::chrono::microseconds(0)); // the server's extra delay, if any
    }
    void waited() override { finish(grpc::Status::OK); }
    void finishWith(const grpc::Status &status) override
    {
        if (status.ok())
            m_reader.Finish(m_reply, status, this);
        else
            m_reader.FinishWithError(status, this);
    }

    void read()
    {
        m_state = State::Reading;
        m_reader.Read(&m_message, this);
    }

    benchpb::EchoRequest m_message;
    benchpb::UploadResponse m_reply;
    grpc::ServerAsyncReader<benchpb::UploadResponse, benchpb::EchoRequest> m_reader;
};

/// Chat (bidi streaming): each request answered in order with one reply, as Echo answers it.
class ChatHandler final : public StreamHandler {
public:
    ChatHandler(benchpb::Bench::AsyncService *service, grpc::ServerCompletionQueue *cq, ServingState *state)
        : StreamHandler(service, cq, state), m_stream(&m_context)
    {
        m_service->RequestChat(&m_context, &m_stream, m_cq, m_cq, this);
    }

private:
    void accepted() override { new ChatHandler(m_service, m_cq, m_shared); }
    void begin() override { read(); }
    void received() override
    {
        const std::chrono::microseconds delay = runEcho(m_request, m_reply);
        burnCpuIfAsked(m_shared->burn);
        wait(delay);
    }
    void clientDone() override { finish(grpc::Status::OK); }
    void written() override { read(); }
    void waited() override
    {
        m_state = State::Writing;
        m_stream.Write(m_reply, this);
    }
    void finishWith(const grpc::Status &status) override { m_stream.Finish(status, this); }

    void read()
    {
        m_state = State::Reading;
        m_request.Clear();
        m_stream.Read(&m_request, this);
    }

    benchpb::EchoRequest m_request;
    benchpb::EchoResponse m_reply;
    grpc::ServerAsyncReaderWriter<benchpb::EchoResponse, benchpb::EchoRequest> m_stream;
};

using EchoHandler = UnaryHandler<benchpb::EchoRequest, benchpb::EchoResponse, EchoLogic>;
using ListHandler = UnaryHandler<benchpb::ListRequest, benchpb::ListResponse, ListLogic>;
using SumHandler = UnaryHandler<benchpb::SumRequest, benchpb::SumResponse, SumLogic>;

} // namespace

struct BuiltinGrpcServer::Impl {
    benchpb::Bench::AsyncService service;
    std::unique_ptr<grpc::Server> server;
    std::vector<std::unique_ptr<grpc::ServerCompletionQueue>> queues;
    std::vector<std::thread> threads;
    ServingState state;
    QString host;
    quint16 port = 0;
};

BuiltinGrpcServer::BuiltinGrpcServer() = default;

BuiltinGrpcServer::~BuiltinGrpcServer()
{
    stop();
}

bool BuiltinGrpcServer::start(
    const QString &host, quint16 port, int threads, QString *error, const std::optional<ServerTls> &tls)
{
    if (d) {
        if (error)
            *error = QStringLiteral("the built-in gRPC server is already running");
        return false;
    }
    static std::once_flag reflectionOnce;
    std::call_once(reflectionOnce, [] { grpc::reflection::InitProtoReflectionServerBuilderPlugin(); });

    auto impl = std::make_unique<Impl>();
    impl->state.extraDelay = m_extraDelay;
    impl->state.burn = m_burn;
    const int threadCount = threads > 0 ? threads : usableCpuCount();
    const QString bindHost = host.contains(QLatin1Char(':')) && !host.startsWith(QLatin1Char('['))
        ? QLatin1Char('[') + host + QLatin1Char(']')
        : host;
    // A port another process listens on is refused, not shared: gRPC would otherwise bind it beside the other server
    // (SO_REUSEPORT), and calls meant for that one would reach this one.
    if (const QString inUse = portInUseMessage(port); !inUse.isEmpty()) {
        if (error)
            *error = inUse;
        return false;
    }
    int selectedPort = 0;
    grpc::ServerBuilder builder;
    builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
    std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials();
    if (tls) {
        grpc::SslServerCredentialsOptions options(tls->clientCa.empty()
                ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
        options.pem_root_certs = tls->clientCa;
        options.pem_key_cert_pairs.push_back({ tls->privateKey, tls->certChain });
        credentials = grpc::SslServerCredentials(options);
    }
    builder.AddListeningPort(
        QString(bindHost + QLatin1Char(':') + QString::number(port)).toStdString(), credentials, &selectedPort);
    builder.RegisterService(&impl->service);
    builder.SetMaxReceiveMessageSize(kMaxMessageBytes);
    builder.SetMaxSendMessageSize(kMaxMessageBytes);
    for (int i = 0; i < threadCount; ++i)
        impl->queues.push_back(builder.AddCompletionQueue());
    impl->server = builder.BuildAndStart();
    if (!impl->server || selectedPort == 0) {
        if (error)
            *error = QStringLiteral("cannot listen on %1:%2 (address in use, not local, or a bad TLS certificate/key)")
                         .arg(host)
                         .arg(port);
        if (impl->server)
            impl->server->Shutdown();
        for (auto &cq : impl->queues) {
            cq->Shutdown();
            void *tag;
            bool ok;
            while (cq->Next(&tag, &ok)) { }
        }
        return false;
    }
    impl->host = bindHost;
    impl->port = static_cast<quint16>(selectedPort);
    for (auto &queue : impl->queues) {
        grpc::ServerCompletionQueue *cq = queue.get();
        for (int i = 0; i < kPendingPerMethod; ++i) {
            new EchoHandler(&impl->service, cq, &benchpb::Bench::AsyncService::RequestEcho, &impl->state);
            new SumHandler(&impl->service, cq, &benchpb::Bench::AsyncService::RequestSum, &impl->state);
            new ListHandler(&impl->service, cq, &benchpb::Bench::AsyncService::RequestList, &impl->state);
            new DownloadHandler(&impl->service, cq, &impl->state);
            new UploadHandler(&impl->service, cq, &impl->state);
            new ChatHandler(&impl->service, cq, &impl->state);
        }
        impl->threads.emplace_back([cq] {
            pthread_setname_np(pthread_self(), "rpcscope-serve"); // what a profile or top shows for it
            void *tag;
            bool ok;
            bool closing = false;
            while (cq->Next(&tag, &ok)) {
                if (tag == &closeQueueTag) {
                    closing = true;
                    cq->Shutdown();
                } else if (closing) {
                    delete static_cast<Handler *>(tag); // its call is over (the server shut down): no operation follows
                } else {
                    static_cast<Handler *>(tag)->proceed(ok);
                }
            }
        });
    }
    impl->state.answering = std::thread([state = &impl->state] { state->answerOnTime(); });
    d = std::move(impl);
    return true;
}

void BuiltinGrpcServer::stop()
{
    if (!d)
        return;
    {
        std::lock_guard lock(d->state.mutex);
        d->state.stopping = true;
    }
    // Calls still waiting out a delay are answered UNAVAILABLE now, so the shutdown below does not wait for them.
    d->state.wake.notify_all();
    d->state.answering.join();
    d->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
    // Each queue is shut down by its own thread (see closeQueueTag), after the events that came before.
    std::vector<std::unique_ptr<grpc::Alarm>> closers;
    for (auto &queue : d->queues) {
        closers.push_back(std::make_unique<grpc::Alarm>());
        closers.back()->Set(queue.get(), std::chrono::system_clock::now(), &closeQueueTag);
    }
    for (auto &thread : d->threads)
        thread.join();
    closers.clear(); // fired, before their queues go
    d.reset();
}

bool BuiltinGrpcServer::isRunning() const
{
    return d != nullptr;
}

quint16 BuiltinGrpcServer::port() const
{
    return d ? d->port : 0;
}

QString BuiltinGrpcServer::address() const
{
    return d ? d->host + QLatin1Char(':') + QString::number(d->port) : QString();
}

uint64_t BuiltinGrpcServer::callsServed() const
{
    return d ? d->state.served.load() : 0;
}

uint64_t BuiltinGrpcServer::callsDelayed() const
{
    return d ? d->state.waiting() : 0;
}

} // namespace rpcscope
