#include "inputfile.h"

#include <QFile>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace rpcscope {

QString inputLimitText(qint64 bytes)
{
    if (bytes >= (1LL << 30) && bytes % (1LL << 30) == 0)
        return QStringLiteral("%1 GiB").arg(bytes >> 30);
    if (bytes >= (1LL << 20) && bytes % (1LL << 20) == 0)
        return QStringLiteral("%1 MiB").arg(bytes >> 20);
    return QStringLiteral("%1 bytes").arg(bytes);
}

std::optional<QByteArray> readInputFile(const QString &path, qint64 maxBytes, QString *error)
{
    auto fail = [&](const QString &why) -> std::optional<QByteArray> {
        if (error)
            *error = why;
        return std::nullopt;
    };
    const QByteArray name = QFile::encodeName(path);
    struct stat st { };
    if (::stat(name.constData(), &st) != 0)
        return fail(errno == ENOENT ? QStringLiteral("file not found") : QString::fromLocal8Bit(std::strerror(errno)));
    if (S_ISDIR(st.st_mode))
        return fail(QStringLiteral("is a folder, not a file"));
    if (S_ISFIFO(st.st_mode))
        return fail(QStringLiteral("is a named pipe, not a file: rpcscope reads regular files (save it to one)"));
    if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
        return fail(QStringLiteral("is a device, not a file: rpcscope reads regular files"));
    if (!S_ISREG(st.st_mode))
        return fail(QStringLiteral("is not a regular file"));
    const QString limit
        = QStringLiteral("larger than the %1 rpcscope reads from one such file").arg(inputLimitText(maxBytes));
    if (st.st_size > maxBytes)
        return fail(limit);
    // O_NONBLOCK: should it have become a FIFO since, opening it must not wait for a writer.
    const int fd = ::open(name.constData(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return fail(QString::fromLocal8Bit(std::strerror(errno)));
    QByteArray data;
    data.reserve(qsizetype(st.st_size));
    char buffer[1 << 16];
    for (;;) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            const int why = errno;
            ::close(fd);
            return fail(QString::fromLocal8Bit(std::strerror(why)));
        }
        if (n == 0)
            break;
        if (data.size() + n > maxBytes) {
            ::close(fd);
            return fail(limit);
        }
        data.append(buffer, qsizetype(n));
    }
    ::close(fd);
    return data;
}

} // namespace rpcscope
