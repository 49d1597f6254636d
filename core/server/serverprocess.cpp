#include "serverprocess.h"

#include <QDeadlineTimer>
#include <QRegularExpression>

#include <csignal>
#include <sys/prctl.h>
#include <unistd.h>

namespace rpcscope {

ServerProcess::ServerProcess() = default;

ServerProcess::~ServerProcess()
{
    stop();
}

bool ServerProcess::start(const QString &program, const QStringList &arguments, const QString &readyPattern,
                          std::chrono::milliseconds timeout, QString *error)
{
    stop();
    m_output.clear();
    m_readyText.clear();
    m_process = std::make_unique<QProcess>();
    m_process->setProcessChannelMode(QProcess::MergedChannels);
    m_process->setChildProcessModifier([] {
        ::setpgid(0, 0);
        // A server must not outlive rpcscope, even when rpcscope is killed.
        ::prctl(PR_SET_PDEATHSIG, SIGTERM);
        // The parent may block termination signals for its own signal thread; the server must see them.
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
    });
    m_process->start(program, arguments);
    auto fail = [&](const QString &why) {
        if (error) {
            *error = why;
            const QString out = m_output.trimmed();
            if (!out.isEmpty())
                *error += QStringLiteral("\n--- server output ---\n") + out;
        }
        stop(std::chrono::milliseconds(500));
        return false;
    };
    if (!m_process->waitForStarted(static_cast<int>(timeout.count())))
        return fail(QStringLiteral("cannot start %1: %2").arg(program, m_process->errorString()));
    const QRegularExpression ready(readyPattern);
    QDeadlineTimer deadline(timeout);
    QByteArray pending;
    while (!deadline.hasExpired()) {
        if (m_process->state() == QProcess::NotRunning || !m_process->waitForReadyRead(static_cast<int>(std::min<qint64>(deadline.remainingTime(), 100)))) {
            if (m_process->state() == QProcess::NotRunning) {
                m_output += QString::fromLocal8Bit(m_process->readAll());
                return fail(QStringLiteral("%1 exited (code %2) before it was ready").arg(program).arg(m_process->exitCode()));
            }
            continue;
        }
        pending += m_process->readAll();
        qsizetype newline;
        while ((newline = pending.indexOf('\n')) >= 0) {
            const QString line = QString::fromLocal8Bit(pending.left(newline)).trimmed();
            pending.remove(0, newline + 1);
            m_output += line + QLatin1Char('\n');
            const auto match = ready.match(line);
            if (match.hasMatch()) {
                m_readyText = match.lastCapturedIndex() >= 1 ? match.captured(1) : line;
                return true;
            }
        }
    }
    m_output += QString::fromLocal8Bit(pending);
    return fail(QStringLiteral("%1 was not ready after %2 ms").arg(program).arg(timeout.count()));
}

void ServerProcess::stop(std::chrono::milliseconds grace)
{
    if (!m_process)
        return;
    if (m_process->state() != QProcess::NotRunning) {
        m_process->terminate();
        if (!m_process->waitForFinished(static_cast<int>(grace.count()))) {
            m_process->kill();
            m_process->waitForFinished(2000);
        }
    }
    m_output += QString::fromLocal8Bit(m_process->readAll());
    m_process.reset();
}

bool ServerProcess::isRunning() const
{
    return m_process && m_process->state() == QProcess::Running;
}

qint64 ServerProcess::pid() const
{
    return m_process ? m_process->processId() : 0;
}

} // namespace rpcscope
