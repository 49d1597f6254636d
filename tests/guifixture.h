#pragma once
// What the GUI test executables share: one window offscreen, on a throwaway run history, with the embedded
// default (built-in servers started from the rpcscope-cli next to the tests), and helpers that drive it.
#include "builtinservers.h"
#include "mainwindow.h"
#include "resultscontroller.h"
#include "runlauncher.h"
#include "runpage.h"
#include "runrecorder.h"
#include "scenariodocuments.h"
#include "schemacontroller.h"

#include <QComboBox>
#include <QDir>
#include <QMessageBox>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

namespace rpcscope {

class GuiFixture : public QObject {
protected:
    QTemporaryDir m_historyDir; ///< the window's run history lives here, not in the user's data folder
    std::unique_ptr<MainWindow> m_window;

    template<typename T> T *child(const char *name)
    {
        T *widget = m_window->findChild<T *>(QLatin1String(name));
        if (!widget)
            qFatal("no widget %s", name);
        return widget;
    }

    /// Fills the metadata table through its Add button and cells, as a user would.
    void setMetadata(const QList<QPair<QString, QString>> &pairs)
    {
        auto *table = child<QTableWidget>("metadataTable");
        for (int guard = 0; table->rowCount() > 0 && guard < 100; ++guard) {
            table->selectRow(0);
            QTest::mouseClick(child<QPushButton>("metadataRemove"), Qt::LeftButton);
        }
        QCOMPARE(table->rowCount(), 0);
        for (const auto &[key, value] : pairs) {
            QTest::mouseClick(child<QPushButton>("metadataAdd"), Qt::LeftButton);
            const int row = table->rowCount() - 1;
            table->item(row, 0)->setText(key);
            table->item(row, 1)->setText(value);
        }
    }

    void selectSecurity(const char *mode)
    {
        auto *combo = child<QComboBox>("securityCombo");
        combo->setCurrentIndex(combo->findData(QLatin1String(mode)));
    }

    QString summaryValue(const QString &metric)
    {
        QTableWidget *table = m_window->runPage()->summaryTable();
        for (int row = 0; row < table->rowCount(); ++row) {
            if (table->item(row, 0)->text() == metric)
                return table->item(row, 1)->text();
        }
        return QString();
    }

    /// Brings @p page forward in the results tabs (each page is in a scroll area there).
    void showResultsPage(QWidget *page)
    {
        auto *tabs = m_window->findChild<QTabWidget *>(QStringLiteral("resultTabs"));
        for (int i = 0; i < tabs->count(); ++i) {
            auto *area = qobject_cast<QScrollArea *>(tabs->widget(i));
            if (area && area->widget() == page)
                tabs->setCurrentIndex(i);
        }
        QCOMPARE(qobject_cast<QScrollArea *>(tabs->currentWidget())->widget(), page);
    }

    /// The window as a PNG named @p name in $RPCSCOPE_SCREENSHOTS, only when set (make the pictures, then look at
    /// them): tests leave no files behind otherwise.
    void saveScreenshot(const QString &name)
    {
        const QString dir = qEnvironmentVariable("RPCSCOPE_SCREENSHOTS");
        if (dir.isEmpty())
            return;
        QCoreApplication::processEvents(); // the queued replots
        const QString path = QDir(dir).filePath(name + QStringLiteral(".png"));
        QVERIFY(m_window->grab().save(path));
        qInfo("screenshot: %s", qPrintable(path));
    }

    /// For initTestCase(): the window with its history under m_historyDir and the built-in servers up.
    void openWindow()
    {
        // Settings and standard paths in test locations: the suite neither reads nor changes the user's.
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear(); // and nothing carried over from the previous run of the suite (trusted documents, tabs)
        // The editor stays beside the results (a click on a folded-away button lands nowhere); tst_gui's layout
        // test turns the folding on.
        QSettings().setValue(QStringLiteral("layout/autoCollapse"), false);
        qputenv("RPCSCOPE_DB", m_historyDir.filePath(QStringLiteral("runs.sqlite")).toUtf8());
        m_window = std::make_unique<MainWindow>();
        child<QTabWidget>("scenarioTabs")->setCurrentIndex(0); // the tab is remembered across sessions
        // No modal question may block the suite: unsaved changes are discarded unless a test says otherwise.
        m_window->scenarioDocuments()->setUnsavedChangesAsker([] { return int(QMessageBox::Discard); });
        // Nor the question about a document that names files outside its folder: not opened, unless a test says.
        m_window->scenarioDocuments()->setFileAccessAsker([](const QString &, const QStringList &) { return false; });
        QString error;
        QVERIFY2(m_window->startEmbeddedDefault(&error, QStringLiteral(RPCSCOPE_CLI)), qPrintable(error));
        // Pictures for the README are taken at a laptop's size, as make screenshots takes its own.
        if (!qEnvironmentVariable("RPCSCOPE_SCREENSHOTS").isEmpty())
            m_window->resize(1366, 768);
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    }
};

} // namespace rpcscope
