// The .proto loader (loadProtoFiles()) on one file: written to a temporary folder, loaded with the built-in
// well-known types and bench proto importable, as `--proto FILE` does.

#include "fuzzapp.h"

#include "schema/schema.h"

#include <QFile>
#include <QTemporaryDir>

#include <cstdlib>

using namespace rpcscope;

namespace {

QString g_path;

} // namespace

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz::makeApplication(argc, argv);
    static QTemporaryDir folder;
    g_path = folder.filePath(QStringLiteral("fuzz.proto"));
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    QFile file(g_path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate))
        abort();
    file.write(reinterpret_cast<const char *>(data), qint64(size));
    file.close();
    const SchemaLoadResult result = loadProtoFiles({ g_path });
    if (!result.ok() && result.errorText().isEmpty())
        abort(); // a refusal always says why
    return 0;
}
