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

} // namespace

int codecsCommand(const QStringList &arguments)
{
    QCommandLineParser parser;
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
    if (!parser.parse(arguments))
        return usageError(kCommand, parser.errorText());
    if (printCommandHelp(parser, kCommand))
        return ExitOk;
    const QStringList positional = parser.positionalArguments().mid(1);
    if (!positional.isEmpty())
        return usageError(
            kCommand, QStringLiteral("unexpected argument \"%1\" (codecs takes no target)").arg(positional.first()));
    if (!parser.isSet(QStringLiteral("call")))
        return usageError(kCommand, QStringLiteral("--call is required (package.Service/Method)"));

    std::vector<Codec> codecs;
    for (const QString &name : parser.value(QStringLiteral("codecs")).split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        const std::optional<Codec> codec = parseCodec(name);
        if (!codec)
            return usageError(kCommand,
                QStringLiteral("--codecs: unknown codec \"%1\" (protobuf, json, msgpack)").arg(name.trimmed()));
        codecs.push_back(*codec);
    }
    if (codecs.empty())
        return usageError(kCommand, QStringLiteral("--codecs: name at least one codec (protobuf, json, msgpack)"));
    QString why;
    const std::optional<std::chrono::nanoseconds> budget = parseDuration(parser.value(QStringLiteral("time")), &why);
    if (!budget || budget->count() <= 0)
        return usageError(
            kCommand, QStringLiteral("--time: %1").arg(budget ? QStringLiteral("must be positive") : why));
    const QString format = parser.value(QStringLiteral("format"));
    if (format != u"text" && format != u"csv")
        return usageError(kCommand, QStringLiteral("--format: expected text or csv, got \"%1\"").arg(format));
    if (parser.isSet(QStringLiteral("d")) && parser.isSet(QStringLiteral("D")))
        return usageError(kCommand, QStringLiteral("give the message with one of -d or -D"));

    // Schema.
    Schema schema;
    const QStringList protos = parser.values(QStringLiteral("proto"));
    if (!protos.isEmpty()) {
        const SchemaLoadResult loaded = loadProtoFiles(protos, parser.values(QStringLiteral("i")));
        if (!loaded.ok()) {
            err() << loaded.errorText() << '\n';
            return usageError(
                kCommand, QStringLiteral("the schema has %1 error(s), see above").arg(loaded.errors.size()));
        }
        schema = loaded.schema;
    } else {
        schema = builtinBenchSchema();
    }
    QString error;
    const google::protobuf::MethodDescriptor *method = schema.findMethod(parser.value(QStringLiteral("call")), &error);
    if (!method)
        return usageError(kCommand, QStringLiteral("--call: ") + error);

    QByteArray json;
    QString where;
    if (parser.isSet(QStringLiteral("d"))) {
        json = parser.value(QStringLiteral("d")).toUtf8();
    } else if (parser.isSet(QStringLiteral("D"))) {
        const QString path = parser.value(QStringLiteral("D"));
        QString why;
        const std::optional<QByteArray> read = readInputFile(path, inputlimits::kRequest, &why);
        if (!read)
            return usageError(kCommand, QStringLiteral("-D %1: %2").arg(path, why));
        json = *read;
        where = QStringLiteral("-D ") + path + QStringLiteral(": ");
    }

    // The message, built as 'run' builds its request, or the response type from the same flags.
    std::unique_ptr<google::protobuf::Message> message;
    const bool response = parser.isSet(QStringLiteral("response"));
    if (response) {
        // -d and --fill describe the response here, not the request: a request's field is a likely mistake, named.
        const google::protobuf::Descriptor *type = method->output_type();
        QStringList fields;
        for (int i = 0; i < type->field_count(); ++i)
            fields << QString::fromStdString(type->field(i)->name());
        const QString hint = QStringLiteral(" (with --response, -d and --fill describe the response, %1, whose fields "
                                            "are: %2)")
                                 .arg(QString::fromStdString(type->full_name()),
                                     fields.isEmpty() ? QStringLiteral("none") : fields.join(QStringLiteral(", ")));
        message = messageFromJson(schema, type, json, &error);
        if (!message)
            return usageError(kCommand, where + error + hint);
        for (const QString &fill : parser.values(QStringLiteral("fill"))) {
            if (!applyFill(message.get(), fill, &error))
                return usageError(kCommand, QStringLiteral("--fill ") + fill + QStringLiteral(": ") + error + hint);
        }
    } else {
        const RequestSpec spec(parser.value(QStringLiteral("call")), json, parser.values(QStringLiteral("fill")));
        const std::optional<GrpcCall> call = prepareGrpcCall(schema, spec, &error);
        if (!call)
            return usageError(kCommand, where + error);
        std::string bytes;
        if (!call->requests.empty()) {
            bytes = call->requests.front();
        } else if (call->perCall) {
            // A template: its first call's request stands for all.
            std::mt19937_64 rng(1);
            std::string why;
            if (!call->perCall->encode(0, 0, rng, &bytes, &why))
                return usageError(kCommand, where + QString::fromStdString(why));
        }
        message = schema.newMessage(method->input_type());
        if (!message || !message->ParseFromString(bytes))
            return usageError(
                kCommand, QStringLiteral("cannot rebuild the request of %1").arg(parser.value(QStringLiteral("call"))));
    }

    const CodecBenchResult result = benchmarkCodecs(*message, codecs, *budget);

    bool failed = false;
    for (const CodecTiming &timing : result.codecs) {
        if (!timing.error.empty()) {
            err() << "rpcscope-cli codecs: " << codecName(timing.codec) << ": " << QString::fromStdString(timing.error)
                  << '\n';
            failed = true;
        }
    }
    if (format == u"csv") {
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
    } else {
        out() << QString::fromStdString(message->GetDescriptor()->full_name()) << " ("
              << (response ? "response" : "request") << " of " << Schema::methodInfo(method).fullName() << "), "
              << formatDuration(*budget) << " per codec\n\n";
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
              << " protobuf bytes: " << number(result.memcpyNs) << " ns/call, " << number(result.memcpyMBps)
              << " MB/s\n";
    }
    out().flush();
    return failed ? ExitRuntime : ExitOk;
}

} // namespace rpcscope::cli
