#include "outputfile.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace rpcscope {

namespace {

enum class Kind {
    File, ///< a regular file, or none yet: written through a temporary file renamed over it
    Stream, ///< a character device or FIFO: opened and written in place
    Refused,
};

/// What @p path leads to (symbolic links followed), and why it is refused.
Kind kindOf(const QString &path, QString *why)
{
    struct stat st { };
    if (::stat(QFile::encodeName(path).constData(), &st) != 0)
        return Kind::File; // none yet (or unreadable): opening it says why
    if (S_ISREG(st.st_mode))
        return Kind::File;
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))
        return Kind::Stream;
    if (S_ISDIR(st.st_mode))
        *why = QStringLiteral("is a folder, not a file");
    else if (S_ISBLK(st.st_mode))
        *why = QStringLiteral("is a block device (a disk): rpcscope writes files, not disks");
    else if (S_ISSOCK(st.st_mode))
        *why = QStringLiteral("is a socket, not a file");
    else
        *why = QStringLiteral("is not a file");
    return Kind::Refused;
}

QString systemError(int error)
{
    return QString::fromLocal8Bit(std::strerror(error));
}

/// The folder a new file would go in, when it cannot: named, rather than QSaveFile's temporary file.
QString folderProblem(const QString &path)
{
    const QFileInfo info(path);
    const QString folder = info.absolutePath();
    if (!QFileInfo(folder).isDir())
        return QStringLiteral("the folder %1 does not exist").arg(QDir::toNativeSeparators(folder));
    if (::access(QFile::encodeName(folder).constData(), W_OK | X_OK) != 0)
        return QStringLiteral("the folder %1 is not writable").arg(QDir::toNativeSeparators(folder));
    return {};
}

} // namespace

OutputFile::OutputFile(QString path) : m_path(std::move(path)) { }

OutputFile::~OutputFile()
{
    cancel();
}

bool OutputFile::open()
{
    m_error.clear();
    QString why;
    const Kind kind = kindOf(m_path, &why);
    if (kind == Kind::Refused) {
        m_error = QStringLiteral("%1: %2").arg(m_path, why);
        return false;
    }
    if (kind == Kind::Stream) {
        // Non-blocking open: a FIFO nobody reads fails (ENXIO) instead of waiting forever; writes then block again.
        // A reader started just after rpcscope (`rpcscope-cli ... -o pipe & cat pipe`) is given 10 s to come.
        const QByteArray name = QFile::encodeName(m_path);
        int fd = -1;
        for (int waited = 0; waited <= 10000; waited += 50) {
            fd = ::open(name.constData(), O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
            if (fd >= 0 || errno != ENXIO)
                break;
            ::usleep(50000);
        }
        if (fd < 0) {
            const int error = errno;
            m_error = error == ENXIO ? QStringLiteral("%1: a named pipe nobody read within 10 s").arg(m_path)
                                     : QStringLiteral("%1: cannot write: %2").arg(m_path, systemError(error));
            return false;
        }
        ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
        m_stream = std::make_unique<QFile>();
        if (!m_stream->open(fd, QIODevice::WriteOnly | QIODevice::Unbuffered, QFileDevice::AutoCloseHandle)) {
            ::close(fd);
            m_error = QStringLiteral("%1: cannot write: %2").arg(m_path, m_stream->errorString());
            m_stream.reset();
            return false;
        }
        return true;
    }
    m_save = std::make_unique<QSaveFile>(m_path);
    // No direct-write fallback: where a temporary file cannot be made next to the target, fail rather than risk
    // leaving it half-written.
    m_save->setDirectWriteFallback(false);
    if (!m_save->open(QIODevice::WriteOnly)) {
        const QString folder = QFileInfo::exists(m_path) ? QString() : folderProblem(m_path);
        m_error = QStringLiteral("%1: cannot write: %2").arg(m_path, folder.isEmpty() ? m_save->errorString() : folder);
        m_save.reset();
        return false;
    }
    return true;
}

QIODevice *OutputFile::device() const
{
    if (m_save)
        return m_save.get();
    return m_stream.get();
}

bool OutputFile::commit()
{
    if (m_save) {
        const bool ok = m_save->commit();
        if (!ok)
            m_error = QStringLiteral("%1: cannot write: %2").arg(m_path, m_save->errorString());
        m_save.reset();
        return ok;
    }
    if (m_stream) {
        const bool ok = m_stream->error() == QFileDevice::NoError && m_stream->flush();
        if (!ok)
            m_error = QStringLiteral("%1: cannot write: %2").arg(m_path, m_stream->errorString());
        m_stream.reset();
        return ok;
    }
    m_error = QStringLiteral("%1: not open").arg(m_path);
    return false;
}

void OutputFile::cancel()
{
    if (m_save)
        m_save->cancelWriting();
    m_save.reset();
    m_stream.reset();
}

bool writeOutputFile(const QString &path, const QByteArray &data, QString *error)
{
    OutputFile file(path);
    if (file.open() && file.device()->write(data) != data.size()) {
        if (error)
            *error = QStringLiteral("%1: cannot write: %2").arg(path, file.device()->errorString());
        return false; // cancelled on the way out: a regular file keeps its old content
    }
    if (file.error().isEmpty() && file.commit())
        return true;
    if (error)
        *error = file.error();
    return false;
}

bool checkOutputPath(const QString &path, QString *error)
{
    QString why;
    QString problem;
    switch (kindOf(path, &why)) {
    case Kind::Refused:
        problem = why;
        break;
    case Kind::Stream: // opened, not replaced: the permission to write it is what counts
        if (::access(QFile::encodeName(path).constData(), W_OK) != 0)
            problem = QStringLiteral("cannot write: %1").arg(systemError(errno));
        break;
    case Kind::File: {
        // Tried: a temporary file made beside it and removed (permissions alone do not tell, e.g. in /proc).
        QSaveFile probe(path);
        probe.setDirectWriteFallback(false);
        if (!probe.open(QIODevice::WriteOnly)) {
            const QString folder = QFileInfo::exists(path) ? QString() : folderProblem(path);
            problem = QStringLiteral("cannot write: %1").arg(folder.isEmpty() ? probe.errorString() : folder);
        }
        probe.cancelWriting();
        break;
    }
    }
    if (problem.isEmpty())
        return true;
    if (error)
        *error = QStringLiteral("%1: %2").arg(path, problem);
    return false;
}

} // namespace rpcscope
