// Charts rendered to files (PNG, PDF, SVG) and the self-contained HTML reports, from hand-made runs; the run page's
// chart context menu.
#include "chartrender.h"
#include "compare/comparison.h"
#include "comparepage.h"
#include "htmlreport.h"
#include "keptfiles.h"
#include "qcp.h"
#include "replicatechart.h"
#include "runpage.h"
#include "sampleruns.h"
#include "store/runrecord.h"

#include <QAction>
#include <QApplication>
#include <QBuffer>
#include <QClipboard>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSet>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QSvgRenderer>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QThreadPool>
#include <QXmlStreamReader>

#include <cmath>
#include <random>

using namespace rpcscope;

namespace {

const QString kNastyName = QStringLiteral("A <b>bold</b> & \"quoted\" run");

// The dots of a replicate chart: the points of its scatter graphs (the legend's mean entry has none).
int dotCount(const QCustomPlot *plot, const QColor &color = QColor())
{
    int dots = 0;
    for (int g = 0; g < plot->graphCount(); ++g) {
        const QCPGraph *graph = plot->graph(g);
        if (graph->scatterStyle().shape() != QCPScatterStyle::ssDisc)
            continue;
        if (color.isValid() && graph->scatterStyle().brush().color().rgb() != color.rgb())
            continue;
        dots += graph->dataCount();
    }
    return dots;
}

// The texts a plot shows as items (the replicate chart's message).
QStringList itemTexts(const QCustomPlot *plot)
{
    QStringList texts;
    for (int i = 0; i < plot->itemCount(); ++i) {
        if (const auto *text = qobject_cast<const QCPItemText *>(plot->item(i)))
            texts << text->text().simplified();
    }
    return texts;
}

// Distinct colors on a grid of samples: a blank or single-color image has one or two.
int distinctColors(const QImage &image)
{
    QSet<QRgb> colors;
    for (int y = 0; y < image.height(); y += 3)
        for (int x = 0; x < image.width(); x += 3)
            colors.insert(image.pixel(x, y));
    return static_cast<int>(colors.size());
}

// Pixels within @p tolerance (per channel) of @p color: is a series of that color drawn at all?
int pixelsNear(const QImage &image, const QColor &color, int tolerance = 24)
{
    int n = 0;
    for (int y = 0; y < image.height(); ++y) {
        for (int x = 0; x < image.width(); ++x) {
            const QColor c = image.pixelColor(x, y);
            if (std::abs(c.red() - color.red()) <= tolerance && std::abs(c.green() - color.green()) <= tolerance
                && std::abs(c.blue() - color.blue()) <= tolerance)
                ++n;
        }
    }
    return n;
}

struct SvgContent {
    bool wellFormed = false;
    QString error;
    QStringList texts;
    int paths = 0;
};

SvgContent readSvg(const QByteArray &svg)
{
    SvgContent out;
    QXmlStreamReader xml(svg);
    while (!xml.atEnd()) {
        xml.readNext();
        if (!xml.isStartElement())
            continue;
        if (xml.name() == u"text")
            out.texts << xml.readElementText(QXmlStreamReader::IncludeChildElements).simplified();
        else if (xml.name() == u"path" || xml.name() == u"polyline")
            ++out.paths;
    }
    out.wellFormed = !xml.hasError();
    out.error = xml.errorString();
    return out;
}

QString axisLabelOf(ChartKind kind)
{
    switch (kind) {
    case ChartKind::Histogram:
        return QStringLiteral("latency (log scale)");
    case ChartKind::Spectrum:
        return QStringLiteral("percentile (log scale of 1/(1-p))");
    case ChartKind::Timeline:
        return QStringLiteral("latency per interval (log scale)");
    case ChartKind::Throughput:
        return QStringLiteral("calls per second (1/s)");
    case ChartKind::MessageHistogram:
        return QStringLiteral("latency (log scale)");
    }
    return {};
}

} // namespace

class TestReportCharts : public QObject {
    Q_OBJECT

    RunRecord m_a = makeRun(kNastyName, 1, 2e6);
    RunRecord m_b = makeRun(QStringLiteral("B slower"), 2, 2.6e6);
    QTemporaryDir m_dir;

    void addKinds()
    {
        QTest::addColumn<int>("kind");
        QTest::newRow("histogram") << static_cast<int>(ChartKind::Histogram);
        QTest::newRow("spectrum") << static_cast<int>(ChartKind::Spectrum);
        QTest::newRow("timeline") << static_cast<int>(ChartKind::Timeline);
        QTest::newRow("throughput") << static_cast<int>(ChartKind::Throughput);
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true); // the Compare page's remembered threshold is not the user's
        QVERIFY(m_dir.isValid());
        // A dark desktop: files must still come out light.
        QPalette dark;
        dark.setColor(QPalette::Base, QColor(0x1e, 0x1e, 0x1e));
        dark.setColor(QPalette::Window, QColor(0x2b, 0x2b, 0x2b));
        dark.setColor(QPalette::Text, QColor(0xe0, 0xe0, 0xe0));
        dark.setColor(QPalette::WindowText, QColor(0xe0, 0xe0, 0xe0));
        QApplication::setPalette(dark);
    }

    void pngOfEachKind_data() { addKinds(); }
    void pngOfEachKind()
    {
        QFETCH(int, kind);
        ChartOptions options;
        options.width = 800;
        options.height = 450;
        options.scale = 2;
        const QString path = m_dir.filePath(QStringLiteral("chart-%1.png").arg(kind));
        QString error;
        QVERIFY2(renderChart({ &m_a }, static_cast<ChartKind>(kind), ChartFormat::Png, options, path, &error),
            qPrintable(error));
        QImage image;
        QVERIFY(image.load(path, "PNG"));
        QCOMPARE(image.size(), QSize(1600, 900));
        QVERIFY2(distinctColors(image) > 40, qPrintable(QString::number(distinctColors(image))));
        // Light theme whatever the desktop's: the corners are the white background.
        QCOMPARE(image.pixelColor(2, 2), QColor(Qt::white));
        QCOMPARE(image.pixelColor(image.width() - 3, image.height() - 3), QColor(Qt::white));
        // The series is drawn: the accent blue (or, for latency over time, the p50 green) is on the picture.
        const QColor series
            = kind == static_cast<int>(ChartKind::Timeline) ? QColor(0x2e, 0x9d, 0x4f) : QColor(0x1f, 0x77, 0xb4);
        QVERIFY(pixelsNear(image, series) > 200);
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        kept::file(QStringLiteral("single-%1.png").arg(kind), file.readAll());
    }

    void pdfOfEachKind_data() { addKinds(); }
    void pdfOfEachKind()
    {
        QFETCH(int, kind);
        const QString path = m_dir.filePath(QStringLiteral("chart-%1.pdf").arg(kind));
        QString error;
        QVERIFY2(renderChart({ &m_a, &m_b }, static_cast<ChartKind>(kind), ChartFormat::Pdf, {}, path, &error),
            qPrintable(error));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray pdf = file.readAll();
        QVERIFY(pdf.startsWith("%PDF-"));
        QVERIFY2(pdf.size() > 4000, qPrintable(QString::number(pdf.size())));
        QVERIFY(pdf.trimmed().endsWith("%%EOF"));
    }

    void svgOfEachKind_data() { addKinds(); }
    void svgOfEachKind()
    {
        QFETCH(int, kind);
        const auto chartKind = static_cast<ChartKind>(kind);
        ChartOptions options;
        options.title = QStringLiteral("Echo <1 KiB> & friends");
        const QByteArray svg = renderChartSvg({ &m_a }, chartKind, options);
        QVERIFY(QSvgRenderer(svg).isValid());
        const SvgContent content = readSvg(svg);
        QVERIFY2(content.wellFormed, qPrintable(content.error));
        // Real vector output: the text is text, the series are paths.
        QVERIFY2(content.texts.contains(options.title), qPrintable(content.texts.join(u'|')));
        QVERIFY2(content.texts.contains(axisLabelOf(chartKind)), qPrintable(content.texts.join(u'|')));
        QVERIFY(content.paths >= 5);
        QVERIFY(!svg.contains("<image"));
        // Tick labels carry their unit: "1 ms", "90%", seconds.
        const QString allText = content.texts.join(u'|');
        if (chartKind == ChartKind::Spectrum)
            QVERIFY2(allText.contains(QStringLiteral("99.9%")) && allText.contains(QStringLiteral(" ms")),
                qPrintable(allText));
        if (chartKind == ChartKind::Histogram)
            QVERIFY2(allText.contains(QStringLiteral("p99 ")), qPrintable(allText)); // the percentile markers
        // The same file through the atomic writer.
        const QString path = m_dir.filePath(QStringLiteral("chart-%1.svg").arg(kind));
        QString error;
        QVERIFY2(renderChart({ &m_a }, chartKind, ChartFormat::Svg, options, path, &error), qPrintable(error));
        QVERIFY(QSvgRenderer(path).isValid());
        kept::file(QStringLiteral("single-%1.svg").arg(kind), svg);
    }

    void comparePageComputesOffTheGuiThread()
    {
        // Whatever a comparison costs (judged per call, a bootstrap of a tenth of a second or more), the GUI thread
        // does not wait for it. Blocks a side, so that the verdict can say which is faster.
        const RunRecord slower = blockedRun(QStringLiteral("B slower"), 2, 1.3e6, 10);
        const RunRecord faster = blockedRun(QStringLiteral("A"), 1, 1e6, 10);
        ComparePage page;
        QSignalSpy changed(&page, &ComparePage::comparisonChanged);
        page.setRuns({ faster, slower });
        QVERIFY(page.isComparing()); // setRuns returned before the comparison was done
        QCOMPARE(changed.count(), 0);
        // Picked again before the first result is in: only the newest is shown.
        page.setRuns({ slower, faster });
        QTRY_VERIFY_WITH_TIMEOUT(!page.isComparing(), 30000);
        // The stale computation is done too, and its result delivered: it must not have replaced the newer one.
        QThreadPool::globalInstance()->waitForDone();
        QCoreApplication::sendPostedEvents();
        QCOMPARE(changed.count(), 1);
        QVERIFY2(page.comparison().improvements.contains(QStringLiteral("p50")), qPrintable(page.verdictText()));
        QVERIFY(page.table()->rowCount() >= 10);
        // Read while it computes: the accessors wait for the result instead of showing a stale one.
        page.setRuns({ faster, slower });
        QVERIFY(page.isComparing());
        QVERIFY2(page.comparison().regressions.contains(QStringLiteral("p50")), qPrintable(page.verdictText()));
        QVERIFY(!page.isComparing());
    }

    void longRunNamesAreCutToTheirLegendColumn()
    {
        // Two runs named at length, on a narrow page: every legend name fits its column (cut in the middle, the whole
        // name kept), and is whole again on a wide one.
        const QString longA = QStringLiteral("nightly build of the payments service with protobuf 3.21 and gRPC 1.51");
        const QString longB = QStringLiteral("nightly build of the payments service with protobuf 4.24 and gRPC 1.60");
        ComparePage page;
        page.resize(640, 700);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        page.setRuns({ makeRun(longA, 1, 2e6), makeRun(longB, 2, 2.6e6) });
        QTRY_VERIFY_WITH_TIMEOUT(!page.isComparing(), 30000);
        for (int chart = 0; chart < 4; ++chart) {
            QCustomPlot *plot = page.plot(chart);
            QVERIFY(plot->plottableCount() >= 2);
            const QFontMetrics metrics(plot->legend->font());
            for (int i = 0; i < plot->plottableCount(); ++i) {
                const QCPAbstractPlottable *p = plot->plottable(i);
                QVERIFY2(p->name().contains(QChar(0x2026)), qPrintable(p->name())); // cut
                QVERIFY2(metrics.horizontalAdvance(p->name()) <= plot->width() / 2, qPrintable(p->name()));
                const QString whole = p->property("fullName").toString();
                QVERIFY2(whole.contains(longA) || whole.contains(longB), qPrintable(whole));
            }
        }
        QByteArray png;
        QBuffer buffer(&png);
        QVERIFY(buffer.open(QIODevice::WriteOnly) && page.grab().save(&buffer, "PNG"));
        kept::file(QStringLiteral("compare-long-names-narrow.png"), png);
        page.resize(2400, 700);
        QTRY_VERIFY(page.plot(0)->width() > 1600);
        for (int i = 0; i < page.plot(0)->plottableCount(); ++i)
            QVERIFY2(page.plot(0)->plottable(i)->name().endsWith(QStringLiteral("gRPC 1.51"))
                    || page.plot(0)->plottable(i)->name().endsWith(QStringLiteral("gRPC 1.60")),
                qPrintable(page.plot(0)->plottable(i)->name()));
    }

    void overlaysNameEveryRun_data() { addKinds(); }
    void overlaysNameEveryRun()
    {
        QFETCH(int, kind);
        const auto chartKind = static_cast<ChartKind>(kind);
        const RunRecord c = makeRun(QStringLiteral("C faster"), 3, 1.4e6);
        const QList<const RunRecord *> runs { &m_a, &m_b, &c };
        const SvgContent content = readSvg(renderChartSvg(runs, chartKind));
        QVERIFY2(content.wellFormed, qPrintable(content.error));
        const QString allText = content.texts.join(u'|');
        for (const RunRecord *run : runs)
            QVERIFY2(allText.contains(run->name), qPrintable(run->name + QStringLiteral(" not in ") + allText));
        // Each run in its own color: baseline blue, then orange, then green.
        const QImage image = renderChartImage(runs, chartKind);
        QCOMPARE(image.size(), QSize(1000, 600));
        for (const QColor &color : { QColor(0x1f, 0x77, 0xb4), QColor(0xff, 0x7f, 0x0e), QColor(0x2c, 0xa0, 0x2c) })
            QVERIFY2(pixelsNear(image, color) > 100, qPrintable(color.name()));
        QByteArray png;
        QBuffer buffer(&png);
        buffer.open(QIODevice::WriteOnly);
        image.save(&buffer, "PNG");
        kept::file(QStringLiteral("overlay-%1.png").arg(kind), png);
    }

    void emptyRunStillDrawsAxes()
    {
        RunRecord empty;
        empty.name = QStringLiteral("nothing yet");
        for (ChartKind kind :
            { ChartKind::Histogram, ChartKind::Spectrum, ChartKind::Timeline, ChartKind::Throughput }) {
            const QImage image = renderChartImage({ &empty }, kind);
            QCOMPARE(image.size(), QSize(1000, 600));
            QVERIFY(distinctColors(image) > 5); // title, axes and tick labels
        }
        QVERIFY(renderChartImage({}, ChartKind::Histogram).isNull());
    }

    void unwritablePathIsAnErrorAndLeavesNoFile()
    {
        for (ChartFormat format : { ChartFormat::Png, ChartFormat::Pdf, ChartFormat::Svg }) {
            const QString path = m_dir.filePath(QStringLiteral("no-such-folder/chart.") + chartFormatSuffix(format));
            QString error;
            QVERIFY(!renderChart({ &m_a }, ChartKind::Histogram, format, {}, path, &error));
            QVERIFY2(error.contains(QDir::toNativeSeparators(path)), qPrintable(error));
            QVERIFY(!QFile::exists(path));
        }
        // A folder where the file should go: nothing is replaced.
        QVERIFY(QDir(m_dir.path()).mkpath(QStringLiteral("taken.png")));
        QString error;
        QVERIFY(!renderChart(
            { &m_a }, ChartKind::Histogram, ChartFormat::Png, {}, m_dir.filePath(QStringLiteral("taken.png")), &error));
        QVERIFY(error.contains(QStringLiteral("taken.png")));
        QVERIFY(QFileInfo(m_dir.filePath(QStringLiteral("taken.png"))).isDir());
    }

    void streamingRunsChartTheirMessages()
    {
        RunRecord streamed = makeRun(QStringLiteral("Download"), 7, 40e6);
        recordLognormal(streamed.snapshot.messageLatency, 8, 200e3, 0.3, 50'000);
        streamed.snapshot.messagesReceived = 50'000;
        streamed.snapshot.messagesSent = 600;
        const SvgContent svg = readSvg(renderChartSvg({ &streamed }, ChartKind::MessageHistogram));
        QVERIFY2(svg.wellFormed, qPrintable(svg.error));
        QVERIFY2(svg.texts.contains(QStringLiteral("messages per bin")), qPrintable(svg.texts.join(u'|')));
        QVERIFY(svg.texts.contains(QStringLiteral("Message latency histogram: Download")));
        QVERIFY(
            std::any_of(svg.texts.begin(), svg.texts.end(), [](const QString &t) { return t.startsWith(u"p50 2"); }));
        // The report puts the messages' histogram first, and lists them in the summary; a unary run's has neither.
        const QByteArray html = htmlReport(streamed);
        QCOMPARE(html.count("<svg"), 5);
        QVERIFY(html.indexOf("Latency of each received message") < html.indexOf("Latency of the OK calls"));
        QVERIFY(html.contains("<th>Messages received</th><td class=\"num\">50000</td>"));
        QVERIFY(!htmlReport(m_a).contains("Latency of each received message"));
    }

    void htmlReportIsSelfContained()
    {
        const QByteArray html = htmlReport(m_a);
        kept::file(QStringLiteral("report.html"), html);
        QVERIFY(html.startsWith("<!DOCTYPE html>"));
        QVERIFY(html.contains("<meta charset=\"utf-8\">"));
        // The run's name is escaped everywhere, in the title and the charts' SVG alike.
        QVERIFY(html.contains("<title>A &lt;b&gt;bold&lt;/b&gt; &amp; &quot;quoted&quot; run</title>"));
        QVERIFY(html.contains("<h1>A &lt;b&gt;bold&lt;/b&gt; &amp; &quot;quoted&quot; run</h1>"));
        QVERIFY(!html.contains("<b>bold"));
        QVERIFY(html.contains("connect failed: &lt;refused&gt; &amp; gone"));
        for (const char *section : { "<h2>Scenario</h2>", "<h2>Summary</h2>", "<h2>Status codes</h2>",
                 "<h2>Errors</h2>", "<h2>Charts</h2>", "<h2>Environment</h2>" })
            QVERIFY2(html.contains(section), section);
        for (const char *header : { "<th>Metric</th>", "<th>Calls</th>", "<th>OK calls/s</th>", "<th>Mean</th>",
                 "<th>Std dev</th>", "<th>Min</th>", "<th>p50</th>", "<th>p99.9</th>", "<th>Max</th>",
                 "<th>Client CPU/call</th>", "<th>Server CPU/call</th>", "<th>Client peak RSS</th>" })
            QVERIFY2(html.contains(header), header);
        QVERIFY(html.contains("<th>Load: concurrency</th><td>16</td>"));
        QVERIFY(html.contains("<th>Transport / codec</th><td>grpc / protobuf</td>"));
        QVERIFY(html.contains("<td>UNAVAILABLE</td>"));
        QVERIFY(html.contains("<th>cpu_governor</th>"));
        QVERIFY(!html.contains("<h2>Checks</h2>")); // the run had none
        RunRecord checked = m_a;
        checked.scenario.insert(
            QStringLiteral("checks"), QJsonArray { QStringLiteral("p99<1h"), QStringLiteral("max<1us") });
        const QByteArray withChecks = htmlReport(checked);
        QVERIFY(withChecks.contains("<h2>Checks</h2>"));
        QVERIFY(withChecks.contains("1 of 2 checks failed"));
        QVERIFY(withChecks.contains("<td>max&lt;1us</td>"));
        QVERIFY(withChecks.contains(" class=\"regression\">FAIL</td>"));
        QCOMPARE(html.count("<svg"), 4);
        QCOMPARE(html.count("</svg>"), 4);
        QVERIFY(!html.contains("<?xml")); // inline SVG, not a pasted document
        // Nothing to fetch: no scripts, stylesheets, images or fonts from anywhere, no URL but SVG's namespaces.
        for (const char *fetch : { "<script", "<link", "<img", "<iframe", "src=", "@import", "url(" })
            QVERIFY2(!html.contains(fetch), fetch);
        QByteArray stripped = html;
        stripped.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
        stripped.replace("xmlns:xlink=\"http://www.w3.org/1999/xlink\"", "");
        QVERIFY(!stripped.contains("http://"));
        QVERIFY(!stripped.contains("https://"));
        // Print: no page break inside tables or charts.
        QVERIFY(html.contains("@media print"));
        QVERIFY(html.contains("break-inside: avoid"));
        // Each chart is valid SVG on its own.
        const QString text = QString::fromUtf8(html);
        static const QRegularExpression svgElement(
            QStringLiteral("<svg.*?</svg>"), QRegularExpression::DotMatchesEverythingOption);
        int charts = 0;
        for (const QRegularExpressionMatch &m : svgElement.globalMatch(text)) {
            const SvgContent content = readSvg(m.captured().toUtf8());
            QVERIFY2(content.wellFormed, qPrintable(content.error));
            QVERIFY(content.texts.join(u'|').contains(kNastyName)); // the legend or title names the run
            ++charts;
        }
        QCOMPARE(charts, 4);
    }

    void comparisonReportHasTheVerdictAndOverlays()
    {
        RunRecord b = m_b;
        b.environment.insert(QStringLiteral("cpu_governor"), QStringLiteral("powersave"));
        // One run a side, judged call by call (a plain pair of runs is otherwise inconclusive, and has no verdict to
        // colour).
        CompareOptions perCall;
        perCall.perCallWhenSingleRun = true;
        const Comparison comparison = compareRuns(m_a.snapshot, b.snapshot, perCall);
        QCOMPARE(comparison.overall, Verdict::Regression);
        const QByteArray html = htmlComparisonReport({ &m_a, &b }, comparison);
        kept::file(QStringLiteral("comparison.html"), html);
        const QByteArray verdict = QByteArray("<div class=\"verdict regression\">")
            + comparison.verdictLine().toHtmlEscaped().toUtf8() + QByteArray("</div>");
        QVERIFY2(html.contains(verdict), verdict.constData());
        QVERIFY(html.contains("<h2>Deltas</h2>"));
        QVERIFY(html.contains("<th>p99</th>"));
        QCOMPARE(html.count("<svg"), 4);
        // Every overlay's legend names both runs.
        const QString text = QString::fromUtf8(html);
        static const QRegularExpression svgElement(
            QStringLiteral("<svg.*?</svg>"), QRegularExpression::DotMatchesEverythingOption);
        for (const QRegularExpressionMatch &m : svgElement.globalMatch(text)) {
            const QString legend = readSvg(m.captured().toUtf8()).texts.join(u'|');
            QVERIFY2(legend.contains(kNastyName) && legend.contains(QStringLiteral("B slower")), qPrintable(legend));
        }
        // What differs in the environment, and nothing else of it.
        QVERIFY(html.contains("<li>cpu_governor: performance -&gt; powersave</li>"));
        QVERIFY(!html.contains("<li>os:"));
        QVERIFY(html.contains("<tr class=\"differs\"><th>cpu_governor</th>"));
        QVERIFY(!html.contains("<b>bold"));

        // The other way round it is an improvement, in green.
        const Comparison reverse = compareRuns(b.snapshot, m_a.snapshot, perCall);
        QCOMPARE(reverse.overall, Verdict::Improvement);
        QVERIFY(htmlComparisonReport({ &b, &m_a }, reverse).contains("<div class=\"verdict improvement\">"));
        // Runs that do not differ: neutral.
        const Comparison same = compareRuns(m_a.snapshot, m_a.snapshot, perCall);
        const QByteArray neutral = htmlComparisonReport({ &m_a, &m_a }, same);
        QVERIFY(neutral.contains("<div class=\"verdict neutral\">"));
        QVERIFY(neutral.contains("the same environment"));
    }

    void comparisonReportShowsTheSpreadOfTheReplicates()
    {
        const RunRecord a = blockedRun(QStringLiteral("before <tuning>"), 11, 2e6, 8);
        const RunRecord b = blockedRun(QStringLiteral("after"), 12, 2.3e6, 10);
        const Comparison comparison = compareRuns(a.snapshot, b.snapshot);
        QCOMPARE(comparison.unitA, ReplicateUnit::Block);
        QCOMPARE(comparison.replicatesA, qint64(8));
        QCOMPARE(comparison.replicatesB, qint64(10));
        QCOMPARE(comparison.overall, Verdict::Regression);
        const QByteArray html = htmlComparisonReport({ &a, &b }, comparison);
        kept::file(QStringLiteral("comparison-blocks.html"), html);
        const QString text = QString::fromUtf8(html);

        // The section, after the deltas it explains, with its caption saying what the verdict rests on.
        const qsizetype start = text.indexOf(QStringLiteral("<h2>Spread of the replicates</h2>"));
        QVERIFY(start > text.indexOf(QStringLiteral("<h2>Deltas</h2>")));
        const qsizetype end = text.indexOf(QStringLiteral("</figure>"), start);
        QVERIFY(end > start);
        const QString section = text.mid(start, end - start);
        QVERIFY2(section.contains(comparison.basis().toHtmlEscaped()), qPrintable(section.right(400)));
        const qsizetype svgStart = section.indexOf(QStringLiteral("<svg"));
        const QByteArray svg = section.mid(svgStart, section.indexOf(QStringLiteral("</svg>")) + 6 - svgStart).toUtf8();
        kept::file(QStringLiteral("comparison-blocks-spread.svg"), svg);
        QVERIFY(QSvgRenderer(svg).isValid());
        const SvgContent content = readSvg(svg);
        QVERIFY2(content.wellFormed, qPrintable(content.error));
        QVERIFY2(content.texts.contains(QStringLiteral("p50 per block (ms)")), qPrintable(content.texts.join(u'|')));
        // The legend names the sides by letter (it ran off the chart with their names), the name on hover, escaped.
        QVERIFY2(content.texts.contains(QStringLiteral("A: 8 blocks")), qPrintable(content.texts.join(u'|')));
        QVERIFY2(svg.contains("<title>before &lt;tuning&gt;</title>"), svg.constData());

        // One circle per block and side in p50's panel, each side in its colour; a panel per tested latency.
        static const QRegularExpression panelElement(
            QStringLiteral("<g class=\"panel\" data-metric=\"([^\"]+)\">(.*?)</g>"),
            QRegularExpression::DotMatchesEverythingOption);
        QStringList metrics;
        int circles = 0;
        for (const QRegularExpressionMatch &m : panelElement.globalMatch(section)) {
            metrics << m.captured(1);
            const QString panel = m.captured(2);
            QCOMPARE(panel.count(QStringLiteral("<circle")), 18);
            QCOMPARE(panel.count(QStringLiteral("fill=\"%1\"").arg(chartRunColor(0).name())), 8);
            QCOMPARE(panel.count(QStringLiteral("fill=\"%1\"").arg(chartRunColor(1).name())), 10);
            QVERIFY(panel.contains(QStringLiteral("<title>B, block 10: ")));
            circles += 18;
        }
        QCOMPARE(metrics.first(), QStringLiteral("p50"));
        QCOMPARE(metrics,
            (QStringList {
                QStringLiteral("p50"), QStringLiteral("p95"), QStringLiteral("p99"), QStringLiteral("mean") }));
        QCOMPARE(section.count(QStringLiteral("<circle")), circles + 2); // and the legend's two

        // The delta table says how large a change each row could have seen.
        QVERIFY(html.contains(">Detectable</th>"));
        const qsizetype p50Row = text.indexOf(QStringLiteral("<tr><th>p50</th>"));
        const QString row = text.mid(p50Row, text.indexOf(QStringLiteral("</tr>"), p50Row) - p50Row);
        QVERIFY2(row.contains(QStringLiteral("<td class=\"num\">\u00b1")), qPrintable(row));

        // One plain run a side: no replicates, no section, and nothing detectable to state.
        const QByteArray plain = htmlComparisonReport({ &m_a, &m_b }, compareRuns(m_a.snapshot, m_b.snapshot));
        QVERIFY(!plain.contains("Spread of the replicates"));
        QVERIFY(!plain.contains("class=\"panel\""));
        QVERIFY(plain.contains(">Detectable</th>"));
        QVERIFY(!plain.contains("\u00b1"));
    }

    void aSlidesDotsAreTitledShort()
    {
        // Under the slide's caption ("One dot per server process"), a panel is titled by its metric alone; a long
        // one takes its unit on a line of its own. CPU per call is charted in time, as its verdict's replicates.
        RunRecord a = blockedRun(QStringLiteral("before"), 11, 2e6, 8);
        RunRecord b = blockedRun(QStringLiteral("after"), 12, 2.3e6, 10);
        for (RunRecord *run : { &a, &b }) {
            for (RunBlock &block : run->snapshot.blocks)
                block.clientCpuSeconds = 30e-6 * static_cast<double>(block.calls) * (run == &a ? 1.0 : 1.3);
        }
        ReplicateChart chart;
        chart.resize(1200, 300);
        chart.setShortAxisTitles(true);
        chart.setComparison(
            compareRuns(a.snapshot, b.snapshot), { QStringLiteral("A"), Qt::blue }, { QStringLiteral("B"), Qt::red });
        QStringList labels;
        for (int i = 0; i < chart.axisRectCount(); ++i)
            labels << chart.axisRect(i)->axis(QCPAxis::atLeft)->label();
        QVERIFY2(labels.contains(QStringLiteral("p50 (ms)")), qPrintable(labels.join(u'|')));
        QVERIFY2(labels.contains(QStringLiteral("client CPU/call\n(us)")), qPrintable(labels.join(u'|')));
    }

    void comparePageShowsEachReplicateAsADot()
    {
        const RunRecord a = blockedRun(QStringLiteral("before"), 11, 2e6, 8);
        const RunRecord b = blockedRun(QStringLiteral("after"), 12, 2.3e6, 10);
        ComparePage page;
        page.resize(1100, 720);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        page.setRuns({ a, b });
        const Comparison &comparison = page.comparison(); // waits for the thread pool
        QCOMPARE(comparison.replicatesB, qint64(10));
        auto *chart = page.findChild<ReplicateChart *>(QStringLiteral("replicateChart"));
        QVERIFY(chart);
        QCOMPARE(chart, page.replicateChart());
        QVERIFY(chart->isVisible());
        QVERIFY(chart->message().isEmpty());
        QCOMPARE(chart->spreads().size(), 4); // p50, p95, p99, mean
        QCOMPARE(chart->axisRectCount(), 4);
        // Every block a dot, A's in the baseline's colour, B's in the candidate's: 18 per panel.
        QCOMPARE(dotCount(chart), 4 * 18);
        QCOMPARE(dotCount(chart, ComparePage::runColor(0)), 4 * 8);
        QCOMPARE(dotCount(chart, ComparePage::runColor(1)), 4 * 10);
        QCOMPARE(chart->axisRect(0)->axis(QCPAxis::atLeft)->label(), QStringLiteral("p50 per block (ms)"));
        QVERIFY(chart->axisRect(0)->axis(QCPAxis::atBottom)->label().startsWith(u'+')); // the change
        QVERIFY(itemTexts(chart).isEmpty());
        // Under the verdict, what it rests on; in the table, what each row could have seen.
        QVERIFY2(page.basisText().contains(comparison.basis()), qPrintable(page.basisText()));
        QTableWidget *table = page.table();
        QCOMPARE(table->horizontalHeaderItem(5)->text(), QStringLiteral("Detectable"));
        QCOMPARE(table->horizontalHeaderItem(6)->text(), QStringLiteral("Verdict (CI)"));
        QCOMPARE(table->item(0, 0)->text(), QStringLiteral("p50"));
        QVERIFY2(table->item(0, 5)->text().startsWith(QChar(0x00b1)), qPrintable(table->item(0, 5)->text()));
        QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest); // the verdict's new text laid out
        QByteArray png;
        QBuffer buffer(&png);
        buffer.open(QIODevice::WriteOnly);
        page.grab().save(&buffer, "PNG");
        kept::file(QStringLiteral("compare-page-blocks.png"), png);

        // The baseline and candidate swapped: the colours follow the runs.
        page.findChild<QComboBox *>(QStringLiteral("compareBaseline"))->setCurrentIndex(1);
        page.findChild<QComboBox *>(QStringLiteral("compareCandidate"))->setCurrentIndex(0);
        QCOMPARE(page.comparison().replicatesA, qint64(10));
        QCOMPARE(dotCount(chart, ComparePage::runColor(1)), 4 * 10);

        // One plain run a side: the chart says why it has no dots.
        page.setRuns({ m_a, m_b });
        QVERIFY(page.comparison().singleRun);
        QCOMPARE(dotCount(chart), 0);
        QCOMPARE(chart->message(), ReplicateChart::noReplicatesText());
        QCOMPARE(itemTexts(chart), QStringList { ReplicateChart::noReplicatesText() });
        QVERIFY(table->item(0, 5)->text().isEmpty());
        QVERIFY(page.basisText().contains(QStringLiteral("one run per side")));
        QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
        png.clear();
        buffer.seek(0);
        page.grab().save(&buffer, "PNG");
        kept::file(QStringLiteral("compare-page-plain.png"), png);
    }

    void runPageChartsHaveCopyAndSaveActions()
    {
        RunPage page;
        page.resize(1100, 600);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        page.setRunName(QStringLiteral("live run"));
        page.showSnapshot(m_a.snapshot);
        for (int c = 0; c < RunPage::ChartCount; ++c) {
            QCustomPlot *plot = page.chartPlot(static_cast<RunPage::Chart>(c));
            QCOMPARE(plot->contextMenuPolicy(), Qt::ActionsContextMenu);
            QStringList texts;
            for (const QAction *action : plot->actions())
                texts << action->text();
            QCOMPARE(texts,
                (QStringList { QStringLiteral("Copy chart"), QStringLiteral("Save chart as PNG..."),
                    QStringLiteral("Save chart as PDF..."), QStringLiteral("Save chart as SVG...") }));
        }
        // The save hook: what the dialog's path gets.
        const QString path = m_dir.filePath(QStringLiteral("runpage-spectrum.png"));
        QString error;
        QVERIFY2(page.saveChart(RunPage::SpectrumChart, ChartFormat::Png, path, &error), qPrintable(error));
        QImage image;
        QVERIFY(image.load(path, "PNG"));
        QCOMPARE(image.size(), QSize(2000, 1200));
        QVERIFY(distinctColors(image) > 40);
        QCOMPARE(image.pixelColor(2, 2), QColor(Qt::white)); // the light file theme, not the dark desktop's
        const QString svgPath = m_dir.filePath(QStringLiteral("runpage-histogram.svg"));
        QVERIFY2(page.saveChart(RunPage::HistogramChart, ChartFormat::Svg, svgPath, &error), qPrintable(error));
        QFile svg(svgPath);
        QVERIFY(svg.open(QIODevice::ReadOnly));
        QVERIFY(readSvg(svg.readAll()).texts.contains(QStringLiteral("Latency histogram: live run")));
        QVERIFY(!page.saveChart(
            RunPage::HistogramChart, ChartFormat::Pdf, m_dir.filePath(QStringLiteral("missing/x.pdf")), &error));

        // "Copy chart" puts the image on the clipboard.
        QApplication::clipboard()->clear();
        QAction *copy = page.histogramPlot()->findChild<QAction *>(QStringLiteral("copyChart"));
        QVERIFY(copy);
        copy->trigger();
        const QImage copied = QApplication::clipboard()->image();
        QCOMPARE(copied.size(), QSize(2000, 1200));
        QVERIFY(distinctColors(copied) > 40);
    }
};

QTEST_MAIN(TestReportCharts)
#include "tst_reportcharts.moc"
