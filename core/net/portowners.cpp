#include "portowners.h"

#include "util/printable.h"

#include <QDir>
#include <QFile>

#include <algorithm>
#include <array>
#include <cstring>

#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <sys/socket.h>
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

/**
 * The inodes of the TCP sockets listening on @p port (IPv4 and IPv6), asked of the kernel over sock_diag netlink:
 * it walks only the listening sockets, where /proc/net/tcp walks every bucket of the connection table on each
 * read (2.5 ms a read on this 24 GiB VM, 17 ms for both tables). False when netlink cannot be used here.
 */
bool addListeningInodesByNetlink(quint16 port, QList<quint64> *inodes)
{
    const int fd = ::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (fd < 0)
        return false;
    constexpr int kTcpListen = 10; // TCP_LISTEN in the kernel's tcp_states.h
    bool ok = true;
    for (const int family : { AF_INET, AF_INET6 }) {
        struct {
            nlmsghdr header;
            inet_diag_req_v2 request;
        } message {};
        message.header.nlmsg_len = sizeof message;
        message.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
        message.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
        message.request.sdiag_family = static_cast<__u8>(family);
        message.request.sdiag_protocol = IPPROTO_TCP;
        message.request.idiag_states = 1U << kTcpListen;
        sockaddr_nl kernel {};
        kernel.nl_family = AF_NETLINK;
        if (::sendto(fd, &message, sizeof message, 0, reinterpret_cast<sockaddr *>(&kernel), sizeof kernel) < 0) {
            ok = false;
            break;
        }
        bool done = false;
        alignas(nlmsghdr) std::array<char, 32768> buffer {};
        while (ok && !done) {
            const ssize_t got = ::recv(fd, buffer.data(), buffer.size(), 0);
            if (got <= 0) {
                ok = false;
                break;
            }
            auto length = static_cast<unsigned int>(got);
            for (auto *h = reinterpret_cast<nlmsghdr *>(buffer.data()); NLMSG_OK(h, length);
                 h = NLMSG_NEXT(h, length)) {
                if (h->nlmsg_type == NLMSG_DONE) {
                    done = true;
                    break;
                }
                if (h->nlmsg_type == NLMSG_ERROR) {
                    ok = false;
                    break;
                }
                const auto *socket = static_cast<const inet_diag_msg *>(NLMSG_DATA(h));
                if (ntohs(socket->id.idiag_sport) == port && socket->idiag_inode != 0
                    && !inodes->contains(socket->idiag_inode))
                    inodes->append(socket->idiag_inode);
            }
        }
        if (!ok)
            break;
    }
    ::close(fd);
    return ok;
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

namespace {

/// Whether process @p pid holds one of the sockets named by @p links ("socket:[inode]") open.
bool holdsOneOf(pid_t pid, const QStringList &links)
{
    const QString fdDir = QStringLiteral("/proc/%1/fd").arg(pid);
    for (const QString &fd : QDir(fdDir).entryList(QDir::Files | QDir::System | QDir::NoDotAndDotDot)) {
        char target[64] = {};
        const QByteArray path = (fdDir + u'/' + fd).toLocal8Bit();
        const ssize_t n = ::readlink(path.constData(), target, sizeof target - 1);
        if (n > 0 && links.contains(QString::fromLatin1(target, n)))
            return true;
    }
    return false;
}

PortOwner ownerOf(pid_t pid)
{
    PortOwner owner;
    owner.pid = pid;
    owner.group = ::getpgid(pid);
    QFile comm(QStringLiteral("/proc/%1/comm").arg(pid));
    if (comm.open(QIODevice::ReadOnly))
        owner.name = QString::fromLocal8Bit(comm.readAll()).trimmed();
    return owner;
}

} // namespace

PortListeners portListeners(quint16 port, pid_t likely)
{
    PortListeners result;
    if (!addListeningInodesByNetlink(port, &result.sockets)) {
        result.sockets.clear();
        addListeningInodes(QStringLiteral("/proc/net/tcp"), port, &result.sockets);
        addListeningInodes(QStringLiteral("/proc/net/tcp6"), port, &result.sockets);
    }
    if (result.sockets.isEmpty())
        return result;
    QStringList links;
    for (quint64 inode : result.sockets)
        links << QStringLiteral("socket:[%1]").arg(inode);
    // The process the caller expects: when it holds one, looking at every other process (17 ms on this VM, a fifth
    // of a server restart in ab) is not needed.
    if (likely > 0 && holdsOneOf(likely, links)) {
        result.owners << ownerOf(likely);
        return result;
    }
    const QStringList pids = QDir(QStringLiteral("/proc")).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    for (const QString &name : pids) {
        bool numeric = false;
        const pid_t pid = name.toInt(&numeric);
        if (numeric && holdsOneOf(pid, links))
            result.owners << ownerOf(pid);
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
