#pragma once

#include "abdialog.h"
#include "compare/checks.h"
#include "report/matrixreport.h"
#include "scenariopage.h"
#include "session/runsession.h"

#include <QHash>
#include <QObject>

#include <memory>
#include <vector>

namespace rpcscope {

class AbController;
class BuiltinServers;
class MatrixPage;
class OutputFile;
class RunController;
class RunRecorder;
struct RunRecord;
struct RunSnapshot;

/**
 * Starts and stops runs of the scenario on the Scenario page: a single run (after its server command is ready, when
 * the target is one, and with its raw-samples file opened before any load is sent), an A/B run, and the stack
 * comparison's runs (prepareVariation()). It records the live run into the history and judges the scenario's checks
 * when the run ends. Views follow its signals.
 */
class RunLauncher : public QObject {
    Q_OBJECT
public:
    RunLauncher(ScenarioPage *scenario, MatrixPage *matrix, BuiltinServers *builtin, RunRecorder *recorder,
        QObject *parent = nullptr);
    ~RunLauncher() override;

    /// Starts the scenario (what Run does); refusals and failures are told by statusMessage().
    void startRun();
    /// Stops the single run and the A/B run.
    void stopRun();
    /// Send once: one call of the scenario (after starting its server command, which stops again after it), made off
    /// the GUI thread; its report goes to the Scenario page's Reply tab.
    void sendOnce();
    /// True from sendOnce() until its reply is shown.
    bool isSending() const { return m_sending; }
    /// Starts an A/B run of the scenario (what Run > Compare A/B does after its dialog).
    bool startAb(const AbRequest &request, QString *error);
    /// For closing the window: stops what runs and hands it to the history as stopped, with what it measured.
    void stopForClose();
    /// The run of one cell of the stack comparison (not started); refused while a single run is going.
    std::shared_ptr<RunSession> prepareVariation(const ScenarioPage::Variation &variation, QString *error);

    RunController *runController() const { return m_controller; }
    AbController *abController() const { return m_ab; }

Q_SIGNALS:
    /// A run started: @p run is its record (saved as it goes); @p description names the method and target.
    void runLaunched(const std::shared_ptr<rpcscope::RunRecord> &run, const QString &description);
    /// The run's client command failed mid-run (@p error names what it printed); the run was not kept.
    void clientCommandFailed(const QString &error);
    /// A run against @p address, neither the built-in servers nor in process, started.
    void remoteTargetUsed(rpcscope::TransportKind kind, const QString &address);
    /// The live run's newest snapshot (the last one, too, before the run's end is handled).
    void snapshotAvailable(const rpcscope::RunSnapshot &snapshot);
    /// The scenario's checks, judged on the ended run.
    void checksJudged(const std::vector<rpcscope::CheckResult> &results);
    /// "Starting", "Idle", "A/B": what the launcher is doing, for the status bar.
    void stateChanged(const QString &state);
    /// An A/B run started; its verdicts use @p threshold.
    void abStarted(double threshold);
    /// An A/B run ended; @p measured: either side completed calls (its records are in abController()).
    void abFinished(bool measured, const QString &error);
    /// The live run profiles the server (@p server) or rpcscope's own process (@p client): read once it ends.
    void profilesPending(bool server, bool client);
    /// @p run's profiles are read, set in it and queued for the history; @p shown has them for the Run page, with a
    /// side asked for but not had as an empty profile whose notes say why.
    void runProfilesRead(const std::shared_ptr<rpcscope::RunRecord> &run, const rpcscope::RunProfiles &shown);
    void statusMessage(const QString &text, int timeoutMs);
    /// A server command failed to start; shown to the user as @p error.
    void serverCommandFailed(const QString &error);
    /// Send once's reply is shown (or its failure to be sent is).
    void sentOnce();

private:
    /// A Compare stacks cell into the history, one run each, labelled matrix:ID, stack:NAME, payload:P and c:N as
    /// `rpcscope-cli matrix --save` labels them.
    void recordMatrixCell(const MatrixResult &result, const RunRecord &started);
    /// The run of @p prepared, its built-in target the window's server.
    std::shared_ptr<RunSession> sessionFor(const ScenarioPage::Prepared &prepared) const;
    void runStarted();
    void runNotStarted(const RunSession::Started &started);
    void recordProgress(const RunSnapshot &snapshot);
    void runFinished(const RunSnapshot &snapshot);
    void writeRawSamples();
    void abProgressed();
    void profilesRead(quint64 session, const RunProfiles &profiles);
    void abEnded(const QString &error);

    ScenarioPage *m_scenario;
    MatrixPage *m_matrix;
    BuiltinServers *m_builtin;
    RunRecorder *m_recorder;
    RunController *m_controller;
    AbController *m_ab;
    std::shared_ptr<RunRecord> m_run; ///< the live (or last) run started here
    /// Runs whose profiles are being read, by RunController::sessionNumber().
    struct ProfiledRun {
        std::shared_ptr<RunRecord> run;
        ProfileOptions asked;
    };
    QHash<quint64, ProfiledRun> m_profiledRuns;
    std::unique_ptr<OutputFile> m_rawSamplesFile; ///< the running run's --raw-samples file, opened before it started
    std::vector<Check> m_runChecks; ///< the running scenario's checks, judged when it ends
    bool m_sending = false;
};

} // namespace rpcscope
