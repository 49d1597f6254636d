#pragma once

#include "compare/comparison.h"
#include "qcp.h"
#include "replicatespread.h"

#include <QColor>
#include <QList>
#include <QString>

namespace rpcscope {

/**
 * The spread behind a verdict: for each tested latency (p50, p95, p99, mean) a panel of its own value axis, with
 * one dot per replicate (block, server process or run) of A and of B side by side and a short bar at each side's
 * geometric mean, the value the verdict compares. Two bars alone hide whether the blocks agree; the dots show it.
 * As many panels as the width holds, p50 first, then p95, mean, p99. One run per side has no replicates: the chart
 * then says so instead.
 */
class ReplicateChart : public QCustomPlot {
    Q_OBJECT
public:
    struct Side {
        QString name; ///< in the legend: "A before"
        QColor color; ///< the run's color on the page's other charts
    };

    explicit ReplicateChart(QWidget *parent = nullptr);

    void setComparison(const Comparison &comparison, const Side &a, const Side &b);
    /// Nothing compared: a blank chart.
    void clearComparison();
    /// Value axes titled by the metric alone ("p50 (ms)"), for a place that says what a dot is above the chart (the
    /// slide): its short panels cut "mean per client process (ms)". Call before setComparison().
    void setShortAxisTitles(bool shortTitles) { m_shortTitles = shortTitles; }

    /// The text shown in place of dots (one run per side); empty while dots are shown.
    QString message() const { return m_message; }
    /// Every metric with replicates, in the table's order; shown() those that fit.
    const QList<ReplicateSpread> &spreads() const { return m_spreads; }
    /// The panels drawn, in the table's order.
    const QList<ReplicateSpread> &shown() const { return m_shown; }

    /// "One run per side: no replicates to show (use A/B, or compare several runs)".
    static QString noReplicatesText();

protected:
    void changeEvent(QEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void leaveEvent(QEvent *event) override;

private:
    /// Redraws from the stored spreads in the widget's palette (after a new comparison or a theme change).
    void rebuild();
    /// Fills m_shown: as many spreads as the fit has panels for, the most telling first, in the table's order.
    void pickShown();
    /// One empty panel and, once something was compared, the text saying why there are no dots.
    void drawBlank(const QPalette &pal);
    /// Panel @p column for @p spread: its axis rect, the A and B axis, the change, the value axis, then its dots.
    void addPanel(const ReplicateSpread &spread, int column, bool first, const QPalette &pal);
    /// A's and B's dots and geometric mean bars in a panel, with their hover marks (@p first: their legend entries).
    void drawReplicates(const ReplicateSpread &spread, QCPAxisRect *rect, QCPAxis *x, QCPAxis *y, double scale,
        bool first, const QColor &text);
    /// How the panels and the legend fit the widget's width: panels, legend entries per row, and the longest run
    /// name the legend shows whole.
    struct Fit {
        int panels = 1;
        int legendColumns = 2;
        int nameChars = 32;
        bool operator==(const Fit &) const = default;
    };
    Fit fitFor(int width) const;

    /// Where a dot or a mean bar is, for the hover read-out.
    struct Mark {
        QCPAxis *keyAxis;
        QCPAxis *valueAxis;
        double key;
        double value;
        QString text;
    };

    QList<ReplicateSpread> m_spreads;
    QList<ReplicateSpread> m_shown;
    Side m_a;
    Side m_b;
    bool m_compared = false;
    bool m_shortTitles = false;
    bool m_singleRun = false;
    QString m_message;
    QCPLayoutGrid *m_panels = nullptr;
    QCPMarginGroup *m_margins = nullptr;
    QList<Mark> m_marks;
    Fit m_fit;
};

} // namespace rpcscope
