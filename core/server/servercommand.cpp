#include "servercommand.h"

#include "util/cpuset.h"
#include "util/units.h"

#include <QFile>
#include <QJsonArray>
#include <QRandomGenerator>
#include <QRegularExpression>

#include <algorithm>

#include <cerrno>
#include <cstring>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace rpcscope {

namespace {

const QString portPlaceholder = QStringLiteral("{port}");

QString formatTimeout(std::chrono::milliseconds timeout)
{
    return timeout.count() % 1000 == 0 ? QStringLiteral("%1s").arg(timeout.count() / 1000)
                                       : QStringLiteral("%1ms").arg(timeout.count());
}

QJsonArray environmentJson(const QList<QPair<QString, QString>> &environment)
{
    QJsonArray env;
    for (const auto &[name, value] : environment)
        env.append(QString(name + QLatin1Char('=') + value));
    return env;
}

QString substitutePort(QString text, quint16 port)
{
    return text.replace(portPlaceholder, QString::number(port));
}

} // namespace

bool looksLikeCommand(const QString &target)
{
    return target.contains(portPlaceholder)
        || std::any_of(target.begin(), target.end(), [](QChar c) { return c.isSpace(); });
}

std::optional<QStringList> splitCommandLine(const QString &command, QString *error)
{
    auto fail = [&](const QString &why) -> std::optional<QStringList> {
        if (error)
            *error = why;
        return std::nullopt;
    };
    QStringList words;
    QString word;
    bool inWord = false; // so that '' is an (empty) word
    const qsizetype n = command.size();
    for (qsizetype i = 0; i < n; ++i) {
        const QChar c = command.at(i);
        if (c == u'\'') {
            const qsizetype close = command.indexOf(QLatin1Char('\''), i + 1);
            if (close < 0)
                return fail(QStringLiteral("unterminated single quote (opened at column %1)").arg(i + 1));
            word += QStringView(command).mid(i + 1, close - i - 1);
            inWord = true;
            i = close;
        } else if (c == u'"') {
            const qsizetype open = i;
            bool closed = false;
            for (++i; i < n; ++i) {
                const QChar d = command.at(i);
                if (d == u'"') {
                    closed = true;
                    break;
                }
                if (d == u'\\' && i + 1 < n) {
                    const QChar next = command.at(i + 1);
                    if (next == u'"' || next == u'\\' || next == u'$' || next == u'`') {
                        word += next;
                        ++i;
                        continue;
                    }
                    if (next == u'\n') {
                        ++i;
                        continue;
                    }
                }
                word += d;
            }
            if (!closed)
                return fail(QStringLiteral("unterminated double quote (opened at column %1)").arg(open + 1));
            inWord = true;
        } else if (c == u'\\') {
            if (i + 1 >= n)
                return fail(QStringLiteral("ends with a backslash"));
            ++i;
            if (command.at(i) != u'\n') { // backslash-newline continues the line
                word += command.at(i);
                inWord = true;
            }
        } else if (c.isSpace()) {
            if (inWord)
                words << std::exchange(word, {});
            inWord = false;
        } else {
            word += c;
            inWord = true;
        }
    }
    if (inWord)
        words << word;
    if (words.isEmpty())
        return fail(QStringLiteral("empty command"));
    return words;
}

namespace {

/// Whether 127.0.0.1:@p port can be bound now (SO_REUSEADDR, as servers set it: a port in TIME_WAIT is free).
bool loopbackPortFree(quint16 port)
{
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return false;
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in address {};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool free = ::bind(fd, reinterpret_cast<const sockaddr *>(&address), sizeof address) == 0;
    ::close(fd);
    return free;
}

/// The first port of the kernel's ephemeral range (32768 unless configured), or 0.
int ephemeralRangeStart()
{
    QFile range(QStringLiteral("/proc/sys/net/ipv4/ip_local_port_range"));
    if (!range.open(QIODevice::ReadOnly))
        return 0;
    return QString::fromLatin1(range.readAll()).simplified().section(u' ', 0, 0).toInt();
}

} // namespace

quint16 pickFreeLoopbackPort(QString *error)
{
    // Below the ephemeral range, out of the well-known ports: 10000 up to it.
    if (const int start = ephemeralRangeStart(); start > 12000) {
        for (int attempt = 0; attempt < 64; ++attempt) {
            const auto port = static_cast<quint16>(10000 + QRandomGenerator::global()->bounded(start - 10000));
            if (loopbackPortFree(port))
                return port;
        }
    }
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address {};
    address.sin_family = AF_INET;
    address.sin_port = 0;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    quint16 port = 0;
    if (fd >= 0 && ::bind(fd, reinterpret_cast<const sockaddr *>(&address), sizeof address) == 0
        && ::getsockname(fd, reinterpret_cast<sockaddr *>(&address), &length) == 0) {
        port = ntohs(address.sin_port);
    } else if (error) {
        *error = QStringLiteral("cannot pick a free port on 127.0.0.1: %1")
                     .arg(QString::fromLocal8Bit(std::strerror(errno)));
    }
    if (fd >= 0)
        ::close(fd);
    return port;
}

bool ServerCommand::usesPort() const
{
    if (command.contains(portPlaceholder))
        return true;
    return std::any_of(environment.begin(), environment.end(),
        [](const QPair<QString, QString> &entry) { return entry.second.contains(portPlaceholder); });
}

bool ServerCommand::check(QString *error) const
{
    auto fail = [&](const QString &field, const QString &why) {
        if (error)
            *error = QStringLiteral("server.") + field + QStringLiteral(": ") + why;
        return false;
    };
    QString why;
    if (!splitCommandLine(command, &why))
        return fail(QStringLiteral("command"), why);
    for (qsizetype i = 0; i < environment.size(); ++i) {
        if (environment.at(i).first.isEmpty() || environment.at(i).first.contains(QLatin1Char('=')))
            return fail(QStringLiteral("env[%1]").arg(i), QStringLiteral("expected NAME=value"));
    }
    const QRegularExpression pattern(readyPattern);
    if (!pattern.isValid())
        return fail(QStringLiteral("readyPattern"), pattern.errorString());
    if (!usesPort()) {
        // Said in the user's words (each front end names its own field: --ready, "Ready when output matches"), the
        // example as it is typed, not escaped for JSON.
        const QString needed = QStringLiteral(
            "a regular expression for the line it prints once it listens, with the address to dial as its first "
            "group in parentheses, e.g. listening on (\\S+)");
        if (readyPattern.isEmpty()) {
            if (error)
                *error = QStringLiteral("a command without {port} needs a ready pattern: ") + needed;
            return false;
        }
        if (pattern.captureCount() < 1) {
            if (error)
                *error
                    = QStringLiteral("the ready pattern \"%1\" has no group for the address to dial (the command has "
                                     "no {port}): ")
                          .arg(readyPattern)
                    + needed;
            return false;
        }
    }
    if (readyTimeout.count() <= 0)
        return fail(QStringLiteral("readyTimeout"), QStringLiteral("must be positive"));
    return true;
}

QJsonObject ServerCommand::toJson() const
{
    QJsonObject json { { QStringLiteral("command"), command } };
    if (!workingDirectory.isEmpty())
        json.insert(QStringLiteral("workingDirectory"), workingDirectory);
    if (!environment.isEmpty())
        json.insert(QStringLiteral("env"), environmentJson(environment));
    if (!readyPattern.isEmpty())
        json.insert(QStringLiteral("readyPattern"), readyPattern);
    json.insert(QStringLiteral("readyTimeout"), formatTimeout(readyTimeout));
    return json;
}

std::optional<ServerCommand> ServerCommand::fromJson(const QJsonObject &json, QString *error)
{
    auto fail = [&](const QString &field, const QString &why) -> std::optional<ServerCommand> {
        if (error)
            *error = QStringLiteral("server.") + field + QStringLiteral(": ") + why;
        return std::nullopt;
    };
    static const QStringList known { QStringLiteral("command"), QStringLiteral("workingDirectory"),
        QStringLiteral("env"), QStringLiteral("readyPattern"), QStringLiteral("readyTimeout") };
    for (auto it = json.begin(); it != json.end(); ++it) {
        if (!known.contains(it.key()))
            return fail(it.key(), QStringLiteral("unknown field (known: %1)").arg(known.join(QStringLiteral(", "))));
    }
    ServerCommand result;
    const QJsonValue command = json.value(QStringLiteral("command"));
    if (command.isUndefined())
        return fail(QStringLiteral("command"), QStringLiteral("missing"));
    if (!command.isString())
        return fail(QStringLiteral("command"), QStringLiteral("expected a string"));
    result.command = command.toString();
    for (const auto &[key, into] : { std::pair(QStringLiteral("workingDirectory"), &result.workingDirectory),
             std::pair(QStringLiteral("readyPattern"), &result.readyPattern) }) {
        const QJsonValue value = json.value(key);
        if (value.isUndefined())
            continue;
        if (!value.isString())
            return fail(key, QStringLiteral("expected a string"));
        *into = value.toString();
    }
    const QJsonValue env = json.value(QStringLiteral("env"));
    if (!env.isUndefined()) {
        if (!env.isArray())
            return fail(QStringLiteral("env"), QStringLiteral("expected an array of \"NAME=value\" strings"));
        const QJsonArray entries = env.toArray();
        for (qsizetype i = 0; i < entries.size(); ++i) {
            const QString field = QStringLiteral("env[%1]").arg(i);
            if (!entries.at(i).isString())
                return fail(field, QStringLiteral("expected a string"));
            const QString entry = entries.at(i).toString();
            const qsizetype equals = entry.indexOf(QLatin1Char('='));
            if (equals <= 0)
                return fail(field, QStringLiteral("expected NAME=value, got \"%1\"").arg(entry));
            result.environment.append({ entry.left(equals), entry.mid(equals + 1) });
        }
    }
    const QJsonValue timeout = json.value(QStringLiteral("readyTimeout"));
    if (!timeout.isUndefined()) {
        if (!timeout.isString())
            return fail(QStringLiteral("readyTimeout"), QStringLiteral("expected a duration string such as \"10s\""));
        QString why;
        const auto parsed = parseDuration(timeout.toString(), &why);
        if (!parsed)
            return fail(QStringLiteral("readyTimeout"), why);
        result.readyTimeout = std::chrono::duration_cast<std::chrono::milliseconds>(*parsed);
        if (result.readyTimeout.count() <= 0)
            return fail(QStringLiteral("readyTimeout"), QStringLiteral("must be at least 1ms"));
    }
    if (!result.check(error))
        return std::nullopt;
    return result;
}

QJsonObject ServerCommand::describe() const
{
    QString program;
    if (const auto words = splitCommandLine(command, nullptr))
        program = ServerProcess::resolveProgram(words->first(), workingDirectory, environment);
    QJsonObject described {
        { QStringLiteral("command"), command },
        { QStringLiteral("workingDirectory"), workingDirectory },
        { QStringLiteral("env"), environmentJson(environment) },
        { QStringLiteral("program"), program },
        { QStringLiteral("readyPattern"), readyPattern },
        { QStringLiteral("readyTimeout"), formatTimeout(readyTimeout) },
    };
    if (!cpus.empty())
        described.insert(QStringLiteral("cpus"), formatCpuList(cpus));
    return described;
}

QString RunningServer::start(const ServerCommand &command, QString *error)
{
    m_process.stop();
    m_address.clear();
    m_port = 0;
    m_commandLine.clear();
    if (!command.check(error))
        return {};
    const std::optional<QStringList> words = splitCommandLine(command.command, error);
    if (!words)
        return {};
    if (command.usesPort()) {
        m_port = pickFreeLoopbackPort(error);
        if (m_port == 0)
            return {};
    }
    ServerProcess::Launch launch;
    for (const QString &word : *words)
        m_commandLine << substitutePort(word, m_port);
    launch.program = m_commandLine.first();
    launch.arguments = m_commandLine.mid(1);
    launch.workingDirectory = command.workingDirectory;
    for (const auto &[name, value] : command.environment)
        launch.environment.append({ name, substitutePort(value, m_port) });
    launch.readyPattern = command.readyPattern;
    launch.readyPort = m_port;
    launch.readyTimeout = command.readyTimeout;
    launch.cpus = command.cpus;
    if (!m_process.start(launch, error)) {
        m_port = 0;
        return {};
    }
    m_address = command.usesPort() ? QStringLiteral("127.0.0.1:%1").arg(m_port) : m_process.readyText();
    return m_address;
}

} // namespace rpcscope
