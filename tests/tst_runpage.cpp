// The run page's charts fed hand-made snapshots: what each tab plots, the hover read-outs, redraws only on screen.
#include "backgroundjob.h"
#include "charts.h"
#include "qcp.h"
#include "runpage.h"
#include "util/units.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFontMetrics>
#include <QMouseEvent>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTest>
#include <QThread>
#include <QToolTip>

#include <cmath>
#include <random>

using namespace rpcscope;

namespace {

constexpr int kIntervals = 60;

LatencyHistogram lognormalHistogram(uint64_t seed, double medianNs, double sigma, int samples)
{
    std::mt19937_64 rng(seed);
    std::lognormal_distribution<double> dist(std::log(medianNs), sigma);
    LatencyHistogram h;
    for (int i = 0; i < samples; ++i)
        h.record(static_cast<uint64_t>(dist(rng)));
    return h;
}

IntervalPoint interval(int i, bool openLoop)
{
    IntervalPoint p;
    p.endSeconds = i + 1;
    p.seconds = 1;
    if (i == 9) // an interval in which nothing completed: no latency to draw
        return p;
    p.calls = 1000 + 10 * static_cast<uint64_t>(i);
    p.errors = static_cast<uint64_t>(i % 7);
    p.p50 = 1'000'000 + static_cast<uint64_t>(i) * 1'000;
    p.p90 = 2'000'000 + static_cast<uint64_t>(i) * 5'000;
    p.p99 = 3'410'000 + static_cast<uint64_t>(i) * 10'000;
    p.concurrency = openLoop ? 5 + i % 3 : 0;
    return p;
}

RunSnapshot makeSnapshot(bool openLoop, int intervals, uint64_t generation, double medianNs = 2e6)
{
    RunSnapshot s;
    s.generation = generation;
    s.state = RunState::Running;
    s.latency = lognormalHistogram(generation, medianNs, 0.6, 100'000);
    s.statusCounts[CallStatus::Ok] = s.latency.count();
    if (openLoop) {
        s.openLoop = true;
        s.serviceLatency = lognormalHistogram(generation + 100, medianNs * 0.6, 0.4, 100'000);
        s.callsSent = s.latency.count();
        s.intendedRate = 1000;
        s.intendedCalls = static_cast<double>(s.latency.count());
    }
    for (int i = 0; i < intervals; ++i)
        s.timeline << interval(i, openLoop);
    s.elapsed = std::chrono::seconds(intervals);
    s.plannedDuration = std::chrono::seconds(2 * intervals);
    return s;
}

QList<double> keys(const QCPGraph *graph)
{
    QList<double> out;
    for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it)
        out << it->key;
    return out;
}

QList<double> values(const QCPGraph *graph)
{
    QList<double> out;
    for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it)
        out << it->value;
    return out;
}

// The index of the point at @p key (exactly, as the page computes it), or -1.
int indexOfKey(const QCPGraph *graph, double key)
{
    const QList<double> k = keys(graph);
    for (qsizetype i = 0; i < k.size(); ++i)
        if (std::abs(k[i] - key) <= 1e-9 * key)
            return static_cast<int>(i);
    return -1;
}

} // namespace

class TestRunPage : public QObject {
    Q_OBJECT

    std::unique_ptr<RunPage> m_page;

    void showTab(RunPage::Chart chart)
    {
        m_page->chartTabs()->setCurrentIndex(chart);
        // Pixel coordinates come from the last layout: replot now rather than wait for the queued one.
        m_page->chartPlot(chart)->replot();
    }

    QString hoverAt(RunPage::Chart chart, QPointF pixel)
    {
        QCustomPlot *plot = m_page->chartPlot(chart);
        QMouseEvent move(
            QEvent::MouseMove, pixel, plot->mapToGlobal(pixel), Qt::NoButton, Qt::NoButton, Qt::NoModifier);
        QCoreApplication::sendEvent(plot, &move);
        return m_page->chartHover(chart)->text();
    }

    QString hoverPoint(RunPage::Chart chart, const QCPGraph *graph, int index)
    {
        const auto point = graph->data()->at(index);
        return hoverAt(chart,
            QPointF(std::round(graph->keyAxis()->coordToPixel(point->key)),
                std::round(graph->valueAxis()->coordToPixel(point->value))));
    }

    void saveScreenshot(const QString &name)
    {
        // Written only on request (make the pictures, then look at them): tests leave no files behind otherwise.
        const QString dir = qEnvironmentVariable("RPCSCOPE_SCREENSHOTS");
        if (dir.isEmpty())
            return;
        QCoreApplication::processEvents(); // the queued replots
        const QString path = QDir(dir).filePath(QStringLiteral("runpage-%1.png").arg(name));
        QVERIFY(m_page->grab().save(path));
        qInfo("screenshot: %s", qPrintable(path));
    }

private Q_SLOTS:
    void onlyTheNewestBackgroundJobIsShown()
    {
        // LatestJob: a result asked for before the newest is dropped, even when it comes back last.
        QObject context;
        LatestJob jobs(&context);
        QList<int> shown;
        for (const int n : { 1, 2, 3 }) {
            jobs.run(
                [n] {
                    QThread::msleep(static_cast<unsigned long>(n == 1 ? 300 : 10)); // the first comes back last
                    return n;
                },
                [&shown](int result) { shown << result; });
        }
        QVERIFY(jobs.isBusy());
        QTRY_VERIFY_WITH_TIMEOUT(!jobs.isBusy(), 10000);
        QCOMPARE(shown, QList<int> { 3 });
        jobs.run([] { return 4; }, [&shown](int result) { shown << result; });
        jobs.cancel();
        QTRY_VERIFY_WITH_TIMEOUT(!jobs.isBusy(), 10000);
        QCOMPARE(shown, QList<int> { 3 }); // cancelled: dropped
        // waitForNewest() (the Compare page's accessors and exports): the newest result now, handed over once; its
        // watcher's finish later does not hand it over again, and a superseded job's never comes.
        jobs.run([] { return 6; }, [&shown](int result) { shown << result; });
        jobs.run(
            [] {
                QThread::msleep(200);
                return 7;
            },
            [&shown](int result) { shown << result; });
        QVERIFY(jobs.isPending());
        jobs.waitForNewest();
        QCOMPARE(shown, (QList<int> { 3, 7 }));
        QVERIFY(!jobs.isPending());
        QTRY_VERIFY_WITH_TIMEOUT(!jobs.isBusy(), 10000); // every watcher has finished: none handed a result over again
        QCOMPARE(shown, (QList<int> { 3, 7 }));
    }

    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void init()
    {
        m_page = std::make_unique<RunPage>();
        m_page->resize(1200, 640);
        m_page->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_page.get()));
    }

    void cleanup() { m_page.reset(); }

    void chartsAreTabsWithTheHistogramFirst()
    {
        QTabWidget *tabs = m_page->chartTabs();
        QCOMPARE(tabs->count(), 4);
        QCOMPARE(tabs->currentWidget(), m_page->histogramPlot());
        QCOMPARE(m_page->histogramPlot()->objectName(), QStringLiteral("histogramPlot"));
        QCOMPARE(m_page->spectrumPlot()->objectName(), QStringLiteral("spectrumPlot"));
        QCOMPARE(m_page->latencyTimePlot()->objectName(), QStringLiteral("latencyTimePlot"));
        QCOMPARE(m_page->throughputTimePlot()->objectName(), QStringLiteral("throughputTimePlot"));
        for (const char *name : { "histogramPlot", "spectrumPlot", "latencyTimePlot", "throughputTimePlot" })
            QVERIFY(m_page->findChild<QCustomPlot *>(QLatin1String(name)));
    }

    void onlyTheChartOnScreenIsRedrawn()
    {
        m_page->showSnapshot(makeSnapshot(true, kIntervals, 1));
        QVERIFY(m_page->histogramPlot()->graph(0)->dataCount() > 0);
        QCOMPARE(m_page->spectrumPlot()->graph(0)->dataCount(), 0);
        QCOMPARE(m_page->latencyTimePlot()->graph(0)->dataCount(), 0);
        QCOMPARE(m_page->throughputTimePlot()->graph(0)->dataCount(), 0);
        // Shown: drawn from the latest snapshot.
        m_page->chartTabs()->setCurrentIndex(RunPage::ThroughputChart);
        QCOMPARE(m_page->throughputTimePlot()->graph(0)->dataCount(), kIntervals);
        QCOMPARE(m_page->spectrumPlot()->graph(0)->dataCount(), 0);

        // A hidden page draws nothing, and catches up when shown.
        m_page->hide();
        m_page->clear();
        m_page->showSnapshot(makeSnapshot(false, 5, 2));
        QCOMPARE(m_page->throughputTimePlot()->graph(0)->dataCount(), kIntervals);
        m_page->show();
        QCOMPARE(m_page->throughputTimePlot()->graph(0)->dataCount(), 5);
    }

    void histogramBinsReadOut()
    {
        const RunSnapshot s = makeSnapshot(false, kIntervals, 3);
        m_page->showSnapshot(s);
        showTab(RunPage::HistogramChart);
        const QCPGraph *bars = m_page->histogramPlot()->graph(0);
        QCOMPARE(m_page->histogramPlot()->graphCount(), 1);
        QCOMPARE(bars->dataCount(), 61); // 60 display bins and the point that closes the last one
        double total = 0;
        for (double v : values(bars))
            total += v;
        QVERIFY(std::abs(total - static_cast<double>(s.latency.count())) < 1.0); // every call is in some bin

        // The tallest bin, hovered half-way across it.
        const QList<double> counts = values(bars);
        const auto tallest = static_cast<int>(std::max_element(counts.begin(), counts.end()) - counts.begin());
        const double from = bars->data()->at(tallest)->key;
        const double to = bars->data()->at(tallest + 1)->key;
        QCPAxis *x = m_page->histogramPlot()->xAxis;
        const double middle = (x->coordToPixel(from) + x->coordToPixel(to)) / 2;
        const double inside = m_page->histogramPlot()->yAxis->coordToPixel(counts[tallest] / 2);
        const QString text = hoverAt(RunPage::HistogramChart, QPointF(std::round(middle), inside));
        const QString expected
            = formatNanosRange(from * 1e6, to * 1e6) + QStringLiteral(": %1 calls").arg(qRound64(counts[tallest]));
        QCOMPARE(text, expected);
        QVERIFY2(text.contains(QStringLiteral(" ms: ")), qPrintable(text));
        QCOMPARE(QToolTip::text(), expected);
        saveScreenshot(QStringLiteral("histogram"));

        // Outside the axis rect: no read-out.
        QCOMPARE(hoverAt(RunPage::HistogramChart, QPointF(2, 2)), QString());
    }

    void latencyLabelsNeverOverlap()
    {
        m_page->showSnapshot(makeSnapshot(false, kIntervals, 3));
        showTab(RunPage::HistogramChart);
        QCustomPlot *plot = m_page->histogramPlot();
        QCPAxis *x = plot->xAxis;
        // How many labels, after checking that each one's text ends before the next one's begins.
        auto labelsFit = [&]() -> qsizetype {
            plot->replot();
            const QVector<double> ticks = x->tickVector();
            const QVector<QString> labels = x->tickVectorLabels();
            const QFontMetrics metrics(x->tickLabelFont());
            for (qsizetype i = 1; i < ticks.size(); ++i) {
                const double gap = x->coordToPixel(ticks[i]) - x->coordToPixel(ticks[i - 1]);
                const double needed
                    = (metrics.horizontalAdvance(labels[i - 1]) + metrics.horizontalAdvance(labels[i])) / 2.0;
                if (gap < needed) {
                    qWarning("labels %s and %s overlap: %.0f px apart, need %.0f", qPrintable(labels[i - 1]),
                        qPrintable(labels[i]), gap, needed);
                    return -1;
                }
            }
            return labels.size();
        };
        x->setRange(1e-5, 1e4); // 10 ns to 10 s: nine decades
        m_page->resize(1800, 640);
        QTRY_VERIFY(plot->width() > 900);
        const qsizetype wide = labelsFit();
        QVERIFY2(wide >= 8, qPrintable(QString::number(wide))); // every decade
        m_page->resize(720, 640); // the chart about a third as wide (its minimum is 300)
        QTRY_VERIFY(plot->width() < 500);
        const qsizetype narrow = labelsFit();
        QVERIFY(narrow >= 2);
        QVERIFY2(narrow < wide, qPrintable(QStringLiteral("%1 labels narrow, %2 wide").arg(narrow).arg(wide)));
        x->setRange(0.2, 0.9); // under a decade: finer steps, still apart
        QVERIFY(labelsFit() >= 3);
    }

    void percentileMarkerLabelsStayApartOnAShortChart()
    {
        // A tail where p99 and p99.9 are close, on a chart a third of its usual height: each percentile's label keeps
        // a row of its own, right of its line or, near the right edge, left of it.
        m_page->resize(900, 300);
        m_page->showSnapshot(makeSnapshot(false, kIntervals, 3));
        showTab(RunPage::HistogramChart);
        QCustomPlot *plot = m_page->histogramPlot();
        QTRY_VERIFY(plot->axisRect()->height() < 200);
        m_page->showSnapshot(makeSnapshot(false, kIntervals, 3)); // placed for this height
        plot->replot();
        QList<QRectF> rects;
        for (int i = 0; i < plot->itemCount(); ++i) {
            const auto *label = qobject_cast<const QCPItemText *>(plot->item(i));
            if (!label || !label->visible() || !label->text().startsWith(QStringLiteral(" p")))
                continue;
            rects << QRectF(label->topLeft->pixelPosition(), label->bottomRight->pixelPosition());
        }
        QCOMPARE(rects.size(), 4); // p50, p90, p99, p99.9
        saveScreenshot(QStringLiteral("histogram-short"));
        for (qsizetype i = 0; i < rects.size(); ++i)
            for (qsizetype j = i + 1; j < rects.size(); ++j)
                QVERIFY2(!rects[i].intersects(rects[j]),
                    qPrintable(QStringLiteral("labels %1 and %2 overlap").arg(i).arg(j)));
    }

    void spectrumFollowsTheHistogram()
    {
        const RunSnapshot s = makeSnapshot(false, kIntervals, 4);
        m_page->showSnapshot(s);
        showTab(RunPage::SpectrumChart);
        QCustomPlot *plot = m_page->spectrumPlot();
        QCOMPARE(plot->graphCount(), 1); // closed loop: one curve, no legend
        QVERIFY(!plot->legend->visible());
        const QCPGraph *curve = plot->graph(0);
        // Bounded by decades of the count, not by it: 20 a decade for 10^5 calls.
        QVERIFY2(
            curve->dataCount() >= 90 && curve->dataCount() <= 110, qPrintable(QString::number(curve->dataCount())));
        const QList<double> ys = values(curve);
        QCOMPARE(ys.first(), static_cast<double>(s.latency.min()) / 1e6);
        QCOMPARE(ys.last(), static_cast<double>(s.latency.max()) / 1e6);
        QVERIFY(ys.last() >= static_cast<double>(s.latency.percentile(99.99)) / 1e6);
        for (qsizetype i = 1; i < ys.size(); ++i)
            QVERIFY2(ys[i] >= ys[i - 1], qPrintable(QStringLiteral("point %1 falls").arg(i)));
        // The decades are the axis' 90%, 99%, 99.9%, 99.99%: the same values as the summary table's.
        for (double p : { 90.0, 99.0, 99.9, 99.99 }) {
            const int index = indexOfKey(curve, 100.0 / (100.0 - p));
            QVERIFY2(index > 0, qPrintable(QString::number(p)));
            QCOMPARE(curve->data()->at(index)->value, static_cast<double>(s.latency.percentile(p)) / 1e6);
        }
        // ...and every point is the histogram's percentile at its p.
        const PercentileSpectrum spectrum = percentileSpectrum(s.latency);
        QCOMPARE(spectrum.percentiles.size(), curve->dataCount());
        for (qsizetype i = 0; i < spectrum.percentiles.size(); ++i)
            QCOMPARE(spectrum.nanos[i], static_cast<double>(s.latency.percentile(spectrum.percentiles[i])));

        const int p999 = indexOfKey(curve, 1000);
        const QString text = hoverPoint(RunPage::SpectrumChart, curve, p999);
        QCOMPARE(text, QStringLiteral("99.9%: ") + formatNanos(static_cast<double>(s.latency.percentile(99.9))));
        QCOMPARE(hoverPoint(RunPage::SpectrumChart, curve, curve->dataCount() - 1),
            QStringLiteral("100% (max): ") + formatNanos(static_cast<double>(s.latency.max())));
        saveScreenshot(QStringLiteral("spectrum-closed-loop"));
    }

    void openLoopDrawsBothSpectra()
    {
        const RunSnapshot s = makeSnapshot(true, kIntervals, 5);
        m_page->showSnapshot(s);
        showTab(RunPage::SpectrumChart);
        QCustomPlot *plot = m_page->spectrumPlot();
        QCOMPARE(plot->graphCount(), 2);
        QVERIFY(plot->legend->visible());
        QCOMPARE(plot->graph(0)->name(), QStringLiteral("from intended send time (corrected)"));
        QCOMPARE(plot->graph(1)->name(), QStringLiteral("from actual send time (uncorrected)"));
        QCOMPARE(values(plot->graph(0)).last(), static_cast<double>(s.latency.max()) / 1e6);
        QCOMPARE(values(plot->graph(1)).last(), static_cast<double>(s.serviceLatency.max()) / 1e6);
        const int p99 = indexOfKey(plot->graph(1), 100);
        QCOMPARE(hoverPoint(RunPage::SpectrumChart, plot->graph(1), p99),
            QStringLiteral("99%: ") + formatNanos(static_cast<double>(s.serviceLatency.percentile(99)))
                + QStringLiteral(", from actual send time (uncorrected)"));
        saveScreenshot(QStringLiteral("spectrum-open-loop"));

        // The next run is a closed loop: back to one curve.
        m_page->clear();
        m_page->showSnapshot(makeSnapshot(false, kIntervals, 6));
        QCOMPARE(plot->graphCount(), 1);
        QVERIFY(!plot->legend->visible());
    }

    void latencyOverTime()
    {
        const RunSnapshot s = makeSnapshot(false, kIntervals, 7);
        m_page->showSnapshot(s);
        showTab(RunPage::LatencyTimeChart);
        QCustomPlot *plot = m_page->latencyTimePlot();
        QCOMPARE(plot->graphCount(), 3);
        QVERIFY(plot->legend->visible());
        QCOMPARE(plot->graph(0)->name(), QStringLiteral("p50"));
        QCOMPARE(plot->graph(2)->name(), QStringLiteral("p99"));
        for (int g = 0; g < 3; ++g)
            QCOMPARE(plot->graph(g)->dataCount(), kIntervals);
        const QList<double> xs = keys(plot->graph(2));
        const QList<double> p99 = values(plot->graph(2));
        for (int i = 0; i < kIntervals; ++i) {
            QCOMPARE(xs[i], s.timeline[i].endSeconds);
            if (s.timeline[i].p99)
                QCOMPARE(p99[i], static_cast<double>(s.timeline[i].p99) / 1e6);
            else
                QVERIFY(std::isnan(p99[i])); // a gap, not a zero on the log axis
        }
        QCOMPARE(values(plot->graph(0))[5], static_cast<double>(s.timeline[5].p50) / 1e6);
        // Same colors as the histogram's markers: p50 green, p90 orange, p99 red.
        QCOMPARE(plot->graph(0)->pen().color(), QColor(0x2e, 0x9d, 0x4f));
        QCOMPARE(plot->graph(2)->pen().color(), QColor(0xd0, 0x3b, 0x3b));

        QCOMPARE(hoverPoint(RunPage::LatencyTimeChart, plot->graph(2), 11),
            QStringLiteral("p99 at 12.0 s: ") + formatNanos(static_cast<double>(s.timeline[11].p99)));
        QCOMPARE(hoverPoint(RunPage::LatencyTimeChart, plot->graph(0), 11),
            QStringLiteral("p50 at 12.0 s: ") + formatNanos(static_cast<double>(s.timeline[11].p50)));
        saveScreenshot(QStringLiteral("latency-over-time"));

        // The next snapshot under a still mouse: the read-out follows the data instead of going stale.
        RunSnapshot later = s;
        later.timeline[11].p50 = 1'020'000;
        later.timeline << interval(kIntervals, false);
        m_page->showSnapshot(later);
        QCOMPARE(plot->graph(0)->dataCount(), kIntervals + 1);
        QCOMPARE(m_page->chartHover(RunPage::LatencyTimeChart)->text(), QStringLiteral("p50 at 12.0 s: 1.02 ms"));
    }

    void throughputOverTime()
    {
        const RunSnapshot s = makeSnapshot(true, kIntervals, 8);
        m_page->showSnapshot(s);
        showTab(RunPage::ThroughputChart);
        QCustomPlot *plot = m_page->throughputTimePlot();
        QCOMPARE(plot->graphCount(), 3); // OK calls/s, errors/s, calls in flight
        QCOMPARE(plot->graph(0)->name(), QStringLiteral("OK calls/s"));
        QCOMPARE(plot->graph(1)->name(), QStringLiteral("errors/s"));
        QCOMPARE(plot->graph(2)->name(), QStringLiteral("calls in flight"));
        QCOMPARE(plot->graph(2)->valueAxis(), plot->yAxis2);
        QVERIFY(plot->yAxis2->visible());
        const QList<double> rates = values(plot->graph(0));
        const QList<double> errors = values(plot->graph(1));
        const QList<double> inFlight = values(plot->graph(2));
        QCOMPARE(rates.size(), kIntervals);
        for (int i = 0; i < kIntervals; ++i) {
            const IntervalPoint &p = s.timeline[i];
            QCOMPARE(rates[i], static_cast<double>(p.calls - p.errors) / p.seconds); // failed calls are not throughput
            QCOMPARE(errors[i], static_cast<double>(p.errors) / p.seconds);
            QCOMPARE(inFlight[i], static_cast<double>(p.concurrency));
        }
        QCOMPARE(plot->graph(1)->pen().color(), QColor(0xd0, 0x3b, 0x3b));
        QCOMPARE(hoverPoint(RunPage::ThroughputChart, plot->graph(0), 11),
            QStringLiteral("OK calls/s at 12.0 s: 1106")); // 1110 calls, 4 of them failed
        saveScreenshot(QStringLiteral("throughput"));

        // A run that reports no concurrency has no such series, nor its axis.
        m_page->clear();
        m_page->showSnapshot(makeSnapshot(false, 20, 9));
        QCOMPARE(plot->graphCount(), 2);
        QVERIFY(!plot->yAxis2->visible());
        QCOMPARE(plot->graph(0)->dataCount(), 20);
    }

    void aRunWithNoOkCallIsNoMeasurement()
    {
        // 3000 calls, all UNAVAILABLE: every latency "-", no throughput, and a banner that names the error.
        RunSnapshot s;
        s.state = RunState::Finished;
        for (int i = 0; i < 3000; ++i)
            s.errorLatency.record(150'000);
        s.statusCounts[CallStatus::Unavailable] = 3000;
        s.errors << ErrorSample { CallStatus::Unavailable, QStringLiteral("Connection refused"), 3000 };
        s.elapsed = std::chrono::milliseconds(1079);
        m_page->showSnapshot(s);
        auto value = [this](const QString &metric) {
            QTableWidget *table = m_page->summaryTable();
            for (int row = 0; row < table->rowCount(); ++row) {
                if (table->item(row, 0)->text() == metric)
                    return table->item(row, 1)->text();
            }
            return QStringLiteral("(no row %1)").arg(metric);
        };
        for (const char *metric : { "Mean", "Std dev", "Min", "p50", "p99", "Max" })
            QCOMPARE(value(QLatin1String(metric)), QStringLiteral("-"));
        QCOMPARE(value(QStringLiteral("OK calls/s")), QStringLiteral("0.0"));
        QCOMPARE(value(QStringLiteral("Errors")), QStringLiteral("3000 (100.00%)"));
        QLabel *banner = m_page->failuresBanner();
        QVERIFY(!banner->isHidden());
        QCOMPARE(banner->text(),
            QStringLiteral("All 3000 calls failed: UNAVAILABLE: Connection refused. No latency or throughput was "
                           "measured."));

        // Some failed: the banner counts them, the latency is the OK calls'; a new run clears it.
        RunSnapshot some = makeSnapshot(false, 10, 3);
        for (int i = 0; i < 20; ++i)
            some.errorLatency.record(20'000'000);
        some.statusCounts[CallStatus::DeadlineExceeded] = 20;
        some.errors << ErrorSample { CallStatus::DeadlineExceeded, QStringLiteral("Deadline Exceeded"), 20 };
        m_page->showSnapshot(some);
        QVERIFY2(banner->text().startsWith(QStringLiteral("20 of %1 calls failed (").arg(some.callsCompleted())),
            qPrintable(banner->text()));
        QVERIFY2(banner->text().endsWith(QStringLiteral("DEADLINE_EXCEEDED: Deadline Exceeded (20)")),
            qPrintable(banner->text()));
        QVERIFY(value(QStringLiteral("p50")) != QStringLiteral("-"));
        m_page->clear();
        QVERIFY(banner->isHidden());
        m_page->showSnapshot(makeSnapshot(false, 10, 4));
        QVERIFY(banner->isHidden());
    }

    void aRunShorterThanAnIntervalSaysSoOverTime()
    {
        // A 0.1 s run has one interval of the 1 s time series: its time charts say so instead of drawing one dot.
        RunSnapshot s = makeSnapshot(false, 1, 5);
        s.state = RunState::Finished;
        s.elapsed = std::chrono::milliseconds(104);
        m_page->showSnapshot(s);
        for (const auto chart : { RunPage::LatencyTimeChart, RunPage::ThroughputChart }) {
            showTab(chart);
            QCustomPlot *plot
                = chart == RunPage::ThroughputChart ? m_page->throughputTimePlot() : m_page->latencyTimePlot();
            QCPItemText *note = nullptr;
            for (int i = 0; i < plot->itemCount(); ++i) {
                if (auto *text = qobject_cast<QCPItemText *>(plot->item(i)); text && text->visible())
                    note = text;
            }
            QVERIFY(note);
            QVERIFY2(note->text().contains(QStringLiteral("less than one interval")), qPrintable(note->text()));
        }
        // A run of several intervals draws its series, with no such note.
        m_page->clear();
        m_page->showSnapshot(makeSnapshot(false, kIntervals, 6));
        showTab(RunPage::ThroughputChart);
        for (int i = 0; i < m_page->throughputTimePlot()->itemCount(); ++i) {
            if (auto *text = qobject_cast<QCPItemText *>(m_page->throughputTimePlot()->item(i)))
                QVERIFY(!text->visible() || !text->text().contains(QStringLiteral("less than one interval")));
        }
    }

    void newRunReplacesTheData()
    {
        m_page->showSnapshot(makeSnapshot(true, kIntervals, 10, 2e6));
        for (int c = 0; c < RunPage::ChartCount; ++c)
            showTab(static_cast<RunPage::Chart>(c));
        const double oldMax = values(m_page->spectrumPlot()->graph(0)).last();

        m_page->clear();
        const RunSnapshot next = makeSnapshot(false, 20, 11, 50e6); // a slower service, a shorter run
        m_page->showSnapshot(next);
        for (int c = 0; c < RunPage::ChartCount; ++c)
            showTab(static_cast<RunPage::Chart>(c));
        QCOMPARE(m_page->spectrumPlot()->graphCount(), 1);
        const double newMax = values(m_page->spectrumPlot()->graph(0)).last();
        QVERIFY(newMax != oldMax);
        QCOMPARE(newMax, static_cast<double>(next.latency.max()) / 1e6);
        QCOMPARE(m_page->latencyTimePlot()->graph(2)->dataCount(), 20);
        QCOMPARE(m_page->throughputTimePlot()->graph(0)->dataCount(), 20);
        QCOMPARE(m_page->throughputTimePlot()->graphCount(), 2);
        // The histogram's bins now start near the new run's min.
        QVERIFY(keys(m_page->histogramPlot()->graph(0)).first() * 1e6 > static_cast<double>(next.latency.min()) * 0.9);

        // Cleared and nothing new: every chart empty.
        m_page->clear();
        for (int c = 0; c < RunPage::ChartCount; ++c) {
            showTab(static_cast<RunPage::Chart>(c));
            QCustomPlot *plot = m_page->chartPlot(static_cast<RunPage::Chart>(c));
            for (int g = 0; g < plot->graphCount(); ++g)
                QCOMPARE(plot->graph(g)->dataCount(), 0);
        }
    }

    void followsThePalette()
    {
        QPalette dark;
        dark.setColor(QPalette::Base, QColor(0x1e, 0x1e, 0x1e));
        dark.setColor(QPalette::Window, QColor(0x2b, 0x2b, 0x2b));
        dark.setColor(QPalette::Text, QColor(0xe0, 0xe0, 0xe0));
        dark.setColor(QPalette::WindowText, QColor(0xe0, 0xe0, 0xe0));
        dark.setColor(QPalette::Button, QColor(0x35, 0x35, 0x35));
        dark.setColor(QPalette::ButtonText, QColor(0xe0, 0xe0, 0xe0));
        dark.setColor(QPalette::AlternateBase, QColor(0x26, 0x26, 0x26));
        dark.setColor(QPalette::Mid, QColor(0x55, 0x55, 0x55));
        dark.setColor(QPalette::Highlight, QColor(0x3d, 0x8e, 0xe0));
        m_page->setPalette(dark);
        m_page->showSnapshot(makeSnapshot(true, kIntervals, 12));
        showTab(RunPage::SpectrumChart);
        for (int c = 0; c < RunPage::ChartCount; ++c) {
            QCustomPlot *plot = m_page->chartPlot(static_cast<RunPage::Chart>(c));
            plot->replot();
            QCOMPARE(plot->grab().toImage().pixelColor(1, 1), QColor(0x1e, 0x1e, 0x1e));
            QCOMPARE(plot->xAxis->tickLabelColor(), QColor(0xe0, 0xe0, 0xe0));
        }
        saveScreenshot(QStringLiteral("spectrum-dark"));
    }

    void showSnapshotCost()
    {
        // Measured and printed, never asserted: timed unit tests fail on loaded machines, not on slow code.
        RunSnapshot s = makeSnapshot(true, kIntervals, 13);
        // A full histogram: every bucket from 1 us to 10 s holds samples.
        for (int i = LatencyHistogram::bucketIndex(1'000); i <= LatencyHistogram::bucketIndex(10'000'000'000); ++i) {
            s.latency.record(LatencyHistogram::bucketLow(i));
            s.serviceLatency.record(LatencyHistogram::bucketLow(i));
        }
        s.statusCounts[CallStatus::Ok] = s.latency.count();
        // Jagged series, as a real open loop gives: the costly case for wide antialiased lines.
        std::mt19937_64 rng(14);
        std::uniform_int_distribution<uint64_t> jitter(0, 1'000'000);
        for (IntervalPoint &p : s.timeline) {
            p.p99 += 10 * jitter(rng);
            p.calls += jitter(rng) / 1'000;
            p.concurrency = static_cast<int>(jitter(rng) % 200);
        }
        qInfo("histogram: %zu non-empty buckets, %llu calls", s.latency.buckets().size(),
            static_cast<unsigned long long>(s.latency.count()));
        constexpr int kRounds = 50;
        for (int c = 0; c < RunPage::ChartCount; ++c) {
            const auto chart = static_cast<RunPage::Chart>(c);
            showTab(chart);
            qint64 snapshotNs = 0;
            qint64 replotNs = 0;
            double worstMs = 0;
            for (int round = 0; round < kRounds; ++round) {
                s.latency.record(2'000'000); // new data every time, so every snapshot redraws
                s.timeline.last().calls += 1;
                ++s.generation;
                QElapsedTimer timer;
                timer.start();
                m_page->showSnapshot(s);
                const qint64 ns = timer.nsecsElapsed();
                snapshotNs += ns;
                worstMs = std::max(worstMs, static_cast<double>(ns) / 1e6);
                timer.restart();
                m_page->chartPlot(chart)->replot(); // what the queued replot costs in the event loop
                replotNs += timer.nsecsElapsed();
            }
            qInfo("%-18s showSnapshot %.3f ms (worst %.3f ms), replot %.3f ms, per snapshot over %d",
                qPrintable(m_page->chartTabs()->tabText(c)), static_cast<double>(snapshotNs) / kRounds / 1e6, worstMs,
                static_cast<double>(replotNs) / kRounds / 1e6, kRounds);
        }
    }
};

QTEST_MAIN(TestRunPage)
#include "tst_runpage.moc"
