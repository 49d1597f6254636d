#include "historypage.h"
#include "runlistmodel.h"
#include "runrecorder.h"
#include "store/runstore.h"
#include "util/units.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QComboBox>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QStandardPaths>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include <memory>

using namespace rpcscope;

namespace {

const QString kEcho = QStringLiteral("rpcscope.bench.v1.Bench/Echo");
const QString kSum = QStringLiteral("rpcscope.bench.v1.Bench/Sum");
const QString kOtherEcho = QStringLiteral("other.v1.Bench/Echo");

struct Spec {
    QString name;
    QStringList labels;
    QString method;
    QString transport;
    QString codec;
    QString target;
    qint64 ageSeconds; ///< started this long before now
    uint64_t p50Ns;
    uint64_t p99Ns;
    int calls;
    int failed;
    QString status;
};

/// A run whose p50 and p99 are (within the histogram's 1%) @p spec.p50Ns and p99Ns: 98% of calls at the one, the
/// rest at the other.
RunRecord makeRun(const Spec &spec)
{
    RunRecord r;
    r.name = spec.name;
    r.labels = spec.labels;
    r.status = spec.status;
    r.startedAt = QDateTime::currentDateTimeUtc().addSecs(-spec.ageSeconds);
    r.endedAt = r.startedAt.addSecs(2);
    r.method = spec.method;
    r.transport = spec.transport;
    r.codec = spec.codec;
    r.target = spec.target;
    if (spec.status == u"imported")
        r.origin = QStringLiteral("ghz: report.json");
    r.scenario = QJsonObject { { QStringLiteral("method"), spec.method }, { QStringLiteral("calls"), spec.calls } };
    r.environment
        = QJsonObject { { QStringLiteral("os"), QStringLiteral("Test OS 1.0") }, { QStringLiteral("cores"), 8 } };
    r.server = QJsonObject { { QStringLiteral("command"), QStringLiteral("server --port {port}") } };
    RunSnapshot &s = r.snapshot;
    s.state = RunState::Finished;
    const int ok = spec.calls - spec.failed;
    for (int i = 0; i < ok; ++i)
        s.latency.record(i < ok * 98 / 100 ? spec.p50Ns : spec.p99Ns);
    for (int i = 0; i < spec.failed; ++i)
        s.errorLatency.record(spec.p50Ns * 2);
    s.statusCounts[CallStatus::Ok] = static_cast<uint64_t>(ok);
    s.statusCounts[CallStatus::Unavailable] = static_cast<uint64_t>(spec.failed);
    s.timeline.append({ 1.0, 1.0, uint64_t(spec.calls), uint64_t(spec.failed), spec.p50Ns, spec.p99Ns, spec.p99Ns, 4 });
    s.elapsed = std::chrono::seconds(2);
    for (uint32_t i = 0; i < 10; ++i)
        r.rawSamples.push_back({ uint64_t(i) * 1000, i + 1, 0u });
    return r;
}

/// p99s chosen so their text sorts differently from their value ("1.50 ms" < "12.0 ms" < "900 us" < "95.0 us").
QList<Spec> specs()
{
    const QString grpc = QStringLiteral("grpc");
    const QString protobuf = QStringLiteral("protobuf");
    const QString local = QStringLiteral("127.0.0.1:50051");
    const qint64 day = 86400;
    return {
        { QStringLiteral("baseline grpc"), { QStringLiteral("baseline"), QStringLiteral("protobuf 3.21") }, kEcho, grpc,
            protobuf, local, 40 * day, 60000, 95000, 1000, 0, QStringLiteral("finished") },
        { QString(), {}, kSum, QStringLiteral("http"), QStringLiteral("json"), QStringLiteral("http://127.0.0.1:8080"),
            20 * day, 400000, 900000, 500, 0, QStringLiteral("interrupted") },
        { QStringLiteral("after upgrade"), { QStringLiteral("protobuf 4.25") }, kEcho, grpc, protobuf, local, 3 * day,
            700000, 1500000, 2000, 0, QStringLiteral("finished") },
        { QStringLiteral("msgpack sum"), {}, kSum, QStringLiteral("msgpack"), QStringLiteral("msgpack"),
            QStringLiteral("127.0.0.1:9000"), 7200, 5000000, 12000000, 300, 0, QStringLiteral("finished") },
        { QStringLiteral("with errors"), { QStringLiteral("flaky") }, kEcho, grpc, protobuf,
            QStringLiteral("10.0.0.5:50051"), 3600, 100000, 250000, 800, 40, QStringLiteral("stopped") },
        { QStringLiteral("imported ghz"), {}, kEcho, grpc, protobuf, local, 600, 1000000, 3000000, 100, 0,
            QStringLiteral("imported") },
        { QStringLiteral("running now"), {}, kEcho, grpc, protobuf, local, 60, 20000, 40000, 50, 0,
            QStringLiteral("running") },
        { QStringLiteral("big payload"), { QStringLiteral("baseline") }, kOtherEcho, grpc, protobuf, local, 0, 300000,
            600000, 4000, 0, QStringLiteral("finished") },
    };
}

struct Fixture {
    QTemporaryDir dir;
    RunStore store;
    QList<qint64> ids; ///< in specs() order

    bool open()
    {
        QString error;
        if (!dir.isValid() || !store.open(dir.filePath(QStringLiteral("runs.sqlite")), &error)) {
            qWarning() << "cannot open the store:" << error;
            return false;
        }
        for (const Spec &spec : specs()) {
            const qint64 id = store.addRun(makeRun(spec), &error);
            if (id == 0) {
                qWarning() << "cannot add a run:" << error;
                return false;
            }
            ids << id;
        }
        return true;
    }
};

/// The run ids in the order the page's table shows them.
QList<qint64> shownIds(const HistoryPage &page)
{
    QList<qint64> ids;
    for (int row = 0; row < page.proxy()->rowCount(); ++row)
        ids << page.proxy()->index(row, 0).data(RunListModel::IdRole).toLongLong();
    return ids;
}

const RunListEntry &entryOf(const HistoryPage &page, qint64 id)
{
    return page.model()->entry(page.model()->rowOf(id));
}

QModelIndex sourceIndex(const HistoryPage &page, qint64 id, int column)
{
    return page.model()->index(page.model()->rowOf(id), column);
}

bool storeHas(const RunStore &store, qint64 id)
{
    QString error;
    for (const RunListEntry &e : store.list(RunFilter {}, &error)) {
        if (e.id == id)
            return true;
    }
    return false;
}

} // namespace

class HistoryTest : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void modelPassesTheTester()
    {
        Fixture f;
        QVERIFY(f.open());
        HistoryPage page(&f.store);
        QAbstractItemModelTester modelTester(page.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester proxyTester(page.proxy(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        page.refresh();
        QVERIFY(page.model()->setData(sourceIndex(page, f.ids[0], RunListModel::NameColumn), QStringLiteral("x")));
        page.textFilter()->setText(QStringLiteral("sum"));
        page.textFilter()->clear();
        page.view()->sortByColumn(RunListModel::P99Column, Qt::AscendingOrder);
        page.model()->setRuns({});
        QCOMPARE(page.proxy()->rowCount(), 0);
    }

    void listsEveryRunNewestFirst()
    {
        Fixture f;
        QVERIFY(f.open());
        HistoryPage page(&f.store);
        QVERIFY(page.isAvailable());
        QCOMPARE(page.proxy()->rowCount(), 8);
        QCOMPARE(page.proxy()->columnCount(), int(RunListModel::ColumnCount));
        QCOMPARE(page.proxy()->columnCount(), 13);
        QCOMPARE(page.countLabel()->text(), QStringLiteral("8 runs"));
        const QStringList headers { QStringLiteral("ID"), QStringLiteral("Started"), QStringLiteral("Status"),
            QStringLiteral("Name"), QStringLiteral("Labels"), QStringLiteral("Method"), QStringLiteral("Stack"),
            QStringLiteral("Target"), QStringLiteral("Calls"), QStringLiteral("Req/s"), QStringLiteral("p50"),
            QStringLiteral("p99"), QStringLiteral("Errors") };
        for (int c = 0; c < headers.size(); ++c)
            QCOMPARE(page.proxy()->headerData(c, Qt::Horizontal).toString(), headers[c]);

        // Newest first: the specs are oldest first.
        QList<qint64> newestFirst(f.ids.crbegin(), f.ids.crend());
        QCOMPARE(shownIds(page), newestFirst);

        const QModelIndex echo = sourceIndex(page, f.ids[0], RunListModel::MethodColumn);
        QCOMPARE(echo.data().toString(), QStringLiteral("Bench/Echo"));
        QCOMPARE(echo.data(Qt::ToolTipRole).toString(), kEcho);
        QCOMPARE(
            sourceIndex(page, f.ids[0], RunListModel::StackColumn).data().toString(), QStringLiteral("grpc/protobuf"));
        QCOMPARE(sourceIndex(page, f.ids[0], RunListModel::LabelsColumn).data().toString(),
            QStringLiteral("baseline, protobuf 3.21"));
        // 95 us as the histogram keeps it (within 1%), formatted.
        QCOMPARE(sourceIndex(page, f.ids[0], RunListModel::P99Column).data().toString(),
            formatNanos(static_cast<double>(entryOf(page, f.ids[0]).p99Ns)));
        QVERIFY(sourceIndex(page, f.ids[0], RunListModel::P99Column).data().toString().endsWith(QStringLiteral(" us")));
        QCOMPARE(sourceIndex(page, f.ids[0], RunListModel::P99Column).data(Qt::TextAlignmentRole).toInt(),
            int(Qt::AlignRight | Qt::AlignVCenter));
        QCOMPARE(sourceIndex(page, f.ids[0], RunListModel::NameColumn).data(Qt::TextAlignmentRole).toInt(),
            int(Qt::AlignLeft | Qt::AlignVCenter));
        QCOMPARE(sourceIndex(page, f.ids[4], RunListModel::ErrorsColumn).data().toString(), QStringLiteral("40"));
        const QDateTime started = entryOf(page, f.ids[0]).startedAt;
        QCOMPARE(sourceIndex(page, f.ids[0], RunListModel::StartedColumn).data().toString(),
            started.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm")));

        // The interrupted run says so, with an icon; the others carry none.
        const QModelIndex interrupted = sourceIndex(page, f.ids[1], RunListModel::StatusColumn);
        QCOMPARE(interrupted.data().toString(), QStringLiteral("Interrupted"));
        QVERIFY(!interrupted.data(Qt::DecorationRole).value<QIcon>().isNull());
        QVERIFY(interrupted.data(Qt::ToolTipRole).toString().contains(QStringLiteral("died")));
        QVERIFY(!sourceIndex(page, f.ids[0], RunListModel::StatusColumn).data(Qt::DecorationRole).isValid());
        // An unnamed run is shown as such, but edits start from its empty name.
        QCOMPARE(sourceIndex(page, f.ids[1], RunListModel::NameColumn).data(Qt::EditRole).toString(), QString());

        QVERIFY(page.model()->flags(sourceIndex(page, f.ids[0], RunListModel::NameColumn)) & Qt::ItemIsEditable);
        QVERIFY(page.model()->flags(sourceIndex(page, f.ids[0], RunListModel::LabelsColumn)) & Qt::ItemIsEditable);
        QVERIFY(!(page.model()->flags(sourceIndex(page, f.ids[0], RunListModel::P99Column)) & Qt::ItemIsEditable));
    }

    void sortsNumbersAndDatesByValue()
    {
        Fixture f;
        QVERIFY(f.open());
        HistoryPage page(&f.store);
        page.view()->sortByColumn(RunListModel::P99Column, Qt::AscendingOrder);
        QStringList texts;
        uint64_t previous = 0;
        for (qint64 id : shownIds(page)) {
            const RunListEntry &e = entryOf(page, id);
            QVERIFY2(e.p99Ns >= previous, qPrintable(QStringLiteral("p99 %1 after %2").arg(e.p99Ns).arg(previous)));
            previous = e.p99Ns;
            texts << sourceIndex(page, id, RunListModel::P99Column).data().toString();
        }
        QCOMPARE(shownIds(page).first(), f.ids[6]); // 40 us
        QCOMPARE(shownIds(page).last(), f.ids[3]); // 12 ms
        QStringList lexicographic = texts;
        lexicographic.sort();
        QVERIFY(texts != lexicographic); // so this test would catch a sort by text

        page.view()->sortByColumn(RunListModel::CallsColumn, Qt::DescendingOrder);
        QCOMPARE(entryOf(page, shownIds(page).first()).calls, uint64_t(4000));
        QCOMPARE(entryOf(page, shownIds(page).last()).calls, uint64_t(50));

        page.view()->sortByColumn(RunListModel::StartedColumn, Qt::AscendingOrder);
        QCOMPARE(shownIds(page), f.ids);
    }

    void filtersByTextLabelMethodAndDate()
    {
        Fixture f;
        QVERIFY(f.open());
        HistoryPage page(&f.store);

        page.textFilter()->setText(QStringLiteral("SUM"));
        QCOMPARE(shownIds(page), (QList<qint64> { f.ids[3], f.ids[1] })); // method Sum; "msgpack sum" by name too
        page.textFilter()->setText(QStringLiteral("10.0.0.5"));
        QCOMPARE(shownIds(page), QList<qint64> { f.ids[4] });
        page.textFilter()->setText(QStringLiteral("4.25")); // a label
        QCOMPARE(shownIds(page), QList<qint64> { f.ids[2] });
        QCOMPARE(page.countLabel()->text(), QStringLiteral("1 of 8 runs shown"));
        page.textFilter()->clear();

        page.labelFilter()->setText(QStringLiteral("baseline"));
        QCOMPARE(shownIds(page), (QList<qint64> { f.ids[7], f.ids[0] }));
        page.labelFilter()->clear();

        QComboBox *methods = page.methodFilter();
        QCOMPARE(methods->count(), 4); // all, and three methods
        // Two packages have a Bench/Echo: those are named in full.
        QVERIFY(methods->findText(kOtherEcho) > 0);
        QVERIFY(methods->findText(QStringLiteral("Bench/Sum")) > 0);
        methods->setCurrentIndex(methods->findData(kSum));
        QCOMPARE(shownIds(page), (QList<qint64> { f.ids[3], f.ids[1] }));
        methods->setCurrentIndex(methods->findData(kOtherEcho));
        QCOMPARE(shownIds(page), QList<qint64> { f.ids[7] });
        // Combined with the label filter: both must match.
        page.labelFilter()->setText(QStringLiteral("protobuf"));
        QCOMPARE(shownIds(page), QList<qint64> {});
        page.labelFilter()->clear();
        methods->setCurrentIndex(0);
        QCOMPARE(page.proxy()->rowCount(), 8);

        auto startedSince = [&](const QDateTime &since) {
            QList<qint64> ids;
            for (auto it = f.ids.crbegin(); it != f.ids.crend(); ++it) {
                if (entryOf(page, *it).startedAt >= since)
                    ids << *it;
            }
            return ids;
        };
        QComboBox *since = page.sinceFilter();
        since->setCurrentIndex(3); // 30 days: all but the 40-day-old baseline
        QCOMPARE(shownIds(page).size(), 7);
        QVERIFY(!shownIds(page).contains(f.ids[0]));
        since->setCurrentIndex(2); // 7 days: not the 20-day-old one either
        QCOMPARE(shownIds(page).size(), 6);
        since->setCurrentIndex(1); // today: as many as started after local midnight (at least the newest)
        QCOMPARE(shownIds(page), startedSince(QDateTime(QDate::currentDate(), QTime(0, 0))));
        QVERIFY(shownIds(page).contains(f.ids[7]));
        since->setCurrentIndex(0);
        QCOMPARE(page.proxy()->rowCount(), 8);
    }

    void renameAndLabelsGoToTheStore()
    {
        Fixture f;
        QVERIFY(f.open());
        HistoryPage page(&f.store);
        QString error;

        const QModelIndex name = sourceIndex(page, f.ids[1], RunListModel::NameColumn);
        QVERIFY(page.model()->setData(name, QStringLiteral("  named later ")));
        QCOMPARE(name.data().toString(), QStringLiteral("named later"));
        QCOMPARE(f.store.load(f.ids[1], &error)->name, QStringLiteral("named later"));

        const QModelIndex labels = sourceIndex(page, f.ids[1], RunListModel::LabelsColumn);
        QVERIFY(page.model()->setData(labels, QStringLiteral("zeta, alpha,, alpha , ")));
        QCOMPARE(labels.data().toString(), QStringLiteral("alpha, zeta"));
        const QStringList stored = f.store.load(f.ids[1], &error)->labels;
        QCOMPARE(stored, (QStringList { QStringLiteral("alpha"), QStringLiteral("zeta") }));
        QVERIFY(page.model()->setData(labels, QString()));
        QVERIFY(f.store.load(f.ids[1], &error)->labels.isEmpty());
        QVERIFY(page.errorMessage().isEmpty());

        // The store refuses (the run was deleted behind the page's back): the table keeps the old name and says why.
        QVERIFY(f.store.remove(f.ids[2], &error));
        const QModelIndex gone = sourceIndex(page, f.ids[2], RunListModel::NameColumn);
        QVERIFY(!page.model()->setData(gone, QStringLiteral("too late")));
        QCOMPARE(gone.data().toString(), QStringLiteral("after upgrade"));
        QVERIFY2(page.errorMessage().contains(QStringLiteral("#%1").arg(f.ids[2])), qPrintable(page.errorMessage()));

        // The rename action edits the name in place.
        page.show();
        QVERIFY(page.selectIds({ f.ids[0] }));
        QVERIFY(page.renameAction()->isEnabled());
        page.renameAction()->trigger();
        QCOMPARE(page.view()->currentIndex().column(), int(RunListModel::NameColumn));
        auto *editor = qobject_cast<QLineEdit *>(page.view()->indexWidget(page.view()->currentIndex()));
        QVERIFY(editor);
        QCOMPARE(editor->text(), QStringLiteral("baseline grpc"));
        editor->setText(QStringLiteral("edited inline"));
        QTest::keyClick(editor, Qt::Key_Return);
        QTRY_COMPARE(f.store.load(f.ids[0], &error)->name, QStringLiteral("edited inline")); // committed queued
    }

    void deleteAndUndoKeepTheRun()
    {
        Fixture f;
        QVERIFY(f.open());
        HistoryPage page(&f.store);
        QSignalSpy deleted(&page, &HistoryPage::runsDeleted);
        QString error;
        const auto before = f.store.load(f.ids[0], &error);
        QVERIFY(before);
        const uint64_t p50 = before->snapshot.latency.percentile(50);
        const uint64_t listedP50 = entryOf(page, f.ids[0]).p50Ns;

        QVERIFY(!page.deleteAction()->isEnabled());
        QVERIFY(page.selectIds({ f.ids[0], f.ids[3] }));
        QVERIFY(page.deleteAction()->isEnabled());
        QVERIFY(!page.undoAction()->isEnabled());
        QSignalSpy busy(&page, &HistoryPage::busyChanged);
        page.deleteAction()->trigger();
        // Written off the GUI thread: until it is, nothing else may change the history from the page.
        QVERIFY(page.isBusy());
        QVERIFY(!page.deleteAction()->isEnabled() && !page.renameAction()->isEnabled());
        QVERIFY(!page.model()->setData(sourceIndex(page, f.ids[4], RunListModel::NameColumn), QStringLiteral("n")));
        QVERIFY2(page.errorMessage().contains(QStringLiteral("being written")), qPrintable(page.errorMessage()));
        QTRY_VERIFY(!page.isBusy());
        QCOMPARE(busy.size(), 2);
        QVERIFY(page.errorMessage().isEmpty());
        QVERIFY(!storeHas(f.store, f.ids[0]));
        QVERIFY(!storeHas(f.store, f.ids[3]));
        QVERIFY(!f.store.load(f.ids[0], &error));
        QCOMPARE(page.proxy()->rowCount(), 6);
        QCOMPARE(deleted.size(), 1);
        QCOMPARE(deleted.first().first().value<QList<qint64>>(), (QList<qint64> { f.ids[3], f.ids[0] }));
        QVERIFY(page.canUndo());
        QVERIFY(page.undoAction()->isEnabled());
        QCOMPARE(page.selectedIds().size(), 1); // the next row, for the keyboard

        page.undoAction()->trigger();
        QVERIFY(!page.canUndo());
        QVERIFY(page.isBusy() && !page.undoAction()->isEnabled());
        QTRY_VERIFY(!page.isBusy());
        QCOMPARE(page.proxy()->rowCount(), 8);
        const auto after = f.store.load(f.ids[0], &error);
        QVERIFY2(after, qPrintable(error));
        QCOMPARE(after->id, f.ids[0]);
        QCOMPARE(after->name, before->name);
        QCOMPARE(after->labels, before->labels);
        QCOMPARE(after->snapshot.latency.percentile(50), p50);
        QCOMPARE(after->rawSamples.size(), before->rawSamples.size());
        QCOMPARE(entryOf(page, f.ids[0]).p50Ns, listedP50);
        QVERIFY(storeHas(f.store, f.ids[3]));
        QCOMPARE(page.selectedIds(), (QList<qint64> { f.ids[3], f.ids[0] })); // the restored runs, selected

        // A run being written is not deleted, and the page says why; the undo of the delete before stays.
        QVERIFY(page.selectIds({ f.ids[5] }));
        page.deleteSelected();
        QTRY_VERIFY(!page.isBusy());
        QVERIFY(!storeHas(f.store, f.ids[5]));
        QVERIFY(page.selectIds({ f.ids[6] }));
        page.deleteAction()->trigger();
        QVERIFY(!page.isBusy()); // refused at once: nothing to write
        QVERIFY(storeHas(f.store, f.ids[6]));
        QVERIFY2(page.errorMessage().contains(QStringLiteral("running")), qPrintable(page.errorMessage()));
        QVERIFY(page.canUndo());
        page.undoDelete();
        QTRY_VERIFY(!page.isBusy());
        QVERIFY(storeHas(f.store, f.ids[5]));

        // An edit ends the offer: Ctrl+Z would otherwise undo an older delete rather than the edit.
        QVERIFY(page.selectIds({ f.ids[5] }));
        page.deleteSelected();
        QTRY_VERIFY(!page.isBusy());
        QVERIFY(page.canUndo());
        QVERIFY(page.model()->setData(sourceIndex(page, f.ids[4], RunListModel::NameColumn), QStringLiteral("n")));
        QVERIFY(!page.canUndo());
    }

    void keyboardDeletesUndoesAndOpens()
    {
        Fixture f;
        QVERIFY(f.open());
        HistoryPage page(&f.store);
        QSignalSpy open(&page, &HistoryPage::openRunRequested);
        page.show();
        QVERIFY(QTest::qWaitForWindowActive(&page));
        page.view()->setFocus();
        QVERIFY(page.selectIds({ f.ids[5] }));

        QTest::keyClick(page.view(), Qt::Key_Return);
        QCOMPARE(open.size(), 1);
        QCOMPARE(open.first().first().toLongLong(), f.ids[5]);

        QTest::keyClick(page.view(), Qt::Key_Delete);
        QTRY_VERIFY(!page.isBusy());
        QVERIFY(!storeHas(f.store, f.ids[5]));
        QTest::keyClick(page.view(), Qt::Key_Z, Qt::ControlModifier);
        QTRY_VERIFY(!page.isBusy());
        QVERIFY(storeHas(f.store, f.ids[5]));

        // Del in the filter field edits the text, not the runs.
        page.textFilter()->setFocus();
        page.textFilter()->setText(QStringLiteral("ab"));
        page.textFilter()->setCursorPosition(0);
        QTest::keyClick(page.textFilter(), Qt::Key_Delete);
        QCOMPARE(page.textFilter()->text(), QStringLiteral("b"));
        QVERIFY(storeHas(f.store, f.ids[5]));

        page.textFilter()->clear();
        const QRect cell = page.view()->visualRect(
            page.proxy()->mapFromSource(sourceIndex(page, f.ids[7], RunListModel::NameColumn)));
        // As a real double click arrives: a click, then the double click.
        QTest::mouseClick(page.view()->viewport(), Qt::LeftButton, {}, cell.center());
        QTest::mouseDClick(page.view()->viewport(), Qt::LeftButton, {}, cell.center());
        QCOMPARE(open.size(), 2);
        QCOMPARE(open.last().first().toLongLong(), f.ids[7]);
    }

    void compareNeedsTwoRunsAndOpenEmitsTheId()
    {
        Fixture f;
        QVERIFY(f.open());
        HistoryPage page(&f.store);
        QSignalSpy compare(&page, &HistoryPage::compareRequested);
        QSignalSpy open(&page, &HistoryPage::openRunRequested);

        QVERIFY(!page.compareAction()->isEnabled());
        QVERIFY(!page.openAction()->isEnabled());
        QVERIFY(page.selectIds({ f.ids[4] }));
        QVERIFY(!page.compareAction()->isEnabled());
        QVERIFY(page.openAction()->isEnabled());
        page.openAction()->trigger();
        QCOMPARE(open.size(), 1);
        QCOMPARE(open.first().first().toLongLong(), f.ids[4]);
        page.compareAction()->trigger(); // disabled: nothing
        QCOMPARE(compare.size(), 0);
        page.compareSelected(); // and the slot itself refuses one run
        QCOMPARE(compare.size(), 0);

        QVERIFY(page.selectIds({ f.ids[5], f.ids[0], f.ids[2] }));
        QVERIFY(page.compareAction()->isEnabled());
        page.compareAction()->trigger();
        QCOMPARE(compare.size(), 1);
        QCOMPARE(compare.first().first().value<QList<qint64>>(), (QList<qint64> { f.ids[0], f.ids[2], f.ids[5] }));
    }

    void detailsShowTheSelectedRun()
    {
        Fixture f;
        QVERIFY(f.open());
        HistoryPage page(&f.store);
        QVERIFY(page.selectIds({ f.ids[3] }));
        RunDetailsPanel *details = page.detailsPanel();
        QTRY_COMPARE(details->runId(), f.ids[3]);
        QVERIFY(details->header()->text().contains(QStringLiteral("msgpack sum")));
        QVERIFY(details->scenarioView()->toPlainText().contains(kSum));
        QTableWidget *env = details->environmentTable();
        QCOMPARE(env->rowCount(), 2);
        QCOMPARE(env->item(1, 0)->text(), QStringLiteral("os"));
        QCOMPARE(env->item(1, 1)->text(), QStringLiteral("Test OS 1.0"));
        QCOMPARE(env->item(0, 1)->text(), QStringLiteral("8"));
        QCOMPARE(details->serverTable()->item(0, 1)->text(), QStringLiteral("server --port {port}"));
        QCOMPARE(details->environmentTable()->editTriggers(), QAbstractItemView::NoEditTriggers);
        QVERIFY(details->scenarioView()->isReadOnly());

        page.view()->selectionModel()->clear();
        QTRY_COMPARE(details->runId(), qint64(0));
    }

    void aStoreThatIsNotOpenIsExplained()
    {
        RunStore closed;
        HistoryPage page(&closed);
        QVERIFY(!page.isAvailable());
        QVERIFY(page.unavailableLabel()->isVisibleTo(&page));
        QVERIFY2(page.unavailableLabel()->text().contains(QStringLiteral("not open")),
            qPrintable(page.unavailableLabel()->text()));
        QVERIFY(!page.view()->isVisibleTo(&page));
        QCOMPARE(page.model()->rowCount(), 0);
        QVERIFY(!page.openAction()->isEnabled());
        QVERIFY(!page.deleteAction()->isEnabled());
        page.deleteSelected(); // nothing to do, and no crash
        page.undoDelete();
        page.refresh();

        HistoryPage none(nullptr);
        QVERIFY(!none.isAvailable());
        QVERIFY(none.unavailableLabel()->isVisibleTo(&none));
        QVERIFY(none.unavailableLabel()->text().contains(QStringLiteral("not available")));
        none.refresh();

        // A store set later is listed.
        Fixture f;
        QVERIFY(f.open());
        none.setStore(&f.store);
        QVERIFY(none.isAvailable());
        QVERIFY(!none.unavailableLabel()->isVisibleTo(&none));
        QCOMPARE(none.proxy()->rowCount(), 8);
    }

    void recorderWritesALiveRunOffThisThread()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("runs.sqlite"));
        RunRecorder recorder;
        QString error;
        RunRecord unsaved;
        QVERIFY(!recorder.begin(&unsaved, &error)); // not open: the run goes on unsaved, and says why
        QVERIFY(!error.isEmpty());
        QVERIFY2(recorder.open(path, &error), qPrintable(error));
        QSignalSpy stored(&recorder, &RunRecorder::runStored);
        // The recorder's clock is the test's: a second passes when the test says so.
        auto now = std::chrono::steady_clock::now();
        recorder.setClock([&now] { return now; });

        RunRecord run;
        run.method = QStringLiteral("x.Y/Z");
        QVERIFY2(recorder.begin(&run, &error), qPrintable(error));
        QVERIFY(run.id > 0);
        RunSnapshot s;
        s.state = RunState::Running;
        s.latency.record(1000);
        recorder.progress(&run, s); // within the first second: not written
        QVERIFY(recorder.flush(std::chrono::seconds(10)));
        QCOMPARE(recorder.store()->load(run.id, &error)->snapshot.callsCompleted(), 0ULL);
        now += std::chrono::milliseconds(999);
        s.latency.record(2000);
        recorder.progress(&run, s); // still within the first second
        QVERIFY(recorder.flush(std::chrono::seconds(10)));
        QCOMPARE(recorder.store()->load(run.id, &error)->snapshot.callsCompleted(), 0ULL);
        now += std::chrono::milliseconds(1);
        recorder.progress(&run, s);
        QVERIFY(recorder.flush(std::chrono::seconds(10)));
        QCOMPARE(recorder.store()->load(run.id, &error)->snapshot.latency.count(), 2ULL);

        s.state = RunState::Stopped;
        s.latency.record(3000);
        recorder.finish(&run, s, { { 1, 2, 0 } });
        QCOMPARE(run.status, QStringLiteral("stopped"));
        QTRY_COMPARE(stored.count(), 1);
        QCOMPARE(stored.first().first().toLongLong(), run.id);
        const auto back = recorder.store()->load(run.id, &error);
        QVERIFY2(back, qPrintable(error));
        QCOMPARE(back->status, QStringLiteral("stopped"));
        QCOMPARE(back->snapshot.latency.count(), 3ULL);
        QCOMPARE(back->rawSamples.size(), size_t(1));
        recorder.finish(&run, s, {}); // ended already: nothing more is written
        QVERIFY(recorder.flush(std::chrono::seconds(10)));
        QCoreApplication::sendPostedEvents(); // a second runStored() would be queued by now
        QCOMPARE(stored.count(), 1);

        RunRecorder nowhere;
        QVERIFY(!nowhere.open(QStringLiteral("/proc/no/such/runs.sqlite"), &error));
        QVERIFY2(error.contains(QStringLiteral("/proc/no/such")), qPrintable(error));
        QVERIFY(!nowhere.store() && !nowhere.writer());
    }

    void refreshKeepsTheSelectionAndSeesNewRuns()
    {
        Fixture f;
        QVERIFY(f.open());
        HistoryPage page(&f.store);
        QVERIFY(page.selectIds({ f.ids[2], f.ids[4] }));
        QString error;
        Spec spec = specs().first();
        spec.name = QStringLiteral("saved just now");
        const qint64 added = f.store.addRun(makeRun(spec), &error);
        QVERIFY2(added, qPrintable(error));
        page.refresh();
        QCOMPARE(page.proxy()->rowCount(), 9);
        QCOMPARE(page.countLabel()->text(), QStringLiteral("9 runs"));
        QCOMPARE(page.selectedIds(), (QList<qint64> { f.ids[4], f.ids[2] }));
    }
};

QTEST_MAIN(HistoryTest)
#include "tst_history.moc"
