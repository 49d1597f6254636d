#pragma once

#include <QObject>
#include <QString>
#include <QStringList>

#include <functional>

class QWidget;

namespace rpcscope {

class ScenarioPage;
class SchemaController;

/**
 * The scenario document (*.rpcscope.json, the format `rpcscope-cli run --scenario` reads): open, save and new, its
 * path, whether it has unsaved changes, the recent files, and the questions around them ("save unsaved changes?",
 * "this document starts COMMAND: run it?"). The questions can be replaced (tests answer them themselves). The
 * document's window shows it: its title names the file, and its modified flag ([*]) is the unsaved state.
 */
class ScenarioDocuments : public QObject {
    Q_OBJECT
public:
    /// Asks the user for a file to open, given a dialog caption and a name filter; empty = cancelled.
    using PathAsker = std::function<QString(const QString &caption, const QString &filter)>;

    /// Edits @p page's scenario with @p schema's sources, shown in @p window (which also parents the dialogs).
    ScenarioDocuments(ScenarioPage *page, SchemaController *schema, QWidget *window);

    bool open(const QString &path, QString *error = nullptr);
    bool save(const QString &path, QString *error = nullptr);
    /// The built-in schema and Echo with 1 KiB: a fresh, untitled document.
    void newScenario();
    /// Asks to save unsaved changes: true when it is fine to go on (saved, discarded, or nothing to save).
    bool maybeSave();

    /// Where the document was opened from or saved to; empty while untitled.
    QString path() const { return m_path; }
    /// The file name, or "untitled".
    QString displayName() const;
    bool isModified() const;
    void setModified(bool modified);
    /// The documents opened or saved last, newest first (at most 10).
    QStringList recentFiles() const;

    /// Replaces the file dialog of File > Open scenario.
    void setOpenPathAsker(PathAsker ask) { m_askOpenPath = std::move(ask); }
    /// Replaces the "save unsaved changes?" question; @p ask returns QMessageBox::Save, Discard or Cancel.
    void setUnsavedChangesAsker(std::function<int()> ask) { m_askUnsaved = std::move(ask); }
    /// Replaces the "this document starts COMMAND: run it?" question.
    void setTrustAsker(std::function<bool(const QString &path, const QString &command)> ask)
    {
        m_askTrust = std::move(ask);
    }

    /// Replaces the "this document names files outside its folder (or would overwrite some): open it?" question;
    /// @p problems are the document's fields and what is wrong with each.
    void setFileAccessAsker(std::function<bool(const QString &path, const QStringList &problems)> ask)
    {
        m_askFileAccess = std::move(ask);
    }

    // What the File menu's actions do: the questions and dialogs, then the above.
    void newAfterAsking();
    void openWithDialog();
    void openRecent(const QString &path);
    void saveWithDialog();
    void saveAsWithDialog();

Q_SIGNALS:
    void recentFilesChanged();
    void statusMessage(const QString &text, int timeoutMs);

private:
    void setPath(const QString &path);
    /// Whether the file at @p path, as it is now, was saved here or allowed by the user (questions answered yes).
    bool isTrusted(const QString &path) const;
    void trust(const QString &path);
    /// The save dialog, starting at @p suggestion; empty = cancelled.
    QString askSavePath(const QString &caption, const QString &suggestion) const;

    ScenarioPage *m_page;
    SchemaController *m_schema;
    QWidget *m_window;
    QString m_path;
    PathAsker m_askOpenPath;
    std::function<int()> m_askUnsaved;
    std::function<bool(const QString &, const QString &)> m_askTrust;
    std::function<bool(const QString &, const QStringList &)> m_askFileAccess;
};

} // namespace rpcscope
