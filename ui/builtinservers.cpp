#include "builtinservers.h"

#include "server/builtingrpcserver.h"
#include "server/builtinhttpserver.h"
#include "server/serverprocess.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QSocketNotifier>
#include <QTimer>

#include <sys/syscall.h>
#include <unistd.h>

namespace rpcscope {

namespace {

/// A descriptor that turns readable when process @p pid exits (Linux 5.3+); -1 when the kernel has none.
int openPidfd(qint64 pid)
{
#ifdef SYS_pidfd_open
    return static_cast<int>(::syscall(SYS_pidfd_open, static_cast<pid_t>(pid), 0));
#else
    Q_UNUSED(pid);
    return -1;
#endif
}

} // namespace

BuiltinServers::BuiltinServers(QObject *parent) : QObject(parent) { }

BuiltinServers::~BuiltinServers()
{
    stop();
}

QString BuiltinServers::cliProgram() const
{
    return m_cliProgram.isEmpty()
        ? QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("rpcscope-cli"))
        : m_cliProgram;
}

qint64 BuiltinServers::pid() const
{
    return m_process ? m_process->pid() : 0;
}

bool BuiltinServers::start(const QString &cliProgram, QString *error)
{
    stop();
    m_cliProgram = cliProgram;
    QString why;
    if (QFileInfo(this->cliProgram()).isExecutable() && startChild(this->cliProgram(), &why))
        return true;
    if (startInProcess(&why))
        return true;
    if (error)
        *error = why;
    return false;
}

bool BuiltinServers::startChild(const QString &cli, QString *why)
{
    m_process = std::make_unique<ServerProcess>();
    if (!m_process->start(cli, { QStringLiteral("serve"), QStringLiteral("all") },
            QStringLiteral("^(grpc=\\S+ http=\\S+ msgpack=\\S+)$"), std::chrono::seconds(10), why)) {
        m_process.reset();
        return false;
    }
    for (const QString &part : m_process->readyText().split(QLatin1Char(' '))) {
        const QString value = part.section(QLatin1Char('='), 1);
        if (part.startsWith(QStringLiteral("grpc=")))
            m_targets.insert(TransportKind::Grpc, value);
        else if (part.startsWith(QStringLiteral("http=")))
            m_targets.insert(TransportKind::Http, value);
        else if (part.startsWith(QStringLiteral("msgpack=")))
            m_targets.insert(TransportKind::Msgpack, value);
    }
    if (address().isEmpty()) {
        m_process.reset();
        m_targets.clear();
        return false;
    }
    m_description = tr("Built-in servers (pid %1): gRPC %2, HTTP %3, msgpack-rpc %4")
                        .arg(m_process->pid())
                        .arg(address(), m_targets.value(TransportKind::Http), m_targets.value(TransportKind::Msgpack));
    watchChild();
    return true;
}

bool BuiltinServers::startInProcess(QString *why)
{
    m_grpc = std::make_unique<BuiltinGrpcServer>();
    m_http = std::make_unique<BuiltinHttpServer>();
    m_msgpack = std::make_unique<BuiltinMsgpackServer>();
    if (!m_grpc->start(QStringLiteral("127.0.0.1"), 0, 0, why) || !m_http->start(QStringLiteral("127.0.0.1"), 0, 0, why)
        || !m_msgpack->start(QStringLiteral("127.0.0.1"), 0, 0, why)) {
        m_grpc.reset();
        m_http.reset();
        m_msgpack.reset();
        return false;
    }
    m_targets = { { TransportKind::Grpc, m_grpc->address() }, { TransportKind::Http, m_http->url() },
        { TransportKind::Msgpack, m_msgpack->address() } };
    m_description = tr("Built-in servers in this process (client CPU includes theirs): gRPC %1, HTTP %2, "
                       "msgpack-rpc %3")
                        .arg(m_grpc->address(), m_http->url(), m_msgpack->address());
    return true;
}

bool BuiltinServers::ensureRunning(QString *error)
{
    return isRunning() || start(m_cliProgram, error);
}

bool BuiltinServers::isRunning() const
{
    return m_process ? m_process->isRunning() : m_grpc != nullptr;
}

void BuiltinServers::watchChild()
{
    // Told by the kernel when the child exits (a pidfd turns readable), rather than asking it every second.
    m_running = true;
    m_pidfd = openPidfd(m_process->pid());
    if (m_pidfd >= 0) {
        m_exitNotifier = new QSocketNotifier(m_pidfd, QSocketNotifier::Read, this);
        connect(m_exitNotifier, &QSocketNotifier::activated, this, &BuiltinServers::checkChild);
        return;
    }
    // A kernel (or seccomp filter) without pidfd_open: look once a second, as before.
    m_exitPoll = new QTimer(this);
    connect(m_exitPoll, &QTimer::timeout, this, &BuiltinServers::checkChild);
    m_exitPoll->start(1000);
}

void BuiltinServers::checkChild()
{
    const bool running = m_process && m_process->isRunning();
    if (!running && m_exitNotifier)
        m_exitNotifier->setEnabled(false); // stays readable: once is enough
    if (running == m_running)
        return;
    m_running = running;
    Q_EMIT runningChanged(running);
}

void BuiltinServers::stop()
{
    delete m_exitNotifier;
    m_exitNotifier = nullptr;
    delete m_exitPoll;
    m_exitPoll = nullptr;
    if (m_pidfd >= 0)
        ::close(m_pidfd);
    m_pidfd = -1;
    m_process.reset();
    m_grpc.reset();
    m_http.reset();
    m_msgpack.reset();
    m_targets.clear();
    m_description.clear();
    m_running = false;
}

} // namespace rpcscope
