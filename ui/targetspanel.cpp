#include "targetspanel.h"

#include <QHeaderView>
#include <QSettings>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace rpcscope {

namespace {
QString transportTitle(TransportKind kind)
{
    return QString::fromUtf16(transportInfo(kind).title);
}
} // namespace

TargetsPanel::TargetsPanel(QWidget *parent)
    : QWidget(parent)
    , m_tree(new QTreeWidget)
    , m_builtinRoot(new QTreeWidgetItem({ tr("Built-in servers") }))
    , m_recentRoot(new QTreeWidgetItem({ tr("Recent remote targets") }))
{
    m_tree->setObjectName(QStringLiteral("targetsTree"));
    m_tree->setColumnCount(3);
    m_tree->setHeaderLabels({ tr("Target"), tr("Address"), tr("State") });
    m_tree->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_tree->setToolTip(tr("Double-click a target to point the scenario at it."));
    m_tree->addTopLevelItem(m_builtinRoot);
    m_tree->addTopLevelItem(m_recentRoot);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_tree);
    connect(m_tree, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem *item) {
        if (!item->parent())
            return;
        const QVariant address = item->data(1, Qt::UserRole); // set when the column shows something else
        Q_EMIT targetActivated(static_cast<TransportKind>(item->data(0, Qt::UserRole).toInt()),
            address.isValid() ? address.toString() : item->text(1));
    });
    refreshRecent();
}

void TargetsPanel::setBuiltin(const QMap<TransportKind, QString> &addresses, qint64 pid)
{
    qDeleteAll(m_builtinRoot->takeChildren());
    if (addresses.isEmpty()) { // not started: they start when a run first uses them
        for (const TransportKind kind : { TransportKind::Grpc, TransportKind::Http, TransportKind::Msgpack }) {
            auto *item = new QTreeWidgetItem(
                m_builtinRoot, { transportTitle(kind), tr("on a free port"), tr("starts when a run uses it") });
            item->setData(0, Qt::UserRole, static_cast<int>(kind));
            item->setData(1, Qt::UserRole, QStringLiteral("builtin"));
            item->setToolTip(2,
                tr("rpcscope starts its built-in servers (rpcscope-cli serve all) only when a run, "
                   "a matrix cell or Send once goes to one of them."));
        }
        m_builtinRoot->setExpanded(true);
        return;
    }
    for (auto it = addresses.begin(); it != addresses.end(); ++it) {
        auto *item = new QTreeWidgetItem(m_builtinRoot,
            { transportTitle(it.key()), it.value(),
                pid > 0 ? tr("running (pid %1)").arg(pid) : tr("running (in process)") });
        item->setData(0, Qt::UserRole, static_cast<int>(it.key()));
        item->setToolTip(1,
            pid > 0 ? tr("rpcscope-cli serve all, a child process: its CPU and RSS are measured apart")
                    : tr("in this process: the client's CPU includes the server's"));
    }
    m_builtinRoot->setExpanded(true);
}

void TargetsPanel::setBuiltinRunning(bool running)
{
    for (int i = 0; i < m_builtinRoot->childCount(); ++i) {
        QTreeWidgetItem *item = m_builtinRoot->child(i);
        if (!running)
            item->setText(2, tr("stopped"));
        item->setForeground(2, running ? palette().text() : QBrush(QColor(0xd0, 0x3b, 0x3b)));
    }
}

void TargetsPanel::addRecent(TransportKind kind, const QString &address)
{
    QSettings settings;
    QStringList recent = settings.value(QStringLiteral("targets/recent")).toStringList();
    const QString entry = transportName(kind) + QLatin1Char(' ') + address;
    recent.removeAll(entry);
    recent.prepend(entry);
    settings.setValue(QStringLiteral("targets/recent"), recent.mid(0, 10));
    refreshRecent();
}

void TargetsPanel::refreshRecent()
{
    qDeleteAll(m_recentRoot->takeChildren());
    const QStringList recent = QSettings().value(QStringLiteral("targets/recent")).toStringList();
    for (const QString &entry : recent) {
        const auto kind = parseTransport(entry.section(QLatin1Char(' '), 0, 0));
        if (!kind)
            continue;
        auto *item = new QTreeWidgetItem(
            m_recentRoot, { transportTitle(*kind), entry.section(QLatin1Char(' '), 1), QString() });
        item->setData(0, Qt::UserRole, static_cast<int>(*kind));
    }
    m_recentRoot->setExpanded(true);
}

} // namespace rpcscope
