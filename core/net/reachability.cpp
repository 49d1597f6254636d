#include "reachability.h"

#include <QUrl>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace rpcscope {

namespace {

/// HOST and PORT of @p address, or false for a form that names no TCP host and port.
bool splitTarget(QString address, QString *host, QString *port)
{
    if (address.startsWith(QStringLiteral("http://"), Qt::CaseInsensitive)
        || address.startsWith(QStringLiteral("https://"), Qt::CaseInsensitive)) {
        const QUrl url(address);
        if (!url.isValid() || url.host().isEmpty())
            return false;
        *host = url.host();
        *port = QString::number(url.port(address.startsWith(QStringLiteral("https"), Qt::CaseInsensitive) ? 443 : 80));
        return true;
    }
    for (const QString &prefix : { QStringLiteral("dns:///"), QStringLiteral("ipv4:"), QStringLiteral("ipv6:") })
        if (address.startsWith(prefix))
            address = address.mid(prefix.size());
    if (address.contains(u':') && address.startsWith(u'[')) {
        const qsizetype close = address.indexOf(u']');
        if (close < 0 || address.mid(close + 1, 1) != u":")
            return false;
        *host = address.mid(1, close - 1);
        *port = address.mid(close + 2);
    } else {
        const qsizetype colon = address.lastIndexOf(u':');
        if (colon <= 0 || address.count(u':') != 1)
            return false;
        *host = address.left(colon);
        *port = address.mid(colon + 1);
    }
    bool number = false;
    const int p = port->toInt(&number);
    return number && p > 0 && p < 65536 && !host->contains(u'/');
}

/// A non-blocking connect to @p address, waiting at most @p timeout; 0 or the errno that ended it.
int connectWithin(const addrinfo *address, std::chrono::milliseconds timeout)
{
    const int fd = ::socket(address->ai_family, address->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return errno;
    int result = 0;
    if (::connect(fd, address->ai_addr, address->ai_addrlen) != 0) {
        result = errno;
        if (result == EINPROGRESS) {
            pollfd waiting { fd, POLLOUT, 0 };
            const int ready = ::poll(&waiting, 1, static_cast<int>(timeout.count()));
            if (ready == 1) {
                socklen_t length = sizeof result;
                if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &result, &length) != 0)
                    result = errno;
            } else {
                result = ETIMEDOUT;
            }
        }
    }
    ::close(fd);
    return result;
}

} // namespace

std::chrono::milliseconds probeTimeoutFor(std::chrono::nanoseconds callTimeout)
{
    using namespace std::chrono;
    if (callTimeout.count() <= 0)
        return seconds(10);
    return std::clamp(duration_cast<milliseconds>(callTimeout), milliseconds(1000), milliseconds(10000));
}

bool probeReachable(const QString &address, std::chrono::milliseconds timeout, QString *why)
{
    QString host;
    QString port;
    if (!splitTarget(address.trimmed(), &host, &port))
        return true;
    addrinfo hints {};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo *found = nullptr;
    if (const int error = ::getaddrinfo(host.toUtf8().constData(), port.toUtf8().constData(), &hints, &found)) {
        if (why)
            *why = QStringLiteral("cannot resolve %1: %2").arg(host, QString::fromLocal8Bit(::gai_strerror(error)));
        return false;
    }
    int last = 0;
    for (const addrinfo *a = found; a; a = a->ai_next) {
        last = connectWithin(a, timeout);
        if (last == 0)
            break;
    }
    ::freeaddrinfo(found);
    if (last == 0)
        return true;
    if (why)
        *why = last == ETIMEDOUT
            ? QStringLiteral("%1:%2: no answer to a connection within %3 ms").arg(host, port).arg(timeout.count())
            : QStringLiteral("%1:%2: %3").arg(host, port, QString::fromLocal8Bit(std::strerror(last)));
    return false;
}

} // namespace rpcscope
