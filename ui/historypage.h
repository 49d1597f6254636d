#pragma once

#include "rundetailspanel.h"
#include "store/runrecord.h"

#include <QList>
#include <QWidget>

#include <vector>

class QAction;
class QComboBox;
class QFrame;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSortFilterProxyModel;
class QSplitter;
class QStackedWidget;
class QTabWidget;
class QTableView;
class QTableWidget;
class QTimer;
class QVBoxLayout;

namespace rpcscope {

class RunFilterProxy;
class RunListModel;
class RunStore;

/**
 * The run history: every stored run in a sortable, filterable table, with rename, labels, delete (undoable: the
 * deleted runs are loaded whole first and re-added under their ids), a details panel, and requests to open a run's
 * dashboard or compare runs, which the window carries out. Filtering happens in the view (the history is a few
 * thousand rows at most), so typing never queries the database.
 *
 * The store is not owned and may be null or closed: the page then says so instead of the table. Deletes and undos
 * are written off the GUI thread, on a connection of their own to the store's file (isBusy() meanwhile).
 */
class HistoryPage : public QWidget {
    Q_OBJECT
public:
    explicit HistoryPage(RunStore *store, QWidget *parent = nullptr);
    ~HistoryPage() override;

    /// Another store (or none); refreshes.
    void setStore(RunStore *store);
    /// A store is set and open.
    bool isAvailable() const;

    /// Ids of the selected runs, in the table's order.
    QList<qint64> selectedIds() const;
    /// Selects the runs @p ids that are shown (the first becomes current); false when none is shown.
    bool selectIds(const QList<qint64> &ids);
    /// Whether a delete can be undone now.
    bool canUndo() const { return !m_deleted.empty(); }
    /// A delete or an undo is being written; the actions that change the history wait for it.
    bool isBusy() const { return m_busy; }
    /// The error on show, empty when none.
    QString errorMessage() const;

    RunListModel *model() const { return m_model; }
    QSortFilterProxyModel *proxy() const;
    QTableView *view() const { return m_view; }
    RunDetailsPanel *detailsPanel() const { return m_details; }
    QLineEdit *textFilter() const { return m_textFilter; }
    QComboBox *methodFilter() const { return m_methodFilter; }
    QLineEdit *labelFilter() const { return m_labelFilter; }
    QComboBox *sinceFilter() const { return m_sinceFilter; }
    /// Says why there is no table (no store, or it is not open); hidden otherwise.
    QLabel *unavailableLabel() const { return m_unavailable; }
    QLabel *countLabel() const { return m_count; }

    QAction *openAction() const { return m_open; }
    QAction *compareAction() const { return m_compare; }
    QAction *renameAction() const { return m_rename; }
    QAction *editLabelsAction() const { return m_editLabels; }
    QAction *deleteAction() const { return m_delete; }
    QAction *undoAction() const { return m_undo; }
    QAction *refreshAction() const { return m_refresh; }

public Q_SLOTS:
    /// Reads the list again (after a run was saved, or another process wrote to the history), keeping the selection.
    void refresh();
    void openSelected();
    void compareSelected();
    void renameSelected();
    void editLabelsOfSelected();
    /// Deletes the selected runs and offers to undo it.
    void deleteSelected();
    /// Re-adds the runs of the last delete under their ids.
    void undoDelete();

Q_SIGNALS:
    /// Show the run's full dashboard.
    void openRunRequested(qint64 id);
    /// Compare these runs, oldest first (the first is the baseline).
    void compareRequested(const QList<qint64> &ids);
    /// These runs are gone from the store (a window showing one may want to say so).
    void runsDeleted(const QList<qint64> &ids);
    /// These runs are back after an undo.
    void runsRestored(const QList<qint64> &ids);
    /// A delete or an undo started (true) or ended (false), whatever came of it.
    void busyChanged(bool busy);

private:
    /// The toolbar (with the actions, built here) and the run count: the first row of @p layout.
    void addToolbar(QWidget *content, QVBoxLayout *layout);
    /// The text, method, label and date filters: a row of @p layout.
    void addFilters(QVBoxLayout *layout);
    /// The error bar and the undo bar (Undo, dismiss), hidden until needed, in @p layout.
    void addMessageBars(QWidget *content, QVBoxLayout *layout);
    /// The runs table: the proxy, editing by F2, sorting, compact rows, the actions in its context menu.
    void setUpView();
    /// The undo and details timers, and the connections of the table, the proxy and the filters.
    void connectSignals();
    void buildActions();
    void applyFilters();
    void updateActions();
    void updateCount();
    void updateMethods();
    void fitColumns();
    void showError(const QString &message);
    void clearError();
    void offerUndo(const QString &message);
    void dropUndo();
    void setBusy(bool busy);
    void loadDetails();
    bool writeEdit(qint64 id, int column, const QVariant &value);
    /// The run the single-run actions act on: the current row if selected, else the first selected; 0 when none.
    qint64 actionId() const;
    /// The proxy index of run @p id in @p column, invalid when hidden.
    QModelIndex proxyIndex(qint64 id, int column) const;
    /// Starts editing @p column of the run the actions apply to (rename, labels).
    void editSelectedCell(int column);

    RunStore *m_store;
    RunListModel *m_model;
    RunFilterProxy *m_proxy;
    std::vector<RunRecord> m_deleted; ///< the last delete, whole, for undo
    bool m_busy = false; ///< a delete or undo is being written
    bool m_columnsFitted = false;

    QStackedWidget *m_stack;
    QLabel *m_unavailable;
    QLineEdit *m_textFilter;
    QComboBox *m_methodFilter;
    QLineEdit *m_labelFilter;
    QComboBox *m_sinceFilter;
    QLabel *m_count;
    QFrame *m_errorBar;
    QLabel *m_errorText;
    QFrame *m_undoBar;
    QLabel *m_undoText;
    QPushButton *m_undoButton = nullptr;
    QTimer *m_undoTimer;
    QTimer *m_detailsTimer;
    QSplitter *m_splitter;
    QTableView *m_view;
    RunDetailsPanel *m_details;

    QAction *m_open = nullptr;
    QAction *m_compare = nullptr;
    QAction *m_rename = nullptr;
    QAction *m_editLabels = nullptr;
    QAction *m_delete = nullptr;
    QAction *m_undo = nullptr;
    QAction *m_refresh = nullptr;
};

} // namespace rpcscope
