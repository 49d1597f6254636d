#include "serverprocess.h"

#include "net/portowners.h"
#include "util/cpuset.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcessEnvironment>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QStandardPaths>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

namespace rpcscope {

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr int errorTailLines = 40;
// A line longer than this (a server printing a binary blob without newlines) is cut so memory stays bounded.
constexpr qsizetype maxLineBytes = qsizetype(16) * 1024;

QString quoteForDisplay(const QString &argument)
{
    static const QRegularExpression plain(QStringLiteral("^[A-Za-z0-9_@%+=:,./{}-]+$"));
    if (plain.match(argument).hasMatch())
        return argument;
    QString quoted = argument;
    quoted.replace(QLatin1Char('\''), QStringLiteral("'\\''"));
    return QLatin1Char('\'') + quoted + QLatin1Char('\'');
}

QString displayCommand(const QString &program, const QStringList &arguments)
{
    QStringList parts { quoteForDisplay(program) };
    for (const QString &argument : arguments)
        parts << quoteForDisplay(argument);
    return parts.join(QLatin1Char(' '));
}

/// A non-blocking connect to 127.0.0.1:@p port, waiting at most @p timeout for the handshake.
bool loopbackAccepts(quint16 port, std::chrono::milliseconds timeout)
{
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return false;
    sockaddr_in address {};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool connected = ::connect(fd, reinterpret_cast<const sockaddr *>(&address), sizeof address) == 0;
    if (!connected && errno == EINPROGRESS) {
        pollfd waiting { fd, POLLOUT, 0 };
        if (::poll(&waiting, 1, static_cast<int>(timeout.count())) == 1) {
            int soError = 0;
            socklen_t length = sizeof soError;
            connected = ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &length) == 0 && soError == 0;
        }
    }
    ::close(fd);
    return connected;
}

/// The parent of @p pid (/proc/PID/stat), or 0.
pid_t parentOf(pid_t pid)
{
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!stat.open(QIODevice::ReadOnly))
        return 0;
    const QByteArray text = stat.readAll();
    // "PID (comm) S PPID ...": comm may hold spaces and parentheses; the last ')' ends it.
    const qsizetype close = text.lastIndexOf(')');
    const QList<QByteArray> fields = text.mid(close + 2).split(' ');
    return fields.size() > 1 ? static_cast<pid_t>(fields[1].toInt()) : 0;
}

/// True when the process group @p root leads, or a descendant of @p root, holds one of the listening sockets.
bool heldByTree(const PortListeners &listeners, pid_t root)
{
    if (listeners.heldByGroup(root))
        return true;
    for (const PortOwner &owner : listeners.owners) {
        for (pid_t p = owner.pid, hops = 0; p > 1 && hops < 64; p = parentOf(p), ++hops) {
            if (p == root)
                return true;
        }
    }
    return false;
}

QString signalName(int signal)
{
    const char *abbreviation = ::sigabbrev_np(signal);
    return abbreviation ? QStringLiteral("SIG") + QString::fromLatin1(abbreviation) : QString::number(signal);
}

/**
 * The mark every process of one server command carries: an environment variable "RPCSCOPE_TREE_<32 hex digits>=1",
 * new for each start. A process that leaves the server's process group and its parent (setsid, a double fork, a
 * daemon) still inherits it, so stop() and the guard find it by it. The name, not a value, holds the id: a server
 * command that runs rpcscope (which starts commands of its own) keeps its parent's mark beside its own.
 */
struct TreeTag {
    char needle[64] = {}; ///< "\0RPCSCOPE_TREE_<hex>=": how the entry appears in /proc/PID/environ
    size_t length = 0; ///< of needle; 0: no tag

    static TreeTag make()
    {
        TreeTag tag;
        const QByteArray name = QByteArrayLiteral("RPCSCOPE_TREE_")
            + QByteArray::number(QRandomGenerator::system()->generate64(), 16).rightJustified(16, '0')
            + QByteArray::number(QRandomGenerator::system()->generate64(), 16).rightJustified(16, '0');
        tag.needle[0] = '\0';
        std::memcpy(tag.needle + 1, name.constData(), name.size());
        tag.needle[1 + name.size()] = '=';
        tag.length = static_cast<size_t>(name.size()) + 2;
        return tag;
    }
    QString name() const { return QString::fromLatin1(needle + 1, static_cast<qsizetype>(length) - 2); }
};

/// True when the environment of process @p pid holds @p tag. Async-signal-safe (the guard calls it).
bool environHolds(pid_t pid, const TreeTag &tag)
{
    char path[32] = "/proc/";
    char digits[16];
    int n = 0;
    for (pid_t rest = pid; rest > 0 && n < 15; rest /= 10)
        digits[n++] = static_cast<char>('0' + rest % 10);
    size_t at = 6;
    while (n > 0)
        path[at++] = digits[--n];
    std::memcpy(path + at, "/environ", 9);
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    // Entries are NUL-terminated; a NUL put before the first one lets the needle's leading NUL match it too.
    char buffer[8192 + sizeof tag.needle];
    buffer[0] = '\0';
    size_t kept = 1;
    bool found = false;
    while (!found) {
        const ssize_t got = ::read(fd, buffer + kept, 8192);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        const size_t have = kept + static_cast<size_t>(got);
        for (size_t i = 0; i + tag.length <= have && !found; ++i)
            found = std::memcmp(buffer + i, tag.needle, tag.length) == 0;
        kept = std::min(have, tag.length - 1);
        std::memmove(buffer, buffer + have - kept, kept);
    }
    ::close(fd);
    return found;
}

/**
 * Sends @p signal (0: none) to every process whose environment holds @p tag, except this one, and returns how many
 * there were. A zombie's environment reads empty: it does not count. Async-signal-safe (the guard calls it).
 */
int signalTagged(const TreeTag &tag, int signal)
{
    if (tag.length == 0)
        return 0;
    const int proc = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (proc < 0)
        return 0;
    const pid_t self = ::getpid();
    int found = 0;
    alignas(8) char entries[8192];
    for (;;) {
        const long got = ::syscall(SYS_getdents64, proc, entries, sizeof entries);
        if (got <= 0)
            break;
        for (long offset = 0; offset < got;) {
            // struct linux_dirent64: d_ino (8), d_off (8), d_reclen (2), d_type (1), d_name
            unsigned short recordLength;
            std::memcpy(&recordLength, entries + offset + 16, sizeof recordLength);
            const char *name = entries + offset + 19;
            offset += recordLength;
            pid_t pid = 0;
            for (; *name >= '0' && *name <= '9'; ++name)
                pid = pid * 10 + (*name - '0');
            if (*name != '\0' || pid <= 0 || pid == self || !environHolds(pid, tag))
                continue;
            if (::kill(pid, signal) == 0)
                ++found;
        }
    }
    ::close(proc);
    return found;
}

/// Ends every process that carries @p tag: SIGTERM, up to @p grace for them to go, SIGKILL. Async-signal-safe.
void endTagged(const TreeTag &tag, int graceMs)
{
    if (signalTagged(tag, SIGTERM) == 0)
        return;
    for (int waited = 0; waited < graceMs && signalTagged(tag, 0) > 0; waited += 50)
        ::poll(nullptr, 0, 50);
    signalTagged(tag, SIGKILL);
}

/// @p strings as execve() takes them: pointers to each, then a null pointer.
std::vector<char *> nullTerminated(std::vector<QByteArray> &strings)
{
    std::vector<char *> pointers;
    pointers.reserve(strings.size() + 1);
    for (QByteArray &bytes : strings)
        pointers.push_back(bytes.data());
    pointers.push_back(nullptr);
    return pointers;
}

/// rpcscope's environment with @p added over it and @p tag's mark, as "NAME=value" entries.
std::vector<QByteArray> childEnvironment(const QList<QPair<QString, QString>> &added, const TreeTag &tag)
{
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    for (const auto &[name, value] : added)
        environment.insert(name, value);
    environment.insert(tag.name(), QStringLiteral("1"));
    std::vector<QByteArray> entries;
    for (const QString &entry : environment.toStringList())
        entries.push_back(entry.toLocal8Bit());
    return entries;
}

// What a failed child writes to the parent before _exit: which step failed and errno.
struct ChildFailure {
    int step; // 1: chdir, 2: execve, 3: sched_setaffinity
    int error;
};

/**
 * Starts the guard of process group @p group: a forked copy of this process (no exec) that waits for the pipe whose
 * write end *@p holdFd stays here to close, which happens when rpcscope dies however it dies (kill -9 included), and
 * then ends the group: SIGTERM, up to 2 s for it to go, SIGKILL; then the same for what carries the server's TreeTag.
 * PR_SET_PDEATHSIG alone reaches only the server process itself, not what it started (`sh -c 'server; true'` leaves the
 * server running). The guard is in a group of its own with termination signals ignored, so Ctrl-C in rpcscope's
 * terminal does not take it down first. Returns its pid, or 0 when it could not be started (the server then runs
 * without it).
 */
pid_t startGroupGuard(pid_t group, const TreeTag &tag, int *holdFd)
{
    int pipe[2] = { -1, -1 };
    if (::pipe2(pipe, O_CLOEXEC) != 0)
        return 0;
    const int devNull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    sigset_t all;
    sigset_t previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    const pid_t guard = ::fork();
    if (guard == 0) {
        // Only async-signal-safe calls from here: this is a copy of a multi-threaded process.
        ::setpgid(0, 0);
        struct sigaction ignore = {};
        ignore.sa_handler = SIG_IGN;
        for (int signal : { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE })
            ::sigaction(signal, &ignore, nullptr);
        ::dup2(pipe[0], STDIN_FILENO);
        if (devNull >= 0) {
            ::dup2(devNull, STDOUT_FILENO);
            ::dup2(devNull, STDERR_FILENO);
        }
        ::close_range(3, ~0U, 0); // holds nothing of rpcscope's: no socket, no pipe's write end
        char byte;
        while (::read(STDIN_FILENO, &byte, 1) != 0) {
            if (errno != EINTR)
                break;
        }
        ::kill(-group, SIGTERM);
        for (int i = 0; i < 40 && ::kill(-group, 0) == 0; ++i)
            ::poll(nullptr, 0, 50);
        ::kill(-group, SIGKILL);
        endTagged(tag, 2000); // what left the group
        ::_exit(0);
    }
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    if (devNull >= 0)
        ::close(devNull);
    ::close(pipe[0]);
    if (guard < 0) {
        ::close(pipe[1]);
        return 0;
    }
    *holdFd = pipe[1];
    return guard;
}

/// Ends a guard whose server is being stopped here: it must not signal a group id that may be reused after.
void stopGroupGuard(pid_t *guard, int *holdFd)
{
    if (*guard > 0) {
        ::kill(*guard, SIGKILL);
        pid_t got;
        do {
            got = ::waitpid(*guard, nullptr, 0);
        } while (got < 0 && errno == EINTR);
        *guard = 0;
    }
    if (*holdFd >= 0) {
        ::close(*holdFd);
        *holdFd = -1;
    }
}

/// What the child execs, built before fork(); argv and envp point into the bytes beside them, so it is never copied.
struct ChildExec {
    std::vector<QByteArray> argvBytes;
    std::vector<char *> argv;
    std::vector<QByteArray> envBytes;
    std::vector<char *> envp;
    QByteArray path;
    QByteArray directory;
    std::vector<unsigned long> cpuMask;
};

/// Why @p launch cannot be started, or empty when it can; *@p path is then the executable it runs.
QString launchProblem(
    const ServerProcess::Launch &launch, const QRegularExpression &ready, const QString &shown, QString *path)
{
    if (!ready.isValid())
        return QStringLiteral("ready pattern \"%1\": %2").arg(launch.readyPattern, ready.errorString());
    *path = ServerProcess::resolveProgram(launch.program, launch.workingDirectory, launch.environment);
    if (path->isEmpty()) {
        return QStringLiteral("cannot start %1: %2")
            .arg(shown,
                launch.program.contains(QLatin1Char('/')) ? QStringLiteral("no such executable file")
                                                          : QStringLiteral("program not found in PATH"));
    }
    if (!launch.workingDirectory.isEmpty() && !QFileInfo(launch.workingDirectory).isDir())
        return QStringLiteral("cannot start %1: working directory %2 does not exist")
            .arg(shown, launch.workingDirectory);
    return {};
}

/// Fills @p exec for @p launch run as @p path, with a new *@p tag in its environment.
void prepareChildExec(const ServerProcess::Launch &launch, const QString &path, TreeTag *tag, ChildExec *exec)
{
    exec->argvBytes = { QFile::encodeName(launch.program) };
    for (const QString &argument : launch.arguments)
        exec->argvBytes.push_back(QFile::encodeName(argument));
    exec->argv = nullTerminated(exec->argvBytes);
    *tag = TreeTag::make();
    exec->envBytes = childEnvironment(launch.environment, *tag);
    exec->envp = nullTerminated(exec->envBytes);
    exec->path = QFile::encodeName(path);
    exec->directory = QFile::encodeName(launch.workingDirectory);
    exec->cpuMask = cpuAffinityMask(launch.cpus);
}

/// The forked child: sets itself up and execs the server, or writes the step that failed to @p failureFd.
[[noreturn]] void execServer(
    const ServerProcess::Launch &launch, const ChildExec &exec, pid_t parent, int devNull, int outputFd, int failureFd)
{
    // Only async-signal-safe calls from here: this is a copy of a multi-threaded process.
    ::setpgid(0, 0);
    // A server must not outlive rpcscope, even when rpcscope is killed.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent)
        ::_exit(127);
    struct sigaction defaults = {};
    defaults.sa_handler = SIG_DFL;
    for (int signal = 1; signal < NSIG; ++signal) {
        if (signal != SIGKILL && signal != SIGSTOP)
            ::sigaction(signal, &defaults, nullptr);
    }
    ::dup2(launch.stdinFd >= 0 ? launch.stdinFd : devNull, STDIN_FILENO);
    ::dup2(launch.stdoutFd >= 0 ? launch.stdoutFd : outputFd, STDOUT_FILENO);
    ::dup2(outputFd, STDERR_FILENO);
    ChildFailure failed { 0, 0 };
    if (!exec.directory.isEmpty() && ::chdir(exec.directory.constData()) != 0) {
        failed = { 1, errno };
    } else if (!launch.cpus.empty()
        && ::sched_setaffinity(
               0, exec.cpuMask.size() * sizeof(unsigned long), reinterpret_cast<const cpu_set_t *>(exec.cpuMask.data()))
            != 0) {
        failed = { 3, errno };
    } else {
        // Descriptors rpcscope opened without O_CLOEXEC (its own listening sockets) stay out of the server.
        ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        ::execve(exec.path.constData(), exec.argv.data(), exec.envp.data());
        failed = { 2, errno };
    }
    [[maybe_unused]] const ssize_t written = ::write(failureFd, &failed, sizeof failed);
    ::_exit(127);
}

/// Reads why the child could not exec the server from @p fd, and closes it; std::nullopt when it did exec.
std::optional<ChildFailure> readChildFailure(int fd)
{
    // The failure pipe closes on a successful execve; otherwise it carries the reason.
    ChildFailure failed { 0, 0 };
    ssize_t got;
    do {
        got = ::read(fd, &failed, sizeof failed);
    } while (got < 0 && errno == EINTR);
    ::close(fd);
    if (got == static_cast<ssize_t>(sizeof failed))
        return failed;
    return std::nullopt;
}

/// The error for a child that could not exec the server: which step failed, and why.
QString childFailureMessage(const ChildFailure &failed, const QString &shown, const ServerProcess::Launch &launch)
{
    const QString why = QString::fromLocal8Bit(std::strerror(failed.error));
    if (failed.step == 1)
        return QStringLiteral("cannot start %1: working directory %2: %3").arg(shown, launch.workingDirectory, why);
    if (failed.step == 3)
        return QStringLiteral("cannot start %1: cannot pin it to CPUs %2: %3")
            .arg(shown, formatCpuList(launch.cpus), why);
    return QStringLiteral("cannot start %1: %2").arg(shown, why);
}

} // namespace

struct ServerProcess::State {
    pid_t pid = 0;
    TreeTag tag; ///< in the environment of all the server starts, and of what they start
    pid_t guard = 0; ///< startGroupGuard()'s process
    int guardFd = -1;
    bool reaped = true;
    bool lost = false;
    ExitStatus exit;
    ProcessSample final;
    ProcessSample beforeStop;
    QString readyText;

    int readFd = -1;
    int wakeFd = -1;
    std::thread reader;

    // Guarded by mutex: filled by the reader thread.
    mutable std::mutex mutex;
    std::condition_variable changed;
    std::deque<QByteArray> lines;
    QByteArray partial;
    std::vector<QByteArray> unmatched; // lines start() has not looked at yet
    bool collectUnmatched = false;
    bool eof = false;

    void addLine(QByteArray line) // with mutex held
    {
        if (line.endsWith('\r'))
            line.chop(1);
        if (collectUnmatched)
            unmatched.push_back(line);
        lines.push_back(std::move(line));
        while (lines.size() > static_cast<size_t>(ServerProcess::outputLineLimit))
            lines.pop_front();
    }

    void readLoop()
    {
        pollfd fds[2] = { { readFd, POLLIN, 0 }, { wakeFd, POLLIN, 0 } };
        char buffer[16384];
        for (;;) {
            if (::poll(fds, 2, -1) < 0) {
                if (errno == EINTR)
                    continue;
                break;
            }
            if (fds[1].revents != 0)
                break;
            if (fds[0].revents == 0)
                continue;
            const ssize_t n = ::read(readFd, buffer, sizeof buffer);
            if (n < 0 && (errno == EINTR || errno == EAGAIN))
                continue;
            if (n <= 0)
                break;
            const std::lock_guard lock(mutex);
            partial.append(buffer, n);
            qsizetype newline;
            while ((newline = partial.indexOf('\n')) >= 0 || partial.size() > maxLineBytes) {
                const qsizetype cut = newline >= 0 ? newline : maxLineBytes;
                addLine(partial.left(cut));
                partial.remove(0, newline >= 0 ? cut + 1 : cut);
            }
            changed.notify_all();
        }
        const std::lock_guard lock(mutex);
        if (!partial.isEmpty())
            addLine(std::exchange(partial, {}));
        eof = true;
        changed.notify_all();
    }

    /// True once the process has exited. It stays a zombie until reap(), so its pid, and the process group id,
    /// cannot be reused by an unrelated process while we may still signal the group.
    bool exited()
    {
        if (reaped || exit.valid)
            return true;
        siginfo_t info {};
        int result;
        do {
            result = ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
        } while (result < 0 && errno == EINTR);
        if (result < 0) { // not our child any more (reaped elsewhere): nothing to wait for, nothing to signal
            lost = true;
            return true;
        }
        if (info.si_pid != pid)
            return false;
        exit.valid = true;
        exit.code = info.si_code == CLD_EXITED ? info.si_status : -1;
        exit.signal = info.si_code == CLD_EXITED ? 0 : info.si_status;
        return true;
    }

    /// Collects an exited process and its CPU time.
    void reap()
    {
        int status = 0;
        rusage usage {};
        pid_t got;
        do {
            got = ::wait4(pid, &status, 0, &usage);
        } while (got < 0 && errno == EINTR);
        reaped = true;
        if (got != pid)
            return;
        auto seconds
            = [](const timeval &tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6; };
        final.valid = true;
        final.cpuSeconds = seconds(usage.ru_utime) + seconds(usage.ru_stime);
        final.rssBytes = beforeStop.valid ? beforeStop.rssBytes : static_cast<uint64_t>(usage.ru_maxrss) * 1024;
    }

    /// Waits up to @p timeout for the process to exit, polling: waiting for a child with a timeout otherwise needs
    /// a SIGCHLD handler, which core must not install.
    bool exitedWithin(std::chrono::milliseconds timeout)
    {
        const auto deadline = Clock::now() + timeout;
        while (!exited()) {
            if (Clock::now() >= deadline)
                return false;
            std::this_thread::sleep_for(5ms);
        }
        return true;
    }

    void closeReader(std::chrono::milliseconds drain)
    {
        if (reader.joinable()) {
            {
                // The rest of the output is in the pipe once every writer is gone; wait a little for it.
                std::unique_lock lock(mutex);
                changed.wait_for(lock, drain, [this] { return eof; });
            }
            // A descendant that left the process group may still hold the pipe open: stop reading anyway.
            const uint64_t one = 1;
            [[maybe_unused]] const ssize_t written = ::write(wakeFd, &one, sizeof one);
            reader.join();
        }
        for (int *fd : { &readFd, &wakeFd }) {
            if (*fd >= 0)
                ::close(*fd);
            *fd = -1;
        }
    }

    QString tail(int count) const
    {
        const std::lock_guard lock(mutex);
        QStringList out;
        const auto first = lines.size() > static_cast<size_t>(count) ? lines.end() - count : lines.begin();
        for (auto it = first; it != lines.end(); ++it)
            out << QString::fromLocal8Bit(*it);
        if (!partial.isEmpty())
            out << QString::fromLocal8Bit(partial);
        return out.join(QLatin1Char('\n'));
    }
};

QString ServerProcess::ExitStatus::toString() const
{
    if (!valid)
        return QStringLiteral("exit status unknown");
    if (signal != 0)
        return QStringLiteral("killed by signal %1 (%2)").arg(signal).arg(signalName(signal));
    return QStringLiteral("exit code %1").arg(code);
}

ServerProcess::ServerProcess() : m_state(std::make_unique<State>()) { }

ServerProcess::~ServerProcess()
{
    stop();
}

bool ServerProcess::start(const QString &program, const QStringList &arguments, const QString &readyPattern,
    std::chrono::milliseconds timeout, QString *error)
{
    Launch launch;
    launch.program = program;
    launch.arguments = arguments;
    launch.readyPattern = readyPattern;
    launch.readyTimeout = timeout;
    return start(launch, error);
}

QString ServerProcess::resolveProgram(
    const QString &program, const QString &workingDirectory, const QList<QPair<QString, QString>> &environment)
{
    if (program.isEmpty())
        return {};
    if (program.contains(QLatin1Char('/'))) {
        const QString path = QDir::isAbsolutePath(program) || workingDirectory.isEmpty()
            ? program
            : QDir(workingDirectory).filePath(program);
        const QFileInfo info(path);
        return info.isFile() && info.isExecutable() ? info.absoluteFilePath() : QString();
    }
    // As a shell would: the PATH the child gets, which may be one of the added variables.
    QString path = qEnvironmentVariable("PATH");
    for (const auto &[name, value] : environment) {
        if (name == u"PATH")
            path = value;
    }
    return QStandardPaths::findExecutable(program, path.split(QLatin1Char(':'), Qt::SkipEmptyParts));
}

bool ServerProcess::start(const Launch &launch, QString *error)
{
    stop();
    m_state = std::make_unique<State>();
    State &s = *m_state;
    const QString shown = displayCommand(launch.program, launch.arguments);
    auto setError = [&](const QString &why) {
        if (error)
            *error = why;
        return false;
    };

    const QRegularExpression ready(launch.readyPattern);
    QString path;
    if (const QString problem = launchProblem(launch, ready, shown, &path); !problem.isEmpty())
        return setError(problem);

    // Everything the child needs is built before fork(): after it, only async-signal-safe calls are allowed.
    ChildExec exec;
    prepareChildExec(launch, path, &s.tag, &exec);

    int output[2] = { -1, -1 };
    int failure[2] = { -1, -1 };
    const int devNull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    s.wakeFd = ::eventfd(0, EFD_CLOEXEC);
    if (devNull < 0 || s.wakeFd < 0 || ::pipe2(output, O_CLOEXEC) != 0 || ::pipe2(failure, O_CLOEXEC) != 0) {
        const QString why = QString::fromLocal8Bit(std::strerror(errno));
        for (int fd : { devNull, output[0], output[1], failure[0], failure[1] }) {
            if (fd >= 0)
                ::close(fd);
        }
        return setError(QStringLiteral("cannot start %1: %2").arg(shown, why));
    }

    // Signals stay blocked across fork so no handler of ours runs in the child before execve.
    sigset_t all;
    sigset_t previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    const pid_t parent = ::getpid();
    const pid_t child = ::fork();
    if (child == 0)
        execServer(launch, exec, parent, devNull, output[1], failure[1]);
    const int forkErrno = errno;
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    ::close(devNull);
    ::close(output[1]);
    ::close(failure[1]);
    if (child < 0) {
        ::close(output[0]);
        ::close(failure[0]);
        return setError(
            QStringLiteral("cannot start %1: fork: %2").arg(shown, QString::fromLocal8Bit(std::strerror(forkErrno))));
    }
    ::setpgid(child, child); // also here, so the group exists whichever of the two runs first
    s.pid = child;
    s.reaped = false;
    s.readFd = output[0];

    if (const std::optional<ChildFailure> failed = readChildFailure(failure[0])) {
        s.reap();
        s.pid = 0;
        ::close(s.readFd);
        s.readFd = -1;
        return setError(childFailureMessage(*failed, shown, launch));
    }
    s.guard = startGroupGuard(child, s.tag, &s.guardFd);

    {
        const std::lock_guard lock(s.mutex);
        s.collectUnmatched = !launch.readyPattern.isEmpty();
    }
    s.reader = std::thread([&s] { s.readLoop(); });
    return waitUntilReady(launch, ready, shown, error);
}

bool ServerProcess::waitUntilReady(
    const Launch &launch, const QRegularExpression &ready, const QString &shown, QString *error)
{
    State &s = *m_state;
    auto fail = [&](const QString &why) {
        stop(std::chrono::milliseconds(500));
        QString message = why;
        const QString out = s.tail(errorTailLines);
        if (out.trimmed().isEmpty())
            message += QStringLiteral("\n(no output)");
        else
            message += QStringLiteral("\n--- last lines of its output (stdout and stderr) ---\n") + out;
        if (error)
            *error = message;
        return false;
    };

    // Neither a pattern nor a port: ready once exec'd (a client command, which says so itself, or not, to its caller).
    if (launch.readyPattern.isEmpty() && launch.readyPort == 0)
        return true;
    const auto deadline = Clock::now() + launch.readyTimeout;
    const auto startedAt = Clock::now();
    auto nextProbe = startedAt;
    QString servedByOther; // the port accepted, but another process listens on it: named for the error
    for (;;) {
        std::vector<QByteArray> fresh;
        {
            const std::lock_guard lock(s.mutex);
            fresh.swap(s.unmatched);
        }
        if (!launch.readyPattern.isEmpty()) {
            for (const QByteArray &bytes : fresh) {
                const QString line = QString::fromLocal8Bit(bytes).trimmed();
                const QRegularExpressionMatch match = ready.match(line);
                if (match.hasMatch()) {
                    s.readyText = match.lastCapturedIndex() >= 1 ? match.captured(1) : line;
                    const std::lock_guard lock(s.mutex);
                    s.collectUnmatched = false;
                    s.unmatched.clear();
                    return true;
                }
            }
        }
        if (s.exited()) {
            {
                // Its last words are usually why it exited: let the reader catch up with the pipe.
                std::unique_lock lock(s.mutex);
                s.changed.wait_for(lock, 300ms, [&s] { return s.eof; });
            }
            return fail(QStringLiteral("%1 exited before it was ready (%2)").arg(shown, s.exit.toString()));
        }
        if (launch.readyPattern.isEmpty()) {
            if (Clock::now() >= nextProbe) {
                // Every 2 ms for the first 200 ms (a server is often up in 20 to 40 ms, and ab restarts servers
                // tens of times a run), every 50 ms after: a refused loopback connect costs some 100 us.
                nextProbe = Clock::now() + (Clock::now() - startedAt < 200ms ? 2ms : 50ms);
                if (loopbackAccepts(launch.readyPort, 50ms)) {
                    // Its own: a port that accepts only because another program listens there (a server left running,
                    // a command that ignores {port}) would have the run measure that program instead.
                    const PortListeners listeners = portListeners(launch.readyPort, s.pid);
                    if (listeners.sockets.isEmpty() || heldByTree(listeners, s.pid))
                        return true;
                    servedByOther = listeners.ownersText();
                }
            }
        }
        const auto now = Clock::now();
        if (now >= deadline) {
            const QString waitedFor = !launch.readyPattern.isEmpty()
                ? QStringLiteral("no output line matched \"%1\"").arg(launch.readyPattern)
                : servedByOther.isEmpty()
                ? QStringLiteral("127.0.0.1:%1 accepted no TCP connection").arg(launch.readyPort)
                : QStringLiteral("port %1 is in use by another process, %2, and this command did not listen on it")
                      .arg(launch.readyPort)
                      .arg(servedByOther);
            return fail(QStringLiteral("%1 was not ready after the %2 ms timeout (%3); stopped it")
                            .arg(shown)
                            .arg(launch.readyTimeout.count())
                            .arg(waitedFor));
        }
        std::unique_lock lock(s.mutex);
        const auto wake = launch.readyPattern.isEmpty() ? std::min(nextProbe, now + 20ms) : now + 20ms;
        s.changed.wait_until(lock, std::min(deadline, wake), [&s] { return !s.unmatched.empty(); });
    }
}

void ServerProcess::stop(std::chrono::milliseconds grace)
{
    State &s = *m_state;
    stopGroupGuard(&s.guard, &s.guardFd); // from here on, this process ends the group itself
    if (s.pid > 0 && !s.reaped) {
        if (!s.exited()) {
            s.beforeStop = sampleProcess(s.pid);
            ::kill(-s.pid, SIGTERM);
            s.exitedWithin(grace);
        }
        // Whatever is left in its group (still the server, or what it started and did not stop) is killed now.
        // Safe: the leader is a zombie or alive until reap(), so the group id is still ours.
        if (!s.lost)
            ::kill(-s.pid, SIGKILL);
        if (s.exitedWithin(std::chrono::seconds(10)))
            s.reap();
    }
    // What left the group (setsid, a double fork) but carries the server's tag goes as well.
    endTagged(s.tag, static_cast<int>(std::min<std::chrono::milliseconds>(grace, 2s).count()));
    s.tag = {};
    if (s.reaped)
        s.pid = 0;
    s.closeReader(200ms);
}

bool ServerProcess::isRunning() const
{
    return m_state->pid > 0 && !m_state->exited();
}

qint64 ServerProcess::pid() const
{
    return isRunning() ? m_state->pid : 0;
}

QString ServerProcess::readyText() const
{
    return m_state->readyText;
}

QString ServerProcess::output() const
{
    return m_state->tail(outputLineLimit);
}

QString ServerProcess::outputTail(int lines) const
{
    return m_state->tail(lines);
}

ServerProcess::ExitStatus ServerProcess::exitStatus() const
{
    return m_state->exit;
}

ProcessSample ServerProcess::finalSample() const
{
    return m_state->final;
}

} // namespace rpcscope
