#pragma once

#include "engine/callsetup.h"
#include "report/matrixreport.h"
#include "scenario/runspec.h"
#include "scenario/scenario.h"
#include "schema/schema.h"
#include "transport/transports.h"

#include <QMap>

#include <QTimer>
#include <QWidget>

#include <functional>
#include <optional>

class QCheckBox;
class QComboBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QTabWidget;

namespace rpcscope {

/// The scenario editor: method, target, request JSON (validated as you type), size knobs, load settings, Run/Stop.
class ScenarioPage : public QWidget {
    Q_OBJECT
public:
    explicit ScenarioPage(QWidget *parent = nullptr);

    void setSchema(const Schema &schema);
    void setMethod(const QString &fullName);
    QString method() const { return m_method; }
    /// The built-in servers' addresses per transport; the target follows the transport while it is one of them.
    void setBuiltinTargets(const QMap<TransportKind, QString> &addresses);
    void setTransport(TransportKind kind);
    void setTarget(const QString &address);
    TransportKind transport() const;
    void setRequestJson(const QByteArray &json);
    void setFills(const QString &fills);
    void setRunning(bool running);

    /// Everything needed to start a run, or std::nullopt with the reason (also shown next to Run).
    struct Prepared {
        Scenario document; ///< the document that runs (what the window does not apply left out): the one stored
        /// Core's typing of it (prepareRun()); a built-in target's address is the window's server for its transport.
        RunSpec spec;
        GrpcCall call; ///< prepared from the schema the window shows
    };
    /// A variation of the scenario for one cell of a matrix: another transport and codec, extra size knobs.
    struct Variation {
        /// Its transport, codec, payload (fills after the scenario's own) and callers (0: the scenario's); a stack's
        /// name, and its own target (address, URL, "builtin"; empty: see prepare()), msgpack-rpc method and path.
        MatrixCell cell;
        QString matrixId; ///< set: the run is named and labelled as a cell of this matrix (labelMatrixCell())
    };
    /// Whether prepare() may start the built-in servers when the run's target is one of them and they are not up.
    enum class BuiltinStart {
        WhenUsed, ///< start them (setBuiltinStarter()): a run, a matrix cell or Send once goes to them
        Never, ///< leave them: the caller points the run elsewhere (an A/B run's sides have their own servers)
    };
    /// With @p variation, the target is its own (a stack's), else the built-in server for its transport (or the
    /// scenario's target when the transport is the scenario's own).
    std::optional<Prepared> prepare(
        QString *error, const Variation *variation = nullptr, BuiltinStart start = BuiltinStart::WhenUsed) const;
    /// Core's problem with the scenario in the editor's words (its labels, not the document's field names).
    QString describeProblem(const ScenarioProblem &problem) const;
    /// Starts the built-in servers on their first use (they are not started while the target is elsewhere) and tells
    /// this page their addresses (setBuiltinTargets()); false with the reason.
    void setBuiltinStarter(std::function<bool(QString *error)> starter) { m_builtinStarter = std::move(starter); }
    /// Re-checks the scenario now (normally done 250 ms after the last edit).
    bool validateNow();

    /// The editor's content as a document (schema sources are the window's business and left empty).
    Scenario scenario() const;
    /// The sample period typed (--profile-period), empty for the default: scenario() has it only when the Load tab
    /// profiles something, and the A/B dialog's profiles take it from here.
    QString profilePeriod() const;
    QString profileCallGraph() const; ///< --profile-call-graph as chosen, "" for the default (as profilePeriod())
    /// The A/B design kept with the document (the A/B dialog's choices); emits edited() when it changes.
    void setAbDesign(const QString &block, int restarts, const QString &connection, const QString &threshold,
        bool untilDecided = false, const QString &maxDuration = {});
    /// Shows @p document (its method must be in the schema set before); emits no edited().
    void setScenario(const Scenario &document);

    /// The tabs under the call: Load, Metadata, Connection, Advanced.
    QTabWidget *settingsTabs() const { return m_tabs; }
    /// Shows one call's report (formatSingleCall()) in the Reply tab and brings the tab forward; @p sending: the call
    /// is under way (the text says so, Send once waits).
    void showReply(const QString &text, bool sending = false);
    QString replyText() const;

Q_SIGNALS:
    /// The user changed something in the scenario (for the document's modified state).
    void edited();

    void runRequested();
    void stopRequested();
    /// Send once: one call, its reply shown in the Reply tab (showReply()).
    void sendOnceRequested();

private:
    void loadExample();
    void updateStreamFields(); ///< the stream settings mean something for streaming methods only
    void transportChanged();
    void securityChanged();
    QStringList checks() const; ///< the Checks field's comma-separated conditions, blanks dropped
    QStringList expectations() const; ///< the Expect field's lines, blanks dropped
    QWidget *fileRow(
        QLineEdit *edit, const QString &browseName, bool save, const QString &caption, const QString &filter);
    /// Names the Call box's fields, fills the transport, codec and params choices, sets up the request editor.
    void setUpCallFields();
    /// Names and fills the settings tabs' fields (metadata, security, TLS, threads, discard, expect) and the reply.
    void setUpSettingsFields();
    /// Names Run, Send once and Stop (Stop disabled, Run the default button).
    void setUpButtons();
    /// Keep for hotspot: for a run that profiles something.
    void enableProfileSettings();
    /// The Call box: method, transport, codec, target, request (with @p example in its header), fill sizes.
    QWidget *makeCallBox(QPushButton *example);
    /// The Load tab: calls, concurrency, duration, rate, warm-up, timeout, connections, stream rows, schedules.
    QWidget *makeLoadTab();
    /// The Connection tab: security, the TLS rows, authority.
    QWidget *makeConnectionTab();
    /// The Advanced tab: threads, interval, raw samples, binary request, checks, expectations, size limits, window.
    QWidget *makeAdvancedTab();
    /// Fills the settings tabs (with Metadata and Reply) and keeps the current tab in the settings.
    void setUpTabs(QWidget *load, QWidget *connection, QWidget *advanced);
    /// The page's layout: the Call box @p what and the tabs in a scroll area, the buttons below it.
    void layOutPage(QWidget *what);
    /// The validation timer and the connections: every edit re-checks 250 ms later and emits edited(); the buttons.
    void connectSignals(QPushButton *example);

    Schema m_schema;
    Scenario m_document; ///< the document last shown (setScenario): what scenario() starts from
    QString m_method;
    bool m_running = false;
    QTimer m_validateTimer;

    QLabel *m_methodLabel;
    QComboBox *m_transport;
    QComboBox *m_codec;
    QLineEdit *m_rpcMethod;
    QComboBox *m_msgpackParams;
    QLabel *m_rpcMethodLabel;
    QLineEdit *m_httpPath; ///< --http-path
    QLabel *m_httpPathLabel;
    QLabel *m_msgpackParamsLabel;
    QComboBox *m_target;
    QMap<TransportKind, QString> m_builtinTargets;
    std::function<bool(QString *error)> m_builtinStarter;
    QPlainTextEdit *m_request;
    QLabel *m_requestStatus;
    QLineEdit *m_fills;
    QSpinBox *m_calls;
    QSpinBox *m_concurrency;
    QLineEdit *m_duration;
    QLineEdit *m_rate;
    QLineEdit *m_warmup;
    class ScheduleEditor *m_rateSchedule;
    class ScheduleEditor *m_callerSchedule;
    QLineEdit *m_timeout;
    QSpinBox *m_connections;
    class MetadataEditor *m_metadata;
    QTabWidget *m_tabs;
    QComboBox *m_security;
    QFormLayout *m_connectionForm = nullptr;
    QFormLayout *m_callForm = nullptr; ///< the Call box: method, transport, codec, target, request
    QFormLayout *m_loadForm = nullptr; ///< the Load tab: its stream rows show for streaming methods only
    QList<QWidget *> m_tlsFields; ///< fields of the TLS rows: enabled in TLS mode, shown for gRPC
    QLineEdit *m_caCert;
    QLineEdit *m_clientCert;
    QLineEdit *m_clientKey;
    QLineEdit *m_serverName;
    QCheckBox *m_skipVerify;
    QLineEdit *m_authority;
    QLabel *m_connectionNote;
    QSpinBox *m_clientThreads;
    QLineEdit *m_interval;
    QLineEdit *m_rawSamples;
    QLineEdit *m_requestBinary;
    QLineEdit *m_checks;
    QPlainTextEdit *m_expect; ///< --expect, one per line
    QLineEdit *m_expectStatus; ///< --expect-status, comma-separated
    QLineEdit *m_maxReceive;
    QLineEdit *m_maxSend;
    QLineEdit *m_http2Window; ///< h2grpc's --http2-window: its row shown for that transport only
    QFormLayout *m_advancedForm = nullptr;
    bool m_loading = false; ///< setScenario() at work: no edited()
    QCheckBox *m_discard;
    QCheckBox *m_profileServer; ///< --profile
    QCheckBox *m_profileClient; ///< --profile-client
    QCheckBox *m_profileKeep; ///< --profile-keep
    QSpinBox *m_profilePid; ///< --profile-pid: 0 = the server rpcscope starts, or its port's listener
    QLineEdit *m_profilePeriod; ///< --profile-period: CPU time between samples; empty = the default
    QComboBox *m_profileCallGraph; ///< --profile-call-graph: its data "" (frame pointers) or "dwarf"
    QLineEdit *m_clientCommand; ///< --client: a client command makes the calls
    QLineEdit *m_clientEnvironment; ///< --client-env: NAME=value words, shell-quoted
    QLineEdit *m_streamCallCount;
    QLineEdit *m_streamInterval;
    QLineEdit *m_streamCallDuration;
    QCheckBox *m_streamPingPong;
    QPushButton *m_run;
    QPushButton *m_sendOnce;
    QPushButton *m_stop;
    QPlainTextEdit *m_reply; ///< the Reply tab: the last Send once
    bool m_sending = false;
};

} // namespace rpcscope
