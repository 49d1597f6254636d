// The presentation view and its slides: the words worked out from a comparison, the view drawn at 1920x1080
// offscreen, the Present button of the Compare runs page, the saved PNG and PDF; and rpcscope-cli's slide-png and
// slide-pdf from two real runs against the built-in server.
#include "comparepage.h"
#include "presentationview.h"
#include "qcp.h"
#include "replicatechart.h"
#include "report/comparereport.h"
#include "sampleruns.h"
#include "sliderender.h"

#include "cliprocess.h"

#include <QFile>
#include <QImage>
#include <QPointer>
#include <QPushButton>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace rpcscope;

namespace {

// How the headline writes a change: whole percents from 10% up, one decimal under.
QString headlinePercent(double fraction)
{
    return formatPercentChange(fraction, std::fabs(fraction) < 0.095 ? 1 : 0);
}

int pointCount(const QCustomPlot *plot, int graph)
{
    return graph < plot->graphCount() ? plot->graph(graph)->dataCount() : 0;
}

// The scatter points of a replicate chart (one per block and side on each panel).
int dotCount(const QCustomPlot *plot)
{
    int dots = 0;
    for (int g = 0; g < plot->graphCount(); ++g) {
        if (plot->graph(g)->scatterStyle().shape() == QCPScatterStyle::ssDisc)
            dots += plot->graph(g)->dataCount();
    }
    return dots;
}

// The share of pixels of @p image that are not near-white: a blank slide has none.
double inkShare(const QImage &image)
{
    qint64 ink = 0;
    const QImage rgb = image.convertToFormat(QImage::Format_RGB32);
    for (int y = 0; y < rgb.height(); y += 2) {
        const auto *line = reinterpret_cast<const QRgb *>(rgb.constScanLine(y));
        for (int x = 0; x < rgb.width(); x += 2) {
            if (qGray(line[x]) < 200)
                ++ink;
        }
    }
    return static_cast<double>(ink) / (static_cast<double>(rgb.width()) * rgb.height() / 4);
}

int pdfPageCount(const QByteArray &pdf)
{
    // The page tree's /Count; every other /Count (outlines) is absent from Qt's one-page PDFs.
    static const QRegularExpression pages(QStringLiteral("/Type\\s*/Pages[^>]*/Count\\s+(\\d+)"));
    const QRegularExpressionMatch match = pages.match(QString::fromLatin1(pdf));
    return match.hasMatch() ? match.captured(1).toInt() : -1;
}

} // namespace

class TestPresentation : public QObject {
    Q_OBJECT

    // An interleaved A/B pair: B about 20% slower in every one of 10 blocks.
    RunRecord m_before = blockedRun(QStringLiteral("before the upgrade"), 11, 1.0e6, 10);
    RunRecord m_after = blockedRun(QStringLiteral("after the upgrade"), 12, 1.2e6, 10);
    RunRecord m_faster = blockedRun(QStringLiteral("tuned"), 13, 0.8e6, 10);

private Q_SLOTS:
    void initTestCase()
    {
        m_before.environment.insert(QStringLiteral("hostname"), QStringLiteral("bench-1"));
        m_after.environment.insert(QStringLiteral("hostname"), QStringLiteral("bench-1"));
        m_after.environment.insert(QStringLiteral("rpcscope_version"), QStringLiteral("0.2.0"));
        m_before.environment.insert(QStringLiteral("rpcscope_version"), QStringLiteral("0.1.0"));
        m_after.startedAt = m_before.startedAt.addSecs(600);
    }

    void headlineIsTheVerdictWithItsInterval()
    {
        const Comparison slower = compareRuns(m_before.snapshot, m_after.snapshot);
        QCOMPARE(slower.overall, Verdict::Regression);
        const MetricRow *p50 = slower.row(MetricKind::P50);
        QVERIFY(p50 && p50->hasInterval);
        const QString headline = slideHeadline(slower);
        QVERIFY2(headline.startsWith(QStringLiteral("p50 ") + headlinePercent(p50->interval.estimate) + u" slower"),
            qPrintable(headline));
        QVERIFY2(headline.contains(QStringLiteral("95% CI ")), qPrintable(headline));
        QVERIFY2(headline.endsWith(headlinePercent(p50->interval.ciHigh)), qPrintable(headline));

        const Comparison faster = compareRuns(m_before.snapshot, m_faster.snapshot);
        QCOMPARE(faster.overall, Verdict::Improvement);
        QVERIFY2(slideHeadline(faster).contains(QStringLiteral(" faster")), qPrintable(slideHeadline(faster)));

        // The same run twice: no change to announce.
        const Comparison same = compareRuns(m_before.snapshot, m_before.snapshot);
        QVERIFY2(!slideHeadline(same).contains(QStringLiteral("slower")), qPrintable(slideHeadline(same)));

        // One plain run a side: the change is there, and the headline does not claim it.
        const Comparison single = compareRuns(
            makeRun(QStringLiteral("a"), 1, 1.0e6).snapshot, makeRun(QStringLiteral("b"), 2, 1.3e6).snapshot);
        QCOMPARE(single.overall, Verdict::Inconclusive);
        QVERIFY2(slideHeadline(single).startsWith(QStringLiteral("Inconclusive")), qPrintable(slideHeadline(single)));

        // p50's own interval beyond zero, Holm's p over the four metrics not: the headline says why there is no
        // verdict rather than show the interval alone.
        Comparison corrected = single;
        corrected.singleRun = false;
        corrected.testedMetrics = 4;
        for (MetricRow &row : corrected.rows) {
            if (row.kind != MetricKind::P50)
                continue;
            row.hasInterval = row.interval.valid = true;
            row.interval.estimate = 0.3;
            row.interval.ciLow = 0.02;
            row.interval.ciHigh = 0.6;
            row.interval.pValue = 0.03;
            row.interval.pAdjusted = 0.12;
        }
        QVERIFY2(slideHeadline(corrected).contains(QStringLiteral("95% CI +2 .. +60%, not significant once 4 metrics "
                                                                  "are judged together")),
            qPrintable(slideHeadline(corrected)));
    }

    void slideWordsNumbersAndDifferences()
    {
        const SlideSpec spec = makeSlideSpec(m_before, m_after, compareRuns(m_before.snapshot, m_after.snapshot));
        const SlideText text = slideText(spec);
        QVERIFY2(text.subline.contains(QStringLiteral("after the upgrade")), qPrintable(text.subline));
        QVERIFY2(text.subline.contains(QStringLiteral("10 vs 10 blocks")), qPrintable(text.subline));
        QCOMPARE(text.figures.size(), 4);
        const MetricRow *p99 = spec.comparison.row(MetricKind::P99);
        QCOMPARE(text.figures[1].a, formatMetricValue(p99->valueA, p99->unit));
        QCOMPARE(text.figures[1].b, formatMetricValue(p99->valueB, p99->unit));
        QCOMPARE(text.figures[0].tone, -1); // p50 regressed
        // Every key number coloured by its direction and its verdict, and said in a word: red for the regression,
        // grey for throughput (not judged), never the black of a plain number for a change.
        QCOMPARE(text.figures[0].note, QStringLiteral("regression"));
        QCOMPARE(text.figures[0].changeColor(), QColor(0xb0, 0x26, 0x1e));
        QCOMPARE(text.figures[2].note, QStringLiteral("not judged"));
        QVERIFY(!text.figures[2].judged);
        QCOMPARE(text.figures[2].changeColor(), QColor(0x5f, 0x63, 0x68));
        QVERIFY(text.figures[1].judged);
        QVERIFY(text.figures[1].direction != 0);
        QVERIFY(text.figures[1].changeColor() != QColor(0x20, 0x20, 0x20));
        QVERIFY(text.differences.contains(QStringLiteral("rpcscope_version: 0.1.0 -> 0.2.0")));
        QVERIFY2(text.runs.contains(QStringLiteral("both on bench-1")), qPrintable(text.runs));

        // A sequential verdict from elsewhere replaces the worked-out one.
        SlideSpec sequential = spec;
        sequential.headline = QStringLiteral("Decided after 14 pairs: p50 +18% slower");
        sequential.subline = QStringLiteral("Anytime-valid 95% confidence sequence");
        const SlideText overridden = slideText(sequential);
        QCOMPARE(overridden.headline, sequential.headline);
        QCOMPARE(overridden.subline, sequential.subline);
    }

    void unmeasuredFiguresShowADash()
    {
        // An imported run (ghz) measured no client CPU: "-", never 0, and no change.
        RunRecord imported = m_after;
        imported.origin = QStringLiteral("ghz: after.json");
        imported.snapshot.clientCpuSeconds = 0;
        imported.snapshot.clientPeakRssBytes = 0;
        const Slide slide(makeSlideSpec(m_before, imported, compareRuns(m_before.snapshot, imported.snapshot)));
        const SlideText::Figure &cpu = slide.text().figures[3];
        QCOMPARE(cpu.b, QStringLiteral("-"));
        QCOMPARE(cpu.change, QStringLiteral("-"));
        QVERIFY2(cpu.a != QStringLiteral("-"), qPrintable(cpu.a));
        QVERIFY2(slide.text().runs.contains(QStringLiteral("ghz: after.json")), qPrintable(slide.text().runs));
        QVERIFY(!slide.toImage().isNull());
    }

    void viewDrawsTheSlidesAtFullHd()
    {
        QList<SlideSpec> specs { makeSlideSpec(m_before, m_after, compareRuns(m_before.snapshot, m_after.snapshot)),
            makeSlideSpec(m_before, m_faster, compareRuns(m_before.snapshot, m_faster.snapshot)) };
        PresentationView view(specs);
        view.resize(Slide::kWidth, Slide::kHeight);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QCOMPARE(view.count(), 2);
        QCOMPARE(view.currentIndex(), 0);
        const Slide *slide = view.slide();
        QVERIFY(slide);
        QVERIFY2(slide->text().headline.contains(QStringLiteral("slower")), qPrintable(slide->text().headline));
        // Both distributions, in the page's colours for A and B.
        QCustomPlot *plot = slide->distributionPlot();
        QCOMPARE(plot->graphCount(), 2);
        QVERIFY(pointCount(plot, 0) > 10);
        QVERIFY(pointCount(plot, 1) > 10);
        QCOMPARE(plot->graph(0)->pen().color(), ComparePage::runColor(0));
        QCOMPARE(plot->graph(1)->pen().color(), ComparePage::runColor(1));
        // The dots behind the verdict: 10 blocks a side on each panel shown.
        QVERIFY(slide->showsReplicates());
        QVERIFY(!slide->replicateChart()->shown().isEmpty());
        QCOMPARE(dotCount(slide->replicateChart()), 20 * static_cast<int>(slide->replicateChart()->shown().size()));

        const QImage shown = view.grab().toImage();
        QCOMPARE(shown.size(), QSize(Slide::kWidth, Slide::kHeight));
        QVERIFY2(inkShare(shown) > 0.02, qPrintable(QString::number(inkShare(shown))));
        const QImage image = slide->toImage();
        QCOMPARE(image.size(), QSize(Slide::kWidth, Slide::kHeight));
        // The headline is drawn in the regression's colour: some of the top band is red.
        bool red = false;
        for (int y = 50; y < 130 && !red; ++y) {
            for (int x = 72; x < 900 && !red; ++x) {
                const QColor c = image.pixelColor(x, y);
                red = c.red() > 140 && c.green() < 80 && c.blue() < 80;
            }
        }
        QVERIFY(red);

        // Right and Left move between the comparisons, and stop at the ends; Esc leaves.
        QTest::keyClick(&view, Qt::Key_Right);
        QCOMPARE(view.currentIndex(), 1);
        QVERIFY2(view.slide()->text().headline.contains(QStringLiteral("faster")),
            qPrintable(view.slide()->text().headline));
        QTest::keyClick(&view, Qt::Key_Right);
        QCOMPARE(view.currentIndex(), 1);
        QTest::keyClick(&view, Qt::Key_Left);
        QCOMPARE(view.currentIndex(), 0);
        QTest::keyClick(&view, Qt::Key_Escape);
        QVERIFY(!view.isVisible());
    }

    void comparePagePresentsEachCandidateAgainstTheBaseline()
    {
        ComparePage page;
        page.setRuns({ m_before, m_after, m_faster });
        page.resize(1200, 800);
        page.show();
        QVERIFY(!page.comparison().rows.isEmpty());
        auto *button = page.findChild<QPushButton *>(QStringLiteral("comparePresent"));
        QVERIFY(button);
        QTest::mouseClick(button, Qt::LeftButton);
        QPointer<PresentationView> view = page.findChild<PresentationView *>();
        QVERIFY(view);
        QVERIFY(view->isFullScreen());
        QCOMPARE(view->count(), 2);
        QCOMPARE(view->currentIndex(), 0); // the page's candidate
        QCOMPARE(view->slide()->spec().candidate.name, m_after.name);
        QCOMPARE(view->slide()->spec().colorB, ComparePage::runColor(1));
        QCOMPARE(view->slide()->text().headline, slideHeadline(page.comparison()));
        QTest::keyClick(view, Qt::Key_Right);
        QCOMPARE(view->slide()->spec().candidate.name, m_faster.name);
        QCOMPARE(view->slide()->spec().colorB, ComparePage::runColor(2));
        QTest::keyClick(view, Qt::Key_F11);
        QTRY_VERIFY(!view); // closed and gone

        // Two runs: one slide.
        page.setRuns({ m_before, m_after });
        int current = -1;
        QCOMPARE(PresentationView::slidesOf(&page, &current).size(), 1);
        QCOMPARE(current, 0);
        // One run: nothing to present.
        page.setRuns({ m_before });
        QVERIFY(PresentationView::slidesOf(&page).isEmpty());
    }

    void savedSlidesArePngAndOnePagePdf()
    {
        const Slide slide(makeSlideSpec(m_before, m_after, compareRuns(m_before.snapshot, m_after.snapshot)));
        QTemporaryDir dir;
        QString error;
        const QString png = dir.filePath(QStringLiteral("slide.png"));
        QVERIFY2(slide.save(png, SlideFormat::Png, 2.0, &error), qPrintable(error));
        QCOMPARE(QImage(png).size(), QSize(2 * Slide::kWidth, 2 * Slide::kHeight));
        const QString pdfPath = dir.filePath(QStringLiteral("slide.pdf"));
        QVERIFY2(slide.save(pdfPath, SlideFormat::Pdf, 1.0, &error), qPrintable(error));
        QFile pdf(pdfPath);
        QVERIFY(pdf.open(QIODevice::ReadOnly));
        const QByteArray bytes = pdf.readAll();
        QVERIFY(bytes.startsWith("%PDF"));
        QCOMPARE(pdfPageCount(bytes), 1);
        // A path that cannot be written is named, and nothing is left behind.
        const QString bad = dir.filePath(QStringLiteral("slide.png/under-a-file.png"));
        QVERIFY(!slide.save(bad, SlideFormat::Png, 1.0, &error));
        QVERIFY2(error.contains(bad), qPrintable(error));
        if (qEnvironmentVariableIsSet("RPCSCOPE_SLIDE_OUT")) // to look at: RPCSCOPE_SLIDE_OUT=/tmp/slide.png
            QVERIFY(slide.save(qEnvironmentVariable("RPCSCOPE_SLIDE_OUT"), SlideFormat::Png, 1.0, &error));
    }

    void cliExportsSlidesOfTwoRealRuns()
    {
        QTemporaryDir dir;
        const QString db = dir.filePath(QStringLiteral("runs.sqlite"));
        // Two runs against the built-in server: B's replies come 2 ms late.
        for (const QString &delay : { QStringLiteral("0"), QStringLiteral("2000") }) {
            const CliResult run = runCliProcess({ QStringLiteral("run"), QStringLiteral("--builtin"),
                QStringLiteral("--call"), QStringLiteral("rpcscope.bench.v1.Bench/Echo"), QStringLiteral("-d"),
                QStringLiteral("{\"delay_us\": %1}").arg(delay), QStringLiteral("-n"), QStringLiteral("300"),
                QStringLiteral("-c"), QStringLiteral("4"), QStringLiteral("--db"), db });
            QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        }
        auto exportSlide = [&](const QStringList &extra) {
            return runCliProcess(QStringList { QStringLiteral("export"), QStringLiteral("1"), QStringLiteral("2"),
                                     QStringLiteral("--db"), db }
                + extra);
        };
        const QString png = dir.filePath(QStringLiteral("slide.png"));
        CliResult result
            = exportSlide({ QStringLiteral("-O"), QStringLiteral("slide-png"), QStringLiteral("-o"), png });
        QVERIFY2(result.exitCode == 0, qPrintable(result.err));
        QCOMPARE(QImage(png).size(), QSize(1920, 1080));
        QVERIFY2(!QFile::exists(Slide::profilePagePath(png)), "no profiles, no profile page");
        const QString png2x = dir.filePath(QStringLiteral("slide@2x.png"));
        result = exportSlide({ QStringLiteral("-O"), QStringLiteral("slide-png"), QStringLiteral("-o"), png2x,
            QStringLiteral("--chart-scale"), QStringLiteral("2"), QStringLiteral("--chart"),
            QStringLiteral("spectrum") });
        QVERIFY2(result.exitCode == 0, qPrintable(result.err));
        QCOMPARE(QImage(png2x).size(), QSize(3840, 2160));
        const QString pdfPath = dir.filePath(QStringLiteral("slide.pdf"));
        result = exportSlide({ QStringLiteral("-O"), QStringLiteral("slide-pdf"), QStringLiteral("-o"), pdfPath });
        QVERIFY2(result.exitCode == 0, qPrintable(result.err));
        QFile pdf(pdfPath);
        QVERIFY(pdf.open(QIODevice::ReadOnly));
        const QByteArray bytes = pdf.readAll();
        QVERIFY(bytes.startsWith("%PDF"));
        QCOMPARE(pdfPageCount(bytes), 1);

        // Refusals name what is wrong, exit 2 and write nothing.
        const QString none = dir.filePath(QStringLiteral("none.png"));
        result = runCliProcess(
            { QStringLiteral("export"), QStringLiteral("1"), QStringLiteral("99"), QStringLiteral("--db"), db,
                QStringLiteral("-O"), QStringLiteral("slide-png"), QStringLiteral("-o"), none });
        QCOMPARE(result.exitCode, 2);
        QVERIFY2(result.err.contains(QStringLiteral("#99")), qPrintable(result.err));
        result = exportSlide({ QStringLiteral("-O"), QStringLiteral("slide-gif"), QStringLiteral("-o"), none });
        QCOMPARE(result.exitCode, 2);
        QVERIFY2(result.err.contains(QStringLiteral("slide-gif")), qPrintable(result.err));
        result = runCliProcess({ QStringLiteral("export"), QStringLiteral("1"), QStringLiteral("--db"), db,
            QStringLiteral("-O"), QStringLiteral("slide-pdf"), QStringLiteral("-o"), none });
        QCOMPARE(result.exitCode, 2);
        QVERIFY2(result.err.contains(QStringLiteral("slide-pdf")), qPrintable(result.err));
        result = exportSlide({ QStringLiteral("-O"), QStringLiteral("slide-png"), QStringLiteral("-o"), none,
            QStringLiteral("--chart"), QStringLiteral("timeline") });
        QCOMPARE(result.exitCode, 2);
        QVERIFY2(result.err.contains(QStringLiteral("--chart")), qPrintable(result.err));
        // run has one run to show: it says where slides are made, before any load is sent.
        result = runCliProcess({ QStringLiteral("run"), QStringLiteral("--builtin"), QStringLiteral("--call"),
            QStringLiteral("rpcscope.bench.v1.Bench/Echo"), QStringLiteral("-n"), QStringLiteral("10"),
            QStringLiteral("-O"), QStringLiteral("slide-png"), QStringLiteral("-o"), none });
        QCOMPARE(result.exitCode, 2);
        QVERIFY2(result.err.contains(QStringLiteral("-O slide-png")) && result.err.contains(QStringLiteral("export")),
            qPrintable(result.err));
        QVERIFY(!QFile::exists(none));
        // The help names the formats.
        result = runCliProcess({ QStringLiteral("export"), QStringLiteral("--help") });
        QVERIFY2(result.out.contains(QStringLiteral("slide-png, slide-pdf")), qPrintable(result.out));
    }
};

QTEST_MAIN(TestPresentation)
#include "tst_presentation.moc"
