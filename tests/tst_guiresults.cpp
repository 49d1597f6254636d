// The window's results side, offscreen and driven as a user would: runs saved to the history, opened, compared,
// exported; checks; A/B runs against real built-in servers. The window, scenario and live runs: tst_gui.cpp.
#include "guifixture.h"

#include "abcontroller.h"
#include "abdialog.h"
#include "builtinservers.h"
#include "comparepage.h"
#include "historypage.h"
#include "matrixpage.h"
#include "presentationview.h"
#include "profile/profiler.h"
#include "profilepanel.h"
#include "qcp.h"
#include "replicatechart.h"
#include "resultscontroller.h"
#include "runcontroller.h"
#include "runlistmodel.h"
#include "runpage.h"
#include "sampleruns.h"
#include "scenariopage.h"
#include "store/runjson.h"
#include "store/runstore.h"
#include "store/runwriter.h"
#include "store/secrets.h"
#include "util/cpuset.h"

#include <QAction>
#include <QCheckBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QImageReader>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPointer>
#include <QScopeGuard>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStatusBar>
#include <QTableWidget>
#include <QTemporaryDir>

#include <algorithm>

using namespace rpcscope;

class TestGuiResults : public GuiFixture {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { openWindow(); }

    // First: the runs it makes are the earlier runs the next test opens and compares.
    void checksAreJudgedWhenTheRunEnds()
    {
        auto *checks = child<QLineEdit>("checksEdit");
        const auto reset = qScopeGuard([&] {
            checks->clear();
            m_window->scenarioPage()->validateNow();
        });
        checks->setText(QStringLiteral("p99 < soon"));
        QVERIFY(!m_window->scenarioPage()->validateNow());
        QVERIFY(!child<QPushButton>("runButton")->isEnabled());
        QVERIFY2(child<QLabel>("requestStatus")->text().contains(QStringLiteral("p99 < soon")),
            qPrintable(child<QLabel>("requestStatus")->text()));
        // One bound any run meets, one none can (nothing over loopback answers within a microsecond).
        checks->setText(QStringLiteral("p99<60s, max<1us"));
        QVERIFY(m_window->scenarioPage()->validateNow());
        QCOMPARE(m_window->scenarioPage()->scenario().checks,
            (QStringList { QStringLiteral("p99<60s"), QStringLiteral("max<1us") }));
        child<QSpinBox>("callsEdit")->setValue(300);
        m_window->startRun();
        QVERIFY(m_window->runController()->isRunning());
        QVERIFY(m_window->runPage()->checksLabel()->isHidden());
        QTRY_VERIFY_WITH_TIMEOUT(!m_window->runController()->isRunning(), 30000);
        QLabel *label = m_window->runPage()->checksLabel();
        QVERIFY(!label->isHidden());
        QVERIFY2(label->text().contains(QStringLiteral("1 of 2 failed"))
                && label->text().contains(QStringLiteral("max&lt;1us")),
            qPrintable(label->text()));
    }

    void runsAreSavedOpenedComparedAndExported()
    {
        RunStore *store = m_window->runRecorder()->store();
        QVERIFY(store && store->isOpen());
        QString error;
        const size_t before = store->list({}, &error).size();
        child<QSpinBox>("callsEdit")->setValue(300);
        QTest::mouseClick(child<QPushButton>("runButton"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!m_window->runController()->isRunning(), 30000);
        // The writer thread stores the end; the History page refreshes when it says so.
        QVERIFY(m_window->runRecorder()->writer()->flush(std::chrono::seconds(10)));
        const std::vector<RunListEntry> rows = store->list({}, &error);
        QCOMPARE(rows.size(), before + 1);
        QCOMPARE(rows.front().status, QStringLiteral("finished"));
        QCOMPARE(rows.front().calls, 300ULL);
        QCOMPARE(rows.front().target, QStringLiteral("builtin"));
        QTRY_COMPARE(m_window->historyPage()->model()->rowCount(), static_cast<int>(rows.size()));

        // An earlier run opens on the Run page again, whole (read off the GUI thread).
        QVERIFY(m_window->resultsController()->openRun(rows.back().id));
        QVERIFY(m_window->resultsController()->isLoading());
        QTRY_VERIFY(!m_window->resultsController()->isLoading());
        QCOMPARE(m_window->resultsController()->currentRun()->id, rows.back().id);
        QCOMPARE(summaryValue(QStringLiteral("Calls")), QString::number(rows.back().calls));
        // Asked for another run before the first is read: only the last one asked for is shown.
        QVERIFY(m_window->resultsController()->openRun(rows.front().id));
        QVERIFY(m_window->resultsController()->openRun(rows.back().id));
        QTRY_VERIFY(!m_window->resultsController()->isLoading());
        QCOMPARE(m_window->resultsController()->currentRun()->id, rows.back().id);
        // A run that is not there: the status bar says so and the Run page keeps its run.
        QVERIFY(m_window->resultsController()->openRun(999999));
        QTRY_VERIFY(!m_window->resultsController()->isLoading());
        QCOMPARE(m_window->resultsController()->currentRun()->id, rows.back().id);
        QVERIFY2(m_window->statusBar()->currentMessage().contains(QStringLiteral("no run #999999")),
            qPrintable(m_window->statusBar()->currentMessage()));

        QTemporaryDir out;
        const QList<QPair<QString, QString>> formats { { QStringLiteral("html"), QStringLiteral("run.html") },
            { QStringLiteral("png"), QStringLiteral("run.png") }, { QStringLiteral("svg"), QStringLiteral("run.svg") },
            { QStringLiteral("pdf"), QStringLiteral("run.pdf") }, { QStringLiteral("csv"), QStringLiteral("run.csv") },
            { QStringLiteral("json"), QStringLiteral("run.json") },
            { QStringLiteral("hgrm"), QStringLiteral("run.hgrm") },
            { QStringLiteral("ghz-json"), QStringLiteral("ghz.json") },
            { QStringLiteral("markdown"), QStringLiteral("run.md") } };
        for (const auto &[format, file] : formats) {
            QVERIFY2(m_window->resultsController()->exportTo(out.filePath(file), format, false, &error),
                qPrintable(format + u' ' + error));
            QVERIFY2(QFileInfo(out.filePath(file)).size() > 100, qPrintable(file));
        }
        QVERIFY(!m_window->resultsController()->exportTo(
            QStringLiteral("/proc/no/such/run.html"), QStringLiteral("html"), false, &error));
        QVERIFY2(error.contains(QStringLiteral("/proc/no/such")), qPrintable(error));

        // Two runs compared: overlays, the table, the verdict; exported as one HTML report.
        QVERIFY(m_window->compareRuns({ rows.back().id, rows.front().id }));
        QTRY_VERIFY(!m_window->resultsController()->isLoading());
        ComparePage *compare = m_window->comparePage();
        QCOMPARE(compare->runs().size(), 2);
        QVERIFY(compare->table()->rowCount() >= 10);
        QVERIFY(!compare->verdictText().isEmpty());
        QCOMPARE(compare->plot(0)->graphCount(), 2);
        // One line a metric: at 1400x900, the editor beside it, every row shows without scrolling.
        m_window->resize(1400, 900);
        QTRY_COMPARE(m_window->size(), QSize(1400, 900));
        saveScreenshot(QStringLiteral("compare-1400x900"));
        QTRY_VERIFY(!compare->table()->verticalScrollBar()->isVisible());
        QVERIFY(m_window->resultsController()->exportTo(
            out.filePath(QStringLiteral("cmp.html")), QStringLiteral("html"), true, &error));
        QFile html(out.filePath(QStringLiteral("cmp.html")));
        QVERIFY(html.open(QIODevice::ReadOnly));
        QVERIFY(QString::fromUtf8(html.readAll()).contains(compare->verdictText().section(u':', 0, 0).toHtmlEscaped()));

        // File > Export comparison offers the slide too, as PNG (1x, 2x) and PDF.
        const struct {
            const char *format;
            QSize size;
        } slides[] = { { "slide-png", QSize(1920, 1080) }, { "slide-png-2x", QSize(3840, 2160) } };
        for (const auto &[format, size] : slides) {
            const QString file = out.filePath(QString::fromLatin1(format) + QStringLiteral(".png"));
            QVERIFY2(m_window->resultsController()->exportTo(file, QString::fromLatin1(format), true, &error),
                qPrintable(error));
            QCOMPARE(QImageReader(file).size(), size);
        }
        QVERIFY2(m_window->resultsController()->exportTo(
                     out.filePath(QStringLiteral("slide.pdf")), QStringLiteral("slide-pdf"), true, &error),
            qPrintable(error));
        QFile pdf(out.filePath(QStringLiteral("slide.pdf")));
        QVERIFY(pdf.open(QIODevice::ReadOnly));
        QVERIFY(pdf.read(5) == "%PDF-");
        QVERIFY(!m_window->resultsController()->exportTo(
            out.filePath(QStringLiteral("one.png")), QStringLiteral("slide-png"), false, &error));
        QVERIFY2(error.contains(QStringLiteral("compare two runs")), qPrintable(error));

        // View > Present (F11): the comparison full screen as a slide; Esc leaves.
        auto *present = m_window->findChild<QAction *>(QStringLiteral("actionPresent"));
        QVERIFY(present);
        QCOMPARE(present->shortcut(), QKeySequence(Qt::Key_F11));
        present->trigger();
        QPointer<PresentationView> presentation = m_window->findChild<PresentationView *>();
        QVERIFY(presentation);
        QCOMPARE(presentation->count(), 1);
        QCOMPARE(presentation->slide()->text().headline, slideHeadline(compare->comparison()));
        // Active, as a full screen window is: Esc is then the view's, not the main window's Stop.
        QVERIFY(QTest::qWaitForWindowActive(presentation));
        QTest::keyClick(presentation, Qt::Key_Escape);
        QTRY_VERIFY(!presentation);

        // The run on the Run page against an earlier one of its method (Run > Compare with a previous run).
        QVERIFY(m_window->resultsController()->openRun(rows.front().id));
        QTRY_VERIFY(!m_window->resultsController()->isLoading());
        QCOMPARE(m_window->resultsController()->currentRun()->id, rows.front().id);
        const std::vector<RunListEntry> baselines = m_window->resultsController()->baselineCandidates();
        QVERIFY(!baselines.empty());
        QVERIFY(std::none_of(
            baselines.cbegin(), baselines.cend(), [&](const RunListEntry &e) { return e.id == rows.front().id; }));
        QVERIFY(std::all_of(baselines.cbegin(), baselines.cend(),
            [&](const RunListEntry &e) { return e.method == m_window->resultsController()->currentRun()->method; }));
        QVERIFY(m_window->resultsController()->compareCurrentWith(baselines.front().id));
        QTRY_VERIFY(!m_window->resultsController()->isLoading());
        QCOMPARE(compare->baseline()->id, baselines.front().id);
        QCOMPARE(compare->candidate()->id, rows.front().id);
        QVERIFY(!compare->verdictText().isEmpty());

        // What was exported as JSON comes back through import as a new run with the same numbers.
        // Read and added off the GUI thread; the History is refreshed before the end is told.
        ResultsController *results = m_window->resultsController();
        QSignalSpy imported(results, &ResultsController::reportsImported);
        const int listed = m_window->historyPage()->model()->rowCount();
        QVERIFY(results->importReports(
            { out.filePath(QStringLiteral("run.json")), out.filePath(QStringLiteral("ghz.json")) }));
        QVERIFY(results->isImporting());
        QVERIFY(!results->importReports({ out.filePath(QStringLiteral("run.json")) })); // one at a time
        QTRY_COMPARE(imported.size(), 1);
        QVERIFY(!results->isImporting());
        QCOMPARE(imported.first().at(0).toInt(), 2);
        QVERIFY2(imported.first().at(1).toString().isEmpty(), qPrintable(imported.first().at(1).toString()));
        QCOMPARE(m_window->historyPage()->model()->rowCount(), listed + 2);
        QCOMPARE(store->list({}, &error).front().calls, rows.back().calls);
    }

    void aFolderOfSegmentsIsMergedAndShownWithItsWorkers()
    {
        // Four workers' reports of one split run, the third with a p99 ten times the others' (a slow node).
        QTemporaryDir folder;
        for (int i = 0; i < 4; ++i) {
            RunRecord run;
            run.method = QStringLiteral("rpcscope.bench.v1.Bench/Sum");
            run.transport = QStringLiteral("grpc");
            run.status = QStringLiteral("finished");
            run.split.count = 4;
            run.split.planId = QStringLiteral("0123456789abcdef");
            WorkerRecord worker;
            worker.index = i;
            worker.host = QStringLiteral("node-%1").arg(i);
            run.split.workers << worker;
            RunSnapshot &s = run.snapshot;
            s.state = RunState::Finished;
            s.elapsed = std::chrono::seconds(1);
            s.timedStartUnixUs = 1796310000000000 + i * 700;
            for (int k = 0; k < 100; ++k)
                s.latency.record(static_cast<uint64_t>((i == 2 && k >= 95 ? 10'000'000 : 1'000'000) + k));
            s.statusCounts[CallStatus::Ok] = 100;
            QFile file(folder.filePath(QStringLiteral("segment-%1.json").arg(i)));
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(QJsonDocument(runToJson(run)).toJson());
        }
        ResultsController *results = m_window->resultsController();
        QSignalSpy imported(results, &ResultsController::reportsImported);
        QVERIFY(results->importReports({ folder.path() }));
        QTRY_COMPARE(imported.size(), 1);
        QCOMPARE(imported.first().at(0).toInt(), 1); // one run: the four merged
        QVERIFY2(imported.first().at(1).toString().isEmpty(), qPrintable(imported.first().at(1).toString()));
        QCOMPARE(results->lastMergedRuns().size(), 1);
        QVERIFY(results->openRun(results->lastMergedRuns().front()));
        QTRY_VERIFY(!results->isLoading());
        QCOMPARE(results->currentRun()->snapshot.callsOk(), 400ULL);
        QTableWidget *workers = m_window->runPage()->workersTable();
        QTabWidget *tabs = m_window->runPage()->chartTabs();
        QVERIFY(tabs->indexOf(workers) >= 0);
        QCOMPARE(tabs->tabText(tabs->indexOf(workers)), QStringLiteral("Workers (4)"));
        QCOMPARE(workers->rowCount(), 4);
        QCOMPARE(workers->item(2, 1)->text(), QStringLiteral("node-2"));
        QVERIFY2(workers->item(2, 6)->toolTip().contains(QStringLiteral("stands out: p99")),
            qPrintable(workers->item(2, 6)->toolTip()));
        QVERIFY(workers->item(1, 6)->toolTip().isEmpty());
        QCOMPARE(workers->item(3, 7)->text(), QStringLiteral("+2.10 ms")); // started 2.1 ms after the first
        tabs->setCurrentWidget(workers);
        saveScreenshot(QStringLiteral("guiresults-split-run-workers"));

        // One segment short: merged all the same, marked partial, and said so.
        QVERIFY(QFile::remove(folder.filePath(QStringLiteral("segment-1.json"))));
        imported.clear();
        QVERIFY(results->importReports({ folder.path() }));
        QTRY_COMPARE(imported.size(), 1);
        QVERIFY2(imported.first().at(1).toString().contains(QStringLiteral("marked partial: 1/4 missing")),
            qPrintable(imported.first().at(1).toString()));
        QVERIFY(results->openRun(results->lastMergedRuns().front()));
        QTRY_VERIFY(!results->isLoading());
        QVERIFY(results->currentRun()->split.partial);
        QCOMPARE(workers->rowCount(), 4);
        QCOMPARE(workers->item(3, 1)->text(), QStringLiteral("missing: not in this merge"));

        // A run that is not split has no Workers tab: the next run shown (here none) takes it away.
        tabs->setCurrentWidget(workers); // an export from here writes the histogram, not a chart that is not there
        QString error;
        QVERIFY2(results->exportTo(folder.filePath(QStringLiteral("run.svg")), QStringLiteral("svg"), false, &error),
            qPrintable(error));
        m_window->runPage()->clear();
        QCOMPARE(tabs->indexOf(workers), -1);
        QCOMPARE(workers->rowCount(), 0);
        m_window->runPage()->showWorkers(SplitRecord {});
        QCOMPARE(tabs->indexOf(workers), -1);
    }

    void abFromTheGuiFlagsTheSlowerServer()
    {
        // Both targets are the built-in server started for the A/B run; B's gets a 1 ms delay through its environment.
        AbRequest request;
        // 20 ms: far above what a loaded test machine adds by itself, so the verdict cannot be noise.
        // Both get a credential in their environment: the history must not keep it (the window's A/B records were
        // kept unredacted until core's AbSession made them as the CLI's are).
        const auto token = qMakePair(QStringLiteral("API_TOKEN"), QStringLiteral("hunter2-not-for-the-history"));
        request.targets[0].environment = { token };
        request.targets[1].environment = { { QStringLiteral("RPCSCOPE_SERVE_DELAY"), QStringLiteral("20ms") }, token };
        child<QSpinBox>("callsEdit")->setValue(600);
        // 4 callers, not the default 20: with 20, A's calls queued for milliseconds, more under ASan, and the blocks'
        // spread left B's 20 ms undecided in a clean-clone CI run (p50 +47.6%, 95% CI -27.6 .. +200.9%).
        auto *concurrency = child<QSpinBox>("concurrencyEdit");
        const int callers = concurrency->value();
        concurrency->setValue(4);
        const auto restore = qScopeGuard([concurrency, callers] { concurrency->setValue(callers); });
        // A comparison shown before: none of it may stay on the page once the A/B starts, until its first blocks.
        ComparePage *compare = m_window->comparePage();
        compare->setRuns({ makeRun(QStringLiteral("old A"), 1, 1e6), makeRun(QStringLiteral("old B"), 2, 2e6) });
        QVERIFY(compare->plot(0)->graphCount() > 0);
        QString error;
        QVERIFY2(m_window->runLauncher()->startAb(request, &error), qPrintable(error));
        QVERIFY(!child<QPushButton>("runButton")->isEnabled());
        QVERIFY(compare->runs().isEmpty());
        for (int i = 0; i < 3; ++i)
            QCOMPARE(compare->plot(i)->graphCount(), 0);
        QVERIFY2(compare->sequentialText().startsWith(QStringLiteral("Live A/B: starting")),
            qPrintable(compare->sequentialText()));
        QTRY_VERIFY_WITH_TIMEOUT(!m_window->runLauncher()->abController()->isRunning(), 90000);
        QCOMPARE(compare->runs().size(), 2);
        QVERIFY2(compare->comparison().regressions.contains(QStringLiteral("p50")), qPrintable(compare->verdictText()));
        QVERIFY(compare->verdictText().startsWith(QStringLiteral("regression: p50 +")));
        // The blocks (or server processes) the verdict compares, a dot each, p50 first.
        const Comparison &comparison = compare->comparison();
        QVERIFY(!comparison.singleRun);
        ReplicateChart *spread = compare->replicateChart();
        QVERIFY(spread->message().isEmpty());
        QVERIFY(!spread->shown().isEmpty());
        QCOMPARE(spread->shown().first().metric, QStringLiteral("p50"));
        QCOMPARE(static_cast<qint64>(spread->shown().first().a.size()), comparison.replicatesA);
        QCOMPARE(static_cast<qint64>(spread->shown().first().b.size()), comparison.replicatesB);
        int dots = 0;
        for (int g = 0; g < spread->graphCount(); ++g)
            dots += spread->graph(g)->dataCount();
        int expected = 0;
        for (const ReplicateSpread &shown : spread->shown())
            expected += static_cast<int>(shown.a.size() + shown.b.size());
        QCOMPARE(dots, expected);
        QVERIFY(compare->basisText().contains(comparison.basis()));
        const auto &records = m_window->runLauncher()->abController()->records();
        QVERIFY(records[0].id > 0 && records[1].id > 0);
        QCOMPARE(records[0].snapshot.callsOk(), 600ULL);
        QCOMPARE(records[1].snapshot.callsOk(), 600ULL);
        QVERIFY(m_window->runRecorder()->writer()->flush(std::chrono::seconds(10)));
        const auto stored = m_window->runRecorder()->store()->load(records[1].id, &error);
        QVERIFY2(stored, qPrintable(error));
        QCOMPARE(stored->status, QStringLiteral("finished"));
        // The side's environment: what is no credential in clear, and what differs; the credential redacted, in
        // both sides' records, as the CLI's ab keeps them. Each side's document names its own target.
        const QJsonArray env = stored->server.value(QStringLiteral("env")).toArray();
        QVERIFY(env.contains(QStringLiteral("RPCSCOPE_SERVE_DELAY=20ms")));
        for (const qint64 id : { records[0].id, records[1].id }) {
            const auto run = m_window->runRecorder()->store()->load(id, &error);
            QVERIFY2(run, qPrintable(error));
            const QString server = QString::fromUtf8(QJsonDocument(run->server).toJson());
            QVERIFY2(server.contains(QStringLiteral("API_TOKEN")) && !server.contains(QStringLiteral("hunter2")),
                qPrintable(server));
            QCOMPARE(
                run->server.value(QStringLiteral("command")).toString(), QStringLiteral("rpcscope-cli serve grpc"));
            QCOMPARE(run->scenario.value(QStringLiteral("target")).toString(), QStringLiteral("builtin"));
            QCOMPARE(run->scenario.value(QStringLiteral("ab_side")).toString(),
                id == records[0].id ? QStringLiteral("A") : QStringLiteral("B"));
        }
        QVERIFY2(
            compare->differencesText().contains(QStringLiteral("server env RPCSCOPE_SERVE_DELAY: (unset) -> 20ms")),
            qPrintable(compare->differencesText()));
        QVERIFY(child<QPushButton>("runButton")->isEnabled());
    }

    void abWithProfilesShowsWhereBsTimeWent()
    {
        // The A/B dialog's "CPU profiles: Servers": both sides' built-in servers sampled during their blocks, B's
        // burning 40 us of CPU a call in rpcscope::burnCpu; the Compare runs page gets the differential flame graph,
        // and the history keeps both sides' profiles.
        AbRequest request;
        request.targets[1].environment = { { QStringLiteral("RPCSCOPE_SERVE_BURN"), QStringLiteral("40us") } };
        request.profileServer = true;
        child<QSpinBox>("callsEdit")->setValue(3000);
        // The Load tab's sample period is the A/B's too: 1 ms of CPU a sample, for enough of them in 3000 calls.
        child<QLineEdit>("profilePeriodEdit")->setText(QStringLiteral("1ms"));
        auto *concurrency = child<QSpinBox>("concurrencyEdit");
        const int callers = concurrency->value();
        concurrency->setValue(2);
        const auto restore = qScopeGuard([this, concurrency, callers] {
            concurrency->setValue(callers);
            child<QSpinBox>("callsEdit")->setValue(600);
            child<QLineEdit>("profilePeriodEdit")->clear();
        });
        QString error;
        QVERIFY2(m_window->runLauncher()->startAb(request, &error), qPrintable(error));
        QTRY_VERIFY_WITH_TIMEOUT(!m_window->runLauncher()->abController()->isRunning(), 120000);
        ComparePage *compare = m_window->comparePage();
        QCOMPARE(compare->runs().size(), 2);
        const auto &records = m_window->runLauncher()->abController()->records();
        QVERIFY(records[0].serverProfile && records[1].serverProfile);
        QVERIFY(!records[0].clientProfile && !records[1].clientProfile);
        if (perfSupport().problem.isEmpty())
            QVERIFY2(records[1].serverProfile->how.contains(QLatin1String("one sample per 1000 us of CPU")),
                qPrintable(records[1].serverProfile->how));
        auto *tabs = compare->findChild<QTabWidget *>();
        const int tab = tabs->indexOf(compare->serverProfilePanel());
        QVERIFY(tab >= 0);
        ProfilePanel *panel = compare->serverProfilePanel();
        if (!perfSupport().problem.isEmpty()) {
            QVERIFY2(panel->summaryLabel()->text().contains(QStringLiteral("no samples")),
                qPrintable(panel->summaryLabel()->text()));
            return;
        }
        QVERIFY(panel->diff());
        // B's burn is where its extra time went: in B only, and by far its biggest change.
        const auto burn = std::find_if(panel->diff()->functions.cbegin(), panel->diff()->functions.cend(),
            [](const FunctionChange &c) { return c.name.contains(QStringLiteral("burnCpu")); });
        QVERIFY(burn != panel->diff()->functions.cend());
        QCOMPARE(burn->selfA, 0.0);
        QVERIFY2(burn->selfB > 20 && burn->selfB < 60, qPrintable(QString::number(burn->selfB)));
        tabs->setCurrentIndex(tab);
        saveScreenshot(QStringLiteral("compare-ab-server-profile"));
        QVERIFY(m_window->runRecorder()->writer()->flush(std::chrono::seconds(10)));
        for (const RunRecord &record : records) {
            const auto stored = m_window->runRecorder()->store()->load(record.id, &error);
            QVERIFY2(stored, qPrintable(error));
            QVERIFY(stored->serverProfile && stored->serverProfile->calls() > 0);
        }
        // The comparison's report carries it too.
        const QString dir = qEnvironmentVariable("RPCSCOPE_SCREENSHOTS");
        QTemporaryDir out;
        const QString html = QDir(dir.isEmpty() ? out.path() : dir).filePath(QStringLiteral("ab-profile-report.html"));
        QVERIFY2(
            m_window->resultsController()->exportTo(html, QStringLiteral("html"), true, &error), qPrintable(error));
        QFile file(html);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray page = file.readAll();
        QVERIFY(page.contains("<h2>Where B's server time went</h2>") && page.contains("data:image/svg+xml;base64,"));
    }

    void liveAbUntilDecidedStopsOnAClearSlowdown()
    {
        // B's built-in server answers 20 ms late: judged pair by pair, the run decides long before its 2000 calls.
        // Not 2 ms: with 50 callers on a busy machine (ASan, two tests at once) A's p50 is about 9 ms of queueing for
        // the CPU, which B's calls spend sleeping, and 2 ms late came out as +20%, undecided after 50 pairs.
        AbRequest request;
        request.targets[1].environment = { { QStringLiteral("RPCSCOPE_SERVE_DELAY"), QStringLiteral("20ms") } };
        request.untilDecided = true;
        request.block = QStringLiteral("40"); // a block size given keeps the rest of the design (until decided)
        child<QSpinBox>("callsEdit")->setValue(2000);
        AbController *ab = m_window->runLauncher()->abController();
        ComparePage *compare = m_window->comparePage();
        const std::vector<int> cpusBefore = availableCpus();
        QStringList headlines; // the Compare runs page's headline after each progress report, live
        QList<int> histogramPoints;
        QString progress; // the status bar's line
        QStringList liveRowVerdicts; // the delta table's verdict cells while it runs
        const auto watch = connect(ab, &AbController::progressed, this, [&] {
            if (ab->isRunning() && compare->runs().size() == 2) {
                QTableWidget *table = compare->table(); // waits for the comparison being computed
                for (int row = 0; row < table->rowCount(); ++row) {
                    if (const QTableWidgetItem *cell = table->item(row, table->columnCount() - 1))
                        liveRowVerdicts << cell->text();
                }
            }
            if (headlines.size() == 3)
                saveScreenshot(QStringLiteral("guiresults-ab-live"));
            if (ab->progressText().startsWith(QStringLiteral("Round ")))
                progress = ab->progressText();
            if (!compare->sequentialText().isEmpty()
                && headlines.value(headlines.size() - 1) != compare->sequentialText()) {
                headlines << compare->sequentialText();
                histogramPoints << compare->plot(0)->plottableCount();
            }
        });
        QString error;
        QVERIFY2(m_window->runLauncher()->startAb(request, &error), qPrintable(error));
        QTRY_VERIFY_WITH_TIMEOUT(!ab->isRunning(), 90000);
        disconnect(watch);
        // Live: the page came up with the first blocks, its headline the sequential verdict, changing as pairs came.
        QVERIFY2(headlines.size() >= 2, qPrintable(headlines.join(u'\n')));
        for (const QString &h : headlines)
            QVERIFY2(h.startsWith(QStringLiteral("Live A/B: ")), qPrintable(h));
        QVERIFY2(headlines.join(u'\n').contains(QStringLiteral("not yet decided after ")),
            qPrintable(headlines.join(u'\n')));
        QVERIFY(histogramPoints.last() >= 2); // both sides overlaid
        // One verdict while it runs, the headline's: no row of the table says "regression" on its own meanwhile.
        QVERIFY(!liveRowVerdicts.isEmpty());
        for (const QString &cell : std::as_const(liveRowVerdicts))
            QVERIFY2(!cell.startsWith(QStringLiteral("regression")) && !cell.startsWith(QStringLiteral("improvement")),
                qPrintable(cell));
        QVERIFY2(progress.contains(QStringLiteral(", A p50 ")) && progress.contains(QStringLiteral(", B p50 ")),
            qPrintable(progress));
        QCOMPARE(progress.contains(QStringLiteral("; rpcscope on CPU %1, the servers on ").arg(cpusBefore.front())),
            cpusBefore.size() >= 2);
        // Decided: a regression, before the call budget, and the run says it stopped on it.
        const SequentialAb sequential = ab->sequential();
        QVERIFY2(sequential.decision() == SequentialDecision::Regression,
            qPrintable(sequential.statusLine() + u'\n' + headlines.join(u'\n')));
        QVERIFY2(sequential.blockPairs() < sequential.plannedPairs(), qPrintable(sequential.statusLine()));
        // 50 rounds: ten server processes a side by default, judged on pairs of processes of five rounds each.
        QCOMPARE(sequential.processes(), 10);
        QVERIFY(sequential.judgesServerCpu()); // built-in servers the session started: their CPU clocks are read
        QVERIFY(!sequential.decidedBy().isEmpty());
        QCOMPARE(sequential.blockPairs(), 5 * sequential.pairs());
        const auto &records = ab->records();
        QVERIFY(records[1].snapshot.callsOk() < 2000);
        QCOMPARE(records[0].snapshot.blocks.size(), records[1].snapshot.blocks.size()); // no A block cut short
        QCOMPARE(static_cast<int>(records[1].snapshot.blocks.size()), sequential.blockPairs());
        QCOMPARE(records[1].snapshot.blocks.back().process, sequential.pairs());
        // The saved pair shows the same verdict, judged again from its blocks, above the fixed-sample one.
        QCOMPARE(compare->runs().size(), 2);
        QVERIFY2(compare->sequentialText().startsWith(
                     QStringLiteral("Judged until decided: regression after %1 process pairs, by %2")
                         .arg(sequential.pairs())
                         .arg(sequential.decidedBy())),
            qPrintable(compare->sequentialText()));
        QVERIFY2(compare->sequentialText().contains(
                     QStringLiteral("; judged on %1 processes a side, each started anew").arg(sequential.pairs())),
            qPrintable(compare->sequentialText()));
        // Two built-in servers the GUI started: pinned apart from this process while the run lasted (recorded, and
        // undone after it); processes replicated, the verdict needs no word on where two of them ran.
        const QString unpinned = QStringLiteral("; two unpinned server processes: where they ran may have decided it");
        QCOMPARE(formatCpuList(availableCpus()), formatCpuList(cpusBefore)); // unpinned again
        const bool pinned = cpusBefore.size() >= 2;
        QVERIFY(!compare->sequentialText().endsWith(unpinned));
        QVERIFY(!ab->sequentialText().endsWith(unpinned));
        QVERIFY(m_window->runRecorder()->writer()->flush(std::chrono::seconds(10)));
        const auto stored = m_window->runRecorder()->store()->load(records[1].id, &error);
        QVERIFY2(stored, qPrintable(error));
        QCOMPARE(stored->status, QStringLiteral("finished"));
        QVERIFY(
            stored->scenario.value(QStringLiteral("ab")).toObject().value(QStringLiteral("until_decided")).toBool());
        if (pinned)
            QCOMPARE(stored->environment.value(QStringLiteral("client_cpus")).toString(),
                QString::number(cpusBefore.front()));
        QCOMPARE(stored->snapshot.blocks.size(), records[1].snapshot.blocks.size());
        saveScreenshot(QStringLiteral("guiresults-ab-decided"));
        // Presented, the slide leads with the same verdict.
        int current = -1;
        const QList<SlideSpec> slides = PresentationView::slidesOf(compare, &current);
        QCOMPARE(slides.size(), 1);
        QVERIFY2(slides[current].headline.startsWith(QStringLiteral("Regression after %1 process pairs, by %2: ")
                                                         .arg(sequential.pairs())
                                                         .arg(sequential.decidedBy())),
            qPrintable(slides[current].headline));
        QVERIFY2(slides[current].subline.startsWith(
                     QStringLiteral("Judged on %1 processes a side, each started anew (%2 pairs of blocks). An anytime")
                         .arg(sequential.pairs())
                         .arg(sequential.blockPairs())),
            qPrintable(slides[current].subline));
    }

    void anAbDesignIsCheckedByTheCliRules()
    {
        // Issue 34: more server starts than rounds were refused by the CLI's ab and silently cut by the window. One
        // set of rules now (prepareAb): refused here too, naming the dialog's field, before any server starts.
        child<QSpinBox>("callsEdit")->setValue(300);
        AbRequest request;
        request.block = QStringLiteral("100"); // three rounds
        request.restarts = 5;
        QString error;
        QVERIFY(!m_window->runLauncher()->startAb(request, &error));
        QVERIFY2(error.startsWith(QStringLiteral("Server processes per side: 5 server starts a side, but the run has "
                                                 "only 3 rounds")),
            qPrintable(error));
        QVERIFY(!m_window->runLauncher()->abController()->isRunning());
        // And a block in time for a counted run, which the window took as a block of calls.
        request.restarts = 0;
        request.block = QStringLiteral("1s");
        QVERIFY(!m_window->runLauncher()->startAb(request, &error));
        QVERIFY2(error.startsWith(QStringLiteral("Block size: the run is counted (Calls), so give a number of calls")),
            qPrintable(error));
        QVERIFY(child<QPushButton>("runButton")->isEnabled());
    }

    void aServerCommandIsToldFromAnAddressAsTheCliTellsIt()
    {
        // A command with neither a space nor {port} is an address to the CLI's ab (and to core's AbSession, which
        // both front ends use): the dialog says so and how to write it, rather than dialling "./server".
        AbDialog dialog(m_window.get());
        AbRequest request;
        request.targets[1].kind = AbRequest::Kind::Command;
        request.targets[1].text = QStringLiteral("./server");
        dialog.setRequest(request);
        QString error;
        QVERIFY(!dialog.validatedRequest(&error));
        QVERIFY2(error.startsWith(QStringLiteral("B: \"./server\" has no space and no {port}")), qPrintable(error));
        request.targets[1].text = QStringLiteral("./server --port {port}");
        dialog.setRequest(request);
        QVERIFY2(dialog.validatedRequest(&error), qPrintable(error));
    }

    void aClientCommandMakesBsCallsFromTheWindow()
    {
        // B's calls made by a client command (here the shell fallback, timing `true` per call): the run records the
        // command, names B by it, and counts every call it reported.
        const QString client = QStringLiteral("sh " RPCSCOPE_SOURCE_DIR "/examples/clients/percall.sh true");
        AbDialog dialog(m_window.get());
        AbRequest request;
        request.targets[1].clientEnvironment = { { QStringLiteral("MODE"), QStringLiteral("fast") } };
        dialog.setRequest(request);
        QString error;
        QVERIFY(!dialog.validatedRequest(&error));
        QVERIFY2(
            error.startsWith(QStringLiteral("B: the client environment is for a client command")), qPrintable(error));
        request.targets[1].client = QStringLiteral("no-such-client-program --x");
        dialog.setRequest(request);
        QVERIFY(!dialog.validatedRequest(&error));
        QVERIFY2(
            error.contains(QStringLiteral("no-such-client-program: program not found in PATH")), qPrintable(error));
        request.targets[1].client = client;
        dialog.setRequest(request);
        const std::optional<AbRequest> valid = dialog.validatedRequest(&error);
        QVERIFY2(valid, qPrintable(error));
        QCOMPARE(valid->targets[1].client, client);
        QCOMPARE(valid->targets[1].clientEnvironment, request.targets[1].clientEnvironment);

        child<QSpinBox>("callsEdit")->setValue(40);
        QVERIFY2(m_window->runLauncher()->startAb(*valid, &error), qPrintable(error));
        AbController *ab = m_window->runLauncher()->abController();
        QTRY_VERIFY_WITH_TIMEOUT(!ab->isRunning(), 60000);
        const std::array<RunRecord, 2> records = ab->records();
        QCOMPARE(records[1].snapshot.callsOk(), 40ULL);
        QCOMPARE(records[0].snapshot.callsOk(), 40ULL);
        QCOMPARE(
            records[1].scenario.value(QStringLiteral("client_command")).toObject().value(QStringLiteral("command")),
            QJsonValue(client));
        QVERIFY(!records[0].scenario.contains(QStringLiteral("client_command")));
        QVERIFY2(records[1].name.contains(QStringLiteral("percall.sh")), qPrintable(records[1].name));
    }

    void aClientCommandMakesASingleRunsCallsFromTheWindow()
    {
        // The run settings' client command (run --client): its calls are the run's, saved with what made them.
        auto *command = child<QLineEdit>("clientCommandEdit");
        auto *environment = child<QLineEdit>("clientEnvEdit");
        const auto reset = qScopeGuard([&] {
            command->clear();
            environment->clear();
            m_window->scenarioPage()->validateNow();
        });
        QVERIFY(!environment->isEnabled());
        const QString client = QStringLiteral("sh " RPCSCOPE_SOURCE_DIR "/examples/clients/percall.sh true");
        command->setText(client);
        QVERIFY(environment->isEnabled());
        environment->setText(QStringLiteral("MODE=fast 'LABEL=two words'"));
        QVERIFY(m_window->scenarioPage()->validateNow());
        const Scenario scenario = m_window->scenarioPage()->scenario();
        QCOMPARE(scenario.clientCommand, client);
        // Send once is rpcscope's own one call, client command or not (it has a reply to show).
        m_window->runLauncher()->sendOnce();
        QTRY_VERIFY_WITH_TIMEOUT(!m_window->runLauncher()->isSending(), 30000);
        QVERIFY2(m_window->scenarioPage()->replyText().contains(QStringLiteral("Status: OK\n")),
            qPrintable(m_window->scenarioPage()->replyText()));
        QCOMPARE(scenario.clientEnvironment,
            (QStringList { QStringLiteral("MODE=fast"), QStringLiteral("LABEL=two words") }));
        RunStore *store = m_window->runRecorder()->store();
        QString error;
        const size_t before = store->list({}, &error).size();
        child<QSpinBox>("callsEdit")->setValue(30);
        m_window->startRun();
        QTRY_VERIFY_WITH_TIMEOUT(!m_window->runController()->isRunning(), 60000);
        QVERIFY(m_window->runRecorder()->writer()->flush(std::chrono::seconds(10)));
        const std::vector<RunListEntry> rows = store->list({}, &error);
        QCOMPARE(rows.size(), before + 1);
        QCOMPARE(rows.front().calls, 30ULL);
        const std::optional<RunRecord> saved = store->load(rows.front().id, &error);
        QVERIFY2(saved, qPrintable(error));
        QCOMPARE(saved->scenario.value(QStringLiteral("client_command")).toObject().value(QStringLiteral("command")),
            QJsonValue(client));

        // A client that breaks off: said in a box that names its line, and nothing of it kept in the history.
        command->setText(QStringLiteral("sh -c 'echo \"{\\\"ready\\\": true}\"; read l; echo garbage-line; sleep 5'"));
        environment->clear();
        QVERIFY(m_window->scenarioPage()->validateNow());
        m_window->startRun();
        QTRY_VERIFY_WITH_TIMEOUT(!m_window->runController()->isRunning(), 30000);
        QTRY_VERIFY_WITH_TIMEOUT(m_window->findChild<QMessageBox *>(QStringLiteral("clientCommandError")), 10000);
        auto *box = m_window->findChild<QMessageBox *>(QStringLiteral("clientCommandError"));
        QVERIFY2(box->text().contains(QStringLiteral("stdout line 2"))
                && box->text().contains(QStringLiteral("garbage-line")),
            qPrintable(box->text()));
        box->close();
        QVERIFY(m_window->runRecorder()->writer()->flush(std::chrono::seconds(10)));
        QCOMPARE(store->list({}, &error).size(), before + 1);

        // The stack comparison's cells are rpcscope's own client's, whatever the Load tab's client command (here
        // the broken one, which would fail every cell).
        QHash<QCheckBox *, bool> choices;
        for (QCheckBox *choice : m_window->findChildren<QCheckBox *>()) {
            if (choice->objectName().startsWith(QStringLiteral("matrix_"))) {
                choices.insert(choice, choice->isChecked());
                choice->setChecked(
                    choice->objectName() == u"matrix_grpc" || choice->objectName() == u"matrix_protobuf");
            }
        }
        const auto restore = qScopeGuard([&choices] {
            for (auto it = choices.cbegin(); it != choices.cend(); ++it)
                it.key()->setChecked(it.value());
        });
        MatrixPage *page = m_window->matrixPage();
        QSignalSpy cellsDone(page, &MatrixPage::finished);
        QTest::mouseClick(child<QPushButton>("matrixRun"), Qt::LeftButton);
        QVERIFY(cellsDone.wait(60000));
        QVERIFY(!page->results().isEmpty());
        for (const MatrixResult &r : page->results())
            QVERIFY2(r.failure.isEmpty() && r.run.callsOk() == 30, qPrintable(r.cell.label() + u' ' + r.failure));
    }

    void liveAbOfAServerAgainstItselfEndsUndecidedAtTheBudget()
    {
        // One pair planned, one server on both sides (its address twice): an anytime interval needs two pairs at
        // least, so nothing can be decided and the run goes to its budget and says so. (With two or three pairs the
        // interval is finite, and under ASan the first blocks of a run differ enough to decide: CI saw both a
        // "regression" and an "improvement" of the one server against itself.)
        AbRequest request;
        for (AbRequest::Target &target : request.targets) {
            target.kind = AbRequest::Kind::Address;
            target.text = m_window->builtinServers()->address();
        }
        request.untilDecided = true;
        request.block = QStringLiteral("100");
        child<QSpinBox>("callsEdit")->setValue(100);
        QString error;
        QVERIFY2(m_window->runLauncher()->startAb(request, &error), qPrintable(error));
        AbController *ab = m_window->runLauncher()->abController();
        QTRY_VERIFY_WITH_TIMEOUT(!ab->isRunning(), 90000);
        const SequentialAb sequential = ab->sequential();
        QCOMPARE(sequential.decision(), SequentialDecision::Undecided);
        QCOMPARE(sequential.pairs(), 1);
        QVERIFY(!sequential.ratio().bounded());
        QCOMPARE(ab->records()[0].snapshot.blocks.size(), 1U); // the block size given, with the design kept
        QCOMPARE(ab->records()[0].snapshot.callsOk(), 100ULL);
        QCOMPARE(ab->records()[1].snapshot.callsOk(), 100ULL);
        QVERIFY2(ab->sequentialText().startsWith(QStringLiteral("not decided after 1 pair (the planned run ended it)")),
            qPrintable(ab->sequentialText()));
        QVERIFY2(m_window->comparePage()->sequentialText().startsWith(
                     QStringLiteral("Judged until decided: not decided after 1 pair")),
            qPrintable(m_window->comparePage()->sequentialText()));
    }

    // Last: it closes the window.
    void closingDuringAnAbRunKeepsBothSides()
    {
        AbRequest request;
        request.block = QStringLiteral("500"); // the second side's first block comes soon
        child<QSpinBox>("callsEdit")->setValue(2'000'000); // far more than the test waits for
        QString error;
        QVERIFY2(m_window->runLauncher()->startAb(request, &error), qPrintable(error));
        AbController *ab = m_window->runLauncher()->abController();
        // Either side may go first (a coin flip): both have calls once the second side's block began.
        QTRY_VERIFY_WITH_TIMEOUT(ab->records()[0].id > 0 && ab->records()[1].id > 0 && ab->snapshot(0).callsOk() > 0
                && ab->snapshot(1).callsOk() > 0,
            60000);
        const std::array<qint64, 2> ids { ab->records()[0].id, ab->records()[1].id };
        QVERIFY(m_window->close());
        QVERIFY(!ab->isRunning());
        // Written by the time close() returns: nothing for the next start to find as interrupted.
        for (const qint64 id : ids) {
            const auto run = m_window->runRecorder()->store()->load(id, &error);
            QVERIFY2(run, qPrintable(error));
            QCOMPARE(run->status, QStringLiteral("stopped"));
            QVERIFY(run->snapshot.callsOk() > 0);
            QVERIFY(run->snapshot.callsOk() < 2'000'000);
        }
    }
};

QTEST_MAIN(TestGuiResults)
#include "tst_guiresults.moc"
