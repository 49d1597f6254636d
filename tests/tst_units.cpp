#include "util/units.h"

#include <QTest>

using namespace std::chrono_literals;

class TestUnits : public QObject
{
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
};

QTEST_GUILESS_MAIN(TestUnits)
#include "tst_units.moc"
