// The window offscreen, driven through its widgets as a user would; the built-in server is real. Stored runs,
// comparisons, exports and A/B runs are in tst_guiresults.cpp.
#include "builtinservers.h"
#include "flamegraphview.h"
#include "guifixture.h"
#include "layoutmemory.h"
#include "mainwindow.h"
#include "matrixpage.h"
#include "metadataeditor.h"
#include "profile/profiler.h"
#include "profilepanel.h"
#include "qcp.h"
#include "resultscontroller.h"
#include "runcontroller.h"
#include "runpage.h"
#include "runrecorder.h"
#include "scenario/runspec.h"
#include "scenario/scenario.h"
#include "scenariopage.h"
#include "scheduleeditor.h"
#include "schemapanel.h"
#include "sourceviewer.h"
#include "store/runstore.h"
#include "targetspanel.h"

#include <QAction>
#include <QDir>
#include <QJsonArray>
#include <QMessageBox>
#include <QScopeGuard>
#include <QScrollBar>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTextBlock>
#include <QToolButton>

#include <csignal>

#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeWidget>

using namespace rpcscope;

class TestGui : public GuiFixture {
    Q_OBJECT

private:
    /// Compare stacks set for Sum: @p calls calls a cell, @p payloads, @p callers.
    void useSumForStacks(int calls, const QString &payloads, const QString &callers)
    {
        m_window->schemaPanel()->selectMethod(QStringLiteral("rpcscope.bench.v1.Bench/Sum"));
        m_window->scenarioPage()->setMethod(QStringLiteral("rpcscope.bench.v1.Bench/Sum"));
        child<QSpinBox>("callsEdit")->setValue(calls);
        child<QLineEdit>("matrixPayloads")->setText(payloads);
        child<QLineEdit>("matrixCallers")->setText(callers);
    }
    /// Back to what the other tests expect: Echo with 1 KiB, no stacks, no caller levels.
    void backToTheFixturesEcho()
    {
        m_window->matrixPage()->setStacks({});
        child<QLineEdit>("matrixCallers")->clear();
        m_window->schemaPanel()->selectMethod(QStringLiteral("rpcscope.bench.v1.Bench/Echo"));
        m_window->scenarioPage()->setMethod(QStringLiteral("rpcscope.bench.v1.Bench/Echo"));
        m_window->scenarioPage()->setFills(QStringLiteral("payload=1KiB"));
    }

private Q_SLOTS:
    void initTestCase() { openWindow(); }

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
        QVERIFY(child<QLabel>("statusRate")->text().endsWith(QStringLiteral("OK calls/s")));
        // The built-in server is a child process (rpcscope-cli next to the test's own build), sampled on its own.
        QVERIFY(m_window->runController()->lastSnapshot().hasServerStats);
        QVERIFY(!summaryValue(QStringLiteral("Server CPU/call")).isEmpty());
    }

    void sendOnceShowsTheReply()
    {
        const auto reset = qScopeGuard([this] {
            child<QLineEdit>("maxReceiveEdit")->clear();
            m_window->scenarioPage()->setMethod(QStringLiteral("rpcscope.bench.v1.Bench/Echo"));
            m_window->scenarioPage()->settingsTabs()->setCurrentIndex(0);
        });
        m_window->scenarioPage()->setMethod(QStringLiteral("rpcscope.bench.v1.Bench/Sum"));
        child<QPlainTextEdit>("requestEditor")->setPlainText(QStringLiteral(R"({"nums": [1, 2, 39]})"));
        QVERIFY(m_window->scenarioPage()->validateNow());
        auto *send = child<QPushButton>("sendOnceButton");
        QVERIFY(send->isEnabled());
        QTest::mouseClick(send, Qt::LeftButton);
        QVERIFY(!send->isEnabled()); // one at a time
        QTRY_VERIFY_WITH_TIMEOUT(!m_window->runLauncher()->isSending(), 30000);
        const QString reply = m_window->scenarioPage()->replyText();
        QVERIFY2(reply.contains(QStringLiteral("Status: OK\n")), qPrintable(reply));
        QVERIFY2(reply.contains(QStringLiteral("Reply:\n{\n \"result\": \"42\"\n}")), qPrintable(reply));
        QTabWidget *tabs = m_window->scenarioPage()->settingsTabs();
        QCOMPARE(tabs->tabText(tabs->currentIndex()), QStringLiteral("Reply"));
        QVERIFY(send->isEnabled());
        QVERIFY(!m_window->runController()->isRunning()); // no run, nothing in the history

        // The keyboard way, from the request editor; a failure shows its status and error in full.
        m_window->scenarioPage()->setMethod(QStringLiteral("rpcscope.bench.v1.Bench/Echo"));
        child<QPlainTextEdit>("requestEditor")->setPlainText(QStringLiteral(R"({"responseSize": 100})"));
        child<QLineEdit>("maxReceiveEdit")->setText(QStringLiteral("10"));
        QVERIFY(m_window->scenarioPage()->validateNow());
        child<QPlainTextEdit>("requestEditor")->setFocus();
        QTest::keyClick(child<QPlainTextEdit>("requestEditor"), Qt::Key_Return, Qt::ControlModifier);
        QTRY_VERIFY_WITH_TIMEOUT(!m_window->runLauncher()->isSending(), 30000);
        const QString failed = m_window->scenarioPage()->replyText();
        QVERIFY2(failed.contains(QStringLiteral("Status: RESOURCE_EXHAUSTED: ")), qPrintable(failed));
        QVERIFY2(!child<QPlainTextEdit>("requestEditor")->toPlainText().contains(u'\n'), "Ctrl+Enter typed a newline");
    }

    void serverCommandScenarioAsksThenRuns()
    {
        // Whatever happens below, the next tests start from the default scenario.
        const auto reset = qScopeGuard([this] {
            m_window->scenarioDocuments()->setTrustAsker([](const QString &, const QString &) { return false; });
            m_window->findChild<QAction *>(QStringLiteral("actionNewScenario"))->trigger();
        });
        QTemporaryDir dir;
        const QString command = QStringLiteral("'%1' serve grpc --port {port}").arg(QStringLiteral(RPCSCOPE_CLI));
        Scenario document;
        document.method = QStringLiteral("rpcscope.bench.v1.Bench/Echo");
        document.target = command;
        document.calls = 150;
        document.concurrency = 3;
        const QString path = dir.filePath(QStringLiteral("cmd.rpcscope.json"));
        QString error;
        QVERIFY(document.save(path, &error));
        QStringList asked;
        m_window->scenarioDocuments()->setTrustAsker([&asked](const QString &, const QString &c) {
            asked << c;
            return false;
        });
        QVERIFY2(m_window->openScenario(path, &error), qPrintable(error));
        QCOMPARE(asked, QStringList { command });
        QCOMPARE(m_window->scenarioPage()->scenario().target, QStringLiteral("builtin")); // refused: nothing starts
        m_window->scenarioDocuments()->setTrustAsker([](const QString &, const QString &) { return true; });
        QVERIFY(m_window->openScenario(path, &error));
        QCOMPARE(m_window->scenarioPage()->scenario().target, command);
        m_window->startRun();
        QTRY_VERIFY_WITH_TIMEOUT(
            m_window->runController()->isRunning() || m_window->runController()->lastSnapshot().callsOk() == 150,
            20000);
        QTRY_VERIFY_WITH_TIMEOUT(!m_window->runController()->isRunning(), 30000);
        QCOMPARE(m_window->runController()->lastSnapshot().callsOk(), 150ULL);
        QVERIFY(m_window->runController()->lastSnapshot().hasServerStats); // the command's CPU and RSS were sampled
        QCOMPARE(m_window->resultsController()->currentRun()->target, command);
        QCOMPARE(
            m_window->resultsController()->currentRun()->server.value(QStringLiteral("command")).toString(), command);

        // A command that exits at once: the run does not start, the window says why and stays usable.
        m_window->scenarioPage()->setTarget(QStringLiteral("sh -c 'echo bad server $1; exit 3' sh {port}"));
        m_window->startRun();
        QTRY_VERIFY_WITH_TIMEOUT(m_window->findChild<QMessageBox *>(QStringLiteral("serverCommandError")), 20000);
        auto *box = m_window->findChild<QMessageBox *>(QStringLiteral("serverCommandError"));
        QVERIFY2(box->text().contains(QStringLiteral("bad server")), qPrintable(box->text()));
        box->close();
        QVERIFY(child<QPushButton>("runButton")->isEnabled());
    }

    void aServerCommandRunsAsItsDocumentSays()
    {
        // Issue 34: the window kept only the command's text, so a document's ready pattern and timeout were dropped,
        // and a command that prints its address (no {port}; the pattern's capture group) could not run at all.
        const auto reset = qScopeGuard([this] {
            m_window->scenarioDocuments()->setTrustAsker([](const QString &, const QString &) { return false; });
            m_window->findChild<QAction *>(QStringLiteral("actionNewScenario"))->trigger();
        });
        QTemporaryDir dir;
        Scenario document;
        document.method = QStringLiteral("rpcscope.bench.v1.Bench/Echo");
        document.target = QStringLiteral("'%1' serve grpc --port 0").arg(QStringLiteral(RPCSCOPE_CLI));
        document.readyPattern = QStringLiteral("^([0-9.]+:[0-9]+)$");
        document.readyTimeout = QStringLiteral("25s");
        document.calls = 60;
        document.concurrency = 2;
        const QString path = dir.filePath(QStringLiteral("printed.rpcscope.json"));
        QString error;
        QVERIFY(document.save(path, &error));
        m_window->scenarioDocuments()->setTrustAsker([](const QString &, const QString &) { return true; });
        QVERIFY2(m_window->openScenario(path, &error), qPrintable(error));
        m_window->startRun();
        QTRY_VERIFY_WITH_TIMEOUT(
            m_window->runController()->lastSnapshot().callsOk() == 60 && !m_window->runController()->isRunning(),
            30000);
        const QJsonObject server = m_window->resultsController()->currentRun()->server;
        QCOMPARE(server.value(QStringLiteral("readyPattern")).toString(), document.readyPattern);
        QCOMPARE(server.value(QStringLiteral("readyTimeout")).toString(), QStringLiteral("25s"));
    }

    void theWindowAndTheCliStoreTheDocumentThatRan()
    {
        // Issue 34: the window stored the editor's document (with what it does not apply), the CLI the one it ran;
        // one RunSession now records both. The same document through both paths: the same stored document.
        const auto reset = qScopeGuard([this] {
            m_window->scenarioDocuments()->setTrustAsker([](const QString &, const QString &) { return false; });
            m_window->findChild<QAction *>(QStringLiteral("actionNewScenario"))->trigger();
        });
        QTemporaryDir dir;
        Scenario document;
        document.name = QStringLiteral("the same document");
        document.method = QStringLiteral("rpcscope.bench.v1.Bench/Echo");
        document.target = QStringLiteral("builtin");
        document.request = QByteArrayLiteral("{\"payload\": \"aGVsbG8=\"}");
        document.calls = 30;
        document.concurrency = 3;
        document.timeout = QStringLiteral("5s");
        document.checks = QStringList { QStringLiteral("error_rate<1%") };
        const QString path = dir.filePath(QStringLiteral("same.rpcscope.json"));
        QString error;
        QVERIFY(document.save(path, &error));
        QVERIFY2(m_window->openScenario(path, &error), qPrintable(error));
        m_window->startRun();
        QTRY_VERIFY_WITH_TIMEOUT(
            m_window->runController()->lastSnapshot().callsOk() == 30 && !m_window->runController()->isRunning(),
            30000);
        const QJsonObject fromWindow = m_window->resultsController()->currentRun()->scenario;

        QProcess cli;
        const QString db = dir.filePath(QStringLiteral("cli.db"));
        cli.start(QStringLiteral(RPCSCOPE_CLI),
            { QStringLiteral("run"), QStringLiteral("--scenario"), path, QStringLiteral("--db"), db });
        QVERIFY(cli.waitForFinished(60000));
        QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
        RunStore store;
        QVERIFY2(store.open(db, &error, RunStore::OpenMode::ReadOnly), qPrintable(error));
        const std::optional<RunRecord> fromCli = store.load(store.resolve(QStringLiteral("last"), &error), &error);
        QVERIFY2(fromCli, qPrintable(error));
        QCOMPARE(QJsonDocument(fromWindow).toJson(), QJsonDocument(fromCli->scenario).toJson());
        QCOMPARE(m_window->resultsController()->currentRun()->target, fromCli->target);
        QCOMPARE(m_window->resultsController()->currentRun()->name, fromCli->name);
    }

    void everyTransportRunsFromTheGui_data()
    {
        QTest::addColumn<int>("transport");
        QTest::addColumn<QString>("codec");
        QTest::addColumn<QString>("targetPrefix");
        QTest::newRow("http json") << int(TransportKind::Http) << QStringLiteral("json")
                                   << QStringLiteral("http://127.0.0.1:");
        QTest::newRow("http msgpack") << int(TransportKind::Http) << QStringLiteral("msgpack")
                                      << QStringLiteral("http://127.0.0.1:");
        QTest::newRow("msgpack-rpc") << int(TransportKind::Msgpack) << QStringLiteral("msgpack")
                                     << QStringLiteral("127.0.0.1:");
        QTest::newRow("no rpc") << int(TransportKind::InProcess) << QStringLiteral("json") << QString();
        QTest::newRow("grpc again") << int(TransportKind::Grpc) << QStringLiteral("protobuf")
                                    << QStringLiteral("127.0.0.1:");
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
        if (targetPrefix.isEmpty()) {
            // No RPC has no target: the row is gone rather than a greyed box; more callers than CPUs queue for one,
            // which the page says before the run.
            QVERIFY(!target->isEnabled());
            QVERIFY(!target->isVisibleTo(m_window.get()));
            const int before = child<QSpinBox>("concurrencyEdit")->value();
            child<QSpinBox>("concurrencyEdit")->setValue(64);
            QVERIFY(m_window->scenarioPage()->validateNow());
            QVERIFY2(child<QLabel>("requestStatus")->text().contains(QStringLiteral("queue for a core")),
                qPrintable(child<QLabel>("requestStatus")->text()));
            child<QSpinBox>("concurrencyEdit")->setValue(before);
        } else {
            QVERIFY(target->isVisibleTo(m_window.get()));
        }
        if (!targetPrefix.isEmpty())
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
        QVERIFY(!child<QCheckBox>("matrix_h2grpc")->isChecked()); // rpcscope's own gRPC client is asked for
        child<QCheckBox>("matrix_h2grpc")->setChecked(true);
        child<QLineEdit>("matrixPayloads")->setText(QStringLiteral("nums=2; nums=500"));
        MatrixPage *page = m_window->matrixPage();
        QSignalSpy finished(page, &MatrixPage::finished);
        QTest::mouseClick(child<QPushButton>("matrixRun"), Qt::LeftButton);
        QVERIFY(page->isRunning());
        QVERIFY(finished.wait(60000));
        // Per payload: grpc/protobuf, h2grpc/protobuf, http/protobuf, http/msgpack, msgpack/msgpack, none/protobuf,
        // none/msgpack.
        QCOMPARE(page->results().size(), 14);
        for (const MatrixResult &r : page->results())
            QVERIFY2(r.run.callsOk() == 200, qPrintable(r.cell.payload + r.cell.label()));
        QCOMPARE(page->barChart()->plottableCount(), 7);
        QCOMPARE(page->barChart()->plottable(0)->interface1D()->dataCount(), 2);
        // On its log latency axis each bar stands on the axis' bottom (a base of 0 drew it below the axis).
        QCOMPARE(page->barChart()->yAxis->scaleType(), QCPAxis::stLogarithmic);
        for (int i = 0; i < page->barChart()->plottableCount(); ++i) {
            auto *bars = qobject_cast<QCPBars *>(page->barChart()->plottable(i));
            QVERIFY(bars);
            QCOMPARE(bars->baseValue(), page->barChart()->yAxis->range().lower);
        }
        // Hovering a bar says which cell it is and its numbers.
        showResultsPage(page);
        page->barChart()->replot();
        auto *first = qobject_cast<QCPBars *>(page->barChart()->plottable(0));
        const QPointF top = first->dataPixelPosition(0); // the bar's top middle, its place in the group included
        const QString tip = page->barTipAt(top.toPoint() + QPoint(0, 4));
        QVERIFY2(tip.startsWith(QStringLiteral("grpc/protobuf, nums=")) && tip.contains(QStringLiteral("p99")),
            qPrintable(tip));
        QVERIFY(!page->sizeChart()->isHidden()); // two sizes of one field: a size sweep
        QCOMPARE(page->sizeChart()->graphCount(), 7);
        QCOMPARE(page->table()->rowCount(), 14);
        QCOMPARE(page->table()->item(0, 1)->text(), QStringLiteral("grpc/protobuf"));
        QCOMPARE(page->table()->findItems(QStringLiteral("h2grpc/protobuf"), Qt::MatchExactly).size(), 2);
        showResultsPage(page);
        saveScreenshot(QStringLiteral("gui-stacks-with-h2grpc"));
        QVERIFY(page->table()->item(0, 9)->text().endsWith(QLatin1Char('%'))); // its codec share
        // A payload that does not fit the request is refused before anything runs.
        child<QLineEdit>("matrixPayloads")->setText(QStringLiteral("nope=3"));
        QTest::mouseClick(child<QPushButton>("matrixRun"), Qt::LeftButton);
        QVERIFY(!page->isRunning());
        QVERIFY2(child<QLabel>("matrixProgress")->text().contains(QStringLiteral("nope")),
            qPrintable(child<QLabel>("matrixProgress")->text()));
        child<QCheckBox>("matrix_json")->setChecked(true);
        child<QCheckBox>("matrix_h2grpc")->setChecked(false);
        m_window->schemaPanel()->selectMethod(QStringLiteral("rpcscope.bench.v1.Bench/Echo"));
        m_window->scenarioPage()->setMethod(QStringLiteral("rpcscope.bench.v1.Bench/Echo"));
        m_window->scenarioPage()->setFills(QStringLiteral("payload=1KiB"));
    }

    void stacksWhoseTargetIsAServerCommand()
    {
        // A stack's target may be a server command, as with rpcscope-cli matrix --stack: started for each of its
        // cells (off the GUI thread), stopped after; one that cannot start is a failed cell, the others go on.
        useSumForStacks(50, QStringLiteral("nums=3"), QStringLiteral("1,2"));
        const QString cli = QStringLiteral("'%1' ").arg(QStringLiteral(RPCSCOPE_CLI));
        QTemporaryDir dir;
        const QString pids = dir.filePath(QStringLiteral("pids"));
        // The gRPC stack's server notes its pid, then becomes the server (exec keeps the pid).
        const QString noted = QStringLiteral("sh -c 'echo $$ >> \"%1\" && exec \"%2\" serve grpc --port \"$0\"' {port}")
                                  .arg(pids, QStringLiteral(RPCSCOPE_CLI));
        MatrixPage *page = m_window->matrixPage();
        page->setStacks(
            { { QStringLiteral("cmd"), TransportKind::Grpc, Codec::Protobuf, noted, QString(), QString(), QString() },
                { QStringLiteral("webcmd"), TransportKind::Http, Codec::Json,
                    cli + QStringLiteral("serve http --port {port}"), QString(),
                    QStringLiteral("/rpcscope.bench.v1.Bench/Sum"), QString() },
                { QStringLiteral("nope"), TransportKind::Grpc, Codec::Protobuf,
                    QStringLiteral("/nonexistent/rpcscope-server --port {port}"), QString(), QString(), QString() } });
        QString error;
        QVERIFY2(page->stacks(&error), qPrintable(error));
        QSignalSpy finished(page, &MatrixPage::finished);
        QSignalSpy cells(page, &MatrixPage::cellDone);
        QTest::mouseClick(child<QPushButton>("matrixRun"), Qt::LeftButton);
        QVERIFY2(page->isRunning(), qPrintable(child<QLabel>("matrixProgress")->text()));
        QVERIFY(finished.wait(90000));
        QCOMPARE(page->results().size(), 6); // 3 stacks x 2 levels
        for (const MatrixResult &r : page->results()) {
            if (r.cell.stack == u"nope") {
                QCOMPARE(r.run.callsOk(), 0ULL);
                QVERIFY2(r.failure.startsWith(QStringLiteral("Server command: ")), qPrintable(r.failure));
                continue;
            }
            QVERIFY2(r.run.callsOk() == 50, qPrintable(r.cell.label() + u' ' + r.failure));
            QVERIFY(r.run.hasServerStats); // the command's own process, sampled for CPU and memory
        }
        QCOMPARE(cells.size(), 4); // the cells that ran, for the history
        showResultsPage(page);
        saveScreenshot(QStringLiteral("gui-stacks-server-commands"));
        // A server per cell, each stopped after it.
        QFile pidFile(pids);
        QVERIFY(pidFile.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = pidFile.readAll().split('\n');
        QStringList started;
        for (const QByteArray &line : lines) {
            if (!line.trimmed().isEmpty())
                started << QString::fromLatin1(line.trimmed());
        }
        QCOMPARE(started.size(), 2);
        QVERIFY(started.at(0) != started.at(1));
        for (const QString &pid : std::as_const(started))
            QTRY_VERIFY_WITH_TIMEOUT(::kill(static_cast<pid_t>(pid.toLongLong()), 0) != 0, 10000);
        backToTheFixturesEcho();
    }

    void stoppingTheStackComparisonKeepsTheCellThatRan()
    {
        // Stop while the first of two long cells runs: that cell ends with what it measured, the second never starts.
        // (The page's own loop took the cell after the last one for the stopped cell's result: out of range.)
        useSumForStacks(5000000, QStringLiteral("nums=2"), QStringLiteral("1"));
        const QString grpc = m_window->builtinServers()->targets().value(TransportKind::Grpc);
        MatrixPage *page = m_window->matrixPage();
        page->setStacks(
            { { QStringLiteral("first"), TransportKind::Grpc, Codec::Protobuf, grpc, QString(), QString(), QString() },
                { QStringLiteral("second"), TransportKind::Grpc, Codec::Protobuf, grpc, QString(), QString(),
                    QString() } });
        QSignalSpy finished(page, &MatrixPage::finished);
        QSignalSpy cells(page, &MatrixPage::cellDone);
        QTest::mouseClick(child<QPushButton>("matrixRun"), Qt::LeftButton);
        QVERIFY(page->isRunning());
        auto *progress = child<QLabel>("matrixProgress");
        QTRY_VERIFY_WITH_TIMEOUT(progress->text().startsWith(QStringLiteral("Running 1 of 2")), 10000);
        QTest::mouseClick(child<QPushButton>("matrixStop"), Qt::LeftButton);
        QVERIFY(finished.wait(20000));
        QVERIFY(!page->isRunning());
        QCOMPARE(page->results().size(), 1);
        QCOMPARE(page->results().first().cell.stack, QStringLiteral("first"));
        QVERIFY(page->results().first().run.callsOk() < 5000000ULL);
        QCOMPARE(progress->text(),
            page->results().first().run.callsOk() > 0
                ? QStringLiteral("1 cell(s) done.")
                : QStringLiteral("1 cell(s) done, 1 FAILED (no call ended OK: see the table)."));
        QCOMPARE(cells.size(), page->results().first().failure.isEmpty() ? 1 : 0);
        QVERIFY(child<QPushButton>("matrixRun")->isEnabled());
        backToTheFixturesEcho();
    }

    void stackComparisonOfTheUsersStacks()
    {
        // Stacks of the user's, each with its own target (here the window's built-in servers, one by a URL with its
        // path) and one that cannot be reached, at two caller counts.
        useSumForStacks(100, QStringLiteral("nums=2"), QStringLiteral("1,4"));
        const QMap<TransportKind, QString> targets = m_window->builtinServers()->targets();
        MatrixPage *page = m_window->matrixPage();
        page->setStacks({ { QStringLiteral("mine"), TransportKind::Grpc, Codec::Protobuf,
                              targets.value(TransportKind::Grpc), QString(), QString(), QString() },
            // The HTTP path in the Method / path column (path=), as for a target that gives none.
            { QStringLiteral("web"), TransportKind::Http, Codec::Json, targets.value(TransportKind::Http), QString(),
                QStringLiteral("/rpcscope.bench.v1.Bench/Sum"), QString() },
            { QStringLiteral("down"), TransportKind::Msgpack, Codec::Msgpack, QStringLiteral("127.0.0.1:1"),
                QStringLiteral("Sum"), QString(), QString() } });
        QSignalSpy finished(page, &MatrixPage::finished);
        QTest::mouseClick(child<QPushButton>("matrixRun"), Qt::LeftButton);
        QVERIFY2(page->isRunning(), qPrintable(child<QLabel>("matrixProgress")->text()));
        QVERIFY(finished.wait(60000));
        QCOMPARE(page->results().size(), 6); // 3 stacks x 2 levels
        for (const MatrixResult &r : page->results()) {
            QCOMPARE(r.cell.concurrency, r.cell.concurrency == 1 ? 1 : 4);
            if (r.cell.stack == u"down") {
                QCOMPARE(r.run.callsOk(), 0ULL);
                continue;
            }
            QVERIFY2(r.run.callsOk() == 100, qPrintable(r.cell.label()));
        }
        QCOMPARE(page->table()->item(1, 1)->text(), QStringLiteral("web (http/json)"));
        // Every cell that ran is in the history, labelled as rpcscope-cli matrix --save labels them.
        RunStore *store = m_window->runRecorder()->store();
        QVERIFY(store);
        QString storeError;
        const std::vector<qint64> web = store->idsWithLabel(QStringLiteral("stack:web"), &storeError);
        QCOMPARE(web.size(), size_t(2));
        const auto webRun = store->load(web.back(), &storeError);
        QVERIFY2(webRun, qPrintable(storeError));
        QCOMPARE(webRun->transport, QStringLiteral("http"));
        QCOMPARE(webRun->codec, QStringLiteral("json"));
        QCOMPARE(webRun->snapshot.callsOk(), 100ULL);
        QVERIFY2(webRun->labels.contains(QStringLiteral("payload:nums=2")), qPrintable(webRun->labels.join(u',')));
        QVERIFY(std::any_of(webRun->labels.begin(), webRun->labels.end(),
            [](const QString &label) { return label.startsWith(QStringLiteral("matrix:")); }));
        // Its document is the one the cell ran (issue 34: it was the editor's, given the cell's transport but the
        // gRPC scenario's connections): HTTP's own connections, the stack's target and path, the cell's callers.
        const QJsonObject ran = webRun->scenario;
        const QJsonObject load = ran.value(QStringLiteral("load")).toObject();
        QCOMPARE(ran.value(QStringLiteral("transport")).toString(), QStringLiteral("http"));
        QCOMPARE(ran.value(QStringLiteral("target")).toString(), targets.value(TransportKind::Http));
        QCOMPARE(load.value(QStringLiteral("connections")).toInt(-2), 0);
        QCOMPARE(
            load.value(QStringLiteral("concurrency")).toInt(), webRun->labels.contains(QStringLiteral("c:4")) ? 4 : 1);
        QVERIFY(ran.value(QStringLiteral("fills")).toArray().contains(QStringLiteral("nums=2")));
        // And it is named and labelled as the record is (core's labelMatrixCell, as the CLI's matrix names its cells;
        // the document kept the editor's name and labels while the record was renamed).
        const QJsonObject history = ran.value(QStringLiteral("history")).toObject();
        QCOMPARE(history.value(QStringLiteral("name")).toString(), webRun->name);
        QStringList documentLabels;
        for (const QJsonValue &label : history.value(QStringLiteral("labels")).toArray())
            documentLabels << label.toString();
        QStringList recordLabels = webRun->labels; // the history keeps them sorted
        documentLabels.sort();
        recordLabels.sort();
        QCOMPARE(documentLabels, recordLabels);
        QCOMPARE(store->idsWithLabel(QStringLiteral("stack:mine"), &storeError).size(), size_t(2));
        QCOMPARE(page->table()->item(3, 2)->text(), QStringLiteral("4"));
        QCOMPARE(page->table()->item(2, 3)->text(), QStringLiteral("-")); // down: no latency, not 0 ns
        QVERIFY(page->table()->item(2, 3)->toolTip().startsWith(QStringLiteral("Failed")));
        QCOMPARE(page->table()->item(0, 9)->text(), QStringLiteral("-")); // not rpcscope's codec: no share claimed
        // A bar per stack and level; the failed stack's bars are missing, not 0.
        QCOMPARE(page->barChart()->plottableCount(), 6);
        QStringList names;
        for (int i = 0; i < page->barChart()->plottableCount(); ++i) {
            names << page->barChart()->plottable(i)->name();
            QCOMPARE(page->barChart()->plottable(i)->interface1D()->dataCount(),
                page->barChart()->plottable(i)->name().startsWith(QStringLiteral("down")) ? 0 : 1);
        }
        QVERIFY2(names.contains(QStringLiteral("mine c=4")) && names.contains(QStringLiteral("down c=1 (failed)")),
            qPrintable(names.join(u',')));
        QVERIFY(!child<QCheckBox>("matrix_grpc")->isEnabled()); // the boxes are not used while stacks are listed
        // For stakeholders: the page as one HTML report, the table as CSV, a chart as SVG (as matrix -O writes them).
        QTemporaryDir dir;
        QString saveError;
        QVERIFY2(page->saveReport(dir.filePath(QStringLiteral("stacks.html")), &saveError), qPrintable(saveError));
        QFile html(dir.filePath(QStringLiteral("stacks.html")));
        QVERIFY(html.open(QIODevice::ReadOnly));
        const QString report = QString::fromUtf8(html.readAll());
        QVERIFY(report.contains(QStringLiteral("Stacks compared: rpcscope.bench.v1.Bench/Sum")));
        QVERIFY(report.contains(QStringLiteral("<svg")) && report.contains(QStringLiteral("FAILED: ")));
        QVERIFY2(page->saveReport(dir.filePath(QStringLiteral("stacks.csv")), &saveError), qPrintable(saveError));
        QFile csv(dir.filePath(QStringLiteral("stacks.csv")));
        QVERIFY(csv.open(QIODevice::ReadOnly));
        QCOMPARE(csv.readAll().count('\n'), 7); // the header and six cells
        QVERIFY2(
            page->saveChart(MatrixChart::Bars, ChartFormat::Svg, dir.filePath(QStringLiteral("bars.svg")), &saveError),
            qPrintable(saveError));
        QFile svg(dir.filePath(QStringLiteral("bars.svg")));
        QVERIFY(svg.open(QIODevice::ReadOnly) && svg.readAll().contains("down c=1 (failed)"));
        QCOMPARE(page->barChart()->actions().size(), 4); // copy, PNG, PDF, SVG
        QVERIFY2(child<QLabel>("matrixProgress")->text().contains(QStringLiteral("2 FAILED")),
            qPrintable(child<QLabel>("matrixProgress")->text()));
        // A row that is not a stack is named before anything runs; the stacks are kept for the next session.
        QString error;
        QVERIFY(page->stacks(&error));
        QCOMPARE(QSettings().value(QStringLiteral("matrix/stacks")).toStringList().size(), 3);
        page->setStacks({ { QStringLiteral("bad"), TransportKind::Http, Codec::Json, QString(), QString(), QString(),
            QString() } });
        QTest::mouseClick(child<QPushButton>("matrixRun"), Qt::LeftButton);
        QVERIFY(!page->isRunning());
        QVERIFY2(child<QLabel>("matrixProgress")->text().startsWith(QStringLiteral("Stack row 1: ")),
            qPrintable(child<QLabel>("matrixProgress")->text()));
        page->setStacks({});
        QVERIFY(child<QCheckBox>("matrix_grpc")->isEnabled());
        backToTheFixturesEcho();
    }

    void schemaFromReflectionAndProtoset()
    {
        // Reflection runs on a worker thread: the GUI thread keeps serving events meanwhile.
        QSignalSpy loaded(m_window->schemaController(), &SchemaController::schemaLoaded);
        QSignalSpy failed(m_window->schemaController(), &SchemaController::schemaFailed);
        m_window->schemaController()->loadFromReflection(m_window->builtinServers()->address());
        QVERIFY(loaded.wait(15000));
        QVERIFY(loaded.first().first().toString().contains(QStringLiteral("reflection")));
        QVERIFY(m_window->schemaPanel()
                    ->findChild<QTreeWidget *>()
                    ->findItems(QStringLiteral("rpcscope.bench.v1.Bench"), Qt::MatchExactly)
                    .size()
            == 1);
        // A server that is not there: an error listed, the schema kept, within the deadline.
        m_window->schemaController()->loadFromReflection(QStringLiteral("127.0.0.1:1"));
        QVERIFY(failed.wait(15000));
        QVERIFY2(failed.first().first().toString().contains(QStringLiteral("127.0.0.1:1")),
            qPrintable(failed.first().first().toString()));
        QVERIFY(m_window->scenarioPage()->validateNow());

        QTemporaryDir dir;
        const QString protoset = dir.filePath(QStringLiteral("bench.protoset"));
        QProcess protoc;
        protoc.start(QStringLiteral("protoc"),
            { QStringLiteral("-I"), QStringLiteral(RPCSCOPE_TEST_DATA "/../../proto"),
                QStringLiteral("--include_imports"), QStringLiteral("--descriptor_set_out=") + protoset,
                QStringLiteral("rpcscope/bench/v1/bench.proto") });
        QVERIFY(protoc.waitForFinished(30000));
        QVERIFY(m_window->schemaController()->openProtosets({ protoset }));
        QFile garbage(dir.filePath(QStringLiteral("garbage.protoset")));
        QVERIFY(garbage.open(QIODevice::WriteOnly));
        garbage.write("not a protoset");
        garbage.close();
        QVERIFY(!m_window->schemaController()->openProtosets({ garbage.fileName() }));
        QVERIFY(m_window->scenarioPage()->validateNow()); // the previous schema stays
        // Leave a schema whose source outlives this test (the protoset's folder goes away with it).
        QVERIFY(m_window->openProtoFiles(
            { QStringLiteral(RPCSCOPE_TEST_DATA "/../../proto/rpcscope/bench/v1/bench.proto") }));
    }

    void scenarioSavedAndReopened()
    {
        QVERIFY(!m_window->isWindowModified() || true);
        child<QLineEdit>("durationEdit")->setText(QStringLiteral("7s"));
        QVERIFY(m_window->isWindowModified()); // an edit marks the document
        setMetadata({ { QStringLiteral("x-team"), QStringLiteral("perf") } });
        child<QLineEdit>("maxReceiveEdit")->setText(QStringLiteral("16MiB"));
        child<QLineEdit>("intervalEdit")->setText(QStringLiteral("500ms"));
        child<QComboBox>("securityCombo")
            ->setCurrentIndex(child<QComboBox>("securityCombo")->findData(QStringLiteral("plaintext")));
        QVERIFY(m_window->scenarioPage()->validateNow());
        const Scenario before = m_window->scenarioPage()->scenario();
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("echo.rpcscope.json"));
        QString error;
        QVERIFY2(m_window->scenarioDocuments()->save(path, &error), qPrintable(error));
        QVERIFY(!m_window->isWindowModified());
        QVERIFY(m_window->windowTitle().startsWith(QStringLiteral("echo.rpcscope.json")));
        // Change everything, then reopen: the editor shows the saved document again.
        child<QLineEdit>("durationEdit")->setText(QStringLiteral("99s"));
        setMetadata({});
        child<QLineEdit>("intervalEdit")->clear();
        QVERIFY2(m_window->openScenario(path, &error), qPrintable(error));
        QVERIFY(m_window->scenarioPage()->scenario() == before);
        QCOMPARE(before.metadata.size(), 1);
        QCOMPARE(before.security, QStringLiteral("plaintext"));
        QCOMPARE(before.interval, QStringLiteral("500ms"));
        QCOMPARE(child<QLineEdit>("durationEdit")->text(), QStringLiteral("7s"));
        QVERIFY(!m_window->isWindowModified());
        // The CLI runs the very same file; its schema is outside the file's folder, which the CLI runs only when
        // told the file is trusted (the GUI knows: this user saved it).
        QProcess cli;
        const QStringList arguments { QStringLiteral("run"), QStringLiteral("--scenario"), path, QStringLiteral("-z"),
            QStringLiteral("1s"), QStringLiteral("-n"), QStringLiteral("200") };
        cli.start(QStringLiteral(RPCSCOPE_CLI), arguments);
        QVERIFY(cli.waitForFinished(60000));
        QCOMPARE(cli.exitCode(), 2);
        QVERIFY(cli.readAllStandardError().contains("schema.protos[0]: "));
        cli.start(QStringLiteral(RPCSCOPE_CLI), arguments + QStringList { QStringLiteral("--trust") });
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
        QCOMPARE(m_window->scenarioDocuments()->path(), path);
        child<QLineEdit>("durationEdit")->clear();
        setMetadata({});
        child<QLineEdit>("maxReceiveEdit")->clear();
        child<QLineEdit>("intervalEdit")->clear();
        child<QComboBox>("securityCombo")->setCurrentIndex(0);
    }

    void aSharedDocumentAsksBeforeItUsesFilesOutsideItsFolder()
    {
        const auto reset = qScopeGuard([this] {
            m_window->scenarioDocuments()->setFileAccessAsker(
                [](const QString &, const QStringList &) { return false; });
            m_window->findChild<QAction *>(QStringLiteral("actionNewScenario"))->trigger();
        });
        QTemporaryDir dir;
        QVERIFY(QDir(dir.path()).mkdir(QStringLiteral("shared")));
        const QString path = dir.filePath(QStringLiteral("shared/x.rpcscope.json"));
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(R"({"rpcscope_scenario":1,"method":"rpcscope.bench.v1.Bench/Echo","raw_samples":"../raw.csv"})");
        file.close();
        QStringList asked;
        bool allow = false;
        m_window->scenarioDocuments()->setFileAccessAsker([&](const QString &, const QStringList &problems) {
            asked += problems;
            return allow;
        });
        QString error;
        QVERIFY(!m_window->openScenario(path, &error));
        QCOMPARE(asked.size(), 1);
        QVERIFY2(asked.first().startsWith(QStringLiteral("raw_samples: ")), qPrintable(asked.first()));
        QVERIFY2(error.contains(QStringLiteral("not opened")), qPrintable(error));
        QVERIFY(m_window->scenarioDocuments()->path() != path);
        // Allowed once, it opens; unchanged, it is not asked about again.
        allow = true;
        QVERIFY2(m_window->openScenario(path, &error), qPrintable(error));
        QCOMPARE(
            m_window->scenarioPage()->scenario().rawSamples, QDir::cleanPath(dir.filePath(QStringLiteral("raw.csv"))));
        allow = false;
        asked.clear();
        QVERIFY2(m_window->openScenario(path, &error), qPrintable(error));
        QVERIFY(asked.isEmpty());
        // Changed by someone else, it is a new document: asked again.
        QVERIFY(file.open(QIODevice::Append));
        file.write("\n");
        file.close();
        QVERIFY(!m_window->openScenario(path, &error));
        QCOMPARE(asked.size(), 1);
    }

    void targetsDockPointsTheScenario()
    {
        QTreeWidget *tree = m_window->targetsPanel()->tree();
        QTreeWidgetItem *builtin = tree->topLevelItem(0);
        QCOMPARE(builtin->childCount(), 3);
        QTreeWidgetItem *http = nullptr;
        for (int i = 0; i < builtin->childCount(); ++i) {
            QVERIFY2(builtin->child(i)->text(2).startsWith(QStringLiteral("running (pid")),
                qPrintable(builtin->child(i)->text(2)));
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

    void theOwnHttp2GrpcClientRunsFromTheWindow()
    {
        // gRPC with rpcscope's own client on bare HTTP/2: the same built-in gRPC server, picked like a transport.
        ScenarioPage *page = m_window->scenarioPage();
        page->setTransport(TransportKind::H2Grpc);
        QVERIFY(page->validateNow());
        QString error;
        const auto prepared = page->prepare(&error);
        QVERIFY2(prepared, qPrintable(error));
        QCOMPARE(prepared->spec.transport.kind, TransportKind::H2Grpc);
        QCOMPARE(prepared->spec.target.address, m_window->builtinServers()->address()); // the gRPC server's
        QCOMPARE(page->scenario().transport, QStringLiteral("h2grpc"));
        child<QSpinBox>("callsEdit")->setValue(300);
        m_window->startRun();
        QTRY_VERIFY_WITH_TIMEOUT(!m_window->runController()->isRunning(), 30000);
        QCOMPARE(m_window->runController()->lastSnapshot().callsOk(), 300ULL);
        // Its HTTP/2 window is on the Advanced tab, for this transport only.
        auto *tabs = child<QTabWidget>("scenarioTabs");
        const int shown = tabs->currentIndex();
        for (int i = 0; i < tabs->count(); ++i)
            if (tabs->tabText(i) == u"Advanced")
                tabs->setCurrentIndex(i);
        QVERIFY(child<QLineEdit>("http2WindowEdit")->isVisible());
        saveScreenshot(QStringLiteral("gui-h2grpc-advanced"));
        tabs->setCurrentIndex(shown);
        page->setTransport(TransportKind::Grpc);
    }

    void builtinServersSayWhenTheirProcessDies()
    {
        // A second set beside the window's: killed from outside, they report it without being asked.
        BuiltinServers servers;
        QSignalSpy changed(&servers, &BuiltinServers::runningChanged);
        QString error;
        QVERIFY2(servers.start(QStringLiteral(RPCSCOPE_CLI), &error), qPrintable(error));
        QVERIFY(servers.pid() > 0);
        QVERIFY(servers.isTarget(servers.address()));
        QCOMPARE(servers.targets().size(), 3);
        QVERIFY(servers.description().contains(QString::number(servers.pid())));
        QVERIFY(::kill(static_cast<pid_t>(servers.pid()), SIGKILL) == 0);
        QVERIFY(changed.wait(10000));
        QCOMPARE(changed.first().first().toBool(), false);
        servers.stop();
        QVERIFY(servers.address().isEmpty());
    }

    void builtinServersStartOnFirstUse()
    {
        // A window whose target is elsewhere starts no servers of its own; the first run that calls a built-in one
        // starts them, and a run after their process died starts them again.
        MainWindow window;
        window.scenarioDocuments()->setUnsavedChangesAsker([] { return int(QMessageBox::Discard); });
        window.loadEmbeddedDefault(QStringLiteral(RPCSCOPE_CLI));
        BuiltinServers *servers = window.builtinServers();
        QVERIFY(!servers->isRunning());
        QVERIFY(window.usesBuiltinServers()); // the default calls them: main() starts them at once then
        QTreeWidgetItem *builtin = window.targetsPanel()->tree()->topLevelItem(0);
        QCOMPARE(builtin->childCount(), 3);
        QCOMPARE(builtin->child(0)->text(2), QStringLiteral("starts when a run uses it"));
        QVERIFY2(
            window.findChild<QLabel *>(QStringLiteral("statusTarget"))->text().contains(QStringLiteral("not started")),
            qPrintable(window.findChild<QLabel *>(QStringLiteral("statusTarget"))->text()));

        // An external target (this suite's own window's server): runs, and starts nothing.
        ScenarioPage *page = window.scenarioPage();
        page->setTarget(m_window->builtinServers()->address());
        QVERIFY(!window.usesBuiltinServers());
        QVERIFY(page->validateNow());
        auto *calls = window.scenarioPage()->findChild<QSpinBox *>(QStringLiteral("callsEdit"));
        calls->setValue(40);
        window.startRun();
        QTRY_VERIFY_WITH_TIMEOUT(!window.runController()->isRunning(), 30000);
        QCOMPARE(window.runController()->lastSnapshot().callsOk(), 40ULL);
        QVERIFY(!servers->isRunning());

        // The Targets panel's gRPC row points the scenario at the built-in server; Run starts it.
        Q_EMIT window.targetsPanel()->tree()->itemActivated(builtin->child(0), 0);
        QVERIFY(window.usesBuiltinServers());
        window.scenarioDocuments()->setModified(false); // saved, say: the servers' start must not change that
        window.startRun();
        QTRY_VERIFY_WITH_TIMEOUT(!window.runController()->isRunning(), 30000);
        QCOMPARE(window.runController()->lastSnapshot().callsOk(), 40ULL);
        QVERIFY(servers->isRunning());
        const qint64 firstPid = servers->pid();
        QVERIFY(firstPid > 0);
        QCOMPARE(window.scenarioPage()->findChild<QComboBox *>(QStringLiteral("targetEdit"))->currentText(),
            servers->address());
        QVERIFY2(builtin->child(0)->text(2).startsWith(QStringLiteral("running (pid")),
            qPrintable(builtin->child(0)->text(2)));
        QVERIFY(!window.isWindowModified()); // the target following the servers is not the user's edit

        // Killed from outside: the next run starts them again, on new ports, and the target follows.
        QSignalSpy changed(servers, &BuiltinServers::runningChanged);
        QVERIFY(::kill(static_cast<pid_t>(firstPid), SIGKILL) == 0);
        QVERIFY(changed.wait(10000));
        QVERIFY(!servers->isRunning());
        window.startRun();
        QTRY_VERIFY_WITH_TIMEOUT(!window.runController()->isRunning(), 30000);
        QCOMPARE(window.runController()->lastSnapshot().callsOk(), 40ULL);
        QVERIFY(servers->isRunning());
        QVERIFY(servers->pid() != firstPid);
        QCOMPARE(window.scenarioPage()->findChild<QComboBox *>(QStringLiteral("targetEdit"))->currentText(),
            servers->address());
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

    void aProfiledRunShowsWhereTheServersTimeWent()
    {
        // The window's built-in server profiled during the timed phase: a tab of its own on the Run page, read off
        // the window's thread once the run ended, and kept in the history with the run.
        auto *profile = child<QCheckBox>("profileServerCheck");
        profile->setChecked(true);
        child<QSpinBox>("callsEdit")->setValue(3000);
        // "Sample every" is the run's --profile-period; a bad one is refused by its field's name.
        auto *period = child<QLineEdit>("profilePeriodEdit");
        period->setText(QStringLiteral("5us"));
        QVERIFY(!m_window->scenarioPage()->validateNow());
        period->setText(QStringLiteral("2ms"));
        QCOMPARE(m_window->scenarioPage()->scenario().profilePeriod, QStringLiteral("2ms"));
        // "Callers by" is --profile-call-graph: DWARF, or frame pointers (the default, left unsaid)
        auto *callers = child<QComboBox>("profileCallGraphCombo");
        callers->setCurrentIndex(callers->findData(QStringLiteral("dwarf")));
        QCOMPARE(m_window->scenarioPage()->scenario().profileCallGraph, QStringLiteral("dwarf"));
        callers->setCurrentIndex(0);
        QVERIFY(m_window->scenarioPage()->scenario().profileCallGraph.isEmpty());
        QVERIFY(m_window->scenarioPage()->validateNow());
        m_window->startRun();
        QTRY_VERIFY_WITH_TIMEOUT(!m_window->runController()->isRunning(), 30000);
        RunPage *page = m_window->runPage();
        QVERIFY(page->chartTabs()->indexOf(page->serverProfilePanel()) >= 0);
        QCOMPARE(page->chartTabs()->indexOf(page->clientProfilePanel()), -1);
        ProfilePanel *panel = page->serverProfilePanel();
        // Until perf has resolved the symbols the tab says the profile is on its way; then it shows what it read,
        // or why there is none (perf missing or not allowed).
        QTRY_VERIFY_WITH_TIMEOUT(!panel->summaryLabel()->text().contains(QStringLiteral("when the run ends")), 60000);
        const PerfSupport perf = perfSupport();
        const QString summary = panel->summaryLabel()->text();
        if (perf.problem.isEmpty()) {
            QVERIFY2(summary.contains(QStringLiteral("Server CPU: ")), qPrintable(summary));
            QVERIFY2(summary.contains(QStringLiteral(" samples")), qPrintable(summary));
            QVERIFY2(summary.contains(QStringLiteral("one sample per 2000 us of CPU")), qPrintable(summary));
            QVERIFY(panel->graph()->message().isEmpty());
            QVERIFY(panel->table()->rowCount() > 0);
            RunStore *store = m_window->runRecorder()->store();
            QVERIFY(m_window->runRecorder()->flush(std::chrono::seconds(10)));
            QString error;
            const std::optional<RunRecord> stored
                = store->load(m_window->resultsController()->currentRun()->id, &error);
            QVERIFY2(stored, qPrintable(error));
            QVERIFY(stored->serverProfile && !stored->serverProfile->isEmpty());
            QVERIFY(stored->serverProfile->calls() > 0);
            page->chartTabs()->setCurrentWidget(panel);
            saveScreenshot(QStringLiteral("run-server-profile"));
        } else {
            QVERIFY2(summary.contains(QStringLiteral("no samples")), qPrintable(summary));
        }
        profile->setChecked(false);
        // Without a profile the period is not the run's (a document would be refused for it).
        QVERIFY(m_window->scenarioPage()->scenario().profilePeriod.isEmpty());
        period->clear();
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
        QVERIFY(!m_window->openProtoFiles({ broken }));
        QListWidget *errors = m_window->schemaPanel()->errorList();
        QVERIFY(errors->isVisibleTo(m_window.get()));
        QVERIFY(errors->count() >= 1);
        QVERIFY2(
            errors->item(0)->text().startsWith(broken + QStringLiteral(":6:3:")), qPrintable(errors->item(0)->text()));
        QTreeWidget *tree = m_window->schemaPanel()->tree();
        QCOMPARE(tree->topLevelItem(0)->text(0), QStringLiteral("rpcscope.bench.v1.Bench"));
    }

    void loadProtoAndPickMethod()
    {
        QVERIFY(m_window->openProtoFiles({ QStringLiteral(RPCSCOPE_TEST_DATA "/imports/shapes.proto") },
            { QStringLiteral(RPCSCOPE_TEST_DATA "/imports") }));
        QVERIFY(!m_window->schemaPanel()->errorList()->isVisibleTo(m_window.get()));
        QTreeWidget *tree = m_window->schemaPanel()->tree();
        QCOMPARE(tree->topLevelItem(0)->text(0), QStringLiteral("test.shapes.Shapes"));
        // The new schema's first method is picked: the page is never left on a method the schema does not have.
        QCOMPARE(m_window->scenarioPage()->method(), QStringLiteral("test.shapes.Shapes/Get"));
        QCOMPARE(m_window->schemaPanel()->selectedMethod(), QStringLiteral("test.shapes.Shapes/Get"));
        QVERIFY(m_window->scenarioPage()->validateNow());
        QVERIFY(child<QPushButton>("runButton")->isEnabled());
        QTreeWidgetItem *watch = tree->topLevelItem(0)->child(2);
        QCOMPARE(watch->text(0), QStringLiteral("Watch"));
        QVERIFY(!watch->isDisabled()); // a streaming method runs too (over gRPC)
        QVERIFY(watch->toolTip(1).contains(QStringLiteral("stream")));
        QVERIFY(m_window->schemaPanel()->selectMethod(QStringLiteral("test.shapes.Shapes/Get")));
        QCOMPARE(m_window->scenarioPage()->method(), QStringLiteral("test.shapes.Shapes/Get"));
        QVERIFY(child<QPlainTextEdit>("requestEditor")->toPlainText().contains(QStringLiteral("\"points\"")));
    }

    void theKeyboardIsNeverTrappedInTheRequestEditor()
    {
        // Tab moves on from the request editor (to the fill sizes, the Load tab, Run) instead of typing a tab.
        auto *editor = child<QPlainTextEdit>("requestEditor");
        const QString before = editor->toPlainText();
        QVERIFY(editor->tabChangesFocus());
        QTest::keyClick(editor, Qt::Key_Tab); // typed a tab into the request before
        QCOMPARE(editor->toPlainText(), before);
    }

    void importPathEditorFeedsProtoLoading()
    {
        // A .proto whose import lives in another folder: it loads only once that folder is an import path.
        QTemporaryDir dir;
        QFile proto(dir.filePath(QStringLiteral("uses_common.proto")));
        QVERIFY(proto.open(QIODevice::WriteOnly));
        proto.write("syntax = \"proto3\";\npackage test.uses;\nimport \"common/types.proto\";\n"
                    "service Uses { rpc Move(test.common.Point) returns (test.common.Point); }\n");
        proto.close();
        SchemaPanel *panel = m_window->schemaPanel();
        panel->setImportPaths({});
        QVERIFY(!m_window->openProtoFiles({ proto.fileName() }));
        QVERIFY(panel->errorList()->isVisibleTo(m_window.get()));
        QVERIFY2(panel->errorList()->item(0)->text().contains(QStringLiteral("common/types.proto")),
            qPrintable(panel->errorList()->item(0)->text()));
        const QString imports = QStringLiteral(RPCSCOPE_TEST_DATA "/imports");
        panel->setFolderAsker([&imports] { return imports; });
        QSignalSpy loaded(m_window->schemaController(), &SchemaController::schemaLoaded);
        QTest::mouseClick(child<QPushButton>("addImportPath"), Qt::LeftButton);
        QCOMPARE(panel->importPaths(), QStringList { imports });
        QCOMPARE(loaded.size(), 1); // added folder: the .proto files are loaded again, now with their import
        QVERIFY(!panel->errorList()->isVisibleTo(m_window.get()));
        QCOMPARE(panel->tree()->topLevelItem(0)->text(0), QStringLiteral("test.uses.Uses"));
        // The document names the paths the schema loaded with.
        QTemporaryDir docs;
        QString error;
        QVERIFY(m_window->scenarioDocuments()->save(docs.filePath(QStringLiteral("p.rpcscope.json")), &error));
        const auto saved = Scenario::load(docs.filePath(QStringLiteral("p.rpcscope.json")), &error);
        QVERIFY2(saved, qPrintable(error));
        QCOMPARE(saved->importPaths, QStringList { imports });
        // Removing it: loaded again, the import is missing again, the schema stays.
        panel->importPathList()->item(0)->setSelected(true);
        QVERIFY(child<QPushButton>("removeImportPath")->isEnabled());
        QTest::mouseClick(child<QPushButton>("removeImportPath"), Qt::LeftButton);
        QVERIFY(panel->importPaths().isEmpty());
        QVERIFY(panel->errorList()->isVisibleTo(m_window.get()));
        QCOMPARE(panel->tree()->topLevelItem(0)->text(0), QStringLiteral("test.uses.Uses"));
    }

    void doubleClickedSchemaErrorOpensTheLine()
    {
        const QString broken = QStringLiteral(RPCSCOPE_TEST_DATA "/broken/syntax.proto");
        QVERIFY(!m_window->openProtoFiles({ broken }));
        QListWidget *errors = m_window->schemaPanel()->errorList();
        QVERIFY2(
            errors->item(0)->text().startsWith(broken + QStringLiteral(":6:3:")), qPrintable(errors->item(0)->text()));
        const QRect rect = errors->visualItemRect(errors->item(0));
        QTest::mouseClick(errors->viewport(), Qt::LeftButton, {}, rect.center());
        QTest::mouseDClick(errors->viewport(), Qt::LeftButton, {}, rect.center());
        SourceViewer *viewer = m_window->schemaPanel()->sourceViewer();
        QVERIFY(viewer);
        QVERIFY(viewer->isVisible());
        QCOMPARE(viewer->path(), broken);
        QCOMPARE(viewer->currentLine(), 6);
        QCOMPARE(viewer->editor()->textCursor().positionInBlock(), 2); // column 3
        QCOMPARE(viewer->editor()->textCursor().block().text(), QStringLiteral("  int32 b = 2;"));
        QVERIFY(viewer->editor()->isReadOnly());
        const QList<QTextEdit::ExtraSelection> marks = viewer->editor()->extraSelections();
        QCOMPARE(marks.size(), 1); // the line is highlighted
        QCOMPARE(marks.first().cursor.blockNumber(), 5);
        viewer->close();
        // A file that is gone: the viewer says so instead of showing stale text.
        QTemporaryDir dir;
        QFile gone(dir.filePath(QStringLiteral("gone.proto")));
        QVERIFY(gone.open(QIODevice::WriteOnly));
        gone.write("syntax = \"proto3\";\nmessage {\n");
        gone.close();
        QVERIFY(!m_window->openProtoFiles({ gone.fileName() }));
        QVERIFY(gone.remove());
        QVERIFY(!m_window->schemaPanel()->showError(0));
        QVERIFY(viewer->editor()->toPlainText().isEmpty());
        viewer->close();
    }

    void fileNewAndOpenThroughTheMenu()
    {
        auto *newAction = m_window->findChild<QAction *>(QStringLiteral("actionNewScenario"));
        auto *openAction = m_window->findChild<QAction *>(QStringLiteral("actionOpenScenario"));
        QVERIFY(newAction && openAction);
        QVERIFY(!newAction->text().isEmpty() && openAction->shortcut() == QKeySequence(QKeySequence::Open));
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("menu.rpcscope.json"));
        newAction->trigger(); // from a known state: the built-in schema, Echo
        QVERIFY(!m_window->isWindowModified());
        // Unsaved changes are asked about first; Cancel keeps them.
        int questions = 0;
        int reply = QMessageBox::Cancel;
        m_window->scenarioDocuments()->setUnsavedChangesAsker([&] {
            ++questions;
            return reply;
        });
        child<QLineEdit>("durationEdit")->setText(QStringLiteral("9s"));
        QVERIFY(m_window->isWindowModified());
        newAction->trigger();
        QCOMPARE(questions, 1);
        QCOMPARE(child<QLineEdit>("durationEdit")->text(), QStringLiteral("9s"));
        reply = QMessageBox::Discard;
        newAction->trigger();
        QCOMPARE(questions, 2);
        QVERIFY(child<QLineEdit>("durationEdit")->text().isEmpty());
        QVERIFY(!m_window->isWindowModified());
        child<QLineEdit>("durationEdit")->setText(QStringLiteral("3s"));
        setMetadata({ { QStringLiteral("x-menu"), QStringLiteral("1") } });
        child<QSpinBox>("clientThreadsEdit")->setValue(2);
        QString error;
        QVERIFY2(m_window->scenarioDocuments()->save(path, &error), qPrintable(error));

        newAction->trigger();
        QVERIFY(m_window->scenarioDocuments()->path().isEmpty());
        QVERIFY(m_window->windowTitle().startsWith(QStringLiteral("untitled")));
        QCOMPARE(m_window->scenarioPage()->method(), QStringLiteral("rpcscope.bench.v1.Bench/Echo"));
        QVERIFY(child<QLineEdit>("durationEdit")->text().isEmpty());
        QCOMPARE(child<QTableWidget>("metadataTable")->rowCount(), 0);
        QCOMPARE(child<QSpinBox>("clientThreadsEdit")->value(), 0);

        QStringList asked;
        QString answer; // cancelled first
        QString askedFilter;
        m_window->scenarioDocuments()->setOpenPathAsker([&](const QString &caption, const QString &filter) {
            asked << caption;
            askedFilter = filter;
            return answer;
        });
        openAction->trigger();
        QCOMPARE(asked.size(), 1);
        QVERIFY2(askedFilter.contains(QStringLiteral("*.rpcscope.json")), qPrintable(askedFilter));
        QVERIFY(m_window->scenarioDocuments()->path().isEmpty()); // cancelling changes nothing
        answer = path;
        openAction->trigger();
        QCOMPARE(asked.size(), 2);
        QCOMPARE(m_window->scenarioDocuments()->path(), path);
        QCOMPARE(child<QLineEdit>("durationEdit")->text(), QStringLiteral("3s"));
        QCOMPARE(child<QTableWidget>("metadataTable")->item(0, 0)->text(), QStringLiteral("x-menu"));
        QCOMPARE(child<QSpinBox>("clientThreadsEdit")->value(), 2);
        QVERIFY(!m_window->isWindowModified());
        newAction->trigger();
        m_window->scenarioDocuments()->setOpenPathAsker([](const QString &, const QString &) { return QString(); });
        m_window->scenarioDocuments()->setUnsavedChangesAsker([] { return int(QMessageBox::Discard); });
    }

    void metadataTableRoundTrip()
    {
        ScenarioPage *page = m_window->scenarioPage();
        Scenario s = page->scenario();
        s.metadata = { { QStringLiteral("authorization"), QStringLiteral("Bearer x") },
            { QStringLiteral("x-b"), QStringLiteral("2") } };
        page->setScenario(s);
        auto *table = child<QTableWidget>("metadataTable");
        QCOMPARE(table->rowCount(), 2);
        QCOMPARE(table->item(0, 0)->text(), QStringLiteral("authorization"));
        QCOMPARE(table->item(1, 1)->text(), QStringLiteral("2"));
        QCOMPARE(child<QTabWidget>("scenarioTabs")->tabText(1), QStringLiteral("Metadata (2)"));
        QVERIFY(page->scenario().metadata == s.metadata);
        // A row just added and still empty is nothing to send.
        QTest::mouseClick(child<QPushButton>("metadataAdd"), Qt::LeftButton);
        QCOMPARE(table->rowCount(), 3);
        QCOMPARE(page->scenario().metadata.size(), 2);
        QVERIFY(page->validateNow());
        table->item(2, 0)->setText(QStringLiteral("X-Trace"));
        table->item(2, 1)->setText(QStringLiteral(" abc "));
        QCOMPARE(page->scenario().metadata.last(), qMakePair(QStringLiteral("X-Trace"), QStringLiteral("abc")));
        QString error;
        const auto prepared = page->prepare(&error);
        QVERIFY2(prepared, qPrintable(error));
        QCOMPARE(prepared->spec.target.metadata.size(), size_t(3));
        {
            // A document made for the workers of a split run (rpcscope-cli run --segment): kept as it is, run whole.
            Scenario split = page->scenario();
            split.calls = 100;
            split.concurrency = 8;
            split.segment = QStringLiteral("1/4");
            split.startAt = QStringLiteral("2026-12-03T15:00:00Z");
            page->setScenario(split);
            QCOMPARE(page->scenario().segment, QStringLiteral("1/4"));
            QCOMPARE(page->scenario().startAt, QStringLiteral("2026-12-03T15:00:00Z"));
            const auto whole = page->prepare(&error);
            QVERIFY2(whole, qPrintable(error));
            QVERIFY(whole->spec.plan.segment.isWhole());
            QCOMPARE(whole->spec.plan.totalCalls, 100ULL);
            QCOMPARE(whole->spec.plan.concurrency, 8);
            QVERIFY(!whole->spec.plan.startAt);
        }
        QCOMPARE(prepared->spec.target.metadata[2].first, std::string("x-trace")); // keys go lowercase on the wire
        QCOMPARE(prepared->spec.target.metadata[2].second, std::string("abc"));
        // A value without a key, or a key gRPC cannot send, is named and blocks Run.
        table->item(2, 0)->setText(QString());
        QVERIFY(!page->validateNow());
        QVERIFY2(child<QLabel>("requestStatus")->text().contains(QStringLiteral("no key")),
            qPrintable(child<QLabel>("requestStatus")->text()));
        table->item(2, 0)->setText(QStringLiteral("bad key"));
        QVERIFY(!page->validateNow());
        QVERIFY(child<QLabel>("requestStatus")->text().contains(QStringLiteral("bad key")));
        // Remove: the selected row goes, the others keep their order.
        table->selectRow(0);
        QTest::mouseClick(child<QPushButton>("metadataRemove"), Qt::LeftButton);
        QCOMPARE(table->rowCount(), 2);
        QCOMPARE(table->item(0, 0)->text(), QStringLiteral("x-b"));
        QVERIFY(m_window->isWindowModified());
        setMetadata({});
        QVERIFY(page->validateNow());
        QCOMPARE(child<QTabWidget>("scenarioTabs")->tabText(1), QStringLiteral("Metadata"));
    }

    void tlsAndAdvancedSettingsReachTheRun()
    {
        QTemporaryDir dir;
        QProcess make;
        make.start(QStringLiteral("bash"), { QStringLiteral(RPCSCOPE_TEST_DATA "/make-test-certs.sh"), dir.path() });
        QVERIFY(make.waitForFinished(60000) && make.exitCode() == 0);
        // A mutual-TLS server: it refuses clients without a certificate signed by ca.crt.
        QProcess server;
        server.start(QStringLiteral(RPCSCOPE_CLI),
            { QStringLiteral("serve"), QStringLiteral("grpc"), QStringLiteral("--cert"),
                dir.filePath(QStringLiteral("server.crt")), QStringLiteral("--key"),
                dir.filePath(QStringLiteral("server.key")), QStringLiteral("--client-ca"),
                dir.filePath(QStringLiteral("ca.crt")) });
        QVERIFY(server.waitForStarted());
        QTRY_VERIFY_WITH_TIMEOUT(server.canReadLine(), 10000);
        const QString address = QString::fromUtf8(server.readLine()).trimmed();

        ScenarioPage *page = m_window->scenarioPage();
        auto *tabs = child<QTabWidget>("scenarioTabs");
        tabs->setCurrentIndex(2);
        QVERIFY(!child<QLineEdit>("caCertEdit")->isEnabled()); // automatic: the TLS fields mean nothing yet
        selectSecurity("tls");
        QVERIFY(child<QLineEdit>("caCertEdit")->isEnabled());
        child<QLineEdit>("caCertEdit")->setText(dir.filePath(QStringLiteral("ca.crt")));
        child<QLineEdit>("clientCertEdit")->setText(dir.filePath(QStringLiteral("client.crt")));
        QVERIFY(!page->validateNow());
        QVERIFY2(child<QLabel>("requestStatus")->text().contains(QStringLiteral("go together")),
            qPrintable(child<QLabel>("requestStatus")->text()));
        child<QLineEdit>("clientKeyEdit")->setText(dir.filePath(QStringLiteral("client.key")));
        child<QLineEdit>("serverNameEdit")->setText(QStringLiteral("rpcscope.test"));
        QVERIFY(!page->validateNow()); // still the built-in (plaintext) server
        QVERIFY(child<QLabel>("requestStatus")->text().contains(QStringLiteral("plaintext")));
        page->setTarget(address);
        QVERIFY2(page->validateNow(), qPrintable(child<QLabel>("requestStatus")->text()));
        tabs->setCurrentIndex(3);
        child<QSpinBox>("clientThreadsEdit")->setValue(2);
        child<QLineEdit>("intervalEdit")->setText(QStringLiteral("250ms"));

        const Scenario s = page->scenario();
        QCOMPARE(s.security, QStringLiteral("tls"));
        QCOMPARE(s.caCert, dir.filePath(QStringLiteral("ca.crt")));
        QCOMPARE(s.clientCert, dir.filePath(QStringLiteral("client.crt")));
        QCOMPARE(s.clientKey, dir.filePath(QStringLiteral("client.key")));
        QCOMPARE(s.serverName, QStringLiteral("rpcscope.test"));
        QVERIFY(!s.skipVerify);
        QCOMPARE(s.clientThreads, 2);
        QCOMPARE(s.interval, QStringLiteral("250ms"));
        // The document, prepared by core as the CLI prepares it, asks for the same connection.
        ScenarioProblem problem;
        const std::optional<RunSpec> spec = prepareRun(s, &problem);
        QVERIFY2(spec, qPrintable(problem.text()));
        QVERIFY(spec->target.tls.enabled);
        QCOMPARE(spec->target.tls.serverNameOverride, std::string("rpcscope.test"));
        QVERIFY(spec->target.tls.rootCerts.find("-----BEGIN CERTIFICATE") != std::string::npos);
        QString error;
        auto prepared = page->prepare(&error);
        QVERIFY2(prepared, qPrintable(error));
        QVERIFY(prepared->spec.target.tls.enabled);
        QVERIFY(prepared->spec.target.tls.rootCerts.find("-----BEGIN CERTIFICATE") != std::string::npos);
        QVERIFY(!prepared->spec.target.tls.privateKey.empty());
        QCOMPARE(prepared->spec.target.tls.serverNameOverride, std::string("rpcscope.test"));
        QCOMPARE(prepared->spec.target.clientThreads, 2);
        QCOMPARE(prepared->spec.plan.interval, std::chrono::nanoseconds(std::chrono::milliseconds(250)));

        // The run itself: mutual TLS end to end, from the GUI.
        child<QSpinBox>("callsEdit")->setValue(200);
        m_window->startRun();
        QVERIFY(m_window->runController()->isRunning());
        QTRY_VERIFY_WITH_TIMEOUT(!m_window->runController()->isRunning(), 30000);
        QCOMPARE(m_window->runController()->lastSnapshot().callsOk(), 200ULL);

        // Without the client certificate the server refuses every call (so the one above was really sent).
        child<QLineEdit>("clientCertEdit")->clear();
        child<QLineEdit>("clientKeyEdit")->clear();
        QVERIFY(page->validateNow());
        m_window->startRun();
        QTRY_VERIFY_WITH_TIMEOUT(!m_window->runController()->isRunning(), 30000);
        QCOMPARE(m_window->runController()->lastSnapshot().callsOk(), 0ULL);
        QVERIFY(m_window->runController()->lastSnapshot().callsFailed() > 0);

        // Bad values are named.
        child<QLineEdit>("caCertEdit")->setText(QStringLiteral(RPCSCOPE_TEST_DATA "/unimplemented.proto"));
        QVERIFY(!page->validateNow());
        QVERIFY(child<QLabel>("requestStatus")->text().contains(QStringLiteral("not a PEM file")));
        child<QLineEdit>("caCertEdit")->setText(dir.filePath(QStringLiteral("ca.crt")));
        child<QLineEdit>("intervalEdit")->setText(QStringLiteral("often"));
        QVERIFY(!page->validateNow());
        QVERIFY(child<QLabel>("requestStatus")->text().startsWith(QStringLiteral("✗ Interval")));
        child<QLineEdit>("intervalEdit")->clear();

        // Plaintext and automatic, and the authority.
        selectSecurity("plaintext");
        QVERIFY(!child<QLineEdit>("caCertEdit")->isEnabled());
        child<QLineEdit>("authorityEdit")->setText(QStringLiteral("bench.internal"));
        QCOMPARE(page->scenario().security, QStringLiteral("plaintext"));
        QVERIFY(page->scenario().caCert.isEmpty()); // a plaintext document carries no TLS file
        prepared = page->prepare(&error);
        QVERIFY2(prepared, qPrintable(error));
        QVERIFY(!prepared->spec.target.tls.enabled);
        QCOMPARE(prepared->spec.target.authority, std::string("bench.internal"));
        selectSecurity("auto");
        page->setTarget(QStringLiteral("bench.example.com:443"));
        prepared = page->prepare(&error);
        QVERIFY2(prepared, qPrintable(error));
        QVERIFY(prepared->spec.target.tls.enabled); // remote: TLS, as the CLI
        page->setTarget(address);
        prepared = page->prepare(&error);
        QVERIFY(prepared && !prepared->spec.target.tls.enabled); // loopback: plaintext
        QCOMPARE(prepared->spec.target.clientThreads, 2);
        child<QSpinBox>("clientThreadsEdit")->setValue(0);
        prepared = page->prepare(&error);
        QVERIFY2(prepared, qPrintable(error));
        QCOMPARE(prepared->spec.target.clientThreads, autoClientThreads(prepared->spec.plan.concurrency));

        // TLS is gRPC's: another transport hides it and the document carries none of it.
        selectSecurity("tls");
        m_window->scenarioPage()->setTransport(TransportKind::Http);
        QVERIFY(!child<QComboBox>("securityCombo")->isEnabled());
        QCOMPARE(page->scenario().security, QStringLiteral("auto"));
        QVERIFY(!page->scenario().hasTlsSettings());
        m_window->scenarioPage()->setTransport(TransportKind::Grpc);

        ::kill(static_cast<pid_t>(server.processId()), SIGTERM);
        QVERIFY(server.waitForFinished(10000));
        m_window->findChild<QAction *>(QStringLiteral("actionNewScenario"))->trigger();
        QCOMPARE(child<QComboBox>("securityCombo")->currentData().toString(), QStringLiteral("auto"));
        QVERIFY(child<QLineEdit>("caCertEdit")->text().isEmpty());
        tabs->setCurrentIndex(0);
    }

    void binaryRequestFileIsSent()
    {
        QTemporaryDir dir;
        QFile file(dir.filePath(QStringLiteral("echo.bin")));
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(QByteArray("\x0a\x03"
                              "abc",
            5)); // EchoRequest{payload: "abc"}, serialized
        file.close();
        auto *edit = child<QLineEdit>("requestBinaryEdit");
        edit->setText(dir.filePath(QStringLiteral("missing.bin")));
        QString error;
        QVERIFY(!m_window->scenarioPage()->prepare(&error));
        QVERIFY2(error.contains(QStringLiteral("missing.bin")), qPrintable(error));
        edit->setText(file.fileName());
        QCOMPARE(m_window->scenarioPage()->scenario().requestBinaryFile, file.fileName());
        auto *fills = child<QLineEdit>("fillEdit");
        const QString previousFills = fills->text();
        fills->clear(); // size knobs apply to a binary request too: none here, so the bytes go as they are
        const auto restore = qScopeGuard([edit, fills, previousFills] {
            edit->clear();
            fills->setText(previousFills);
        });
        child<QSpinBox>("callsEdit")->setValue(50);
        m_window->startRun();
        QTRY_VERIFY_WITH_TIMEOUT(!m_window->runController()->isRunning(), 30000);
        QCOMPARE(m_window->runController()->lastSnapshot().callsOk(), 50ULL);
        QCOMPARE(summaryValue(QStringLiteral("Bytes/call sent")), QStringLiteral("5 B"));
    }

    void fillSizesSayThatTheyWin()
    {
        // {"nums":[1,2]} in the box and nums=1000 below: the status line says the fill replaces nums, and what goes.
        QVERIFY(m_window->schemaPanel()->selectMethod(QStringLiteral("rpcscope.bench.v1.Bench/Sum")));
        child<QPlainTextEdit>("requestEditor")->setPlainText(QStringLiteral(R"({"nums":[1,2]})"));
        auto *fills = child<QLineEdit>("fillEdit");
        fills->setText(QStringLiteral("nums=1000"));
        const auto restore = qScopeGuard([this, fills] {
            fills->clear();
            m_window->schemaPanel()->selectMethod(QStringLiteral("rpcscope.bench.v1.Bench/Echo"));
        });
        QVERIFY(m_window->scenarioPage()->validateNow());
        const QString said = child<QLabel>("requestStatus")->text();
        // 1..1000 as packed varints: 127 one-byte numbers, 873 two-byte ones, the tag and the length: 1876 bytes.
        QVERIFY2(said.contains(QStringLiteral("Fill sizes replace nums in the request above: 1.8 KiB sent")),
            qPrintable(said));
        fills->clear();
        QVERIFY(m_window->scenarioPage()->validateNow());
        QCOMPARE(child<QLabel>("requestStatus")->text(), QStringLiteral("✓ Ready to run"));
    }

    void rawSamplesWrittenWhenTheRunEnds()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("raw.csv"));
        child<QLineEdit>("rawSamplesEdit")->setText(path);
        child<QSpinBox>("callsEdit")->setValue(300);
        QVERIFY(m_window->scenarioPage()->validateNow());
        m_window->startRun();
        QVERIFY(m_window->runController()->isRunning());
        QTRY_VERIFY_WITH_TIMEOUT(!m_window->runController()->isRunning(), 30000);
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = file.readAll().trimmed().split('\n');
        QCOMPARE(lines.size(), 301);
        QCOMPARE(lines.first(), QByteArray("sent_ns,latency_us,status"));
        QVERIFY2(lines.at(1).endsWith(",OK") && lines.at(1).count(',') == 2, lines.at(1).constData());
        QVERIFY(m_window->statusBar()->currentMessage().contains(path));
        // An unwritable file is found before any call is sent.
        child<QLineEdit>("rawSamplesEdit")->setText(QStringLiteral("/no/such/dir/raw.csv"));
        QVERIFY(m_window->scenarioPage()->validateNow());
        m_window->startRun();
        QVERIFY(!m_window->runController()->isRunning());
        QVERIFY2(m_window->statusBar()->currentMessage().contains(QStringLiteral("/no/such/dir/raw.csv")),
            qPrintable(m_window->statusBar()->currentMessage()));
        child<QLineEdit>("rawSamplesEdit")->clear();
        QVERIFY(m_window->scenarioPage()->validateNow());
    }

    void theEditorFoldsAwayForResultsAndTheLayoutIsRemembered()
    {
        auto *central = child<QSplitter>("centralSplitter");
        auto *toggle = child<QToolButton>("editorToggle");
        auto *fold = child<QAction>("actionAutoCollapse");
        QVERIFY(central->sizes().at(0) > 0);
        QVERIFY(toggle->isChecked());
        const int width = central->sizes().at(0);
        // By hand: the toggle in the results' corner folds it away and brings it back at its width.
        toggle->click();
        QCOMPARE(central->sizes().at(0), 0);
        QVERIFY(!m_window->isEditorShown());
        QVERIFY(!child<QAction>("actionEditor")->isChecked());
        child<QAction>("actionEditor")->trigger();
        QCOMPARE(central->sizes().at(0), width);
        QVERIFY(toggle->isChecked());
        // A run folds it away while its results show, when the View menu says so (the default; the suite's is off).
        fold->setChecked(true);
        QCOMPARE(QSettings().value(QStringLiteral("layout/autoCollapse")).toBool(), true);
        child<QSpinBox>("callsEdit")->setValue(50);
        QTest::mouseClick(child<QPushButton>("runButton"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!m_window->runController()->isRunning(), 30000);
        QCOMPARE(central->sizes().at(0), 0);
        QVERIFY(!toggle->isChecked());
        // The results have the window's width: at 1400x900 the summary table shows every row without scrolling.
        m_window->resize(1400, 900);
        QTRY_COMPARE(m_window->size(), QSize(1400, 900));
        QTableWidget *summary = m_window->runPage()->summaryTable();
        saveScreenshot(QStringLiteral("gui-folded-1400x900"));
        QTRY_VERIFY(!summary->verticalScrollBar()->isVisible());
        toggle->click();
        QVERIFY(central->sizes().at(0) > 0);
        fold->setChecked(false);
        // Splitters keep where the user left them, across sessions: saved when moved, restored when made.
        QSplitter first;
        first.addWidget(new QWidget);
        first.addWidget(new QWidget);
        first.resize(600, 100);
        first.show();
        rememberSplitter(&first, QStringLiteral("test/remembered"));
        first.setSizes({ 150, 450 });
        Q_EMIT first.splitterMoved(150, 1);
        QSplitter second;
        second.addWidget(new QWidget);
        second.addWidget(new QWidget);
        second.resize(600, 100);
        rememberSplitter(&second, QStringLiteral("test/remembered"));
        second.show();
        QVERIFY(QTest::qWaitForWindowExposed(&second));
        QCOMPARE(second.sizes(), first.sizes());
    }

    void aboutBoxSaysTheVersionTheCliSays()
    {
        // Help > About and rpcscope-cli --version name the same version and revision.
        QProcess cli;
        cli.start(QStringLiteral(RPCSCOPE_CLI), { QStringLiteral("--version") });
        QVERIFY(cli.waitForFinished(30000));
        const QString said = QString::fromUtf8(cli.readAllStandardOutput()).trimmed(); // rpcscope-cli 0.1.0 (rev)
        const QString version = said.section(u' ', 1);
        QVERIFY2(version.contains(u'(') && version.endsWith(u')'), qPrintable(said));
        QAction *about = nullptr;
        for (QAction *action : m_window->findChildren<QAction *>()) {
            if (action->text() == QStringLiteral("&About rpcscope"))
                about = action;
        }
        QVERIFY(about);
        QString text;
        QTimer poll; // the box is modal: read and closed from inside its own event loop
        connect(&poll, &QTimer::timeout, this, [&] {
            if (auto *box = qobject_cast<QMessageBox *>(QApplication::activeModalWidget())) {
                text = box->text();
                box->accept();
            }
        });
        poll.start(20);
        about->trigger();
        poll.stop();
        QVERIFY2(text.contains(QStringLiteral("<b>rpcscope</b>&nbsp;&nbsp;</td><td>") + version.toHtmlEscaped()),
            qPrintable(text + QStringLiteral("\n--version: ") + said));
    }

    void dbFlagPicksTheHistory()
    {
        // rpcscope --db FILE keeps its runs there, as rpcscope-cli --db does (not in RPCSCOPE_DB's or the default).
        QTemporaryDir dir;
        const QString db = dir.filePath(QStringLiteral("own.sqlite"));
        QProcess gui;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        env.insert(QStringLiteral("RPCSCOPE_DB"), dir.filePath(QStringLiteral("other.sqlite")));
        env.insert(QStringLiteral("XDG_CONFIG_HOME"), dir.filePath(QStringLiteral("config")));
        gui.setProcessEnvironment(env);
        gui.start(QStringLiteral(RPCSCOPE_GUI),
            { QStringLiteral("--db"), db, QStringLiteral("--run"), QStringLiteral("--calls"), QStringLiteral("20"),
                QStringLiteral("--quit-when-done") });
        QVERIFY(gui.waitForFinished(60000));
        QCOMPARE(gui.exitCode(), 0);
        QProcess list;
        list.start(QStringLiteral(RPCSCOPE_CLI),
            { QStringLiteral("history"), QStringLiteral("list"), QStringLiteral("--db"), db });
        QVERIFY(list.waitForFinished(30000));
        const QString listed = QString::fromUtf8(list.readAllStandardOutput());
        QVERIFY2(list.exitCode() == 0 && listed.contains(QStringLiteral("Echo")),
            qPrintable(listed + QString::fromUtf8(list.readAllStandardError())));
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("other.sqlite"))));
    }
};

QTEST_MAIN(TestGui)
#include "tst_gui.moc"
