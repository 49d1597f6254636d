// Loads .proto files at run time with libprotoc. protobuf's error-collector interface changed in 22.x
// (AddError -> RecordError with absl::string_view): this file is the only place that implements it.
#include "schema.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QSet>

#include <google/protobuf/compiler/importer.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <list>
#include <set>

namespace gp = google::protobuf;

namespace rpcscope {

namespace {

/// The protos built into rpcscope (well-known types, the bench service), as a Qt resource folder.
const QString kEmbeddedRoot = QStringLiteral(":/rpcscope/proto/");

/// User import paths first, then the built-in protos: a user's own copy of a well-known type wins.
class LayeredSourceTree : public gp::compiler::SourceTree {
public:
    gp::compiler::DiskSourceTree disk;

    gp::io::ZeroCopyInputStream *Open(const std::string &filename) override
    {
        if (gp::io::ZeroCopyInputStream *stream = disk.Open(filename))
            return stream;
        QFile embedded(kEmbeddedRoot + QString::fromStdString(filename));
        if (embedded.open(QIODevice::ReadOnly)) {
            m_buffers.push_back(embedded.readAll());
            const QByteArray &data = m_buffers.back();
            return new gp::io::ArrayInputStream(data.constData(), static_cast<int>(data.size()));
        }
        return nullptr;
    }

    std::string GetLastErrorMessage() override
    {
        return "file not found (searched the import paths and the built-in well-known types)";
    }

private:
    std::list<QByteArray> m_buffers; // stable addresses for the streams handed out
};

class ErrorCollector : public gp::compiler::MultiFileErrorCollector {
public:
    ErrorCollector(gp::compiler::DiskSourceTree *disk, QList<SchemaError> *errors) : m_disk(disk), m_errors(errors) { }

    // protobuf passes 0-based line and column, -1 when there is none.
    void AddError(const std::string &filename, int line, int column, const std::string &message) override
    {
        std::string diskFile;
        QString file = m_disk->VirtualFileToDiskFile(filename, &diskFile) ? QString::fromStdString(diskFile)
                                                                          : QString::fromStdString(filename);
        SchemaError error { file, line >= 0 ? line + 1 : 0, column >= 0 ? column + 1 : 0,
            QString::fromStdString(message) };
        if (m_seen.contains(error.toString()))
            return;
        m_seen.insert(error.toString());
        // A file that is not a .proto at all (20 KB of garbage) makes thousands: the first ones say what is wrong.
        if (m_errors->size() == kMaxErrors) {
            m_errors->append(
                { file, 0, 0, QStringLiteral("more errors follow; the first %1 are shown").arg(kMaxErrors) });
            return;
        }
        if (m_errors->size() > kMaxErrors)
            return;
        m_errors->append(error);
    }

private:
    static constexpr qsizetype kMaxErrors = 100;
    gp::compiler::DiskSourceTree *m_disk;
    QList<SchemaError> *m_errors;
    QSet<QString> m_seen; // each error once (protobuf may report one several times)
};

void collectWithDependencies(const gp::FileDescriptor *file, std::set<std::string> &seen, gp::FileDescriptorSet &set)
{
    if (!seen.insert(file->name()).second)
        return;
    for (int i = 0; i < file->dependency_count(); ++i)
        collectWithDependencies(file->dependency(i), seen, set);
    file->CopyTo(set.add_file());
}

} // namespace

QString installedProtoDir()
{
    if (!QCoreApplication::instance())
        return {};
    // Found from where the binary is, so an installed copy needs no path baked in (the build tree has none).
    const QString dir
        = QDir::cleanPath(QCoreApplication::applicationDirPath() + QStringLiteral("/../share/rpcscope/proto"));
    return QFileInfo(dir).isDir() ? dir : QString();
}

SchemaLoadResult loadProtoFiles(const QStringList &files, const QStringList &importPaths)
{
    SchemaLoadResult result;
    LayeredSourceTree tree;
    QStringList roots;
    const QString installed = installedProtoDir();
    for (const QString &path : importPaths) {
        const QFileInfo info(path);
        if (!info.isDir()) {
            result.errors.append({ path, 0, 0, QStringLiteral("import path is not a readable folder") });
            continue;
        }
        roots << info.absoluteFilePath();
    }

    // Map each file to its virtual name: relative to the import path that contains it, else its own folder
    // becomes an import root (as ghz does).
    QStringList virtualNames;
    for (const QString &file : files) {
        const QFileInfo info(file);
        QString virtualName;
        if (info.isFile()) {
            const QString absolute = info.absoluteFilePath();
            for (const QString &root : std::as_const(roots)) {
                if (absolute.startsWith(root + QLatin1Char('/'))) {
                    virtualName = absolute.mid(root.size() + 1);
                    break;
                }
            }
            if (virtualName.isEmpty()) {
                const QString dir = info.absolutePath();
                if (!roots.contains(dir))
                    roots << dir;
                virtualName = info.fileName();
            }
        } else if (QFileInfo(file).isRelative()) {
            for (const QString &root : roots + (installed.isEmpty() ? QStringList() : QStringList { installed })) {
                if (QFileInfo(QDir(root).filePath(file)).isFile()) {
                    virtualName = QDir::cleanPath(file);
                    break;
                }
            }
        }
        if (virtualName.isEmpty()) {
            result.errors.append({ file, 0, 0,
                info.exists() ? QStringLiteral("not a readable file") : QStringLiteral("file not found") });
            continue;
        }
        virtualNames << virtualName;
    }
    for (const QString &root : std::as_const(roots))
        tree.disk.MapPath("", root.toStdString());
    if (const QString installed = installedProtoDir(); !installed.isEmpty())
        tree.disk.MapPath("", installed.toStdString()); // last: the user's own folders come first

    ErrorCollector collector(&tree.disk, &result.errors);
    gp::compiler::Importer importer(&tree, &collector);
    gp::FileDescriptorSet set;
    std::set<std::string> seen;
    for (const QString &name : std::as_const(virtualNames)) {
        if (const gp::FileDescriptor *file = importer.Import(name.toStdString()))
            collectWithDependencies(file, seen, set);
    }
    if (!result.errors.isEmpty())
        return result;
    result.schema = Schema::fromFileDescriptorSet(set, &result.errors);
    return result;
}

Schema builtinBenchSchema()
{
    static const Schema schema = [] {
        LayeredSourceTree tree;
        QList<SchemaError> errors;
        ErrorCollector collector(&tree.disk, &errors);
        gp::compiler::Importer importer(&tree, &collector);
        gp::FileDescriptorSet set;
        std::set<std::string> seen;
        if (const gp::FileDescriptor *file = importer.Import("rpcscope/bench/v1/bench.proto"))
            collectWithDependencies(file, seen, set);
        return Schema::fromFileDescriptorSet(set, &errors);
    }();
    return schema;
}

} // namespace rpcscope
