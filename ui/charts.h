#pragma once

// Chart conventions shared by the pages: latency axes are in milliseconds on a log scale.

#include "metrics/latencyhistogram.h"

#include <QObject>
#include <QPoint>
#include <QString>
#include <QVector>

#include <functional>

class QCPAxis;
class QCPGraph;
class QCPItemTracer;
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

/// Puts the legend in a row under the axis rect, so it never covers data; hidden until shown.
void placeLegendBelow(QCustomPlot *plot, int columns);

/// A latency percentile spectrum: percentiles (0..100) and their latencies (ns).
struct PercentileSpectrum
{
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

/**
 * Hover read-out for a chart: the data point nearest the mouse (or, for a step graph, the step under it) is marked
 * and its exact value shown in a tooltip, written by the page's formatter (which knows the units).
 */
class ChartHover : public QObject
{
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
