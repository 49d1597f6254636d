#include "profiler.h"

#include "metrics/processstats.h"
#include "profile/perfscript.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QThread>
#include <QUrl>

#include <csignal>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <ctime>

namespace rpcscope {

namespace {

int64_t monotonicNs()
{
    timespec now {};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<int64_t>(now.tv_sec) * 1000000000LL + now.tv_nsec;
}

/// Starts @p arguments with stdout and stderr to @p log; the pid, or -1.
pid_t spawnLogged(const QStringList &arguments, const QString &log)
{
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    const QByteArray logPath = QFile::encodeName(log);
    posix_spawn_file_actions_addopen(&actions, 1, logPath.constData(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    std::vector<QByteArray> bytes;
    bytes.reserve(static_cast<size_t>(arguments.size()));
    for (const QString &argument : arguments)
        bytes.push_back(argument.toLocal8Bit());
    std::vector<char *> argv;
    argv.reserve(bytes.size() + 1);
    for (QByteArray &b : bytes)
        argv.push_back(b.data());
    argv.push_back(nullptr);
    // The child starts with no signal blocked and SIGINT and SIGTERM at their defaults, whatever this process does
    // with them (the CLI catches Ctrl-C): a profiler is stopped by SIGINT.
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t none;
    sigemptyset(&none);
    sigset_t defaults;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGTERM);
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setsigdefault(&attributes, &defaults);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    pid_t pid = -1;
    const int rc = posix_spawnp(&pid, argv[0], &actions, &attributes, argv.data(), environ);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    return rc == 0 ? pid : -1;
}

/// Waits for @p pid to end, at most @p timeout; kills it then. Its exit status, or -1.
int waitEnded(pid_t pid, std::chrono::milliseconds timeout)
{
    const auto until = std::chrono::steady_clock::now() + timeout;
    int status = 0;
    while (true) {
        const pid_t done = ::waitpid(pid, &status, WNOHANG);
        if (done == pid)
            return status;
        if (done < 0)
            return -1;
        if (std::chrono::steady_clock::now() >= until) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            return -1;
        }
        QThread::msleep(10);
    }
}

/// The number after "# NAME " in a Python sampler's header; 0 when absent.
double headerNumber(const QString &text, const char *name)
{
    const QRegularExpression line(
        QStringLiteral("^# %1 ([0-9.]+)$").arg(QLatin1String(name)), QRegularExpression::MultilineOption);
    const QRegularExpressionMatch match = line.match(text);
    return match.hasMatch() ? match.captured(1).toDouble() : 0;
}

QString readText(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
}

} // namespace

bool ProfileOptions::isCommand() const
{
    return profiler != QLatin1String("auto") && profiler != QLatin1String("perf")
        && profiler != QLatin1String("python");
}

bool ProfileOptions::checkProfiler(const QString &value, QString *error)
{
    if (value == QLatin1String("auto") || value == QLatin1String("perf") || value == QLatin1String("python"))
        return true;
    if (!value.contains(QLatin1String("{out}")) || !value.contains(QLatin1String("{pid}"))) {
        *error = QStringLiteral("--profiler: '%1' is neither auto, perf nor python, and as a command it needs {pid} "
                                "(the process to profile) and {out} (the folded stacks file it writes)")
                     .arg(value);
        return false;
    }
    return true;
}

QString processName(qint64 pid)
{
    QFile comm(QStringLiteral("/proc/%1/comm").arg(pid));
    return comm.open(QIODevice::ReadOnly) ? QString::fromLocal8Bit(comm.readAll()).trimmed() : QString();
}

QString perfKeepDir()
{
    return QDir(QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation))
        .filePath(QStringLiteral("rpcscope/perf"));
}

bool isKeptPerfData(const QString &path)
{
    const QFileInfo file(path);
    const QString dir = QFileInfo(perfKeepDir()).canonicalFilePath();
    return file.isFile() && !dir.isEmpty() && file.canonicalPath() == dir;
}

PortOwner localListener(const QString &address)
{
    const QString text = address.trimmed();
    int port = -1;
    if (text.contains(QLatin1String("://")))
        port = QUrl(text).port(-1);
    else
        port = text.section(QLatin1Char(':'), -1).toInt();
    if (port <= 0 || port > 65535)
        return {};
    const PortListeners listeners = portListeners(static_cast<quint16>(port));
    return listeners.owners.isEmpty() ? PortOwner() : listeners.owners.first();
}

// ---- perf support, found once ---------------------------------------------------------------------------------

namespace {

/// Records @p seconds of cpu-clock samples of @p target ("-p PID" or "-a") while a child spins; the sample count,
/// or -1 when perf failed (its output in @p log).
int probeSamples(const QStringList &target, QString *log)
{
    const pid_t spinner = ::fork();
    if (spinner == 0) {
        const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(600);
        volatile uint64_t x = 1;
        while (std::chrono::steady_clock::now() < until)
            x = x * 6364136223846793005ULL + 1;
        ::_exit(0);
    }
    QTemporaryDir dir;
    const QString data = dir.filePath(QStringLiteral("probe.data"));
    QStringList arguments { QStringLiteral("perf"), QStringLiteral("record"), QStringLiteral("-e"),
        QStringLiteral("cpu-clock"), QStringLiteral("-c"), QStringLiteral("100000"), QStringLiteral("-o"), data };
    for (const QString &t : target)
        arguments << QString(t).replace(QLatin1String("SPINNER"), QString::number(spinner));
    arguments << QStringLiteral("--") << QStringLiteral("sleep") << QStringLiteral("0.3");
    const pid_t perf = spawnLogged(arguments, dir.filePath(QStringLiteral("log")));
    const int status = perf > 0 ? waitEnded(perf, std::chrono::seconds(10)) : -1;
    waitEnded(spinner, std::chrono::seconds(5));
    *log = readText(dir.filePath(QStringLiteral("log"))).trimmed();
    if (status != 0)
        return -1;
    const QRegularExpression count(QStringLiteral("\\((\\d+) samples\\)"));
    const QRegularExpressionMatch match = count.match(*log);
    return match.hasMatch() ? match.captured(1).toInt() : 0;
}

PerfSupport findPerfSupport()
{
    PerfSupport support;
    support.found = !QStandardPaths::findExecutable(QStringLiteral("perf")).isEmpty();
    if (!support.found) {
        support.problem = QStringLiteral("perf is not installed (Debian: apt install linux-perf)");
        return support;
    }
    // System-wide first: per-CPU events cost the profiled processes nothing at their context switches, while a
    // per-process recording (-p) hooks every switch of every thread of theirs (measured here: an Echo's p50 at c=1
    // went from 77 to 114 us under -p, and did not move under -a). -p is for where -a is not allowed.
    QString systemLog;
    support.systemWide = probeSamples({ QStringLiteral("-a") }, &systemLog) > 0;
    if (support.systemWide)
        return support;
    QString log;
    support.perProcess = probeSamples({ QStringLiteral("-p"), QStringLiteral("SPINNER") }, &log) > 0;
    if (!support.perProcess) {
        const QString paranoid = readText(QStringLiteral("/proc/sys/kernel/perf_event_paranoid")).trimmed();
        support.problem
            = QStringLiteral("perf cannot sample here (kernel.perf_event_paranoid is %1): run as root, or allow it "
                             "with sysctl kernel.perf_event_paranoid=1; perf said: %2")
                  .arg(paranoid.isEmpty() ? QStringLiteral("unknown") : paranoid,
                      (log.isEmpty() ? systemLog : log).section(QLatin1Char('\n'), 0, 0));
    }
    return support;
}

} // namespace

PerfSupport perfSupport()
{
    static const PerfSupport support = findPerfSupport();
    return support;
}

// ---- the recorder ---------------------------------------------------------------------------------------------

struct ProfileRecorder::Perf {
    pid_t pid = -1;
    int control = -1;
    int ack = -1;
    QString data;
    QString log;
    int enabled = 0; ///< windows open on it

    bool send(const char *command)
    {
        const std::string line = std::string(command) + "\n";
        if (control < 0 || ::write(control, line.data(), line.size()) != static_cast<ssize_t>(line.size()))
            return false;
        pollfd wait { ack, POLLIN, 0 };
        if (::poll(&wait, 1, 3000) <= 0)
            return false;
        char reply[16];
        return ::read(ack, reply, sizeof reply) > 0;
    }
    ~Perf()
    {
        if (pid > 0) {
            ::kill(pid, SIGINT);
            waitEnded(pid, std::chrono::seconds(10));
        }
        if (control >= 0)
            ::close(control);
        if (ack >= 0)
            ::close(ack);
    }
};

ProfileRecorder::ProfileRecorder(ProfileOptions options) : m_options(std::move(options))
{
    if (qEnvironmentVariableIsSet("RPCSCOPE_PROFILE_KEEP")) {
        m_dir.setAutoRemove(false);
        m_notes << QStringLiteral("profiler files kept in ") + m_dir.path();
    }
    const bool python = m_options.server
        && (m_options.profiler == QLatin1String("auto") || m_options.profiler == QLatin1String("python"));
    m_usePython = python && m_dir.isValid();
    if (m_usePython) {
        QDir(m_dir.path()).mkpath(QStringLiteral("python"));
        QDir(m_dir.path()).mkpath(QStringLiteral("pyprofile"));
        QFile::copy(QStringLiteral(":/rpcscope/profiling/sitecustomize.py"),
            m_dir.filePath(QStringLiteral("python/sitecustomize.py")));
    }
}

ProfileRecorder::~ProfileRecorder()
{
    m_globalPerf.reset();
    m_keys.clear();
}

ClientCommand ProfileRecorder::profiled(const ClientCommand &command) const
{
    ServerCommand asServer;
    asServer.command = command.command;
    asServer.environment = command.environment;
    ClientCommand out = command;
    out.environment = profiled(asServer).environment;
    return out;
}

ServerCommand ProfileRecorder::profiled(const ServerCommand &command) const
{
    ServerCommand out = command;
    if (!m_usePython)
        return out;
    const QString ours = m_dir.filePath(QStringLiteral("python"));
    const auto prepend
        = [&ours](const QString &path) { return path.isEmpty() ? ours : ours + QLatin1Char(':') + path; };
    bool given = false;
    for (auto &[name, value] : out.environment) {
        if (name == u"PYTHONPATH") {
            value = prepend(value);
            given = true;
        }
    }
    if (!given)
        out.environment.append({ QStringLiteral("PYTHONPATH"), prepend(qEnvironmentVariable("PYTHONPATH")) });
    out.environment.append({ QStringLiteral("RPCSCOPE_PYPROFILE_DIR"), m_dir.filePath(QStringLiteral("pyprofile")) });
    return out;
}

void ProfileRecorder::note(const QString &text)
{
    if (!m_notes.contains(text))
        m_notes << text;
}

QStringList ProfileRecorder::notes() const
{
    std::lock_guard lock(m_mutex);
    return m_notes;
}

QString ProfileRecorder::profilerName() const
{
    if (m_options.isCommand())
        return QStringLiteral("command");
    if (m_options.profiler == QLatin1String("python"))
        return QStringLiteral("python");
    return QStringLiteral("perf");
}

QString ProfileRecorder::callGraphArgument() const
{
    // dwarf: perf's default copy of 8 KiB of the stack a sample, enough for a server's handler under its event loop
    return m_options.callGraph == u"dwarf" ? QStringLiteral("dwarf,8192") : QStringLiteral("fp");
}

QString ProfileRecorder::how() const
{
    return m_how;
}

bool ProfileRecorder::startPerf(Perf *perf, const QStringList &target, QString *error)
{
    static int counter = 0;
    const QString stem = m_dir.filePath(QStringLiteral("perf%1").arg(++counter));
    const QByteArray control = QFile::encodeName(stem + QStringLiteral(".ctl"));
    const QByteArray ack = QFile::encodeName(stem + QStringLiteral(".ack"));
    if (::mkfifo(control.constData(), 0600) != 0 || ::mkfifo(ack.constData(), 0600) != 0) {
        *error = QStringLiteral("cannot make perf's control FIFOs in ") + m_dir.path();
        return false;
    }
    // Opened read-write, so that neither open waits for perf's end of the pipe.
    perf->control = ::open(control.constData(), O_RDWR | O_CLOEXEC);
    perf->ack = ::open(ack.constData(), O_RDWR | O_CLOEXEC);
    perf->data = stem + QStringLiteral(".data");
    perf->log = stem + QStringLiteral(".log");
    QStringList arguments { QStringLiteral("perf"), QStringLiteral("record"), QStringLiteral("-e"),
        QStringLiteral("cpu-clock"), QStringLiteral("-c"),
        QString::number(std::chrono::nanoseconds(m_options.period).count()), QStringLiteral("--call-graph"),
        callGraphArgument(), QStringLiteral("-k"), QStringLiteral("CLOCK_MONOTONIC"), QStringLiteral("-D"),
        QStringLiteral("-1"), QStringLiteral("--control"),
        QStringLiteral("fifo:%1,%2").arg(QFile::decodeName(control), QFile::decodeName(ack)), QStringLiteral("-o"),
        perf->data };
    arguments << target;
    perf->pid = spawnLogged(arguments, perf->log);
    if (perf->pid <= 0) {
        *error = QStringLiteral("perf did not start");
        return false;
    }
    // Ready when it says its events are off (it first writes what already runs, which takes a moment with -a).
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!readText(perf->log).contains(QLatin1String("Events disabled"))) {
        int status = 0;
        if (::waitpid(perf->pid, &status, WNOHANG) == perf->pid) {
            perf->pid = -1;
            *error = QStringLiteral("perf record failed: ")
                + readText(perf->log).trimmed().section(QLatin1Char('\n'), 0, 0);
            return false;
        }
        if (std::chrono::steady_clock::now() >= until) {
            *error = QStringLiteral("perf record did not get ready in 10 s");
            return false;
        }
        QThread::msleep(10);
    }
    return true;
}

bool ProfileRecorder::start()
{
    if (!m_dir.isValid()) {
        note(QStringLiteral("profiling: no temporary folder"));
        return false;
    }
    if (m_options.isCommand()) {
        m_how = QStringLiteral("the command ") + m_options.profiler;
        return true;
    }
    if (m_options.profiler == QLatin1String("python")) {
        m_how = QStringLiteral("rpcscope's Python sampler (thread CPU time per stack)");
        return true;
    }
    const PerfSupport support = perfSupport();
    if (!support.perProcess && !support.systemWide) {
        note(QStringLiteral("no native profile: ") + support.problem);
        return m_usePython;
    }
    m_usePerf = true;
    m_systemWide = support.systemWide;
    const QString event
        = QStringLiteral("perf record -e cpu-clock -c %1 --call-graph %2 (one sample per %3 us of CPU%4)")
              .arg(std::chrono::nanoseconds(m_options.period).count())
              .arg(callGraphArgument())
              .arg(m_options.period.count())
              .arg(m_options.callGraph == u"dwarf" ? QStringLiteral(", its callers unwound from a copy of the stack")
                                                   : QStringLiteral(", its callers by frame pointer"));
    if (m_systemWide) {
        m_globalPerf = std::make_unique<Perf>();
        QString error;
        if (!startPerf(m_globalPerf.get(), { QStringLiteral("-a") }, &error)) {
            m_globalPerf.reset();
            m_usePerf = false;
            note(QStringLiteral("no native profile: ") + error);
            return m_usePython;
        }
        // On from now to the end: a process started while its events were off (a server restarted between blocks)
        // would have its mappings missed, and its frames unnamed. The windows are applied by the samples' times.
        if (!m_globalPerf->send("enable"))
            note(QStringLiteral("perf did not answer its control FIFO"));
        m_profilerCpuAtStart = sampleProcess(m_globalPerf->pid).cpuSeconds;
        m_how = event + QStringLiteral(" -a, filtered to the profiled processes and their timed windows");
    } else {
        m_how = event
            + QStringLiteral(" -p, one recording a process (system-wide sampling is not allowed here; "
                             "per-process sampling slows the profiled processes' context switches)");
    }
    m_how += QStringLiteral("; each process's samples share out its measured CPU");
    return true;
}

void ProfileRecorder::addProcess(int key, qint64 pid, const QString &command, bool withChildren)
{
    Key &k = m_keys[key];
    k.pid = pid;
    k.command = command;
    k.tree = withChildren;
    k.pids = withChildren ? processTree(pid) : QSet<qint64> { pid };
    if (m_usePerf && !m_systemWide && !k.perf) {
        k.perf = std::make_unique<Perf>();
        QString error;
        if (!startPerf(k.perf.get(), { QStringLiteral("-p"), QString::number(pid) }, &error)) {
            k.perf.reset();
            note(QStringLiteral("no native profile of process %1: %2").arg(pid).arg(error));
        }
    }
}

double ProfileRecorder::treeCpuSeconds(const QSet<qint64> &pids) const
{
    double seconds = 0;
    for (qint64 pid : pids) {
        const ProcessSample sample = sampleProcess(static_cast<pid_t>(pid));
        if (sample.valid)
            seconds += sample.cpuSeconds;
    }
    return seconds;
}

void ProfileRecorder::windowOpen(int key)
{
    std::lock_guard lock(m_mutex);
    auto it = m_keys.find(key);
    if (it == m_keys.end() || it->second.open)
        return;
    Key &k = it->second;
    if (k.tree)
        k.pids.unite(processTree(k.pid));
    k.open = true;
    ++m_window;
    if (m_usePython && m_openWindows++ == 0) {
        // written whole under another name, then renamed: a sampler never reads half of it
        const QString on = m_dir.filePath(QStringLiteral("pyprofile/on"));
        QFile file(on + QStringLiteral(".tmp"));
        if (file.open(QIODevice::WriteOnly) && file.write(QByteArray::number(m_window)) > 0) {
            file.close();
            ::rename(QFile::encodeName(file.fileName()).constData(), QFile::encodeName(on).constData());
        }
    }
    k.cpuAtOpen = treeCpuSeconds(k.pids);
    Perf *perf = k.perf.get(); // a system-wide recording is on all along
    if (perf && perf->enabled++ == 0 && !perf->send("enable"))
        note(QStringLiteral("perf did not answer its control FIFO"));
    k.windows.emplace_back(monotonicNs(), 0);
    if (m_options.isCommand()) {
        const QString out = m_dir.filePath(QStringLiteral("command%1-%2.folded").arg(key).arg(m_window));
        QString command = m_options.profiler;
        command.replace(QLatin1String("{pid}"), QString::number(k.pid))
            .replace(QLatin1String("{seconds}"), QStringLiteral("3600"))
            .replace(QLatin1String("{out}"), out);
        k.commandPid = spawnLogged(QProcess::splitCommand(command), out + QStringLiteral(".log"));
        if (k.commandPid > 0)
            k.commandOutputs << out;
        else
            note(QStringLiteral("the profiler command did not start: ") + command);
    }
}

void ProfileRecorder::windowClose(int key, double okCalls)
{
    std::lock_guard lock(m_mutex);
    auto it = m_keys.find(key);
    if (it == m_keys.end() || !it->second.open)
        return;
    Key &k = it->second;
    k.open = false;
    k.windows.back().second = monotonicNs();
    Perf *perf = k.perf.get();
    if (perf && --perf->enabled == 0)
        perf->send("disable");
    k.cpuNs += std::max(0.0, treeCpuSeconds(k.pids) - k.cpuAtOpen) * 1e9;
    k.calls += okCalls;
    if (k.commandPid > 0) {
        ::kill(k.commandPid, SIGINT); // py-spy and perf write what they have on SIGINT
        if (waitEnded(k.commandPid, std::chrono::seconds(20)) < 0)
            note(QStringLiteral("the profiler command did not end within 20 s of SIGINT; killed"));
        k.commandPid = -1;
    }
    if (m_usePython && --m_openWindows == 0)
        QFile::remove(m_dir.filePath(QStringLiteral("pyprofile/on")));
}

void ProfileRecorder::addCalls(int key, double okCalls)
{
    std::lock_guard lock(m_mutex);
    const auto it = m_keys.find(key);
    if (it != m_keys.end())
        it->second.calls += okCalls;
}

void ProfileRecorder::readPerf(Perf *perf, std::map<int, ProcessProfile> *out)
{
    if (!perf || perf->pid <= 0)
        return;
    ::kill(perf->pid, SIGINT);
    waitEnded(perf->pid, std::chrono::seconds(30));
    perf->pid = -1;
    // Which key a sample is: its process in the key's tree, its time in one of the key's windows.
    PerfScriptFolder folder;
    folder.setClassifier([this, perf](qint64 pid, int64_t timeNs) {
        for (const auto &[key, k] : m_keys) {
            if ((!m_systemWide && k.perf.get() != perf) || !k.pids.contains(pid))
                continue;
            for (const auto &[from, to] : k.windows)
                if (timeNs >= from && timeNs <= to)
                    return key;
        }
        return PerfScriptFolder::Skip;
    });
    // Only the profiled processes' samples are read: a system-wide recording holds the whole machine's, and perf
    // resolves (with dwarf call graphs: unwinds) every sample it prints.
    QStringList pids;
    for (const auto &[key, k] : m_keys)
        if (m_systemWide || k.perf.get() == perf)
            for (const qint64 pid : k.pids)
                pids << QString::number(pid);
    pids.removeDuplicates();
    QProcess script;
    script.setProgram(QStringLiteral("perf"));
    QStringList arguments { QStringLiteral("script"), QStringLiteral("-i"), perf->data, QStringLiteral("-F"),
        QStringLiteral("comm,pid,tid,time,period,ip,sym,dso"), QStringLiteral("--ns") };
    if (!pids.isEmpty())
        arguments << QStringLiteral("--pid=") + pids.join(QLatin1Char(','));
    script.setArguments(arguments);
    script.setStandardErrorFile(QProcess::nullDevice());
    script.start();
    if (!script.waitForStarted(10000)) {
        note(QStringLiteral("perf script did not start"));
        return;
    }
    QByteArray pending;
    auto drain = [&](bool all) {
        pending += script.readAllStandardOutput();
        qsizetype start = 0;
        while (true) {
            const qsizetype end = pending.indexOf('\n', start);
            if (end < 0)
                break;
            folder.addLine(QByteArrayView(pending).sliced(start, end - start));
            start = end + 1;
        }
        pending.remove(0, start);
        if (all && !pending.isEmpty())
            folder.addLine(pending);
    };
    while (script.state() != QProcess::NotRunning) {
        script.waitForReadyRead(1000);
        drain(false);
    }
    drain(true);
    folder.finish();
    double deferred = 0; ///< samples left out by isDeferredToSwitch()
    for (auto &[key, k] : m_keys) {
        if (!(m_systemWide || k.perf.get() == perf) || k.windows.empty())
            continue;
        ProcessProfile &profile = (*out)[key];
        profile.pid = k.pid;
        profile.command = k.command;
        profile.calls = k.calls;
        // In samples: a weight's sampling noise is Poisson in its sample count.
        const double period = static_cast<double>(std::chrono::nanoseconds(m_options.period).count());
        profile.measuredCpuNs = k.cpuNs;
        const FoldedStacks ns = folder.keyedStacks().value(key);
        double samples = 0;
        for (auto s = ns.cbegin(); s != ns.cend(); ++s) {
            if (isDeferredToSwitch(s.key())) {
                deferred += s.value() / period;
                continue;
            }
            profile.stacks.insert(s.key(), s.value() / period);
            samples += s.value() / period;
        }
        // A sample stands for the process's CPU over its windows (its CPU clock, exact) shared out by the samples:
        // on a virtual machine a server answering in short bursts was sampled 0.78 to 1.26 times its CPU, process
        // by process (timer ticks beating with the calls), which the samples' shares do not suffer. perf runs as a
        // process of its own, so the measured CPU holds none of the profiler's. Only where the samples and the
        // measured CPU are of the same processes: `perf record -p` follows the key's process alone, not the
        // children its tree's CPU holds.
        const bool sameProcesses = m_systemWide || k.pids.size() <= 1;
        profile.cpuNsPerUnit = sameProcesses && samples >= 1 && k.cpuNs > 0 ? k.cpuNs / samples : period;
    }
    if (deferred > 0 && !m_how.contains(QLatin1String("finish_task_switch")))
        m_how += QStringLiteral("; samples that land on finish_task_switch left out (taken while the CPU idled, "
                                "delivered as the process was switched in)");
}

void ProfileRecorder::readPython(std::map<int, ProcessProfile> *out)
{
    const QString dir = m_dir.filePath(QStringLiteral("pyprofile"));
    // A sampler writes its file when sampling stops, within a tick or two: wait a little for the last window's.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    const QRegularExpression windowLine(QStringLiteral("^# window (\\d+)$"), QRegularExpression::MultilineOption);
    QHash<qint64, QString> texts;
    while (true) {
        texts.clear();
        bool current = true;
        const QStringList files = QDir(dir).entryList({ QStringLiteral("*.folded") }, QDir::Files);
        for (const QString &file : files) {
            const QString text = readText(dir + QLatin1Char('/') + file);
            texts.insert(file.section(QLatin1Char('.'), 0, 0).toLongLong(), text);
            const QRegularExpressionMatch match = windowLine.match(text);
            if (!match.hasMatch())
                current = false;
        }
        if (current || std::chrono::steady_clock::now() >= until)
            break;
        QThread::msleep(20);
    }
    double samplerUs = 0;
    QSet<int> pythonKeys;
    for (auto it = texts.cbegin(); it != texts.cend(); ++it) {
        for (auto &[key, k] : m_keys) {
            if (!k.pids.contains(it.key()) || k.windows.empty())
                continue;
            FoldedStacks stacks;
            QString error;
            if (!parseFolded(
                    it.value(), QStringLiteral("the Python sampler's %1.folded").arg(it.key()), &stacks, &error)) {
                note(error);
                continue;
            }
            if (stacks.isEmpty())
                continue;
            samplerUs += headerNumber(it.value(), "sampler_cpu_us");
            ProcessProfile &profile = (*out)[key];
            if (!pythonKeys.contains(key)) {
                // perf saw the interpreter's C frames; the Python frames say more. The unit: a sample's mean CPU
                // (its weights are microseconds of thread CPU, a sample's share of a tick), so that the sampling
                // noise of a weight is judged by the samples it stands for.
                pythonKeys.insert(key);
                profile.stacks.clear();
                const double cpuUs = headerNumber(it.value(), "cpu_us");
                const double samples = headerNumber(it.value(), "samples");
                profile.cpuNsPerUnit = cpuUs > 0 && samples > 0 ? cpuUs * 1000 / samples : 1000;
            }
            profile.pid = k.pid;
            profile.command = k.command;
            profile.calls = k.calls;
            profile.measuredCpuNs = k.cpuNs;
            for (auto s = stacks.cbegin(); s != stacks.cend(); ++s)
                profile.stacks[s.key()] += s.value() * 1000.0 / profile.cpuNsPerUnit;
        }
    }
    if (!texts.isEmpty() && !m_how.contains(QLatin1String("Python")))
        m_how += QStringLiteral("; Python processes: rpcscope's sampler (thread CPU time per stack)");
    if (samplerUs > 0)
        m_profilerCpuSeconds = std::max(0.0, m_profilerCpuSeconds) + samplerUs / 1e6;
}

void ProfileRecorder::readCommands(std::map<int, ProcessProfile> *out)
{
    for (auto &[key, k] : m_keys) {
        FoldedStacks stacks;
        for (const QString &file : std::as_const(k.commandOutputs)) {
            QString error;
            if (!QFile::exists(file)) {
                note(QStringLiteral("the profiler command wrote no %1: %2")
                         .arg(QFileInfo(file).fileName(), readText(file + QStringLiteral(".log")).trimmed().left(200)));
                continue;
            }
            if (!parseFolded(readText(file), QFileInfo(file).fileName(), &stacks, &error))
                note(error);
        }
        if (stacks.isEmpty())
            continue;
        ProcessProfile &profile = (*out)[key];
        profile.pid = k.pid;
        profile.command = k.command;
        profile.calls = k.calls;
        profile.stacks = stacks;
        profile.cpuNsPerUnit = 0; // sample counts of an unknown rate: scaled to the CPU measured from outside
        profile.measuredCpuNs = k.cpuNs;
    }
}

std::map<int, ProcessProfile> ProfileRecorder::finish()
{
    std::map<int, ProcessProfile> profiles;
    if (m_globalPerf && m_globalPerf->pid > 0) {
        const ProcessSample sample = sampleProcess(m_globalPerf->pid);
        if (sample.valid)
            m_profilerCpuSeconds = sample.cpuSeconds - m_profilerCpuAtStart;
    }
    for (auto &[key, k] : m_keys) {
        if (k.perf && k.perf->pid > 0) {
            const ProcessSample sample = sampleProcess(k.perf->pid);
            if (sample.valid)
                m_profilerCpuSeconds = std::max(0.0, m_profilerCpuSeconds) + sample.cpuSeconds;
        }
    }
    if (m_systemWide) {
        readPerf(m_globalPerf.get(), &profiles);
        if (const QString kept = keepRecording(m_globalPerf.get()); !kept.isEmpty())
            for (const auto &[key, k] : m_keys)
                m_keptPerfData.insert(key, kept);
    }
    for (auto &[key, k] : m_keys) {
        if (k.perf) {
            readPerf(k.perf.get(), &profiles);
            if (const QString kept = keepRecording(k.perf.get()); !kept.isEmpty())
                m_keptPerfData.insert(key, kept);
        }
    }
    if (m_usePython)
        readPython(&profiles);
    if (m_options.isCommand())
        readCommands(&profiles);
    return profiles;
}

QString ProfileRecorder::keepRecording(const Perf *perf)
{
    if (m_options.keepDir.isEmpty() || !perf || !QFileInfo::exists(perf->data))
        return {};
    static std::atomic<int> counter { 0 };
    QString target = QDir(m_options.keepDir)
                         .filePath(QStringLiteral("rpcscope-%1-%2-%3.perf.data")
                                       .arg(QDateTime::currentDateTimeUtc().toString(QStringLiteral("yyyyMMdd-HHmmss")))
                                       .arg(::getpid())
                                       .arg(++counter));
    // Renamed where it can be (the same file system), else copied: the temporary folder goes when the recorder does.
    if (!QDir().mkpath(m_options.keepDir) || (!QFile::rename(perf->data, target) && !QFile::copy(perf->data, target))) {
        note(QStringLiteral("perf's recording could not be kept in %1").arg(m_options.keepDir));
        return {};
    }
    return target;
}

Profile ProfileRecorder::profileOf(
    const QString &scope, const std::map<int, ProcessProfile> &profiles, const QList<int> &keys) const
{
    Profile profile;
    profile.scope = scope;
    profile.profiler = profilerName();
    profile.how = m_how;
    profile.notes = notes();
    profile.profilerCpuSeconds = m_profilerCpuSeconds;
    for (int key : keys) {
        const auto it = profiles.find(key);
        if (it != profiles.end())
            profile.processes.push_back(it->second);
        if (profile.perfData.isEmpty())
            profile.perfData = m_keptPerfData.value(key);
    }
    return profile;
}

} // namespace rpcscope
