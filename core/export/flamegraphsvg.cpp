#include "flamegraphsvg.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace rpcscope {

namespace {

// The SVG's geometry, in pixels: margins, a frame row (15 px of frame, 1 px of gap), the frames' text.
constexpr double kPad = 10;
constexpr double kRow = 16;
constexpr double kFontSize = 12;
// An average character of the frames' font at kFontSize, a little generous for Verdana (the widest of the list):
// core has no font metrics, so a name is cut by its length. Code names are full of narrow ':' and '_', so this
// errs on the short side rather than running text over the frame's edge.
constexpr double kCharWidth = 7.0;
constexpr double kTextPad = 3; // between a frame's edges and its text
constexpr double kMinFrameWidth = 0.5; // narrower frames are left out
constexpr double kTitleSize = 17;
constexpr double kTitleCharWidth = 10.0;

const QString kFonts = QStringLiteral("Verdana, 'DejaVu Sans', 'Helvetica Neue', Arial, sans-serif");
const QString kTextColor = QStringLiteral("#222222");
const QString kQuietColor = QStringLiteral("#555555");

// An sRGB channel (0-1) as linear light, for the luminance that decides the text colour.
double linear(double channel)
{
    return channel <= 0.04045 ? channel / 12.92 : std::pow((channel + 0.055) / 1.055, 2.4);
}

// FNV-1a over the UTF-16 units, then MurmurHash3's finalizer so that names differing in one letter get unrelated
// colours. Not qHash: its seed changes from run to run, and colours must not.
quint32 nameHash(const QString &name)
{
    quint32 hash = 2166136261u;
    for (const QChar c : name) {
        hash ^= c.unicode();
        hash *= 16777619u;
    }
    hash ^= hash >> 16;
    hash *= 0x85ebca6bu;
    hash ^= hash >> 13;
    hash *= 0xc2b2ae35u;
    hash ^= hash >> 16;
    return hash;
}

// Ten bits of @p hash from @p shift on, as 0-1.
double hashFraction(quint32 hash, int shift)
{
    return static_cast<double>((hash >> shift) & 0x3ffu) / 1023.0;
}

// 2 decimals under 10, else 1: "0.42", "38.7", "1234.5".
QString amount(double value)
{
    return QString::number(value, 'f', std::abs(value) < 10 ? 2 : 1);
}

// A change with its sign: "+38.7", "-0.42", "0.00".
QString signedAmount(double value)
{
    if (std::abs(value) < 0.005)
        return QStringLiteral("0.00");
    return (value > 0 ? QStringLiteral("+") : QStringLiteral("-")) + amount(std::abs(value));
}

// "60.0%", "0.42%".
QString percent(double part, double whole)
{
    const double share = whole > 0 ? 100 * part / whole : 0;
    return QString::number(share, 'f', share < 1 ? 2 : 1) + u'%';
}

QString coordinate(double value)
{
    return QString::number(value, 'f', 2);
}

// @p text with what XML 1.0 cannot hold replaced (control characters, unpaired surrogates, U+FFFE and U+FFFF),
// keeping line breaks when @p keepNewlines.
QString sanitized(const QString &text, bool keepNewlines)
{
    QString out;
    out.reserve(text.size());
    for (qsizetype i = 0; i < text.size(); ++i) {
        const QChar c = text.at(i);
        const char16_t u = c.unicode();
        if (c.isHighSurrogate() && i + 1 < text.size() && text.at(i + 1).isLowSurrogate()) {
            out += c;
            out += text.at(++i);
        } else if (c.isSurrogate() || u == 0xfffe || u == 0xffff || (u < 0x20 && !(keepNewlines && u == u'\n'))) {
            out += QChar(0xfffd);
        } else {
            out += c;
        }
    }
    return out;
}

// Text for an element or an attribute value (either quote).
QString xml(const QString &text, bool keepNewlines = false)
{
    const QString clean = sanitized(text, keepNewlines);
    QString out;
    out.reserve(clean.size() + 16);
    for (const QChar c : clean) {
        switch (c.unicode()) {
        case u'&':
            out += QStringLiteral("&amp;");
            break;
        case u'<':
            out += QStringLiteral("&lt;");
            break;
        case u'>':
            out += QStringLiteral("&gt;");
            break;
        case u'"':
            out += QStringLiteral("&quot;");
            break;
        case u'\'':
            out += QStringLiteral("&apos;");
            break;
        default:
            out += c;
        }
    }
    return out;
}

// @p name cut to what @p width holds at @p charWidth a character, ending in "…"; empty when not even three
// characters fit. The script's fit() does the same on zoom.
QString fitText(const QString &name, double width, double charWidth)
{
    const double room = std::floor((width - 2 * kTextPad) / charWidth);
    if (room >= static_cast<double>(name.size()))
        return name;
    if (room < 3)
        return {};
    qsizetype keep = static_cast<qsizetype>(room) - 1;
    if (keep > 0 && name.at(keep - 1).isHighSurrogate())
        --keep; // never half a character
    return name.left(keep) + QChar(0x2026);
}

qsizetype subtreeSize(const FlameNode &node)
{
    qsizetype size = 1;
    for (const FlameNode &child : node.children)
        size += subtreeSize(child);
    return size;
}

// A frame as drawn.
struct Placed {
    const FlameNode *node;
    int depth;
    double x;
    double width;
};

struct Layout {
    std::vector<Placed> frames;
    qsizetype small = 0; ///< frames narrower than kMinFrameWidth (with everything under them)
    qsizetype onlyInBase = 0; ///< differential: frames with no B time (only in A)
    int maxDepth = 0;
};

void place(const FlameNode &node, int depth, double x, double scale, bool differential, Layout *layout)
{
    layout->frames.push_back({ &node, depth, x, node.total * scale });
    layout->maxDepth = std::max(layout->maxDepth, depth);
    double childX = x;
    for (const FlameNode &child : node.children) {
        const double width = std::max(0.0, child.total * scale);
        if (child.total <= 0 && differential && child.baseTotal > 0)
            layout->onlyInBase += subtreeSize(child);
        else if (width < kMinFrameWidth)
            layout->small += subtreeSize(child);
        else
            place(child, depth + 1, childX, scale, differential, layout);
        childX += width;
    }
}

// The click-to-zoom and search of the SVG. Runs where it is: standalone, or inlined in an HTML page (then it finds
// its own <svg> through document.currentScript, and its classes are prefixed so the page's are left alone).
// Everything is drawn before it runs; it only moves and hides frames on a click.
const char kScript[] = R"JS(
(function () {
  'use strict';
  var PAD = @PAD@, GRAPH_W = @GRAPH_W@, CHAR_W = @CHAR_W@, TEXT_PAD = @TEXT_PAD@, EPS = 0.02;
  var script = document.currentScript;
  var svg = (script && script.ownerSVGElement) || document.documentElement;
  var frames = [];
  var groups = svg.querySelectorAll('g.flame-frame');
  for (var i = 0; i < groups.length; ++i) {
    var g = groups[i], rect = g.querySelector('rect');
    frames.push({
      g: g, rect: rect, text: g.querySelector('text'),
      depth: +g.getAttribute('data-depth'),
      x: +rect.getAttribute('x'), w: +rect.getAttribute('width'),
      name: g.querySelector('title').textContent.split('\n')[0]
    });
    g.flameIndex = i;
  }

  function fit(name, w) {
    var room = Math.floor((w - 2 * TEXT_PAD) / CHAR_W);
    if (room >= name.length) return name;
    if (room < 3) return '';
    return name.slice(0, room - 1) + '\u2026';
  }

  function place(f, x, w) {
    f.rect.setAttribute('x', x.toFixed(2));
    f.rect.setAttribute('width', w.toFixed(2));
    f.text.setAttribute('x', (x + TEXT_PAD).toFixed(2));
    f.text.textContent = fit(f.name, w);
  }

  // Zooms into frame z (null: the whole graph): z spans the width, its callers stay above it, the rest hides.
  function zoom(z) {
    var x0 = z ? z.x : PAD, w0 = z ? z.w : GRAPH_W, d0 = z ? z.depth : 0, scale = GRAPH_W / w0;
    frames.forEach(function (f) {
      var cl = f.g.classList;
      var inside = f.x >= x0 - EPS && f.x + f.w <= x0 + w0 + EPS;
      var around = f.x <= x0 + EPS && f.x + f.w >= x0 + w0 - EPS;
      if (f.depth < d0 && around) {
        place(f, PAD, GRAPH_W);
        cl.add('flame-caller');
        cl.remove('flame-hidden');
      } else if (f.depth >= d0 && inside) {
        place(f, PAD + (f.x - x0) * scale, f.w * scale);
        cl.remove('flame-caller');
        cl.remove('flame-hidden');
      } else {
        cl.add('flame-hidden');
      }
    });
  }

  // The frame under the mouse outlined (by a class, not :hover, which some renderers apply to everything).
  svg.addEventListener('mouseover', function (e) {
    var g = e.target.closest ? e.target.closest('g.flame-frame') : null;
    if (g) g.classList.add('flame-hover');
  });
  svg.addEventListener('mouseout', function (e) {
    var g = e.target.closest ? e.target.closest('g.flame-frame') : null;
    if (g) g.classList.remove('flame-hover');
  });

  svg.addEventListener('click', function (e) {
    var g = e.target.closest ? e.target.closest('g.flame-frame') : null;
    if (!g) return;
    var f = frames[g.flameIndex];
    zoom(f.depth > 0 ? f : null);
  });
  document.addEventListener('keydown', function (e) {
    if (e.key === 'Escape') zoom(null);
  });

  var searchText = svg.querySelector('.flame-search'), matchedText = svg.querySelector('.flame-matched');
  var searching = false;

  function pattern(term) {
    try {
      return new RegExp(term, 'i');
    } catch (err) {
      return new RegExp(term.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i');
    }
  }

  // Colours the frames whose function matches term (none for ''), and says what share of the graph they cover:
  // the union of their original spans, so that a match under a match counts once.
  function search(term) {
    var re = term ? pattern(term) : null, spans = [];
    frames.forEach(function (f) {
      var hit = !!re && re.test(f.name);
      f.g.classList.toggle('flame-match', hit);
      if (hit) spans.push([f.x, f.x + f.w]);
    });
    searching = !!re;
    searchText.textContent = searching ? 'Reset search' : 'Search';
    if (!searching) {
      matchedText.textContent = '';
      return;
    }
    spans.sort(function (a, b) { return a[0] - b[0]; });
    var covered = 0, end = -Infinity;
    spans.forEach(function (s) {
      if (s[1] > end) {
        covered += s[1] - Math.max(s[0], end);
        end = s[1];
      }
    });
    matchedText.textContent = 'Matched: ' + (100 * covered / GRAPH_W).toFixed(1) + '%';
  }

  searchText.addEventListener('click', function (e) {
    e.stopPropagation();
    if (searching) {
      search('');
      return;
    }
    var term = window.prompt('Search functions (regular expression)', '');
    if (term) search(term);
  });
})();
)JS";

const char kStyle[] = R"CSS(
.flame-frame { cursor: pointer; }
.flame-hover rect { stroke: #222222; stroke-width: 1; }
.flame-caller rect { opacity: 0.6; }
.flame-hidden { display: none; }
.flame-match rect { fill: @MATCH@; }
.flame-search { cursor: pointer; }
)CSS";

} // namespace

std::array<int, 3> FlameColor::rgb() const
{
    // HSL to RGB: chroma from saturation and lightness, then the hue's sector.
    const double l = std::clamp(lightness, 0.0, 1.0);
    const double s = std::clamp(saturation, 0.0, 1.0);
    const double h = std::fmod(std::fmod(hue, 360.0) + 360.0, 360.0) / 60.0;
    const double chroma = (1 - std::abs(2 * l - 1)) * s;
    const double x = chroma * (1 - std::abs(std::fmod(h, 2.0) - 1));
    double r = 0, g = 0, b = 0;
    switch (static_cast<int>(h)) {
    case 0:
        r = chroma, g = x;
        break;
    case 1:
        r = x, g = chroma;
        break;
    case 2:
        g = chroma, b = x;
        break;
    case 3:
        g = x, b = chroma;
        break;
    case 4:
        r = x, b = chroma;
        break;
    default:
        r = chroma, b = x;
        break;
    }
    const double m = l - chroma / 2;
    const auto channel = [m](double v) { return std::clamp(static_cast<int>(std::lround((v + m) * 255)), 0, 255); };
    return { channel(r), channel(g), channel(b) };
}

QString FlameColor::name() const
{
    const std::array<int, 3> c = rgb();
    QString out = QStringLiteral("#");
    for (const int v : c)
        out += QString::number(v, 16).rightJustified(2, u'0');
    return out;
}

bool FlameColor::darkText() const
{
    // Black text where it contrasts more than white would: WCAG's contrast ratios cross at a luminance of ~0.18.
    const std::array<int, 3> c = rgb();
    const double luminance
        = 0.2126 * linear(c[0] / 255.0) + 0.7152 * linear(c[1] / 255.0) + 0.0722 * linear(c[2] / 255.0);
    return luminance > 0.179;
}

FlameColor flameNameColor(const QString &name)
{
    const quint32 hash = nameHash(name);
    return { 6 + 46 * hashFraction(hash, 0), 0.72 + 0.2 * hashFraction(hash, 10), 0.56 + 0.1 * hashFraction(hash, 20) };
}

FlameColor flameChangeColor(int change, double selfChange, double largestSelfChange)
{
    if (change == 0)
        return { 0, 0, 0.8 }; // a light grey
    const double depth = largestSelfChange > 0 ? std::clamp(std::abs(selfChange) / largestSelfChange, 0.0, 1.0) : 0.0;
    return { change > 0 ? 0.0 : 214.0, 0.35 + 0.55 * depth, 0.84 - 0.26 * depth };
}

FlameColor flameSearchColor()
{
    return { 300, 0.7, 0.57 };
}

double flameLargestSelfChange(const FlameNode &root)
{
    double largest = std::abs(root.self - root.baseSelf);
    for (const FlameNode &child : root.children)
        largest = std::max(largest, flameLargestSelfChange(child));
    return largest;
}

FlameColor flameFrameColor(const FlameNode &frame, bool differential, double largestSelfChange)
{
    return differential ? flameChangeColor(frame.change, frame.self - frame.baseSelf, largestSelfChange)
                        : flameNameColor(frame.name);
}

QString flameDiffLegend(const QString &newName)
{
    return QStringLiteral("red: slower in %1, blue: faster, grey: within noise").arg(newName);
}

QString flameFrameText(const FlameNode &frame, const FlameNode &root, bool differential, const QString &unit,
    const QString &baseName, const QString &newName)
{
    const QString name = flameDisplayName(frame.name);
    if (!differential) {
        return name + u'\n'
            + QStringLiteral("total %1 %2 (%3 of all), self %4 %2")
                  .arg(amount(frame.total), unit, percent(frame.total, root.total), amount(frame.self));
    }
    QString text = name + u'\n'
        + QStringLiteral("%1: total %2, self %3 %4\n")
              .arg(baseName, amount(frame.baseTotal), amount(frame.baseSelf), unit)
        + QStringLiteral("%1: total %2, self %3 %4 (%5 of all)\n")
              .arg(newName, amount(frame.total), amount(frame.self), unit, percent(frame.total, root.total))
        + QStringLiteral("change: total %1 %3, self %2 %3")
              .arg(signedAmount(frame.total - frame.baseTotal), signedAmount(frame.self - frame.baseSelf), unit);
    if (&frame != &root) {
        if (frame.change > 0)
            text += QStringLiteral(": slower in %1").arg(newName);
        else if (frame.change < 0)
            text += QStringLiteral(": faster in %1").arg(newName);
        else
            text += QStringLiteral(": within noise");
    }
    return text;
}

QRegularExpression flameSearchPattern(const QString &text)
{
    if (text.isEmpty())
        return {};
    QRegularExpression pattern(text, QRegularExpression::CaseInsensitiveOption);
    if (!pattern.isValid())
        pattern.setPattern(QRegularExpression::escape(text));
    return pattern;
}

namespace {

double matchedTotal(const FlameNode &node, const QRegularExpression &pattern)
{
    if (pattern.match(node.name).hasMatch())
        return node.total;
    double total = 0;
    for (const FlameNode &child : node.children)
        total += matchedTotal(child, pattern);
    return total;
}

} // namespace

double flameMatchedShare(const FlameNode &root, const QRegularExpression &pattern)
{
    if (pattern.pattern().isEmpty() || !pattern.isValid() || !(root.total > 0))
        return 0;
    return std::clamp(matchedTotal(root, pattern) / root.total, 0.0, 1.0);
}

QString flameDisplayName(const QString &name)
{
    return sanitized(name, false);
}

QString flameGraphSvg(const FlameNode &root, const FlameGraphSvgOptions &options)
{
    const int width = std::max(200, options.width);
    const double graphWidth = width - 2 * kPad;
    const bool differential = options.differential;
    const bool hasData = std::isfinite(root.total) && root.total > 0;

    Layout layout;
    if (hasData)
        place(root, 0, kPad, graphWidth / root.total, differential, &layout);
    const double largest = differential ? flameLargestSelfChange(root) : 0;

    // The header: title, subtitle (or the totals), the legend of a differential graph; "Search" at the top right.
    const QString title = !options.title.isEmpty() ? options.title
        : differential                             ? QStringLiteral("Differential flame graph")
                                                   : QStringLiteral("Flame graph");
    QString subtitle = options.subtitle;
    if (subtitle.isEmpty() && hasData) {
        subtitle = differential ? QStringLiteral("%1: %2 %4, %3: %5 %4 (%6)")
                                      .arg(options.baseName, amount(root.baseTotal), options.newName, options.unit,
                                          amount(root.total), signedAmount(root.total - root.baseTotal))
                                : QStringLiteral("All stacks: %1 %2").arg(amount(root.total), options.unit);
    }
    const double center = width / 2.0;
    const double titleY = 24;
    const double subtitleY = 42;
    const double legendY = 60;
    const double graphTop = (differential ? legendY : subtitleY) + 14;
    const int rows = hasData ? layout.maxDepth + 1 : 3;
    const double noteY = graphTop + rows * kRow + 16;
    const int height = static_cast<int>(std::ceil(noteY + 10));
    // The title stays clear of "Reset search" on the right (and of the same room on the left, being centred).
    const double titleRoom = width - 2 * (kPad + 100);
    const double textRoom = width - 2 * kPad;

    QString svg;
    svg.reserve(4096 + static_cast<qsizetype>(layout.frames.size()) * 300);
    svg += QStringLiteral("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n");
    svg += QStringLiteral("<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" class=\"flame-graph\" "
                          "width=\"%1\" height=\"%2\" viewBox=\"0 0 %1 %2\" font-family=\"%3\" font-size=\"%4\">\n")
               .arg(width)
               .arg(height)
               .arg(xml(kFonts))
               .arg(kFontSize);
    svg += QStringLiteral("<style type=\"text/css\">")
        + QString::fromUtf8(kStyle).replace(QStringLiteral("@MATCH@"), flameSearchColor().name())
        + QStringLiteral("</style>\n");
    svg += QStringLiteral("<rect x=\"0\" y=\"0\" width=\"%1\" height=\"%2\" fill=\"#ffffff\"/>\n")
               .arg(width)
               .arg(height);
    svg += QStringLiteral("<text x=\"%1\" y=\"%2\" text-anchor=\"middle\" font-size=\"%3\" font-weight=\"bold\" "
                          "fill=\"%4\">%5</text>\n")
               .arg(coordinate(center), coordinate(titleY))
               .arg(kTitleSize)
               .arg(kTextColor, xml(fitText(title, titleRoom, kTitleCharWidth)));
    if (!subtitle.isEmpty()) {
        svg += QStringLiteral("<text x=\"%1\" y=\"%2\" text-anchor=\"middle\" fill=\"%3\">%4</text>\n")
                   .arg(coordinate(center), coordinate(subtitleY), kQuietColor,
                       xml(fitText(subtitle, textRoom, kCharWidth)));
    }
    if (differential) {
        // The legend's colour words in the deepest red and blue of the frames, grey a little darker than theirs;
        // how to read widths and depth too when the line has room.
        QString plain = flameDiffLegend(options.newName);
        const QString more
            = QStringLiteral(" (widths: %1; deeper colour: bigger change of the frame's self)").arg(options.newName);
        if ((plain.size() + more.size()) * kCharWidth <= textRoom)
            plain += more;
        const auto word = [](const QString &text, const QString &colour) {
            return QStringLiteral("<tspan fill=\"%1\" font-weight=\"bold\">%2</tspan>:").arg(colour, text);
        };
        QString marked = xml(plain);
        marked.replace(QStringLiteral("red:"), word(QStringLiteral("red"), flameChangeColor(1, 1, 1).name()));
        marked.replace(QStringLiteral("blue:"), word(QStringLiteral("blue"), flameChangeColor(-1, 1, 1).name()));
        marked.replace(QStringLiteral("grey:"), word(QStringLiteral("grey"), QStringLiteral("#8c8c8c")));
        svg += QStringLiteral("<text x=\"%1\" y=\"%2\" text-anchor=\"middle\" fill=\"%3\">%4</text>\n")
                   .arg(coordinate(center), coordinate(legendY), kQuietColor, marked);
    }
    if (options.interactive)
        svg += QStringLiteral(
            "<text class=\"flame-search\" x=\"%1\" y=\"%2\" text-anchor=\"end\" fill=\"%3\">Search</text>\n")
                   .arg(coordinate(width - kPad), coordinate(titleY), kQuietColor);

    // The frames, callers before callees. Every one is drawn as it is: the script only changes them on a click.
    svg += QStringLiteral("<g class=\"flame-frames\">\n");
    for (const Placed &frame : layout.frames) {
        const FlameNode &node = *frame.node;
        const FlameColor colour = flameFrameColor(node, differential, largest);
        const double y = graphTop + frame.depth * kRow;
        svg += QStringLiteral("<g class=\"flame-frame\" data-depth=\"%1\"><title>%2</title>")
                   .arg(frame.depth)
                   .arg(xml(flameFrameText(node, root, differential, options.unit, options.baseName, options.newName),
                       true));
        svg += QStringLiteral("<rect x=\"%1\" y=\"%2\" width=\"%3\" height=\"%4\" rx=\"2\" fill=\"%5\"/>")
                   .arg(coordinate(frame.x), coordinate(y), coordinate(frame.width), coordinate(kRow - 1),
                       colour.name());
        svg += QStringLiteral("<text x=\"%1\" y=\"%2\" fill=\"%3\">%4</text></g>\n")
                   .arg(coordinate(frame.x + kTextPad), coordinate(y + 11.5),
                       colour.darkText() ? QStringLiteral("#000000") : QStringLiteral("#ffffff"),
                       xml(fitText(flameDisplayName(node.name), frame.width, kCharWidth)));
    }
    svg += QStringLiteral("</g>\n");

    if (!hasData) {
        svg += QStringLiteral("<text x=\"%1\" y=\"%2\" text-anchor=\"middle\" fill=\"%3\">No samples</text>\n")
                   .arg(coordinate(center), coordinate(graphTop + kRow * 1.5), kQuietColor);
    }
    QStringList notes;
    if (layout.small > 0) {
        notes << (layout.small == 1 ? QStringLiteral("1 small frame not drawn")
                                    : QStringLiteral("%1 small frames not drawn").arg(layout.small));
    }
    if (layout.onlyInBase > 0) {
        notes << (layout.onlyInBase == 1
                ? QStringLiteral("1 frame only in %1 not drawn").arg(options.baseName)
                : QStringLiteral("%1 frames only in %2 not drawn").arg(layout.onlyInBase).arg(options.baseName));
    }
    svg += QStringLiteral("<text class=\"flame-note\" x=\"%1\" y=\"%2\" fill=\"%3\">%4</text>\n")
               .arg(coordinate(kPad), coordinate(noteY), kQuietColor, xml(notes.join(QStringLiteral("; "))));
    svg += QStringLiteral("<text class=\"flame-matched\" x=\"%1\" y=\"%2\" text-anchor=\"end\" fill=\"%3\"></text>\n")
               .arg(coordinate(width - kPad), coordinate(noteY), kQuietColor);

    if (!options.interactive)
        return svg + QStringLiteral("</svg>\n");
    QString script = QString::fromUtf8(kScript);
    script.replace(QStringLiteral("@PAD@"), coordinate(kPad))
        .replace(QStringLiteral("@GRAPH_W@"), coordinate(graphWidth))
        .replace(QStringLiteral("@CHAR_W@"), coordinate(kCharWidth))
        .replace(QStringLiteral("@TEXT_PAD@"), coordinate(kTextPad));
    svg += QStringLiteral("<script type=\"text/ecmascript\"><![CDATA[") + script + QStringLiteral("]]></script>\n");
    svg += QStringLiteral("</svg>\n");
    return svg;
}

} // namespace rpcscope
