#include "codecscommand.h"

#include "cliapp.h"

#include "codec/codecbench.h"
#include "codec/messagejson.h"
#include "engine/callsetup.h"
#include "schema/schema.h"
#include "util/inputfile.h"
#include "util/units.h"

#include <QCommandLineParser>
#include <QFile>
#include <QTextStream>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include <algorithm>
#include <random>

namespace rpcscope::cli {

namespace {

const QString kCommand = QStringLiteral("codecs");

/// Numbers as people read them in a table: a decimal for small values, none for large ones.
QString number(double value)
{
    return QString::number(value, 'f', value < 100 ? 1 : 0);
}

QString ratio(double value, double floor)
{
    return floor > 0 ? QString::number(value / floor, 'f', 1) + QLatin1Char('x') : QStringLiteral("-");
}

/// Columns padded to their widest cell: the first left-aligned, the others right-aligned.
QString table(const QList<QStringList> &rows)
{
    QList<qsizetype> widths;
    for (const QStringList &row : rows) {
        for (qsizetype i = 0; i < row.size(); ++i) {
            if (widths.size() <= i)
                widths.append(0);
            widths[i] = std::max(widths[i], row[i].size());
        }
    }
    QString text;
    for (const QStringList &row : rows) {
        QString line;
        for (qsizetype i = 0; i < row.size(); ++i) {
            if (i == 0)
                line += row[i].leftJustified(widths[i]);
            else
                line += QStringLiteral("  ") + row[i].rightJustified(widths[i]);
        }
        text += line + QLatin1Char('\n');
    }
    return text;
}

/// The checked values of the flags: the codecs to time, the time for each, and the output format.
struct CodecsFlags {
    std::vector<Codec> codecs;
    std::chrono::nanoseconds budget {};
    QString format;
};

/// codecs' description and options.
void addCodecsOptions(QCommandLineParser &parser)
{
    parser.setApplicationDescription(QStringLiteral(
        "Times encoding and decoding one message in each codec, without any network: the serialization share of\n"
        "a call's cost. The message is the method's request, built like 'run' builds it (-d, -D, --fill; an array\n"
        "in -D: its first element), or with --response the method's response type built from -d and --fill.\n"
        "Each codec is run in batches of about 10 ms for --time; the times are the median per call of the\n"
        "batches, decoding into a reused message. The floor is a memcpy of the protobuf-encoded bytes; MB/s are\n"
        "10^6 bytes of each codec's own encoding per second."));
    parser.addHelpOption();
    parser.addOptions({
        { QStringLiteral("proto"),
            QStringLiteral(".proto file with the service (repeatable; default: the built-in bench service)."),
            QStringLiteral("FILE") },
        { { QStringLiteral("i"), QStringLiteral("import-paths") },
            QStringLiteral("Import path for .proto files (repeatable; the well-known types are built in)."),
            QStringLiteral("DIR") },
        { QStringLiteral("call"), QStringLiteral("Method whose request is timed: package.Service/Method."),
            QStringLiteral("METHOD") },
        { { QStringLiteral("d"), QStringLiteral("data") }, QStringLiteral("The message as JSON (proto3 JSON mapping)."),
            QStringLiteral("JSON") },
        { { QStringLiteral("D"), QStringLiteral("data-file") }, QStringLiteral("The message as JSON, from a file."),
            QStringLiteral("FILE") },
        { QStringLiteral("fill"),
            QStringLiteral("Size knob: a bytes/string field to SIZE bytes (payload=1MiB) or a repeated field to SIZE "
                           "elements (nums=1000). Repeatable."),
            QStringLiteral("FIELD=SIZE") },
        { QStringLiteral("codecs"), QStringLiteral("Codecs to time, comma-separated (default protobuf,json,msgpack)."),
            QStringLiteral("LIST"), QStringLiteral("protobuf,json,msgpack") },
        { QStringLiteral("time"), QStringLiteral("Time spent on each codec, e.g. 500ms (default 1s)."),
            QStringLiteral("DURATION"), QStringLiteral("1s") },
        { QStringLiteral("response"), QStringLiteral("Time the method's response type instead of its request.") },
        { QStringLiteral("format"), QStringLiteral("Output: text or csv (default text)."), QStringLiteral("text|csv"),
            QStringLiteral("text") },
    });
}

/// The flags' values, checked; std::nullopt (with the usage error printed) when one is wrong or missing.
std::optional<CodecsFlags> checkedFlags(const QCommandLineParser &parser)
{
    const QStringList positional = parser.positionalArguments().mid(1);
    if (!positional.isEmpty()) {
        usageError(
            kCommand, QStringLiteral("unexpected argument \"%1\" (codecs takes no target)").arg(positional.first()));
        return std::nullopt;
    }
    if (!parser.isSet(QStringLiteral("call"))) {
        usageError(kCommand, QStringLiteral("--call is required (package.Service/Method)"));
        return std::nullopt;
    }

    CodecsFlags flags;
    for (const QString &name : parser.value(QStringLiteral("codecs")).split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        const std::optional<Codec> codec = parseCodec(name);
        if (!codec) {
            usageError(kCommand,
                QStringLiteral("--codecs: unknown codec \"%1\" (protobuf, json, msgpack)").arg(name.trimmed()));
            return std::nullopt;
        }
        flags.codecs.push_back(*codec);
    }
    if (flags.codecs.empty()) {
        usageError(kCommand, QStringLiteral("--codecs: name at least one codec (protobuf, json, msgpack)"));
        return std::nullopt;
    }
    QString why;
    const std::optional<std::chrono::nanoseconds> budget = parseDuration(parser.value(QStringLiteral("time")), &why);
    if (!budget || budget->count() <= 0) {
        usageError(kCommand, QStringLiteral("--time: %1").arg(budget ? QStringLiteral("must be positive") : why));
        return std::nullopt;
    }
    flags.budget = *budget;
    flags.format = parser.value(QStringLiteral("format"));
    if (flags.format != u"text" && flags.format != u"csv") {
        usageError(kCommand, QStringLiteral("--format: expected text or csv, got \"%1\"").arg(flags.format));
        return std::nullopt;
    }
    if (parser.isSet(QStringLiteral("d")) && parser.isSet(QStringLiteral("D"))) {
        usageError(kCommand, QStringLiteral("give the message with one of -d or -D"));
        return std::nullopt;
    }
    return flags;
}

/// The --proto files' schema, else the built-in bench service's; false (with the errors printed) when it fails.
bool loadSchema(const QCommandLineParser &parser, Schema *schema)
{
    const QStringList protos = parser.values(QStringLiteral("proto"));
    if (!protos.isEmpty()) {
        const SchemaLoadResult loaded = loadProtoFiles(protos, parser.values(QStringLiteral("i")));
        if (!loaded.ok()) {
            err() << loaded.errorText() << '\n';
            usageError(kCommand, QStringLiteral("the schema has %1 error(s), see above").arg(loaded.errors.size()));
            return false;
        }
        *schema = loaded.schema;
    } else {
        *schema = builtinBenchSchema();
    }
    return true;
}

/// The message's JSON from -d or -D into @p json, and for -D the prefix of its errors into @p where; false (with the
/// usage error printed) when the file cannot be read.
bool readMessageJson(const QCommandLineParser &parser, QByteArray *json, QString *where)
{
    if (parser.isSet(QStringLiteral("d"))) {
        *json = parser.value(QStringLiteral("d")).toUtf8();
    } else if (parser.isSet(QStringLiteral("D"))) {
        const QString path = parser.value(QStringLiteral("D"));
        QString why;
        const std::optional<QByteArray> read = readInputFile(path, inputlimits::kRequest, &why);
        if (!read) {
            usageError(kCommand, QStringLiteral("-D %1: %2").arg(path, why));
            return false;
        }
        *json = *read;
        *where = QStringLiteral("-D ") + path + QStringLiteral(": ");
    }
    return true;
}

/// --response: the method's response type built from -d and --fill; null (with the usage error printed) on an error.
std::unique_ptr<google::protobuf::Message> buildResponse(const QCommandLineParser &parser, const Schema &schema,
    const google::protobuf::MethodDescriptor *method, const QByteArray &json, const QString &where, QString *error)
{
    // -d and --fill describe the response here, not the request: a request's field is a likely mistake, named.
    const google::protobuf::Descriptor *type = method->output_type();
    QStringList fields;
    for (int i = 0; i < type->field_count(); ++i)
        fields << QString::fromStdString(type->field(i)->name());
    const QString hint = QStringLiteral(" (with --response, -d and --fill describe the response, %1, whose fields "
                                        "are: %2)")
                             .arg(QString::fromStdString(type->full_name()),
                                 fields.isEmpty() ? QStringLiteral("none") : fields.join(QStringLiteral(", ")));
    std::unique_ptr<google::protobuf::Message> message = messageFromJson(schema, type, json, error);
    if (!message) {
        usageError(kCommand, where + *error + hint);
        return nullptr;
    }
    for (const QString &fill : parser.values(QStringLiteral("fill"))) {
        if (!applyFill(message.get(), fill, error)) {
            usageError(kCommand, QStringLiteral("--fill ") + fill + QStringLiteral(": ") + *error + hint);
            return nullptr;
        }
    }
    return message;
}

/// The method's request, built as 'run' builds it; null (with the usage error printed) on an error.
std::unique_ptr<google::protobuf::Message> buildRequest(const QCommandLineParser &parser, const Schema &schema,
    const google::protobuf::MethodDescriptor *method, const QByteArray &json, const QString &where, QString *error)
{
    const RequestSpec spec(parser.value(QStringLiteral("call")), json, parser.values(QStringLiteral("fill")));
    const std::optional<GrpcCall> call = prepareGrpcCall(schema, spec, error);
    if (!call) {
        usageError(kCommand, where + *error);
        return nullptr;
    }
    std::string bytes;
    if (!call->requests.empty()) {
        bytes = call->requests.front();
    } else if (call->perCall) {
        // A template: its first call's request stands for all.
        std::mt19937_64 rng(1);
        std::string why;
        if (!call->perCall->encode(0, 0, rng, &bytes, &why)) {
            usageError(kCommand, where + QString::fromStdString(why));
            return nullptr;
        }
    }
    std::unique_ptr<google::protobuf::Message> message = schema.newMessage(method->input_type());
    if (!message || !message->ParseFromString(bytes)) {
        usageError(
            kCommand, QStringLiteral("cannot rebuild the request of %1").arg(parser.value(QStringLiteral("call"))));
        return nullptr;
    }
    return message;
}

/// The timings as CSV, the memcpy floor last.
void printCsv(const CodecBenchResult &result)
{
    out() << "codec,bytes,encode_ns,decode_ns,encode_mbps,decode_mbps,encode_vs_floor,decode_vs_floor\n";
    for (const CodecTiming &t : result.codecs) {
        out() << codecName(t.codec) << ',' << t.encodedBytes << ',';
        if (t.error.empty()) {
            out() << QString::number(t.encodeNs, 'f', 2) << ',' << QString::number(t.decodeNs, 'f', 2) << ','
                  << QString::number(t.encodeMBps, 'f', 2) << ',' << QString::number(t.decodeMBps, 'f', 2) << ','
                  << QString::number(result.memcpyNs > 0 ? t.encodeNs / result.memcpyNs : 0, 'f', 3) << ','
                  << QString::number(result.memcpyNs > 0 ? t.decodeNs / result.memcpyNs : 0, 'f', 3) << '\n';
        } else {
            out() << ",,,,,\n";
        }
    }
    out() << "memcpy," << result.floorBytes << ',' << QString::number(result.memcpyNs, 'f', 2) << ",,"
          << QString::number(result.memcpyMBps, 'f', 2) << ",,1.000,\n";
}

/// The timings as a table, under a line naming the message, and the memcpy floor below it.
void printTable(const CodecBenchResult &result, const google::protobuf::Message &message, bool response,
    const google::protobuf::MethodDescriptor *method, std::chrono::nanoseconds budget)
{
    out() << QString::fromStdString(message.GetDescriptor()->full_name()) << " (" << (response ? "response" : "request")
          << " of " << Schema::methodInfo(method).fullName() << "), " << formatDuration(budget) << " per codec\n\n";
    QList<QStringList> rows { { QStringLiteral("codec"), QStringLiteral("size"), QStringLiteral("encode ns/call"),
        QStringLiteral("decode ns/call"), QStringLiteral("encode MB/s"), QStringLiteral("decode MB/s"),
        QStringLiteral("encode/floor"), QStringLiteral("decode/floor") } };
    for (const CodecTiming &t : result.codecs) {
        if (!t.error.empty()) {
            rows.append({ codecName(t.codec), QStringLiteral("failed") });
            continue;
        }
        rows.append({ codecName(t.codec), formatBytes(static_cast<double>(t.encodedBytes)), number(t.encodeNs),
            number(t.decodeNs), number(t.encodeMBps), number(t.decodeMBps), ratio(t.encodeNs, result.memcpyNs),
            ratio(t.decodeNs, result.memcpyNs) });
    }
    out() << table(rows) << '\n'
          << "floor: memcpy of the " << formatBytes(static_cast<double>(result.floorBytes))
          << " protobuf bytes: " << number(result.memcpyNs) << " ns/call, " << number(result.memcpyMBps) << " MB/s\n";
}

} // namespace

int codecsCommand(const QStringList &arguments)
{
    QCommandLineParser parser;
    addCodecsOptions(parser);
    if (!parser.parse(arguments))
        return usageError(kCommand, parser.errorText());
    if (printCommandHelp(parser, kCommand))
        return ExitOk;
    const std::optional<CodecsFlags> flags = checkedFlags(parser);
    if (!flags)
        return ExitUsage;

    // Schema.
    Schema schema;
    if (!loadSchema(parser, &schema))
        return ExitUsage;
    QString error;
    const google::protobuf::MethodDescriptor *method = schema.findMethod(parser.value(QStringLiteral("call")), &error);
    if (!method)
        return usageError(kCommand, QStringLiteral("--call: ") + error);

    QByteArray json;
    QString where;
    if (!readMessageJson(parser, &json, &where))
        return ExitUsage;

    // The message, built as 'run' builds its request, or the response type from the same flags.
    const bool response = parser.isSet(QStringLiteral("response"));
    const std::unique_ptr<google::protobuf::Message> message = response
        ? buildResponse(parser, schema, method, json, where, &error)
        : buildRequest(parser, schema, method, json, where, &error);
    if (!message)
        return ExitUsage;

    const CodecBenchResult result = benchmarkCodecs(*message, flags->codecs, flags->budget);

    bool failed = false;
    for (const CodecTiming &timing : result.codecs) {
        if (!timing.error.empty()) {
            err() << "rpcscope-cli codecs: " << codecName(timing.codec) << ": " << QString::fromStdString(timing.error)
                  << '\n';
            failed = true;
        }
    }
    if (flags->format == u"csv")
        printCsv(result);
    else
        printTable(result, *message, response, method, flags->budget);
    out().flush();
    return failed ? ExitRuntime : ExitOk;
}

} // namespace rpcscope::cli
