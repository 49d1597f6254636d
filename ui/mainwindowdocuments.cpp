// MainWindow's scenario documents: open, save, new, the recent-files menu and the unsaved-changes prompt.
#include "mainwindow.h"

#include "scenario/scenario.h"
#include "scenariopage.h"
#include "schemacontroller.h"
#include "schemapanel.h"
#include "server/servercommand.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QSettings>
#include <QStatusBar>

namespace rpcscope {

bool MainWindow::openScenario(const QString &path, QString *error)
{
    std::optional<Scenario> scenario = Scenario::load(path, error);
    if (!scenario)
        return false;
    // A document can name a program to start: the user sees the command and decides before anything runs.
    bool commandRefused = false;
    if (looksLikeCommand(scenario->target) && !m_askTrust(path, scenario->target)) {
        scenario->target = QStringLiteral("builtin");
        commandRefused = true;
    }
    // Its schema first, so its method can be picked; a schema that does not load leaves everything as it was.
    if (!m_schema->loadForScenario(*scenario)) {
        if (error)
            *error = tr("%1: its schema does not load (see the schema dock)").arg(path);
        return false;
    }
    m_schemaPanel->selectMethod(scenario->method);
    m_scenario->setScenario(*scenario);
    setScenarioPath(path);
    if (commandRefused) {
        setWindowModified(true);
        statusBar()->showMessage(tr("Opened %1; its server command is not used (the target is the built-in server)")
                                     .arg(QFileInfo(path).fileName()),
            15000);
    } else {
        statusBar()->showMessage(tr("Opened %1").arg(QFileInfo(path).fileName()), 10000);
    }
    return true;
}

bool MainWindow::saveScenario(const QString &path, QString *error)
{
    Scenario scenario = m_scenario->scenario();
    m_schema->describeIn(&scenario);
    if (!scenario.save(path, error))
        return false;
    setScenarioPath(path);
    statusBar()->showMessage(tr("Saved %1").arg(QFileInfo(path).fileName()), 10000);
    return true;
}

void MainWindow::newScenario()
{
    m_schema->useBuiltin(true);
    Scenario fresh;
    fresh.method = QStringLiteral("rpcscope.bench.v1.Bench/Echo");
    fresh.fills = { QStringLiteral("payload=1KiB") };
    fresh.calls = 20000;
    fresh.concurrency = 20;
    m_schemaPanel->selectMethod(fresh.method);
    m_scenario->setScenario(fresh);
    setScenarioPath(QString());
}

void MainWindow::setScenarioPath(const QString &path)
{
    m_scenarioPath = path;
    setWindowModified(false);
    setWindowTitle((path.isEmpty() ? tr("untitled") : QFileInfo(path).fileName()) + QStringLiteral("[*] — rpcscope"));
    if (path.isEmpty())
        return;
    QSettings settings;
    QStringList recent = settings.value(QStringLiteral("scenarios/recent")).toStringList();
    recent.removeAll(QFileInfo(path).absoluteFilePath());
    recent.prepend(QFileInfo(path).absoluteFilePath());
    settings.setValue(QStringLiteral("scenarios/recent"), recent.mid(0, 10));
    updateRecentMenu();
}

void MainWindow::updateRecentMenu()
{
    if (!m_recentMenu)
        return;
    m_recentMenu->clear();
    const QStringList recent = QSettings().value(QStringLiteral("scenarios/recent")).toStringList();
    for (const QString &path : recent) {
        m_recentMenu
            ->addAction(QFileInfo(path).fileName(), this,
                [this, path] {
                    QString error;
                    if (maybeSave() && !openScenario(path, &error))
                        QMessageBox::warning(this, tr("Open scenario"), error);
                })
            ->setToolTip(path);
    }
    m_recentMenu->setEnabled(!recent.isEmpty());
}

bool MainWindow::maybeSave()
{
    if (!isWindowModified())
        return true;
    const int answer = m_askUnsaved();
    if (answer == QMessageBox::Cancel)
        return false;
    if (answer == QMessageBox::Discard)
        return true;
    QString error;
    const QString path = m_scenarioPath.isEmpty() ? QFileDialog::getSaveFileName(this, tr("Save scenario"),
                             tr("scenario.rpcscope.json"), tr("rpcscope scenarios (*.rpcscope.json)"))
                                                  : m_scenarioPath;
    if (path.isEmpty())
        return false;
    if (!saveScenario(path, &error)) {
        QMessageBox::warning(this, tr("Save scenario"), error);
        return false;
    }
    return true;
}

} // namespace rpcscope
