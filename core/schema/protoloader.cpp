// Loads .proto files at run time with libprotoc. protobuf's error-collector interface changed in 22.x
// (AddError -> RecordError with absl::string_view): this file is the only place that implements it.
#include "schema.h"
#include "util/inputfile.h"

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

/// Deeper than this, a .proto is refused before libprotobuf parses it: its parser recurses per level, and 20,000
/// nested messages overflowed the stack (SIGSEGV). Real schemas nest a few levels; protoc's own limit is about 100.
constexpr int kMaxProtoNesting = 64;

/**
 * The 1-based line where @p text's brackets ({ [ ( <, outside comments and strings) nest deeper than
 * kMaxProtoNesting, or 0.
 */
int tooDeepAtLine(const QByteArray &text)
{
    int depth = 0;
    int line = 1;
    const qsizetype n = text.size();
    for (qsizetype i = 0; i < n; ++i) {
        const char c = text[i];
        if (c == '\n') {
            ++line;
        } else if (c == '/' && i + 1 < n && text[i + 1] == '/') {
            while (i + 1 < n && text[i + 1] != '\n')
                ++i;
        } else if (c == '/' && i + 1 < n && text[i + 1] == '*') {
            for (i += 2; i + 1 < n && !(text[i] == '*' && text[i + 1] == '/'); ++i)
                line += text[i] == '\n';
            ++i;
        } else if (c == '"' || c == '\'') {
            for (++i; i < n && text[i] != c && text[i] != '\n'; ++i)
                i += text[i] == '\\';
        } else if (c == '{' || c == '[' || c == '(' || c == '<') {
            if (++depth > kMaxProtoNesting)
                return line;
        } else if ((c == '}' || c == ']' || c == ')' || c == '>') && depth > 0) {
            --depth;
        }
    }
    return 0;
}

/// User import paths first, then the built-in protos: a user's own copy of a well-known type wins.
class LayeredSourceTree : public gp::compiler::SourceTree {
public:
    QStringList roots; ///< the folders import names are relative to, searched in order

    /// The file an import name stands for in the first root that has it (whatever it is: a FIFO is found, then
    /// refused when read, never opened), or an empty string. Names that climb out of a root ("..") stand for none.
    QString diskFile(const std::string &filename) const
    {
        const QString name = QString::fromStdString(filename);
        if (name.isEmpty() || name.startsWith(u'/') || name.contains(u'\\')
            || name.split(u'/').contains(QStringLiteral("..")))
            return {};
        for (const QString &root : roots) {
            QString candidate = QDir(root).filePath(name);
            if (QFileInfo::exists(candidate))
                return candidate;
        }
        return {};
    }

    gp::io::ZeroCopyInputStream *Open(const std::string &filename) override
    {
        m_lastError.clear();
        QByteArray data;
        if (const QString path = diskFile(filename); !path.isEmpty()) {
            // Read as every input is (a regular file, bounded), then checked for nesting before libprotobuf sees it.
            QString why;
            const std::optional<QByteArray> text = readInputFile(path, inputlimits::kProto, &why);
            if (!text) {
                m_lastError = why.toStdString();
                return nullptr;
            }
            if (const int line = tooDeepAtLine(*text)) {
                m_lastError = QStringLiteral("nested more than %1 levels deep at line %2; refused before parsing")
                                  .arg(kMaxProtoNesting)
                                  .arg(line)
                                  .toStdString();
                return nullptr;
            }
            data = *text;
        } else {
            QFile embedded(kEmbeddedRoot + QString::fromStdString(filename));
            if (!embedded.open(QIODevice::ReadOnly))
                return nullptr;
            data = embedded.readAll();
        }
        m_buffers.push_back(data);
        const QByteArray &kept = m_buffers.back();
        return new gp::io::ArrayInputStream(kept.constData(), static_cast<int>(kept.size()));
    }

    std::string GetLastErrorMessage() override
    {
        return m_lastError.empty() ? "file not found (searched the import paths and the built-in well-known types)"
                                   : m_lastError;
    }

private:
    std::list<QByteArray> m_buffers; // stable addresses for the streams handed out
    std::string m_lastError;
};

class ErrorCollector : public gp::compiler::MultiFileErrorCollector {
public:
    ErrorCollector(const LayeredSourceTree *tree, QList<SchemaError> *errors) : m_tree(tree), m_errors(errors) { }

    // protobuf passes 0-based line and column, -1 when there is none.
    void AddError(const std::string &filename, int line, int column, const std::string &message) override
    {
        const QString onDisk = m_tree->diskFile(filename);
        const QString file = onDisk.isEmpty() ? QString::fromStdString(filename) : onDisk;
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
    const LayeredSourceTree *m_tree;
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
        tree.roots << root;
    if (const QString installed = installedProtoDir(); !installed.isEmpty())
        tree.roots << installed; // last: the user's own folders come first

    ErrorCollector collector(&tree, &result.errors);
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
        ErrorCollector collector(&tree, &errors);
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
