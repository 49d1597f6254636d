#pragma once

#include "client/clientload.h"
#include "engine/loadengine.h"
#include "profile/profiler.h"
#include "scenario/runspec.h"
#include "scenario/scenario.h"
#include "server/serverlaunch.h"
#include "store/runrecord.h"
#include "transport/transport.h"

#include <QString>
#include <QStringList>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <thread>

namespace rpcscope {

/// A run's CPU profiles as read once it ended (RunSession::setProfilesHook()); a side not profiled, or whose profile
/// could not be read, is unset, and the notes say why.
struct RunProfiles {
    std::optional<Profile> server;
    std::optional<Profile> client;
    QStringList notes;
};

/**
 * One run from its description to its record, for every front end (the CLI's run and call, the GUI's Run): the
 * server started (a server command, or rpcscope's own `serve` child), the schema loaded, the call prepared, the
 * address probed, the transport made, the load engine run (or a client command, RunSpec::client, that makes the calls
 * itself), and the RunRecord the history keeps. Front ends parse,
 * show and print; what happens between prepareRun() and the record happens here, once.
 *
 * The steps that may block (a server getting ready, server reflection, name resolution) run either on the caller's
 * thread (prepare(), then startLoad(): the CLI) or on the session's own thread (startInBackground(): the GUI, whose
 * thread must never wait). Whichever thread starts the servers holds them: a server is told to end when that thread
 * ends (PR_SET_PDEATHSIG), so the session's own thread lives until the run has ended and its servers are stopped.
 * The destructor stops the load, joins that thread and stops the servers.
 */
class RunSession {
public:
    /**
     * A run of @p scenario as prepareRun() typed it (@p spec). With @p call, the call is the front end's (the GUI
     * prepares it from the schema it shows) and no schema is loaded; else it comes from the scenario's schema.
     * @p serveProgram runs rpcscope's own `serve` for a built-in target (usually the CLI's own executable).
     */
    RunSession(
        Scenario scenario, RunSpec spec, std::optional<GrpcCall> call = std::nullopt, QString serveProgram = QString());
    ~RunSession();
    RunSession(const RunSession &) = delete;
    RunSession &operator=(const RunSession &) = delete;

    /// The built-in target is a server that already runs (the GUI window's): @p address for this run's transport,
    /// @p pid sampled for its CPU and RSS, @p command what the record says started it. Call before prepare().
    void useRunningBuiltin(const QString &address, qint64 pid, const QString &command);
    /// The calls keep their reply headers and trailers (a call shown, not a load run). Call before prepare().
    void setCaptureMetadata(bool capture) { m_captureMetadata = capture; }
    /// Told "Starting COMMAND" before a server command starts (on the preparing thread).
    void setStartingHook(std::function<void(const QString &command)> hook) { m_startingHook = std::move(hook); }
    /**
     * Told the run's profiles once it ended, when its spec profiles anything (RunSpec::profile): on the session's
     * own thread (startInBackground()), which reads them before it stops the servers; reading takes seconds (perf
     * script resolves the symbols), so the front end's thread never does. Not called when the session is destroyed
     * before the run ended. Call before startInBackground().
     */
    void setProfilesHook(std::function<void(const RunProfiles &)> hook) { m_profilesHook = std::move(hook); }
    /// Called after prepare() succeeded and right before the engine starts, on the thread that starts it (the CLI
    /// pins its process there: the servers have started, the engine's threads have not). False with its reason
    /// stops the run before any load is sent.
    void setBeforeLoadHook(std::function<bool(QString *error)> hook) { m_beforeLoadHook = std::move(hook); }

    /**
     * Starts the server, loads the schema, prepares the call, probes the address and makes the transport, on this
     * thread. False with @p problem: `runtime` set when a server did not start or answer (nothing given is wrong),
     * @p details with what the schema loader said at length.
     */
    bool prepare(ScenarioProblem *problem, QString *details = nullptr);
    /// Starts the load (after prepare()); the record's start time is now. False with the engine's reason.
    bool startLoad(QString *error);

    /// What startInBackground() reports, on the session's thread: empty when the load started.
    struct Started {
        std::optional<ScenarioProblem> problem;
        QString details;
        QString serverError; ///< set when the server command did not start: what happened (problem says it too)
    };
    /**
     * prepare() and startLoad() on the session's own thread, which then holds the servers until the run ends (or
     * stops them at once when the run did not start); @p started follows on that thread. stop() before the load
     * starts ends the preparation at its next step.
     */
    void startInBackground(std::function<void(const Started &)> started);
    /// Stops the load (what was measured is kept) or the preparation.
    void stop();
    /// Stops the servers now (the run has ended; the CLI's call command, once its call is made).
    void stopServers();
    /// Nothing of the session is left to wait for: its own thread (if it was started) has ended, its servers stopped.
    bool isDone() const { return !m_thread.joinable() || m_done.load(); }

    const Scenario &scenario() const { return m_scenario; }
    /// The spec, with the target's address and the server's pid filled in by prepare().
    const RunSpec &spec() const { return m_spec; }
    /// The call prepared (set after prepare()).
    const std::optional<GrpcCall> &call() const { return m_call; }
    /// The transport made by prepare(), until startLoad() hands it to the engine; for a caller that sends itself.
    std::unique_ptr<Transport> takeTransport() { return std::move(m_transport); }
    /// What makes the calls: the load engine, or the client command (RunSpec::client). The same from construction on.
    LoadRun &load() { return m_client ? static_cast<LoadRun &>(*m_client) : m_engine; }
    const LoadRun &load() const { return m_client ? static_cast<const LoadRun &>(*m_client) : m_engine; }
    /// Why the server command did not start (prepare() failed there), else empty.
    const QString &serverError() const { return m_serverError; }
    /// Notes for the user from prepare() (the no-RPC baseline timing another service's method).
    const QStringList &notes() const { return m_notes; }

    /// The run as the history keeps it when it starts: the document that ran, where it ran, the server, the split.
    /// Secrets are redacted. Valid after prepare(); startLoad() sets its start time.
    const RunRecord &record() const { return m_record; }
    /// Ends @p record (record()'s copy, with the id the history gave it): the last figures, the status, the end time,
    /// and the raw samples when the plan kept them.
    void completeRecord(RunRecord *record, const RunSnapshot &last) const;
    /// What the profilers say went wrong (a missing perf, a server not found): for the front end to show.
    QStringList profileNotes() const;

private:
    bool stopping() const { return m_stop.load(); }
    void buildRecord();
    bool startBuiltinChild(ScenarioProblem *problem);
    void startProfiling();
    void finishProfiles() const;

    Scenario m_scenario;
    RunSpec m_spec;
    std::optional<GrpcCall> m_call;
    QString m_serveProgram;
    QString m_runningBuiltinCommand; ///< set: the built-in target is already up (useRunningBuiltin())
    qint64 m_runningBuiltinPid = 0;
    bool m_captureMetadata = false;
    std::function<void(const QString &)> m_startingHook;
    std::function<bool(QString *)> m_beforeLoadHook;
    std::function<void(const RunProfiles &)> m_profilesHook;
    ServerLaunch m_server; ///< the server command, or the built-in `serve` child
    std::unique_ptr<Transport> m_transport;
    QStringList m_notes;
    QString m_serverError; ///< the server command did not start: why
    RunRecord m_record;
    LoadEngine m_engine;
    std::unique_ptr<ClientLoad> m_client; ///< set when a client command makes the calls
    bool m_prepared = false;
    std::unique_ptr<ProfileRecorder> m_profiler; ///< set when the spec profiles anything
    mutable std::optional<Profile> m_serverProfile; ///< read from m_profiler once the run ended
    mutable std::optional<Profile> m_clientProfile;
    mutable bool m_profilesRead = false;
    QStringList m_profileNotes;

    std::thread m_thread;
    std::atomic<bool> m_stop { false };
    std::atomic<bool> m_done { false };
    std::atomic<bool> m_ending { false }; ///< the destructor asks the session's thread to end
};

} // namespace rpcscope
