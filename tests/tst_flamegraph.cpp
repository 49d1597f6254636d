// Flame graphs of CPU profiles: the SVG document (its frames, numbers, escaping, colours) and the GUI's view (hit
// testing, zoom, search, the message in place of a graph), from trees made by hand.
#include "export/flamegraphsvg.h"
#include "flamegraphview.h"
#include "keptfiles.h"

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QMap>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSet>
#include <QSignalSpy>
#include <QTest>
#include <QToolTip>
#include <QXmlStreamReader>

#include <algorithm>
#include <cmath>

using namespace rpcscope;

namespace {

FlameNode frame(const QString &name, double total, double self, std::vector<FlameNode> children = {})
{
    FlameNode node;
    node.name = name;
    node.total = total;
    node.self = self;
    node.children = std::move(children);
    return node;
}

// A differential frame: B's total and self, A's, and how the function was judged.
FlameNode diffFrame(const QString &name, double total, double self, double baseTotal, double baseSelf, int change,
    std::vector<FlameNode> children = {})
{
    FlameNode node = frame(name, total, self, std::move(children));
    node.baseTotal = baseTotal;
    node.baseSelf = baseSelf;
    node.change = change;
    return node;
}

// all 100: a 60 (self 20) calling c 40, and b 40.
FlameNode smallTree()
{
    return frame(QStringLiteral("all"), 100, 0,
        { frame(QStringLiteral("a"), 60, 20, { frame(QStringLiteral("c"), 40, 40) }),
            frame(QStringLiteral("b"), 40, 40) });
}

// B slower in parse (+38.7 self), faster in encode, log unchanged, "gone" only in A.
FlameNode diffTree()
{
    return diffFrame(QStringLiteral("all"), 118.7, 0, 95, 0, 0,
        { diffFrame(QStringLiteral("handler"), 100, 10, 76.3, 10, 1,
              { diffFrame(QStringLiteral("parse"), 78.7, 78.7, 40, 40, 1),
                  diffFrame(QStringLiteral("encode"), 11.3, 11.3, 21.3, 21.3, -1),
                  diffFrame(QStringLiteral("gone"), 0, 0, 5, 5, -1) }),
            diffFrame(QStringLiteral("log"), 18.7, 18.7, 18.7, 18.7, 0) });
}

void sortHeaviestFirst(FlameNode &node)
{
    std::sort(node.children.begin(), node.children.end(),
        [](const FlameNode &l, const FlameNode &r) { return l.total > r.total; });
    for (FlameNode &child : node.children)
        sortHeaviestFirst(child);
}

// A tree from folded stacks, built here (buildFlameTree is not under test): each stack adds its weight to the
// totals on its path and to its leaf's self. With @p base, A's weights go to baseTotal and baseSelf.
void addStack(FlameNode &root, const QString &stack, double weight, bool base)
{
    FlameNode *node = &root;
    (base ? node->baseTotal : node->total) += weight;
    for (const QString &name : stack.split(u';')) {
        auto it = std::find_if(
            node->children.begin(), node->children.end(), [&](const FlameNode &c) { return c.name == name; });
        if (it == node->children.end()) {
            node->children.push_back(frame(name, 0, 0));
            it = node->children.end() - 1;
        }
        node = &*it;
        (base ? node->baseTotal : node->total) += weight;
    }
    (base ? node->baseSelf : node->self) += weight;
}

// A gRPC server's CPU per call, to look at.
const QList<QPair<QString, double>> kServerStacks = {
    { QStringLiteral("grpc_server;start_thread;grpc::ThreadManager::MainWorkLoop;grpc::Server::SyncRequest::Run;"
                     "grpc::internal::RpcMethodHandler<Echo::Service>::RunHandler;EchoServiceImpl::Echo;"
                     "google::protobuf::MessageLite::ParseFromString;google::protobuf::internal::TcParser::ParseLoop"),
        11.0 },
    { QStringLiteral("grpc_server;start_thread;grpc::ThreadManager::MainWorkLoop;grpc::Server::SyncRequest::Run;"
                     "grpc::internal::RpcMethodHandler<Echo::Service>::RunHandler;EchoServiceImpl::Echo;"
                     "std::vector<int>::operator[]"),
        4.5 },
    { QStringLiteral("grpc_server;start_thread;grpc::ThreadManager::MainWorkLoop;grpc::Server::SyncRequest::Run;"
                     "grpc::internal::RpcMethodHandler<Echo::Service>::RunHandler;EchoServiceImpl::Echo;"
                     "json::parse;json::lexer::scan"),
        9.0 },
    { QStringLiteral("grpc_server;start_thread;grpc::ThreadManager::MainWorkLoop;grpc::Server::SyncRequest::Run;"
                     "grpc::internal::RpcMethodHandler<Echo::Service>::RunHandler;EchoServiceImpl::Echo;"
                     "google::protobuf::MessageLite::SerializeToString"),
        6.0 },
    { QStringLiteral("grpc_server;start_thread;grpc::ThreadManager::MainWorkLoop;grpc::Server::SyncRequest::Run;"
                     "grpc::internal::CallOpSet::FinalizeResult;grpc_call_start_batch;"
                     "grpc_core::FilterStackCall::StartBatch"),
        7.0 },
    { QStringLiteral("grpc_server;start_thread;grpc::ThreadManager::MainWorkLoop;grpc::CompletionQueue::AsyncNext;"
                     "grpc_completion_queue_next;grpc_core::ExecCtx::Flush;tcp_handle_read;tcp_do_read;recvmsg"),
        12.0 },
    { QStringLiteral("grpc_server;start_thread;grpc::ThreadManager::MainWorkLoop;grpc::CompletionQueue::AsyncNext;"
                     "grpc_completion_queue_next;grpc_core::ExecCtx::Flush;tcp_flush;sendmsg"),
        10.0 },
    { QStringLiteral("grpc_server;start_thread;grpc::ThreadManager::MainWorkLoop;grpc::CompletionQueue::AsyncNext;"
                     "grpc_completion_queue_next;epoll_wait"),
        5.0 },
    { QStringLiteral("grpc_server;start_thread;grpc::ThreadManager::MainWorkLoop;malloc"), 2.0 },
    { QStringLiteral("grpc_server;start_thread;grpc::ThreadManager::MainWorkLoop;free"), 1.5 },
    { QStringLiteral("grpc_server;[kernel];do_syscall_64;__x64_sys_futex;futex_wait"), 3.0 },
    { QStringLiteral("grpc_server;[kernel];irq_exit;__softirqentry_text_start;net_rx_action"), 0.2 },
    { QStringLiteral("grpc_server;[kernel];a & b <tiny>"), 0.003 },
};

FlameNode serverTree()
{
    FlameNode root = frame(QStringLiteral("all"), 0, 0);
    for (const auto &[stack, weight] : kServerStacks)
        addStack(root, stack, weight, false);
    sortHeaviestFirst(root);
    return root;
}

// B's JSON parsing got slower, its sends faster; the judgement here is by the frame's self change.
void judge(FlameNode &node)
{
    const double change = node.self - node.baseSelf;
    node.change = std::abs(change) < 0.5 ? 0 : (change > 0 ? 1 : -1);
    for (FlameNode &child : node.children)
        judge(child);
}

FlameNode serverDiffTree()
{
    FlameNode root = frame(QStringLiteral("all"), 0, 0);
    for (const auto &[stack, weight] : kServerStacks) {
        addStack(root, stack, weight, true);
        double b = weight;
        if (stack.endsWith(QStringLiteral("json::lexer::scan")))
            b *= 2.2;
        else if (stack.endsWith(QStringLiteral("sendmsg")))
            b *= 0.6;
        else if (stack.endsWith(QStringLiteral("malloc")))
            b *= 1.4;
        addStack(root, stack, b, false);
    }
    judge(root);
    sortHeaviestFirst(root);
    return root;
}

// What an SVG holds, as parsed by QXmlStreamReader.
struct SvgFrame {
    QString title;
    QString label;
    double x = 0;
    double y = 0;
    double width = 0;
    QString fill;
    QString name() const { return title.section(u'\n', 0, 0); }
};

struct ParsedSvg {
    QString error; ///< empty when the document is well-formed
    QMap<QString, QString> rootAttributes;
    QList<SvgFrame> frames;
    QStringList texts; ///< every <text> outside the frames, with its <tspan>s
    int titles = 0; ///< <title> elements anywhere
    QStringList hiddenElements; ///< elements hidden before any script runs
    QString script;

    const SvgFrame *find(const QString &name) const
    {
        for (const SvgFrame &f : frames)
            if (f.name() == name)
                return &f;
        return nullptr;
    }
};

ParsedSvg parseSvg(const QString &svg)
{
    ParsedSvg parsed;
    QXmlStreamReader reader(svg);
    SvgFrame *current = nullptr;
    while (!reader.atEnd()) {
        reader.readNext();
        if (reader.isEndElement() && reader.name() == u"g")
            current = nullptr;
        if (!reader.isStartElement())
            continue;
        const QXmlStreamAttributes attributes = reader.attributes();
        const QString cls = attributes.value(QLatin1StringView("class")).toString();
        if (cls.contains(u"flame-hidden") || cls.contains(u"flame-caller")
            || attributes.value(QLatin1StringView("display")) == u"none"
            || attributes.value(QLatin1StringView("visibility")) == u"hidden"
            || attributes.value(QLatin1StringView("opacity")) == u"0")
            parsed.hiddenElements << reader.name().toString();
        if (reader.name() == u"svg") {
            for (const QXmlStreamAttribute &a : attributes)
                parsed.rootAttributes.insert(a.name().toString(), a.value().toString());
        } else if (reader.name() == u"g" && cls == u"flame-frame") {
            parsed.frames.append(SvgFrame {});
            current = &parsed.frames.last();
        } else if (reader.name() == u"title") {
            ++parsed.titles;
            const QString text = reader.readElementText();
            if (current)
                current->title = text;
        } else if (reader.name() == u"rect" && current) {
            current->x = attributes.value(QLatin1StringView("x")).toDouble();
            current->y = attributes.value(QLatin1StringView("y")).toDouble();
            current->width = attributes.value(QLatin1StringView("width")).toDouble();
            current->fill = attributes.value(QLatin1StringView("fill")).toString();
        } else if (reader.name() == u"text") {
            const QString text = reader.readElementText(QXmlStreamReader::IncludeChildElements);
            if (current)
                current->label = text;
            else
                parsed.texts << text;
        } else if (reader.name() == u"script") {
            parsed.script = reader.readElementText();
        }
    }
    if (reader.hasError())
        parsed.error = QStringLiteral("line %1: %2").arg(reader.lineNumber()).arg(reader.errorString());
    return parsed;
}

QColor fillOf(const SvgFrame *f)
{
    return f ? QColor(f->fill) : QColor();
}

} // namespace

class TestFlameGraph : public QObject {
    Q_OBJECT

    static QWidget *canvasOf(FlameGraphView &view) { return view.findChild<QWidget *>(QStringLiteral("flameCanvas")); }

    // A point of @p view in its canvas's coordinates, for mouse events.
    static QPoint onCanvas(FlameGraphView &view, QPoint pos) { return canvasOf(view)->mapFrom(&view, pos); }

    static void showView(FlameGraphView &view, QSize size)
    {
        view.resize(size);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QCoreApplication::processEvents();
    }

    // The colour painted at @p pos of @p view.
    static QColor pixel(FlameGraphView &view, QPoint pos)
    {
        const QImage image = view.grab().toImage();
        const qreal ratio = image.devicePixelRatio();
        return image.pixelColor(QPoint(qRound(pos.x() * ratio), qRound(pos.y() * ratio)));
    }

private Q_SLOTS:
    void svgIsWellFormedWithOneTitleAFrame()
    {
        const QString svg = flameGraphSvg(smallTree(), { QStringLiteral("CPU per call"), {}, 1200 });
        QVERIFY(svg.startsWith(QStringLiteral("<?xml version=\"1.0\" encoding=\"UTF-8\"")));
        const ParsedSvg parsed = parseSvg(svg);
        QVERIFY2(parsed.error.isEmpty(), qPrintable(parsed.error));
        QCOMPARE(parsed.rootAttributes.value(QStringLiteral("width")), QStringLiteral("1200"));
        const QString height = parsed.rootAttributes.value(QStringLiteral("height"));
        QVERIFY(height.toInt() > 4 * 16);
        QCOMPARE(parsed.rootAttributes.value(QStringLiteral("viewBox")), QStringLiteral("0 0 1200 ") + height);
        QVERIFY(parsed.rootAttributes.value(QStringLiteral("font-family")).contains(QStringLiteral("sans-serif")));

        QCOMPARE(parsed.frames.size(), 4);
        QCOMPARE(parsed.titles, 4); // one per frame, no other
        QVERIFY(parsed.texts.contains(QStringLiteral("CPU per call")));
        QVERIFY(parsed.texts.contains(QStringLiteral("All stacks: 100.0 us per call")));
        QVERIFY(parsed.texts.contains(QStringLiteral("Search")));

        const SvgFrame *all = parsed.find(QStringLiteral("all"));
        const SvgFrame *a = parsed.find(QStringLiteral("a"));
        const SvgFrame *b = parsed.find(QStringLiteral("b"));
        const SvgFrame *c = parsed.find(QStringLiteral("c"));
        QVERIFY(all && a && b && c);
        QCOMPARE(all->title, QStringLiteral("all\ntotal 100.0 us per call (100.0% of all), self 0.00 us per call"));
        QCOMPARE(a->title, QStringLiteral("a\ntotal 60.0 us per call (60.0% of all), self 20.0 us per call"));
        QCOMPARE(b->title, QStringLiteral("b\ntotal 40.0 us per call (40.0% of all), self 40.0 us per call"));
        QCOMPARE(c->title, QStringLiteral("c\ntotal 40.0 us per call (40.0% of all), self 40.0 us per call"));
        QCOMPARE(a->label, QStringLiteral("a"));

        // An icicle: the root on top across the width, a and b under it side by side, c under a, widths by total.
        QCOMPARE(all->x, 10.0);
        QCOMPARE(all->width, 1180.0);
        QCOMPARE(a->y, all->y + 16);
        QCOMPARE(b->y, a->y);
        QCOMPARE(c->y, a->y + 16);
        QCOMPARE(a->width, 708.0);
        QCOMPARE(b->x, a->x + a->width);
        QCOMPARE(b->width, 472.0);
        QCOMPARE(c->x, a->x);
        QCOMPARE(c->width, 472.0);

        // It reads without scripts: nothing starts hidden; the script is there, in CDATA.
        QVERIFY2(parsed.hiddenElements.isEmpty(), qPrintable(parsed.hiddenElements.join(u',')));
        QVERIFY(parsed.script.contains(QStringLiteral("prompt(")));
        QVERIFY(parsed.script.contains(QStringLiteral("Escape")));
        QVERIFY(svg.contains(QStringLiteral("<![CDATA[")));
    }

    void svgEscapesNames()
    {
        const QString vector = QStringLiteral("std::vector<int>::operator[]");
        const QString amp = QStringLiteral("a & b");
        const QString quotes = QStringLiteral("\"quoted\" 'x' </title> ]]>");
        const QString control = QStringLiteral("bad") + QChar(1) + QStringLiteral("char");
        const FlameNode root = frame(QStringLiteral("<root>"), 100, 0,
            { frame(vector, 40, 40), frame(amp, 30, 30), frame(quotes, 20, 20), frame(control, 10, 10) });
        FlameGraphSvgOptions options;
        options.title = QStringLiteral("A <b>bold</b> & \"quoted\" title");
        options.subtitle = QStringLiteral("run <1> & <2>");
        const QString svg = flameGraphSvg(root, options);
        const ParsedSvg parsed = parseSvg(svg);
        QVERIFY2(parsed.error.isEmpty(), qPrintable(parsed.error));
        QCOMPARE(parsed.frames.size(), 5);
        QVERIFY(parsed.find(QStringLiteral("<root>")));
        for (const QString &name : { vector, amp, quotes }) {
            const SvgFrame *f = parsed.find(name);
            QVERIFY2(f, qPrintable(name));
            QCOMPARE(f->label, name); // each fits its frame whole
        }
        const QString shown = QStringLiteral("bad") + QChar(0xfffd) + QStringLiteral("char");
        QVERIFY(parsed.find(shown));
        QVERIFY(parsed.texts.contains(options.title));
        QVERIFY(parsed.texts.contains(options.subtitle));
        QVERIFY(!svg.contains(QStringLiteral("<int>")));
        QVERIFY(!svg.contains(QStringLiteral("a & b")));
        // What escaping is for: the same document read by Qt's SVG renderer too.
        QVERIFY(svg.toUtf8().startsWith("<?xml"));
    }

    void svgDropsTinyFramesAndSaysHowMany()
    {
        // At 1200 px, 0.04 of 1000 is 0.05 px: three such frames (one with a child) go, counted.
        const FlameNode root = frame(QStringLiteral("all"), 1000, 0,
            { frame(QStringLiteral("big"), 999.88, 0, { frame(QStringLiteral("leaf"), 999.88, 999.88) }),
                frame(QStringLiteral("tiny1"), 0.04, 0.04),
                frame(QStringLiteral("tiny2"), 0.08, 0.04, { frame(QStringLiteral("tiny3"), 0.04, 0.04) }) });
        const ParsedSvg parsed = parseSvg(flameGraphSvg(root));
        QVERIFY2(parsed.error.isEmpty(), qPrintable(parsed.error));
        QCOMPARE(parsed.frames.size(), 3);
        QCOMPARE(parsed.titles, 3);
        QVERIFY(!parsed.find(QStringLiteral("tiny1")));
        QVERIFY(!parsed.find(QStringLiteral("tiny3")));
        QVERIFY2(
            parsed.texts.contains(QStringLiteral("3 small frames not drawn")), qPrintable(parsed.texts.join(u'|')));
        for (const SvgFrame &f : parsed.frames)
            QVERIFY(f.width >= 0.5);

        // Nothing dropped, no note.
        const ParsedSvg whole = parseSvg(flameGraphSvg(smallTree()));
        for (const QString &text : whole.texts)
            QVERIFY2(!text.contains(QStringLiteral("not drawn")), qPrintable(text));
    }

    void svgElidesNamesToFit()
    {
        const QString longName = QStringLiteral("grpc::internal::RpcMethodHandler<Echo::Service>::RunHandler");
        const FlameNode root = frame(QStringLiteral("all"), 100, 0,
            { frame(QStringLiteral("main"), 89, 89), frame(longName, 10, 10), frame(longName + u'2', 1, 1) });
        const ParsedSvg parsed = parseSvg(flameGraphSvg(root, { {}, {}, 1200 }));
        QVERIFY2(parsed.error.isEmpty(), qPrintable(parsed.error));
        const SvgFrame *tenth = parsed.find(longName);
        QVERIFY(tenth);
        QCOMPARE(tenth->width, 118.0);
        QVERIFY(tenth->label.endsWith(QChar(0x2026)));
        QVERIFY(tenth->label.size() < longName.size());
        QVERIFY(tenth->label.size() * 7.0 <= tenth->width);
        QVERIFY(longName.startsWith(tenth->label.chopped(1)));
        const SvgFrame *hundredth = parsed.find(longName + u'2');
        QVERIFY(hundredth);
        QCOMPARE(hundredth->label, QString()); // 11.8 px: no room for a name
        QCOMPARE(hundredth->title.section(u'\n', 0, 0), longName + u'2'); // the title has it whole
    }

    void svgPlainColoursAreWarmAndByName()
    {
        const FlameNode root = frame(QStringLiteral("all"), 100, 0,
            { frame(QStringLiteral("f"), 50, 0, { frame(QStringLiteral("g"), 50, 50) }),
                frame(QStringLiteral("g"), 30, 30), frame(QStringLiteral("h"), 20, 20) });
        const ParsedSvg parsed = parseSvg(flameGraphSvg(root));
        QList<QString> gFills;
        for (const SvgFrame &f : parsed.frames) {
            const QColor c(f.fill);
            QVERIFY2(c.isValid(), qPrintable(f.fill));
            QVERIFY2(c.red() >= c.green() && c.green() >= c.blue(), qPrintable(f.name() + u' ' + f.fill));
            if (f.name() == u"g")
                gFills << f.fill;
        }
        QCOMPARE(gFills.size(), 2);
        QCOMPARE(gFills[0], gFills[1]);
        // Many names, some different colours; the same name always the same.
        QSet<QString> fills;
        for (int i = 0; i < 20; ++i)
            fills.insert(flameNameColor(QStringLiteral("function_%1").arg(i)).name());
        QVERIFY(fills.size() >= 15);
        QCOMPARE(
            flameNameColor(QStringLiteral("json::parse")).name(), flameNameColor(QStringLiteral("json::parse")).name());
    }

    void svgDifferentialColoursAndTitles()
    {
        FlameGraphSvgOptions options;
        options.differential = true;
        const QString svg = flameGraphSvg(diffTree(), options);
        const ParsedSvg parsed = parseSvg(svg);
        QVERIFY2(parsed.error.isEmpty(), qPrintable(parsed.error));
        QCOMPARE(parsed.frames.size(), 5); // "gone" has no B time: not drawn, but said
        QVERIFY(parsed.texts.contains(QStringLiteral("1 frame only in A not drawn")));
        QVERIFY(std::any_of(parsed.texts.begin(), parsed.texts.end(), [](const QString &t) {
            return t.startsWith(QStringLiteral("red: slower in B, blue: faster, grey: within noise"));
        }));
        QVERIFY(parsed.texts.contains(QStringLiteral("A: 95.0 us per call, B: 118.7 us per call (+23.7)")));

        const QColor parse = fillOf(parsed.find(QStringLiteral("parse")));
        const QColor handler = fillOf(parsed.find(QStringLiteral("handler")));
        const QColor encode = fillOf(parsed.find(QStringLiteral("encode")));
        const QColor log = fillOf(parsed.find(QStringLiteral("log")));
        const QColor all = fillOf(parsed.find(QStringLiteral("all")));
        // Red for slower, blue for faster, grey within noise.
        QVERIFY2(parse.red() > parse.green() + 100 && parse.red() > parse.blue() + 100, qPrintable(parse.name()));
        QVERIFY2(handler.red() > handler.green() && handler.red() > handler.blue(), qPrintable(handler.name()));
        QVERIFY2(encode.blue() > encode.red() && encode.blue() > encode.green(), qPrintable(encode.name()));
        QVERIFY(log.red() == log.green() && log.green() == log.blue());
        QVERIFY(all.red() == all.green() && all.green() == all.blue());
        // Deeper for the bigger self change: parse (+38.7) over handler (self unchanged).
        QVERIFY(QColor(parse).hslSaturationF() > QColor(handler).hslSaturationF());
        QVERIFY(parse.lightnessF() < handler.lightnessF());

        QCOMPARE(parsed.find(QStringLiteral("parse"))->title,
            QStringLiteral("parse\nA: total 40.0, self 40.0 us per call\nB: total 78.7, self 78.7 us per call "
                           "(66.3% of all)\nchange: total +38.7 us per call, self +38.7 us per call: slower in B"));
        QVERIFY(parsed.find(QStringLiteral("encode"))
                    ->title.endsWith(QStringLiteral("total -10.0 us per call, self -10.0 us per call: faster in B")));
        QVERIFY(parsed.find(QStringLiteral("log"))->title.endsWith(QStringLiteral(": within noise")));
        // The root's change is everything's: not judged.
        QVERIFY(parsed.find(QStringLiteral("all"))->title.endsWith(QStringLiteral("self 0.00 us per call")));

        // The sides' names.
        options.baseName = QStringLiteral("before");
        options.newName = QStringLiteral("after");
        const ParsedSvg named = parseSvg(flameGraphSvg(diffTree(), options));
        const QString title = named.find(QStringLiteral("parse"))->title;
        QVERIFY2(title.contains(QStringLiteral("\nbefore: total 40.0")), qPrintable(title));
        QVERIFY2(title.contains(QStringLiteral("\nafter: total 78.7")), qPrintable(title));
        QVERIFY(title.endsWith(QStringLiteral("slower in after")));
    }

    void svgOfNothing()
    {
        const ParsedSvg parsed = parseSvg(flameGraphSvg(FlameNode {}));
        QVERIFY2(parsed.error.isEmpty(), qPrintable(parsed.error));
        QCOMPARE(parsed.frames.size(), 0);
        QVERIFY(parsed.texts.contains(QStringLiteral("No samples")));
    }

    void searchSharesCountNestedMatchesOnce()
    {
        const FlameNode root = smallTree();
        QCOMPARE(flameMatchedShare(root, flameSearchPattern(QStringLiteral("^c$"))), 0.4);
        QCOMPARE(flameMatchedShare(root, flameSearchPattern(QStringLiteral("^(b|c)$"))), 0.8);
        QCOMPARE(flameMatchedShare(root, flameSearchPattern(QStringLiteral("^(a|c)$"))), 0.6);
        QCOMPARE(flameMatchedShare(root, flameSearchPattern(QStringLiteral("^B$"))), 0.4); // case-insensitive
        QCOMPARE(flameMatchedShare(root, flameSearchPattern(QString())), 0.0);
        // Not a valid regular expression: taken as text.
        const FlameNode nasty = frame(QStringLiteral("all"), 10, 0,
            { frame(QStringLiteral("std::vector<int>::operator[]"), 4, 4), frame(QStringLiteral("x"), 6, 6) });
        QVERIFY(flameSearchPattern(QStringLiteral("operator[")).isValid());
        QCOMPARE(flameMatchedShare(nasty, flameSearchPattern(QStringLiteral("operator["))), 0.4);
    }

    void viewFindsFramesWhereDrawn()
    {
        FlameGraphView view;
        view.setTree(smallTree(), false);
        showView(view, { 1000, 400 });
        QCOMPARE(view.visibleFrameCount(), 4);
        QCOMPARE(view.message(), QString());
        for (const QString &name :
            { QStringLiteral("all"), QStringLiteral("a"), QStringLiteral("b"), QStringLiteral("c") }) {
            const QRect rect = view.frameRect(name);
            QVERIFY2(!rect.isEmpty(), qPrintable(name));
            QCOMPARE(view.frameAt(rect.center()), name);
        }
        const QRect all = view.frameRect(QStringLiteral("all"));
        const QRect a = view.frameRect(QStringLiteral("a"));
        const QRect b = view.frameRect(QStringLiteral("b"));
        QVERIFY(all.width() > 900);
        QVERIFY(std::abs(a.width() - 0.6 * all.width()) <= 2);
        QVERIFY(std::abs(b.left() - a.right()) <= 2);
        QVERIFY(a.top() > all.top());
        // Nothing in the search row, nor below the graph.
        QCOMPARE(view.frameAt(view.findChild<QLineEdit *>()->geometry().center()), QString());
        QCOMPARE(view.frameAt(QPoint(b.center().x(), b.bottom() + 40)), QString());

        // The hover read-out: the frame's numbers.
        QTest::mouseMove(canvasOf(view), onCanvas(view, a.center()));
        QTRY_VERIFY(QToolTip::isVisible());
        QVERIFY2(QToolTip::text().contains(QStringLiteral("total 60.0 us per call (60.0% of all), self 20.0 us")),
            qPrintable(QToolTip::text()));
        QToolTip::hideText();
    }

    void viewZooms()
    {
        FlameGraphView view;
        view.setTree(smallTree(), false);
        showView(view, { 1000, 400 });
        auto *reset = view.findChild<QPushButton *>(QStringLiteral("flameResetZoom"));
        QVERIFY(reset && !reset->isEnabled());
        QSignalSpy zoomed(&view, &FlameGraphView::zoomChanged);
        const QRect all = view.frameRect(QStringLiteral("all"));

        view.zoomTo(QStringLiteral("a"));
        QCOMPARE(view.zoomedFrame(), QStringLiteral("a"));
        QCOMPARE(zoomed.size(), 1);
        QCOMPARE(zoomed.last().at(0).toString(), QStringLiteral("a"));
        QVERIFY(reset->isEnabled());
        const QRect a = view.frameRect(QStringLiteral("a"));
        QCOMPARE(a.left(), all.left());
        QVERIFY(std::abs(a.right() - all.right()) <= 1);
        QCOMPARE(view.frameAt(QPoint(all.left() + 1, a.center().y())), QStringLiteral("a"));
        QCOMPARE(view.frameAt(QPoint(all.right() - 1, a.center().y())), QStringLiteral("a"));
        // c to a's scale, the caller above, b gone.
        const QRect c = view.frameRect(QStringLiteral("c"));
        QVERIFY(std::abs(c.width() - 2.0 / 3 * a.width()) <= 2);
        QCOMPARE(view.frameAt(QPoint(all.left() + 1, all.center().y())), QStringLiteral("all"));
        QVERIFY(view.frameRect(QStringLiteral("b")).isEmpty());
        QCOMPARE(view.visibleFrameCount(), 3);

        QTest::mouseClick(reset, Qt::LeftButton);
        QCOMPARE(view.zoomedFrame(), QString());
        QCOMPARE(view.visibleFrameCount(), 4);
        QVERIFY(!reset->isEnabled());

        // A click zooms into the frame clicked; a click on the root goes back.
        QWidget *canvas = canvasOf(view);
        QTest::mouseClick(canvas, Qt::LeftButton, {}, onCanvas(view, view.frameRect(QStringLiteral("c")).center()));
        QCOMPARE(view.zoomedFrame(), QStringLiteral("c"));
        QCOMPARE(view.frameAt(QPoint(all.right() - 1, view.frameRect(QStringLiteral("c")).center().y())),
            QStringLiteral("c"));
        QTest::mouseClick(canvas, Qt::LeftButton, {}, onCanvas(view, all.center()));
        QCOMPARE(view.zoomedFrame(), QString());
        // A click on a caller zooms out to it.
        view.zoomTo(QStringLiteral("c"));
        QTest::mouseClick(canvas, Qt::LeftButton, {}, onCanvas(view, view.frameRect(QStringLiteral("a")).center()));
        QCOMPARE(view.zoomedFrame(), QStringLiteral("a"));
        // A double click, or Escape, resets.
        QTest::mouseDClick(canvas, Qt::LeftButton, {}, onCanvas(view, view.frameRect(QStringLiteral("c")).center()));
        QCOMPARE(view.zoomedFrame(), QString());
        view.zoomTo(QStringLiteral("a"));
        QTest::keyClick(canvas, Qt::Key_Escape);
        QCOMPARE(view.zoomedFrame(), QString());
        // Zooming to the root, or to a name not there, shows the whole graph.
        view.zoomTo(QStringLiteral("all"));
        QCOMPARE(view.zoomedFrame(), QString());
        view.zoomTo(QStringLiteral("nowhere"));
        QCOMPARE(view.zoomedFrame(), QString());
    }

    void viewZoomsToTheFirstMatchBreadthFirst()
    {
        // x deep on the left (first depth-first), shallow on the right (first breadth-first).
        const FlameNode root = frame(QStringLiteral("all"), 100, 0,
            { frame(QStringLiteral("p"), 60, 0,
                  { frame(QStringLiteral("q"), 60, 0,
                      { frame(QStringLiteral("x"), 60, 0, { frame(QStringLiteral("y"), 60, 60) }) }) }),
                frame(QStringLiteral("x"), 40, 40) });
        FlameGraphView view;
        view.setTree(root, false);
        showView(view, { 1000, 400 });
        const QRect all = view.frameRect(QStringLiteral("all"));
        view.zoomTo(QStringLiteral("x"));
        QCOMPARE(view.zoomedFrame(), QStringLiteral("x"));
        QCOMPARE(view.visibleFrameCount(), 2); // the root above, x (no callees)
        const QRect x = view.frameRect(QStringLiteral("x"));
        QCOMPARE(x.top(), all.bottom() + 2); // the next row
        QVERIFY(view.frameRect(QStringLiteral("y")).isEmpty());
    }

    void viewSearches()
    {
        FlameGraphView view;
        view.setTree(smallTree(), false);
        showView(view, { 1000, 400 });
        auto *matched = view.findChild<QLabel *>(QStringLiteral("flameMatched"));
        auto *field = view.findChild<QLineEdit *>(QStringLiteral("flameSearch"));
        QVERIFY(matched && field);
        QCOMPARE(field->placeholderText(), QStringLiteral("Search functions"));
        QCOMPARE(view.matchedShare(), 0.0);
        QCOMPARE(matched->text(), QString());

        QTest::keyClicks(field, QStringLiteral("^c$"));
        QCOMPARE(view.matchedShare(), 0.4);
        QCOMPARE(matched->text(), QStringLiteral("Matched: 40.0%"));
        view.setSearchText(QStringLiteral("^(b|c)$"));
        QCOMPARE(view.matchedShare(), 0.8);
        view.setSearchText(QStringLiteral("^B$"));
        QCOMPARE(view.matchedShare(), 0.4);

        // Matched frames in magenta, the others in their own colours.
        const QRect b = view.frameRect(QStringLiteral("b"));
        const QRect a = view.frameRect(QStringLiteral("a"));
        const QColor bPixel = pixel(view, b.bottomRight() - QPoint(3, 3));
        const QColor aPixel = pixel(view, a.bottomRight() - QPoint(3, 3));
        const std::array<int, 3> magenta = flameSearchColor().rgb();
        QCOMPARE(bPixel, QColor(magenta[0], magenta[1], magenta[2]));
        const std::array<int, 3> aColour = flameNameColor(QStringLiteral("a")).rgb();
        QCOMPARE(aPixel, QColor(aColour[0], aColour[1], aColour[2]));

        // Kept across a new tree, counted on it.
        view.setTree(frame(QStringLiteral("all"), 10, 0, { frame(QStringLiteral("b"), 1, 1) }), false);
        QCOMPARE(view.matchedShare(), 0.1);
        view.setSearchText(QString());
        QCOMPARE(view.matchedShare(), 0.0);
        QCOMPARE(matched->text(), QString());
    }

    void viewClearShowsTheMessage()
    {
        FlameGraphView view;
        QVERIFY(!view.message().isEmpty()); // "No profile" before any tree
        view.setTree(smallTree(), false);
        showView(view, { 1000, 400 });
        view.zoomTo(QStringLiteral("a"));
        const QRect a = view.frameRect(QStringLiteral("a"));
        const QString message = QStringLiteral("No profile: run with --profile");
        view.clear(message);
        QCOMPARE(view.message(), message);
        QCOMPARE(view.visibleFrameCount(), 0);
        QCOMPARE(view.zoomedFrame(), QString());
        QCOMPARE(view.frameAt(a.center()), QString());
        QVERIFY(view.frameRect(QStringLiteral("a")).isEmpty());
        QVERIFY(!view.findChild<QLineEdit *>(QStringLiteral("flameSearch"))->isEnabled());
        // The message is painted: its text's colour is in the middle of the canvas.
        const QImage image = view.grab().toImage();
        QSet<QRgb> colours;
        for (int y = 0; y < image.height(); ++y)
            for (int x = image.width() / 4; x < 3 * image.width() / 4; ++x)
                colours.insert(image.pixel(x, y));
        QVERIFY(colours.size() > 3);
        view.setTree(smallTree(), false);
        QCOMPARE(view.message(), QString());
        QCOMPARE(view.visibleFrameCount(), 4);
        // A tree without samples says so rather than showing a blank.
        view.setTree(FlameNode {}, false);
        QCOMPARE(view.visibleFrameCount(), 0);
        QVERIFY(!view.message().isEmpty());
    }

    void viewScrollsDeepTreesAndFitsNarrowWidths()
    {
        FlameNode root = frame(QStringLiteral("frame_80"), 100, 100);
        for (int depth = 79; depth >= 0; --depth)
            root = frame(QStringLiteral("frame_%1").arg(depth), 100, 0, { std::move(root) });
        FlameGraphView view;
        view.setTree(root, false);
        QVERIFY(view.sizeHint().height() > 400);
        QVERIFY(view.minimumSizeHint().height() < 300);
        showView(view, { 1000, 400 });
        QCOMPARE(view.visibleFrameCount(), 81);
        auto *scroll = view.findChild<QScrollArea *>(QStringLiteral("flameScroll"));
        QVERIFY(scroll->verticalScrollBar()->isVisible());
        QVERIFY(scroll->verticalScrollBar()->maximum() > 80 * 16 - 400);
        QVERIFY(!scroll->horizontalScrollBar()->isVisible());
        // Scrolled to the bottom, the deepest frame is where frameRect says.
        scroll->verticalScrollBar()->setValue(scroll->verticalScrollBar()->maximum());
        QCoreApplication::processEvents();
        const QRect deepest = view.frameRect(QStringLiteral("frame_80"));
        QVERIFY(deepest.bottom() < view.height());
        QCOMPARE(view.frameAt(deepest.center()), QStringLiteral("frame_80"));

        // 500 px: the row above the graph fits, the graph follows the width.
        QVERIFY(view.minimumSizeHint().width() <= 500);
        view.setTree(smallTree(), false);
        view.resize(500, 300);
        QCoreApplication::processEvents();
        auto *reset = view.findChild<QPushButton *>(QStringLiteral("flameResetZoom"));
        auto *field = view.findChild<QLineEdit *>(QStringLiteral("flameSearch"));
        QVERIFY(reset->geometry().right() < view.width());
        QVERIFY(field->width() >= 120);
        QVERIFY(view.frameRect(QStringLiteral("all")).width() > 450);
        QCOMPARE(view.visibleFrameCount(), 4);
    }

    void viewDifferential()
    {
        FlameGraphView view;
        view.setTree(diffTree(), true);
        showView(view, { 1000, 400 });
        QVERIFY(view.isDifferential());
        auto *legend = view.findChild<QLabel *>(QStringLiteral("flameLegend"));
        QVERIFY(legend->isVisible());
        QVERIFY(legend->text().contains(QStringLiteral("slower in B")));
        QCOMPARE(view.visibleFrameCount(), 5);
        const auto colourAt = [&](const QString &name) {
            const QRect rect = view.frameRect(name);
            return pixel(view, rect.bottomRight() - QPoint(3, 3));
        };
        const QColor parse = colourAt(QStringLiteral("parse"));
        const QColor encode = colourAt(QStringLiteral("encode"));
        const QColor log = colourAt(QStringLiteral("log"));
        QVERIFY2(parse.red() > parse.green() + 100 && parse.red() > parse.blue() + 100, qPrintable(parse.name()));
        QVERIFY2(encode.blue() > encode.red() && encode.blue() > encode.green(), qPrintable(encode.name()));
        QVERIFY2(log.red() == log.green() && log.green() == log.blue(), qPrintable(log.name()));

        view.setSideNames(QStringLiteral("before"), QStringLiteral("after"));
        QVERIFY(legend->text().contains(QStringLiteral("slower in after")));
        view.setTree(smallTree(), false);
        QVERIFY(!legend->isVisible());
    }

    void screenshots()
    {
        if (qEnvironmentVariable("RPCSCOPE_SCREENSHOTS").isEmpty())
            QSKIP("set RPCSCOPE_SCREENSHOTS to a directory for the pictures");
        FlameGraphView view;
        view.setTree(serverTree(), false);
        showView(view, { 1000, 400 });
        kept::picture(QStringLiteral("flamegraph-plain.png"), &view);
        view.setSideNames(QStringLiteral("A main"), QStringLiteral("B json-2"));
        view.setTree(serverDiffTree(), true);
        QCoreApplication::processEvents();
        kept::picture(QStringLiteral("flamegraph-diff.png"), &view);
        // Narrow, searched, zoomed.
        view.setTree(serverTree(), false);
        view.resize(500, 400);
        view.setSearchText(QStringLiteral("protobuf|json"));
        view.zoomTo(QStringLiteral("grpc::ThreadManager::MainWorkLoop"));
        QCoreApplication::processEvents();
        kept::picture(QStringLiteral("flamegraph-narrow.png"), &view);
        view.setSearchText(QString());
        view.setTree(serverDiffTree(), true);
        QCoreApplication::processEvents();
        kept::picture(QStringLiteral("flamegraph-diff-narrow.png"), &view);
        view.clear(QStringLiteral("No profile: run with --profile"));
        QCoreApplication::processEvents();
        kept::picture(QStringLiteral("flamegraph-message.png"), &view);

        kept::file(QStringLiteral("flamegraph-plain.svg"),
            flameGraphSvg(serverTree(), { QStringLiteral("Server CPU per call"), {}, 1200 }).toUtf8());
        FlameGraphSvgOptions options;
        options.title = QStringLiteral("Server CPU per call: A main vs B json-2");
        options.differential = true;
        kept::file(QStringLiteral("flamegraph-diff.svg"), flameGraphSvg(serverDiffTree(), options).toUtf8());
    }
};

QTEST_MAIN(TestFlameGraph)
#include "tst_flamegraph.moc"
