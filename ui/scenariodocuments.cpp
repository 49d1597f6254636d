#include "scenariodocuments.h"

#include "scenario/confinement.h"
#include "scenario/scenario.h"
#include "scenariopage.h"
#include "schemacontroller.h"
#include "server/servercommand.h"
#include "util/inputfile.h"

#include <QCryptographicHash>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>
#include <QSettings>

namespace rpcscope {

ScenarioDocuments::ScenarioDocuments(ScenarioPage *page, SchemaController *schema, QWidget *window)
    : QObject(window), m_page(page), m_schema(schema), m_window(window)
{
    connect(m_page, &ScenarioPage::edited, this, [this] { setModified(true); });
    m_askOpenPath = [this](const QString &caption, const QString &filter) {
        return QFileDialog::getOpenFileName(m_window, caption, QString(), filter);
    };
    m_askTrust = [this](const QString &path, const QString &command) {
        return QMessageBox::warning(m_window, tr("Server command"),
                   tr("%1 starts this program when it runs:\n\n%2\n\nRun it? Choose No to use the built-in "
                      "server instead.")
                       .arg(QFileInfo(path).fileName(), command),
                   QMessageBox::Yes | QMessageBox::No, QMessageBox::No)
            == QMessageBox::Yes;
    };
    m_askFileAccess = [this](const QString &path, const QStringList &problems) {
        QMessageBox box(QMessageBox::Warning, tr("Files outside the scenario's folder"),
            tr("%1 names files outside its own folder, or would overwrite files. A scenario someone shared with you "
               "should not need that.\n\nOpen it and let it use them?")
                .arg(QFileInfo(path).fileName()),
            QMessageBox::Yes | QMessageBox::No, m_window);
        box.setDetailedText(problems.join(u'\n'));
        box.setDefaultButton(QMessageBox::No);
        return box.exec() == QMessageBox::Yes;
    };
    m_askUnsaved = [this] {
        return static_cast<int>(
            QMessageBox::question(m_window, tr("Unsaved scenario"), tr("The scenario has unsaved changes. Save them?"),
                QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save));
    };
}

namespace {

/// The document's bytes, hashed: what "trusted" refers to, so a trusted file that changes is asked about again.
QString documentHash(const QString &path)
{
    const std::optional<QByteArray> data = readInputFile(path, inputlimits::kDocument, nullptr);
    if (!data)
        return {};
    return QString::fromLatin1(QCryptographicHash::hash(*data, QCryptographicHash::Sha256).toHex());
}

const QString kTrustedKey = QStringLiteral("scenarios/trusted");

} // namespace

bool ScenarioDocuments::isTrusted(const QString &path) const
{
    const QString hash = documentHash(path);
    return !hash.isEmpty() && QSettings().value(kTrustedKey).toStringList().contains(hash);
}

void ScenarioDocuments::trust(const QString &path)
{
    const QString hash = documentHash(path);
    if (hash.isEmpty())
        return;
    QSettings settings;
    QStringList trusted = settings.value(kTrustedKey).toStringList();
    trusted.removeAll(hash);
    trusted.prepend(hash);
    settings.setValue(kTrustedKey, trusted.mid(0, 500));
}

bool ScenarioDocuments::open(const QString &path, QString *error)
{
    // A draft opens whatever its values (the editor shows their problems); only a broken file is refused.
    std::optional<Scenario> scenario = Scenario::load(path, error, DocumentCheck::ShapeOnly);
    if (!scenario)
        return false;
    // A document this user saved here, or allowed before, unchanged since: nothing to ask.
    const bool trusted = isTrusted(path);
    // A shared one may not read or write files outside its folder, or overwrite one, unless the user says so.
    QStringList outside;
    if (!trusted) {
        for (const ScenarioProblem &problem : confinementProblems(*scenario, path))
            outside << problem.text();
    }
    if (!outside.isEmpty() && !m_askFileAccess(path, outside)) {
        if (error)
            *error = tr("%1: not opened; it names files outside its folder:\n%2").arg(path, outside.join(u'\n'));
        return false;
    }
    // A document can name a program to start: the user sees the command and decides before anything runs.
    bool commandRefused = false;
    if (!trusted && looksLikeCommand(scenario->target) && !m_askTrust(path, scenario->target)) {
        scenario->target = QStringLiteral("builtin");
        commandRefused = true;
    }
    // Its schema first, so its method can be picked; a schema that does not load leaves everything as it was.
    if (!m_schema->loadForScenario(*scenario)) {
        if (error)
            *error = tr("%1: its schema does not load (see the schema dock)").arg(path);
        return false;
    }
    m_schema->selectMethod(scenario->method);
    m_page->setScenario(*scenario);
    setPath(path);
    if (!trusted && !commandRefused)
        trust(path); // everything it asks for was allowed
    if (commandRefused) {
        setModified(true);
        Q_EMIT statusMessage(tr("Opened %1; its server command is not used (the target is the built-in server)")
                                 .arg(QFileInfo(path).fileName()),
            15000);
    } else {
        Q_EMIT statusMessage(tr("Opened %1").arg(QFileInfo(path).fileName()), 10000);
    }
    return true;
}

bool ScenarioDocuments::save(const QString &path, QString *error)
{
    Scenario scenario = m_page->scenario();
    m_schema->describeIn(&scenario);
    if (!scenario.save(path, error))
        return false;
    trust(path); // the user's own document: reopened as it is, it asks nothing
    setPath(path);
    Q_EMIT statusMessage(tr("Saved %1").arg(QFileInfo(path).fileName()), 10000);
    return true;
}

void ScenarioDocuments::newScenario()
{
    m_schema->useBuiltin(true);
    Scenario fresh;
    fresh.method = QStringLiteral("rpcscope.bench.v1.Bench/Echo");
    fresh.fills = { QStringLiteral("payload=1KiB") };
    fresh.calls = 20000;
    fresh.concurrency = 20;
    m_schema->selectMethod(fresh.method);
    m_page->setScenario(fresh);
    setPath(QString());
}

QString ScenarioDocuments::displayName() const
{
    return m_path.isEmpty() ? tr("untitled") : QFileInfo(m_path).fileName();
}

bool ScenarioDocuments::isModified() const
{
    return m_window->isWindowModified();
}

void ScenarioDocuments::setModified(bool modified)
{
    m_window->setWindowModified(modified);
}

void ScenarioDocuments::setPath(const QString &path)
{
    m_path = path;
    setModified(false);
    m_window->setWindowTitle(displayName() + QStringLiteral("[*] — rpcscope"));
    if (path.isEmpty())
        return;
    QSettings settings;
    QStringList recent = settings.value(QStringLiteral("scenarios/recent")).toStringList();
    recent.removeAll(QFileInfo(path).absoluteFilePath());
    recent.prepend(QFileInfo(path).absoluteFilePath());
    settings.setValue(QStringLiteral("scenarios/recent"), recent.mid(0, 10));
    Q_EMIT recentFilesChanged();
}

QStringList ScenarioDocuments::recentFiles() const
{
    return QSettings().value(QStringLiteral("scenarios/recent")).toStringList();
}

QString ScenarioDocuments::askSavePath(const QString &caption, const QString &suggestion) const
{
    // A name typed without a suffix ("sum-python") gets .rpcscope.json, so that Open finds it again; the dialog adds it
    // before it asks about overwriting, so an existing document is never replaced without asking.
    QFileDialog dialog(m_window, caption, suggestion, tr("rpcscope scenarios (*.rpcscope.json)"));
    dialog.setAcceptMode(QFileDialog::AcceptSave);
    dialog.setDefaultSuffix(QStringLiteral("rpcscope.json"));
    return dialog.exec() == QDialog::Accepted ? dialog.selectedFiles().value(0) : QString();
}

bool ScenarioDocuments::maybeSave()
{
    if (!isModified())
        return true;
    const int answer = m_askUnsaved();
    if (answer == QMessageBox::Cancel)
        return false;
    if (answer == QMessageBox::Discard)
        return true;
    QString error;
    const QString path = m_path.isEmpty() ? askSavePath(tr("Save scenario"), tr("scenario.rpcscope.json")) : m_path;
    if (path.isEmpty())
        return false;
    if (!save(path, &error)) {
        QMessageBox::warning(m_window, tr("Save scenario"), error);
        return false;
    }
    return true;
}

void ScenarioDocuments::newAfterAsking()
{
    if (maybeSave())
        newScenario();
}

void ScenarioDocuments::openWithDialog()
{
    if (!maybeSave())
        return;
    const QString path
        = m_askOpenPath(tr("Open scenario"), tr("rpcscope scenarios (*.rpcscope.json);;JSON (*.json);;All files (*)"));
    QString error;
    if (!path.isEmpty() && !open(path, &error))
        QMessageBox::warning(m_window, tr("Open scenario"), error);
}

void ScenarioDocuments::openRecent(const QString &path)
{
    QString error;
    if (maybeSave() && !open(path, &error))
        QMessageBox::warning(m_window, tr("Open scenario"), error);
}

void ScenarioDocuments::saveWithDialog()
{
    QString error;
    const QString path = m_path.isEmpty() ? askSavePath(tr("Save scenario"), tr("scenario.rpcscope.json")) : m_path;
    if (!path.isEmpty() && !save(path, &error))
        QMessageBox::warning(m_window, tr("Save scenario"), error);
}

void ScenarioDocuments::saveAsWithDialog()
{
    QString error;
    const QString path = askSavePath(tr("Save scenario as"), m_path.isEmpty() ? tr("scenario.rpcscope.json") : m_path);
    if (!path.isEmpty() && !save(path, &error))
        QMessageBox::warning(m_window, tr("Save scenario"), error);
}

} // namespace rpcscope
