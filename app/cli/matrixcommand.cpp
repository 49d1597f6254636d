#include "matrixcommand.h"

#include "cliapp.h"
#include "report/matrixreport.h"
#include "runcommand.h"

#include <QMap>

namespace rpcscope::cli {

namespace {

const char *const kMatrixHelp
    = R"(Usage: rpcscope-cli matrix [RUN OPTIONS] [--transports LIST] [--codecs LIST] [--payloads LIST]

Runs the same method over transports x codecs x payloads and prints one table: mean, p50, p99, req/s,
bytes/call, client and server CPU per call, and which share of the mean is codec time (from the no-RPC
baseline: the same payload and codec, encoded and decoded in process with one caller).

  --transports LIST  grpc,http,msgpack,none (default: all four)
  --codecs LIST      protobuf,json,msgpack (default: all three); each transport runs the codecs it carries:
                     grpc protobuf, msgpack msgpack, http and none all of them
  --payloads LIST    payload variants as --fill specs separated by ';', e.g. 'nums=2;nums=1000'
                     (default: the request as given)
  --grpc ADDR, --http URL, --msgpack ADDR
                     targets per transport; or --builtin to start each built-in server
  --format text|csv  (default text)
Every other option is run's (see 'rpcscope-cli run --help'): --call, -d, --fill, -n, -z, -c, --warmup, ...
)";

} // namespace

int matrixCommand(const QStringList &arguments)
{
    const QString cmd = QStringLiteral("matrix");
    QStringList rest { arguments.value(0), QStringLiteral("run") };
    QString transports = QStringLiteral("grpc,http,msgpack,none");
    QString codecs = QStringLiteral("protobuf,json,msgpack");
    QString payloads;
    QString format = QStringLiteral("text");
    QMap<QString, QString> targets;
    bool builtin = false;
    for (qsizetype i = 2; i < arguments.size(); ++i) {
        const QString &a = arguments.at(i);
        auto value = [&](QString *into) {
            if (i + 1 >= arguments.size())
                return false;
            *into = arguments.at(++i);
            return true;
        };
        const QString name = a.startsWith(QStringLiteral("--")) ? a.mid(2).section(QLatin1Char('='), 0, 0) : QString();
        if (a.startsWith(QStringLiteral("--")) && a.contains(QLatin1Char('='))) {
            // --flag=value: split, then handle like --flag value.
            const QString v = a.section(QLatin1Char('='), 1);
            if (name == u"transports" || name == u"codecs" || name == u"payloads" || name == u"format"
                || name == u"grpc" || name == u"http" || name == u"msgpack") {
                QStringList again = arguments;
                again.replace(i, QStringLiteral("--") + name);
                again.insert(i + 1, v);
                return matrixCommand(again);
            }
        }
        if (a == u"-h" || a == u"--help") {
            out() << kMatrixHelp;
            return ExitOk;
        }
        if (name == u"transports" || name == u"codecs" || name == u"payloads" || name == u"format") {
            QString *into = name == u"transports" ? &transports
                : name == u"codecs"               ? &codecs
                : name == u"payloads"             ? &payloads
                                                  : &format;
            if (!value(into))
                return usageError(cmd, QStringLiteral("--%1 needs a value").arg(name));
        } else if (name == u"grpc" || name == u"http" || name == u"msgpack") {
            if (!value(&targets[name]))
                return usageError(cmd, QStringLiteral("--%1 needs an address").arg(name));
        } else if (a == u"--transport" || a == u"--codec" || a.startsWith(QStringLiteral("--transport="))
            || a.startsWith(QStringLiteral("--codec="))) {
            return usageError(
                cmd, QStringLiteral("%1: the matrix sets it per cell; use --transports / --codecs").arg(a));
        } else {
            if (a == u"--builtin")
                builtin = true;
            rest << a;
        }
    }
    QList<TransportKind> kinds;
    for (const QString &t : transports.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        const auto kind = parseTransport(t);
        if (!kind)
            return usageError(cmd, QStringLiteral("--transports: \"%1\" is not grpc, http, msgpack or none").arg(t));
        kinds << *kind;
    }
    QList<Codec> codecList;
    for (const QString &c : codecs.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        const auto codec = parseCodec(c);
        if (!codec)
            return usageError(cmd, QStringLiteral("--codecs: \"%1\" is not protobuf, json or msgpack").arg(c));
        codecList << *codec;
    }
    if (format != u"text" && format != u"csv")
        return usageError(cmd, QStringLiteral("--format: \"%1\" is not text or csv").arg(format));
    for (TransportKind kind : std::as_const(kinds)) {
        if (kind != TransportKind::InProcess && !builtin && !targets.contains(transportName(kind)))
            return usageError(
                cmd, QStringLiteral("no target for %1: give --%1 ADDRESS or --builtin").arg(transportName(kind)));
    }
    const QList<MatrixCell> cells = matrixCells(kinds, codecList, payloads.split(QLatin1Char(';'), Qt::SkipEmptyParts));
    if (cells.isEmpty())
        return usageError(cmd, QStringLiteral("no transport in --transports carries a codec in --codecs"));

    int code = ExitOk;
    std::optional<Scenario> base = scenarioFromArguments(cmd, rest, &code, true);
    if (!base)
        return code;
    if (refuseSingleRunOutputs(cmd, rest, &*base))
        return ExitUsage;
    if (!base->target.isEmpty() && base->target != u"builtin")
        return usageError(cmd,
            QStringLiteral("give targets per transport (--grpc, --http, --msgpack) or --builtin, not \"%1\"")
                .arg(base->target));
    QList<MatrixResult> results;
    for (const MatrixCell &cell : cells) {
        Scenario scenario = *base;
        scenario.transport = transportName(cell.transport);
        scenario.codec = codecName(cell.codec);
        if (cell.transport == TransportKind::InProcess) {
            scenario.target.clear();
            scenario.concurrency = 1; // one caller, so the mean is the codec's time
        } else if (!builtin) {
            scenario.target = targets.value(transportName(cell.transport));
        }
        for (const QString &fill : cell.payload.split(QLatin1Char(','), Qt::SkipEmptyParts))
            scenario.fills << fill.trimmed();
        err() << "rpcscope-cli matrix: " << (cell.payload.isEmpty() ? QString() : cell.payload + QLatin1Char(' '))
              << cell.label() << "...\n";
        err().flush();
        RunOutcome outcome;
        const int code = runScenario(cmd, scenario, &outcome);
        if (code != ExitOk)
            return code;
        results.append({ cell, outcome.snapshot });
    }
    out() << (format == u"csv" ? formatMatrixCsv(results) : formatMatrixTable(results));
    out().flush();
    return ExitOk;
}

} // namespace rpcscope::cli
