#pragma once

#include "client/clientcommand.h"
#include "net/portowners.h"
#include "profile/profile.h"
#include "server/servercommand.h"

#include <QHash>
#include <QSet>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

namespace rpcscope {

/// What to profile during a run's timed phase (--profile, --profile-client, --profiler).
struct ProfileOptions {
    bool server = false; ///< the servers rpcscope starts (or was told the pid of)
    bool client = false; ///< rpcscope's own process
    /// "auto" (perf for native code, rpcscope's sampler for Python server commands), "perf", "python", or a command
    /// that writes folded stacks, with {pid}, {seconds} and {out} in it.
    QString profiler = QStringLiteral("auto");
    /// CPU time between samples. 10 ms: on a virtual machine a shorter period made c=1 latency lower (sampled
    /// system-wide, a timer fires on every idle vCPU and keeps it from halting: 14.7% lower p50 at 1 ms, 0.2% at
    /// 10 ms; README, docs/profiling.md); 100 Hz is what py-spy and Go's pprof take too.
    std::chrono::microseconds period { 10000 };
    /// How perf finds a sample's callers: "fp" (frame pointers: cheap; code built without them loses its callers)
    /// or "dwarf" (a copy of the top of the stack unwound after the run with the binaries' unwind tables: whole
    /// stacks for any native code, 8 KiB a sample).
    QString callGraph = QStringLiteral("fp");
    /// --profile-keep: perf's recording is kept in this folder (perfKeepDir()) for hotspot; empty = deleted.
    QString keepDir;
    /// --profile-pid: the server is this local process (and its children), whatever listens on the target's port.
    qint64 pid = 0;

    bool any() const { return server || client; }
    bool isCommand() const;
    /// Checks --profiler's value: false with a message naming the flag.
    static bool checkProfiler(const QString &value, QString *error);
};

/// Whether perf can sample here, found once per process: `perf` on the PATH, and whether system-wide sampling (-a,
/// preferred: it costs the profiled processes nothing at their context switches) or sampling one process (-p) may
/// run and sees anything (on some virtual machines -p counts nothing).
struct PerfSupport {
    bool found = false;
    bool perProcess = false;
    bool systemWide = false;
    QString problem; ///< one line: what to install or allow, when perf cannot sample at all
};
PerfSupport perfSupport();

/// The name of process @p pid (its comm), empty when it is gone.
QString processName(qint64 pid);

/// Where --profile-keep keeps perf's recordings: rpcscope/perf in the XDG data home, beside the run history.
QString perfKeepDir();
/// @p path is a recording rpcscope kept: a file in perfKeepDir() (a profile read from a shared file may name any
/// path; only rpcscope's own are opened).
bool isKeptPerfData(const QString &path);

/**
 * Records CPU profiles of processes during windows of a run: a run's timed phase, or an A/B run's blocks. Each
 * profiled process is known by a key the caller chooses (a side and a server process; the client's own process),
 * registered with addProcess(); windowOpen()/windowClose() bracket the time its calls are timed, and finish()
 * gives one ProcessProfile a key, in CPU per call over its windows' OK calls.
 *
 * perf records with the software cpu-clock event (works without hardware counters), events off until a window
 * opens (perf's control FIFO), timestamps on CLOCK_MONOTONIC: one system-wide recording filtered to the keys'
 * process trees and windows, or, where that is not allowed, one recording a process. Python server commands get
 * rpcscope's sampler through PYTHONPATH (profiled()), switched on and off by a file in its folder. A
 * profiler that cannot run is a note, never a failed run.
 *
 * windowOpen()/windowClose() may be called from any thread (the load engine's); the rest from one thread.
 */
class ProfileRecorder {
public:
    explicit ProfileRecorder(ProfileOptions options);
    ~ProfileRecorder();
    ProfileRecorder(const ProfileRecorder &) = delete;
    ProfileRecorder &operator=(const ProfileRecorder &) = delete;

    const ProfileOptions &options() const { return m_options; }
    /**
     * @p command as it is started when profiling: rpcscope's Python sampler first on its PYTHONPATH (before the
     * command's own PYTHONPATH, else before the inherited one) and the sampler's control folder in its environment.
     * @p command itself stays as given: its record says what the user gave, not rpcscope's temporary folders.
     * Unchanged when the Python sampler is not used.
     */
    ServerCommand profiled(const ServerCommand &command) const;
    /// @p command, a client command, as profiled(ServerCommand) starts a server command: the sampler in its
    /// environment.
    ClientCommand profiled(const ClientCommand &command) const;
    /// Starts the profilers (their events off). False when none can run; notes() says why.
    bool start();
    /// Profile process @p pid and, @p withChildren, its descendants as @p key. rpcscope's own process (the client)
    /// is profiled alone: its children are the servers it started and perf itself.
    void addProcess(int key, qint64 pid, const QString &command, bool withChildren = true);
    /// @p key's calls are timed from now (its process tree is looked up now).
    void windowOpen(int key);
    /// @p key's window ended with @p okCalls calls that succeeded.
    void windowClose(int key, double okCalls);
    /// @p key served @p okCalls more calls in its windows (for a caller that knows them only after the window).
    void addCalls(int key, double okCalls);
    /// Stops the profilers and reads them: a profile per key that was ever in a window.
    std::map<int, ProcessProfile> finish();

    QString profilerName() const; ///< "perf", "python" or "command"
    QString callGraphArgument() const; ///< perf record's --call-graph value
    QString how() const; ///< how the profiles were recorded, for the reader
    QStringList notes() const;
    double profilerCpuSeconds() const { return m_profilerCpuSeconds; }

    /// A profile per scope from finish()'s profiles: @p keys of one side, in order.
    Profile profileOf(
        const QString &scope, const std::map<int, ProcessProfile> &profiles, const QList<int> &keys) const;

private:
    struct Perf;
    struct Key {
        qint64 pid = 0;
        QString command;
        QSet<qint64> pids; ///< its process tree, as seen at its windows' opening (or the process alone)
        bool tree = true; ///< with its descendants
        double calls = 0;
        double cpuNs = 0; ///< measured from outside over its windows
        double cpuAtOpen = -1;
        bool open = false;
        std::vector<std::pair<int64_t, int64_t>> windows; ///< CLOCK_MONOTONIC ns
        std::unique_ptr<Perf> perf; ///< per-process recording
        pid_t commandPid = -1; ///< the profiler command of the open window
        QStringList commandOutputs; ///< the folded files its windows' commands wrote
    };
    bool startPerf(Perf *perf, const QStringList &target, QString *error);
    void readPerf(Perf *perf, std::map<int, ProcessProfile> *out);
    void readPython(std::map<int, ProcessProfile> *out);
    void readCommands(std::map<int, ProcessProfile> *out);
    /// Moves @p perf's recording to the keep folder (--profile-keep); its new path, or empty (with a note).
    QString keepRecording(const Perf *perf);
    double treeCpuSeconds(const QSet<qint64> &pids) const;
    void note(const QString &text);

    ProfileOptions m_options;
    QTemporaryDir m_dir;
    bool m_usePerf = false;
    bool m_systemWide = false;
    bool m_usePython = false;
    std::unique_ptr<Perf> m_globalPerf; ///< system-wide recording
    QHash<int, QString> m_keptPerfData; ///< key -> its kept recording (--profile-keep)
    mutable std::mutex m_mutex;
    std::map<int, Key> m_keys;
    int m_window = 0;
    int m_openWindows = 0;
    QStringList m_notes;
    QString m_how;
    double m_profilerCpuSeconds = -1;
    double m_profilerCpuAtStart = 0;
};

/// The local process listening on the port of @p address ("127.0.0.1:50051", "http://localhost:8080"), for
/// profiling a server rpcscope did not start; pid 0 when none that this process may look at.
PortOwner localListener(const QString &address);

} // namespace rpcscope
