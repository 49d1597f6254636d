// The commands that send load over several targets, in process against built-in servers on 127.0.0.1:0 started
// here: matrix (a table of transports x codecs) and ab (two targets in alternating blocks, with a verdict). The
// process tests (tst_cli) keep --builtin, which starts the servers as child processes of rpcscope-cli.
#include "cli/abcommand.h"
#include "cli/cliapp.h"
#include "cli/matrixcommand.h"

#include "cliprinted.h"
#include "server/builtingrpcserver.h"
#include "server/builtinhttpserver.h"
#include "store/runstore.h"

#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

using namespace rpcscope;
using namespace rpcscope::cli;

namespace {

Printed matrix(const QStringList &arguments)
{
    return runPrinted(matrixCommand, QStringLiteral("matrix"), arguments);
}

Printed ab(const QStringList &arguments)
{
    return runPrinted(abCommand, QStringLiteral("ab"), arguments);
}

const QString kEcho = QStringLiteral("rpcscope.bench.v1.Bench/Echo");

/// The table's row for @p label ("grpc/protobuf"), split on runs of spaces; empty when there is none.
QStringList rowOf(const QString &table, const QString &label)
{
    for (const QString &line : table.split(u'\n')) {
        // Columns are two spaces apart; a value holds at most one ("12.3 us").
        const QStringList cells = line.split(QRegularExpression(QStringLiteral(" {2,}")), Qt::SkipEmptyParts);
        if (cells.size() > 1 && cells.at(1).startsWith(label))
            return cells;
    }
    return {};
}

} // namespace

class TestCliLoad : public QObject {
    Q_OBJECT

    BuiltinGrpcServer m_grpc;
    BuiltinGrpcServer m_slowGrpc; ///< every reply 2 ms later
    BuiltinHttpServer m_http;
    BuiltinMsgpackServer m_msgpack;

private Q_SLOTS:
    void initTestCase()
    {
        // As rpcscope-cli's main does first: a run waits for SIGINT/SIGTERM on a thread of its own (sigwait).
        blockTerminationSignals();
        QString error;
        QVERIFY2(m_grpc.start(QStringLiteral("127.0.0.1"), 0, 1, &error), qPrintable(error));
        m_slowGrpc.setExtraDelay(std::chrono::milliseconds(2));
        QVERIFY2(m_slowGrpc.start(QStringLiteral("127.0.0.1"), 0, 1, &error), qPrintable(error));
        QVERIFY2(m_http.start(QStringLiteral("127.0.0.1"), 0, 1, &error), qPrintable(error));
        QVERIFY2(m_msgpack.start(QStringLiteral("127.0.0.1"), 0, 1, &error), qPrintable(error));
    }

    void matrixPrintsARowPerCell()
    {
        // Addresses per transport; http and msgpack-rpc have no reflection, so the schema is the bench proto.
        const QString protoDir = QStringLiteral(RPCSCOPE_SOURCE_DIR "/proto");
        const Printed p = matrix({ QStringLiteral("--grpc"), m_grpc.address(), QStringLiteral("--http=") + m_http.url(),
            QStringLiteral("--msgpack"), m_msgpack.address(), QStringLiteral("--proto"),
            protoDir + QStringLiteral("/rpcscope/bench/v1/bench.proto"), QStringLiteral("-i"), protoDir,
            QStringLiteral("--call"), kEcho, QStringLiteral("-d"), QStringLiteral("{\"payload\":\"aGk=\"}"),
            QStringLiteral("-n"), QStringLiteral("40"), QStringLiteral("-c"), QStringLiteral("2") });
        QVERIFY2(p.code == ExitOk, qPrintable(p.err));
        // grpc/protobuf, http x 3 codecs, msgpack/msgpack, then the no-RPC baseline x 3 codecs.
        const QStringList labels { QStringLiteral("grpc/protobuf"), QStringLiteral("http/protobuf"),
            QStringLiteral("http/json"), QStringLiteral("http/msgpack"), QStringLiteral("msgpack/msgpack"),
            QStringLiteral("none/protobuf (c=1)"), QStringLiteral("none/json (c=1)"),
            QStringLiteral("none/msgpack (c=1)") };
        const QStringList lines = p.out.split(u'\n');
        QVERIFY2(lines.first().startsWith(QStringLiteral("payload")), qPrintable(p.out));
        for (qsizetype i = 0; i < labels.size(); ++i) {
            const QStringList row = rowOf(p.out, labels.at(i));
            QVERIFY2(row.size() == 11, qPrintable(labels.at(i) + QStringLiteral(": ") + row.join(u'|')));
            QCOMPARE(row.at(0), QStringLiteral("(as given)"));
            QVERIFY2(lines.at(i + 1).contains(labels.at(i)), qPrintable(p.out)); // in this order
            QVERIFY2(row.at(2).endsWith(QStringLiteral("s")) && row.at(2) != u"0 ns", qPrintable(row.join(u'|')));
            QCOMPARE(row.at(10), QStringLiteral("0")); // errors
            // Every networked cell has its baseline's share; the baseline itself has none.
            const bool baseline = labels.at(i).startsWith(QStringLiteral("none"));
            QVERIFY2(row.at(9).endsWith(u'%') != baseline, qPrintable(row.join(u'|')));
        }
        // Each cell told on stderr as it starts.
        QCOMPARE(p.err.count(QStringLiteral("rpcscope-cli matrix: ")), labels.size());
    }

    void matrixShowsAFailedCellAsUnknown()
    {
        // The gRPC server answers every call UNAVAILABLE: that cell has no latency to show, and says "-", not 0.
        const Printed p = matrix({ QStringLiteral("--transports"), QStringLiteral("grpc,none"),
            QStringLiteral("--codecs"), QStringLiteral("protobuf"), QStringLiteral("--grpc"), m_grpc.address(),
            QStringLiteral("--call"), kEcho, QStringLiteral("-m"), QStringLiteral("{\"rpcscope-status\":\"14\"}"),
            QStringLiteral("-n"), QStringLiteral("20"), QStringLiteral("-c"), QStringLiteral("1") });
        QVERIFY2(p.code == ExitOk, qPrintable(p.err));
        const QStringList failed = rowOf(p.out, QStringLiteral("grpc/protobuf"));
        QVERIFY2(failed.size() == 11, qPrintable(p.out));
        QCOMPARE(failed.at(2), QStringLiteral("-")); // mean
        QCOMPARE(failed.at(3), QStringLiteral("-")); // p50
        QCOMPARE(failed.at(4), QStringLiteral("-")); // p99
        QCOMPARE(failed.at(9), QStringLiteral("-")); // codec share
        QCOMPARE(failed.at(10), QStringLiteral("20")); // errors
        const QStringList baseline = rowOf(p.out, QStringLiteral("none/protobuf"));
        QVERIFY2(baseline.size() == 11 && baseline.at(2) != u"-" && baseline.at(10) == u"0", qPrintable(p.out));

        // As CSV: the unknown fields are empty.
        const Printed csv = matrix(
            { QStringLiteral("--transports"), QStringLiteral("grpc"), QStringLiteral("--grpc"), m_grpc.address(),
                QStringLiteral("--call"), kEcho, QStringLiteral("-m"), QStringLiteral("{\"rpcscope-status\":\"14\"}"),
                QStringLiteral("-n"), QStringLiteral("20"), QStringLiteral("--format"), QStringLiteral("csv") });
        QVERIFY2(csv.code == ExitOk, qPrintable(csv.err));
        const QStringList fields = csv.out.split(u'\n').value(1).split(u',');
        QVERIFY2(fields.size() == 15, qPrintable(csv.out));
        QCOMPARE(fields.at(3), QStringLiteral("20")); // calls
        QCOMPARE(fields.at(4), QStringLiteral("20")); // errors
        for (int i : { 5, 6, 7, 8 }) // mean, p50, p90, p99
            QVERIFY2(fields.at(i).isEmpty(), qPrintable(csv.out));
    }

    void matrixRefusesWhatItCannotRun_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        const QStringList echo { QStringLiteral("--call"), kEcho };
        QTest::newRow("no target") << echo + QStringList { QStringLiteral("--transports"), QStringLiteral("msgpack") }
                                   << QStringLiteral("no target for msgpack: give --msgpack ADDRESS or --builtin");
        QTest::newRow("bad transport") << echo
                + QStringList { QStringLiteral("--transports"), QStringLiteral("grpc,quic") }
                                       << QStringLiteral("--transports: \"quic\" is not grpc, http, msgpack or none");
        QTest::newRow("bad codec") << echo + QStringList { QStringLiteral("--codecs"), QStringLiteral("xml") }
                                   << QStringLiteral("--codecs: \"xml\" is not protobuf, json or msgpack");
        QTest::newRow("nothing carried") << echo
                + QStringList { QStringLiteral("--transports"), QStringLiteral("msgpack"), QStringLiteral("--codecs"),
                      QStringLiteral("json"), QStringLiteral("--msgpack"), QStringLiteral("127.0.0.1:1") }
                                         << QStringLiteral("no transport in --transports carries a codec");
        QTest::newRow("one transport") << echo + QStringList { QStringLiteral("--transport"), QStringLiteral("grpc") }
                                       << QStringLiteral("--transport: the matrix sets it per cell");
        QTest::newRow("one target") << echo
                + QStringList { QStringLiteral("--transports"), QStringLiteral("none"), QStringLiteral("127.0.0.1:1") }
                                    << QStringLiteral("give targets per transport");
        QTest::newRow("format") << echo + QStringList { QStringLiteral("--format"), QStringLiteral("xml") }
                                << QStringLiteral("--format: \"xml\" is not text or csv");
        QTest::newRow("export") << echo
                + QStringList { QStringLiteral("--transports"), QStringLiteral("none"), QStringLiteral("-O"),
                      QStringLiteral("csv"), QStringLiteral("-o"), QStringLiteral("x.csv") }
                                << QStringLiteral("-O/-o are for run; matrix prints its own report");
    }
    void matrixRefusesWhatItCannotRun()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const Printed p = matrix(args);
        QCOMPARE(p.code, int(ExitUsage));
        QVERIFY2(
            p.err.startsWith(QStringLiteral("rpcscope-cli matrix: ")) && p.err.contains(message), qPrintable(p.err));
        QVERIFY(p.out.isEmpty());
    }

    void abFlagsTheSlowerTarget_data()
    {
        QTest::addColumn<bool>("bSlower");
        QTest::newRow("B slower") << true;
        QTest::newRow("A slower") << false;
    }
    void abFlagsTheSlowerTarget()
    {
        // 2 ms more per call on one side: far above what a loaded machine adds to a local Echo by itself.
        QFETCH(bool, bSlower);
        QTemporaryDir dir;
        const QString db = dir.filePath(QStringLiteral("runs.sqlite"));
        const QString a = bSlower ? m_grpc.address() : m_slowGrpc.address();
        const QString b = bSlower ? m_slowGrpc.address() : m_grpc.address();
        const Printed p = ab({ QStringLiteral("--a"), a, QStringLiteral("--b"), b, QStringLiteral("--call"), kEcho,
            QStringLiteral("-n"), QStringLiteral("1000"), QStringLiteral("-c"), QStringLiteral("2"),
            QStringLiteral("--db"), db, QStringLiteral("--label"), QStringLiteral("in-process") });
        QCOMPARE(p.code, int(bSlower ? ExitRegression : ExitOk));
        QVERIFY2(p.out.startsWith(QStringLiteral("A: %1\nB: %2\n10 rounds, 100 calls per block, servers not restarted "
                                                 "(addresses), connection kept across blocks\n")
                                      .arg(a, b)),
            qPrintable(p.out));
        // Judged on the blocks: 100 calls each are enough for their p50 (and p90), not for the tails.
        QVERIFY2(QRegularExpression(
                     bSlower ? QStringLiteral("\\np50 [^\\n]*regression") : QStringLiteral("\\np50 [^\\n]*improvement"))
                     .match(p.out)
                     .hasMatch(),
            qPrintable(p.out));
        QVERIFY2(p.err.contains(QStringLiteral("round 10 B: 100 calls")), qPrintable(p.err));
        QVERIFY2(p.err.contains(QStringLiteral("Saved as runs #1 (A) and #2 (B) in ") + db), qPrintable(p.err));
        // Both sides are in the history, each with its side's label and target, every call counted.
        RunStore store;
        QString error;
        QVERIFY2(store.open(db, &error), qPrintable(error));
        for (const qint64 id : { 1, 2 }) {
            const std::optional<RunRecord> run = store.load(id, &error);
            QVERIFY2(run, qPrintable(error));
            QCOMPARE(run->labels,
                (QStringList { id == 1 ? QStringLiteral("A") : QStringLiteral("B"), QStringLiteral("in-process") }));
            QCOMPARE(run->target, id == 1 ? a : b);
            QCOMPARE(run->snapshot.callsCompleted(), uint64_t(1000));
            QCOMPARE(run->status, QStringLiteral("finished"));
        }
    }

    void abRefusesWhatItCannotCompare_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        const QStringList run { QStringLiteral("--call"), kEcho, QStringLiteral("-n"), QStringLiteral("40"),
            QStringLiteral("-c"), QStringLiteral("1"), QStringLiteral("--no-save") };
        const QStringList both { QStringLiteral("--a"), QStringLiteral("A_ADDRESS"), QStringLiteral("--b"),
            QStringLiteral("B_ADDRESS") };
        QTest::newRow("one side") << QStringList { QStringLiteral("--a"), QStringLiteral("A_ADDRESS") } + run
                                  << QStringLiteral("--a and --b are required");
        QTest::newRow("no server") << both + run + QStringList { QStringLiteral("--transport"), QStringLiteral("none") }
                                   << QStringLiteral("--transport none calls no server");
        QTest::newRow("builtin flag") << both + run + QStringList { QStringLiteral("--builtin") }
                                      << QStringLiteral("--builtin: say --a builtin or --b builtin instead");
        QTest::newRow("a target") << both + run + QStringList { QStringLiteral("127.0.0.1:1") }
                                  << QStringLiteral("give the targets as --a and --b, not \"127.0.0.1:1\"");
        QTest::newRow("threshold") << both + run + QStringList { QStringLiteral("--threshold"), QStringLiteral("lots") }
                                   << QStringLiteral("--threshold: ");
        QTest::newRow("connection") << both + run
                + QStringList { QStringLiteral("--connection"), QStringLiteral("pooled") }
                                    << QStringLiteral("--connection: \"pooled\" is not kept or per-block");
        QTest::newRow("env on an address")
            << both + run + QStringList { QStringLiteral("--a-env"), QStringLiteral("X=1") }
            << QStringLiteral("--a-env/--a-dir are for commands");
        QTest::newRow("block by time in a counted run")
            << both + run + QStringList { QStringLiteral("--block"), QStringLiteral("1s") }
            << QStringLiteral("--block: the run is counted (-n), so give a number of calls (got \"1s\")");
        QTest::newRow("more restarts than rounds")
            << both + run + QStringList { QStringLiteral("--restarts"), QStringLiteral("50") }
            << QStringLiteral("--restarts 50: the run has only 10 rounds");
        QTest::newRow("single-run output")
            << both + run + QStringList { QStringLiteral("--check"), QStringLiteral("errors==0") }
            << QStringLiteral("--check is for run");
    }
    void abRefusesWhatItCannotCompare()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        args.replaceInStrings(QStringLiteral("A_ADDRESS"), m_grpc.address());
        args.replaceInStrings(QStringLiteral("B_ADDRESS"), m_slowGrpc.address());
        const quint64 served = m_grpc.callsServed() + m_slowGrpc.callsServed();
        const Printed p = ab(args);
        QCOMPARE(p.code, int(ExitUsage));
        // (A loaded machine is warned about first, on lines of their own.)
        QVERIFY2(p.err.contains(QStringLiteral("rpcscope-cli ab: ") + message), qPrintable(p.err));
        QVERIFY(p.out.isEmpty());
        QCOMPARE(m_grpc.callsServed() + m_slowGrpc.callsServed(), served); // refused before any load
    }

    void cleanupTestCase()
    {
        m_grpc.stop();
        m_slowGrpc.stop();
        m_http.stop();
        m_msgpack.stop();
    }
};

QTEST_GUILESS_MAIN(TestCliLoad)
#include "tst_cliload.moc"
