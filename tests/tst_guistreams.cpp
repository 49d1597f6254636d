// Streaming methods in the window, offscreen and driven as a user would: the stream settings, a run of a server
// stream against the built-in server, the Run page's per-message and per-call charts. The rest of the window:
// tst_gui.cpp.
#include "guifixture.h"

#include "qcp.h"
#include "runcontroller.h"
#include "scenariopage.h"
#include "schemapanel.h"

#include <QCheckBox>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QSpinBox>
#include <QTemporaryDir>

#include <cmath>

using namespace rpcscope;

class TestGuiStreams : public GuiFixture {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { openWindow(); }

    void streamingMethodRunsWithItsMessages()
    {
        auto *count = child<QLineEdit>("streamCallCountEdit");
        QVERIFY(!count->isEnabled()); // Echo is unary: the stream settings mean nothing there
        QVERIFY(m_window->schemaPanel()->selectMethod(QStringLiteral("rpcscope.bench.v1.Bench/Download")));
        QVERIFY(count->isEnabled() && child<QLineEdit>("streamIntervalEdit")->isEnabled());
        QVERIFY(!child<QCheckBox>("streamPingPong")->isEnabled()); // for bidi streams only
        child<QPlainTextEdit>("requestEditor")->setPlainText(QStringLiteral(R"({"count": 1000, "size": 8})"));
        count->setText(QStringLiteral("5")); // the client ends each stream after 5 replies
        child<QSpinBox>("callsEdit")->setValue(50);
        QVERIFY2(m_window->scenarioPage()->validateNow(), qPrintable(child<QLabel>("requestStatus")->text()));
        m_window->startRun();
        QTRY_VERIFY_WITH_TIMEOUT(!m_window->runController()->isRunning(), 30000);
        const RunSnapshot last = m_window->runController()->lastSnapshot();
        QCOMPARE(last.callsOk(), 50ULL);
        QCOMPARE(last.messagesReceived, 250ULL);
        QCOMPARE(summaryValue(QStringLiteral("Messages received")), QStringLiteral("250"));
        QVERIFY(summaryValue(QStringLiteral("Per message p99")).endsWith(QStringLiteral("s")));
        // The histogram opens on the messages (250 of them), and shows the calls (50 streams) on request.
        QComboBox *latencyOf = m_window->runPage()->latencyOfCombo();
        QVERIFY(latencyOf->isVisibleTo(m_window.get()));
        auto barsTotal = [this] {
            double total = 0;
            QCPGraph *bars = m_window->runPage()->histogramPlot()->graph(0);
            for (auto it = bars->data()->constBegin(); it != bars->data()->constEnd(); ++it)
                total += it->value;
            return std::round(total); // display bins share the histogram's buckets out: fractions add up to whole calls
        };
        m_window->runPage()->chartTabs()->setCurrentIndex(RunPage::HistogramChart);
        QCOMPARE(latencyOf->currentIndex(), 0);
        QTRY_COMPARE(barsTotal(), 250.0);
        QCOMPARE(m_window->runPage()->histogramPlot()->yAxis->label(), QStringLiteral("messages per bin"));
        // Over time too: messages/s, and the messages' percentiles per interval.
        m_window->runPage()->chartTabs()->setCurrentIndex(RunPage::ThroughputChart);
        QCOMPARE(m_window->runPage()->throughputTimePlot()->graph(0)->name(), QStringLiteral("messages/s"));
        latencyOf->setCurrentIndex(1);
        QCOMPARE(m_window->runPage()->throughputTimePlot()->graph(0)->name(), QStringLiteral("requests/s"));
        m_window->runPage()->chartTabs()->setCurrentIndex(RunPage::HistogramChart);
        QTRY_COMPARE(barsTotal(), 50.0);
        QCOMPARE(m_window->runPage()->histogramPlot()->yAxis->label(), QStringLiteral("calls per bin"));
        latencyOf->setCurrentIndex(0);
        // A bad stream setting disables Run with the reason; so does a transport that cannot stream.
        child<QLineEdit>("streamIntervalEdit")->setText(QStringLiteral("soon"));
        QVERIFY(!m_window->scenarioPage()->validateNow());
        QVERIFY2(child<QLabel>("requestStatus")->text().contains(QStringLiteral("Stream interval")),
            qPrintable(child<QLabel>("requestStatus")->text()));
        child<QLineEdit>("streamIntervalEdit")->clear();
        auto *transports = child<QComboBox>("transportCombo");
        transports->setCurrentIndex(transports->findData(int(TransportKind::Http)));
        QVERIFY(!m_window->scenarioPage()->validateNow());
        QVERIFY2(child<QLabel>("requestStatus")->text().contains(QStringLiteral("gRPC only")),
            qPrintable(child<QLabel>("requestStatus")->text()));
        transports->setCurrentIndex(transports->findData(int(TransportKind::Grpc)));
        count->clear();
        QVERIFY(m_window->schemaPanel()->selectMethod(QStringLiteral("rpcscope.bench.v1.Bench/Echo")));
        QVERIFY(!count->isEnabled());
        QVERIFY(m_window->scenarioPage()->validateNow());
        // A unary run has calls only: the choice goes away.
        m_window->startRun();
        QTRY_VERIFY_WITH_TIMEOUT(!m_window->runController()->isRunning(), 30000);
        QVERIFY(!latencyOf->isVisibleTo(m_window.get()));
        QCOMPARE(m_window->runPage()->histogramPlot()->yAxis->label(), QStringLiteral("calls per bin"));
    }

    void settingsWithoutAWidgetSurviveTheEditor()
    {
        // A document written by hand or by the CLI holds settings the editor does not show (pinning, exports,
        // history, the A/B design, a server command's readiness); shown and read back, none of them is dropped.
        ScenarioPage page;
        Scenario document;
        document.method = QStringLiteral("rpcscope.bench.v1.Bench/Echo");
        document.clientCpus = QStringLiteral("0");
        document.serverCpus = QStringLiteral("1");
        document.exports = { { QStringLiteral("csv"), QStringLiteral("/tmp/run.csv") } };
        document.chart = QStringLiteral("spectrum");
        document.labels = { QStringLiteral("nightly") };
        document.name = QStringLiteral("baseline");
        document.compareTo = QStringLiteral("label:release");
        document.failOnError = true;
        document.readyPattern = QStringLiteral("listening on (\\S+)");
        document.abRestarts = 3;
        document.abConnection = QStringLiteral("per-block");
        page.setScenario(document);
        const Scenario back = page.scenario();
        QCOMPARE(back.clientCpus, document.clientCpus);
        QCOMPARE(back.serverCpus, document.serverCpus);
        QVERIFY(back.exports == document.exports);
        QCOMPARE(back.chart, document.chart);
        QCOMPARE(back.labels, document.labels);
        QCOMPARE(back.name, document.name);
        QCOMPARE(back.compareTo, document.compareTo);
        QVERIFY(back.failOnError);
        QCOMPARE(back.readyPattern, document.readyPattern);
        QCOMPARE(back.abRestarts, 3);
        QCOMPARE(back.abConnection, QStringLiteral("per-block"));
        // A request kept in a JSON file is shown in the editor, and saved from there.
        QTemporaryDir dir;
        QFile request(dir.filePath(QStringLiteral("request.json")));
        QVERIFY(request.open(QIODevice::WriteOnly) && request.write("{\"payload\":\"aGk=\"}") > 0);
        request.close();
        document.requestFile = request.fileName();
        page.setScenario(document);
        QVERIFY(page.scenario().requestFile.isEmpty());
        QCOMPARE(page.scenario().request, QByteArray("{\"payload\":\"aGk=\"}"));
    }
};

QTEST_MAIN(TestGuiStreams)
#include "tst_guistreams.moc"
