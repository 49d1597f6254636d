#include "portowners.h"

#include "util/printable.h"

#include <QDir>
#include <QFile>

#include <algorithm>

#include <unistd.h>

namespace rpcscope {

namespace {

/// The inodes of the sockets in LISTEN state (0A) on @p port in a /proc/net/tcp-style table.
void addListeningInodes(const QString &table, quint16 port, QList<quint64> *inodes)
{
    QFile file(table);
    if (!file.open(QIODevice::ReadOnly))
        return;
    // "  sl  local_address rem_address   st tx_queue:rx_queue tr:tm->when retrnsmt   uid  timeout inode"
    const QList<QByteArray> lines = file.readAll().split('\n');
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const QList<QByteArray> fields = lines[i].simplified().split(' ');
        if (fields.size() < 10 || fields[3] != "0A")
            continue;
        const QByteArray &local = fields[1];
        const qsizetype colon = local.lastIndexOf(':');
        bool ok = false;
        if (colon < 0 || local.mid(colon + 1).toUInt(&ok, 16) != port || !ok)
            continue;
        const quint64 inode = fields[9].toULongLong(&ok);
        if (ok && inode != 0 && !inodes->contains(inode))
            inodes->append(inode);
    }
}

} // namespace

bool PortListeners::heldByGroup(pid_t group) const
{
    return std::any_of(owners.begin(), owners.end(), [group](const PortOwner &o) { return o.group == group; });
}

QString PortListeners::ownersText() const
{
    QStringList named;
    for (const PortOwner &o : owners)
        named << QStringLiteral("PID %1 (%2)").arg(o.pid).arg(printable(o.name)); // a name is the process's to choose
    return named.isEmpty() ? QStringLiteral("a process rpcscope may not look at") : named.join(QStringLiteral(", "));
}

PortListeners portListeners(quint16 port)
{
    PortListeners result;
    addListeningInodes(QStringLiteral("/proc/net/tcp"), port, &result.sockets);
    addListeningInodes(QStringLiteral("/proc/net/tcp6"), port, &result.sockets);
    if (result.sockets.isEmpty())
        return result;
    QStringList links;
    for (quint64 inode : result.sockets)
        links << QStringLiteral("socket:[%1]").arg(inode);
    const QStringList pids = QDir(QStringLiteral("/proc")).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    for (const QString &name : pids) {
        bool numeric = false;
        const pid_t pid = name.toInt(&numeric);
        if (!numeric)
            continue;
        const QString fdDir = QStringLiteral("/proc/%1/fd").arg(pid);
        bool holds = false;
        for (const QString &fd : QDir(fdDir).entryList(QDir::Files | QDir::System | QDir::NoDotAndDotDot)) {
            char target[64] = {};
            const QByteArray path = (fdDir + u'/' + fd).toLocal8Bit();
            const ssize_t n = ::readlink(path.constData(), target, sizeof target - 1);
            if (n > 0 && links.contains(QString::fromLatin1(target, n))) {
                holds = true;
                break;
            }
        }
        if (!holds)
            continue;
        PortOwner owner;
        owner.pid = pid;
        owner.group = ::getpgid(pid);
        QFile comm(QStringLiteral("/proc/%1/comm").arg(pid));
        if (comm.open(QIODevice::ReadOnly))
            owner.name = QString::fromLocal8Bit(comm.readAll()).trimmed();
        result.owners << owner;
    }
    return result;
}

QString portInUseMessage(quint16 port)
{
    if (port == 0)
        return {};
    const PortListeners listeners = portListeners(port);
    if (listeners.sockets.isEmpty())
        return {};
    QList<PortOwner> others;
    for (const PortOwner &o : listeners.owners) {
        if (o.pid != ::getpid())
            others << o;
    }
    if (!listeners.owners.isEmpty() && others.isEmpty())
        return {};
    PortListeners named;
    named.owners = others;
    return QStringLiteral("port %1 is in use by another process (%2)").arg(port).arg(named.ownersText());
}

} // namespace rpcscope
