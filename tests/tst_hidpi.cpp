// The window on a 2x screen (QT_SCALE_FACTOR=2, set before the application starts): the window, every chart and the
// exports drawn at twice the resolution, not drawn at 1x and scaled up (blurred).
#include "guifixture.h"
#include "qcp.h"
#include "resultscontroller.h"
#include "runcontroller.h"

#include <QApplication>
#include <QImageReader>
#include <QSet>
#include <QSpinBox>

using namespace rpcscope;

namespace {

// The distinct colours in @p image: a blank chart has one or two, one with data dozens.
int colourCount(const QImage &image)
{
    QSet<QRgb> colours;
    const QImage rgb = image.convertToFormat(QImage::Format_RGB32);
    for (int y = 0; y < rgb.height(); y += 3) {
        const auto *line = reinterpret_cast<const QRgb *>(rgb.constScanLine(y));
        for (int x = 0; x < rgb.width(); x += 3)
            colours.insert(line[x]);
    }
    return static_cast<int>(colours.size());
}

// The share of 2x2 pixel blocks (on even coordinates) whose four pixels are not all the same, among the blocks that
// differ from the block to their right: where a 1x drawing scaled up by 2 has none (each of its pixels became one
// block), a drawing at 2x has its edges, thin lines and glyphs cut across blocks.
double splitBlockShare(const QImage &image)
{
    const QImage rgb = image.convertToFormat(QImage::Format_RGB32);
    qint64 edges = 0;
    qint64 split = 0;
    for (int y = 0; y + 1 < rgb.height(); y += 2) {
        const auto *top = reinterpret_cast<const QRgb *>(rgb.constScanLine(y));
        const auto *bottom = reinterpret_cast<const QRgb *>(rgb.constScanLine(y + 1));
        for (int x = 0; x + 3 < rgb.width(); x += 2) {
            if (top[x] == top[x + 2] && bottom[x] == bottom[x + 2])
                continue; // no edge here
            ++edges;
            if (top[x] != top[x + 1] || top[x] != bottom[x] || top[x] != bottom[x + 1])
                ++split;
        }
    }
    return edges ? static_cast<double>(split) / static_cast<double>(edges) : 0.0;
}

} // namespace

class TestHiDpi : public GuiFixture {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QCOMPARE(qApp->devicePixelRatio(), 2.0);
        openWindow();
    }

    void windowAndChartsDrawAtTwiceTheResolution()
    {
        QCOMPARE(m_window->devicePixelRatioF(), 2.0);
        child<QSpinBox>("callsEdit")->setValue(300);
        m_window->startRun();
        QTRY_VERIFY_WITH_TIMEOUT(!m_window->runController()->isRunning(), 30000);
        QCOMPARE(m_window->runController()->lastSnapshot().callsOk(), 300ULL);
        QCoreApplication::processEvents(); // the queued replots

        // The window's picture: two device pixels a logical one each way.
        const QPixmap window = m_window->grab();
        QCOMPARE(window.devicePixelRatio(), 2.0);
        QCOMPARE(window.size(), m_window->size() * 2);
        saveScreenshot(QStringLiteral("hidpi-window"));

        // Every chart of the window draws into a buffer at the screen's ratio.
        const QList<QCustomPlot *> plots = m_window->findChildren<QCustomPlot *>();
        QVERIFY(plots.size() >= 8); // the Run page's, the comparison's, the matrix's
        for (const QCustomPlot *plot : plots)
            QVERIFY2(plot->bufferDevicePixelRatio() == 2.0, qPrintable(plot->objectName()));

        // And what it draws is sharp at 2x: the histogram's bars, grid and labels cut across 2x2 pixel blocks, where
        // the same chart drawn at 1x and scaled up has none cut (checked on the same plot, forced to 1x).
        QCustomPlot *histogram = m_window->runPage()->histogramPlot();
        const QImage sharp = histogram->toPixmap(0, 0, 2.0).toImage();
        QCOMPARE(sharp.size(), histogram->size() * 2);
        QVERIFY(colourCount(sharp) > 10);
        const QImage blurred = histogram->toPixmap(0, 0, 1.0).toImage().scaled(sharp.size());
        const double sharpShare = splitBlockShare(sharp);
        const double blurredShare = splitBlockShare(blurred);
        QVERIFY2(sharpShare > 0.3 && blurredShare < 0.01,
            qPrintable(QStringLiteral("split blocks: %1 at 2x, %2 at 1x scaled up").arg(sharpShare).arg(blurredShare)));
        const QImage onScreen = histogram->grab().toImage();
        QCOMPARE(onScreen.size(), histogram->size() * 2);
        QVERIFY2(splitBlockShare(onScreen) > 0.3, qPrintable(QString::number(splitBlockShare(onScreen))));
    }

    void pngExportsAreTwiceTheirSize()
    {
        QTemporaryDir out;
        const QString png = out.filePath(QStringLiteral("run.png"));
        QString error;
        QVERIFY2(m_window->resultsController()->exportTo(png, QStringLiteral("png"), false, &error), qPrintable(error));
        QImageReader reader(png);
        QCOMPARE(reader.size(), QSize(2000, 1200)); // the 1000x600 chart at 2x
        const QImage image = reader.read();
        QVERIFY(splitBlockShare(image) > 0.3);
    }
};

int main(int argc, char **argv)
{
    // Before the application exists: the scale factor is read once, as a 2x desktop sets it.
    qputenv("QT_SCALE_FACTOR", "2");
    QApplication app(argc, argv);
    TestHiDpi test;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&test, argc, argv);
}

#include "tst_hidpi.moc"
