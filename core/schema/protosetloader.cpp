// Loads protosets: FileDescriptorSet files written by `protoc --descriptor_set_out`, merged into one schema.
#include "filesetbuilder.h"
#include "schema.h"
#include "util/inputfile.h"

#include <QFile>
#include <QFileInfo>

#include <google/protobuf/descriptor.pb.h>

namespace gp = google::protobuf;

namespace rpcscope {

namespace {

// Arbitrary bytes often parse as *some* protobuf message, so a successful parse alone proves little: a real set has
// nothing but named files at its top level.
bool looksLikeFileSet(const gp::FileDescriptorSet &set)
{
    if (!set.unknown_fields().empty())
        return false;
    for (const auto &file : set.file()) {
        if (file.name().empty())
            return false;
    }
    return true;
}

} // namespace

SchemaLoadResult loadProtoset(const QStringList &files)
{
    SchemaLoadResult result;
    if (files.isEmpty()) {
        result.errors.append({ {}, 0, 0, QStringLiteral("no protoset file given") });
        return result;
    }
    FileSetBuilder builder;
    for (const QString &path : files) {
        QString why;
        const std::optional<QByteArray> read = readInputFile(path, inputlimits::kProtoset, &why);
        if (!read) {
            result.errors.append({ path, 0, 0, why });
            continue;
        }
        const QByteArray &bytes = *read;
        gp::FileDescriptorSet set;
        if (!set.ParseFromArray(bytes.constData(), static_cast<int>(bytes.size())) || !looksLikeFileSet(set)) {
            result.errors.append({ path, 0, 0,
                QStringLiteral("not a protoset (a serialized FileDescriptorSet, as written by "
                               "protoc --descriptor_set_out=FILE --include_imports)") });
            continue;
        }
        if (set.file_size() == 0) {
            result.errors.append({ path, 0, 0, QStringLiteral("the protoset holds no files") });
            continue;
        }
        for (const auto &proto : set.file()) {
            QString error;
            if (!builder.add(proto, path, &error))
                result.errors.append({ path, 0, 0, error });
        }
    }
    if (!result.errors.isEmpty())
        return result;

    builder.addBuiltinWellKnownTypes();
    for (const auto &missing : builder.missingImports()) {
        result.errors.append({ missing.origin, 0, 0,
            QStringLiteral("\"%1\" imports \"%2\", which is in no protoset given (write the protoset with protoc "
                           "--include_imports, or give the protoset that has it)")
                .arg(QString::fromStdString(missing.importer), QString::fromStdString(missing.import)) });
    }
    if (!result.errors.isEmpty())
        return result;
    result.schema = Schema::fromFileDescriptorSet(builder.fileDescriptorSet(), &result.errors);
    return result;
}

} // namespace rpcscope
