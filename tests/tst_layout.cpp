// The window at laptop sizes: every page and dialog at 1366x768 and at the window's minimum size, which must fit
// 1024x640; no visible label, button or combo box narrower than its text needs (clipped text).
#include "guifixture.h"

#include "abdialog.h"
#include "comparepage.h"
#include "elidedlabel.h"
#include "mainwindow.h"
#include "sourceviewer.h"

#include <QAbstractButton>
#include <QCheckBox>
#include <QDockWidget>
#include <QLabel>
#include <QScreen>
#include <QStyle>
#include <QStyleOptionComboBox>

using namespace rpcscope;

class LayoutTest : public GuiFixture {
    Q_OBJECT

    /// Widgets under @p root shown on screen whose text is cut: narrower than their size hint asks.
    static QStringList clippedWidgets(QWidget *root)
    {
        QStringList clipped;
        for (QWidget *w : root->findChildren<QWidget *>()) {
            if (!w->isVisibleTo(root) || w->visibleRegion().isEmpty())
                continue;
            QString text;
            if (qobject_cast<ElidedLabel *>(w))
                continue; // elides its text to fit, by design
            if (auto *label = qobject_cast<QLabel *>(w)) {
                if (label->wordWrap() || label->text().isEmpty() || !label->pixmap().isNull())
                    continue;
                text = label->text();
            } else if (auto *button = qobject_cast<QAbstractButton *>(w)) {
                if (button->text().isEmpty())
                    continue;
                text = button->text();
            }
            int needed = w->sizeHint().width();
            if (auto *combo = qobject_cast<QComboBox *>(w)) {
                if (combo->isEditable() || combo->count() == 0)
                    continue;
                // The text shown, not the longest item (which its size hint asks room for).
                text = combo->currentText();
                QStyleOptionComboBox option;
                option.initFrom(combo);
                option.currentText = text;
                const QSize content(combo->fontMetrics().horizontalAdvance(text), combo->fontMetrics().height());
                needed = combo->style()->sizeFromContents(QStyle::CT_ComboBox, &option, content, combo).width();
            } else if (auto *button = qobject_cast<QAbstractButton *>(w); button && !qobject_cast<QCheckBox *>(w)) {
                // The text and a little room, not the style's minimum button width.
                needed = button->fontMetrics().horizontalAdvance(QString(text).remove(u'&')) + 6;
            } else if (text.isEmpty()) {
                continue;
            }
            if (w->width() < needed)
                clipped << QStringLiteral("%1 \"%2\" (%3 < %4 px)")
                               .arg(w->objectName().isEmpty() ? QLatin1String(w->metaObject()->className())
                                                              : w->objectName(),
                                   text.left(40))
                               .arg(w->width())
                               .arg(needed);
        }
        return clipped;
    }

private Q_SLOTS:
    void initTestCase() { openWindow(); }
    void cleanupTestCase() { m_window.reset(); }

    void theWindowFitsASmallLaptop()
    {
        if (qEnvironmentVariableIsSet("RPCSCOPE_LAYOUT_DEBUG")) {
            for (QWidget *w : m_window->findChildren<QWidget *>()) {
                const QSize m = w->minimumSizeHint().expandedTo(w->minimumSize());
                if (m.width() >= 250 || m.height() >= 250)
                    qInfo("%s %s parent=%s min %dx%d", w->metaObject()->className(), qPrintable(w->objectName()),
                        w->parentWidget() ? w->parentWidget()->metaObject()->className() : "-", m.width(), m.height());
            }
        }
        const QSize least = m_window->minimumSizeHint().expandedTo(m_window->minimumSize());
        QVERIFY2(least.width() <= 1024 && least.height() <= 640,
            qPrintable(QStringLiteral("the window cannot shrink below %1x%2").arg(least.width()).arg(least.height())));
    }

    void everyPageAtLaptopSizesClipsNoText_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::newRow("1366x768") << QSize(1366, 768);
        QTest::newRow("1280x720") << QSize(1280, 720);
        QTest::newRow("minimum") << QSize();
    }

    void everyPageAtLaptopSizesClipsNoText()
    {
        QFETCH(QSize, size);
        const QSize target = size.isValid() ? size : m_window->minimumSizeHint();
        m_window->resize(target);
        auto *results = child<QTabWidget>("resultTabs");
        auto *scenarioTabs = child<QTabWidget>("scenarioTabs");
        QStringList clipped;
        for (int page = 0; page < results->count(); ++page) {
            results->setCurrentIndex(page);
            for (int tab = 0; tab < scenarioTabs->count(); ++tab) {
                scenarioTabs->setCurrentIndex(tab);
                QCoreApplication::processEvents();
                if (page == 0)
                    saveScreenshot(QStringLiteral("layout-%1x%2-%3")
                                       .arg(target.width())
                                       .arg(target.height())
                                       .arg(scenarioTabs->tabText(tab).section(u' ', 0, 0).toLower()));
                for (const QString &c : clippedWidgets(m_window.get()))
                    clipped << QStringLiteral("%1 / %2: %3").arg(results->tabText(page), scenarioTabs->tabText(tab), c);
            }
        }
        scenarioTabs->setCurrentIndex(0);
        results->setCurrentIndex(0);
        clipped.removeDuplicates();
        saveScreenshot(QStringLiteral("layout-%1x%2").arg(target.width()).arg(target.height()));
        QVERIFY2(clipped.isEmpty(), qPrintable(clipped.join(u'\n')));
    }

    /// @p dialog at each of @p sizes: shown, no clipped text, a minimum that fits 1024x640.
    static void checkDialog(QDialog *dialog, const QList<QSize> &sizes)
    {
        for (const QSize &size : sizes) {
            dialog->resize(size);
            dialog->show();
            QVERIFY(QTest::qWaitForWindowExposed(dialog));
            const QStringList clipped = clippedWidgets(dialog);
            QVERIFY2(clipped.isEmpty(), qPrintable(clipped.join(u'\n')));
            QVERIFY(dialog->minimumSizeHint().width() <= 1024 && dialog->minimumSizeHint().height() <= 640);
        }
    }

    void theAbDialogClipsNoText()
    {
        AbDialog dialog(m_window.get());
        checkDialog(&dialog, { dialog.sizeHint(), dialog.minimumSizeHint() });
        if (const QString dir = qEnvironmentVariable("RPCSCOPE_SCREENSHOTS"); !dir.isEmpty()) {
            dialog.resize(dialog.sizeHint());
            QVERIFY(dialog.grab().save(QDir(dir).filePath(QStringLiteral("ab-dialog.png"))));
        }
    }

    void theSourceViewerClipsNoText()
    {
        // The window a schema error opens on its file and line.
        SourceViewer viewer(m_window.get());
        QVERIFY(viewer.showLocation(QStringLiteral(RPCSCOPE_TEST_DATA "/broken/syntax.proto"), 6, 3));
        checkDialog(&viewer, { QSize(1366, 768), viewer.minimumSizeHint() });
    }

    void closedDocksComeBackFromTheViewMenu()
    {
        for (QDockWidget *dock : m_window->findChildren<QDockWidget *>()) {
            dock->close();
            QVERIFY(!dock->isVisible());
            auto *show = m_window->findChild<QAction *>(QStringLiteral("actionShow") + dock->objectName());
            QVERIFY2(show, qPrintable(dock->objectName()));
            show->trigger();
            QVERIFY(dock->isVisible());
        }
    }
};

QTEST_MAIN(LayoutTest)
#include "tst_layout.moc"
