// The request as users write it: JSON for a bench message (messageFromJson() against the built-in bench schema) or
// for a proto2 message with extensions ("[pkg.ext]" keys, tests/data/extensions.proto), or a template with
// placeholders (RequestTemplate::parse() and render(), then the rendered JSON parsed as a run does for every call).
// The first byte picks the message type.

#include "fuzzapp.h"

#include "codec/messagejson.h"
#include "codec/requesttemplate.h"
#include "schema/schema.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include <cstdio>
#include <cstdlib>
#include <random>

RPCSCOPE_FUZZ_INITIALIZE_QT

using namespace rpcscope;

namespace {

const Schema &benchSchema()
{
    static const Schema schema = builtinBenchSchema();
    return schema;
}

const Schema &extensionsSchema()
{
    static const Schema schema = [] {
        SchemaLoadResult result = loadProtoFiles({ QStringLiteral(RPCSCOPE_EXTENSIONS_PROTO) });
        if (!result.ok()) {
            fprintf(stderr, "%s\n", qPrintable(result.errorText()));
            abort();
        }
        return result.schema;
    }();
    return schema;
}

constexpr const char *kTypes[] = {
    "rpcscope.bench.v1.EchoRequest",
    "rpcscope.bench.v1.SumRequest",
    "rpcscope.bench.v1.ListRequest",
    "rpcscope.bench.v1.DownloadRequest",
    "rpcscope.bench.v1.ListResponse",
    "ext.v1.Base",
};

const Schema &schemaOf(const char *type)
{
    return QByteArray(type).startsWith("ext.") ? extensionsSchema() : benchSchema();
}

/// Rendering {{randomString N}} writes N characters per call (up to 100 million, by design): the fuzzer renders
/// only templates whose numbers are small, so that an input takes milliseconds.
bool hasOnlySmallNumbers(const QByteArray &text)
{
    int digits = 0;
    for (const char c : text) {
        digits = (c >= '0' && c <= '9') ? digits + 1 : 0;
        if (digits > 5)
            return false;
    }
    return true;
}

void parseMessage(const Schema &schema, const google::protobuf::Descriptor *type, const QByteArray &json)
{
    QString error;
    const std::unique_ptr<google::protobuf::Message> message = messageFromJson(schema, type, json, &error);
    if (!message) {
        if (error.isEmpty())
            abort(); // a refusal always says why
        return;
    }
    // What parses prints as JSON that parses to the same message: the same bytes (proto3), or the same print (proto2,
    // whose print names unset fields with their defaults, which reading it sets).
    const QByteArray printed = messageToJson(*message, false);
    const std::unique_ptr<google::protobuf::Message> again = messageFromJson(schema, type, printed, &error);
    const bool proto3 = type->file()->syntax() == google::protobuf::FileDescriptor::SYNTAX_PROTO3;
    if (!again
        || (proto3 ? again->SerializeAsString() != message->SerializeAsString()
                   : messageToJson(*again, false) != printed)) {
        fprintf(stderr, "does not round-trip: %s\n%s\n", qPrintable(error), printed.constData());
        abort();
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *typeName = kTypes[data[0] % std::size(kTypes)];
    const Schema &schema = schemaOf(typeName);
    const google::protobuf::Descriptor *type = schema.findMessage(QString::fromLatin1(typeName));
    if (!type)
        abort();
    const QByteArray json = QByteArray::fromRawData(reinterpret_cast<const char *>(data + 1), qsizetype(size - 1));
    if (!RequestTemplate::hasPlaceholders(json)) {
        parseMessage(schema, type, json);
        return 0;
    }
    QString error;
    const std::optional<RequestTemplate> tmpl = RequestTemplate::parse(json, &error);
    if (!tmpl) {
        if (error.isEmpty())
            abort();
        return 0;
    }
    if (!hasOnlySmallNumbers(json))
        return 0;
    std::mt19937_64 rng(size);
    for (uint64_t call = 0; call < 2; ++call) {
        const TemplateContext context { call, int(call), &rng };
        const std::string rendered = tmpl->render(context);
        QString why;
        messageFromJson(schema, type, QByteArray::fromStdString(rendered), &why);
    }
    return 0;
}
