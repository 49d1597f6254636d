#include "servecommand.h"

#include "cliapp.h"

#include "server/builtingrpcserver.h"
#include "server/builtinhttpserver.h"
#include "util/inputfile.h"
#include "util/units.h"

#include <QCommandLineParser>
#include <QFile>

#include <csignal>

namespace rpcscope::cli {

int serveCommand(const QStringList &arguments)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "Runs a built-in server for the bench service (rpcscope.bench.v1.Bench: Echo, Sum, List) until SIGINT or\n"
        "SIGTERM. grpc: gRPC with reflection; http: HTTP/1.1 POST /rpcscope.bench.v1.Bench/METHOD with JSON,\n"
        "msgpack or protobuf bodies; msgpack: msgpack-rpc over TCP; all: the three, each on its own port.\n"
        "The first line printed is the address (grpc, msgpack: HOST:PORT; http: a URL); for 'all' it is\n"
        "grpc=HOST:PORT http=URL msgpack=HOST:PORT."));
    parser.addHelpOption();
    parser.addPositionalArgument(QStringLiteral("kind"), QStringLiteral("grpc, http, msgpack or all"));
    parser.addOption({ QStringLiteral("host"), QStringLiteral("Address to bind (default 127.0.0.1)."),
        QStringLiteral("HOST"), QStringLiteral("127.0.0.1") });
    parser.addOption(
        { QStringLiteral("port"), QStringLiteral("Port to bind (default 0: a free port; 'all' takes free ports)."),
            QStringLiteral("PORT"), QStringLiteral("0") });
    parser.addOption({ QStringLiteral("threads"),
        QStringLiteral("Serving threads (default 0: one per CPU it may run on, so one when pinned to one)."),
        QStringLiteral("N"), QStringLiteral("0") });
    parser.addOption({ QStringLiteral("delay"),
        QStringLiteral("Answer every call this much later, e.g. 2ms (default: $RPCSCOPE_SERVE_DELAY, else 0): "
                       "a server made slower on purpose, for trying A/B comparisons."),
        QStringLiteral("DURATION") });
    parser.addOption({ QStringLiteral("burn"),
        QStringLiteral("Spend this much CPU time busy on the serving thread before every answer (every "
                       "message of a stream), e.g. 40us (default: $RPCSCOPE_SERVE_BURN, else 0): "
                       "server work made heavier, finer than --delay's timer (which adds at least "
                       "~150us)."),
        QStringLiteral("DURATION") });
    parser.addOption({ QStringLiteral("cert"), QStringLiteral("Serve TLS with this certificate chain (PEM)."),
        QStringLiteral("FILE") });
    parser.addOption({ QStringLiteral("key"), QStringLiteral("Private key of --cert (PEM)."), QStringLiteral("FILE") });
    parser.addOption({ QStringLiteral("client-ca"),
        QStringLiteral("Mutual TLS: require client certificates signed by these CAs (PEM)."), QStringLiteral("FILE") });
    if (!parser.parse(arguments))
        return usageError(QStringLiteral("serve"), parser.errorText());
    if (printCommandHelp(parser, QStringLiteral("serve")))
        return ExitOk;
    const QStringList kinds = parser.positionalArguments().mid(1);
    const QString kind = kinds.value(0);
    if (kinds.size() != 1 || (kind != u"grpc" && kind != u"http" && kind != u"msgpack" && kind != u"all"))
        return usageError(QStringLiteral("serve"), QStringLiteral("name the server: serve grpc|http|msgpack|all"));
    const bool wantGrpc = kind == u"grpc" || kind == u"all";
    bool okPort = false;
    const uint port = parser.value(QStringLiteral("port")).toUInt(&okPort);
    if (!okPort || port > 65535)
        return usageError(QStringLiteral("serve"),
            QStringLiteral("--port: \"%1\" is not a port number (0-65535)").arg(parser.value(QStringLiteral("port"))));
    bool okThreads = false;
    const int threads = parser.value(QStringLiteral("threads")).toInt(&okThreads);
    if (!okThreads || threads < 0)
        return usageError(QStringLiteral("serve"), QStringLiteral("--threads: expected a number >= 0"));

    std::optional<ServerTls> tls;
    if (parser.isSet(QStringLiteral("cert")) || parser.isSet(QStringLiteral("key"))
        || parser.isSet(QStringLiteral("client-ca"))) {
        if (kind != u"grpc")
            return usageError(
                QStringLiteral("serve"), QStringLiteral("TLS (--cert, --key, --client-ca) is for serve grpc only"));
        if (!parser.isSet(QStringLiteral("cert")) || !parser.isSet(QStringLiteral("key")))
            return usageError(QStringLiteral("serve"), QStringLiteral("TLS needs both --cert and --key"));
        tls.emplace();
        for (const auto &[flag, into] :
            { std::pair(QStringLiteral("cert"), &tls->certChain), std::pair(QStringLiteral("key"), &tls->privateKey),
                std::pair(QStringLiteral("client-ca"), &tls->clientCa) }) {
            if (!parser.isSet(flag))
                continue;
            QString why;
            const std::optional<QByteArray> pem = readInputFile(parser.value(flag), inputlimits::kPem, &why);
            if (!pem)
                return usageError(
                    QStringLiteral("serve"), QStringLiteral("--%1 %2: %3").arg(flag, parser.value(flag), why));
            *into = pem->toStdString();
        }
    }
    // --delay and --burn: the flag, else the environment variable (so a server command's environment can set it). A
    // value above 0 but below @p least is refused: it would silently be none (a delay is a timer's, in microseconds).
    auto durationSetting = [&](const QString &flag, const char *variable, std::chrono::nanoseconds least,
                               const QString &instead, std::chrono::nanoseconds *into) {
        const QString text = parser.isSet(flag) ? parser.value(flag) : qEnvironmentVariable(variable);
        if (text.isEmpty())
            return true;
        const QString source = parser.isSet(flag) ? QStringLiteral("--") + flag : QString::fromLatin1(variable);
        QString why;
        const auto value = text == u"0" ? std::optional(std::chrono::nanoseconds(0)) : parseDuration(text, &why);
        if (value && value->count() > 0 && *value < least)
            why = QStringLiteral("a %1 is at least %2 (or 0); %3").arg(flag, formatDuration(least), instead);
        if (!value || !why.isEmpty()) {
            usageError(QStringLiteral("serve"), source + QStringLiteral(": ") + why);
            return false;
        }
        *into = *value;
        return true;
    };
    std::chrono::nanoseconds extraDelay { 0 };
    std::chrono::nanoseconds burn { 0 }; // to the nanosecond: a burn of 2% of a call is a few hundred
    if (!durationSetting(QStringLiteral("delay"), "RPCSCOPE_SERVE_DELAY", std::chrono::microseconds(1),
            QStringLiteral("for less extra time a call, use --burn"), &extraDelay)
        || !durationSetting(QStringLiteral("burn"), "RPCSCOPE_SERVE_BURN", std::chrono::nanoseconds(0), {}, &burn))
        return ExitUsage;
    const QString host = parser.value(QStringLiteral("host"));
    const auto bindPort = static_cast<quint16>(kind == u"all" ? 0 : port);
    BuiltinGrpcServer grpcServer;
    BuiltinHttpServer httpServer;
    BuiltinMsgpackServer msgpackServer;
    const auto delayUs = std::chrono::duration_cast<std::chrono::microseconds>(extraDelay);
    grpcServer.setExtraDelay(delayUs);
    httpServer.setExtraDelay(delayUs);
    msgpackServer.setExtraDelay(delayUs);
    grpcServer.setBurn(burn);
    httpServer.setBurn(burn);
    msgpackServer.setBurn(burn);
    QString error;
    if ((wantGrpc && !grpcServer.start(host, bindPort, threads, &error, tls))
        || ((kind == u"http" || kind == u"all") && !httpServer.start(host, bindPort, threads, &error))
        || ((kind == u"msgpack" || kind == u"all") && !msgpackServer.start(host, bindPort, threads, &error))) {
        err() << "rpcscope-cli serve: " << error << '\n';
        return ExitRuntime;
    }
    if (kind == u"all")
        out() << "grpc=" << grpcServer.address() << " http=" << httpServer.url()
              << " msgpack=" << msgpackServer.address() << '\n';
    else if (kind == u"grpc")
        out() << grpcServer.address() << '\n';
    else if (kind == u"http")
        out() << httpServer.url() << '\n';
    else
        out() << msgpackServer.address() << '\n';
    out().flush();
    const sigset_t set = terminationSignals();
    int signal = 0;
    sigwait(&set, &signal);
    err() << "rpcscope-cli serve: stopping (" << (signal == SIGINT ? "SIGINT" : "SIGTERM") << "), served "
          << grpcServer.callsServed() + httpServer.callsServed() + msgpackServer.callsServed() << " calls\n";
    grpcServer.stop();
    httpServer.stop();
    msgpackServer.stop();
    return ExitOk;
}

} // namespace rpcscope::cli
