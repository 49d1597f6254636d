#pragma once

#include <QList>
#include <QString>

#include <sys/types.h>

namespace rpcscope {

/// A process that holds a listening socket open.
struct PortOwner {
    pid_t pid = 0;
    pid_t group = 0; ///< its process group
    QString name; ///< its command name (/proc/PID/comm)
};

/// Who listens on a local TCP port, as the kernel tells it (/proc/net/tcp and tcp6, /proc/PID/fd).
struct PortListeners {
    QList<quint64> sockets; ///< the inodes of the listening sockets on the port (IPv4 and IPv6, any address)
    QList<PortOwner> owners; ///< the processes that hold one of them and that this process may look at
    /// True when @p group (a process group) holds one of the sockets.
    bool heldByGroup(pid_t group) const;
    /// "PID 1234 (python3)", the owners named for an error; "a process rpcscope may not look at" when none is known.
    QString ownersText() const;
};

/**
 * Who listens on TCP port @p port on this machine. Empty sockets when nothing does (or /proc cannot be read). When
 * process @p likely holds one of the sockets, it alone is given as the owner, without looking at every other
 * process: for a caller that asks whether that process listens.
 */
PortListeners portListeners(quint16 port, pid_t likely = 0);

/// "port 50051 is in use by another process (PID 1234 (python3))" when a process other than this one listens on
/// @p port, else empty. What the built-in servers check before they listen on a port they are given, so that they
/// refuse it plainly rather than share it (gRPC's SO_REUSEPORT) or fail with "address in use".
QString portInUseMessage(quint16 port);

} // namespace rpcscope
