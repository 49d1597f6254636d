#pragma once

#include <QIODevice>
#include <QString>

#include <memory>

class QFile;
class QSaveFile;

namespace rpcscope {

/**
 * A file the user asked rpcscope to write (a report, an export, raw samples, a merge, a document), written whole or
 * not at all, and never by replacing what is not a regular file:
 * - a regular file, or a new one: a temporary file beside it, renamed over it by commit() (symbolic links are
 *   followed, as QSaveFile does; what they lead to is judged, not the link);
 * - a character device or a FIFO the path names (/dev/null, /dev/stdout, a named pipe): opened and written in
 *   place, never replaced; a FIFO nobody opens for reading within 10 s is an error, not a wait;
 * - a folder, a block device or a socket: refused, naming what it is.
 * Every error starts with the path.
 */
class OutputFile {
public:
    explicit OutputFile(QString path);
    ~OutputFile();
    OutputFile(const OutputFile &) = delete;
    OutputFile &operator=(const OutputFile &) = delete;

    /// Opens it for writing; false with error() saying why. Nothing is replaced until commit().
    bool open();
    /// What to write to; valid after open() returned true.
    QIODevice *device() const;
    /// Makes what was written the file's content (rename or flush); false with error().
    bool commit();
    /// Drops what was written; a regular file keeps its old content.
    void cancel();
    QString error() const { return m_error; }
    QString path() const { return m_path; }

private:
    QString m_path;
    QString m_error;
    std::unique_ptr<QSaveFile> m_save;
    std::unique_ptr<QFile> m_stream;
};

/// Writes @p data to @p path as an OutputFile; false with @p error starting with the path.
bool writeOutputFile(const QString &path, const QByteArray &data, QString *error);

/**
 * Whether an OutputFile at @p path can be written, found before a run rather than after it: nothing is created or
 * opened (a FIFO's reader would see its end), false with @p error starting with the path.
 */
bool checkOutputPath(const QString &path, QString *error);

} // namespace rpcscope
