// The gRPC client on bare HTTP/2 (nghttp2) against the real built-in gRPC server (gRPC C++) on 127.0.0.1 port 0,
// side by side with the gRPC C++ client: every case must end the same on both. Streams are tst_engine's, TLS is
// tst_tls's, both on both clients.
#include "engine/callsetup.h"
#include "engine/loadengine.h"
#include "engine/singlecall.h"
#include "metrics/callstatus.h"
#include "server/builtingrpcserver.h"
#include "transport/grpctransport.h"
#include "transport/transportfactories.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTcpServer>
#include <QTest>

#include <QTest>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace rpcscope;
using namespace std::chrono_literals;

namespace {

enum Client { GrpcCpp, H2 };

GrpcCall call(const char *method, const QByteArray &json, const QStringList &fills = {})
{
    QString error;
    auto made = prepareGrpcCall(builtinBenchSchema(),
        { QStringLiteral("rpcscope.bench.v1.Bench/") + QLatin1String(method), json, fills, true }, &error);
    if (!made)
        qFatal("%s", qPrintable(error));
    return *made;
}

std::unique_ptr<Transport> transport(Client client, const QString &address, const GrpcTarget &given, const GrpcCall &c)
{
    GrpcTarget target = given;
    target.address = address;
    if (client == GrpcCpp)
        return makeGrpcTransport(target, c);
    std::string error;
    const qsizetype colon = address.lastIndexOf(u':');
    auto made = makeH2GrpcTransport(
        address.left(colon).toStdString(), address.mid(colon + 1).toStdString(), target, c, &error);
    if (!made)
        qFatal("%s", error.c_str());
    return made;
}

} // namespace

class TestH2Grpc : public QObject {
    Q_OBJECT

    BuiltinGrpcServer m_server;

    GrpcTarget target(std::chrono::nanoseconds timeout = 5s)
    {
        GrpcTarget t;
        t.timeout = timeout;
        return t;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QString error;
        QVERIFY2(m_server.start(QStringLiteral("127.0.0.1"), 0, 0, &error), qPrintable(error));
    }

    void bothClients_data()
    {
        QTest::addColumn<int>("client");
        QTest::newRow("gRPC C++") << int(GrpcCpp);
        QTest::newRow("nghttp2") << int(H2);
    }

    void aReplyIsDecoded_data() { bothClients_data(); }
    void aReplyIsDecoded()
    {
        QFETCH(int, client);
        auto t
            = transport(Client(client), m_server.address(), target(), call("Sum", R"({"nums": [1, 2, 3, 1000000]})"));
        const SingleCallResult r = sendOnce(*t, 10s);
        QVERIFY2(r.status == CallStatus::Ok, r.errorMessage.c_str());
        QCOMPARE(r.replies.size(), size_t(1));
        QVERIFY2(r.replies[0].contains("\"1000006\""), r.replies[0].constData());
        QVERIFY(r.bytesSent > 0 && r.bytesReceived > 0);
    }

    void aLargeRequestArrivesByteForByte_data() { bothClients_data(); }
    void aLargeRequestArrivesByteForByte()
    {
        // 1 MiB and 17 bytes, no two 16 KiB DATA frames alike, echoed back: the request's frames are written from
        // the body where it is (h2grpc lends it to the write, between the copied frame headers), in order.
        QFETCH(int, client);
        QByteArray payload(1024 * 1024 + 17, Qt::Uninitialized);
        for (qsizetype i = 0; i < payload.size(); ++i)
            payload[i] = static_cast<char>((i * 7 + i / 16384) & 0xff);
        const QByteArray json = "{\"payload\": \"" + payload.toBase64() + "\"}";
        auto t = transport(Client(client), m_server.address(), target(), call("Echo", json));
        for (int i = 0; i < 3; ++i) { // the same body lent to three calls in a row
            const SingleCallResult r = sendOnce(*t, 10s);
            QVERIFY2(r.status == CallStatus::Ok, r.errorMessage.c_str());
            QCOMPARE(r.replies.size(), size_t(1));
            const QByteArray echoed = QByteArray::fromBase64(
                QJsonDocument::fromJson(r.replies[0]).object().value(QStringLiteral("payload")).toString().toLatin1());
            QCOMPARE(echoed.size(), payload.size());
            QVERIFY(echoed == payload);
        }
    }

    void bothClientsCountTheSameBytes()
    {
        // Message bytes, as the run reports them: the same whichever client carried the call.
        const GrpcCall c = call("Echo", R"({"payload": "aGVsbG8gd29ybGQ=", "responseSize": 1000})");
        auto viaGrpc = transport(GrpcCpp, m_server.address(), target(), c);
        auto viaH2 = transport(H2, m_server.address(), target(), c);
        const SingleCallResult a = sendOnce(*viaGrpc, 10s);
        const SingleCallResult b = sendOnce(*viaH2, 10s);
        QVERIFY(a.status == CallStatus::Ok && b.status == CallStatus::Ok);
        QCOMPARE(b.bytesSent, a.bytesSent);
        QCOMPARE(b.bytesReceived, a.bytesReceived);
        QVERIFY(b.bytesReceived >= 1000);
    }

    void manyCallsInFlightOnOneConnection_data() { bothClients_data(); }
    void manyCallsInFlightOnOneConnection()
    {
        QFETCH(int, client);
        // Each call waits 50 ms at the server: 400 calls one after the other would take 20 s; 50 at a time on the one
        // connection, about 0.4 s. The bound tells the two apart with a wide margin (a sanitizer build, a busy
        // machine): it checks that calls overlap, not how fast they are.
        const GrpcCall c = call("Echo", R"({"payload": "aGVsbG8=", "delayUs": 50000})");
        LoadEngine engine;
        LoadPlan plan;
        plan.concurrency = 50;
        plan.totalCalls = 400;
        QString error;
        QVERIFY2(
            engine.start(transport(Client(client), m_server.address(), target(), c), plan, &error), qPrintable(error));
        QVERIFY(engine.waitForFinished(60s));
        const RunSnapshot s = engine.snapshot();
        QCOMPARE(s.callsOk(), 400ULL);
        QCOMPARE(s.callsFailed(), 0ULL);
        QVERIFY2(s.elapsed < 5s, qPrintable(QString::number(s.elapsed.count())));
        QVERIFY2(s.latency.percentile(50) < 1'000'000'000ULL, "no call waited behind the others");
    }

    void bigMessagesBothWays_data() { bothClients_data(); }
    void bigMessagesBothWays()
    {
        QFETCH(int, client);
        // 10 MiB up and 10 MiB back: past HTTP/2's 64 KiB default window many times over.
        const GrpcCall big = call("Echo", R"({"responseSize": 10485760})", { QStringLiteral("payload=10MiB") });
        GrpcTarget t = target(20s);
        t.maxReceiveBytes = 16 * 1024 * 1024;
        t.maxSendBytes = 16 * 1024 * 1024;
        auto made = transport(Client(client), m_server.address(), t, big);
        SingleCallResult r = sendOnce(*made, 30s);
        QVERIFY2(r.status == CallStatus::Ok, r.errorMessage.c_str());
        QVERIFY(r.bytesReceived >= 10 * 1024 * 1024);
        QVERIFY(r.bytesSent >= 10 * 1024 * 1024);
        // The default receive limit (4 MiB) refuses the same reply, as gRPC does.
        made = transport(Client(client), m_server.address(), target(20s), big);
        r = sendOnce(*made, 30s);
        QCOMPARE(r.status, int(CallStatus::ResourceExhausted));
    }

    void aSmallWindowStillCarriesBigReplies()
    {
        // --http2-window at HTTP/2's smallest (64 KiB): a 2 MiB reply comes in many window updates, all of it.
        const GrpcCall big = call("Echo", R"({"responseSize": 2097152})");
        GrpcTarget t = target(20s);
        t.http2Window = 65535;
        auto made = transport(H2, m_server.address(), t, big);
        const SingleCallResult r = sendOnce(*made, 30s);
        QVERIFY2(r.status == CallStatus::Ok, r.errorMessage.c_str());
        QCOMPARE(r.bytesReceived, uint64_t(2097152 + 5)); // EchoResponse: the field's tag, a 4-byte length (2^21)
    }

    void deadlinesEndCallsAndTheConnectionGoesOn_data() { bothClients_data(); }
    void deadlinesEndCallsAndTheConnectionGoesOn()
    {
        QFETCH(int, client);
        const GrpcCall slow = call("Echo", R"({"delayUs": 300000})");
        auto made = transport(Client(client), m_server.address(), target(50ms), slow);
        const SingleCallResult r = sendOnce(*made, 5s);
        QCOMPARE(r.status, int(CallStatus::DeadlineExceeded));
        QVERIFY2(r.latency < 250ms, qPrintable(QString::number(r.latency.count())));
        // A load run on one connection where every other call is too slow: the fast ones all end OK.
        const GrpcCall mixed = call("Echo", R"([{"delayUs": 300000}, {"payload": "aGk="}])");
        LoadEngine engine;
        LoadPlan plan;
        plan.concurrency = 4;
        plan.totalCalls = 40;
        QString error;
        QVERIFY(engine.start(transport(Client(client), m_server.address(), target(50ms), mixed), plan, &error));
        QVERIFY(engine.waitForFinished(30s));
        const RunSnapshot s = engine.snapshot();
        QCOMPARE(s.callsOk(), 20ULL);
        QCOMPARE(s.statusCounts[CallStatus::DeadlineExceeded], 20ULL);
    }

    void statusesComeFromTheTrailers_data() { bothClients_data(); }
    void statusesComeFromTheTrailers()
    {
        QFETCH(int, client);
        // A method the server does not have: a trailers-only reply, UNIMPLEMENTED.
        GrpcCall missing = call("Echo", "{}");
        missing.methodPath = "/rpcscope.bench.v1.Bench/NoSuchMethod";
        auto made = transport(Client(client), m_server.address(), target(), missing);
        const SingleCallResult r = sendOnce(*made, 5s);
        QCOMPARE(r.status, int(CallStatus::Unimplemented));
    }

    void nothingListeningIsUnavailable_data() { bothClients_data(); }
    void nothingListeningIsUnavailable()
    {
        QFETCH(int, client);
        QTcpServer probe;
        QVERIFY(probe.listen(QHostAddress::LocalHost, 0));
        const QString address = QStringLiteral("127.0.0.1:%1").arg(probe.serverPort());
        probe.close();
        auto made = transport(Client(client), address, target(2s), call("Sum", "{}"));
        const SingleCallResult r = sendOnce(*made, 5s);
        QCOMPARE(r.status, int(CallStatus::Unavailable));
    }

    void aServerThatNeverAnswersTheHandshakeHitsTheDeadline_data() { bothClients_data(); }
    void aServerThatNeverAnswersTheHandshakeHitsTheDeadline()
    {
        QFETCH(int, client);
        // Accepts the connection and says nothing: no HTTP/2 settings ever come back.
        QTcpServer silent;
        QVERIFY(silent.listen(QHostAddress::LocalHost, 0));
        const QString address = QStringLiteral("127.0.0.1:%1").arg(silent.serverPort());
        auto made = transport(Client(client), address, target(300ms), call("Sum", "{}"));
        const SingleCallResult r = sendOnce(*made, 5s);
        QVERIFY2(r.answered, "the call's own deadline ended it, not sendOnce's wait");
        QCOMPARE(r.status, int(CallStatus::DeadlineExceeded));
    }

    void aConnectionThatNeverCompletesHitsTheDeadline_data() { bothClients_data(); }
    void aConnectionThatNeverCompletesHitsTheDeadline()
    {
        QFETCH(int, client);
        // A listening socket whose accept queue is full: the kernel drops further SYNs, so a connect hangs (on
        // loopback, without leaving this machine). The call waits for its connection and must still time out.
        const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in address {};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        QVERIFY(::bind(listener, reinterpret_cast<sockaddr *>(&address), sizeof address) == 0);
        QVERIFY(::listen(listener, 0) == 0);
        socklen_t length = sizeof address;
        ::getsockname(listener, reinterpret_cast<sockaddr *>(&address), &length);
        std::vector<int> fillers;
        for (int i = 0; i < 4; ++i) {
            const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
            ::connect(s, reinterpret_cast<sockaddr *>(&address), sizeof address);
            fillers.push_back(s);
        }
        // The first filler's handshake done, the accept queue (listen(0): one connection) is full and further SYNs
        // are dropped.
        pollfd first { fillers.front(), POLLOUT, 0 };
        QCOMPARE(::poll(&first, 1, 5000), 1);
        const QString target = QStringLiteral("127.0.0.1:%1").arg(ntohs(address.sin_port));
        auto made = transport(Client(client), target, this->target(300ms), call("Sum", "{}"));
        const SingleCallResult r = sendOnce(*made, 5s);
        for (int s : fillers)
            ::close(s);
        ::close(listener);
        QVERIFY2(r.answered, "the call's own deadline ended it, not sendOnce's wait");
        QVERIFY2(r.status == CallStatus::DeadlineExceeded || r.status == CallStatus::Unavailable,
            qPrintable(QStringLiteral("%1 %2").arg(r.status).arg(QString::fromStdString(r.errorMessage))));
        QVERIFY2(r.latency < 2s, qPrintable(QString::number(r.latency.count())));
    }
};

QTEST_GUILESS_MAIN(TestH2Grpc)
#include "tst_h2grpc.moc"
