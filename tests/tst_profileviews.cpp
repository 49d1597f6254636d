// CPU profiles where the window shows them: the profile panel (summary, flame graph, functions table, the
// differential view of B against A), the Run page's profile tabs and the Compare runs page's, from profiles made
// as perf gives them (sampleruns.h: Poisson sample counts over three server processes).
#include "comparepage.h"
#include "flamegraphview.h"
#include "htmlreport.h"
#include "keptfiles.h"
#include "presentationview.h"
#include "profile/profiler.h"
#include "profilepanel.h"
#include "replicatechart.h"
#include "runpage.h"
#include "sampleruns.h"
#include "sliderender.h"

#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QPushButton>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

using namespace rpcscope;

namespace {

const QString kBurn = QStringLiteral("rpcscope::burnCpu");

int tabIndex(QTabWidget *tabs, const QString &title)
{
    for (int i = 0; i < tabs->count(); ++i)
        if (tabs->tabText(i) == title)
            return i;
    return -1;
}

double cellNumber(QTableWidget *table, int row, int column)
{
    return table->item(row, column)->text().toDouble();
}

// The share of @p image's pixels in a strong red (a differential flame graph's "slower in B").
double redShare(const QImage &image)
{
    qint64 red = 0;
    const QImage rgb = image.convertToFormat(QImage::Format_RGB32);
    for (int y = 0; y < rgb.height(); ++y) {
        const auto *line = reinterpret_cast<const QRgb *>(rgb.constScanLine(y));
        for (int x = 0; x < rgb.width(); ++x)
            red += qRed(line[x]) > 180 && qGreen(line[x]) < 90 && qBlue(line[x]) < 90 ? 1 : 0;
    }
    return static_cast<double>(red) / (static_cast<double>(rgb.width()) * rgb.height());
}

// Whether @p a and @p b are the same picture: fewer than 1% of their pixels differ (text drawn twice at one size can
// differ in a few edge pixels; another page differs in far more).
bool samePicture(const QImage &a, const QImage &b)
{
    if (a.isNull() || a.size() != b.size())
        return false;
    const QImage x = a.convertToFormat(QImage::Format_RGB32);
    const QImage y = b.convertToFormat(QImage::Format_RGB32);
    qint64 differ = 0;
    for (int row = 0; row < x.height(); ++row) {
        const auto *p = reinterpret_cast<const QRgb *>(x.constScanLine(row));
        const auto *q = reinterpret_cast<const QRgb *>(y.constScanLine(row));
        for (int column = 0; column < x.width(); ++column)
            differ += p[column] != q[column] ? 1 : 0;
    }
    return static_cast<double>(differ) < 0.01 * x.width() * x.height();
}

// The pages of the PDF at @p path: its page objects.
int pdfPages(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return -1;
    static const QRegularExpression page(QStringLiteral("/Type\\s*/Page(?!s)"));
    return static_cast<int>(QString::fromLatin1(file.readAll()).count(page));
}

RunRecord profiledRun(const QString &name, uint64_t seed, double medianNs, double burnUs)
{
    RunRecord run = makeRun(name, seed, medianNs);
    run.serverProfile = makeProfile(burnUs, seed * 31);
    return run;
}

} // namespace

class TestProfileViews : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void panelShowsOneProfile()
    {
        ProfilePanel panel;
        const Profile profile = makeProfile(40, 7);
        panel.showProfile(profile, QStringLiteral("run 1, server CPU"));
        QVERIFY(panel.graph()->message().isEmpty());
        QVERIFY(!panel.graph()->isDifferential());
        const QString summary = panel.summaryLabel()->text();
        QVERIFY2(
            summary.contains(
                QStringLiteral("Server CPU: %1 µs per call").arg(QString::number(profile.totalUsPerCall(), 'f', 1))),
            qPrintable(summary));
        QVERIFY2(summary.contains(QStringLiteral("30,000 calls, 3 processes")), qPrintable(summary));
        QVERIFY2(summary.contains(QStringLiteral("perf record -a")), qPrintable(summary));
        // By self time per call, heaviest first: the 40 us burn, the handler's own 20, encoding's 10, then the
        // callers with no code of their own.
        QTableWidget *table = panel.table();
        QCOMPARE(table->rowCount(), 5);
        QCOMPARE(table->item(4, 1)->text(), QStringLiteral("0.00"));
        QCOMPARE(table->item(0, 0)->text(), kBurn);
        QVERIFY2(std::abs(cellNumber(table, 0, 1) - 40) < 4, qPrintable(table->item(0, 1)->text()));
        QCOMPARE(table->item(1, 0)->text(), QStringLiteral("EchoService::Echo"));
        // Echo's total holds what it calls: all of it, here.
        QVERIFY(std::abs(cellNumber(table, 1, 2) - profile.totalUsPerCall()) < 0.2);
        // A function picked in the table is found in the graph, and only that one.
        table->selectRow(0);
        QVERIFY2(
            panel.graph()->searchText().contains(QStringLiteral("burnCpu")), qPrintable(panel.graph()->searchText()));
        QVERIFY(std::abs(panel.graph()->matchedShare() - cellNumber(table, 0, 1) / profile.totalUsPerCall()) < 0.01);
        const QByteArray svg = panel.svg();
        QVERIFY(svg.contains("rpcscope::burnCpu") && svg.contains("run 1, server CPU"));
    }

    void panelShowsWhereBsTimeWent()
    {
        ProfilePanel panel;
        panel.showDiff(makeProfile(0, 1), makeProfile(40, 2), QStringLiteral("A"), QStringLiteral("B"));
        QVERIFY(panel.graph()->isDifferential());
        QVERIFY(panel.diff().has_value());
        QCOMPARE(panel.diff()->functions.front().name, kBurn);
        QVERIFY(panel.diff()->functions.front().changed);
        QTableWidget *table = panel.table();
        QCOMPARE(table->item(0, 0)->text(), kBurn);
        QCOMPARE(table->item(0, 6)->text(), QStringLiteral("slower in B"));
        QVERIFY2(std::abs(cellNumber(table, 0, 3) - 40) < 5, qPrintable(table->item(0, 3)->text()));
        QCOMPARE(cellNumber(table, 0, 1), 0.0); // not in A at all
        // Its interval holds the change and excludes zero.
        const QStringList bounds = table->item(0, 4)->text().split(QStringLiteral(" .. "));
        QCOMPARE(bounds.size(), 2);
        QVERIFY(bounds[0].toDouble() > 0 && bounds[0].toDouble() < 40 && bounds[1].toDouble() > 40);
        const QString summary = panel.summaryLabel()->text();
        QVERIFY2(summary.contains(QStringLiteral("B spends +")) && summary.contains(kBurn), qPrintable(summary));
        QVERIFY2(summary.contains(QStringLiteral("judged per server process (3 a side)")), qPrintable(summary));
        // The unchanged functions are within noise, not blamed.
        for (int row = 1; row < table->rowCount(); ++row)
            if (table->item(row, 0)->text() == QStringLiteral("proto::Serialize"))
                QCOMPARE(table->item(row, 6)->text(), QStringLiteral("within noise"));
        // Named sides: the legend's names in the table and the sentence.
        panel.showDiff(makeProfile(0, 1), makeProfile(40, 2), QStringLiteral("main"), QStringLiteral("json-2"));
        QCOMPARE(table->horizontalHeaderItem(3)->text(), QStringLiteral("json-2 − main"));
        QVERIFY(panel.summaryLabel()->text().contains(QStringLiteral("json-2 spends +")));
        QVERIFY(panel.svg().contains("json-2"));
    }

    void panelFlagsNothingInAnAaComparison()
    {
        for (uint64_t seed = 1; seed <= 5; ++seed) {
            ProfilePanel panel;
            panel.showDiff(
                makeProfile(40, seed * 2), makeProfile(40, seed * 2 + 1), QStringLiteral("A"), QStringLiteral("B"));
            QVERIFY2(panel.summaryLabel()->text().contains(QStringLiteral("No function changed beyond noise")),
                qPrintable(panel.summaryLabel()->text()));
            for (int row = 0; row < panel.table()->rowCount(); ++row)
                QCOMPARE(panel.table()->item(row, 6)->text(), QStringLiteral("within noise"));
        }
    }

    void panelSaysWhyThereIsNoProfile()
    {
        ProfilePanel panel;
        Profile none;
        none.scope = QStringLiteral("server");
        none.notes = { QStringLiteral("perf is not installed: apt install linux-perf") };
        panel.showProfile(none);
        QVERIFY(!panel.graph()->message().isEmpty());
        QVERIFY2(panel.summaryLabel()->text().contains(QStringLiteral("apt install linux-perf")),
            qPrintable(panel.summaryLabel()->text()));
        QVERIFY(panel.svg().isEmpty());
        QVERIFY(!panel.findChild<QPushButton *>(QStringLiteral("saveFlameGraph"))->isEnabled());
        QCOMPARE(panel.table()->rowCount(), 0);
        // A side without samples is named in a comparison.
        panel.showDiff(makeProfile(0, 1), none, QStringLiteral("A"), QStringLiteral("B"));
        QVERIFY2(panel.summaryLabel()->text().contains(QStringLiteral("B has no samples")),
            qPrintable(panel.summaryLabel()->text()));
        QVERIFY(!panel.diff());
    }

    void hotspotOpensAKeptRecording()
    {
        // A recording kept by --profile-keep is offered to hotspot, run as a real process (a stand-in script that
        // notes what it was asked to open); one outside rpcscope's folder, or gone, is not opened.
        QTemporaryDir home;
        const QByteArray savedData = qgetenv("XDG_DATA_HOME");
        const QByteArray savedPath = qgetenv("PATH");
        const auto restore = qScopeGuard([&] {
            qputenv("XDG_DATA_HOME", savedData);
            qputenv("PATH", savedPath);
        });
        qputenv("XDG_DATA_HOME", home.path().toUtf8());
        QVERIFY(perfKeepDir().startsWith(home.path()));
        QVERIFY(QDir().mkpath(perfKeepDir()));
        const QString recording = QDir(perfKeepDir()).filePath(QStringLiteral("rpcscope-test.perf.data"));
        QFile data(recording);
        QVERIFY(data.open(QIODevice::WriteOnly) && data.write("PERFILE2") == 8);
        data.close();
        QVERIFY(QDir().mkpath(home.filePath(QStringLiteral("bin"))));
        const QString opened = home.filePath(QStringLiteral("opened"));
        QFile script(home.filePath(QStringLiteral("bin/hotspot")));
        QVERIFY(script.open(QIODevice::WriteOnly));
        script.write(QStringLiteral("#!/bin/sh\necho \"$@\" > '%1'\n").arg(opened).toUtf8());
        script.close();
        QVERIFY(script.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner));
        qputenv("PATH", home.filePath(QStringLiteral("bin")).toUtf8() + ":" + savedPath);

        ProfilePanel panel;
        Profile profile = makeProfile(40, 5);
        panel.showProfile(profile);
        QVERIFY(panel.hotspotButton()->isHidden());
        profile.perfData = recording;
        panel.showProfile(profile);
        QVERIFY(!panel.hotspotButton()->isHidden());
        QVERIFY2(panel.hotspotButton()->isEnabled(), qPrintable(panel.hotspotButton()->toolTip()));
        panel.hotspotButton()->click();
        QTRY_VERIFY(QFile::exists(opened));
        QFile written(opened);
        QVERIFY(written.open(QIODevice::ReadOnly));
        QCOMPARE(QString::fromUtf8(written.readAll()).trimmed(), recording);
        // A comparison offers B's.
        panel.showDiff(makeProfile(0, 1), profile, QStringLiteral("A"), QStringLiteral("B"));
        QCOMPARE(panel.hotspotButton()->text(), QStringLiteral("Open B in hotspot"));
        // Not rpcscope's own (a shared file may name any path), or gone: not opened, and said why.
        profile.perfData = home.filePath(QStringLiteral("opened"));
        panel.showProfile(profile);
        QVERIFY(!panel.hotspotButton()->isEnabled());
        QVERIFY(panel.hotspotButton()->toolTip().contains(QStringLiteral("not one rpcscope kept")));
        // No hotspot installed: said what to install.
        profile.perfData = recording;
        qputenv("PATH", "/nonexistent");
        panel.showProfile(profile);
        QVERIFY(!panel.hotspotButton()->isEnabled());
        QVERIFY(panel.hotspotButton()->toolTip().contains(QStringLiteral("apt install hotspot")));
    }

    void runPageHasProfileTabs()
    {
        RunPage page;
        QTabWidget *tabs = page.chartTabs();
        const int charts = tabs->count();
        QCOMPARE(tabIndex(tabs, QStringLiteral("Server profile")), -1);
        // While the run goes: the profiled side's tab says when its profile comes.
        page.showProfilesPending(true, false);
        QCOMPARE(tabs->count(), charts + 1);
        QVERIFY(tabIndex(tabs, QStringLiteral("Server profile")) >= charts);
        QVERIFY(page.serverProfilePanel()->graph()->message().contains(QStringLiteral("when the run ends")));
        page.showProfiles(makeProfile(40, 3), makeProfile(5, 4, 1, QStringLiteral("client")));
        const int server = tabIndex(tabs, QStringLiteral("Server profile"));
        const int client = tabIndex(tabs, QStringLiteral("Client profile"));
        QVERIFY(server >= charts && client == server + 1);
        QCOMPARE(page.serverProfilePanel()->table()->item(0, 0)->text(), kBurn);
        QVERIFY(page.clientProfilePanel()->summaryLabel()->text().contains(QStringLiteral("Client CPU")));
        // A run not profiled (a new run, or one opened from the history) has no such tabs.
        page.clear();
        QCOMPARE(tabs->count(), charts);
        page.showProfiles(std::nullopt, makeProfile(5, 4, 1, QStringLiteral("client")));
        QCOMPARE(tabIndex(tabs, QStringLiteral("Server profile")), -1);
        QVERIFY(tabIndex(tabs, QStringLiteral("Client profile")) >= charts);
    }

    void comparePageShowsTheDifferentialProfile()
    {
        ComparePage page;
        page.resize(1366, 768);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        auto *tabs = page.findChild<QTabWidget *>();
        QVERIFY(tabs);
        page.setRuns(
            { profiledRun(QStringLiteral("A main"), 1, 1e6, 0), profiledRun(QStringLiteral("B burn"), 2, 1.05e6, 40) });
        const int server = tabIndex(tabs, QStringLiteral("Server profile"));
        QVERIFY(server >= 4);
        QCOMPARE(tabIndex(tabs, QStringLiteral("Client profile")), -1);
        ProfilePanel *panel = page.serverProfilePanel();
        QVERIFY(panel->diff());
        QCOMPARE(panel->diff()->topChanges(1).front().name, kBurn);
        // The flame graph takes the width; the replicates' dots come back with the charts.
        QVERIFY(page.replicateChart()->isVisible());
        tabs->setCurrentIndex(server);
        QVERIFY(!page.replicateChart()->isVisible());
        QVERIFY(!page.table()->isVisible());
        QCOMPARE(page.currentChart(), 0);
        QCoreApplication::processEvents();
        kept::picture(QStringLiteral("compare-server-profile.png"), &page);
        tabs->setCurrentIndex(1);
        QVERIFY(page.replicateChart()->isVisible() && page.table()->isVisible());
        QCOMPARE(page.currentChart(), 1);
        // Baseline and candidate swapped: B's time is now A's.
        page.findChild<QComboBox *>(QStringLiteral("compareBaseline"))->setCurrentIndex(1);
        page.findChild<QComboBox *>(QStringLiteral("compareCandidate"))->setCurrentIndex(0);
        QVERIFY(panel->diff());
        QVERIFY(panel->diff()->topChanges(1).front().totalChange() < -30);
        // A run without a profile on either side: no tab.
        page.setRuns({ profiledRun(QStringLiteral("A main"), 1, 1e6, 0), makeRun(QStringLiteral("B plain"), 2, 1e6) });
        QCOMPARE(tabIndex(tabs, QStringLiteral("Server profile")), -1);
        QVERIFY(page.replicateChart()->isVisible());
    }

    void reportsSayWhereBsTimeWent()
    {
        RunRecord a = profiledRun(QStringLiteral("A main"), 1, 1e6, 0);
        RunRecord b = profiledRun(QStringLiteral("B burn"), 2, 1.05e6, 40);
        const Comparison comparison = compareRuns(a.snapshot, b.snapshot);
        const QByteArray html = htmlComparisonReport({ &a, &b }, comparison);
        kept::file(QStringLiteral("comparison-profile.html"), html);
        QVERIFY(html.contains("<h2>Where B's server time went</h2>"));
        QVERIFY(html.contains("B spends +") && html.contains("rpcscope::burnCpu"));
        QVERIFY(html.contains("<td class=\"regression\">slower in B</td>"));
        // The differential graph as a picture: its script never runs in the report.
        static const QRegularExpression image(QStringLiteral("data:image/svg\\+xml;base64,([A-Za-z0-9+/=]+)"));
        const QRegularExpressionMatch match = image.match(QString::fromUtf8(html));
        QVERIFY(match.hasMatch());
        const QByteArray svg = QByteArray::fromBase64(match.captured(1).toLatin1());
        QVERIFY(svg.contains("<svg") && svg.contains("rpcscope::burnCpu") && svg.contains("A: A main; B: B burn"));
        QVERIFY(!html.contains("<script") && !svg.contains("<script") && !svg.contains(">Search</text>"));
        // One run's report has its profile.
        const QByteArray single = htmlReport(b);
        QVERIFY(single.contains("<h2>Server profile</h2>") && single.contains("rpcscope::burnCpu"));
        QVERIFY(!htmlReport(makeRun(QStringLiteral("plain"), 3, 1e6)).contains("profile</h2>"));
        // A profile without samples is said to be one, never drawn as a measurement.
        Profile none;
        none.scope = QStringLiteral("server");
        none.notes = { QStringLiteral("perf is not installed: apt install linux-perf") };
        b.serverProfile = none;
        const QByteArray missing = htmlComparisonReport({ &a, &b }, comparison);
        QVERIFY(missing.contains("Not compared: B has no samples of its server."));
        QVERIFY(missing.contains("apt install linux-perf"));
        QVERIFY(!missing.contains("B spends") && !missing.contains("data:image/svg+xml"));
        QVERIFY(htmlReport(b).contains("No samples: the server was not profiled."));
    }

    void slideSaysWhereBsTimeWent()
    {
        const RunRecord a = profiledRun(QStringLiteral("A main"), 1, 1e6, 0);
        const RunRecord b = profiledRun(QStringLiteral("B burn"), 2, 1.05e6, 40);
        const SlideSpec spec = makeSlideSpec(a, b, compareRuns(a.snapshot, b.snapshot));
        const SlideText text = slideText(spec);
        QVERIFY2(
            text.profileLead.startsWith(QStringLiteral("Where B's server time went: ")), qPrintable(text.profileLead));
        QVERIFY(!text.profileChanges.isEmpty() && text.profileChanges.size() <= 3);
        QVERIFY2(text.profileChanges.first().startsWith(QStringLiteral("B spends +"))
                && text.profileChanges.first().contains(kBurn),
            qPrintable(text.profileChanges.first()));
        QCOMPARE(text.profileTitle, QStringLiteral("Where B's server time went"));
        QCOMPARE(text.profileLead, text.profileTitle + QStringLiteral(": ") + text.profileSummary);
        const Slide slide(spec);
        const QImage picture = slide.toImage(1.0);
        QVERIFY(!picture.isNull());
        // The second page: the differential graph, its burn frame in the red of "slower in B", which the verdict's
        // page does not have.
        QCOMPARE(slide.pageCount(), 2);
        const QImage graphPage = slide.toImage(1.0, 1);
        QCOMPARE(graphPage.size(), QSize(Slide::kWidth, Slide::kHeight));
        QVERIFY2(redShare(graphPage) > 0.01, qPrintable(QString::number(redShare(graphPage))));
        QVERIFY2(redShare(picture) < 0.001, qPrintable(QString::number(redShare(picture))));
        const QString dir = qEnvironmentVariable("RPCSCOPE_SCREENSHOTS");
        if (!dir.isEmpty()) {
            QVERIFY(picture.save(QDir(dir).filePath(QStringLiteral("slide-profile.png"))));
            QVERIFY(graphPage.save(QDir(dir).filePath(QStringLiteral("slide-profile-page.png"))));
        }
        // Saved: the PDF has both pages; a PNG is the first, with the second beside it.
        QTemporaryDir out;
        QString error;
        const QString pdfPath = out.filePath(QStringLiteral("deck.pdf"));
        QVERIFY2(slide.save(pdfPath, SlideFormat::Pdf, 1.0, &error), qPrintable(error));
        QCOMPARE(pdfPages(pdfPath), 2);
        const QString png = out.filePath(QStringLiteral("ab.png"));
        QCOMPARE(Slide::profilePagePath(png), out.filePath(QStringLiteral("ab-profile.png")));
        QCOMPARE(Slide::profilePagePath(QStringLiteral("/d.x/slide")), QStringLiteral("/d.x/slide-profile"));
        QVERIFY2(slide.save(png, SlideFormat::Png, 1.0, &error), qPrintable(error));
        QVERIFY(samePicture(QImage(png), picture));
        QVERIFY(!samePicture(picture, graphPage));
        QVERIFY(samePicture(QImage(Slide::profilePagePath(png)), graphPage));
        // A/A: nothing blamed, and said so.
        const RunRecord same = profiledRun(QStringLiteral("A again"), 3, 1e6, 0);
        const SlideText aa = slideText(makeSlideSpec(a, same, compareRuns(a.snapshot, same.snapshot)));
        QCOMPARE(aa.profileChanges.size(), 1);
        QVERIFY(aa.profileChanges.first().startsWith(QStringLiteral("No function changed beyond noise")));
        // Not profiled: no such lines, one page.
        const RunRecord plain = makeRun(QStringLiteral("plain"), 4, 1e6);
        const SlideSpec plainSpec = makeSlideSpec(a, plain, compareRuns(a.snapshot, plain.snapshot));
        QVERIFY(slideText(plainSpec).profileLead.isEmpty());
        const Slide onePage(plainSpec);
        QCOMPARE(onePage.pageCount(), 1);
        const QString plainPng = out.filePath(QStringLiteral("plain.png"));
        QVERIFY2(onePage.save(plainPng, SlideFormat::Png, 1.0, &error), qPrintable(error));
        QVERIFY(!QFile::exists(Slide::profilePagePath(plainPng)));
        QVERIFY2(onePage.save(pdfPath, SlideFormat::Pdf, 1.0, &error), qPrintable(error));
        QCOMPARE(pdfPages(pdfPath), 1);

        // The presentation moves page by page: the profiled comparison's two, then the next comparison's one.
        PresentationView view({ spec, plainSpec });
        QCOMPARE(view.page(), 0);
        view.next();
        QCOMPARE(view.currentIndex(), 0);
        QCOMPARE(view.page(), 1);
        // What is saved as PNG is the page shown.
        const QString shown = out.filePath(QStringLiteral("shown.png"));
        QVERIFY2(view.saveSlide(shown, SlideFormat::Png, 1.0, &error), qPrintable(error));
        QVERIFY(samePicture(QImage(shown), graphPage));
        view.next();
        QCOMPARE(view.currentIndex(), 1);
        QCOMPARE(view.page(), 0);
        view.next(); // the last page: stays
        QCOMPARE(view.currentIndex(), 1);
        view.previous(); // back to the profiled comparison's last page
        QCOMPARE(view.currentIndex(), 0);
        QCOMPARE(view.page(), 1);
        view.previous();
        QCOMPARE(view.page(), 0);
    }

    void screenshots()
    {
        if (qEnvironmentVariable("RPCSCOPE_SCREENSHOTS").isEmpty())
            QSKIP("set RPCSCOPE_SCREENSHOTS to a directory for the pictures");
        RunPage page;
        page.resize(900, 600);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        page.showProfiles(makeProfile(40, 3), std::nullopt);
        page.chartTabs()->setCurrentIndex(tabIndex(page.chartTabs(), QStringLiteral("Server profile")));
        QCoreApplication::processEvents();
        kept::picture(QStringLiteral("runpage-server-profile.png"), &page);
    }
};

QTEST_MAIN(TestProfileViews)
#include "tst_profileviews.moc"
