#include "serverlaunch.h"

namespace rpcscope {

QString ServerLaunch::start(const ServerCommand &command, TransportKind kind, QString *error)
{
    m_command = command;
    m_kind = kind;
    const QString address = m_server.start(command, error);
    return address.isEmpty() ? QString() : dialAddress(kind, address);
}

QString ServerLaunch::restart(QString *error)
{
    m_server.stop();
    return start(m_command, m_kind, error);
}

QString serveReadyPattern()
{
    return QStringLiteral("^((?:http://)?[0-9.]+:[0-9]+)$");
}

QString serveSubcommand(TransportKind kind)
{
    const char16_t *serve = transportInfo(kind).serve;
    return serve ? QString::fromUtf16(serve) : QStringLiteral("grpc"); // the no-RPC baseline calls none
}

ServerCommand builtinServeCommand(const QString &program, TransportKind kind)
{
    ServerCommand command;
    QString quoted = program;
    quoted.replace(QLatin1Char('\''), QStringLiteral("'\\''"));
    command.command = QStringLiteral("'%1' serve %2 --port {port}").arg(quoted, serveSubcommand(kind));
    command.readyPattern = serveReadyPattern();
    return command;
}

QString dialAddress(TransportKind kind, const QString &address)
{
    return kind == TransportKind::Http && !address.startsWith(QLatin1String("http://"))
            && !address.startsWith(QLatin1String("https://"))
        ? QStringLiteral("http://") + address
        : address;
}

} // namespace rpcscope
