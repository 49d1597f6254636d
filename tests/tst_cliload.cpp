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
#include <cmath>

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
            QStringLiteral("none/protobuf"), QStringLiteral("none/json"), QStringLiteral("none/msgpack") };
        const QStringList lines = p.out.split(u'\n');
        QVERIFY2(lines.first().startsWith(QStringLiteral("payload")), qPrintable(p.out));
        for (qsizetype i = 0; i < labels.size(); ++i) {
            const QStringList row = rowOf(p.out, labels.at(i));
            QVERIFY2(row.size() == 12, qPrintable(labels.at(i) + QStringLiteral(": ") + row.join(u'|')));
            QCOMPARE(row.at(0), QStringLiteral("(as given)"));
            QVERIFY2(lines.at(i + 1).contains(labels.at(i)), qPrintable(p.out)); // in this order
            // The baseline runs with one caller.
            const bool baseline = labels.at(i).startsWith(QStringLiteral("none"));
            QCOMPARE(row.at(2), baseline ? QStringLiteral("1") : QStringLiteral("2")); // callers
            QVERIFY2(row.at(3).endsWith(QStringLiteral("s")) && row.at(3) != u"0 ns", qPrintable(row.join(u'|')));
            QCOMPARE(row.at(11), QStringLiteral("0")); // errors
            // Servers given by address are not known to use rpcscope's codecs: no codec share is claimed for
            // them (tst_cli's --builtin matrix has one).
            QCOMPARE(row.at(10), QStringLiteral("-"));
        }
        // Each cell told on stderr as it starts.
        QCOMPARE(p.err.count(QStringLiteral("rpcscope-cli matrix: ")), labels.size());
    }

    void matrixComparesTheTwoGrpcClients()
    {
        // gRPC C++'s client and rpcscope's own on bare HTTP/2, against the one --grpc server: a row each.
        const Printed p = matrix({ QStringLiteral("--grpc"), m_grpc.address(), QStringLiteral("--transports"),
            QStringLiteral("grpc,h2grpc"), QStringLiteral("--codecs"), QStringLiteral("protobuf"),
            QStringLiteral("--call"), kEcho, QStringLiteral("-d"), QStringLiteral("{\"payload\":\"aGk=\"}"),
            QStringLiteral("-n"), QStringLiteral("200"), QStringLiteral("-c"), QStringLiteral("4") });
        QVERIFY2(p.code == ExitOk, qPrintable(p.err));
        for (const QString &label : { QStringLiteral("grpc/protobuf"), QStringLiteral("h2grpc/protobuf") }) {
            const QStringList row = rowOf(p.out, label);
            QVERIFY2(row.size() == 12, qPrintable(label + QStringLiteral(": ") + p.out));
            QCOMPARE(row.at(11), QStringLiteral("0")); // errors
        }
    }

    void matrixListsGivenAgainAddUp()
    {
        // -c 1 -c 2 is -c 1,2, and --transports given twice adds up too: four cells, not the last flag's two.
        const Printed p = matrix({ QStringLiteral("--grpc"), m_grpc.address(), QStringLiteral("--transports"),
            QStringLiteral("grpc"), QStringLiteral("--transports"), QStringLiteral("h2grpc"),
            QStringLiteral("--codecs"), QStringLiteral("protobuf"), QStringLiteral("--call"), kEcho,
            QStringLiteral("-d"), QStringLiteral("{\"payload\":\"aGk=\"}"), QStringLiteral("-n"), QStringLiteral("20"),
            QStringLiteral("-c"), QStringLiteral("1"), QStringLiteral("-c"), QStringLiteral("2") });
        QVERIFY2(p.code == ExitOk, qPrintable(p.err));
        QStringList cells;
        for (const QString &line : p.out.split(u'\n')) {
            const QStringList columns = line.split(QRegularExpression(QStringLiteral(" +")), Qt::SkipEmptyParts);
            if (columns.size() > 4 && columns.at(0) == u"(as")
                cells << columns.at(2) + u' ' + columns.at(3);
        }
        QCOMPARE(cells,
            (QStringList { QStringLiteral("grpc/protobuf 1"), QStringLiteral("h2grpc/protobuf 1"),
                QStringLiteral("grpc/protobuf 2"), QStringLiteral("h2grpc/protobuf 2") }));
        // The same level twice is still refused.
        const Printed twice = matrix({ QStringLiteral("--grpc"), m_grpc.address(), QStringLiteral("--call"), kEcho,
            QStringLiteral("-c"), QStringLiteral("2"), QStringLiteral("-c"), QStringLiteral("2") });
        QCOMPARE(twice.code, int(ExitUsage));
        QVERIFY2(twice.err.contains(QStringLiteral("-c: 2 is given twice")), qPrintable(twice.err));
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
        QVERIFY2(failed.size() == 12, qPrintable(p.out));
        QCOMPARE(failed.at(3), QStringLiteral("-")); // mean
        QCOMPARE(failed.at(4), QStringLiteral("-")); // p50
        QCOMPARE(failed.at(5), QStringLiteral("-")); // p99
        QCOMPARE(failed.at(6), QStringLiteral("-")); // req/s: not the rate at which it failed
        QCOMPARE(failed.at(10), QStringLiteral("-")); // codec share
        QCOMPARE(failed.at(11), QStringLiteral("20")); // errors
        // And says so, with the error.
        QVERIFY2(
            p.out.contains(QStringLiteral("(as given) grpc/protobuf c=1: FAILED, no call ended OK (UNAVAILABLE: ")),
            qPrintable(p.out));
        const QStringList baseline = rowOf(p.out, QStringLiteral("none/protobuf"));
        QVERIFY2(baseline.size() == 12 && baseline.at(3) != u"-" && baseline.at(11) == u"0", qPrintable(p.out));

        // As CSV: the unknown fields are empty.
        const Printed csv = matrix(
            { QStringLiteral("--transports"), QStringLiteral("grpc"), QStringLiteral("--grpc"), m_grpc.address(),
                QStringLiteral("--call"), kEcho, QStringLiteral("-m"), QStringLiteral("{\"rpcscope-status\":\"14\"}"),
                QStringLiteral("-n"), QStringLiteral("20"), QStringLiteral("--format"), QStringLiteral("csv") });
        QVERIFY2(csv.code == ExitOk, qPrintable(csv.err));
        const QStringList fields = csv.out.split(u'\n').value(1).split(u',');
        QVERIFY2(fields.size() == 17, qPrintable(csv.out));
        QCOMPARE(fields.at(1), QStringLiteral("grpc/protobuf")); // stack
        QCOMPARE(fields.at(5), QStringLiteral("20")); // calls
        QCOMPARE(fields.at(6), QStringLiteral("20")); // errors
        for (int i : { 7, 8, 9, 10, 11 }) // mean, p50, p90, p99, requests/s
            QVERIFY2(fields.at(i).isEmpty(), qPrintable(csv.out));
    }

    void matrixComparesTheUsersStacks()
    {
        // The write-up's question in one command: three stacks, each with its own target (an HTTP URL with its
        // path, a msgpack-rpc method name), two payloads, two concurrency levels, each reply checked, every cell
        // saved.
        QTemporaryDir dir;
        const QString db = dir.filePath(QStringLiteral("runs.sqlite"));
        const QString sum = QStringLiteral("rpcscope.bench.v1.Bench/Sum");
        const QString protoDir = QStringLiteral(RPCSCOPE_SOURCE_DIR "/proto");
        const QStringList schema { QStringLiteral("--proto"),
            protoDir + QStringLiteral("/rpcscope/bench/v1/bench.proto"), QStringLiteral("-i"), protoDir };
        const Printed p = matrix(schema
            + QStringList { QStringLiteral("--call"), sum, QStringLiteral("--stack"),
                QStringLiteral("cpp-grpc=grpc@") + m_grpc.address(), QStringLiteral("--stack"),
                QStringLiteral("web=http/json@") + m_http.url() + QStringLiteral("/rpcscope.bench.v1.Bench/Sum"),
                QStringLiteral("--stack"),
                QStringLiteral("mp=msgpack@") + m_msgpack.address() + QStringLiteral(",method=Sum"),
                QStringLiteral("--stack"), QStringLiteral("codec=none/json"), QStringLiteral("--payloads"),
                QStringLiteral("nums=2;nums=1000"), QStringLiteral("-c"), QStringLiteral("1,8"), QStringLiteral("-n"),
                QStringLiteral("40"), QStringLiteral("--expect"), QStringLiteral("result>=3"), QStringLiteral("--db"),
                db, QStringLiteral("--label"), QStringLiteral("stacks") });
        QVERIFY2(p.code == ExitOk, qPrintable(p.err + p.out));
        QVERIFY2(p.code == ExitOk, qPrintable(p.err + p.out));
        // Per payload: 3 stacks x 2 levels, then the in-process one once, with one caller.
        const QStringList lines = p.out.split(u'\n');
        int rows = 0;
        for (const QString &payload : { QStringLiteral("nums=2"), QStringLiteral("nums=1000") }) {
            for (const QString &c : { QStringLiteral("1"), QStringLiteral("8") }) {
                for (const QString &stack : { QStringLiteral("cpp-grpc (grpc/protobuf)"),
                         QStringLiteral("web (http/json)"), QStringLiteral("mp (msgpack/msgpack)") }) {
                    ++rows;
                    const QStringList row
                        = lines.value(rows).split(QRegularExpression(QStringLiteral(" {2,}")), Qt::SkipEmptyParts);
                    QVERIFY2(row.size() == 12, qPrintable(lines.value(rows)));
                    QCOMPARE(row.at(0), payload);
                    QCOMPARE(row.at(1), stack);
                    QCOMPARE(row.at(2), c);
                    QVERIFY2(row.at(3) != u"-" && row.at(11) == u"0", qPrintable(lines.value(rows)));
                }
            }
            ++rows;
            QVERIFY2(lines.value(rows).startsWith(payload)
                    && lines.value(rows).contains(QStringLiteral("codec (none/json)")),
                qPrintable(p.out));
        }
        // Every cell saved, labelled so that any two can be compared later.
        RunStore store;
        QString error;
        QVERIFY2(store.open(db, &error, RunStore::OpenMode::ReadOnly), qPrintable(error));
        QCOMPARE(store.idsWithLabel(QStringLiteral("stacks"), &error).size(), size_t(14));
        QCOMPARE(store.idsWithLabel(QStringLiteral("stack:web"), &error).size(), size_t(4));
        QCOMPARE(store.idsWithLabel(QStringLiteral("c:8"), &error).size(), size_t(6));
        const std::vector<qint64> big = store.idsWithLabel(QStringLiteral("payload:nums=1000"), &error);
        QCOMPARE(big.size(), size_t(7));
        const auto web = store.load(store.idsWithLabel(QStringLiteral("stack:web"), &error).back(), &error);
        QVERIFY2(web, qPrintable(error));
        QCOMPARE(web->transport, QStringLiteral("http"));
        QCOMPARE(web->codec, QStringLiteral("json"));
        QVERIFY2(web->labels.join(u' ').contains(QStringLiteral("matrix:")), qPrintable(web->labels.join(u' ')));
        QVERIFY2(web->snapshot.repliesChecked > 0 && web->snapshot.callsOk() == 40, qPrintable(web->name));
        QVERIFY2(p.err.contains(QStringLiteral("Saved 14 cells as runs #")), qPrintable(p.err));

        // A stack that cannot be reached is shown failed, and the others still run.
        const Printed failing = matrix(schema
            + QStringList { QStringLiteral("--call"), sum, QStringLiteral("--stack"),
                QStringLiteral("ok=grpc@") + m_grpc.address(), QStringLiteral("--stack"),
                QStringLiteral("down=msgpack@127.0.0.1:1"), QStringLiteral("-n"), QStringLiteral("10"),
                QStringLiteral("-c"), QStringLiteral("2") });
        QVERIFY2(failing.code == ExitOk, qPrintable(failing.err + failing.out));
        const QStringList down = rowOf(failing.out, QStringLiteral("down"));
        QVERIFY2(down.size() == 12 && down.at(3) == u"-" && down.at(6) == u"-", qPrintable(failing.out));
        QVERIFY2(failing.out.contains(QStringLiteral("down (msgpack/msgpack) c=2: FAILED")), qPrintable(failing.out));
        const QStringList ok = rowOf(failing.out, QStringLiteral("ok"));
        QVERIFY2(ok.size() == 12 && ok.at(3) != u"-" && ok.at(11) == u"0", qPrintable(failing.out));

        // The same as markdown, for a wiki page or an issue: a table with the failed cell's "-" and its error below.
        const Printed markdown = matrix(schema
            + QStringList { QStringLiteral("--call"), sum, QStringLiteral("--stack"),
                QStringLiteral("ok=grpc@") + m_grpc.address(), QStringLiteral("--stack"),
                QStringLiteral("down=msgpack@127.0.0.1:1"), QStringLiteral("--payloads"), QStringLiteral("nums=3"),
                QStringLiteral("-n"), QStringLiteral("10"), QStringLiteral("-c"), QStringLiteral("2"),
                QStringLiteral("--format"), QStringLiteral("markdown") });
        QVERIFY2(markdown.code == ExitOk, qPrintable(markdown.err + markdown.out));
        const QStringList md = markdown.out.split(u'\n');
        QCOMPARE(md.value(0), QStringLiteral("## rpcscope.bench.v1.Bench/Sum: 2 cells"));
        QVERIFY2(md.value(2).startsWith(QStringLiteral("| payload | stack | c | mean |")), qPrintable(markdown.out));
        QVERIFY2(md.value(3).startsWith(QStringLiteral("| :-- | :-- | --: |")), qPrintable(markdown.out));
        const QRegularExpression unescapedBar(QStringLiteral("(?<!\\\\)\\|"));
        for (int line = 2; line <= 5; ++line) // every row as many cells as the header
            QVERIFY2(md.value(line).count(unescapedBar) == 13, qPrintable(md.value(line)));
        QVERIFY2(
            md.value(4).startsWith(QStringLiteral("| nums=3 | ok (grpc/protobuf) | 2 | ")), qPrintable(markdown.out));
        QVERIFY2(md.value(5).startsWith(QStringLiteral("| nums=3 | down (msgpack/msgpack) | 2 | - | - | - | - |")),
            qPrintable(markdown.out));
        QVERIFY2(markdown.out.contains(QStringLiteral("- nums=3 down (msgpack/msgpack) c=2: **failed**, ")),
            qPrintable(markdown.out));
    }

    void matrixTakesTheUsersOwnCodecBaseline()
    {
        // A baseline command of the user's: run once per payload ({payload} given to it), its time per call over
        // each cell's mean is the stack's codec share, whatever server the stack has.
        const QString sum = QStringLiteral("rpcscope.bench.v1.Bench/Sum");
        const QString protoDir = QStringLiteral(RPCSCOPE_SOURCE_DIR "/proto");
        const QString baseline = QStringLiteral(
            "/usr/bin/python3 -c \"import sys; print('10us' if sys.argv[1] == 'nums=2' else 20000)\" {payload}");
        const Printed p = matrix({ QStringLiteral("--proto"),
            protoDir + QStringLiteral("/rpcscope/bench/v1/bench.proto"), QStringLiteral("--call"), sum,
            QStringLiteral("--stack"),
            QStringLiteral("mine=grpc@") + m_grpc.address() + QStringLiteral(",baseline=") + baseline,
            QStringLiteral("--stack"),
            QStringLiteral("broken=grpc@") + m_grpc.address()
                + QStringLiteral(",baseline=/usr/bin/python3 -c \"print('soon')\""),
            QStringLiteral("--payloads"), QStringLiteral("nums=2;nums=3"), QStringLiteral("-n"), QStringLiteral("30"),
            QStringLiteral("-c"), QStringLiteral("1"), QStringLiteral("--format"), QStringLiteral("csv") });
        QVERIFY2(p.code == ExitOk, qPrintable(p.err + p.out));
        const QStringList rows = p.out.split(u'\n', Qt::SkipEmptyParts);
        QCOMPARE(rows.size(), 5);
        const QStringList header = rows.at(0).split(u',');
        const qsizetype meanColumn = header.indexOf(QStringLiteral("mean_ns"));
        const qsizetype shareColumn = header.indexOf(QStringLiteral("codec_share"));
        // Times under any call's mean over gRPC (a share is at most 1; a baseline above the mean is unknown): the
        // built-in server answered a Sum at c=1 in a 61 us mean on a quiet 2-core machine, under 80 us.
        for (const auto &[row, baselineNs] : { std::pair(1, 10000.0), std::pair(3, 20000.0) }) {
            const QStringList fields = rows.at(row).split(u',');
            QVERIFY2(fields.at(1) == u"mine", qPrintable(rows.at(row)));
            const double mean = fields.at(meanColumn).toDouble();
            QVERIFY2(mean > 0, qPrintable(rows.at(row)));
            QVERIFY2(std::fabs(fields.at(shareColumn).toDouble() - baselineNs / mean) < 1e-3, qPrintable(rows.at(row)));
        }
        // A baseline command that prints no time: said, and that stack's share unknown (empty), its cells still run.
        QVERIFY2(p.err.contains(QStringLiteral("its last line \"soon\" is not a time per call")), qPrintable(p.err));
        for (int row : { 2, 4 }) {
            const QStringList fields = rows.at(row).split(u',');
            QVERIFY2(fields.at(1) == u"broken" && fields.at(shareColumn).isEmpty() && fields.at(6) == u"0",
                qPrintable(rows.at(row)));
        }
    }

    void matrixRefusesWhatItCannotRun_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        const QStringList echo { QStringLiteral("--call"), kEcho };
        QTest::newRow("no target") << echo + QStringList { QStringLiteral("--transports"), QStringLiteral("msgpack") }
                                   << QStringLiteral(
                                          "no target for msgpack: give --msgpack ADDRESS, --builtin, or your "
                                          "stacks with --stack");
        QTest::newRow("bad transport") << echo
                + QStringList { QStringLiteral("--transports"), QStringLiteral("grpc,quic") }
                                       << QStringLiteral(
                                              "--transports: \"quic\" is not grpc, h2grpc, http, msgpack or none");
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
                                    << QStringLiteral("give targets with --stack, or per transport");
        const QString grpcStack = QStringLiteral("a=grpc@127.0.0.1:1");
        QTest::newRow("stack syntax") << echo + QStringList { QStringLiteral("--stack"), QStringLiteral("grpc") }
                                      << QStringLiteral("--stack \"grpc\": expected NAME=TRANSPORT[/CODEC]@TARGET");
        QTest::newRow("stack transport") << echo + QStringList { QStringLiteral("--stack"), QStringLiteral("a=quic@x") }
                                         << QStringLiteral("--stack \"a=quic@x\": \"quic\" is not grpc, h2grpc, http");
        QTest::newRow("stack codec") << echo
                + QStringList { QStringLiteral("--stack"), QStringLiteral("a=grpc/json@127.0.0.1:1") }
                                     << QStringLiteral("grpc carries protobuf only");
        QTest::newRow("stack target") << echo + QStringList { QStringLiteral("--stack"), QStringLiteral("a=http/json") }
                                      << QStringLiteral("no target: add @ADDRESS");
        QTest::newRow("stack in process")
            << echo + QStringList { QStringLiteral("--stack"), QStringLiteral("a=none/json@127.0.0.1:1") }
            << QStringLiteral("none runs in process, with no target");
        QTest::newRow("stack method") << echo
                + QStringList { QStringLiteral("--stack"), QStringLiteral("a=grpc@127.0.0.1:1,method=sum") }
                                      << QStringLiteral("method= names a msgpack-rpc method");
        QTest::newRow("stack path") << echo
                + QStringList { QStringLiteral("--stack"), QStringLiteral("a=grpc@127.0.0.1:1,path=/sum") }
                                    << QStringLiteral("path= is for an HTTP stack");
        QTest::newRow("stack path not a path")
            << echo + QStringList { QStringLiteral("--stack"), QStringLiteral("a=http/json@x y {port},path=sum") }
            << QStringLiteral("path= needs a URL path, e.g. path=/rpc");
        QTest::newRow("stack baseline empty")
            << echo + QStringList { QStringLiteral("--stack"), QStringLiteral("a=grpc@127.0.0.1:1,baseline=") }
            << QStringLiteral("baseline= needs a command");
        QTest::newRow("stack baseline in process")
            << echo + QStringList { QStringLiteral("--stack"), QStringLiteral("a=none/json,baseline=true") }
            << QStringLiteral("baseline= is for a stack with a server");
        QTest::newRow("stack name") << echo
                + QStringList { QStringLiteral("--stack"), QStringLiteral("my stack=grpc@x") }
                                    << QStringLiteral("the name \"my stack\" may hold");
        QTest::newRow("stacks named twice")
            << echo + QStringList { QStringLiteral("--stack"), grpcStack, QStringLiteral("--stack"), grpcStack }
            << QStringLiteral("two stacks are named \"a\"");
        QTest::newRow("stack and transports") << echo
                + QStringList { QStringLiteral("--stack"), grpcStack, QStringLiteral("--transports"),
                      QStringLiteral("grpc") } << QStringLiteral("--stack names each stack's transport");
        QTest::newRow("stack and rpc method") << echo
                + QStringList { QStringLiteral("--stack"), grpcStack, QStringLiteral("--rpc-method"),
                      QStringLiteral("x") } << QStringLiteral("--rpc-method: the matrix sets it per cell");
        QTest::newRow("callers") << echo
                + QStringList { QStringLiteral("--stack"), grpcStack, QStringLiteral("-c"), QStringLiteral("1,many") }
                                 << QStringLiteral("-c: \"many\" is not a number of callers");
        QTest::newRow("callers twice") << echo
                + QStringList { QStringLiteral("--stack"), grpcStack, QStringLiteral("-c"), QStringLiteral("8,8") }
                                       << QStringLiteral("-c: 8 is given twice");
        QTest::newRow("stack without a schema") << echo
                + QStringList { QStringLiteral("--stack"), grpcStack, QStringLiteral("--stack"),
                      QStringLiteral("b=http/json@http://127.0.0.1:1/x") }
                                                << QStringLiteral("b c=50: no schema: give a .proto file");
        // The last payload does not fit the method: refused before the first cell makes a call.
        QTest::newRow("payload that does not fit")
            << echo
                + QStringList { QStringLiteral("--transports"), QStringLiteral("none"), QStringLiteral("--payloads"),
                      QStringLiteral("payload=1KiB;payload=big") }
            << QStringLiteral("none/protobuf payload=big c=1: fill \"payload=big\": "
                              "invalid size");
        QTest::newRow("format") << echo + QStringList { QStringLiteral("--format"), QStringLiteral("xml") }
                                << QStringLiteral("--format: \"xml\" is not text, csv or markdown");
        QTest::newRow("export") << echo
                + QStringList { QStringLiteral("--transports"), QStringLiteral("none"), QStringLiteral("-O"),
                      QStringLiteral("json"), QStringLiteral("-o"), QStringLiteral("x.json") }
                                << QStringLiteral("-O json: the matrix writes csv, markdown, html, png, svg or pdf");
        QTest::newRow("drawn without a display") << echo
                + QStringList { QStringLiteral("--transports"), QStringLiteral("none"), QStringLiteral("-O"),
                      QStringLiteral("png"), QStringLiteral("-o"), QStringLiteral("x.png") }
                                                 << QStringLiteral("-O png: give it as -O png");
        QTest::newRow("metric") << echo
                + QStringList { QStringLiteral("--transports"), QStringLiteral("none"), QStringLiteral("--metric"),
                      QStringLiteral("max") }
                                << QStringLiteral("--metric: \"max\" is not mean, p50, p99, rps or cpu");
        QTest::newRow("unpaired -o") << echo
                + QStringList { QStringLiteral("--transports"), QStringLiteral("none"), QStringLiteral("-o"),
                      QStringLiteral("x.csv") }
                                     << QStringLiteral("-o x.csv: no -O before it");
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
            << QStringLiteral("--restarts: 50 server starts a side, but the run has only 10 rounds");
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
