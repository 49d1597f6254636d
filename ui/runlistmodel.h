#pragma once

#include "store/runstore.h"

#include <QAbstractTableModel>
#include <QDateTime>
#include <QSortFilterProxyModel>

#include <functional>
#include <vector>

namespace rpcscope {

/**
 * The run history as a table: one row per RunListEntry. Display text is formatted for people (local time,
 * "1.23 ms"); SortRole gives the raw number, time or lower-case text so a QSortFilterProxyModel sorts 9 ms before
 * 10 ms and dates by time. Name and Labels are editable; an edit goes through the edit handler (the page writes it
 * to the store) and only shows when the handler accepts it, so the table never claims what the store refused.
 */
class RunListModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        IdColumn,
        StartedColumn,
        StatusColumn,
        NameColumn,
        LabelsColumn,
        MethodColumn,
        StackColumn,
        TargetColumn,
        CallsColumn,
        RpsColumn,
        P50Column,
        P99Column,
        ErrorsColumn,
        ColumnCount
    };
    enum Role {
        SortRole = Qt::UserRole, ///< number, msecs since the epoch, or lower-case text
        IdRole, ///< the run's id, on every column
    };

    /// Writes an edit of @p column (Name: QString; Labels: QStringList) of run @p id; false refuses it.
    using EditHandler = std::function<bool(qint64 id, int column, const QVariant &value)>;

    explicit RunListModel(QObject *parent = nullptr);

    void setRuns(std::vector<RunListEntry> runs);
    const std::vector<RunListEntry> &runs() const { return m_runs; }
    const RunListEntry &entry(int row) const { return m_runs.at(static_cast<size_t>(row)); }
    /// The row of run @p id, -1 when it is not listed.
    int rowOf(qint64 id) const;
    void setEditHandler(EditHandler handler) { m_editHandler = std::move(handler); }

    /// "a, b ,, c" -> {a, b, c}: trimmed, no empties, no duplicates, sorted (the store keeps labels as a set).
    static QStringList parseLabels(const QString &text);
    /// "rpcscope.bench.v1.Bench/Echo" -> "Bench/Echo": the package is what every row of one project shares.
    static QString shortMethod(const QString &method);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex &index) const override;
    bool setData(const QModelIndex &index, const QVariant &value, int role = Qt::EditRole) override;

private:
    QVariant displayData(const RunListEntry &run, int column) const;
    QVariant sortData(const RunListEntry &run, int column) const;
    QVariant toolTipData(const RunListEntry &run, int column) const;

    std::vector<RunListEntry> m_runs;
    EditHandler m_editHandler;
};

/// The History page's filters, applied to the model's rows in memory: as the store's RunFilter, plus the
/// transport and codec in the free text. Typing filters without a query.
class RunFilterProxy : public QSortFilterProxyModel {
public:
    using QSortFilterProxyModel::QSortFilterProxyModel;

    void setFilters(const QString &text, const QString &method, const QString &label, const QDateTime &since);

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const override;

private:
    QString m_text;
    QString m_method;
    QString m_label;
    QDateTime m_since;
};

} // namespace rpcscope
