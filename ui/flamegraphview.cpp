#include "flamegraphview.h"

#include "charts.h"
#include "export/flamegraphsvg.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMouseEvent>
#include <QPainter>
#include <QPushButton>
#include <QScrollArea>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <deque>
#include <utility>

namespace rpcscope {

namespace {

// The canvas's geometry, in pixels: margins around the frames, the text's distance from a frame's edges.
constexpr int kMargin = 4;
constexpr int kTextPad = 3;
// As in the SVG: narrower frames are not drawn, rows at least this high.
constexpr double kMinFrameWidth = 0.5;
constexpr int kMinRowHeight = 16;
// The height the widget asks for stops at this many rows; deeper trees scroll.
constexpr int kMaxHintRows = 36;
// What the widget needs at least below the search row: a few rows of graph.
constexpr int kMinRows = 6;

QColor toColor(const FlameColor &colour)
{
    const std::array<int, 3> rgb = colour.rgb();
    return { rgb[0], rgb[1], rgb[2] };
}

// Black or white, whichever reads on @p fill (by FlameColor's rule, so text looks as in the SVG).
QColor textOn(const QColor &fill)
{
    const FlameColor hsl { std::max(0.0, static_cast<double>(fill.hslHueF())) * 360,
        static_cast<double>(fill.hslSaturationF()), static_cast<double>(fill.lightnessF()) };
    return hsl.darkText() ? QColor(Qt::black) : QColor(Qt::white);
}

// "12.3%", "0.42%".
QString sharePercent(double share)
{
    const double percent = 100 * share;
    return QString::number(percent, 'f', percent > 0 && percent < 1 ? 2 : 1) + u'%';
}

int treeDepth(const FlameNode &node)
{
    int depth = 0;
    for (const FlameNode &child : node.children)
        depth = std::max(depth, 1 + treeDepth(child));
    return depth;
}

} // namespace

/// The painted graph, inside the view's scroll area. The view keeps the tree, the layout and the zoom; the canvas
/// paints them and turns the mouse into zooms and tooltips.
class FlameGraphView::Canvas : public QWidget {
public:
    explicit Canvas(FlameGraphView *view) : QWidget(view), m_view(view)
    {
        setMouseTracking(true);
        setFocusPolicy(Qt::ClickFocus); // for Escape
        setAttribute(Qt::WA_OpaquePaintEvent);
    }

    QSize sizeHint() const override { return { 600, m_view->canvasHeight() }; }
    // Never squeezed below the tree's depth: the scroll area scrolls instead. Any width: names are cut to fit.
    QSize minimumSizeHint() const override { return { 160, m_view->canvasHeight() }; }

    int hovered = -1;

protected:
    void paintEvent(QPaintEvent *event) override
    {
        QPainter painter(this);
        const QPalette pal = palette();
        const QColor base = pal.color(QPalette::Base);
        painter.fillRect(event->rect(), base);
        if (!m_view->m_message.isEmpty()) {
            // A note, quieter than data, in the middle of what shows of the canvas.
            painter.setPen(mixColors(pal.color(QPalette::Text), base, 0.75));
            painter.drawText(visibleRegion().boundingRect().adjusted(12, 12, -12, -12),
                Qt::AlignCenter | Qt::TextWordWrap, m_view->m_message);
            return;
        }
        m_view->ensureLayout();
        const QFontMetrics metrics = fontMetrics();
        const QString ellipsis(QChar(0x2026));
        const QColor search = toColor(flameSearchColor());
        const std::vector<Frame> &frames = m_view->m_frames;
        for (int i = 0; i < static_cast<int>(frames.size()); ++i) {
            const Frame &frame = frames[i];
            if (!frame.rect.intersects(event->rect()))
                continue;
            QColor fill = frame.matched
                ? search
                : toColor(flameFrameColor(*frame.node, m_view->m_differential, m_view->m_largestSelfChange));
            if (frame.caller)
                fill = mixColors(fill, base, 0.55); // shown whole but not to scale: faded, as in the SVG
            // A pixel of background between a frame and the next one, where there is room: neighbours of like
            // colours stay apart.
            const QRectF box = frame.rect.width() >= 3 ? frame.rect.adjusted(0, 0, -1, 0) : frame.rect;
            painter.fillRect(box, fill);
            if (i == hovered) {
                painter.setPen(QPen(pal.color(QPalette::Text), 1));
                painter.setBrush(Qt::NoBrush);
                painter.drawRect(box.adjusted(0.5, 0.5, -0.5, -0.5));
            }
            const int room = static_cast<int>(frame.rect.width()) - 2 * kTextPad;
            if (room < metrics.horizontalAdvance(QStringLiteral("Wm")))
                continue;
            const QString shown = metrics.elidedText(flameDisplayName(frame.node->name), Qt::ElideRight, room);
            if (shown.isEmpty() || shown == ellipsis)
                continue;
            painter.setPen(textOn(fill));
            painter.drawText(frame.rect.adjusted(kTextPad, 0, -kTextPad, 0), Qt::AlignLeft | Qt::AlignVCenter, shown);
        }
    }

    void resizeEvent(QResizeEvent *event) override
    {
        QWidget::resizeEvent(event);
        m_view->m_layoutValid = false;
    }

    void mouseMoveEvent(QMouseEvent *event) override
    {
        const int index = m_view->frameIndexAt(event->position());
        if (index != hovered) {
            hovered = index;
            update();
        }
        if (index < 0) {
            QToolTip::hideText();
            return;
        }
        const Frame &frame = m_view->m_frames[index];
        QToolTip::showText(event->globalPosition().toPoint(),
            flameFrameText(*frame.node, m_view->m_root, m_view->m_differential, QStringLiteral("us per call"),
                m_view->m_baseName, m_view->m_newName),
            this, frame.rect.toAlignedRect());
    }

    void leaveEvent(QEvent *event) override
    {
        QWidget::leaveEvent(event);
        hovered = -1;
        update();
    }

    void mousePressEvent(QMouseEvent *event) override
    {
        m_pressed = event->button() == Qt::LeftButton ? m_view->frameIndexAt(event->position()) : -1;
    }

    void mouseReleaseEvent(QMouseEvent *event) override
    {
        const int pressed = std::exchange(m_pressed, -1);
        if (event->button() == Qt::LeftButton && pressed >= 0 && m_view->frameIndexAt(event->position()) == pressed)
            m_view->zoomToFrame(pressed);
    }

    void mouseDoubleClickEvent(QMouseEvent *event) override
    {
        if (event->button() == Qt::LeftButton)
            m_view->resetZoom();
    }

    void keyPressEvent(QKeyEvent *event) override
    {
        if (event->key() == Qt::Key_Escape && !m_view->m_zoomPath.empty()) {
            m_view->resetZoom();
            return;
        }
        QWidget::keyPressEvent(event);
    }

private:
    FlameGraphView *m_view;
    int m_pressed = -1;
};

FlameGraphView::FlameGraphView(QWidget *parent)
    : QWidget(parent)
    , m_search(new QLineEdit(this))
    , m_matched(new QLabel(this))
    , m_reset(new QPushButton(tr("Reset zoom"), this))
    , m_legend(new QLabel(this))
    , m_scroll(new QScrollArea(this))
    , m_canvas(new Canvas(this))
{
    setObjectName(QStringLiteral("flameGraphView"));
    m_search->setObjectName(QStringLiteral("flameSearch"));
    m_search->setPlaceholderText(tr("Search functions"));
    m_search->setClearButtonEnabled(true);
    m_search->setToolTip(tr("A regular expression, case-insensitive: matching frames turn magenta"));
    m_search->setMinimumWidth(120);
    m_matched->setObjectName(QStringLiteral("flameMatched"));
    m_reset->setObjectName(QStringLiteral("flameResetZoom"));
    m_reset->setToolTip(tr("Show the whole graph again (or double-click it, or press Escape)"));
    m_legend->setObjectName(QStringLiteral("flameLegend"));
    m_legend->setWordWrap(true);
    m_legend->setTextFormat(Qt::RichText);
    m_canvas->setObjectName(QStringLiteral("flameCanvas"));
    m_canvas->setAccessibleName(tr("Flame graph"));

    m_scroll->setObjectName(QStringLiteral("flameScroll"));
    m_scroll->setWidget(m_canvas);
    m_scroll->setWidgetResizable(true);
    m_scroll->setFrameShape(QFrame::NoFrame);
    m_scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff); // frames fit the width; only depth scrolls
    m_scroll->setBackgroundRole(QPalette::Base);

    auto *bar = new QHBoxLayout;
    bar->setContentsMargins(0, 0, 0, 0);
    bar->addWidget(m_search, 1);
    bar->addWidget(m_matched);
    bar->addStretch(0);
    bar->addWidget(m_reset);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(4);
    layout->addLayout(bar);
    layout->addWidget(m_legend);
    layout->addWidget(m_scroll, 1);

    connect(m_search, &QLineEdit::textChanged, this, &FlameGraphView::searchChanged);
    connect(m_reset, &QPushButton::clicked, this, &FlameGraphView::resetZoom);
    clear(tr("No profile"));
}

FlameGraphView::~FlameGraphView() = default;

void FlameGraphView::setTree(FlameNode root, bool differential)
{
    if (!(root.total > 0)) {
        clear(tr("No samples in the profile"));
        return;
    }
    m_root = std::move(root);
    m_differential = differential;
    m_message.clear();
    m_maxDepth = treeDepth(m_root);
    m_largestSelfChange = differential ? flameLargestSelfChange(m_root) : 0;
    const bool wasZoomed = !m_zoomPath.empty();
    m_zoomPath.clear();
    m_canvas->hovered = -1;
    m_canvas->updateGeometry();
    searchChanged(); // the new tree's matches; lays out and repaints
    updateControls();
    if (wasZoomed)
        Q_EMIT zoomChanged({});
}

void FlameGraphView::setSideNames(const QString &baseName, const QString &newName)
{
    m_baseName = baseName;
    m_newName = newName;
    updateControls();
}

void FlameGraphView::clear(const QString &message)
{
    m_root = FlameNode {};
    m_differential = false;
    m_message = message;
    m_maxDepth = 0;
    m_largestSelfChange = 0;
    const bool wasZoomed = !m_zoomPath.empty();
    m_zoomPath.clear();
    m_canvas->hovered = -1;
    m_canvas->updateGeometry();
    searchChanged();
    updateControls();
    if (wasZoomed)
        Q_EMIT zoomChanged({});
}

int FlameGraphView::visibleFrameCount() const
{
    if (!m_message.isEmpty())
        return 0;
    ensureLayout();
    return static_cast<int>(m_frames.size());
}

QString FlameGraphView::frameAt(QPoint pos) const
{
    // Only where the graph shows: the search row is not over scrolled-away frames.
    const QRect viewport(m_scroll->viewport()->mapTo(this, QPoint(0, 0)), m_scroll->viewport()->size());
    if (!viewport.contains(pos))
        return {};
    const int index = frameIndexAt(m_canvas->mapFrom(this, pos));
    return index >= 0 ? m_frames[index].node->name : QString();
}

QRect FlameGraphView::frameRect(const QString &frameName) const
{
    if (!m_message.isEmpty())
        return {};
    ensureLayout();
    // The layout is depth-first; the first drawn breadth-first is the shallowest, leftmost.
    const Frame *best = nullptr;
    for (const Frame &frame : m_frames) {
        if (frame.node->name != frameName)
            continue;
        if (!best || frame.depth < best->depth || (frame.depth == best->depth && frame.rect.x() < best->rect.x()))
            best = &frame;
    }
    if (!best)
        return {};
    const QRect rect = best->rect.toAlignedRect();
    return rect.translated(m_canvas->mapTo(this, QPoint(0, 0)));
}

QString FlameGraphView::searchText() const
{
    return m_search->text();
}

void FlameGraphView::setSearchText(const QString &text)
{
    m_search->setText(text);
}

void FlameGraphView::zoomTo(const QString &frameName)
{
    if (!m_message.isEmpty())
        return;
    // Breadth-first, remembering each node's caller to make the zoom's path.
    std::deque<std::pair<const FlameNode *, qsizetype>> queue;
    std::vector<std::pair<const FlameNode *, qsizetype>> seen;
    queue.emplace_back(&m_root, -1);
    while (!queue.empty()) {
        const auto [node, caller] = queue.front();
        queue.pop_front();
        seen.emplace_back(node, caller);
        const qsizetype index = static_cast<qsizetype>(seen.size()) - 1;
        if (node->name == frameName && node->total > 0) {
            std::vector<const FlameNode *> path;
            for (qsizetype i = index; i >= 0; i = seen[i].second)
                path.push_back(seen[i].first);
            std::reverse(path.begin(), path.end());
            setZoomPath(std::move(path));
            return;
        }
        for (const FlameNode &child : node->children)
            queue.emplace_back(&child, index);
    }
}

void FlameGraphView::resetZoom()
{
    setZoomPath({});
}

QString FlameGraphView::zoomedFrame() const
{
    return m_zoomPath.empty() ? QString() : m_zoomPath.back()->name;
}

int FlameGraphView::rowHeight() const
{
    return std::max(kMinRowHeight, m_canvas->fontMetrics().height() + 4);
}

int FlameGraphView::canvasHeight() const
{
    if (!m_message.isEmpty())
        return 4 * rowHeight();
    return 2 * kMargin + (m_maxDepth + 1) * rowHeight();
}

QSize FlameGraphView::sizeHint() const
{
    // The search row and legend as the layout has them, then the whole depth of the tree (up to kMaxHintRows).
    const int controls = QWidget::sizeHint().height() - m_scroll->sizeHint().height();
    const int graph = std::min(canvasHeight(), 2 * kMargin + kMaxHintRows * rowHeight());
    return { 800, controls + graph };
}

QSize FlameGraphView::minimumSizeHint() const
{
    const QSize least = QWidget::minimumSizeHint();
    const int controls = least.height() - m_scroll->minimumSizeHint().height();
    return { least.width(), controls + 2 * kMargin + kMinRows * rowHeight() };
}

void FlameGraphView::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange || event->type() == QEvent::PaletteChange) {
        invalidate(); // rows follow the font
        m_canvas->updateGeometry();
        updateControls(); // the legend's colours
    }
}

void FlameGraphView::invalidate()
{
    m_layoutValid = false;
    m_canvas->update();
}

void FlameGraphView::ensureLayout() const
{
    const int width = m_canvas->width();
    if (m_layoutValid && width == m_layoutWidth)
        return;
    m_layoutValid = true;
    m_layoutWidth = width;
    m_frames.clear();
    if (!m_message.isEmpty() || !(m_root.total > 0))
        return;
    const double graphWidth = std::max(1, width - 2 * kMargin);
    const int row = rowHeight();
    // The zoomed frame's callers, each across the whole width, then the zoomed frame (or the root) to scale.
    int parent = -1;
    const int callers = std::max(0, static_cast<int>(m_zoomPath.size()) - 1);
    for (int depth = 0; depth < callers; ++depth) {
        const FlameNode *node = m_zoomPath[depth];
        Frame frame;
        frame.node = node;
        frame.parent = parent;
        frame.depth = depth;
        frame.rect = QRectF(kMargin, kMargin + depth * row, graphWidth, row - 1);
        frame.caller = true;
        frame.matched = !m_pattern.pattern().isEmpty() && m_pattern.match(node->name).hasMatch();
        m_frames.push_back(frame);
        parent = static_cast<int>(m_frames.size()) - 1;
    }
    const FlameNode &top = m_zoomPath.empty() ? m_root : *m_zoomPath.back();
    if (top.total > 0)
        layoutSubtree(top, parent, callers, kMargin, graphWidth / top.total);
}

void FlameGraphView::layoutSubtree(const FlameNode &node, int parent, int depth, double x, double scale) const
{
    const int row = rowHeight();
    Frame frame;
    frame.node = &node;
    frame.parent = parent;
    frame.depth = depth;
    frame.rect = QRectF(x, kMargin + depth * row, node.total * scale, row - 1);
    frame.matched = !m_pattern.pattern().isEmpty() && m_pattern.match(node.name).hasMatch();
    m_frames.push_back(frame);
    const int index = static_cast<int>(m_frames.size()) - 1;
    double childX = x;
    for (const FlameNode &child : node.children) {
        const double width = child.total * scale;
        if (width >= kMinFrameWidth)
            layoutSubtree(child, index, depth + 1, childX, scale);
        childX += std::max(0.0, width);
    }
}

int FlameGraphView::frameIndexAt(QPointF pos) const
{
    if (!m_message.isEmpty())
        return -1;
    ensureLayout();
    const int row = rowHeight();
    if (pos.y() < kMargin)
        return -1;
    const int depth = static_cast<int>((pos.y() - kMargin) / row);
    for (int i = 0; i < static_cast<int>(m_frames.size()); ++i) {
        const Frame &frame = m_frames[i];
        // A frame and the 1 px gap under it are one row; a frame under a pixel wide still answers for its pixel.
        if (frame.depth == depth && pos.x() >= frame.rect.left()
            && pos.x() < std::max(frame.rect.right(), frame.rect.left() + 1))
            return i;
    }
    return -1;
}

void FlameGraphView::zoomToFrame(int index)
{
    std::vector<const FlameNode *> path;
    for (int i = index; i >= 0; i = m_frames[i].parent)
        path.push_back(m_frames[i].node);
    std::reverse(path.begin(), path.end());
    setZoomPath(std::move(path));
}

void FlameGraphView::setZoomPath(std::vector<const FlameNode *> path)
{
    if (path.size() <= 1)
        path.clear(); // the root is the whole graph
    if (path == m_zoomPath)
        return;
    m_zoomPath = std::move(path);
    m_canvas->hovered = -1;
    QToolTip::hideText();
    invalidate();
    updateControls();
    Q_EMIT zoomChanged(zoomedFrame());
}

void FlameGraphView::searchChanged()
{
    m_pattern = flameSearchPattern(m_search->text());
    m_matchedShare = flameMatchedShare(m_root, m_pattern);
    const bool searching = !m_pattern.pattern().isEmpty() && m_message.isEmpty();
    m_matched->setText(searching ? tr("Matched: %1").arg(sharePercent(m_matchedShare)) : QString());
    invalidate();
}

void FlameGraphView::updateControls()
{
    const bool shown = m_message.isEmpty();
    m_search->setEnabled(shown);
    m_reset->setEnabled(shown && !m_zoomPath.empty());
    m_legend->setVisible(shown && m_differential);
    if (m_differential) {
        // The legend's colour words in the deepest red and blue of the frames, as the SVG's.
        QString legend = flameDiffLegend(m_newName).toHtmlEscaped();
        const auto word = [](const QString &text, const FlameColor &colour) {
            return QStringLiteral("<b style=\"color:%1\">%2</b>:").arg(colour.name(), text);
        };
        legend.replace(QStringLiteral("red:"), word(QStringLiteral("red"), flameChangeColor(1, 1, 1)));
        legend.replace(QStringLiteral("blue:"), word(QStringLiteral("blue"), flameChangeColor(-1, 1, 1)));
        legend.replace(QStringLiteral("grey:"), QStringLiteral("<b>grey</b>:"));
        m_legend->setText(legend
            + tr(" (widths: %1; deeper colour: bigger change of the frame's self)").arg(m_newName.toHtmlEscaped()));
    }
}

} // namespace rpcscope
