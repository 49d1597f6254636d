#pragma once

// One A/B comparison as a 16:9 slide for a room: the verdict as the headline, the two latency distributions overlaid,
// the per-replicate dots behind the verdict, four key numbers side by side and what differs between the runs; when
// both runs were profiled, a second page with the differential flame graph and the top changes. Drawn with QPainter
// at 1920x1080 logical pixels, so the presentation view, the PNG and the PDF are the same picture.

#include "chartrender.h"
#include "compare/comparison.h"
#include "store/runrecord.h"

#include <QByteArray>
#include <QColor>
#include <QImage>
#include <QList>
#include <QString>
#include <QStringList>

#include <memory>

class QCPPainter;
class QCustomPlot;
class QSvgRenderer;

namespace rpcscope {

class ReplicateChart;

/// What a slide says, in words: worked out from a comparison alone, so it can be checked without drawing.
struct SlideText {
    QString headline; ///< "p50 +19% slower, 95% CI +17 .. +21%"
    QString subline; ///< the verdict in words and who is compared: "Regression beyond the 5% threshold: B ..."
    Verdict verdict = Verdict::NotTested; ///< colours the headline
    /// One key number for A and B and the change: "-" for a figure that was not measured (never 0).
    struct Figure {
        QString name; ///< "p50 latency"
        QString a; ///< "1.23 ms", or "-"
        QString b;
        QString change; ///< "+19%", or "-"
        int tone = 0; ///< -1 a tested change for the worse, +1 for the better, 0 untested or no change
        int direction = 0; ///< -1 the change is for the worse, +1 for the better, 0 none or unknown
        bool judged = false; ///< the figure has a verdict (p50, p99); throughput and CPU do not
        /// The verdict in a word, under the change: "regression", "not significant", "not judged".
        QString note;
        /// The change's colour: red or green by direction, strong when its verdict is significant beyond the
        /// threshold, faint when judged but not, grey when not judged or not measured.
        QColor changeColor() const;
    };
    QList<Figure> figures; ///< p50, p99, throughput, client CPU per call
    QStringList differences; ///< runDifferences(): "target: a -> b"
    QString runs; ///< when and where: "A 30 Nov 2026 10:00, B 30 Nov 2026 10:05, both on host"
    /// Where B's CPU went, when both runs were profiled (the server's; else the client's): "Where B's server time
    /// went: 52.3 -> 91.0 us CPU per call (+38.7, 95% CI ...)", and its top three changes in words (or that none
    /// changed beyond noise). Empty when not profiled.
    QString profileLead;
    QStringList profileChanges;
    /// The profile page's headline and its sub-line, the lead in two: "Where B's server time went" and
    /// "52.3 -> 91.0 us CPU per call (+38.7, 95% CI ...)". Empty when not profiled.
    QString profileTitle;
    QString profileSummary;
    QString nameA; ///< "A: <run name>"
    QString nameB;
};

/// The slide's headline from @p comparison: the p50 row (or the row that decided a regression or an improvement),
/// its change and its interval, e.g. "p50 +19% slower, 95% CI +17 .. +21%" or "No significant change in p50".
QString slideHeadline(const Comparison &comparison);

/// What a slide shows. The colours are those of the two runs on the Compare runs page.
struct SlideSpec {
    RunRecord baseline; ///< A (raw samples are not needed: leave them out)
    RunRecord candidate; ///< B
    Comparison comparison; ///< B against A
    QColor colorA;
    QColor colorB;
    /// A headline and its sub-line from elsewhere (a sequential, anytime-valid verdict): they replace the ones
    /// worked out from the comparison; empty = worked out.
    QString headline;
    QString subline;
    ChartKind distribution = ChartKind::Histogram; ///< Histogram or Spectrum
};

/// An A/B judged pair by pair (SequentialAb): @p verdictLine ("regression after 11 pairs: p50 ...") becomes the
/// headline, and the sub-line says how it was judged.
void leadWithSequentialVerdict(SlideSpec *spec, const QString &verdictLine);

/// The slide's colours by default: ComparePage::runColor(0) and (1).
SlideSpec makeSlideSpec(const RunRecord &baseline, const RunRecord &candidate, const Comparison &comparison);

enum class SlideFormat { Png, Pdf };

/**
 * A slide, ready to draw: its words (text()) and its two charts, built once. Needs a QApplication (the charts are
 * QCustomPlot widgets, never shown). One page, the verdict; two when both runs have a CPU profile (the server's, else
 * the client's): the second is where B's time went, as a differential flame graph with the top three changes.
 */
class Slide {
public:
    static constexpr int kWidth = 1920;
    static constexpr int kHeight = 1080;

    explicit Slide(SlideSpec spec);
    ~Slide();
    Slide(const Slide &) = delete;
    Slide &operator=(const Slide &) = delete;

    const SlideSpec &spec() const { return m_spec; }
    const SlideText &text() const { return m_text; }
    /// The two latency distributions overlaid: A's graph first, then B's.
    QCustomPlot *distributionPlot() const { return m_distribution.get(); }
    /// The dots of the replicates; no panels when there are none (one run per side): the distribution then takes
    /// the width.
    ReplicateChart *replicateChart() const { return m_replicates.get(); }
    /// Whether the slide shows the dots (the comparison has replicates).
    bool showsReplicates() const;

    /// 1, or 2 with the profile page.
    int pageCount() const;

    /// Draws @p page of the slide into 0,0 .. kWidth,kHeight of @p painter's coordinates (scale the painter to fit).
    void paint(QCPPainter *painter, int page = 0) const;
    /// @p page as kWidth x kHeight logical pixels at @p scale device pixels each (2: 3840x2160, crisp on a 4K
    /// projector).
    QImage toImage(double scale = 1.0, int page = 0) const;
    /// Every page, 16:9 (13.33 x 7.5 in, a widescreen slide), vector; empty with @p error on failure.
    QByteArray toPdf(QString *error) const;
    /// PNG bytes of toImage(@p scale, @p page); empty with @p error on failure.
    QByteArray toPng(double scale, QString *error, int page = 0) const;
    /**
     * Writes the slide to @p path whole or not at all (util/outputfile.h); false with @p error naming the path. A PDF
     * holds every page; a PNG is the first page, and the profile page goes beside it to profilePagePath(@p path),
     * both drawn before either is written.
     */
    bool save(const QString &path, SlideFormat format, double scale, QString *error) const;
    /// Where a PNG slide's profile page is written: "deck/ab.png" -> "deck/ab-profile.png".
    static QString profilePagePath(const QString &path);

private:
    struct Layout;

    SlideSpec m_spec;
    SlideText m_text;
    std::unique_ptr<Layout> m_layout;
    std::unique_ptr<QCustomPlot> m_distribution;
    std::unique_ptr<ReplicateChart> m_replicates;
    std::unique_ptr<QSvgRenderer> m_flameGraph; ///< the profile page's differential flame graph; null: no such page

    void layOutProfilePage();
    void paintProfilePage(QCPPainter *painter) const;
};

/// The words of a slide of @p spec (what Slide::text() returns).
SlideText slideText(const SlideSpec &spec);

} // namespace rpcscope
