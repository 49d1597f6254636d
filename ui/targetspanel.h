#pragma once

#include "transport/transports.h"

#include <QWidget>

class QTreeWidget;
class QTreeWidgetItem;

namespace rpcscope {

/**
 * The Targets dock: the built-in servers with their state, address and process, and the remote targets used
 * before (kept in QSettings). Activating one points the scenario at it (transport and address).
 */
class TargetsPanel : public QWidget {
    Q_OBJECT
public:
    explicit TargetsPanel(QWidget *parent = nullptr);

    /// The built-in servers: transport -> address; @p pid 0 = in this process. None: not started yet (each row then
    /// points the scenario at "builtin", which starts them on the first run).
    void setBuiltin(const QMap<TransportKind, QString> &addresses, qint64 pid);
    /// Whether the built-in servers' process is alive (shown as their state).
    void setBuiltinRunning(bool running);
    /// Remembers a remote target the user ran against (most recent first, 10 kept).
    void addRecent(TransportKind kind, const QString &address);
    QTreeWidget *tree() const { return m_tree; }

Q_SIGNALS:
    void targetActivated(rpcscope::TransportKind kind, const QString &address);

private:
    void refreshRecent();

    QTreeWidget *m_tree;
    QTreeWidgetItem *m_builtinRoot;
    QTreeWidgetItem *m_recentRoot;
};

} // namespace rpcscope
