#include "clientcommand.h"

#include "client/clientprotocol.h"
#include "server/servercommand.h"
#include "server/serverprocess.h"
#include "store/secrets.h"
#include "transport/transportfactories.h"

#include <QJsonArray>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>

#include <csignal>
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

namespace rpcscope {

namespace {

using Clock = std::chrono::steady_clock;

const QString kTargetPlaceholder = QStringLiteral("{target}");
constexpr qsizetype kShownLineChars = 200; ///< of a line quoted in an error
constexpr size_t kKeptErrors = 20; ///< distinct error messages kept per block

QString shownLine(const QByteArray &line)
{
    QString text = QString::fromUtf8(line.left(kShownLineChars * 4)).trimmed();
    if (text.size() > kShownLineChars)
        text = text.left(kShownLineChars) + QStringLiteral("...");
    return text;
}

/// The status a reported call counts as: a gRPC name or code, an HTTP status, else OK or UNKNOWN by @p ok.
int statusOf(const ClientEvent &call)
{
    if (call.status.isEmpty())
        return call.ok ? CallStatus::Ok : CallStatus::Unknown;
    if (const std::optional<int> named = parseCallStatus(call.status))
        return *named;
    bool number = false;
    const uint http = call.status.toUInt(&number);
    if (number && http >= 100 && http < 600)
        return http < 400 ? CallStatus::Ok : grpcStatusForHttp(http);
    return CallStatus::Unknown;
}

/// What one block measures, as the load engine's snapshot has it.
/// The CPU of a client command's process tree so far, per process: its own clock, and what its children that ended
/// used (a shell fallback's commands, one a call, are such children).
std::map<qint64, double> treeCpu(qint64 pid)
{
    std::map<qint64, double> cpu;
    for (const qint64 process : processTree(pid)) {
        const ProcessSample sample = sampleProcess(static_cast<pid_t>(process));
        if (sample.valid)
            cpu[process] = sample.cpuSeconds + sample.reapedChildrenCpuSeconds;
    }
    return cpu;
}

/// What a process tree spent between two treeCpu(): a process born since counts whole, one that ended since is in
/// its parent's reaped children.
double cpuSince(const std::map<qint64, double> &before, const std::map<qint64, double> &after)
{
    double total = 0;
    for (const auto &[process, seconds] : after) {
        const auto was = before.find(process);
        total += std::max(0.0, seconds - (was == before.end() ? 0.0 : was->second));
    }
    return total;
}

class BlockRecorder {
public:
    BlockRecorder(ClientBlock block, Clock::time_point start) : m_block(std::move(block)), m_timedStart(start) { }

    void warmup(Clock::time_point now)
    {
        ++m_snapshot.warmupCalls;
        if (m_timed == 0)
            m_timedStart = now; // the timed phase begins after the last warm-up call
    }

    void call(const ClientEvent &event, Clock::time_point now)
    {
        ++m_timed;
        // The client's "ok" decides success; its status only says which failure it was.
        const int named = statusOf(event);
        const int status = event.ok ? CallStatus::Ok : named == CallStatus::Ok ? CallStatus::Unknown : named;
        ++m_snapshot.statusCounts[static_cast<size_t>(status)];
        if (event.ok)
            m_snapshot.latency.record(event.latencyNs);
        else
            m_snapshot.errorLatency.record(event.latencyNs);
        m_snapshot.bytesSent += event.bytesSent;
        m_snapshot.bytesReceived += event.bytesReceived;
        if (!event.ok)
            addError(status, event.message.isEmpty() ? callStatusName(status) : event.message);
        advanceTo(now);
        ++m_interval.calls;
        if (event.ok)
            m_intervalLatency.record(event.latencyNs);
        else
            ++m_interval.errors;
    }

    uint64_t timedCalls() const { return m_timed; }

    /// The block so far, as a running load engine's snapshot would be (the open interval not in its timeline).
    RunSnapshot progress(Clock::time_point now) const
    {
        RunSnapshot snapshot = m_snapshot;
        snapshot.state = RunState::Running;
        snapshot.elapsed = std::max(Clock::duration::zero(), now - m_timedStart);
        snapshot.callsSent = m_timed;
        snapshot.plannedCalls = m_block.calls;
        snapshot.plannedDuration = m_block.duration;
        return snapshot;
    }

    RunSnapshot finish(Clock::time_point end, RunState state)
    {
        advanceTo(end);
        closeInterval(end);
        m_snapshot.state = state;
        m_snapshot.elapsed = std::max(Clock::duration::zero(), end - m_timedStart);
        m_snapshot.callsSent = m_timed;
        m_snapshot.plannedCalls = m_block.calls;
        m_snapshot.plannedDuration = m_block.duration;
        return m_snapshot;
    }

private:
    ClientBlock m_block;
    Clock::time_point m_timedStart;
    uint64_t m_timed = 0;
    RunSnapshot m_snapshot;
    IntervalPoint m_interval;
    LatencyHistogram m_intervalLatency;
    int m_intervalIndex = 0;

    std::chrono::nanoseconds step() const
    {
        return m_block.interval.count() > 0 ? m_block.interval : std::chrono::nanoseconds(std::chrono::seconds(1));
    }
    /// Closes the intervals that ended before @p now.
    void advanceTo(Clock::time_point now)
    {
        while (now >= m_timedStart + step() * (m_intervalIndex + 1)) {
            closeInterval(m_timedStart + step() * (m_intervalIndex + 1));
            ++m_intervalIndex;
        }
    }
    void closeInterval(Clock::time_point end)
    {
        const auto begin = m_timedStart + step() * m_intervalIndex;
        if (end <= begin && m_interval.calls == 0)
            return;
        m_interval.endSeconds = std::chrono::duration<double>(end - m_timedStart).count();
        m_interval.seconds = std::chrono::duration<double>(end - begin).count();
        m_interval.p50 = m_intervalLatency.percentile(50);
        m_interval.p90 = m_intervalLatency.percentile(90);
        m_interval.p99 = m_intervalLatency.percentile(99);
        m_interval.concurrency = m_block.concurrency;
        m_snapshot.timeline << m_interval;
        m_interval = IntervalPoint();
        m_intervalLatency.reset();
    }
    void addError(int status, const QString &message)
    {
        for (ErrorSample &e : m_snapshot.errors) {
            if (e.status == status && e.message == message) {
                ++e.count;
                return;
            }
        }
        if (static_cast<size_t>(m_snapshot.errors.size()) < kKeptErrors)
            m_snapshot.errors << ErrorSample { status, message, 1 };
    }
};

} // namespace

bool ClientCommand::check(QString *error) const
{
    const std::optional<QStringList> words = splitCommandLine(command, error);
    if (!words) {
        if (error)
            *error = QStringLiteral("client command: ") + *error;
        return false;
    }
    if (ServerProcess::resolveProgram(words->first(), workingDirectory, environment).isEmpty()) {
        if (error)
            *error = QStringLiteral("client command: %1: %2")
                         .arg(words->first(),
                             words->first().contains(u'/') ? QStringLiteral("no such executable file")
                                                           : QStringLiteral("program not found in PATH"));
        return false;
    }
    if (idleTimeout.count() <= 0) {
        if (error)
            *error = QStringLiteral("client command: the idle timeout must be above 0");
        return false;
    }
    return true;
}

QJsonObject ClientCommand::describe() const
{
    QString program;
    if (const auto words = splitCommandLine(command, nullptr))
        program = ServerProcess::resolveProgram(words->first(), workingDirectory, environment);
    QJsonArray env;
    for (const auto &[name, value] : environment)
        env.append(QString(name + u'=' + (isSecret(name, value) ? redactedValue(value) : value)));
    QJsonObject described { { QStringLiteral("command"), command }, { QStringLiteral("program"), program },
        { QStringLiteral("env"), env } };
    if (!workingDirectory.isEmpty())
        described.insert(QStringLiteral("workingDirectory"), workingDirectory);
    return described;
}

struct ClientCommandRunner::State {
    ServerProcess process;
    QString commandLine;
    int toClient = -1; ///< our end of its stdin
    int fromClient = -1; ///< our end of its stdout
    std::chrono::milliseconds idleTimeout { 30000 };
    QByteArray pending; ///< read, not yet a whole line
    std::atomic<uint64_t> lines { 0 };

    ~State() { closeAll(); }
    void closeAll()
    {
        for (int *fd : { &toClient, &fromClient }) {
            if (*fd >= 0)
                ::close(*fd);
            *fd = -1;
        }
    }
};

ClientCommandRunner::ClientCommandRunner()
    : m_state(std::make_unique<State>()), m_wake(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK))
{
}

ClientCommandRunner::~ClientCommandRunner()
{
    stop(std::chrono::milliseconds(1000));
    if (m_wake >= 0)
        ::close(m_wake);
}

bool ClientCommandRunner::start(const ClientCommand &command, const QString &target, QString *error)
{
    stop();
    m_state = std::make_unique<State>();
    State &s = *m_state;
    if (!command.check(error))
        return false;
    QString line = command.command;
    line.replace(kTargetPlaceholder, target);
    const std::optional<QStringList> words = splitCommandLine(line, error);
    if (!words)
        return false;
    int in[2] = { -1, -1 };
    int out[2] = { -1, -1 };
    if (m_wake < 0 || ::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) {
        const QString why = QString::fromLocal8Bit(std::strerror(errno));
        for (int fd : { in[0], in[1], out[0], out[1] }) {
            if (fd >= 0)
                ::close(fd);
        }
        if (error)
            *error = QStringLiteral("cannot start the client command %1: %2").arg(line, why);
        return false;
    }
    ServerProcess::Launch launch;
    launch.program = words->first();
    launch.arguments = words->mid(1);
    launch.workingDirectory = command.workingDirectory;
    launch.environment = { { QStringLiteral("RPCSCOPE_TARGET"), target },
        { QStringLiteral("RPCSCOPE_CLIENT_PROTOCOL"), QStringLiteral("1") } };
    for (const auto &[name, value] : command.environment)
        launch.environment << qMakePair(name, QString(value).replace(kTargetPlaceholder, target));
    launch.cpus = command.cpus;
    launch.stdinFd = in[0];
    launch.stdoutFd = out[1];
    launch.readyTimeout = std::chrono::milliseconds(5000);
    const bool started = s.process.start(launch, error);
    ::close(in[0]);
    ::close(out[1]);
    s.toClient = in[1];
    s.fromClient = out[0];
    if (!started) {
        s.closeAll();
        if (error)
            *error = QStringLiteral("client command: ") + *error;
        return false;
    }
    // Our end of its stdin never blocks us: a client that stops reading cannot stall a run.
    ::fcntl(s.toClient, F_SETFL, ::fcntl(s.toClient, F_GETFL) | O_NONBLOCK);
    ::fcntl(s.fromClient, F_SETFL, ::fcntl(s.fromClient, F_GETFL) | O_NONBLOCK);
    ::signal(SIGPIPE, SIG_IGN);
    s.commandLine = line;
    s.idleTimeout = command.idleTimeout;
    // Its start-up (an interpreter's imports, connecting) is over before the first block is timed or profiled.
    if (!waitUntilReady(error)) {
        stop(std::chrono::milliseconds(500));
        return false;
    }
    return true;
}

ClientCommandRunner::Next ClientCommandRunner::nextLine(
    Clock::time_point lastLine, Clock::time_point deadline, Clock::time_point endBy, QByteArray *line, QString *why)
{
    State &s = *m_state;
    char buffer[65536];
    for (;;) {
        if (const qsizetype newline = s.pending.indexOf('\n'); newline >= 0) {
            *line = s.pending.left(newline);
            s.pending.remove(0, newline + 1);
            ++s.lines;
            return Next::Line;
        }
        if (m_interrupted.exchange(false) || Clock::now() >= endBy)
            return Next::Interrupted;
        const auto now = Clock::now();
        if (now - lastLine >= s.idleTimeout)
            return Next::Idle;
        if (now >= deadline)
            return Next::Deadline;
        pollfd fds[2] = { { s.fromClient, POLLIN, 0 }, { m_wake, POLLIN, 0 } };
        if (::poll(fds, 2, 50) < 0 && errno != EINTR) {
            *why = QStringLiteral("poll: ") + QString::fromLocal8Bit(std::strerror(errno));
            return Next::Failed;
        }
        if (fds[1].revents & POLLIN) {
            uint64_t value = 0;
            [[maybe_unused]] const ssize_t got = ::read(m_wake, &value, sizeof value);
        }
        if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            const ssize_t got = ::read(s.fromClient, buffer, sizeof buffer);
            if (got > 0) {
                s.pending.append(buffer, got);
            } else if (got == 0) {
                s.process.stop(std::chrono::milliseconds(2000));
                return Next::Exited;
            } else if (errno != EAGAIN && errno != EINTR) {
                *why = QStringLiteral("reading its stdout: ") + QString::fromLocal8Bit(std::strerror(errno));
                return Next::Failed;
            }
        }
    }
}

QString ClientCommandRunner::exitedBetweenBlocks(int number)
{
    State &s = *m_state;
    // What it printed on its way out says why: the first line that is not of the protocol, if any.
    QByteArray line;
    QString why;
    const auto now = Clock::now();
    while (nextLine(now, now + std::chrono::seconds(1), Clock::time_point::max(), &line, &why) == Next::Line) {
        if (line.trimmed().isEmpty())
            continue;
        if (!parseClientLine(line, &why))
            return QStringLiteral("stdout line %1: %2: %3").arg(s.lines).arg(why, shownLine(line));
    }
    return QStringLiteral("the client exited before block %1 (%2)").arg(number).arg(s.process.exitStatus().toString());
}

QString ClientCommandRunner::failure(const QString &why) const
{
    QString message = QStringLiteral("client command %1: %2").arg(m_state->commandLine, why);
    const QString tail = m_state->process.outputTail(20).trimmed();
    if (!tail.isEmpty())
        message += QStringLiteral("\n--- last lines of its stderr ---\n") + tail;
    return message;
}

bool ClientCommandRunner::waitUntilReady(QString *error)
{
    State &s = *m_state;
    const auto begin = Clock::now();
    QByteArray line;
    QString why;
    for (;;) {
        switch (nextLine(begin, Clock::time_point::max(), Clock::time_point::max(), &line, &why)) {
        case Next::Line:
            break;
        case Next::Exited:
            *error = failure(QStringLiteral("the client exited before it said it was ready (%1)")
                                 .arg(s.process.exitStatus().toString()));
            return false;
        case Next::Idle:
            *error = failure(QStringLiteral("the client did not say {\"ready\": true} within %1 s")
                                 .arg(std::chrono::duration<double>(s.idleTimeout).count(), 0, 'f', 0));
            return false;
        case Next::Interrupted:
            *error = failure(QStringLiteral("stopped before the client was ready"));
            return false;
        default:
            *error = failure(why);
            return false;
        }
        if (line.trimmed().isEmpty())
            continue;
        const std::optional<ClientEvent> event = parseClientLine(line, &why);
        if (event && event->kind == ClientEvent::Ready)
            return true;
        if (event && event->kind == ClientEvent::Fatal) {
            *error
                = failure(QStringLiteral("the client gave up (stdout line %1): %2").arg(s.lines).arg(event->message));
            return false;
        }
        *error = failure(
            QStringLiteral("stdout line %1: a client first says {\"ready\": true} once it has connected%2: %3")
                .arg(s.lines)
                .arg(event ? QString() : QStringLiteral(" (and this is not JSON: %1)").arg(why))
                .arg(shownLine(line)));
        return false;
    }
}

bool ClientCommandRunner::runBlock(const ClientBlock &block, RunSnapshot *snapshot, QString *error)
{
    State &s = *m_state;
    const auto begin = Clock::now();
    BlockRecorder recorder(block, begin);
    auto fail = [&](const QString &why) {
        *snapshot = recorder.finish(Clock::now(), RunState::Stopped);
        if (error)
            *error = failure(QStringLiteral("block %1: %2").arg(block.number).arg(why));
        return false;
    };
    if (s.toClient < 0)
        return fail(QStringLiteral("the client is not running"));
    if (!s.process.isRunning())
        return fail(exitedBetweenBlocks(block.number));

    const QByteArray instruction = clientBlockLine(block.number, block.calls,
        std::chrono::duration_cast<std::chrono::milliseconds>(block.duration).count(), block.concurrency,
        block.warmupCalls);
    if (::write(s.toClient, instruction.constData(), static_cast<size_t>(instruction.size())) != instruction.size())
        return fail(QStringLiteral("cannot tell the client what to run (%1)")
                        .arg(errno == EAGAIN ? QStringLiteral("it does not read its stdin")
                                             : QString::fromLocal8Bit(std::strerror(errno))));
    const std::map<qint64, double> cpuBefore = treeCpu(s.process.pid());
    // A block by time gets its time again, and 5 s more, to say it is done; one by count only the idle limit.
    const Clock::time_point deadline
        = block.calls == 0 ? begin + 2 * block.duration + std::chrono::seconds(5) : Clock::time_point::max();
    auto lastLine = begin;
    auto lastProgress = begin;
    QByteArray line;
    QString why;
    for (;;) {
        switch (nextLine(lastLine, deadline, block.endBy, &line, &why)) {
        case Next::Line:
            break;
        case Next::Interrupted:
            *snapshot = recorder.finish(Clock::now(), RunState::Stopped);
            return true;
        case Next::Idle:
            return fail(QStringLiteral("the client printed nothing for %1 s (after %2 timed calls)")
                            .arg(std::chrono::duration<double>(s.idleTimeout).count(), 0, 'f', 0)
                            .arg(recorder.timedCalls()));
        case Next::Deadline:
            return fail(QStringLiteral("the client did not say the block was done within twice its %1 s and 5 s")
                            .arg(std::chrono::duration<double>(block.duration).count(), 0, 'f', 1));
        case Next::Exited:
            return fail(QStringLiteral("the client exited before block %1 was done (%2), after %3 timed calls")
                            .arg(block.number)
                            .arg(s.process.exitStatus().toString())
                            .arg(recorder.timedCalls()));
        case Next::Failed:
            return fail(why);
        }
        const uint64_t number = s.lines;
        if (line.trimmed().isEmpty())
            continue;
        const std::optional<ClientEvent> event = parseClientLine(line, &why);
        const auto now = Clock::now();
        lastLine = now;
        if (!event)
            return fail(QStringLiteral("stdout line %1: %2: %3").arg(number).arg(why, shownLine(line)));
        switch (event->kind) {
        case ClientEvent::Fatal:
            return fail(QStringLiteral("the client gave up (stdout line %1): %2").arg(number).arg(event->message));
        case ClientEvent::Ready:
            return fail(
                QStringLiteral("stdout line %1: {\"ready\": true} again, in block %2").arg(number).arg(block.number));
        case ClientEvent::Done: {
            if (event->block != block.number)
                return fail(QStringLiteral("stdout line %1: \"done\" for block %2 while block %3 runs")
                                .arg(number)
                                .arg(event->block)
                                .arg(block.number));
            if (block.calls > 0 && recorder.timedCalls() != block.calls)
                return fail(QStringLiteral("stdout line %1: done after %2 timed calls of the %3 asked")
                                .arg(number)
                                .arg(recorder.timedCalls())
                                .arg(block.calls));
            *snapshot = recorder.finish(now, RunState::Finished);
            const ProcessSample after = sampleProcess(static_cast<pid_t>(s.process.pid()));
            if (after.valid) {
                snapshot->clientCpuSeconds = cpuSince(cpuBefore, treeCpu(s.process.pid()));
                snapshot->clientPeakRssBytes = after.rssBytes;
            }
            return true;
        }
        case ClientEvent::Call:
            if (event->warmup) {
                recorder.warmup(now);
                continue;
            }
            if (block.calls > 0 && recorder.timedCalls() >= block.calls)
                return fail(
                    QStringLiteral("stdout line %1: more timed calls than the %2 asked").arg(number).arg(block.calls));
            recorder.call(*event, now);
            if (block.progress && now - lastProgress >= std::chrono::milliseconds(100)) {
                block.progress(recorder.progress(now));
                lastProgress = now;
            }
            break;
        }
    }
}

void ClientCommandRunner::interrupt()
{
    m_interrupted = true;
    if (m_wake >= 0) {
        const uint64_t one = 1;
        [[maybe_unused]] const ssize_t written = ::write(m_wake, &one, sizeof one);
    }
}

void ClientCommandRunner::stop(std::chrono::milliseconds grace)
{
    if (!m_state)
        return;
    State &s = *m_state;
    if (s.toClient >= 0) {
        ::close(s.toClient); // end of input: the protocol's "exit"
        s.toClient = -1;
    }
    if (s.process.isRunning()) {
        const auto deadline = Clock::now() + grace;
        while (s.process.isRunning() && Clock::now() < deadline) {
            // Its stdout is drained meanwhile, so a client that prints on its way out does not block on the pipe.
            char buffer[4096];
            while (s.fromClient >= 0 && ::read(s.fromClient, buffer, sizeof buffer) > 0) { }
            ::usleep(10000);
        }
        s.process.stop(std::chrono::milliseconds(500));
    }
    s.closeAll();
}

bool ClientCommandRunner::isRunning() const
{
    return m_state && m_state->process.isRunning();
}

qint64 ClientCommandRunner::pid() const
{
    return m_state ? m_state->process.pid() : 0;
}

QString ClientCommandRunner::commandLine() const
{
    return m_state ? m_state->commandLine : QString();
}

QString ClientCommandRunner::stderrTail(int lines) const
{
    return m_state ? m_state->process.outputTail(lines) : QString();
}

ProcessSample ClientCommandRunner::finalSample() const
{
    return m_state ? m_state->process.finalSample() : ProcessSample();
}

uint64_t ClientCommandRunner::linesRead() const
{
    return m_state ? m_state->lines.load() : 0;
}

} // namespace rpcscope
