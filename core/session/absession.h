#pragma once

#include "engine/abrunner.h"
#include "profile/profiler.h"
#include "scenario/runspec.h"
#include "scenario/scenario.h"
#include "server/serverlaunch.h"
#include "store/runrecord.h"

#include <QList>
#include <QPair>
#include <QString>
#include <QStringList>

#include <array>
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <thread>

namespace rpcscope {

/// One side of an A/B run as a front end was given it.
struct AbTarget {
    /// "builtin" (rpcscope's own `serve` for the transport), HOST:PORT or a URL (a server that runs), or a command
    /// line (a space or {port}: looksLikeCommand()) that rpcscope starts, restarts and stops.
    QString spec;
    QList<QPair<QString, QString>> environment; ///< for a command or the built-in server
    QString workingDirectory; ///< for a command
    /// A client command that makes this side's calls instead of rpcscope's own client (clientcommand.h), with
    /// environment variables of its own; empty: rpcscope's client. From the command line or the window only: a
    /// shared document never names one.
    QString client;
    QList<QPair<QString, QString>> clientEnvironment;
    /// --a-profile-pid: profile this local process (and its children) as the side's server, rather than the one
    /// listening on its address's port (a proxy's); for an address only (a server ab starts is known, and restarted).
    /// 0: not given. The command line's or the window's alone.
    qint64 profilePid = 0;
};

/**
 * An A/B run from its description to its two records, for the CLI's ab and the window's Compare A/B: the design
 * typed (prepareAb()), each side's run typed (prepareRun() of the document with the side's target), the servers
 * pinned apart from this client when the verdict is about one process a side, the coin that says which side goes
 * (and starts) first, the servers started in that order and restarted between blocks, addresses probed, the schema
 * and call of each side, this process pinned (and unpinned when the run ends), the AbRunner, and the two RunRecords
 * the history keeps. Front ends parse, show and print.
 *
 * As RunSession: the steps that may block run on the caller's thread (check(), prepare(), startLoad(): the CLI) or
 * on the session's own thread (check() first, then startInBackground(): the GUI). The thread that started the
 * servers holds them (PR_SET_PDEATHSIG) and stops them when the run has ended; the destructor stops everything.
 */
class AbSession {
public:
    /**
     * @p design is the document the run is made of, its target left empty (each side has its own), its "ab" section
     * the A/B design as asked (flags, the dialog), its server_command.ready/ready_timeout for the command sides and
     * its pinning for the servers rpcscope starts and this client. With @p call, both sides call the front end's
     * call (the GUI prepares it from the schema it shows); else each side loads the document's schema, or its
     * server's reflection. @p serveProgram runs `serve` for a built-in side (usually the CLI's own executable).
     */
    AbSession(Scenario design, std::array<AbTarget, 2> targets, std::optional<GrpcCall> call = std::nullopt,
        QString serveProgram = QString());
    ~AbSession();
    AbSession(const AbSession &) = delete;
    AbSession &operator=(const AbSession &) = delete;

    /// The runs' name (empty: each side named by what distinguishes it) and labels (each side also gets "A" or "B").
    void setNaming(const QString &name, const QStringList &labels);
    /// Told "Starting A: built-in grpc server" or "Starting B: COMMAND" before a server starts (preparing thread).
    void setStartingHook(std::function<void(const QString &what)> hook) { m_startingHook = std::move(hook); }

    /**
     * Checks what can be checked before anything starts: both sides' runs, environments given only to servers
     * rpcscope starts, the design, the pinning. False with @p problem naming the field and @p side the side it
     * belongs to (0 = A, 1 = B), or -1 when it is the design's or the document's. Starts nothing; prepare() calls
     * it when nobody did.
     */
    bool check(ScenarioProblem *problem, int *side = nullptr);
    /// After check(): the blocks as they will run, and the rounds planned.
    const AbBlocks &blocks() const { return m_blocks; }
    int rounds() const { return m_rounds; }
    /// After check(): each side's run as typed (its address and server pid filled in by prepare()).
    const RunSpec &spec(int side) const { return m_sides[static_cast<size_t>(side)].spec; }
    bool startsServer(int side) const { return m_sides[static_cast<size_t>(side)].startsServer; }
    /// After check(): where this client and the servers run pinned; empty when not pinned.
    const std::vector<int> &clientCpus() const { return m_clientCpus; }
    /// What the profilers say went wrong (a missing perf, a server not found): for the front end to show.
    QStringList profileNotes() const;
    const std::vector<int> &serverCpus() const { return m_serverCpus; }
    /// After check(): the session pinned client and servers apart itself (judged as it goes, nothing was pinned).
    bool pinnedApart() const { return m_pinnedApart; }

    /**
     * Starts the servers (the side that goes first in round 1 first: the coin is flipped here), probes addresses,
     * loads each side's schema and prepares its call, pins this process, and builds both records. False with
     * @p problem (`runtime` set when a server did not start or answer), @p side as check()'s, @p details with what a
     * schema loader said at length.
     */
    bool prepare(ScenarioProblem *problem, int *side = nullptr, QString *details = nullptr);
    /// Starts the blocks (after prepare()); the records' start time is now.
    bool startLoad(QString *error);

    /// What startInBackground() reports, on the session's thread: no problem when the blocks started.
    struct Started {
        std::optional<ScenarioProblem> problem;
        int side = -1; ///< the side the problem belongs to, -1 for the design or the document
        QString details;
    };
    /// check() (if not done), prepare() and startLoad() on the session's own thread, which then holds the servers
    /// until the run ends; @p started follows on that thread.
    void startInBackground(std::function<void(const Started &)> started);
    /// Ends the block running (kept) and runs no more, or ends the preparation at its next step.
    void stop();
    /// The run has ended: gives this process back the CPUs it had (when it pinned it), then stops the servers. The
    /// session's own thread does this itself.
    void finish();
    /// startLoad() succeeded: the blocks run (or ran).
    bool loadStarted() const { return m_loadStarted.load(); }
    /// The blocks have ended and this process has its CPUs back (its servers may still be stopping).
    bool runEnded() const { return m_runEnded.load(); }
    /// Nothing of the session is left to wait for: its thread (if started) has ended, its servers stopped.
    bool isDone() const { return !m_thread.joinable() || m_done.load(); }

    AbRunner &runner() { return m_runner; }
    const AbRunner &runner() const { return m_runner; }
    /// The two runs as the history keeps them when they start (valid after prepare(); secrets redacted).
    const std::array<RunRecord, 2> &records() const { return m_records; }
    /// Ends the records (records()'s copies, with the ids the history gave them): the last figures, the raw
    /// samples, the status and the end time.
    void completeRecords(std::array<RunRecord, 2> *records) const;
    /// The targets as given.
    const AbTarget &target(int side) const { return m_targets[static_cast<size_t>(side)]; }

private:
    struct Side {
        Scenario scenario; ///< the document with this side's target
        RunSpec spec;
        bool builtin = false;
        bool startsServer = false; ///< builtin or a command
        ServerCommand server; ///< what is started for it
        ServerLaunch launch;
        std::optional<GrpcCall> call;
    };
    bool stopping() const { return m_stop.load(); }
    bool startServer(int index, ScenarioProblem *problem);
    void buildRecords();
    void startProfiling();
    void finishProfiles();
    static int serverKey(int side, int process) { return side * 100 + process; }
    static int clientKey(int side) { return 1000 + side; }
    /// A side's client command's processes (issue 36), each profiled as a server process is.
    static int clientCommandKey(int side, int process) { return 2000 + side * 100 + process; }
    /// The profile key of @p side's client now: its client command's current process, else rpcscope's own.
    int currentClientKey(int side) const;

    Scenario m_design;
    std::array<AbTarget, 2> m_targets;
    std::optional<GrpcCall> m_call;
    QString m_serveProgram;
    QString m_name;
    QStringList m_labels;
    std::function<void(const QString &)> m_startingHook;

    bool m_checked = false;
    std::array<Side, 2> m_sides;
    AbBlocks m_blocks;
    int m_rounds = 0;
    std::vector<int> m_clientCpus;
    std::vector<int> m_serverCpus;
    bool m_pinnedApart = false;
    std::vector<int> m_cpusBefore; ///< set when prepare() pinned this process: what it ran on before
    std::array<RunRecord, 2> m_records;
    AbRunner m_runner;
    std::unique_ptr<ProfileRecorder> m_profiler; ///< set when the design profiles anything
    std::array<std::atomic<int>, 2> m_serverProcess {}; ///< each side's current server process (1, 2, ...)
    std::array<QList<int>, 2> m_serverKeys; ///< each side's server processes' profile keys, in order
    std::array<std::atomic<int>, 2> m_clientProcess {}; ///< each side's current client command process (1, 2, ...)
    std::array<QList<int>, 2> m_clientKeys; ///< each side's client command processes' profile keys, in order
    std::array<std::optional<Profile>, 2> m_serverProfiles;
    std::array<std::optional<Profile>, 2> m_clientProfiles;
    QStringList m_profileNotes;

    std::thread m_thread;
    std::atomic<bool> m_stop { false };
    std::atomic<bool> m_done { false };
    std::atomic<bool> m_ending { false };
    std::atomic<bool> m_loadStarted { false };
    std::atomic<bool> m_runEnded { false };
};

} // namespace rpcscope
