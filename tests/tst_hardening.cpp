// rpcscope-cli against hostile input, as a careless colleague's shared file or a hostile peer would give it: metadata
// that would inject headers, outputs that would replace devices, endless or nested inputs, foreign databases and text
// that would drive the terminal. Each test runs the real binary on loopback and checks what it did and said.
#include "cliprocess.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>
#include <sys/sysmacros.h>

class TestHardening : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

    static CliResult cli(const QStringList &arguments, int timeoutMs = 60000)
    {
        return runCliProcess(arguments, timeoutMs);
    }

    QString write(const QString &name, const QByteArray &content)
    {
        const QString path = m_dir.filePath(name);
        QFile file(path);
        if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate))
            return {};
        file.write(content);
        return path;
    }

    /// Everything the connections to @p server sent, once the client is gone.
    static QByteArray received(QTcpServer &server)
    {
        QByteArray all;
        QTest::qWait(50);
        while (server.hasPendingConnections() || server.waitForNewConnection(100)) {
            QTcpSocket *socket = server.nextPendingConnection();
            if (!socket)
                break;
            socket->waitForReadyRead(200);
            all += socket->readAll();
            delete socket;
        }
        return all;
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void metadataCannotInjectHeadersOrAbortGrpc()
    {
        // A listener that records what arrives: an HTTP request with a smuggled second request must never reach it.
        QTcpServer listener;
        QVERIFY(listener.listen(QHostAddress::LocalHost, 0));
        const QString url = QStringLiteral("http://127.0.0.1:%1/rpc").arg(listener.serverPort());
        const QString smuggle = QStringLiteral("v\r\nContent-Length: 0\r\n\r\nGET /admin HTTP/1.1\r\nX-Pad: ");
        const QStringList http { QStringLiteral("run"), url, QStringLiteral("--transport"), QStringLiteral("http"),
            QStringLiteral("--call"), QStringLiteral("rpcscope.bench.v1.Bench/Sum"), QStringLiteral("-n"),
            QStringLiteral("1"), QStringLiteral("--timeout"), QStringLiteral("1s") };
        const QString metadataJson = QString::fromUtf8(
            QJsonDocument(QJsonObject { { QStringLiteral("x-user"), smuggle } }).toJson(QJsonDocument::Compact));
        const CliResult flag = cli(http + QStringList { QStringLiteral("-m"), metadataJson });
        QCOMPARE(flag.exitCode, 2);
        QVERIFY2(flag.err.contains(QStringLiteral("\"x-user\"")) && flag.err.contains(QStringLiteral("carriage")),
            qPrintable(flag.err));
        // The same from a shared document, which needs no --trust to carry metadata.
        QJsonObject document { { QStringLiteral("rpcscope_scenario"), 1 }, { QStringLiteral("target"), url },
            { QStringLiteral("transport"), QStringLiteral("http") },
            { QStringLiteral("method"), QStringLiteral("rpcscope.bench.v1.Bench/Sum") },
            { QStringLiteral("metadata"), QJsonObject { { QStringLiteral("x-user"), smuggle } } },
            { QStringLiteral("load"), QJsonObject { { QStringLiteral("calls"), 1 } } } };
        const QString path = write(QStringLiteral("smuggle.rpcscope.json"), QJsonDocument(document).toJson());
        const CliResult shared = cli({ QStringLiteral("run"), QStringLiteral("--scenario"), path });
        QCOMPARE(shared.exitCode, 2);
        QVERIFY2(shared.err.contains(QStringLiteral("metadata")) && shared.err.contains(path), qPrintable(shared.err));
        // A bare LF, and the framing headers the transport writes itself.
        for (const QString &json :
            { QStringLiteral("{\"x-a\":\"1\\nX-B: 2\"}"), QStringLiteral(R"({"content-length":"0"})"),
                QStringLiteral(R"({"transfer-encoding":"chunked"})"), QStringLiteral(R"({"x a":"1"})") }) {
            const CliResult r = cli(http + QStringList { QStringLiteral("-m"), json });
            QVERIFY2(r.exitCode == 2 && r.err.contains(QStringLiteral("metadata key")), qPrintable(json + r.err));
        }
        const QByteArray arrived = received(listener);
        QVERIFY2(!arrived.contains("/admin") && arrived.isEmpty(), arrived.constData());

        // gRPC C++ aborts the process on a value that is not printable ASCII: refused first, for both gRPC clients.
        for (const char *transport : { "grpc", "h2grpc" }) {
            for (const QString &json :
                { QStringLiteral(R"({"x-user":"café"})"), QStringLiteral("{\"x-user\":\"a\\tb\"}"),
                    QStringLiteral("{\"x-user\":\"a\\nb\"}"), QStringLiteral(R"({"X_Ü":"1"})") }) {
                const CliResult r = cli({ QStringLiteral("run"), QStringLiteral("--builtin"),
                    QStringLiteral("--transport"), QLatin1String(transport), QStringLiteral("--call"),
                    QStringLiteral("rpcscope.bench.v1.Bench/Sum"), QStringLiteral("-n"), QStringLiteral("1"),
                    QStringLiteral("-m"), json });
                QVERIFY2(r.exitCode == 2,
                    qPrintable(QStringLiteral("%1 %2: exit %3 %4")
                                   .arg(QLatin1String(transport), json, QString::number(r.exitCode), r.err)));
                QVERIFY2(r.err.contains(QStringLiteral("metadata")), qPrintable(r.err));
            }
        }
        // What gRPC allows still goes: a "-bin" key carries bytes, any printable ASCII is a value.
        const CliResult binary = cli({ QStringLiteral("run"), QStringLiteral("--builtin"), QStringLiteral("--call"),
            QStringLiteral("rpcscope.bench.v1.Bench/Sum"), QStringLiteral("-n"), QStringLiteral("2"),
            QStringLiteral("-m"),
            QStringLiteral("{\"x-trace-bin\":\"\\u0001\\u0002é\",\"x-text\":\"a b;c=\\\"d\\\"\"}") });
        QVERIFY2(binary.exitCode == 0, qPrintable(binary.err));
    }
};

QTEST_GUILESS_MAIN(TestHardening)
#include "tst_hardening.moc"
