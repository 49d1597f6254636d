#include "historypage.h"

#include "backgroundjob.h"
#include "layoutmemory.h"
#include "runlistmodel.h"
#include "store/runstore.h"

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QFrame>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStackedWidget>
#include <QStyle>
#include <QStyledItemDelegate>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace rpcscope {

namespace {

enum Since { SinceAll, SinceToday, Since7Days, Since30Days };

/// Editors that say what they expect: labels are one line, comma-separated.
class RunEditDelegate : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;

    QWidget *createEditor(QWidget *parent, const QStyleOptionViewItem &option, const QModelIndex &index) const override
    {
        QWidget *editor = QStyledItemDelegate::createEditor(parent, option, index);
        if (auto *line = qobject_cast<QLineEdit *>(editor)) {
            const bool labels = index.column() == RunListModel::LabelsColumn;
            line->setPlaceholderText(labels ? HistoryPage::tr("labels, comma-separated") : HistoryPage::tr("a name"));
            line->setToolTip(labels ? HistoryPage::tr("Comma-separated, e.g. baseline, protobuf 4.25; Enter saves, "
                                                      "Esc cancels")
                                    : HistoryPage::tr("Enter saves, Esc cancels; empty removes the name"));
        }
        return editor;
    }
};

/// A one-line bar above the table: an icon, a message, optional buttons, a close button.
QFrame *messageBar(QWidget *parent, QStyle::StandardPixmap icon, QLabel **text, QHBoxLayout **layout)
{
    auto *bar = new QFrame(parent);
    bar->setFrameShape(QFrame::StyledPanel);
    // AlternateBase follows the palette, so the bar stands out a little in light and dark themes alike.
    bar->setBackgroundRole(QPalette::AlternateBase);
    bar->setAutoFillBackground(true);
    auto *row = new QHBoxLayout(bar);
    row->setContentsMargins(6, 3, 3, 3);
    auto *iconLabel = new QLabel(bar);
    const int size = bar->style()->pixelMetric(QStyle::PM_SmallIconSize);
    iconLabel->setPixmap(bar->style()->standardIcon(icon).pixmap(size, size));
    row->addWidget(iconLabel);
    *text = new QLabel(bar);
    (*text)->setWordWrap(true);
    (*text)->setTextInteractionFlags(Qt::TextSelectableByMouse);
    row->addWidget(*text, 1);
    *layout = row;
    bar->hide();
    return bar;
}

/// What a delete or an undo did, written on a pool thread with a connection of its own.
struct HistoryWrite {
    std::vector<RunRecord> done; ///< a delete: the runs removed, whole (for undo)
    QList<qint64> ids; ///< the runs deleted or restored
    std::vector<RunRecord> failed; ///< an undo: the runs that could not be added back
    QStringList problems;
};

/// Deletes runs @p ids from the history at @p path, each loaded whole first: one that cannot be read back could not
/// be brought back, so it is kept.
HistoryWrite deleteRuns(const QString &path, const QList<qint64> &ids)
{
    HistoryWrite write;
    RunStore store;
    QString error;
    if (!store.open(path, &error)) {
        write.problems << error;
        return write;
    }
    for (const qint64 id : ids) {
        std::optional<RunRecord> run = store.load(id, &error);
        if (!run) {
            write.problems << HistoryPage::tr("run #%1 could not be read, so it is kept: %2").arg(id).arg(error);
            continue;
        }
        if (!store.remove(id, &error)) {
            write.problems << HistoryPage::tr("run #%1: %2").arg(id).arg(error);
            continue;
        }
        write.ids << id;
        write.done.push_back(std::move(*run));
    }
    return write;
}

/// Adds @p runs back to the history at @p path under their ids.
HistoryWrite restoreRuns(const QString &path, const std::vector<RunRecord> &runs)
{
    HistoryWrite write;
    RunStore store;
    QString error;
    const bool open = store.open(path, &error);
    for (const RunRecord &run : runs) {
        const qint64 id = open ? store.addRun(run, &error) : 0;
        if (id == 0) {
            write.problems << HistoryPage::tr("run #%1: %2").arg(run.id).arg(error);
            write.failed.push_back(run);
        } else {
            write.ids << id;
        }
    }
    return write;
}

QToolButton *closeButton(QWidget *parent)
{
    auto *close = new QToolButton(parent);
    close->setAutoRaise(true);
    close->setIcon(parent->style()->standardIcon(QStyle::SP_TitleBarCloseButton));
    close->setToolTip(HistoryPage::tr("Dismiss"));
    return close;
}

} // namespace

HistoryPage::HistoryPage(RunStore *store, QWidget *parent)
    : QWidget(parent)
    , m_store(store)
    , m_model(new RunListModel(this))
    , m_proxy(new RunFilterProxy(this))
    , m_stack(new QStackedWidget(this))
    , m_unavailable(new QLabel(this))
    , m_textFilter(new QLineEdit(this))
    , m_methodFilter(new QComboBox(this))
    , m_labelFilter(new QLineEdit(this))
    , m_sinceFilter(new QComboBox(this))
    , m_count(new QLabel(this))
    , m_undoTimer(new QTimer(this))
    , m_detailsTimer(new QTimer(this))
    , m_splitter(new QSplitter(Qt::Vertical, this))
    , m_view(new QTableView(this))
    , m_details(new RunDetailsPanel(this))
{
    m_model->setEditHandler(
        [this](qint64 id, int column, const QVariant &value) { return writeEdit(id, column, value); });
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(RunListModel::SortRole);
    m_proxy->setSortCaseSensitivity(Qt::CaseInsensitive);

    auto *outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    outer->addWidget(m_stack);

    auto *content = new QWidget(m_stack);
    auto *layout = new QVBoxLayout(content);

    addToolbar(content, layout);
    addFilters(layout);
    addMessageBars(content, layout);
    setUpView();

    m_splitter->addWidget(m_view);
    m_splitter->addWidget(m_details);
    m_splitter->setStretchFactor(0, 3);
    m_splitter->setStretchFactor(1, 1);
    m_splitter->setChildrenCollapsible(true);
    rememberSplitter(m_splitter, QStringLiteral("history/details"));
    layout->addWidget(m_splitter, 1);

    m_unavailable->setAlignment(Qt::AlignCenter);
    m_unavailable->setWordWrap(true);
    m_unavailable->setObjectName(QStringLiteral("historyUnavailable"));
    m_stack->addWidget(content);
    m_stack->addWidget(m_unavailable);

    connectSignals();

    // Arriving on the page puts the keyboard on the list, where Enter opens and Del deletes.
    setFocusProxy(m_view);
    refresh();
}

void HistoryPage::addToolbar(QWidget *content, QVBoxLayout *layout)
{
    auto *toolbar = new QToolBar(content);
    toolbar->setToolButtonStyle(Qt::ToolButtonTextOnly);
    buildActions();
    toolbar->addAction(m_open);
    toolbar->addAction(m_compare);
    toolbar->addSeparator();
    toolbar->addAction(m_rename);
    toolbar->addAction(m_editLabels);
    toolbar->addAction(m_delete);
    toolbar->addSeparator();
    toolbar->addAction(m_refresh);
    auto *top = new QHBoxLayout;
    top->addWidget(toolbar);
    top->addStretch(1);
    top->addWidget(m_count);
    layout->addLayout(top);
}

void HistoryPage::addFilters(QVBoxLayout *layout)
{
    auto *filters = new QHBoxLayout;
    m_textFilter->setPlaceholderText(tr("Filter by name, method, target, stack or label"));
    m_textFilter->setClearButtonEnabled(true);
    m_textFilter->setToolTip(tr("Shows the runs whose name, method, target, transport, codec or a label contains "
                                "this text (case-insensitive)"));
    m_methodFilter->setToolTip(tr("Only the runs of one method"));
    m_methodFilter->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    // However narrow the page, "All methods" and "Last 30 days" show whole (a long method name elides).
    m_methodFilter->setMinimumContentsLength(12);
    m_sinceFilter->setMinimumContentsLength(12);
    m_labelFilter->setPlaceholderText(tr("Label"));
    m_labelFilter->setClearButtonEnabled(true);
    m_labelFilter->setToolTip(tr("Only the runs with a label containing this text"));
    m_sinceFilter->addItem(tr("Any date"), SinceAll);
    m_sinceFilter->addItem(tr("Today"), SinceToday);
    m_sinceFilter->addItem(tr("Last 7 days"), Since7Days);
    m_sinceFilter->addItem(tr("Last 30 days"), Since30Days);
    m_sinceFilter->setToolTip(tr("Only the runs started since then"));
    filters->addWidget(m_textFilter, 3);
    filters->addWidget(m_methodFilter);
    filters->addWidget(m_labelFilter, 1);
    filters->addWidget(m_sinceFilter);
    layout->addLayout(filters);
}

void HistoryPage::addMessageBars(QWidget *content, QVBoxLayout *layout)
{
    QHBoxLayout *row = nullptr;
    m_errorBar = messageBar(content, QStyle::SP_MessageBoxWarning, &m_errorText, &row);
    QToolButton *closeError = closeButton(m_errorBar);
    row->addWidget(closeError);
    connect(closeError, &QToolButton::clicked, this, &HistoryPage::clearError);
    layout->addWidget(m_errorBar);

    m_undoBar = messageBar(content, QStyle::SP_MessageBoxInformation, &m_undoText, &row);
    m_undoButton = new QPushButton(tr("Undo"), m_undoBar);
    m_undoButton->setToolTip(tr("Bring the deleted runs back, with their ids (Ctrl+Z)"));
    connect(m_undoButton, &QPushButton::clicked, this, &HistoryPage::undoDelete);
    row->addWidget(m_undoButton);
    QToolButton *closeUndo = closeButton(m_undoBar);
    row->addWidget(closeUndo);
    connect(closeUndo, &QToolButton::clicked, this, &HistoryPage::dropUndo);
    layout->addWidget(m_undoBar);
}

void HistoryPage::setUpView()
{
    m_view->setModel(m_proxy);
    m_view->setItemDelegate(new RunEditDelegate(m_view));
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::ExtendedSelection);
    // Double-click opens the run, so editing is by F2 (or the actions) only.
    m_view->setEditTriggers(QAbstractItemView::EditKeyPressed);
    m_view->setSortingEnabled(true);
    m_view->sortByColumn(RunListModel::StartedColumn, Qt::DescendingOrder);
    m_view->setAlternatingRowColors(true);
    m_view->setWordWrap(false);
    m_view->verticalHeader()->hide();
    m_view->horizontalHeader()->setHighlightSections(false);
    // Compact rows: a history is scanned, and the figures matter more than the padding.
    m_view->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 8);
    m_view->setContextMenuPolicy(Qt::ActionsContextMenu);
    auto separator = [this] {
        auto *action = new QAction(this);
        action->setSeparator(true);
        return action;
    };
    m_view->addActions(
        { m_open, m_compare, separator(), m_rename, m_editLabels, m_delete, m_undo, separator(), m_refresh });
    // Single-run shortcuts only while the table itself has the focus: Enter and Del in an editor or a filter field
    // are that widget's.
    addActions({ m_undo, m_refresh });
}

void HistoryPage::connectSignals()
{
    m_undoTimer->setSingleShot(true);
    m_undoTimer->setInterval(15000);
    connect(m_undoTimer, &QTimer::timeout, this, &HistoryPage::dropUndo);
    // Loading a run reads its whole record; wait for the keyboard to settle on one.
    m_detailsTimer->setSingleShot(true);
    m_detailsTimer->setInterval(120);
    connect(m_detailsTimer, &QTimer::timeout, this, &HistoryPage::loadDetails);

    connect(m_view, &QTableView::doubleClicked, this, [this](const QModelIndex &index) {
        if (index.isValid())
            Q_EMIT openRunRequested(index.data(RunListModel::IdRole).toLongLong());
    });
    connect(m_view->selectionModel(), &QItemSelectionModel::selectionChanged, this, &HistoryPage::updateActions);
    connect(
        m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, m_detailsTimer, qOverload<>(&QTimer::start));
    connect(m_proxy, &QAbstractItemModel::rowsInserted, this, &HistoryPage::updateCount);
    connect(m_proxy, &QAbstractItemModel::rowsRemoved, this, &HistoryPage::updateCount);
    connect(m_proxy, &QAbstractItemModel::modelReset, this, &HistoryPage::updateCount);
    connect(m_textFilter, &QLineEdit::textChanged, this, &HistoryPage::applyFilters);
    connect(m_labelFilter, &QLineEdit::textChanged, this, &HistoryPage::applyFilters);
    connect(m_methodFilter, &QComboBox::currentIndexChanged, this, &HistoryPage::applyFilters);
    connect(m_sinceFilter, &QComboBox::currentIndexChanged, this, &HistoryPage::applyFilters);
}

HistoryPage::~HistoryPage() = default;

void HistoryPage::buildActions()
{
    auto make = [this](const QString &text, const QString &tip, const QList<QKeySequence> &keys,
                    Qt::ShortcutContext context, void (HistoryPage::*slot)()) {
        auto *action = new QAction(text, this);
        action->setToolTip(tip);
        action->setStatusTip(tip);
        action->setShortcuts(keys);
        action->setShortcutContext(context);
        connect(action, &QAction::triggered, this, slot);
        return action;
    };
    m_open = make(tr("Open"), tr("Show the run's full dashboard (Enter, or double-click)"),
        { QKeySequence(Qt::Key_Return), QKeySequence(Qt::Key_Enter) }, Qt::WidgetShortcut, &HistoryPage::openSelected);
    m_compare = make(tr("Compare"), tr("Compare the selected runs, the oldest as the baseline (select 2 or more)"), {},
        Qt::WidgetShortcut, &HistoryPage::compareSelected);
    m_rename = make(tr("Rename"), tr("Name the run (F2)"), { QKeySequence(Qt::Key_F2) }, Qt::WidgetShortcut,
        &HistoryPage::renameSelected);
    m_editLabels = make(tr("Labels"), tr("Edit the run's labels, comma-separated (Ctrl+L)"),
        { QKeySequence(Qt::CTRL | Qt::Key_L) }, Qt::WidgetShortcut, &HistoryPage::editLabelsOfSelected);
    m_delete = make(tr("Delete"), tr("Delete the selected runs from the history; Undo brings them back (Del)"),
        QKeySequence::keyBindings(QKeySequence::Delete), Qt::WidgetShortcut, &HistoryPage::deleteSelected);
    m_undo = make(tr("Undo delete"), tr("Bring back the runs just deleted, with their ids (Ctrl+Z)"),
        QKeySequence::keyBindings(QKeySequence::Undo), Qt::WidgetWithChildrenShortcut, &HistoryPage::undoDelete);
    m_refresh = make(tr("Refresh"), tr("Read the history again, e.g. after runs from the command line (F5)"),
        QKeySequence::keyBindings(QKeySequence::Refresh), Qt::WidgetWithChildrenShortcut, &HistoryPage::refresh);
}

void HistoryPage::setStore(RunStore *store)
{
    if (store == m_store)
        return;
    m_store = store;
    dropUndo(); // the deleted runs belong to the other store
    refresh();
}

bool HistoryPage::isAvailable() const
{
    return m_store && m_store->isOpen();
}

QSortFilterProxyModel *HistoryPage::proxy() const
{
    return m_proxy;
}

QList<qint64> HistoryPage::selectedIds() const
{
    QModelIndexList rows = m_view->selectionModel()->selectedRows();
    std::sort(rows.begin(), rows.end(), [](const QModelIndex &a, const QModelIndex &b) { return a.row() < b.row(); });
    QList<qint64> ids;
    for (const QModelIndex &index : std::as_const(rows))
        ids << index.data(RunListModel::IdRole).toLongLong();
    return ids;
}

bool HistoryPage::selectIds(const QList<qint64> &ids)
{
    QItemSelection selection;
    QModelIndex first;
    for (qint64 id : ids) {
        const QModelIndex index = proxyIndex(id, 0);
        if (!index.isValid())
            continue;
        if (!first.isValid())
            first = index;
        selection.select(index, index);
    }
    QItemSelectionModel *model = m_view->selectionModel();
    if (!first.isValid()) {
        model->clearSelection();
        return false;
    }
    model->setCurrentIndex(first, QItemSelectionModel::NoUpdate);
    model->select(selection, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    m_view->scrollTo(first);
    return true;
}

QString HistoryPage::errorMessage() const
{
    return m_errorBar->isHidden() ? QString() : m_errorText->text();
}

qint64 HistoryPage::actionId() const
{
    const QModelIndex current = m_view->selectionModel()->currentIndex();
    if (current.isValid() && m_view->selectionModel()->isRowSelected(current.row(), current.parent()))
        return current.data(RunListModel::IdRole).toLongLong();
    const QList<qint64> ids = selectedIds();
    return ids.isEmpty() ? 0 : ids.first();
}

QModelIndex HistoryPage::proxyIndex(qint64 id, int column) const
{
    const int row = m_model->rowOf(id);
    return row < 0 ? QModelIndex() : m_proxy->mapFromSource(m_model->index(row, column));
}

void HistoryPage::refresh()
{
    const bool available = isAvailable();
    m_stack->setCurrentIndex(available ? 0 : 1);
    if (!available) {
        m_model->setRuns({});
        if (!m_store) {
            m_unavailable->setText(tr("The run history is not available, so runs are not being saved and there is "
                                      "nothing to list here."));
        } else {
            const QString path = m_store->path().isEmpty() ? RunStore::chosenPath() : m_store->path();
            m_unavailable->setText(tr("The run history (%1) is not open, so runs are not being saved.\nCheck that its "
                                      "folder exists and is writable, then restart rpcscope.")
                                       .arg(path));
        }
        m_details->clear();
        updateActions();
        return;
    }
    // A run whose process died since the history was opened shows as interrupted rather than forever running.
    m_store->markInterruptedRuns();
    QList<qint64> keep = selectedIds();
    const qint64 current = actionId();
    if (current) {
        keep.removeAll(current);
        keep.prepend(current);
    }
    QString error;
    std::vector<RunListEntry> runs = m_store->list(RunFilter {}, &error);
    if (!error.isEmpty()) {
        showError(tr("Could not read the run history: %1").arg(error)); // the rows shown before stay
        return;
    }
    m_model->setRuns(std::move(runs));
    updateMethods();
    if (!m_columnsFitted && m_model->rowCount() > 0)
        fitColumns();
    selectIds(keep);
    updateCount();
    updateActions();
    m_detailsTimer->start();
}

void HistoryPage::updateMethods()
{
    const QString chosen = m_methodFilter->currentData().toString();
    QStringList methods;
    for (const RunListEntry &run : m_model->runs())
        methods << run.method;
    methods.removeDuplicates();
    methods.removeAll(QString());
    QHash<QString, int> shortCount;
    for (const QString &method : std::as_const(methods))
        ++shortCount[RunListModel::shortMethod(method)];
    std::sort(methods.begin(), methods.end(), [](const QString &a, const QString &b) {
        return RunListModel::shortMethod(a).compare(RunListModel::shortMethod(b), Qt::CaseInsensitive) < 0;
    });

    const QSignalBlocker blocker(m_methodFilter);
    m_methodFilter->clear();
    m_methodFilter->addItem(tr("All methods"), QString());
    for (const QString &method : std::as_const(methods)) {
        const QString shortName = RunListModel::shortMethod(method);
        // The short name unless two packages share it.
        m_methodFilter->addItem(shortCount.value(shortName) > 1 ? method : shortName, method);
        m_methodFilter->setItemData(m_methodFilter->count() - 1, method, Qt::ToolTipRole);
    }
    const int index = m_methodFilter->findData(chosen);
    m_methodFilter->setCurrentIndex(std::max(index, 0));
    if (index < 0 && !chosen.isEmpty())
        QTimer::singleShot(0, this, &HistoryPage::applyFilters); // the chosen method is gone: show all again
}

void HistoryPage::applyFilters()
{
    QDateTime since;
    switch (m_sinceFilter->currentData().toInt()) {
    case SinceToday:
        since = QDateTime(QDate::currentDate(), QTime(0, 0));
        break;
    case Since7Days:
        since = QDateTime::currentDateTime().addDays(-7);
        break;
    case Since30Days:
        since = QDateTime::currentDateTime().addDays(-30);
        break;
    default:
        break;
    }
    m_proxy->setFilters(m_textFilter->text(), m_methodFilter->currentData().toString(), m_labelFilter->text(), since);
    updateCount();
    updateActions();
}

void HistoryPage::updateCount()
{
    const int total = m_model->rowCount();
    const int shown = m_proxy->rowCount();
    if (total == shown)
        m_count->setText(total == 1 ? tr("1 run") : tr("%1 runs").arg(total));
    else
        m_count->setText(tr("%1 of %2 runs shown").arg(shown).arg(total));
}

void HistoryPage::updateActions()
{
    const bool available = isAvailable();
    const qsizetype selected = available ? m_view->selectionModel()->selectedRows().size() : 0;
    m_open->setEnabled(selected >= 1);
    m_compare->setEnabled(selected >= 2);
    // While a delete or undo is written, nothing else changes the history from here.
    m_rename->setEnabled(selected >= 1 && !m_busy);
    m_editLabels->setEnabled(selected >= 1 && !m_busy);
    m_delete->setEnabled(selected >= 1 && !m_busy);
    m_undo->setEnabled(available && canUndo() && !m_busy);
    m_undoButton->setEnabled(!m_busy);
    m_refresh->setEnabled(m_store != nullptr);
}

void HistoryPage::fitColumns()
{
    QHeaderView *header = m_view->horizontalHeader();
    m_view->resizeColumnsToContents();
    // Free text must not push the figures off the screen; the full text is in the tooltip.
    const int em = fontMetrics().horizontalAdvance(u'M');
    for (int column : { RunListModel::NameColumn, RunListModel::LabelsColumn, RunListModel::TargetColumn,
             RunListModel::MethodColumn }) {
        header->resizeSection(column, std::clamp(header->sectionSize(column), 6 * em, 16 * em));
    }
    // The name takes what is left, so a wide window shows it whole and a narrow one keeps the figures in view.
    header->setSectionResizeMode(RunListModel::NameColumn, QHeaderView::Stretch);
    m_columnsFitted = true;
}

void HistoryPage::showError(const QString &message)
{
    m_errorText->setText(message);
    m_errorBar->show();
}

void HistoryPage::clearError()
{
    m_errorBar->hide();
    m_errorText->clear();
}

void HistoryPage::offerUndo(const QString &message)
{
    m_undoText->setText(message);
    m_undoBar->show();
    m_undoTimer->start();
    updateActions();
}

void HistoryPage::dropUndo()
{
    m_deleted.clear();
    m_undoBar->hide();
    m_undoTimer->stop();
    updateActions();
}

void HistoryPage::setBusy(bool busy)
{
    m_busy = busy;
    updateActions();
    Q_EMIT busyChanged(busy);
}

void HistoryPage::loadDetails()
{
    const QModelIndex current = m_view->selectionModel()->currentIndex();
    if (!isAvailable() || !current.isValid()) {
        m_details->clear();
        return;
    }
    const qint64 id = current.data(RunListModel::IdRole).toLongLong();
    QString error;
    // Per selection change, so only what the panel shows: a long run's measurements stay on disk.
    const std::optional<RunRecord> run = m_store->load(id, &error, RunStore::Parts::Metadata);
    if (!run) {
        m_details->clear(tr("Could not read run #%1: %2").arg(id).arg(error));
        return;
    }
    m_details->showRun(*run);
}

bool HistoryPage::writeEdit(qint64 id, int column, const QVariant &value)
{
    clearError();
    if (m_busy) { // refused before dropUndo(): an edit that is not saved takes no undo away
        showError(tr("A delete or undo is being written: the change is not saved; try again in a moment."));
        return false;
    }
    dropUndo(); // Ctrl+Z after an edit would otherwise undo an older delete, not the edit
    if (!isAvailable()) {
        showError(tr("The run history is not open: the change is not saved."));
        return false;
    }
    QString error;
    const bool labels = column == RunListModel::LabelsColumn;
    const bool ok
        = labels ? m_store->setLabels(id, value.toStringList(), &error) : m_store->rename(id, value.toString(), &error);
    if (!ok) {
        showError(labels ? tr("Could not save the labels of run #%1: %2").arg(id).arg(error)
                         : tr("Could not rename run #%1: %2").arg(id).arg(error));
        return false;
    }
    if (m_details->runId() == id)
        m_detailsTimer->start(); // its header shows the name and labels
    return true;
}

void HistoryPage::openSelected()
{
    if (const qint64 id = actionId())
        Q_EMIT openRunRequested(id);
}

void HistoryPage::compareSelected()
{
    QList<qint64> ids = selectedIds();
    if (ids.size() < 2)
        return;
    std::sort(ids.begin(), ids.end());
    Q_EMIT compareRequested(ids);
}

void HistoryPage::editSelectedCell(int column)
{
    const QModelIndex index = proxyIndex(actionId(), column);
    if (!index.isValid())
        return;
    m_view->setFocus();
    m_view->scrollTo(index);
    m_view->selectionModel()->setCurrentIndex(index, QItemSelectionModel::NoUpdate);
    m_view->edit(index);
}

void HistoryPage::renameSelected()
{
    editSelectedCell(RunListModel::NameColumn);
}

void HistoryPage::editLabelsOfSelected()
{
    editSelectedCell(RunListModel::LabelsColumn);
}

void HistoryPage::deleteSelected()
{
    const QList<qint64> ids = selectedIds();
    if (!isAvailable() || ids.isEmpty() || m_busy)
        return;
    clearError();
    int firstRow = m_proxy->rowCount();
    for (const QModelIndex &index : m_view->selectionModel()->selectedRows())
        firstRow = std::min(firstRow, index.row());

    QList<qint64> deletable;
    QStringList problems;
    for (qint64 id : ids) {
        const int row = m_model->rowOf(id);
        if (row >= 0 && m_model->entry(row).status == QStringView(RunStatus::Running))
            problems << tr("run #%1 is still running; stop it first").arg(id);
        else
            deletable << id;
    }
    if (deletable.isEmpty()) {
        showError(tr("Not deleted: %1.").arg(problems.join(QStringLiteral("; "))));
        return;
    }
    // Reading whole runs (for undo) and deleting them takes a while for long runs: off the GUI thread.
    setBusy(true);
    runInBackground(
        this, [path = m_store->path(), deletable] { return deleteRuns(path, deletable); },
        [this, store = m_store, firstRow, problems](HistoryWrite write) mutable {
            setBusy(false);
            clearError(); // e.g. an edit refused meanwhile: the page is free again
            refresh();
            if (store != m_store)
                return; // another history now: its undo is not this one's
            problems += write.problems;
            if (!write.done.empty()) {
                const RunRecord &only = write.done.front();
                const QString what = write.done.size() == 1
                    ? (only.name.isEmpty() ? tr("Deleted run #%1.").arg(only.id)
                                           : tr("Deleted run #%1 \u201c%2\u201d.").arg(only.id).arg(only.name))
                    : tr("Deleted %1 runs.").arg(write.done.size());
                // Only the last delete can be undone: the runs of an older one are gone for good now.
                m_deleted = std::move(write.done);
                offerUndo(what);
                // The keyboard stays on the list: the row that took the first deleted one's place.
                if (m_proxy->rowCount() > 0) {
                    const QModelIndex next = m_proxy->index(std::min(firstRow, m_proxy->rowCount() - 1), 0);
                    selectIds({ next.data(RunListModel::IdRole).toLongLong() });
                }
                Q_EMIT runsDeleted(write.ids);
            }
            if (!problems.isEmpty())
                showError(tr("Not deleted: %1.").arg(problems.join(QStringLiteral("; "))));
        });
}

void HistoryPage::undoDelete()
{
    if (m_deleted.empty() || !isAvailable() || m_busy)
        return;
    clearError();
    std::vector<RunRecord> records = std::move(m_deleted);
    dropUndo();
    setBusy(true);
    runInBackground(
        this, [path = m_store->path(), records = std::move(records)] { return restoreRuns(path, records); },
        [this, store = m_store](HistoryWrite write) {
            setBusy(false);
            clearError();
            refresh();
            if (store != m_store)
                return;
            selectIds(write.ids);
            if (!write.ids.isEmpty())
                Q_EMIT runsRestored(write.ids);
            if (!write.failed.empty()) {
                // Kept, so another try (after freeing disk space, say) can still bring them back.
                m_deleted = std::move(write.failed);
                offerUndo(tr("%1 deleted runs could not be brought back.").arg(m_deleted.size()));
                showError(tr("Could not restore %1.").arg(write.problems.join(QStringLiteral("; "))));
            }
        });
}

} // namespace rpcscope
