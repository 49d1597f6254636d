#pragma once

#include <QList>
#include <QPair>
#include <QWidget>

class QPushButton;
class QTableWidget;

namespace rpcscope {

/// Metadata (gRPC metadata, HTTP headers) as a two-column key/value table with Add and Remove.
class MetadataEditor : public QWidget {
    Q_OBJECT
public:
    explicit MetadataEditor(QWidget *parent = nullptr);

    /// The rows in order, trimmed; rows with neither key nor value are left out (a row just added and not filled).
    QList<QPair<QString, QString>> pairs() const;
    /// Replaces the rows; emits no edited().
    void setPairs(const QList<QPair<QString, QString>> &pairs);

    /// Appends a row and starts editing its key.
    void addRow();
    /// Removes the selected rows (or the current one).
    void removeSelectedRows();

    QTableWidget *table() const { return m_table; }

Q_SIGNALS:
    void edited();

private:
    void appendRow(const QString &key, const QString &value);

    QTableWidget *m_table;
    QPushButton *m_remove;
    bool m_loading = false;
};

} // namespace rpcscope
