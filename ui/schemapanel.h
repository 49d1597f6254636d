#pragma once

#include "schema/schema.h"

#include <QWidget>

#include <functional>

class QListWidget;
class QPushButton;
class QTreeWidget;

namespace rpcscope {

class SourceViewer;

/// The schema dock: services and methods of the loaded schema, the import paths, and the errors of the last load.
class SchemaPanel : public QWidget {
    Q_OBJECT
public:
    explicit SchemaPanel(QWidget *parent = nullptr);

    void setSchema(const Schema &schema, const QString &origin);
    void setErrors(const QList<SchemaError> &errors);
    bool selectMethod(const QString &fullName);
    /// Selects @p fullName when the schema has it, else the schema's first method; false when it has none.
    bool selectMethodOrFirst(const QString &fullName);
    QString selectedMethod() const;

    /// Folders searched for imported .proto files (besides each file's own folder and the built-in ones).
    QStringList importPaths() const;
    /// Shows @p paths; emits no importPathsChanged().
    void setImportPaths(const QStringList &paths);
    /// Adds @p path (once) and emits importPathsChanged().
    void addImportPath(const QString &path);
    /// Removes the selected paths and emits importPathsChanged().
    void removeSelectedImportPaths();
    /// What "Add folder…" asks with: a folder dialog unless replaced (tests answer it themselves).
    void setFolderAsker(std::function<QString()> ask) { m_askFolder = std::move(ask); }

    /// Opens the source viewer at error @p row of the list (what double-clicking it does); false when that file
    /// cannot be read.
    bool showError(int row);
    /// The viewer for error locations; nullptr until an error was opened.
    SourceViewer *sourceViewer() const { return m_viewer; }

    QTreeWidget *tree() const { return m_tree; }
    QListWidget *errorList() const { return m_errors; }
    QListWidget *importPathList() const { return m_importPaths; }

Q_SIGNALS:
    void methodSelected(const QString &fullName);
    /// The user added or removed an import path.
    void importPathsChanged(const QStringList &paths);

private:
    QTreeWidget *m_tree;
    QListWidget *m_importPaths;
    QPushButton *m_removeImportPath;
    QListWidget *m_errors;
    SourceViewer *m_viewer = nullptr;
    std::function<QString()> m_askFolder;
};

} // namespace rpcscope
