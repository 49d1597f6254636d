#pragma once

#include "profile/profile.h"

#include <QPoint>
#include <QRect>
#include <QRegularExpression>
#include <QSize>
#include <QString>
#include <QWidget>

#include <vector>

class QLabel;
class QLineEdit;
class QPushButton;
class QScrollArea;

namespace rpcscope {

/**
 * A CPU profile's flame graph on screen, drawn as flameGraphSvg() draws it to a file: an icicle with the root on
 * top, each frame as wide as its total and coloured by the same rules (by name, or by change for a differential
 * tree), names cut to fit. Hovering a frame shows its numbers; a click zooms into it (it spans the width, its
 * callers stay above, faded), a click on the root, a double click, Escape or "Reset zoom" goes back. The search
 * field above takes a regular expression (case-insensitive; taken as plain text when it is not a valid one):
 * matching frames turn magenta and the share of all CPU they cover is shown beside it.
 *
 * The graph scrolls inside the widget when the tree is deeper than the widget is tall, under a search row that
 * stays; the sizeHint() asks for the whole depth (within reason).
 */
class FlameGraphView : public QWidget {
    Q_OBJECT
public:
    explicit FlameGraphView(QWidget *parent = nullptr);
    ~FlameGraphView() override;

    /// Shows @p root (buildFlameTree() or, with @p differential, buildDiffFlameTree()), unzoomed; the search stays.
    /// A tree without samples (a root total of 0) shows "No samples in the profile" instead.
    void setTree(FlameNode root, bool differential);
    /// What a differential tree's tooltips and legend call A and B ("A", "B" until set).
    void setSideNames(const QString &baseName, const QString &newName);
    /// No graph: @p message in its place ("No profile: run with --profile").
    void clear(const QString &message);

    const FlameNode &tree() const { return m_root; }
    bool isDifferential() const { return m_differential; }
    /// The text shown in place of a graph; empty while a graph is shown.
    QString message() const { return m_message; }

    /// Frames drawn now (those narrower than half a pixel are not, nor those a zoom hides).
    int visibleFrameCount() const;
    /// The function of the frame drawn at @p pos (in this widget's coordinates); empty for none.
    QString frameAt(QPoint pos) const;
    /// Where the frame of @p frameName is drawn, in this widget's coordinates (the first drawn, breadth-first); an
    /// empty rectangle when none is. Scrolled-away frames give their place outside the graph's viewport.
    QRect frameRect(const QString &frameName) const;

    /// The search, as in the field (setting it fills the field).
    QString searchText() const;
    void setSearchText(const QString &text);
    /// The share (0-1) of the root's total that the frames the search matches cover (0 without a search).
    double matchedShare() const { return m_matchedShare; }

    /// Zooms into the first frame named @p frameName (breadth-first from the root; the root itself resets).
    void zoomTo(const QString &frameName);
    void resetZoom();
    /// The frame zoomed into; empty when the whole graph shows.
    QString zoomedFrame() const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

Q_SIGNALS:
    /// After a zoom in or out: the zoomed frame's function, empty for the whole graph.
    void zoomChanged(const QString &frameName);

protected:
    void changeEvent(QEvent *event) override;

private:
    class Canvas;
    friend class Canvas;

    /// A frame as laid out for the canvas's width and the zoom.
    struct Frame {
        const FlameNode *node = nullptr;
        int parent = -1; ///< index of the caller's frame, -1 for the top one
        int depth = 0;
        QRectF rect; ///< in the canvas's coordinates
        bool caller = false; ///< above the zoomed frame: shown whole, faded
        bool matched = false; ///< the search matches its function
    };

    /// Lays the frames out again if the width, tree, zoom or search changed since.
    void ensureLayout() const;
    void invalidate();
    void layoutSubtree(const FlameNode &node, int parent, int depth, double x, double scale) const;
    /// The laid-out frame at @p pos in the canvas's coordinates; -1 for none.
    int frameIndexAt(QPointF pos) const;
    /// Zooms into frame @p index of the layout (its path from the root becomes the zoom); the root resets.
    void zoomToFrame(int index);
    void setZoomPath(std::vector<const FlameNode *> path);
    void searchChanged();
    void updateControls();
    /// The canvas's row height: the font's height with a little air, at least 16 px as in the SVG.
    int rowHeight() const;
    int canvasHeight() const;

    FlameNode m_root;
    bool m_differential = false;
    QString m_baseName = QStringLiteral("A");
    QString m_newName = QStringLiteral("B");
    QString m_message;
    int m_maxDepth = 0;
    double m_largestSelfChange = 0;
    std::vector<const FlameNode *> m_zoomPath; ///< root to the zoomed frame; empty when not zoomed
    QRegularExpression m_pattern;
    double m_matchedShare = 0;

    mutable std::vector<Frame> m_frames;
    mutable bool m_layoutValid = false;
    mutable int m_layoutWidth = -1;

    QLineEdit *m_search;
    QLabel *m_matched;
    QPushButton *m_reset;
    QLabel *m_legend;
    QScrollArea *m_scroll;
    Canvas *m_canvas;
};

} // namespace rpcscope
