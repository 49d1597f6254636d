#include "util/cpuset.h"
#include "util/printable.h"
#include "util/units.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>

using namespace std::chrono_literals;

class TestUnits : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void durations_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<qint64>("nanos");
        QTest::newRow("ms") << QStringLiteral("250ms") << qint64(250'000'000);
        QTest::newRow("fractional s") << QStringLiteral("1.5s") << qint64(1'500'000'000);
        QTest::newRow("compound") << QStringLiteral("1m30s") << qint64(90'000'000'000);
        QTest::newRow("hours") << QStringLiteral("2h") << qint64(7'200'000'000'000);
        QTest::newRow("us") << QStringLiteral("100us") << qint64(100'000);
        QTest::newRow("micro sign") << QStringLiteral("100µs") << qint64(100'000);
        QTest::newRow("ns") << QStringLiteral("10ns") << qint64(10);
        QTest::newRow("bare number") << QStringLiteral("10") << qint64(-1);
        QTest::newRow("unknown unit") << QStringLiteral("3x") << qint64(-1);
        QTest::newRow("empty") << QString() << qint64(-1);
        QTest::newRow("trailing junk") << QStringLiteral("1s junk") << qint64(-1);
    }
    void durations()
    {
        QFETCH(QString, text);
        QFETCH(qint64, nanos);
        QString error;
        const auto parsed = rpcscope::parseDuration(text, &error);
        if (nanos < 0) {
            QVERIFY(!parsed);
            QVERIFY(!error.isEmpty());
        } else {
            QVERIFY2(parsed, qPrintable(error));
            QCOMPARE(parsed->count(), nanos);
        }
    }

    void sizes_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<qint64>("bytes");
        QTest::newRow("plain") << QStringLiteral("1024") << qint64(1024);
        QTest::newRow("KiB") << QStringLiteral("1KiB") << qint64(1024);
        QTest::newRow("MiB") << QStringLiteral("10MiB") << qint64(10 * 1024 * 1024);
        QTest::newRow("kB") << QStringLiteral("1kB") << qint64(1000);
        QTest::newRow("MB") << QStringLiteral("1MB") << qint64(1'000'000);
        QTest::newRow("B") << QStringLiteral("512B") << qint64(512);
        QTest::newRow("junk") << QStringLiteral("ten") << qint64(-1);
        QTest::newRow("too big") << QStringLiteral("5GiB") << qint64(-1);
    }
    void sizes()
    {
        QFETCH(QString, text);
        QFETCH(qint64, bytes);
        QString error;
        const auto parsed = rpcscope::parseByteSize(text, &error);
        if (bytes < 0) {
            QVERIFY(!parsed);
            QVERIFY(!error.isEmpty());
        } else {
            QVERIFY2(parsed, qPrintable(error));
            QCOMPARE(*parsed, bytes);
        }
    }

    void formatting()
    {
        QCOMPARE(rpcscope::formatDuration(830ns), QStringLiteral("830 ns"));
        QCOMPARE(rpcscope::formatDuration(12300ns), QStringLiteral("12.3 us"));
        QCOMPARE(rpcscope::formatDuration(4560us), QStringLiteral("4.56 ms"));
        QCOMPARE(rpcscope::formatDuration(1230ms), QStringLiteral("1.23 s"));
        QCOMPARE(rpcscope::formatBytes(512), QStringLiteral("512 B"));
        QCOMPARE(rpcscope::formatBytes(10 * 1024 * 1024), QStringLiteral("10.0 MiB"));
    }

    void printableKeepsTerminalsSafe()
    {
        using rpcscope::printable;
        // A server's error message or reply, printed: escape sequences are shown, not obeyed.
        QCOMPARE(printable(QStringLiteral("fine: ok, caf\u00e9 \u2713")), QStringLiteral("fine: ok, caf\u00e9 \u2713"));
        QCOMPARE(printable(QStringLiteral("\x1b]0;owned\x07red \x1b[31mtext")),
            QStringLiteral("\\x1b]0;owned\\x07red \\x1b[31mtext"));
        QCOMPARE(printable(QString(QChar(0x9b)) + QStringLiteral("2J\tx\x7f")), QStringLiteral("\\x9b2J\\x09x\\x7f"));
        QCOMPARE(printable(QStringLiteral("a\nb")), QStringLiteral("a\\x0ab"));
        QCOMPARE(printable(QStringLiteral("a\nb"), true), QStringLiteral("a\nb"));
    }

    void cpuLists_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QList<int>>("cpus"); // empty: must be refused
        QTest::addColumn<QString>("error"); // a part of the error
        QTest::newRow("one") << QStringLiteral("0") << QList<int> { 0 } << QString();
        QTest::newRow("two") << QStringLiteral("0,1") << QList<int> { 0, 1 } << QString();
        QTest::newRow("range") << QStringLiteral("0-1") << QList<int> { 0, 1 } << QString();
        QTest::newRow("sorted, once each") << QStringLiteral("1,0-1,0") << QList<int> { 0, 1 } << QString();
        QTest::newRow("spaces") << QStringLiteral(" 0 , 1 ") << QList<int> { 0, 1 } << QString();
        QTest::newRow("empty") << QString() << QList<int> {} << QStringLiteral("empty CPU list");
        QTest::newRow("word") << QStringLiteral("0,x") << QList<int> {}
                              << QStringLiteral("\"x\" in \"0,x\" is not a CPU number or range (N or N-M)");
        QTest::newRow("empty item") << QStringLiteral("0,,1") << QList<int> {} << QStringLiteral("\"\" in \"0,,1\"");
        QTest::newRow("negative") << QStringLiteral("-1") << QList<int> {}
                                  << QStringLiteral("\"-1\" in \"-1\" is not a CPU");
        QTest::newRow("open range") << QStringLiteral("0-") << QList<int> {}
                                    << QStringLiteral("\"0-\" in \"0-\" is not a CPU");
        QTest::newRow("two dashes") << QStringLiteral("0-1-2") << QList<int> {} << QStringLiteral("\"0-1-2\"");
        QTest::newRow("backwards") << QStringLiteral("0,3-1") << QList<int> {}
                                   << QStringLiteral("\"3-1\" in \"0,3-1\": the range runs backwards");
        QTest::newRow("huge") << QStringLiteral("1-1000000000") << QList<int> {}
                              << QStringLiteral("no machine has CPU 1000000000");
    }
    void cpuLists()
    {
        QFETCH(QString, text);
        QFETCH(QList<int>, cpus);
        QFETCH(QString, error);
        const std::vector<int> available = rpcscope::availableCpus();
        for (int cpu : cpus) {
            if (!std::binary_search(available.begin(), available.end(), cpu))
                QSKIP("this process may not run on CPUs 0 and 1");
        }
        QString why;
        const auto parsed = rpcscope::parseCpuList(text, &why);
        if (cpus.isEmpty()) {
            QVERIFY(!parsed);
            QVERIFY2(why.contains(error), qPrintable(why));
        } else {
            QVERIFY2(parsed, qPrintable(why));
            QCOMPARE(QList<int>(parsed->begin(), parsed->end()), cpus);
        }
    }

    void cpuNotAvailableIsNamed()
    {
        const std::vector<int> available = rpcscope::availableCpus();
        QVERIFY(!available.empty());
        const QString beyond = QString::number(available.back() + 1);
        QString why;
        QVERIFY(!rpcscope::parseCpuList(QStringLiteral("%1,%2").arg(available.front()).arg(beyond), &why));
        QCOMPARE(why,
            QStringLiteral("CPU %1 in \"%2,%1\" is not available to this process (available: %3)")
                .arg(beyond)
                .arg(available.front())
                .arg(rpcscope::formatCpuList(available)));
    }

    void cpuListsFormatted()
    {
        QCOMPARE(rpcscope::formatCpuList({}), QString());
        QCOMPARE(rpcscope::formatCpuList({ 3 }), QStringLiteral("3"));
        QCOMPARE(rpcscope::formatCpuList({ 0, 2, 3 }), QStringLiteral("0,2-3"));
        QCOMPARE(rpcscope::formatCpuList({ 5, 1, 2, 3, 3 }), QStringLiteral("1-3,5"));
        const std::vector<unsigned long> mask = rpcscope::cpuAffinityMask({ 1, 65 });
        QCOMPARE(mask.size(), size_t(128 / (sizeof(unsigned long) * 8)));
        QCOMPARE(mask.front() & 0xF, 2UL);
    }

    void machineNoiseFromFakeFiles()
    {
        QTemporaryDir root;
        QVERIFY(root.isValid());
        auto write = [&](const QString &path, const QByteArray &text) {
            QVERIFY(QDir(root.path()).mkpath(QFileInfo(root.filePath(path)).path()));
            QFile file(root.filePath(path));
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(text);
        };
        // Nothing there: nothing to say.
        QCOMPARE(rpcscope::machineNoiseWarnings(root.path()), QStringList());

        write(QStringLiteral("sys/devices/system/cpu/online"), "0-1\n");
        write(QStringLiteral("proc/loadavg"), "0.80 0.50 0.20 1/100 1234\n");
        write(QStringLiteral("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"), "performance\n");
        write(QStringLiteral("sys/devices/system/cpu/cpu1/cpufreq/scaling_governor"), "performance\n");
        write(QStringLiteral("sys/devices/system/cpu/cpuidle/current_driver"), "none\n"); // not a CPU
        QCOMPARE(rpcscope::machineNoiseWarnings(root.path()), QStringList());

        write(QStringLiteral("proc/loadavg"), "1.90 0.50 0.20 3/100 1234\n");
        write(QStringLiteral("sys/devices/system/cpu/cpu1/cpufreq/scaling_governor"), "powersave\n");
        QCOMPARE(rpcscope::machineNoiseWarnings(root.path()),
            QStringList({ QStringLiteral("load average 1.90 over the last minute on 2 CPUs (above 1.0, half of "
                                         "them): other work is running; results will be noisier"),
                QStringLiteral("CPU governor is 'powersave', not 'performance': frequency changes add "
                               "noise") }));

        write(QStringLiteral("proc/loadavg"), "0.10 0.50 0.20 1/100 1234\n");
        write(QStringLiteral("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"), "schedutil\n");
        QCOMPARE(rpcscope::machineNoiseWarnings(root.path()),
            QStringList({ QStringLiteral("CPU governors are 'schedutil', 'powersave', not 'performance': frequency "
                                         "changes add noise") }));
    }
};

QTEST_GUILESS_MAIN(TestUnits)
#include "tst_units.moc"
