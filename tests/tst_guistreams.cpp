// Streaming methods in the window, offscreen and driven as a user would: the stream settings, a run of a server
// stream against the built-in server, the Run page's per-message and per-call charts. The rest of the window:
// tst_gui.cpp.
#include "guifixture.h"

#include "qcp.h"
#include "runcontroller.h"
#include "scenariopage.h"
#include "scheduleeditor.h"
#include "schemapanel.h"

#include "schema/schema.h"

#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>

#include <cmath>

using namespace rpcscope;

class TestGuiStreams : public GuiFixture {
    Q_OBJECT

    static QComboBox *combo(ScenarioPage &page, const QString &name) { return page.findChild<QComboBox *>(name); }

private Q_SLOTS:
    void initTestCase() { openWindow(); }

    void streamingMethodRunsWithItsMessages()
    {
        auto *count = child<QLineEdit>("streamCallCountEdit");
        // Echo is unary: the stream settings mean nothing there, and are not shown.
        QVERIFY(!count->isEnabled() && !count->isVisibleTo(m_window.get()));
        QVERIFY(!child<QCheckBox>("streamPingPong")->isVisibleTo(m_window.get()));
        QVERIFY(m_window->schemaPanel()->selectMethod(QStringLiteral("rpcscope.bench.v1.Bench/Download")));
        QVERIFY(count->isEnabled() && child<QLineEdit>("streamIntervalEdit")->isEnabled());
        QVERIFY(count->isVisibleTo(m_window.get()));
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
        // A server stream: each first message timed from the call's start, apart from the gaps after it.
        QVERIFY(summaryValue(QStringLiteral("First message p50")).endsWith(QStringLiteral("s")));
        QVERIFY(summaryValue(QStringLiteral("Later gaps p99")).endsWith(QStringLiteral("s")));
        QCOMPARE(last.firstMessageLatency.count(), 50ULL);
        // The histogram opens on the messages (the 200 gaps after the first of each stream), and shows the calls (50
        // streams) on request.
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
        QTRY_COMPARE(barsTotal(), 200.0);
        QCOMPARE(m_window->runPage()->histogramPlot()->yAxis->label(), QStringLiteral("messages per bin"));
        // Over time too: messages/s, and the messages' percentiles per interval.
        m_window->runPage()->chartTabs()->setCurrentIndex(RunPage::ThroughputChart);
        QCOMPARE(m_window->runPage()->throughputTimePlot()->graph(0)->name(), QStringLiteral("messages/s"));
        latencyOf->setCurrentIndex(1);
        QCOMPARE(m_window->runPage()->throughputTimePlot()->graph(0)->name(), QStringLiteral("OK calls/s"));
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
        // rpcscope's own HTTP/2 gRPC client streams too: the same run over it, against the same built-in server.
        transports->setCurrentIndex(transports->findData(int(TransportKind::H2Grpc)));
        QVERIFY2(m_window->scenarioPage()->validateNow(), qPrintable(child<QLabel>("requestStatus")->text()));
        m_window->startRun();
        QTRY_VERIFY_WITH_TIMEOUT(!m_window->runController()->isRunning(), 30000);
        const RunSnapshot h2 = m_window->runController()->lastSnapshot();
        QCOMPARE(h2.callsOk(), 50ULL);
        QCOMPARE(h2.messagesReceived, 250ULL);
        QCOMPARE(h2.firstMessageLatency.count(), 50ULL);
        transports->setCurrentIndex(transports->findData(int(TransportKind::Grpc)));
        count->clear();
        QVERIFY(m_window->schemaPanel()->selectMethod(QStringLiteral("rpcscope.bench.v1.Bench/Echo")));
        QVERIFY(!count->isEnabled() && !count->isVisibleTo(m_window.get()));
        QVERIFY(m_window->scenarioPage()->validateNow());
        // A unary run has calls only: the choice goes away.
        m_window->startRun();
        QTRY_VERIFY_WITH_TIMEOUT(!m_window->runController()->isRunning(), 30000);
        QVERIFY(!latencyOf->isVisibleTo(m_window.get()));
        QCOMPARE(m_window->runPage()->histogramPlot()->yAxis->label(), QStringLiteral("calls per bin"));
    }

    void everyEditorFieldHasAScenarioField()
    {
        // Every input of the scenario editor must change the Scenario it gives (the document, and what core
        // prepares), and come back when that Scenario is shown again: no widget edits something only it knows.
        ScenarioPage page;
        auto *security = page.findChild<QComboBox *>(QStringLiteral("securityCombo"));
        QVERIFY(security);
        security->setCurrentIndex(security->findData(QStringLiteral("tls"))); // the TLS fields count from here
        for (auto *schedule : page.findChildren<ScheduleEditor *>())
            schedule->setChecked(true); // likewise the schedules' fields
        int walked = 0;
        const auto inputs = page.findChildren<QWidget *>();
        for (QWidget *w : inputs) {
            const QString name = w->objectName();
            if (name.isEmpty() || name.startsWith(QStringLiteral("qt_")))
                continue;
            // The HTTP/2 window is rpcscope's own HTTP/2 client's: walked with that transport.
            if (name == u"http2WindowEdit")
                page.setTransport(TransportKind::H2Grpc);
            const Scenario before = page.scenario();
            if (auto *line = qobject_cast<QLineEdit *>(w)) {
                if (qobject_cast<QComboBox *>(w->parentWidget()))
                    continue; // a combo box's own editor: the combo box is walked
                // A value the document accepts (a check is read as one when the document is).
                line->setText(name == u"checksEdit" ? QStringLiteral("p99<7ms") : line->text() + QStringLiteral("7"));
                // A client certificate and its key go together in a document: give the other one too.
                if (name == u"clientCertEdit" || name == u"clientKeyEdit") {
                    auto *other = page.findChild<QLineEdit *>(
                        name == u"clientCertEdit" ? QStringLiteral("clientKeyEdit") : QStringLiteral("clientCertEdit"));
                    if (other->text().isEmpty())
                        other->setText(QStringLiteral("other.pem"));
                }
            } else if (auto *spin = qobject_cast<QSpinBox *>(w)) {
                spin->setValue(spin->value() < spin->maximum() ? spin->value() + 1 : spin->value() - 1);
            } else if (auto *check = qobject_cast<QCheckBox *>(w)) {
                check->setChecked(!check->isChecked());
            } else if (auto *combo = qobject_cast<QComboBox *>(w)) {
                if (combo->isEditable())
                    combo->setEditText(QStringLiteral("10.0.0.7:50051"));
                else if (combo->count() > 1)
                    combo->setCurrentIndex((combo->currentIndex() + 1) % combo->count());
                else
                    continue; // one choice: nothing to change
            } else if (auto *text = qobject_cast<QPlainTextEdit *>(w)) {
                if (text->isReadOnly())
                    continue; // an output (Send once's reply), not an input
                text->setPlainText(QStringLiteral("{\"payload\":\"Nw==\"}"));
            } else {
                continue;
            }
            ++walked;
            const Scenario after = page.scenario();
            QVERIFY2(!(after == before), qPrintable(name + QStringLiteral(" changes no Scenario field")));
            // The field's value reads back through a document into the editor.
            QString error;
            const std::optional<Scenario> document = Scenario::fromJson(after.toJson(), &error);
            QVERIFY2(document, qPrintable(name + QStringLiteral(": ") + error));
            page.setScenario(*document);
            QVERIFY2(page.scenario() == after, qPrintable(name + QStringLiteral(" is lost through a document")));
            if (name == u"transportCombo"
                || name == u"http2WindowEdit") // back to gRPC, where every field means something
                combo(page, QStringLiteral("transportCombo"))->setCurrentIndex(0);
            if (name == u"securityCombo")
                security->setCurrentIndex(security->findData(QStringLiteral("tls")));
        }
        QVERIFY2(walked >= 35, qPrintable(QString::number(walked)));
    }

    void theHttp2WindowIsTheOwnClientsAlone()
    {
        // Shown, saved and applied with rpcscope's own HTTP/2 client; with gRPC C++ hidden and left out of the
        // document (core refuses it there), kept in the field for a switch back.
        ScenarioPage page;
        page.setSchema(builtinBenchSchema());
        page.setBuiltinTargets({ { TransportKind::Grpc, QStringLiteral("127.0.0.1:1") },
            { TransportKind::H2Grpc, QStringLiteral("127.0.0.1:1") } });
        page.setMethod(QStringLiteral("rpcscope.bench.v1.Bench/Echo"));
        auto *window = page.findChild<QLineEdit *>(QStringLiteral("http2WindowEdit"));
        QVERIFY(window);
        QVERIFY(window->isHidden()); // gRPC C++ first
        page.setTransport(TransportKind::H2Grpc);
        QVERIFY(!window->isHidden());
        window->setText(QStringLiteral("256KiB"));
        QCOMPARE(page.scenario().http2Window, QStringLiteral("256KiB"));
        QString error;
        auto prepared = page.prepare(&error);
        QVERIFY2(prepared, qPrintable(error));
        QCOMPARE(prepared->spec.target.http2Window, 256 * 1024);
        // A Compare stacks cell over gRPC C++ from this scenario goes without it.
        ScenarioPage::Variation overGrpc;
        overGrpc.cell.transport = TransportKind::Grpc;
        overGrpc.cell.codec = Codec::Protobuf;
        prepared = page.prepare(&error, &overGrpc, ScenarioPage::BuiltinStart::Never);
        QVERIFY2(prepared, qPrintable(error));
        page.setTransport(TransportKind::Grpc);
        QVERIFY(window->isHidden());
        QVERIFY(page.scenario().http2Window.isEmpty());
        prepared = page.prepare(&error);
        QVERIFY2(prepared, qPrintable(error));
        page.setTransport(TransportKind::H2Grpc);
        QCOMPARE(page.scenario().http2Window, QStringLiteral("256KiB"));
        // A value core refuses names the field.
        window->setText(QStringLiteral("1KiB"));
        QVERIFY(!page.prepare(&error));
        QVERIFY2(error.contains(QStringLiteral("HTTP/2 window")), qPrintable(error));
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
        document.exports = { { QStringLiteral("csv"), QStringLiteral("/tmp/run.csv"), QString() } };
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
        // The GUI runs it although it applies none of them (exports to a folder of another machine included).
        ScenarioPage runnable;
        runnable.setSchema(builtinBenchSchema());
        runnable.setBuiltinTargets({ { TransportKind::Grpc, QStringLiteral("127.0.0.1:1") } });
        document.exports = { { QStringLiteral("csv"), QStringLiteral("/no/such/folder/run.csv"), QString() } };
        document.target = QStringLiteral("builtin");
        document.readyPattern.clear(); // for a server command only
        runnable.setScenario(document);
        QString error;
        const auto prepared = runnable.prepare(&error);
        QVERIFY2(prepared, qPrintable(error));
        QCOMPARE(prepared->spec.target.address, QStringLiteral("127.0.0.1:1"));
        // The A/B dialog's choices go into the document, as a change to save.
        QSignalSpy edited(&page, &ScenarioPage::edited);
        page.setAbDesign(QStringLiteral("300"), 2, QString(), QStringLiteral("3%"));
        QCOMPARE(edited.count(), 1);
        QCOMPARE(page.scenario().abBlock, QStringLiteral("300"));
        QCOMPARE(page.scenario().abRestarts, 2);
        QVERIFY(page.scenario().abConnection.isEmpty());
        QCOMPARE(page.scenario().abThreshold, QStringLiteral("3%"));
        page.setAbDesign(QStringLiteral("300"), 2, QString(), QStringLiteral("3%"));
        QCOMPARE(edited.count(), 1); // the same again is no change
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
