#pragma once

// Flame graphs of CPU profiles as self-contained SVG documents, and what the GUI's flame graph shares with them:
// the frames' colours, the text describing a frame, and what a search matches.

#include "profile/profile.h"

#include <QRegularExpression>
#include <QString>

#include <array>

namespace rpcscope {

struct FlameGraphSvgOptions {
    QString title; ///< empty = "Flame graph" or "Differential flame graph"
    QString subtitle; ///< empty = the root's total (both sides' for a differential graph)
    int width = 1200; ///< in pixels (at least 200)
    /// The tree is differential (buildDiffFlameTree): widths are B's, colours say how each function changed.
    bool differential = false;
    QString unit = QStringLiteral("us per call"); ///< of the tree's totals, as written after a number
    QString baseName = QStringLiteral("A"); ///< what a differential graph calls its sides
    QString newName = QStringLiteral("B");
    /// With the script that zooms and searches, and its "Search" control; false for a picture (an <img> in a
    /// report runs no script, and a control that does nothing must not show).
    bool interactive = true;
};

/// A frame's fill: hue in degrees (0-360), saturation and lightness (0-1) as in HSL, with its sRGB value.
struct FlameColor {
    double hue = 0;
    double saturation = 0;
    double lightness = 0;

    /// Red, green, blue (0-255).
    std::array<int, 3> rgb() const;
    /// "#rrggbb".
    QString name() const;
    /// Whether black text reads on it (else white).
    bool darkText() const;
};

/// The colour of a plain flame graph's frame: a warm one (red to yellow-orange) picked from @p name alone, so a
/// function has the same colour wherever it appears, in every graph and on every run.
FlameColor flameNameColor(const QString &name);
/**
 * The colour of a differential flame graph's frame: red for @p change +1 (slower in B), blue for -1 (faster), grey
 * for 0 (within noise). Red and blue are paler for a small @p selfChange (B - A of the frame's self) and deeper as
 * its size nears @p largestSelfChange (flameLargestSelfChange() of the tree).
 */
FlameColor flameChangeColor(int change, double selfChange, double largestSelfChange);
/// The colour of frames a search matched: a magenta that neither palette uses.
FlameColor flameSearchColor();
/// The largest |self - baseSelf| of any frame under @p root (itself included).
double flameLargestSelfChange(const FlameNode &root);
/// The colour of @p frame in a graph of @p largestSelfChange: by name, or by change when @p differential.
FlameColor flameFrameColor(const FlameNode &frame, bool differential, double largestSelfChange);

/// "red: slower in B, blue: faster, grey: within noise": the legend of a differential graph.
QString flameDiffLegend(const QString &newName = QStringLiteral("B"));

/**
 * What a frame is, for its tooltip: the function on the first line, then its total and self in @p unit (1-2
 * decimals) with its share of @p root's total ("total 60.0 us per call (60.0% of all), self 20.0 us per call").
 * A differential frame gets A's and B's total and self and the change ("change: total +38.7 us per call, self
 * +38.7 us per call: slower in B"). @p frame must be @p root or one of its descendants (the root's change is not
 * judged: it is every function's).
 */
QString flameFrameText(const FlameNode &frame, const FlameNode &root, bool differential,
    const QString &unit = QStringLiteral("us per call"), const QString &baseName = QStringLiteral("A"),
    const QString &newName = QStringLiteral("B"));

/// The pattern a flame graph search for @p text uses: a case-insensitive regular expression, or @p text itself
/// (any characters) when it is not a valid one ("operator[" finds "operator[]"). An empty pattern, which
/// flameMatchedShare() takes as no search, when @p text is empty.
QRegularExpression flameSearchPattern(const QString &text);
/**
 * The share (0-1) of @p root's total in frames whose function matches @p pattern: a matched frame counts with
 * everything under it, once (matches under it add nothing). 0 for an empty or invalid pattern.
 */
double flameMatchedShare(const FlameNode &root, const QRegularExpression &pattern);

/// A frame name as shown: control characters (which XML cannot hold) become U+FFFD.
QString flameDisplayName(const QString &name);

/**
 * @p root as an SVG flame graph (UTF-8 when written out): an icicle, the root on top and callees under their
 * callers, each frame as wide as its total, 16 px a row. Names are cut to fit their frame ("parse_req…") and a
 * frame narrower than half a pixel is left out, with a note of how many were. Every frame has a <title> with its
 * numbers (flameFrameText()), shown as the tooltip in a browser.
 *
 * In a browser a small script makes it interactive: a click on a frame zooms into it (it spans the width, its
 * callers stay above, the rest hides), a click on the root or Escape goes back; "Search" at the top right asks for
 * a regular expression and colours matching frames (flameSearchColor()), with the share they cover. Without
 * scripts (as an <img> in a report, or in an image viewer) everything is shown as drawn.
 */
QString flameGraphSvg(const FlameNode &root, const FlameGraphSvgOptions &options = {});

} // namespace rpcscope
