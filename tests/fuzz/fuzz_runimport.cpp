// The report importers (importRunJson(): rpcscope's own JSON and ghz's), then every text export of what imports,
// and the JSON export imported again (what `export` writes, `import` must read).

#include "fuzzapp.h"

#include "export/exporter.h"
#include "store/runrecord.h"

#include <cstdio>
#include <cstdlib>

RPCSCOPE_FUZZ_INITIALIZE_QT

using namespace rpcscope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArray json = QByteArray::fromRawData(reinterpret_cast<const char *>(data), qsizetype(size));
    QString error;
    const std::optional<RunRecord> run = importRunJson(json, QStringLiteral("fuzz.json"), &error);
    if (!run) {
        if (error.isEmpty())
            abort(); // a refusal always says why
        return 0;
    }
    for (int f = 0; f <= int(ExportFormat::Svg); ++f) {
        const auto format = ExportFormat(f);
        if (!isTextFormat(format))
            continue;
        QString exportError;
        const QByteArray text = exportRun(*run, format, &exportError);
        if (format == ExportFormat::Json) {
            if (!importRunJson(text, QStringLiteral("again.json"), &exportError)) {
                fprintf(stderr, "the JSON export does not import: %s\n", qPrintable(exportError));
                abort();
            }
        }
    }
    return 0;
}
