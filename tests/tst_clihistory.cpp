// history's subcommands in process, against a history of their own: what they print, what they leave in the store,
// and the exit codes. The process tests (tst_cli) keep the command line as a whole.
#include "cli/cliapp.h"
#include "cli/historycommand.h"
#include "cliprinted.h"

#include "store/runstore.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <functional>
#include <memory>

using namespace rpcscope;
using namespace rpcscope::cli;

namespace {

Printed history(const QStringList &arguments)
{
    return runPrinted(historyCommand, QStringLiteral("history"), arguments);
}

} // namespace

class TestCliHistory : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_path;
    std::unique_ptr<RunStore> m_store;
    int m_histories = 0;

    /// A finished run of @p calls calls, over @p stack ("grpc/protobuf"), each ending with @p status in the time
    /// @p latency(i) gives (ns).
    static RunRecord finishedRun(const QString &name, const QString &method, const QString &stack, uint64_t calls,
        int status, const std::function<int64_t(uint64_t)> &latency)
    {
        RunRecord run;
        run.name = name;
        run.method = method;
        run.transport = stack.section(u'/', 0, 0);
        run.codec = stack.section(u'/', 1);
        run.startedAt = QDateTime::currentDateTimeUtc();
        run.endedAt = run.startedAt.addSecs(1);
        run.snapshot.state = RunState::Finished;
        LatencyHistogram &h = status == CallStatus::Ok ? run.snapshot.latency : run.snapshot.errorLatency;
        for (uint64_t i = 0; i < calls; ++i)
            h.record(latency(i));
        run.snapshot.statusCounts[status] = calls;
        run.snapshot.elapsed = std::chrono::seconds(1);
        return run;
    }

    qint64 add(const RunRecord &run)
    {
        QString error;
        const qint64 id = m_store->addRun(run, &error);
        if (id == 0)
            qFatal("addRun: %s", qPrintable(error));
        return id;
    }

    qint64 save(const QString &name, const QString &method, const QStringList &labels, uint64_t calls)
    {
        RunRecord run = finishedRun(name, method, QStringLiteral("grpc/protobuf"), calls, CallStatus::Ok,
            [](uint64_t i) { return 100000 + static_cast<int64_t>(i % 50) * 1000; });
        run.target = QStringLiteral("127.0.0.1:50051");
        run.labels = labels;
        return add(run);
    }

    QStringList names()
    {
        QString error;
        QStringList names;
        for (const RunListEntry &e : m_store->list({}, &error))
            names << (e.name.isEmpty() ? QStringLiteral("#%1").arg(e.id) : e.name);
        return names;
    }

    QStringList db() const { return { QStringLiteral("--db"), m_path }; }

private Q_SLOTS:
    void init()
    {
        // Each test its own history: runs #1 (fast), #2 (slow, labelled), #3 (sum).
        QVERIFY(m_dir.isValid());
        m_path = m_dir.filePath(QStringLiteral("runs-%1.sqlite").arg(++m_histories));
        m_store = std::make_unique<RunStore>();
        QString error;
        QVERIFY2(m_store->open(m_path, &error), qPrintable(error));
        save(QStringLiteral("fast"), QStringLiteral("rpcscope.bench.v1.Bench/Echo"), { QStringLiteral("base") }, 300);
        save(QStringLiteral("slow"), QStringLiteral("rpcscope.bench.v1.Bench/Echo"),
            { QStringLiteral("after"), QStringLiteral("tuned") }, 200);
        save(QString(), QStringLiteral("rpcscope.bench.v1.Bench/Sum"), {}, 100);
    }

    void listPrintsOneRowPerRunAndFilters()
    {
        Printed p = history(QStringList { QStringLiteral("list") } + db());
        QCOMPARE(p.code, int(ExitOk));
        QVERIFY2(p.err.isEmpty(), qPrintable(p.err));
        QStringList lines = p.out.split(u'\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 4);
        QVERIFY2(lines.at(0).startsWith(QStringLiteral("ID    STARTED")), qPrintable(lines.at(0)));
        // Newest first, each with its stack, calls and labels; a run without a name shows "-".
        QVERIFY2(lines.at(1).startsWith(QStringLiteral("3 ")) && lines.at(1).contains(QStringLiteral(" - "))
                && lines.at(1).contains(QStringLiteral("Sum")),
            qPrintable(lines.at(1)));
        QVERIFY2(lines.at(2).startsWith(QStringLiteral("2 ")) && lines.at(2).contains(QStringLiteral("slow"))
                && lines.at(2).contains(QStringLiteral("grpc/protobuf"))
                && lines.at(2).contains(QStringLiteral(" 200 "))
                && lines.at(2).endsWith(QStringLiteral("after, tuned")),
            qPrintable(lines.at(2)));
        QVERIFY2(lines.at(3).startsWith(QStringLiteral("1 ")) && lines.at(3).contains(QStringLiteral("fast")),
            qPrintable(lines.at(3)));

        p = history(QStringList { QStringLiteral("list"), QStringLiteral("--label"), QStringLiteral("tun") } + db());
        lines = p.out.split(u'\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 2);
        QVERIFY(lines.at(1).contains(QStringLiteral("slow")));
        p = history(QStringList { QStringLiteral("list"), QStringLiteral("--method"), QStringLiteral("Sum") } + db());
        QCOMPARE(p.out.split(u'\n', Qt::SkipEmptyParts).size(), 2);
        p = history(QStringList { QStringLiteral("list"), QStringLiteral("--limit"), QStringLiteral("1") } + db());
        lines = p.out.split(u'\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 2);
        QVERIFY(lines.at(1).startsWith(QStringLiteral("3 ")));
    }

    void listKeepsItsColumnsApart()
    {
        // Values as long as their column or longer (a matrix cell's name, msgpack/msgpack) are cut or padded so a
        // space always parts them from the next column; a name's control characters are shown escaped.
        add(finishedRun(QStringLiteral("mp nums=1000 c=8 from the nightly \x1b[31mmatrix"),
            QStringLiteral("rpcscope.bench.v1.Bench/ALongMethodNameIndeed"), QStringLiteral("msgpack/msgpack"), 4000,
            CallStatus::Ok, [](uint64_t) { return 1000; }));
        const Printed p
            = history(QStringList { QStringLiteral("list"), QStringLiteral("--limit"), QStringLiteral("1") } + db());
        const QString row = p.out.split(u'\n').value(1);
        const QStringList columns = row.split(QRegularExpression(QStringLiteral(" +")), Qt::SkipEmptyParts);
        QVERIFY2(row.contains(QStringLiteral(" msgpack/msgpack ")), qPrintable(row));
        QVERIFY2(row.contains(QStringLiteral("\u2026 ")), qPrintable(row)); // cut, then a space
        QVERIFY2(!row.contains(QChar(0x1b)), qPrintable(row));
        QVERIFY2(columns.contains(QStringLiteral("4000")), qPrintable(row)); // calls, alone in their column
    }

    void aRunWithoutOkCallsListsUnknownFigures()
    {
        // Every call failed (a server that was down): the row says "-" for its rate and latencies, never 0 ns.
        add(finishedRun(QStringLiteral("down"), QStringLiteral("rpcscope.bench.v1.Bench/Echo"),
            QStringLiteral("grpc/protobuf"), 200, CallStatus::Unavailable, [](uint64_t) { return 300'000; }));
        const Printed p
            = history(QStringList { QStringLiteral("list"), QStringLiteral("--limit"), QStringLiteral("2") } + db());
        const QStringList lines = p.out.split(u'\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 3);
        const QStringList down = lines.at(1).split(QRegularExpression(QStringLiteral(" +")), Qt::SkipEmptyParts);
        // ID, date, time, status, name, method, stack, calls, then REQ/S, P50, P99.
        QCOMPARE(down.mid(7, 4),
            (QStringList { QStringLiteral("200"), QStringLiteral("-"), QStringLiteral("-"), QStringLiteral("-") }));
        QVERIFY2(!lines.at(1).contains(QStringLiteral("0 ns")), qPrintable(lines.at(1)));
        // A run with OK calls beside it keeps its figures.
        QVERIFY2(lines.at(2).contains(QStringLiteral(" us ")) || lines.at(2).contains(QStringLiteral(" ms ")),
            qPrintable(lines.at(2)));
    }

    void listRefusesWhatItCannotUse_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("limit") << QStringList { QStringLiteral("list"), QStringLiteral("--limit"),
            QStringLiteral("some") }
                               << QStringLiteral("--limit: expected a number >= 1, got \"some\"");
        QTest::newRow("limit zero") << QStringList { QStringLiteral("list"), QStringLiteral("--limit"),
            QStringLiteral("0") } << QStringLiteral("--limit: expected a number >= 1, got \"0\"");
        QTest::newRow("arguments") << QStringList { QStringLiteral("list"), QStringLiteral("Echo") }
                                   << QStringLiteral("list takes no arguments");
        QTest::newRow("subcommand") << QStringList { QStringLiteral("purge") }
                                    << QStringLiteral("unknown subcommand \"purge\"");
        QTest::newRow("option") << QStringList { QStringLiteral("list"), QStringLiteral("--colour") }
                                << QStringLiteral("colour");
    }
    void listRefusesWhatItCannotUse()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const Printed p = history(args + db());
        QCOMPARE(p.code, int(ExitUsage));
        QVERIFY2(
            p.err.startsWith(QStringLiteral("rpcscope-cli history: ")) && p.err.contains(message), qPrintable(p.err));
        QVERIFY(p.out.isEmpty());
    }

    void showPrintsTheRunAndItsJson()
    {
        Printed p = history(QStringList { QStringLiteral("show"), QStringLiteral("label:tuned") } + db());
        QCOMPARE(p.code, int(ExitOk));
        QVERIFY2(p.out.startsWith(QStringLiteral("Run #2 \"slow\", finished\n")), qPrintable(p.out));
        QVERIFY2(p.out.contains(QStringLiteral("  Method:      rpcscope.bench.v1.Bench/Echo\n"))
                && p.out.contains(QStringLiteral("  Stack:       grpc / protobuf\n"))
                && p.out.contains(QStringLiteral("  Labels:      after, tuned\n"))
                && p.out.contains(QStringLiteral("Count:\t200")),
            qPrintable(p.out));
        QVERIFY(!p.out.contains(QStringLiteral("Origin:"))); // only for runs from elsewhere

        p = history(QStringList { QStringLiteral("show"), QStringLiteral("last~2"), QStringLiteral("--json") } + db());
        QCOMPARE(p.code, int(ExitOk));
        QJsonParseError parseError;
        const QJsonObject report = QJsonDocument::fromJson(p.out.toUtf8(), &parseError).object();
        QVERIFY2(parseError.error == QJsonParseError::NoError, qPrintable(parseError.errorString()));
        QCOMPARE(report.value(QStringLiteral("name")).toString(), QStringLiteral("fast"));
    }

    void showNamesTheRunItCannotFind_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("no such id") << QStringList { QStringLiteral("show"), QStringLiteral("7") }
                                    << QStringLiteral("no run #7");
        QTest::newRow("no such label") << QStringList { QStringLiteral("show"), QStringLiteral("label:nope") }
                                       << QStringLiteral("labelled \"nope\"");
        QTest::newRow("too far back") << QStringList { QStringLiteral("show"), QStringLiteral("last~5") }
                                      << QStringLiteral("so the oldest is last~2");
        QTest::newRow("not a reference") << QStringList { QStringLiteral("show"), QStringLiteral("newest") }
                                         << QStringLiteral("\"newest\" names no run");
        QTest::newRow("no run given") << QStringList { QStringLiteral("show") }
                                      << QStringLiteral("show: expected a run");
    }
    void showNamesTheRunItCannotFind()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const Printed p = history(args + db());
        QCOMPARE(p.code, int(ExitUsage));
        QVERIFY2(p.err.contains(message), qPrintable(p.err));
        QVERIFY(p.out.isEmpty());
    }

    void deleteRemovesEveryRunNamedOrNone()
    {
        // One bad reference among good ones: nothing is deleted, and the bad one is named.
        Printed p = history(
            QStringList { QStringLiteral("delete"), QStringLiteral("1"), QStringLiteral("label:gone") } + db());
        QCOMPARE(p.code, int(ExitUsage));
        QVERIFY2(p.err.contains(QStringLiteral("delete: ")) && p.err.contains(QStringLiteral("\"gone\"")),
            qPrintable(p.err));
        QCOMPARE(names(), (QStringList { QStringLiteral("#3"), QStringLiteral("slow"), QStringLiteral("fast") }));
        // "last last~1" is the two newest, resolved before either goes.
        p = history(QStringList { QStringLiteral("delete"), QStringLiteral("last"), QStringLiteral("last~1") } + db());
        QCOMPARE(p.code, int(ExitOk));
        QCOMPARE(p.out, QStringLiteral("Deleted run #3\nDeleted run #2\n"));
        QCOMPARE(names(), QStringList { QStringLiteral("fast") });
        p = history(QStringList { QStringLiteral("delete") } + db());
        QCOMPARE(p.code, int(ExitUsage));
        QVERIFY2(p.err.contains(QStringLiteral("delete: expected run IDs")), qPrintable(p.err));
    }

    void renameAndLabelChangeTheStoredRun()
    {
        Printed p = history(
            QStringList { QStringLiteral("rename"), QStringLiteral("#1"), QStringLiteral("baseline") } + db());
        QCOMPARE(p.code, int(ExitOk));
        QString error;
        QCOMPARE(m_store->load(1, &error, RunStore::Parts::Metadata)->name, QStringLiteral("baseline"));
        p = history(QStringList { QStringLiteral("rename"), QStringLiteral("1") } + db());
        QCOMPARE(p.code, int(ExitUsage));
        QVERIFY2(p.err.contains(QStringLiteral("rename: expected ID NAME")), qPrintable(p.err));
        p = history(QStringList { QStringLiteral("rename"), QStringLiteral("9"), QStringLiteral("x") } + db());
        QCOMPARE(p.code, int(ExitUsage));
        QVERIFY2(p.err.contains(QStringLiteral("#9")), qPrintable(p.err));

        p = history(QStringList { QStringLiteral("label"), QStringLiteral("label:base"), QStringLiteral("v2"),
                        QStringLiteral("pinned") }
            + db());
        QCOMPARE(p.code, int(ExitOk));
        QCOMPARE(m_store->load(1, &error, RunStore::Parts::Metadata)->labels,
            (QStringList { QStringLiteral("pinned"), QStringLiteral("v2") }));
        // No labels: the run's are removed.
        p = history(QStringList { QStringLiteral("label"), QStringLiteral("2") } + db());
        QCOMPARE(p.code, int(ExitOk));
        QVERIFY(m_store->load(2, &error, RunStore::Parts::Metadata)->labels.isEmpty());
        p = history(QStringList { QStringLiteral("label") } + db());
        QCOMPARE(p.code, int(ExitUsage));
        QVERIFY2(p.err.contains(QStringLiteral("label: expected a run")), qPrintable(p.err));
    }

    void aFileThatIsNoHistoryIsNamed()
    {
        const QString notes = m_dir.filePath(QStringLiteral("notes.txt"));
        QFile file(notes);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("not a database, just some notes that happen to be long enough to have a header\n");
        file.close();
        const Printed p = history({ QStringLiteral("list"), QStringLiteral("--db"), notes });
        QCOMPARE(p.code, int(ExitUsage));
        QVERIFY2(p.err.contains(QStringLiteral("--db ") + notes), qPrintable(p.err));
    }
};

QTEST_GUILESS_MAIN(TestCliHistory)
#include "tst_clihistory.moc"
