#pragma once

// Chart conventions shared by the pages: latency axes are in milliseconds on a log scale.

#include "metrics/latencyhistogram.h"
#include "metrics/runsnapshot.h"

#include <QColor>
#include <QList>
#include <QObject>
#include <QPoint>
#include <QString>
#include <QVector>

#include <array>
#include <functional>

class QCPAxis;
class QCPGraph;
class QCPItemStraightLine;
class QCPItemText;
class QCPItemTracer;
class QCPRange;
class QCustomPlot;
class QPalette;

namespace rpcscope {

/// Ticks at 1-2-5 steps across the visible log range of a millisecond axis, labelled with adaptive units (us, ms, s).
void setLatencyTicks(QCPAxis *axis);

/// Ticks for a percentile axis in HdrHistogram's spelling: the axis value is 1/(1-p), ticks at 0%, 90%, 99%, 99.9%...
void setPercentileTicks(QCPAxis *axis);

/// "99.9%", "91.1%": a percentile with as many decimals as its distance from 100% needs.
QString formatPercentile(double percent);

/// "1.20-1.25 ms", "980 us-1.02 ms": a latency range with its unit written once when both ends share it.
QString formatNanosRange(double lowNs, double highNs);

/// Background, axes, grid, legend and text in the colors of @p palette, so charts follow dark themes.
void applyChartPalette(QCustomPlot *plot, const QPalette &palette);
/// One axis in @p palette's text colour with a dotted grid: what applyChartPalette does to each of a plot's axes.
void applyAxisPalette(QCPAxis *axis, const QPalette &palette);

/// Puts the legend in a row under the axis rect, so it never covers data; hidden until shown.
void placeLegendBelow(QCustomPlot *plot, int columns);

/// A latency percentile spectrum: percentiles (0..100) and their latencies (ns).
struct PercentileSpectrum {
    QVector<double> percentiles;
    QVector<double> nanos;
};

/**
 * The spectrum of @p histogram in one pass over its buckets: @p pointsPerDecade points per decade of 1/(1-p), from
 * p0 (the min) while fewer than one sample lies above, then the max as p100. Each value equals
 * LatencyHistogram::percentile() at that p, so read-outs agree with the summary table. At most a few hundred points
 * whatever the sample count.
 */
PercentileSpectrum percentileSpectrum(const LatencyHistogram &histogram, int pointsPerDecade = 20);

/// p50, p90, p99, p99.9: the percentiles the charts mark, each in the same color on every chart and in every file.
inline constexpr std::array<double, 4> kMarkerPercentiles { 50, 90, 99, 99.9 };
/// The color of kMarkerPercentiles[@p index]: p50 green, p90 orange, p99 red, p99.9 purple.
QColor markerColor(int index);
QColor errorColor();
QColor concurrencyColor();
/// An opaque blend of two colors (@p share of @p a): translucent wide pens make Qt stroke a series as one path.
QColor mixColors(const QColor &a, const QColor &b, double share);

/// The spectrum's x: 1/(1-p), so 90%, 99%, 99.9% are evenly spaced decades on a log axis.
double percentileKey(double percent);
/// Axis range (ms) over the positive values of a log-scale latency series, with some air above and below.
QCPRange latencyRange(double lowMs, double highMs, double air);

/// Log-spaced display bins of a histogram: edges in ms (one more than the bins), and per bin its calls.
struct HistogramBins {
    QVector<double> edgesMs; ///< bins + 1 edges
    QVector<double> counts; ///< bins + 1 values: the last is 0 and only closes the step outline
    double peak = 0;
};

/// The span the histogram chart shows for @p histogram, in ms: a little beyond its min and max.
std::pair<double, double> histogramSpanMs(const LatencyHistogram &histogram);

/**
 * Re-bins the fine HDR buckets of @p histogram into @p bins log-spaced bins from @p lowMs to @p highMs. Runs drawn
 * over each other use the same span, so their bins line up.
 */
HistogramBins histogramBins(const LatencyHistogram &histogram, double lowMs, double highMs, int bins = 60);

/// The spectrum as chart points: keys on the 1/(1-p) axis (the max just past the last percentile), values in ms.
struct SpectrumCurve {
    QVector<double> keys;
    QVector<double> ms;
};
SpectrumCurve spectrumCurve(const LatencyHistogram &histogram);

/// A run's time series as chart points. Latencies are NaN (a gap) in intervals without an OK call.
struct TimelineSeries {
    QVector<double> seconds; ///< interval ends
    std::array<QVector<double>, 3> latencyMs; ///< p50, p90, p99
    QVector<double> rates; ///< requests/s (or messages/s)
    QVector<double> errorRates; ///< errors/s
    QVector<double> concurrency;
    double lowMs = 0; ///< 0 when no interval has a latency
    double highMs = 0;
    double endSeconds = 0;
    double topRate = 0; ///< of requests/s and errors/s
    int topConcurrency = 0;
    bool hasErrors = false;
};
/// With @p messages, a streaming run's messages: their percentiles, and messages/s as the rate.
TimelineSeries timelineSeries(const QList<IntervalPoint> &timeline, bool messages = false);

// Axes of the four charts, the same on screen and in files: scales, labels with units, ticks that follow zooming.
void setUpHistogramAxes(QCustomPlot *plot, const QString &valueLabel);
void setUpSpectrumAxes(QCustomPlot *plot);
void setUpLatencyTimeAxes(QCustomPlot *plot);
void setUpThroughputAxes(QCustomPlot *plot);

/// The dashed p50/p90/p99/p99.9 lines of a histogram chart, each labelled with its value.
class HistogramMarkers {
public:
    explicit HistogramMarkers(QCustomPlot *plot);
    /// Moves the lines to @p histogram's percentiles; call after the x range is set (labels avoid its right edge).
    void update(const LatencyHistogram &histogram);
    void hide();

private:
    QCustomPlot *m_plot;
    QList<QCPItemStraightLine *> m_lines;
    QList<QCPItemText *> m_labels;
};

/// The p50/p90/p99/p99.9 dots on a spectrum curve, each labelled with its value under the curve.
class SpectrumMarkers {
public:
    explicit SpectrumMarkers(QCustomPlot *plot);
    /// Moves the dots to @p histogram's percentiles; call after the x range is set (labels avoid its right edge).
    void update(const LatencyHistogram &histogram);

private:
    QCustomPlot *m_plot;
    QList<QCPItemTracer *> m_dots;
    QList<QCPItemText *> m_labels;
};

/**
 * Keeps a legend placed below its plot (placeLegendBelow()) readable at any width: a name too long for its column is
 * cut in the middle ("A nightly-buil…protobuf 3.21") and whole again when there is room. The whole name stays in
 * the plottable's "fullName" property. Call fit() after adding plottables; a resize refits by itself.
 */
class LegendFitter : public QObject {
    Q_OBJECT
public:
    LegendFitter(QCustomPlot *plot, int columns);
    void fit();
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    QCustomPlot *m_plot;
    int m_columns;
};

/**
 * Hover read-out for a chart: the data point nearest the mouse (or, for a step graph, the step under it) is marked
 * and its exact value shown in a tooltip, written by the page's formatter (which knows the units).
 */
class ChartHover : public QObject {
    Q_OBJECT
public:
    /// Returns the text for point @p index of @p graph, or an empty string for no read-out there.
    using Formatter = std::function<QString(const QCPGraph *graph, int index)>;

    ChartHover(QCustomPlot *plot, Formatter formatter);

    /// The read-out shown now; empty when none.
    QString text() const { return m_text; }
    /// Hides the read-out.
    void hide();
    /// After the data changed: a read-out on screen is redone for the point now under the mouse.
    void refresh();

    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void showAt(QPoint pos);

    QCustomPlot *m_plot;
    QCPItemTracer *m_tracer;
    Formatter m_formatter;
    QString m_text;
    QPoint m_mouse;
};

} // namespace rpcscope
