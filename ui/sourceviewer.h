#pragma once

#include <QDialog>

class QLabel;
class QPlainTextEdit;

namespace rpcscope {

/// A read-only view of a source file with one line highlighted and scrolled to (a schema error's place).
class SourceViewer : public QDialog {
    Q_OBJECT
public:
    explicit SourceViewer(QWidget *parent = nullptr);

    /// Shows @p path with @p line (1-based) highlighted and the cursor at @p column; false when it cannot be read
    /// (the viewer then says why).
    bool showLocation(const QString &path, int line, int column = 0);

    QString path() const { return m_path; }
    /// The line the cursor is on (1-based).
    int currentLine() const;
    QPlainTextEdit *editor() const { return m_editor; }

private:
    QString m_path;
    QLabel *m_header;
    QPlainTextEdit *m_editor;
};

} // namespace rpcscope
