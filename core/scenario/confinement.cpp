#include "confinement.h"

#include <QDir>
#include <QFileInfo>

namespace rpcscope {

namespace {

/// @p path with every symbolic link resolved, also for a file that does not exist yet (its nearest existing folder
/// is resolved and the rest appended) and through a link to nothing: where a write to it would land.
QString resolvedPath(const QString &path, int depth = 0)
{
    QString existing = QDir::cleanPath(QFileInfo(path).absoluteFilePath());
    QStringList rest;
    while (!QFileInfo::exists(existing)) {
        const QFileInfo info(existing);
        if (info.isSymLink() && depth < 40) { // dangling: writing through it creates its target
            QString resolved = resolvedPath(info.symLinkTarget(), depth + 1);
            for (const QString &part : rest)
                resolved += QLatin1Char('/') + part;
            return QDir::cleanPath(resolved);
        }
        const QString parent = info.path();
        if (parent == existing)
            return QDir::cleanPath(path); // nothing of it exists, not even its root
        rest.prepend(info.fileName());
        existing = parent;
    }
    QString resolved = QFileInfo(existing).canonicalFilePath();
    for (const QString &part : rest)
        resolved += QLatin1Char('/') + part;
    return QDir::cleanPath(resolved);
}

bool isInside(const QString &resolved, const QString &folder)
{
    return resolved == folder || resolved.startsWith(folder.endsWith(u'/') ? folder : folder + QLatin1Char('/'));
}

} // namespace

QList<ScenarioProblem> confinementProblems(const Scenario &document, const QString &documentPath)
{
    const QString folder = resolvedPath(QFileInfo(documentPath).absolutePath());
    QList<ScenarioProblem> problems;
    auto check = [&](const QString &field, const QString &path, bool output) {
        if (path.isEmpty() || path == u"-")
            return;
        const QString resolved = resolvedPath(QDir(QFileInfo(documentPath).absolutePath()).absoluteFilePath(path));
        if (!isInside(resolved, folder))
            problems.append({ field,
                QStringLiteral("%1 is outside the document's folder (%2)")
                    .arg(QDir::toNativeSeparators(resolved), QDir::toNativeSeparators(folder)) });
        else if (output && QFileInfo::exists(resolved))
            problems.append({ field, QStringLiteral("%1 exists, and a document only writes new files").arg(resolved) });
    };
    auto checkList = [&](const QString &field, const QStringList &paths) {
        for (qsizetype i = 0; i < paths.size(); ++i)
            check(QStringLiteral("%1[%2]").arg(field).arg(i), paths[i], false);
    };
    checkList(QStringLiteral("schema.protos"), document.protos);
    checkList(QStringLiteral("schema.import_paths"), document.importPaths);
    checkList(QStringLiteral("schema.protosets"), document.protosets);
    check(QStringLiteral("connection.cacert"), document.caCert, false);
    check(QStringLiteral("connection.cert"), document.clientCert, false);
    check(QStringLiteral("connection.key"), document.clientKey, false);
    check(QStringLiteral("request_file"), document.requestFile, false);
    check(QStringLiteral("request_binary_file"), document.requestBinaryFile, false);
    check(QStringLiteral("raw_samples"), document.rawSamples, true);
    for (qsizetype i = 0; i < document.exports.size(); ++i)
        check(QStringLiteral("output.exports[%1].file").arg(i), document.exports[i].file, true);
    // A history database is added to, not replaced: it may exist, but only inside the folder.
    check(QStringLiteral("history.db"), document.db, false);
    return problems;
}

} // namespace rpcscope
