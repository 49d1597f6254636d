// The window offscreen, driven through its widgets as a user would; the built-in server is real.
#include "mainwindow.h"
#include "matrixpage.h"
#include "qcp.h"
#include "runcontroller.h"
#include "runpage.h"
#include "scenariopage.h"
#include "scheduleeditor.h"
#include "schemapanel.h"
#include "targetspanel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QSignalSpy>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QTest>
#include <QTreeWidget>

using namespace rpcscope;

class TestGui : public QObject
{
    Q_OBJECT

    std::unique_ptr<MainWindow> m_window;

    template<typename T>
    T *child(const char *name)
    {
        T *widget = m_window->findChild<T *>(QLatin1String(name));
        if (!widget)
            qFatal("no widget %s", name);
        return widget;
    }

    QString summaryValue(const QString &metric)
    {
        QTableWidget *table = m_window->runPage()->summaryTable();
        for (int row = 0; row < table->rowCount(); ++row) {
            if (table->item(row, 0)->text() == metric)
                return table->item(row, 1)->text();
        }
        return QString();
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_window = std::make_unique<MainWindow>();
        QString error;
        QVERIFY2(m_window->startEmbeddedDefault(&error, QStringLiteral(RPCSCOPE_CLI)), qPrintable(error));
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    }

    void defaultScenarioIsReady()
    {
        QVERIFY(!m_window->windowIcon().isNull()); // the SVG icon from the resources
        QVERIFY(!m_window->windowIcon().pixmap(256, 256).isNull());
        QCOMPARE(m_window->scenarioPage()->method(), QStringLiteral("rpcscope.bench.v1.Bench/Echo"));
        QCOMPARE(m_window->schemaPanel()->selectedMethod(), QStringLiteral("rpcscope.bench.v1.Bench/Echo"));
        QCOMPARE(child<QLineEdit>("fillEdit")->text(), QStringLiteral("payload=1KiB"));
        QVERIFY(m_window->scenarioPage()->validateNow());
        QVERIFY(child<QPushButton>("runButton")->isEnabled());
        QVERIFY(!child<QPushButton>("stopButton")->isEnabled());
    }

    void defaultRunFillsHistogramAndTables()
    {
        child<QSpinBox>("callsEdit")->setValue(500);
        QTest::mouseClick(child<QPushButton>("runButton"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!m_window->runController()->isRunning(), 30000);
        QCOMPARE(m_window->runController()->lastSnapshot().callsOk(), 500ULL);
        QVERIFY(m_window->runPage()->histogramPlot()->graph(0)->dataCount() > 0);
        QCOMPARE(summaryValue(QStringLiteral("Calls")), QStringLiteral("500"));
        QVERIFY(summaryValue(QStringLiteral("p99.9")).endsWith(QStringLiteral("s"))); // a latency with its unit
        QCOMPARE(summaryValue(QStringLiteral("Bytes/call received")), QStringLiteral("1.0 KiB"));
        QTableWidget *status = m_window->runPage()->statusTable();
        QCOMPARE(status->rowCount(), 1);
        QCOMPARE(status->item(0, 0)->text(), QStringLiteral("OK"));
        QCOMPARE(status->item(0, 1)->text(), QStringLiteral("500"));
        QVERIFY(child<QPushButton>("runButton")->isEnabled());
        QVERIFY(child<QLabel>("statusRate")->text().endsWith(QStringLiteral("req/s")));
        // The built-in server is a child process (rpcscope-cli next to the test's own build), sampled on its own.
        QVERIFY(m_window->runController()->lastSnapshot().hasServerStats);
        QVERIFY(!summaryValue(QStringLiteral("Server CPU/call")).isEmpty());
    }

    void everyTransportRunsFromTheGui_data()
    {
        QTest::addColumn<int>("transport");
        QTest::addColumn<QString>("codec");
        QTest::addColumn<QString>("targetPrefix");
        QTest::newRow("http json") << int(TransportKind::Http) << QStringLiteral("json") << QStringLiteral("http://127.0.0.1:");
        QTest::newRow("http msgpack") << int(TransportKind::Http) << QStringLiteral("msgpack") << QStringLiteral("http://127.0.0.1:");
        QTest::newRow("msgpack-rpc") << int(TransportKind::Msgpack) << QStringLiteral("msgpack") << QStringLiteral("127.0.0.1:");
        QTest::newRow("no rpc") << int(TransportKind::InProcess) << QStringLiteral("json") << QString();
        QTest::newRow("grpc again") << int(TransportKind::Grpc) << QStringLiteral("protobuf") << QStringLiteral("127.0.0.1:");
    }
    void everyTransportRunsFromTheGui()
    {
        QFETCH(int, transport);
        QFETCH(QString, codec);
        QFETCH(QString, targetPrefix);
        auto *transports = child<QComboBox>("transportCombo");
        auto *codecs = child<QComboBox>("codecCombo");
        transports->setCurrentIndex(transports->findData(transport));
        codecs->setCurrentIndex(codecs->findText(codec));
        // The target follows the transport to the matching built-in server.
        auto *target = child<QComboBox>("targetEdit");
        if (targetPrefix.isEmpty())
            QVERIFY(!target->isEnabled());
        else
            QVERIFY2(target->currentText().startsWith(targetPrefix), qPrintable(target->currentText()));
        child<QSpinBox>("callsEdit")->setValue(300);
        QVERIFY2(m_window->scenarioPage()->validateNow(), qPrintable(child<QLabel>("requestStatus")->text()));
        QTest::mouseClick(child<QPushButton>("runButton"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!m_window->runController()->isRunning(), 30000);
        QCOMPARE(m_window->runController()->lastSnapshot().callsOk(), 300ULL);
        QCOMPARE(summaryValue(QStringLiteral("Calls")), QStringLiteral("300"));
        QVERIFY(m_window->runPage()->histogramPlot()->graph(0)->dataCount() > 0);
        // gRPC carries protobuf only: the other codecs are disabled there.
        if (transport == int(TransportKind::Grpc)) {
            codecs->setCurrentIndex(codecs->findText(QStringLiteral("json")));
            QVERIFY(!m_window->scenarioPage()->validateNow());
            QVERIFY(child<QLabel>("requestStatus")->text().contains(QStringLiteral("protobuf only")));
            codecs->setCurrentIndex(codecs->findText(QStringLiteral("protobuf")));
            QVERIFY(m_window->scenarioPage()->validateNow());
        }
    }

    void stackComparisonDrawsBarsCurvesAndTable()
    {
        m_window->schemaPanel()->selectMethod(QStringLiteral("rpcscope.bench.v1.Bench/Sum"));
        m_window->scenarioPage()->setMethod(QStringLiteral("rpcscope.bench.v1.Bench/Sum"));
        child<QSpinBox>("callsEdit")->setValue(200);
        child<QCheckBox>("matrix_json")->setChecked(false); // keep it short: protobuf and msgpack only
        child<QLineEdit>("matrixPayloads")->setText(QStringLiteral("nums=2; nums=500"));
        MatrixPage *page = m_window->matrixPage();
        QSignalSpy finished(page, &MatrixPage::finished);
        QTest::mouseClick(child<QPushButton>("matrixRun"), Qt::LeftButton);
        QVERIFY(page->isRunning());
        QVERIFY(finished.wait(60000));
        // Per payload: grpc/protobuf, http/protobuf, http/msgpack, msgpack/msgpack, none/protobuf, none/msgpack.
        QCOMPARE(page->results().size(), 12);
        for (const MatrixResult &r : page->results())
            QVERIFY2(r.run.callsOk() == 200, qPrintable(r.cell.payload + r.cell.label()));
        QCOMPARE(page->barChart()->plottableCount(), 6);
        QCOMPARE(page->barChart()->plottable(0)->interface1D()->dataCount(), 2);
        QVERIFY(!page->sizeChart()->isHidden()); // two sizes of one field: a size sweep
        QCOMPARE(page->sizeChart()->graphCount(), 6);
        QCOMPARE(page->table()->rowCount(), 12);
        QCOMPARE(page->table()->item(0, 1)->text(), QStringLiteral("grpc/protobuf"));
        QVERIFY(page->table()->item(0, 8)->text().endsWith(QLatin1Char('%'))); // its codec share
        // A payload that does not fit the request is refused before anything runs.
        child<QLineEdit>("matrixPayloads")->setText(QStringLiteral("nope=3"));
        QTest::mouseClick(child<QPushButton>("matrixRun"), Qt::LeftButton);
        QVERIFY(!page->isRunning());
        QVERIFY2(child<QLabel>("matrixProgress")->text().contains(QStringLiteral("nope")),
                 qPrintable(child<QLabel>("matrixProgress")->text()));
        child<QCheckBox>("matrix_json")->setChecked(true);
        m_window->schemaPanel()->selectMethod(QStringLiteral("rpcscope.bench.v1.Bench/Echo"));
        m_window->scenarioPage()->setMethod(QStringLiteral("rpcscope.bench.v1.Bench/Echo"));
        m_window->scenarioPage()->setFills(QStringLiteral("payload=1KiB"));
    }

    void schemaFromReflectionAndProtoset()
    {
        // Reflection runs on a worker thread: the GUI thread keeps serving events meanwhile.
        QSignalSpy loaded(m_window.get(), &MainWindow::schemaLoaded);
        QSignalSpy failed(m_window.get(), &MainWindow::schemaFailed);
        m_window->loadFromReflection(m_window->builtinAddress());
        QVERIFY(loaded.wait(15000));
        QVERIFY(loaded.first().first().toString().contains(QStringLiteral("reflection")));
        QVERIFY(m_window->schemaPanel()->findChild<QTreeWidget *>()->findItems(QStringLiteral("rpcscope.bench.v1.Bench"),
                                                                              Qt::MatchExactly).size() == 1);
        // A server that is not there: an error listed, the schema kept, within the deadline.
        m_window->loadFromReflection(QStringLiteral("127.0.0.1:1"));
        QVERIFY(failed.wait(15000));
        QVERIFY2(failed.first().first().toString().contains(QStringLiteral("127.0.0.1:1")), qPrintable(failed.first().first().toString()));
        QVERIFY(m_window->scenarioPage()->validateNow());

        QTemporaryDir dir;
        const QString protoset = dir.filePath(QStringLiteral("bench.protoset"));
        QProcess protoc;
        protoc.start(QStringLiteral("protoc"), {QStringLiteral("-I"), QStringLiteral(RPCSCOPE_TEST_DATA "/../../proto"),
                                                QStringLiteral("--include_imports"), QStringLiteral("--descriptor_set_out=") + protoset,
                                                QStringLiteral("rpcscope/bench/v1/bench.proto")});
        QVERIFY(protoc.waitForFinished(30000));
        QVERIFY(m_window->openProtosets({protoset}));
        QFile garbage(dir.filePath(QStringLiteral("garbage.protoset")));
        QVERIFY(garbage.open(QIODevice::WriteOnly));
        garbage.write("not a protoset");
        garbage.close();
        QVERIFY(!m_window->openProtosets({garbage.fileName()}));
        QVERIFY(m_window->scenarioPage()->validateNow()); // the previous schema stays
        // Leave a schema whose source outlives this test (the protoset's folder goes away with it).
        QVERIFY(m_window->openProtoFiles({QStringLiteral(RPCSCOPE_TEST_DATA "/../../proto/rpcscope/bench/v1/bench.proto")}));
    }

    void scenarioSavedAndReopened()
    {
        QVERIFY(!m_window->isWindowModified() || true);
        child<QLineEdit>("durationEdit")->setText(QStringLiteral("7s"));
        QVERIFY(m_window->isWindowModified()); // an edit marks the document
        child<QPlainTextEdit>("metadataEdit")->setPlainText(QStringLiteral("x-team: perf"));
        child<QLineEdit>("maxReceiveEdit")->setText(QStringLiteral("16MiB"));
        QVERIFY(m_window->scenarioPage()->validateNow());
        const Scenario before = m_window->scenarioPage()->scenario();
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("echo.rpcscope.json"));
        QString error;
        QVERIFY2(m_window->saveScenario(path, &error), qPrintable(error));
        QVERIFY(!m_window->isWindowModified());
        QVERIFY(m_window->windowTitle().startsWith(QStringLiteral("echo.rpcscope.json")));
        // Change everything, then reopen: the editor shows the saved document again.
        child<QLineEdit>("durationEdit")->setText(QStringLiteral("99s"));
        child<QPlainTextEdit>("metadataEdit")->clear();
        QVERIFY2(m_window->openScenario(path, &error), qPrintable(error));
        QVERIFY(m_window->scenarioPage()->scenario() == before);
        QCOMPARE(child<QLineEdit>("durationEdit")->text(), QStringLiteral("7s"));
        QVERIFY(!m_window->isWindowModified());
        // The CLI runs the very same file.
        QProcess cli;
        cli.start(QStringLiteral(RPCSCOPE_CLI), {QStringLiteral("run"), QStringLiteral("--scenario"), path, QStringLiteral("-z"),
                                                 QStringLiteral("1s"), QStringLiteral("-n"), QStringLiteral("200")});
        QVERIFY(cli.waitForFinished(60000));
        QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
        QVERIFY(cli.readAllStandardOutput().contains("[OK]\t200 responses"));
        // A broken document: a clear error, nothing changed.
        QFile broken(dir.filePath(QStringLiteral("broken.rpcscope.json")));
        QVERIFY(broken.open(QIODevice::WriteOnly));
        broken.write("{\"rpcscope_scenario\": 1, \"load\": {\"calls\": -1}}");
        broken.close();
        QVERIFY(!m_window->openScenario(broken.fileName(), &error));
        QVERIFY2(error.contains(QStringLiteral("load.calls")), qPrintable(error));
        QCOMPARE(m_window->scenarioPath(), path);
        child<QLineEdit>("durationEdit")->clear();
        child<QPlainTextEdit>("metadataEdit")->clear();
        child<QLineEdit>("maxReceiveEdit")->clear();
    }

    void targetsDockPointsTheScenario()
    {
        QTreeWidget *tree = m_window->targetsPanel()->tree();
        QTreeWidgetItem *builtin = tree->topLevelItem(0);
        QCOMPARE(builtin->childCount(), 3);
        QTreeWidgetItem *http = nullptr;
        for (int i = 0; i < builtin->childCount(); ++i) {
            QVERIFY2(builtin->child(i)->text(2).startsWith(QStringLiteral("running (pid")), qPrintable(builtin->child(i)->text(2)));
            if (builtin->child(i)->text(1).startsWith(QStringLiteral("http://")))
                http = builtin->child(i);
        }
        QVERIFY(http);
        Q_EMIT tree->itemActivated(http, 0);
        QCOMPARE(m_window->scenarioPage()->transport(), TransportKind::Http);
        QCOMPARE(child<QComboBox>("targetEdit")->currentText(), http->text(1));
        QVERIFY(m_window->scenarioPage()->validateNow());
        m_window->scenarioPage()->setTransport(TransportKind::Grpc);
        QVERIFY(m_window->scenarioPage()->validateNow());
    }

    void stopKeepsMeasurements()
    {
        child<QSpinBox>("callsEdit")->setValue(0);
        child<QLineEdit>("durationEdit")->setText(QStringLiteral("60s"));
        QVERIFY(m_window->scenarioPage()->validateNow());
        m_window->startRun();
        QVERIFY(m_window->runController()->isRunning());
        QVERIFY(child<QPushButton>("stopButton")->isEnabled());
        QTRY_VERIFY_WITH_TIMEOUT(m_window->runController()->lastSnapshot().callsCompleted() > 50, 10000);
        QTest::mouseClick(child<QPushButton>("stopButton"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!m_window->runController()->isRunning(), 10000);
        const RunSnapshot last = m_window->runController()->lastSnapshot();
        QCOMPARE(last.state, RunState::Stopped);
        QVERIFY(last.callsOk() > 50);
        QCOMPARE(last.callsFailed(), 0ULL);
        QCOMPARE(summaryValue(QStringLiteral("Calls")), QString::number(last.callsCompleted()));
        child<QLineEdit>("durationEdit")->clear();
        child<QSpinBox>("callsEdit")->setValue(500);
    }

    void openLoopRateShowsBothLatencies()
    {
        child<QLineEdit>("rateEdit")->setText(QStringLiteral("500"));
        child<QSpinBox>("callsEdit")->setValue(250);
        QVERIFY(m_window->scenarioPage()->validateNow());
        m_window->startRun();
        QTRY_VERIFY_WITH_TIMEOUT(!m_window->runController()->isRunning(), 30000);
        const RunSnapshot last = m_window->runController()->lastSnapshot();
        QVERIFY(last.openLoop);
        QCOMPARE(last.callsOk(), 250ULL);
        QVERIFY(last.elapsed >= std::chrono::milliseconds(490)); // 250 calls at 500/s
        QVERIFY(summaryValue(QStringLiteral("Intended rate")).startsWith(QStringLiteral("500")));
        QVERIFY(!summaryValue(QStringLiteral("p99 from actual send")).isEmpty());
        child<QLineEdit>("rateEdit")->setText(QStringLiteral("fast"));
        QVERIFY(!m_window->scenarioPage()->validateNow());
        QVERIFY(child<QLabel>("requestStatus")->text().contains(QStringLiteral("Rate")));
        child<QLineEdit>("rateEdit")->clear();
        child<QSpinBox>("callsEdit")->setValue(500);
        QVERIFY(m_window->scenarioPage()->validateNow());
    }

    void concurrencyScheduleFromTheGui()
    {
        auto *schedule = m_window->findChild<ScheduleEditor *>(QStringLiteral("concurrencySchedule"));
        QVERIFY(schedule);
        QVERIFY(!child<QLineEdit>("concurrencyStart")->isVisibleTo(m_window.get())); // folded while off
        schedule->setValues(QStringLiteral("step"), QStringLiteral("1"), QStringLiteral("1"), QStringLiteral("3"),
                            QStringLiteral("bad"), QStringLiteral("600ms"));
        QVERIFY(child<QLineEdit>("concurrencyStart")->isVisibleTo(m_window.get()));
        QVERIFY(!m_window->scenarioPage()->validateNow());
        QVERIFY2(child<QLabel>("requestStatus")->text().contains(QStringLiteral("Step duration")),
                 qPrintable(child<QLabel>("requestStatus")->text()));
        child<QLineEdit>("concurrencyStepDuration")->setText(QStringLiteral("200ms"));
        child<QSpinBox>("callsEdit")->setValue(0);
        child<QLineEdit>("warmupEdit")->setText(QStringLiteral("100ms"));
        QVERIFY(m_window->scenarioPage()->validateNow());
        m_window->startRun();
        QTRY_VERIFY_WITH_TIMEOUT(!m_window->runController()->isRunning(), 30000);
        const RunSnapshot last = m_window->runController()->lastSnapshot();
        QCOMPARE(last.state, RunState::Finished);
        QVERIFY(last.callsOk() > 0);
        QVERIFY(last.warmupCalls > 0);
        QVERIFY(last.elapsed >= std::chrono::milliseconds(600));
        QVERIFY(last.elapsed < std::chrono::seconds(5));
        schedule->setChecked(false);
        child<QLineEdit>("warmupEdit")->setText(QStringLiteral("0"));
        child<QSpinBox>("callsEdit")->setValue(500);
        QVERIFY(m_window->scenarioPage()->validateNow());
    }

    void invalidJsonDisablesRunWithReason()
    {
        auto *editor = child<QPlainTextEdit>("requestEditor");
        const QString good = editor->toPlainText();
        editor->setPlainText(QStringLiteral("{\"payload\": "));
        QVERIFY(!m_window->scenarioPage()->validateNow());
        QVERIFY(!child<QPushButton>("runButton")->isEnabled());
        QVERIFY2(child<QLabel>("requestStatus")->text().contains(QStringLiteral("invalid JSON")),
                 qPrintable(child<QLabel>("requestStatus")->text()));
        editor->setPlainText(QStringLiteral("{\"paylod\": \"\"}"));
        QVERIFY(!m_window->scenarioPage()->validateNow());
        QVERIFY(child<QLabel>("requestStatus")->text().contains(QStringLiteral("paylod")));
        editor->setPlainText(good);
        QVERIFY(m_window->scenarioPage()->validateNow());
        QVERIFY(child<QPushButton>("runButton")->isEnabled());
    }

    void badProtoShowsErrorsAndKeepsSchema()
    {
        const QString broken = QStringLiteral(RPCSCOPE_TEST_DATA "/broken/syntax.proto");
        QVERIFY(!m_window->openProtoFiles({broken}));
        QListWidget *errors = m_window->schemaPanel()->errorList();
        QVERIFY(errors->isVisibleTo(m_window.get()));
        QVERIFY(errors->count() >= 1);
        QVERIFY2(errors->item(0)->text().startsWith(broken + QStringLiteral(":6:3:")), qPrintable(errors->item(0)->text()));
        QTreeWidget *tree = m_window->schemaPanel()->tree();
        QCOMPARE(tree->topLevelItem(0)->text(0), QStringLiteral("rpcscope.bench.v1.Bench"));
    }

    void loadProtoAndPickMethod()
    {
        QVERIFY(m_window->openProtoFiles({QStringLiteral(RPCSCOPE_TEST_DATA "/imports/shapes.proto")},
                                         {QStringLiteral(RPCSCOPE_TEST_DATA "/imports")}));
        QVERIFY(!m_window->schemaPanel()->errorList()->isVisibleTo(m_window.get()));
        QTreeWidget *tree = m_window->schemaPanel()->tree();
        QCOMPARE(tree->topLevelItem(0)->text(0), QStringLiteral("test.shapes.Shapes"));
        QTreeWidgetItem *watch = tree->topLevelItem(0)->child(2);
        QCOMPARE(watch->text(0), QStringLiteral("Watch"));
        QVERIFY(watch->isDisabled()); // streaming: not runnable yet
        QVERIFY(m_window->schemaPanel()->selectMethod(QStringLiteral("test.shapes.Shapes/Get")));
        QCOMPARE(m_window->scenarioPage()->method(), QStringLiteral("test.shapes.Shapes/Get"));
        QVERIFY(child<QPlainTextEdit>("requestEditor")->toPlainText().contains(QStringLiteral("\"points\"")));
    }
};

QTEST_MAIN(TestGui)
#include "tst_gui.moc"
