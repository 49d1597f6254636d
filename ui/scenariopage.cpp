#include "scenariopage.h"

#include "server/servercommand.h"

#include "jsonhighlighter.h"
#include "metadataeditor.h"
#include "scheduleeditor.h"

#include "codec/messagejson.h"
#include "util/cpuset.h"
#include "util/inputfile.h"
#include "util/units.h"

#include <google/protobuf/descriptor.h>

#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScopedValueRollback>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QToolButton>
#include <QUrl>
#include <QVBoxLayout>

#include <algorithm>
#include <limits>
#include <thread>
#include <tuple>

namespace rpcscope {

namespace {

QSpinBox *spin(const QString &name, int min, int max, int value, const QString &tip)
{
    auto *box = new QSpinBox;
    box->setObjectName(name);
    box->setRange(min, max);
    box->setValue(value);
    box->setGroupSeparatorShown(true);
    box->setToolTip(tip);
    return box;
}

QLineEdit *line(const QString &name, const QString &text, const QString &placeholder, const QString &tip)
{
    auto *edit = new QLineEdit(text);
    edit->setObjectName(name);
    edit->setPlaceholderText(placeholder);
    edit->setToolTip(tip);
    return edit;
}
} // namespace

ScenarioPage::ScenarioPage(QWidget *parent)
    : QWidget(parent)
    , m_methodLabel(new QLabel(tr("(pick a method in the schema)")))
    , m_transport(new QComboBox)
    , m_codec(new QComboBox)
    , m_rpcMethod(line(QStringLiteral("rpcMethodEdit"), {}, tr("default: the proto method's name"),
          tr("msgpack-rpc: the method name sent on the wire, e.g. sum_nums.")))
    , m_msgpackParams(new QComboBox)
    , m_rpcMethodLabel(new QLabel(tr("RPC method:")))
    , m_httpPath(line(QStringLiteral("httpPathEdit"), {}, tr("the URL's own, else /package.Service/Method"),
          tr("HTTP: the URL path to POST to when the target has none, as a server command's address has not "
             "(--http-path), e.g. /rpc.")))
    , m_httpPathLabel(new QLabel(tr("URL path:")))
    , m_msgpackParamsLabel(new QLabel(tr("Params:")))
    , m_target(new QComboBox)
    , m_request(new QPlainTextEdit)
    , m_requestStatus(new QLabel)
    , m_fills(line(QStringLiteral("fillEdit"), {}, tr("e.g. payload=1KiB, nums=1000"),
          tr("Size knobs: a bytes/string field to N bytes, a repeated field to N elements; comma-separated.")))
    , m_calls(spin(QStringLiteral("callsEdit"), 0, 2'000'000'000, 20'000,
          tr("Timed calls to make (0 = bounded by the duration only).")))
    , m_concurrency(spin(QStringLiteral("concurrencyEdit"), 0, 100'000, 20,
          tr("Concurrent callers; each keeps one call in flight. With a concurrency schedule: the most callers "
             "(automatic: the schedule's highest point).")))
    , m_duration(line(QStringLiteral("durationEdit"), {}, tr("e.g. 30s (empty = by count)"),
          tr("Length of the whole run, warm-up included; with a call count too, whichever comes first ends it. "
             "Calls still in flight then are cancelled after a short grace and counted as cancelled.")))
    , m_rate(line(QStringLiteral("rateEdit"), {}, tr("empty = closed loop"),
          tr("Open loop: calls per second sent on schedule whatever the replies do; latency counts from each "
             "call's intended send time. Concurrency then caps the calls in flight.")))
    , m_warmup(line(QStringLiteral("warmupEdit"), QStringLiteral("0"), tr("calls, or a duration like 5s"),
          tr("Calls (a number) or time (a duration) spent before the timed phase, never counted; it counts against "
             "the duration.")))
    , m_rateSchedule(new ScheduleEditor(tr("Rate schedule (open loop)"), tr("calls/s"), QStringLiteral("rate")))
    , m_callerSchedule(
          new ScheduleEditor(tr("Concurrency schedule (closed loop)"), tr("callers"), QStringLiteral("concurrency")))
    , m_timeout(line(QStringLiteral("timeoutEdit"), QStringLiteral("20s"), tr("0 = no deadline"),
          tr("Deadline of each call; a call past it counts as DEADLINE_EXCEEDED.")))
    , m_connections(spin(QStringLiteral("connectionsEdit"), 0, 100'000, 1,
          tr("Connections; callers are spread evenly over them. gRPC and msgpack-rpc carry many calls "
             "on one; HTTP/1.1 one at a time (0 = one per caller).")))
    , m_metadata(new MetadataEditor)
    , m_tabs(new QTabWidget)
    , m_security(new QComboBox)
    , m_caCert(line(QStringLiteral("caCertEdit"), {}, tr("empty = the system's CAs"),
          tr("Trust the CA certificates in this PEM file (--cacert).")))
    , m_clientCert(line(QStringLiteral("clientCertEdit"), {}, tr("none"),
          tr("Client certificate (PEM) for mutual TLS, with its key (--cert).")))
    , m_clientKey(line(
          QStringLiteral("clientKeyEdit"), {}, tr("none"), tr("Private key (PEM) of the client certificate (--key).")))
    , m_serverName(line(QStringLiteral("serverNameEdit"), {}, tr("default: the target's host"),
          tr("Check the server's certificate against this name instead of the target's host (--cname).")))
    , m_skipVerify(new QCheckBox(tr("Skip certificate verification")))
    , m_authority(line(QStringLiteral("authorityEdit"), {}, tr("default: the target"),
          tr("Value of the :authority header, e.g. for a proxy routing by host (--authority).")))
    , m_connectionNote(new QLabel)
    , m_clientThreads(spin(QStringLiteral("clientThreadsEdit"), 0, 64, 0,
          tr("Client threads polling gRPC's completion queues (--cpus); automatic is one, plus one "
             "per 64 callers.")))
    , m_interval(line(QStringLiteral("intervalEdit"), {}, tr("default 1s"),
          tr("Resolution of the time series: calls, errors and percentiles per interval (--interval).")))
    , m_rawSamples(line(QStringLiteral("rawSamplesEdit"), {}, tr("none"),
          tr("Write every timed call (send time, latency, status) to this CSV file when the run ends "
             "(--raw-samples).")))
    , m_requestBinary(line(QStringLiteral("requestBinaryEdit"), {}, tr("none: the JSON request"),
          tr("Send the request as a serialized protobuf message read from this file, instead of the "
             "JSON above (-b).")))
    , m_checks(line(QStringLiteral("checksEdit"), {}, tr("none, e.g. p99<20ms, error_rate<0.1%"),
          tr("Bounds the run must meet, comma-separated (--check): any percentile, mean, min, max, rps, "
             "error_rate, errors; judged when the run ends.")))
    , m_expect(new QPlainTextEdit)
    , m_expectStatus(line(QStringLiteral("expectStatusEdit"), {}, tr("OK"),
          tr("The status calls must end with, when it is not OK, comma-separated (--expect-status): NOT_FOUND, "
             "PERMISSION_DENIED, OK. To benchmark an error path: those calls are timed as the successful ones, any "
             "other status (OK too, unless listed) counts as failed.")))
    , m_maxReceive(line(QStringLiteral("maxReceiveEdit"), {}, tr("default (gRPC: 4 MiB)"),
          tr("Largest reply accepted, e.g. 64MiB; larger replies fail with RESOURCE_EXHAUSTED.")))
    , m_maxSend(
          line(QStringLiteral("maxSendEdit"), {}, tr("default (unlimited)"), tr("Largest request sent, e.g. 64MiB.")))
    , m_http2Window(line(QStringLiteral("http2WindowEdit"), {}, tr("default: 16 MiB a stream"),
          tr("The flow-control window rpcscope's own HTTP/2 client offers the server per stream (the connection's is "
             "4 times it), e.g. 64KiB to see how a small window slows big replies (--http2-window).")))
    , m_discard(new QCheckBox(tr("Discard responses")))
    , m_profileServer(new QCheckBox(tr("Server")))
    , m_profileClient(new QCheckBox(tr("Client (rpcscope)")))
    , m_profileKeep(new QCheckBox(tr("Keep for hotspot")))
    , m_profilePid(new QSpinBox)
    , m_profilePeriod(line(QStringLiteral("profilePeriodEdit"), {}, tr("10ms of CPU"),
          tr("CPU time between samples when profiling, here or in an A/B run (--profile-period, 100us .. 100ms). "
             "Shorter gives more samples "
             "and finer figures per function; on some virtual machines it also lowers the run's latency (1ms: 15% "
             "lower p50 at c=1 here, see docs/profiling.md), so the default is 10ms.")))
    , m_profileCallGraph(new QComboBox)
    , m_clientCommand(line(QStringLiteral("clientCommandEdit"), {}, tr("rpcscope's own client"),
          tr("A client command that makes the calls instead of rpcscope, when the code under test is the client (a "
             "protobuf runtime, a gRPC library): {target} is the server's HOST:PORT. It reports each call as a JSON "
             "line (docs/client-protocol.md; examples/clients has Python, Go and shell clients). Closed loop: Calls "
             "or Duration, Concurrency and a warm-up by calls. Never saved in a scenario file (--client).")))
    , m_clientEnvironment(line(QStringLiteral("clientEnvEdit"), {}, tr("NAME=value NAME2='two words'"),
          tr("Environment variables for the client command, as a shell would split them (--client-env): e.g. "
             "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python.")))
    , m_streamCallCount(line(QStringLiteral("streamCallCountEdit"), {}, tr("default: each request once"),
          tr("Streaming methods: messages each client or bidi stream sends, cycling through the "
             "requests; on a server stream, replies after which the client ends the call "
             "(--stream-call-count).")))
    , m_streamInterval(line(QStringLiteral("streamIntervalEdit"), {}, tr("none, e.g. 10ms"),
          tr("Streaming methods: wait between the client's messages on a stream (--stream-interval).")))
    , m_streamCallDuration(line(QStringLiteral("streamCallDurationEdit"), {}, tr("no limit, e.g. 5s"),
          tr("Streaming methods: the client ends each call after this long; a client or bidi "
             "stream closes its side, a server stream is cancelled (--stream-call-duration).")))
    , m_streamPingPong(new QCheckBox(tr("Bidi: wait for each reply (ping-pong)")))
    , m_run(new QPushButton(tr("Run")))
    , m_sendOnce(new QPushButton(tr("Send once")))
    , m_stop(new QPushButton(tr("Stop")))
    , m_reply(new QPlainTextEdit)
{
    setUpCallFields();
    setUpSettingsFields();
    setUpButtons();

    auto *example = new QPushButton(tr("Example request"));
    example->setObjectName(QStringLiteral("exampleButton"));
    example->setToolTip(tr("Replace the request with an example of the method's input message."));

    QWidget *what = makeCallBox(example);
    QWidget *load = makeLoadTab();
    QWidget *connection = makeConnectionTab();
    QWidget *advanced = makeAdvancedTab();
    setUpTabs(load, connection, advanced);
    layOutPage(what);
    connectSignals(example);
    transportChanged();
    securityChanged();
    validateNow();
}

void ScenarioPage::setUpCallFields()
{
    m_methodLabel->setObjectName(QStringLiteral("methodLabel"));
    m_methodLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_transport->setObjectName(QStringLiteral("transportCombo"));
    m_transport->setToolTip(tr("How calls travel: gRPC (gRPC C++'s client, or rpcscope's own on bare HTTP/2: far less "
                               "client CPU per call, streams and TLS too), HTTP/1.1 POST, msgpack-rpc over TCP, "
                               "or no RPC at all (only encode/decode and the method, in process: the codec's share)."));
    for (const TransportInfo &row : transportTable()) // the table's order: gRPC first, no RPC last
        m_transport->addItem(QString::fromUtf16(row.choice), QVariant::fromValue(static_cast<int>(row.kind)));
    // Never narrower than their longest item: a transport's or codec's name is never cut.
    m_transport->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_codec->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_codec->setObjectName(QStringLiteral("codecCombo"));
    m_codec->setToolTip(tr("How messages become bytes: protobuf, the proto3 JSON mapping, or msgpack (a map by field "
                           "name). gRPC carries protobuf, msgpack-rpc msgpack; HTTP and no-RPC take any."));
    for (Codec c : { Codec::Protobuf, Codec::Json, Codec::Msgpack })
        m_codec->addItem(codecName(c), QVariant::fromValue(static_cast<int>(c)));
    m_msgpackParams->setObjectName(QStringLiteral("msgpackParamsCombo"));
    m_msgpackParams->addItem(tr("positional (fields in order)"));
    m_msgpackParams->addItem(tr("one map by field name"));
    m_msgpackParams->setToolTip(tr("msgpack-rpc: send the request's fields as positional params, or as one map."));
    m_target->setObjectName(QStringLiteral("targetEdit"));
    m_target->setEditable(true);
    m_target->setToolTip(tr("Where calls go: HOST:PORT for gRPC and msgpack-rpc, a URL for HTTP; the built-in "
                            "servers are listed first (empty or \"builtin\": the built-in server, started when a run "
                            "first uses it)."));
    m_target->lineEdit()->setPlaceholderText(tr("built-in server (starts when used)"));
    m_request->setObjectName(QStringLiteral("requestEditor"));
    m_request->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_request->setToolTip(tr("The request in the proto3 JSON mapping; checked as you type."));
    new JsonHighlighter(m_request->document()); // owned by the document
    m_request->setTabStopDistance(2 * m_request->fontMetrics().horizontalAdvance(QLatin1Char(' ')));
    // Tab moves on to the next field (the Load tab, Run), as everywhere else in the window: a keyboard user is never
    // trapped in the editor. JSON needs no tab characters; indent with spaces.
    m_request->setTabChangesFocus(true);
    m_requestStatus->setObjectName(QStringLiteral("requestStatus"));
    m_requestStatus->setWordWrap(true);
}

void ScenarioPage::setUpSettingsFields()
{
    m_metadata->setObjectName(QStringLiteral("metadataEditor"));
    m_security->setObjectName(QStringLiteral("securityCombo"));
    m_security->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_security->addItem(tr("Automatic (TLS unless loopback)"), QStringLiteral("auto"));
    m_security->addItem(tr("Plaintext"), QStringLiteral("plaintext"));
    m_security->addItem(tr("TLS"), QStringLiteral("tls"));
    m_security->setToolTip(tr("How the gRPC connection is secured; Automatic is the CLI's default (--insecure forces "
                              "plaintext)."));
    m_skipVerify->setObjectName(QStringLiteral("skipVerifyCheck"));
    m_skipVerify->setToolTip(tr("Accept any server certificate: encrypted but not verified (--skipTLS)."));
    m_clientThreads->setSpecialValueText(tr("automatic"));
    m_connectionNote->setObjectName(QStringLiteral("connectionNote"));
    m_connectionNote->setWordWrap(true);
    m_connectionNote->setText(tr("TLS settings apply to gRPC; the built-in servers serve plaintext."));
    m_discard->setObjectName(QStringLiteral("discardResponse"));
    m_discard->setToolTip(
        tr("Count reply bytes and status without decoding replies (saves client CPU on big replies)."));
    m_profileServer->setObjectName(QStringLiteral("profileServerCheck"));
    m_profileServer->setToolTip(
        tr("Sample the server's CPU during the timed phase (perf; rpcscope's sampler for a Python server command) and "
           "show where it went per call in a Server profile tab (--profile)."));
    m_profileKeep->setObjectName(QStringLiteral("profileKeepCheck"));
    m_profileKeep->setToolTip(tr("Keep perf's recording of the run (in ~/.local/share/rpcscope/perf) so that its "
                                 "profile can be opened in hotspot (--profile-keep)."));
    m_profileKeep->setEnabled(false);
    m_profileCallGraph->setObjectName(QStringLiteral("profileCallGraphCombo"));
    m_profileCallGraph->addItem(tr("frame pointers"), QString());
    m_profileCallGraph->addItem(tr("DWARF (whole stacks)"), QStringLiteral("dwarf"));
    m_profileCallGraph->setToolTip(
        tr("How perf finds a sample's callers (--profile-call-graph). Frame pointers are cheap, but code built "
           "without them (most distributions' libraries, Rust, C++ built with -O2 alone) loses its callers; DWARF "
           "unwinds a copy of the stack after the run: whole stacks for any native code, 8 KiB a sample and a "
           "slower read."));
    m_profilePid->setObjectName(QStringLiteral("profilePidEdit"));
    m_profilePid->setRange(0, std::numeric_limits<int>::max());
    m_profilePid->setSpecialValueText(tr("the server's own"));
    m_profilePid->setToolTip(
        tr("Profile this local process (and its children) as the server, by process id, when it is "
           "not the one rpcscope starts or the one listening on the target's port (a proxy's, a "
           "container's); implies Server (--profile-pid). Never saved in a scenario file."));
    m_profileClient->setObjectName(QStringLiteral("profileClientCheck"));
    m_profileClient->setToolTip(tr("Sample rpcscope's own CPU during the timed phase: encoding, decoding, the "
                                   "transport (--profile-client)."));
    m_expect->setObjectName(QStringLiteral("expectEdit"));
    m_expect->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_expect->setPlaceholderText(tr(R"(none; one per line, e.g. result>0, items.length>=10, {"status":"OK"})"));
    m_expect->setToolTip(
        tr("What replies must hold, one per line (--expect): FIELD OP VALUE with OP one of = != < <= > "
           ">= (items[0].name=\"a\", items.length>=10), or a JSON object the reply must contain. Checked "
           "on the first 10 replies, then one in 100; a reply that fails counts as UNEXPECTED_REPLY "
           "and the first few are kept. Send once checks its reply too."));
    m_expect->setTabChangesFocus(true);
    m_expect->setFixedHeight(m_expect->fontMetrics().lineSpacing() * 3 + 12);
    m_reply->setObjectName(QStringLiteral("replyView"));
    m_reply->setReadOnly(true);
    m_reply->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_reply->setPlaceholderText(tr("Send once (Ctrl+Enter) makes one call and shows its reply here."));
}

QString ScenarioPage::profilePeriod() const
{
    return m_profilePeriod->text().trimmed();
}

QString ScenarioPage::profileCallGraph() const
{
    return m_profileCallGraph->currentData().toString();
}

void ScenarioPage::enableProfileSettings()
{
    const bool profiling = m_profileServer->isChecked() || m_profileClient->isChecked() || m_profilePid->value() > 0;
    m_profileKeep->setEnabled(profiling);
}

void ScenarioPage::setUpButtons()
{
    m_run->setObjectName(QStringLiteral("runButton"));
    m_run->setToolTip(tr("Start the benchmark (Ctrl+R)."));
    m_sendOnce->setObjectName(QStringLiteral("sendOnceButton"));
    m_sendOnce->setToolTip(tr("Make one call and show its reply, status, headers and trailers (Ctrl+Enter)."));
    new JsonHighlighter(m_reply->document()); // owned by the document
    m_stop->setObjectName(QStringLiteral("stopButton"));
    m_stop->setToolTip(tr("Stop the run and keep what was measured (Esc)."));
    m_stop->setEnabled(false);
    m_run->setDefault(true);
}

QWidget *ScenarioPage::makeCallBox(QPushButton *example)
{
    auto *what = new QGroupBox(tr("Call"));
    auto *whatForm = new QFormLayout(what);
    m_callForm = whatForm;
    whatForm->addRow(tr("Method:"), m_methodLabel);
    // A row each: side by side they squeezed the label ("Transpor") and the transport's name ("gRPC, bare H").
    whatForm->addRow(tr("Transport:"), m_transport);
    whatForm->addRow(tr("Codec:"), m_codec);
    whatForm->addRow(tr("Target:"), m_target);
    whatForm->addRow(m_rpcMethodLabel, m_rpcMethod);
    whatForm->addRow(m_httpPathLabel, m_httpPath);
    whatForm->addRow(m_msgpackParamsLabel, m_msgpackParams);
    auto *requestHeader = new QHBoxLayout;
    requestHeader->addWidget(new QLabel(tr("Request (JSON):")));
    requestHeader->addStretch();
    requestHeader->addWidget(example);
    whatForm->addRow(requestHeader);
    whatForm->addRow(m_request);
    whatForm->addRow(m_requestStatus);
    whatForm->addRow(tr("Fill sizes:"), m_fills);
    return what;
}

QWidget *ScenarioPage::makeLoadTab()
{
    auto *load = new QWidget;
    auto *loadForm = new QFormLayout(load);
    m_loadForm = loadForm;
    loadForm->addRow(tr("Calls (-n):"), m_calls);
    m_concurrency->setSpecialValueText(tr("automatic")); // 0: with a concurrency schedule, its highest point
    loadForm->addRow(tr("Concurrency (-c):"), m_concurrency);
    loadForm->addRow(tr("Duration (-z):"), m_duration);
    loadForm->addRow(tr("Rate (--rps):"), m_rate);
    loadForm->addRow(tr("Warm-up:"), m_warmup);
    loadForm->addRow(tr("Timeout:"), m_timeout);
    m_connections->setSpecialValueText(tr("one per caller")); // 0: said in words, not a bare "0"
    loadForm->addRow(tr("Connections:"), m_connections);
    loadForm->addRow(m_discard);
    auto *profile = new QHBoxLayout;
    profile->addWidget(m_profileServer);
    profile->addWidget(m_profileClient);
    profile->addWidget(m_profileKeep);
    profile->addStretch();
    loadForm->addRow(tr("CPU profile:"), profile);
    loadForm->addRow(tr("Server PID:"), m_profilePid);
    auto *sampling = new QHBoxLayout;
    sampling->addWidget(m_profilePeriod, 1);
    sampling->addWidget(new QLabel(tr("Callers by:")));
    sampling->addWidget(m_profileCallGraph);
    loadForm->addRow(tr("Sample every:"), sampling);
    loadForm->addRow(tr("Client command:"), m_clientCommand);
    loadForm->addRow(tr("Client environment:"), m_clientEnvironment);
    m_clientEnvironment->setEnabled(false);
    loadForm->addRow(tr("Stream messages:"), m_streamCallCount);
    loadForm->addRow(tr("Stream interval:"), m_streamInterval);
    loadForm->addRow(tr("Stream call duration:"), m_streamCallDuration);
    m_streamPingPong->setObjectName(QStringLiteral("streamPingPong"));
    m_streamPingPong->setToolTip(tr("Bidi streams: send each message once the reply to the previous one is in, so each "
                                    "message's latency is one round trip with nothing queued (--stream-ping-pong)."));
    loadForm->addRow(m_streamPingPong);
    loadForm->addRow(m_rateSchedule);
    loadForm->addRow(m_callerSchedule);
    m_rateSchedule->setToolTip(tr("Open loop with a changing rate (ghz's --load-schedule); replaces Rate."));
    m_callerSchedule->setToolTip(tr("Closed loop with a changing number of callers (ghz's --concurrency-schedule), "
                                    "at most Concurrency."));
    return load;
}

QWidget *ScenarioPage::makeConnectionTab()
{
    // Connection: TLS in ghz's terms. The TLS fields only mean something when TLS is chosen.
    // One form for all rows, so every field starts at the same x.
    auto *connection = new QWidget;
    m_connectionForm = new QFormLayout(connection);
    m_connectionForm->addRow(tr("Security:"), m_security);
    const QString pem = tr("PEM files (*.pem *.crt *.cer *.key);;All files (*)");
    m_tlsFields = { fileRow(m_caCert, QStringLiteral("caCertBrowse"), false, tr("CA certificates"), pem),
        fileRow(m_clientCert, QStringLiteral("clientCertBrowse"), false, tr("Client certificate"), pem),
        fileRow(m_clientKey, QStringLiteral("clientKeyBrowse"), false, tr("Client key"), pem), m_serverName,
        m_skipVerify };
    m_connectionForm->addRow(tr("CA file:"), m_tlsFields[0]);
    m_connectionForm->addRow(tr("Client cert:"), m_tlsFields[1]);
    m_connectionForm->addRow(tr("Client key:"), m_tlsFields[2]);
    m_connectionForm->addRow(tr("Server name:"), m_tlsFields[3]);
    m_connectionForm->addRow(QString(), m_skipVerify);
    m_connectionForm->addRow(tr("Authority:"), m_authority);
    m_connectionForm->addRow(m_connectionNote);
    return connection;
}

QWidget *ScenarioPage::makeAdvancedTab()
{
    auto *advanced = new QWidget;
    auto *advancedForm = new QFormLayout(advanced);
    advancedForm->addRow(tr("Client threads:"), m_clientThreads);
    advancedForm->addRow(tr("Interval:"), m_interval);
    advancedForm->addRow(tr("Raw samples:"),
        fileRow(m_rawSamples, QStringLiteral("rawSamplesBrowse"), true, tr("Raw samples CSV"),
            tr("CSV (*.csv);;All files (*)")));
    advancedForm->addRow(tr("Binary request:"),
        fileRow(m_requestBinary, QStringLiteral("requestBinaryBrowse"), false, tr("Serialized request"),
            tr("All files (*)")));
    advancedForm->addRow(tr("Checks:"), m_checks);
    advancedForm->addRow(tr("Expect:"), m_expect);
    advancedForm->addRow(tr("Expect status:"), m_expectStatus);
    advancedForm->addRow(tr("Max receive:"), m_maxReceive);
    advancedForm->addRow(tr("Max send:"), m_maxSend);
    advancedForm->addRow(tr("HTTP/2 window:"), m_http2Window);
    m_advancedForm = advancedForm;
    return advanced;
}

void ScenarioPage::setUpTabs(QWidget *load, QWidget *connection, QWidget *advanced)
{
    m_tabs->setObjectName(QStringLiteral("scenarioTabs"));
    m_tabs->setDocumentMode(true);
    // Every tab's name whole ("Advance" with scroll arrows was not): the editor is as wide as its tabs.
    m_tabs->setUsesScrollButtons(false);
    m_tabs->setElideMode(Qt::ElideNone);
    m_tabs->addTab(load, tr("Load"));
    auto *metadataPage = new QWidget; // the margins the form tabs have
    (new QVBoxLayout(metadataPage))->addWidget(m_metadata);
    m_tabs->addTab(metadataPage, tr("Metadata"));
    m_tabs->addTab(connection, tr("Connection"));
    m_tabs->addTab(advanced, tr("Advanced"));
    auto *replyPage = new QWidget;
    (new QVBoxLayout(replyPage))->addWidget(m_reply);
    m_tabs->addTab(replyPage, tr("Reply"));
    m_tabs->setTabToolTip(0, tr("How many calls, how fast, for how long."));
    m_tabs->setTabToolTip(1, tr("Key/value pairs sent with every call (gRPC metadata, HTTP headers)."));
    m_tabs->setTabToolTip(2, tr("TLS (CA, client certificate, server name) and the :authority header."));
    m_tabs->setTabToolTip(3, tr("Client threads, time-series interval, raw samples export, message size limits."));
    m_tabs->setTabToolTip(4, tr("The last Send once: the reply as JSON, status and error, headers and trailers."));
    // The tab a user works in (often Connection for a TLS server) is where the next session starts.
    const int savedTab = QSettings().value(QStringLiteral("scenario/tab")).toInt();
    m_tabs->setCurrentIndex(std::clamp(savedTab, 0, m_tabs->count() - 1));
    connect(m_tabs, &QTabWidget::currentChanged, this,
        [](int index) { QSettings().setValue(QStringLiteral("scenario/tab"), index); });
}

void ScenarioPage::layOutPage(QWidget *what)
{
    auto *buttons = new QHBoxLayout;
    buttons->addWidget(m_run, 2);
    buttons->addWidget(m_sendOnce, 1);
    buttons->addWidget(m_stop, 2);

    // The call and its settings scroll on a short screen; Run, Send once and Stop stay in sight below them.
    auto *editor = new QWidget;
    auto *editorLayout = new QVBoxLayout(editor);
    editorLayout->setContentsMargins(0, 0, 0, 0);
    editorLayout->addWidget(what, 1);
    editorLayout->addWidget(m_tabs);
    auto *scroll = new QScrollArea;
    scroll->setObjectName(QStringLiteral("scenarioScroll"));
    scroll->setWidget(editor);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setMinimumWidth(editor->minimumSizeHint().width() + scroll->verticalScrollBar()->sizeHint().width());
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(scroll, 1);
    layout->addLayout(buttons);
}

void ScenarioPage::connectSignals(QPushButton *example)
{
    m_validateTimer.setSingleShot(true);
    m_validateTimer.setInterval(250);
    connect(&m_validateTimer, &QTimer::timeout, this, &ScenarioPage::validateNow);
    auto later = [this] {
        m_validateTimer.start();
        if (!m_loading)
            Q_EMIT edited();
    };
    connect(m_request, &QPlainTextEdit::textChanged, this, later);
    connect(m_fills, &QLineEdit::textChanged, this, later);
    connect(m_duration, &QLineEdit::textChanged, this, later);
    connect(m_timeout, &QLineEdit::textChanged, this, later);
    connect(m_rate, &QLineEdit::textChanged, this, later);
    connect(m_warmup, &QLineEdit::textChanged, this, later);
    connect(m_rateSchedule, &ScheduleEditor::edited, this, later);
    connect(m_callerSchedule, &ScheduleEditor::edited, this, later);
    connect(m_concurrency, &QSpinBox::valueChanged, this, later);
    connect(m_target, &QComboBox::editTextChanged, this, later);
    connect(m_transport, &QComboBox::currentIndexChanged, this, &ScenarioPage::transportChanged);
    connect(m_codec, &QComboBox::currentIndexChanged, this, later);
    connect(m_rpcMethod, &QLineEdit::textChanged, this, later);
    connect(m_httpPath, &QLineEdit::textChanged, this, later);
    connect(m_metadata, &MetadataEditor::edited, this, later);
    connect(m_metadata, &MetadataEditor::edited, this, [this] {
        const int rows = static_cast<int>(m_metadata->pairs().size());
        m_tabs->setTabText(1, rows > 0 ? tr("Metadata (%1)").arg(rows) : tr("Metadata"));
    });
    connect(m_security, &QComboBox::currentIndexChanged, this, &ScenarioPage::securityChanged);
    for (QLineEdit *edit : { m_caCert, m_clientCert, m_clientKey, m_serverName, m_authority, m_interval, m_rawSamples,
             m_requestBinary, m_checks, m_expectStatus })
        connect(edit, &QLineEdit::textChanged, this, later);
    connect(m_expect, &QPlainTextEdit::textChanged, this, later);
    connect(m_skipVerify, &QCheckBox::toggled, this, later);
    connect(m_clientThreads, &QSpinBox::valueChanged, this, later);
    connect(m_maxReceive, &QLineEdit::textChanged, this, later);
    connect(m_maxSend, &QLineEdit::textChanged, this, later);
    connect(m_http2Window, &QLineEdit::textChanged, this, later);
    connect(m_connections, &QSpinBox::valueChanged, this, later);
    connect(m_discard, &QCheckBox::toggled, this, later);
    for (QCheckBox *box : { m_profileServer, m_profileClient, m_profileKeep })
        connect(box, &QCheckBox::toggled, this, later);
    for (QCheckBox *box : { m_profileServer, m_profileClient })
        connect(box, &QCheckBox::toggled, this, &ScenarioPage::enableProfileSettings);
    connect(m_profilePid, &QSpinBox::valueChanged, this, &ScenarioPage::enableProfileSettings);
    for (QLineEdit *edit : { m_streamCallCount, m_streamInterval, m_streamCallDuration, m_clientCommand,
             m_clientEnvironment, m_profilePeriod })
        connect(edit, &QLineEdit::textChanged, this, later);
    connect(m_profilePid, &QSpinBox::valueChanged, this, later);
    connect(m_profileCallGraph, &QComboBox::currentIndexChanged, this, later);
    connect(m_clientCommand, &QLineEdit::textChanged, this,
        [this](const QString &text) { m_clientEnvironment->setEnabled(!text.trimmed().isEmpty()); });
    connect(m_streamPingPong, &QCheckBox::toggled, this, later);
    connect(m_msgpackParams, &QComboBox::currentIndexChanged, this, later);
    connect(m_calls, &QSpinBox::valueChanged, this, later);
    connect(example, &QPushButton::clicked, this, &ScenarioPage::loadExample);
    connect(m_run, &QPushButton::clicked, this, &ScenarioPage::runRequested);
    connect(m_stop, &QPushButton::clicked, this, &ScenarioPage::stopRequested);
    connect(m_sendOnce, &QPushButton::clicked, this, &ScenarioPage::sendOnceRequested);
}

QWidget *ScenarioPage::fileRow(
    QLineEdit *edit, const QString &browseName, bool save, const QString &caption, const QString &filter)
{
    auto *row = new QWidget;
    auto *layout = new QHBoxLayout(row);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(edit, 1);
    auto *browse = new QToolButton;
    browse->setObjectName(browseName);
    browse->setText(QStringLiteral("…"));
    browse->setToolTip(tr("Choose the file."));
    layout->addWidget(browse);
    connect(browse, &QToolButton::clicked, this, [this, edit, save, caption, filter] {
        const QString start = edit->text().trimmed();
        const QString path = save ? QFileDialog::getSaveFileName(this, caption, start, filter)
                                  : QFileDialog::getOpenFileName(this, caption, start, filter);
        if (!path.isEmpty())
            edit->setText(path);
    });
    return row;
}

void ScenarioPage::securityChanged()
{
    const bool tls = m_security->currentData().toString() == u"tls";
    for (QWidget *field : std::as_const(m_tlsFields)) {
        field->setEnabled(tls);
        if (QWidget *label = m_connectionForm->labelForField(field))
            label->setEnabled(tls);
    }
    m_validateTimer.start();
    if (!m_loading)
        Q_EMIT edited();
}

Scenario ScenarioPage::scenario() const
{
    // The document shown, with every field that has a widget read from it: settings without one (pinning,
    // exports, history, the A/B design, server command readiness) stay as the document had them, so opening and
    // saving a document never drops what the editor does not show.
    Scenario s = m_document;
    s.protos.clear(); // the schema's sources are the window's business
    s.importPaths.clear();
    s.protosets.clear();
    s.fills.clear();
    // The TLS settings, too, are the widgets' (and only for gRPC).
    s.security = QStringLiteral("auto");
    s.clearTlsSettings();
    s.method = m_method;
    s.transport = transportName(transport());
    s.codec = codecName(static_cast<Codec>(m_codec->currentData().toInt()));
    s.rpcMethod = m_rpcMethod->text().trimmed();
    s.httpPath = m_httpPath->text().trimmed();
    s.msgpackParamsMap = m_msgpackParams->currentIndex() == 1;
    const QString target = m_target->currentText().trimmed();
    s.target = transport() == TransportKind::InProcess || target == m_builtinTargets.value(transport())
        ? QStringLiteral("builtin")
        : target;
    s.request = m_request->toPlainText().toUtf8();
    for (const QString &fill : m_fills->text().split(QLatin1Char(','), Qt::SkipEmptyParts))
        s.fills << fill.trimmed();
    s.metadata = m_metadata->pairs();
    s.calls = static_cast<quint64>(m_calls->value());
    s.concurrency = m_concurrency->value();
    s.duration = m_duration->text().trimmed();
    s.rate = m_rate->text().trimmed();
    s.warmup = m_warmup->text().trimmed();
    s.timeout = m_timeout->text().trimmed();
    s.connections = m_connections->value();
    s.discardResponse = m_discard->isChecked();
    s.profileServer = m_profileServer->isChecked();
    s.profileClient = m_profileClient->isChecked();
    s.profilePid = m_profilePid->value();
    const bool profiling = s.profileServer || s.profileClient || s.profilePid > 0;
    s.profileKeep = m_profileKeep->isChecked() && profiling;
    s.profilePeriod = profiling ? profilePeriod() : QString(); // a run without a profile has none
    s.profileCallGraph = profiling ? profileCallGraph() : QString();
    s.clientCommand = m_clientCommand->text().trimmed();
    if (!s.clientCommand.isEmpty()) {
        // Split as a shell would; text that does not split is kept whole, and the run refuses it by name.
        const std::optional<QStringList> words = splitCommandLine(m_clientEnvironment->text(), nullptr);
        s.clientEnvironment = words                           ? *words
            : m_clientEnvironment->text().trimmed().isEmpty() ? QStringList()
                                                              : QStringList { m_clientEnvironment->text() };
    }
    s.streamCallCount = m_streamCallCount->text().trimmed();
    s.streamInterval = m_streamInterval->text().trimmed();
    s.streamCallDuration = m_streamCallDuration->text().trimmed();
    s.streamPingPong = m_streamPingPong->isChecked();
    s.maxReceiveSize = m_maxReceive->text().trimmed();
    s.maxSendSize = m_maxSend->text().trimmed();
    // rpcscope's own HTTP/2 client's alone: another transport's document carries none (core would refuse it), and the
    // field keeps it for a switch back.
    s.http2Window = transport() == TransportKind::H2Grpc ? m_http2Window->text().trimmed() : QString();
    s.rateSchedule = m_rateSchedule->text();
    s.concurrencySchedule = m_callerSchedule->text();
    // TLS is gRPC's (either client): for other transports the document carries none of it (the CLI would refuse it).
    if (speaksGrpc(transport())) {
        s.security = m_security->currentData().toString();
        if (s.security == u"tls") {
            s.caCert = m_caCert->text().trimmed();
            s.clientCert = m_clientCert->text().trimmed();
            s.clientKey = m_clientKey->text().trimmed();
            s.serverName = m_serverName->text().trimmed();
            s.skipVerify = m_skipVerify->isChecked();
        }
    }
    s.authority = m_authority->text().trimmed();
    s.clientThreads = m_clientThreads->value();
    s.interval = m_interval->text().trimmed();
    s.rawSamples = m_rawSamples->text().trimmed();
    s.requestBinaryFile = m_requestBinary->text().trimmed();
    s.checks = checks();
    s.expect = expectations();
    s.expectStatus.clear();
    for (const QString &part : m_expectStatus->text().split(u',', Qt::SkipEmptyParts)) {
        if (!part.trimmed().isEmpty())
            s.expectStatus << part.trimmed();
    }
    return s;
}

void ScenarioPage::setScenario(const Scenario &document)
{
    Scenario s = document;
    // A request kept in a JSON file (-D) is shown, and from then on edited, in the request editor.
    if (!s.requestFile.isEmpty() && s.requestBinaryFile.isEmpty()) {
        // One the editor can hold; a larger one stays a file, read when the run starts.
        if (const auto text = readInputFile(s.requestFile, inputlimits::kDocument, nullptr)) {
            s.request = *text;
            s.requestFile.clear();
        }
    }
    m_document = s;
    m_loading = true;
    m_reply->clear(); // the last Send once's reply was the previous document's call
    setMethod(s.method);
    if (const auto kind = parseTransport(s.transport))
        setTransport(*kind);
    if (const auto codec = parseCodec(s.codec))
        m_codec->setCurrentIndex(m_codec->findData(static_cast<int>(*codec)));
    m_rpcMethod->setText(s.rpcMethod);
    m_httpPath->setText(s.httpPath);
    m_msgpackParams->setCurrentIndex(s.msgpackParamsMap ? 1 : 0);
    m_target->setEditText(s.target == u"builtin" ? m_builtinTargets.value(transport()) : s.target);
    m_request->setPlainText(QString::fromUtf8(s.request));
    m_fills->setText(s.fills.join(QStringLiteral(", ")));
    m_metadata->setPairs(s.metadata);
    m_tabs->setTabText(1, s.metadata.isEmpty() ? tr("Metadata") : tr("Metadata (%1)").arg(s.metadata.size()));
    m_calls->setValue(static_cast<int>(std::min<quint64>(s.calls, static_cast<quint64>(m_calls->maximum()))));
    m_concurrency->setValue(s.concurrency);
    m_duration->setText(s.duration);
    m_rate->setText(s.rate);
    m_warmup->setText(s.warmup);
    m_timeout->setText(s.timeout);
    if (s.connections >= 0)
        m_connections->setValue(s.connections);
    m_discard->setChecked(s.discardResponse);
    m_profileServer->setChecked(s.profileServer);
    m_profileClient->setChecked(s.profileClient);
    m_profileKeep->setChecked(s.profileKeep);
    m_profilePeriod->setText(s.profilePeriod);
    m_profileCallGraph->setCurrentIndex(std::max(0, m_profileCallGraph->findData(s.profileCallGraph)));
    m_streamCallCount->setText(s.streamCallCount);
    m_streamInterval->setText(s.streamInterval);
    m_streamCallDuration->setText(s.streamCallDuration);
    m_streamPingPong->setChecked(s.streamPingPong);
    m_maxReceive->setText(s.maxReceiveSize);
    m_maxSend->setText(s.maxSendSize);
    m_http2Window->setText(s.http2Window);
    m_rateSchedule->setText(s.rateSchedule);
    m_callerSchedule->setText(s.concurrencySchedule);
    // A TLS setting asks for TLS by itself, as its CLI flag does.
    const QString security = s.security == u"auto" && s.hasTlsSettings() ? QStringLiteral("tls") : s.security;
    m_security->setCurrentIndex(std::max(0, m_security->findData(security)));
    m_caCert->setText(s.caCert);
    m_clientCert->setText(s.clientCert);
    m_clientKey->setText(s.clientKey);
    m_serverName->setText(s.serverName);
    m_skipVerify->setChecked(s.skipVerify);
    m_authority->setText(s.authority);
    m_clientThreads->setValue(s.clientThreads);
    m_interval->setText(s.interval);
    m_rawSamples->setText(s.rawSamples);
    m_requestBinary->setText(s.requestBinaryFile);
    m_checks->setText(s.checks.join(QStringLiteral(", ")));
    m_expect->setPlainText(s.expect.join(u'\n'));
    m_expectStatus->setText(s.expectStatus.join(QStringLiteral(", ")));
    m_loading = false;
    validateNow();
}

void ScenarioPage::setAbDesign(const QString &block, int restarts, const QString &connection, const QString &threshold,
    bool untilDecided, const QString &maxDuration)
{
    if (m_document.abBlock == block && m_document.abRestarts == restarts && m_document.abConnection == connection
        && m_document.abThreshold == threshold && m_document.abUntilDecided == untilDecided
        && m_document.abMaxDuration == maxDuration)
        return;
    m_document.abBlock = block;
    m_document.abRestarts = restarts;
    m_document.abConnection = connection;
    m_document.abThreshold = threshold;
    m_document.abUntilDecided = untilDecided;
    m_document.abMaxDuration = maxDuration;
    Q_EMIT edited();
}

TransportKind ScenarioPage::transport() const
{
    return static_cast<TransportKind>(m_transport->currentData().toInt());
}

void ScenarioPage::setTransport(TransportKind kind)
{
    m_transport->setCurrentIndex(m_transport->findData(static_cast<int>(kind)));
}

void ScenarioPage::setTarget(const QString &address)
{
    m_target->setEditText(address);
    validateNow();
}

void ScenarioPage::transportChanged()
{
    const TransportKind kind = transport();
    // Only the codecs this transport can carry; keep the choice when it still fits.
    const Codec current = static_cast<Codec>(m_codec->currentData().toInt());
    const bool any = transportInfo(kind).anyCodec;
    for (int i = 0; i < m_codec->count(); ++i) {
        const auto codec = static_cast<Codec>(m_codec->itemData(i).toInt());
        auto *model = qobject_cast<QStandardItemModel *>(m_codec->model());
        if (model)
            model->item(i)->setEnabled(carriesCodec(kind, codec));
    }
    // Coming from gRPC to HTTP, JSON is what a user means; any explicit choice for HTTP is theirs to make after.
    if (!any || (kind == TransportKind::Http && current == Codec::Protobuf))
        m_codec->setCurrentIndex(m_codec->findData(static_cast<int>(defaultCodec(kind))));
    const bool msgpack = kind == TransportKind::Msgpack;
    m_rpcMethod->setVisible(msgpack);
    m_rpcMethodLabel->setVisible(msgpack);
    m_msgpackParams->setVisible(msgpack);
    m_msgpackParamsLabel->setVisible(msgpack);
    m_httpPath->setVisible(kind == TransportKind::Http);
    m_httpPathLabel->setVisible(kind == TransportKind::Http);
    m_target->setEnabled(kind != TransportKind::InProcess);
    m_callForm->setRowVisible(m_target, kind != TransportKind::InProcess); // no RPC, no target: not a greyed box
    m_security->setEnabled(speaksGrpc(kind)); // TLS: either gRPC client
    for (QWidget *field : std::as_const(m_tlsFields))
        m_connectionForm->setRowVisible(field, speaksGrpc(kind));
    m_advancedForm->setRowVisible(m_http2Window, kind == TransportKind::H2Grpc);
    // The target follows the transport while it is a built-in server (or empty); a typed address stays.
    const QString text = m_target->currentText().trimmed();
    const bool builtin = text.isEmpty() || text == u"builtin" || m_builtinTargets.values().contains(text);
    m_target->clear();
    if (m_builtinTargets.contains(kind))
        m_target->addItem(m_builtinTargets.value(kind));
    else if (kind != TransportKind::InProcess)
        m_target->addItem(QStringLiteral("builtin")); // not started yet: the first run that uses it starts it
    if (builtin)
        m_target->setEditText(m_builtinTargets.value(kind));
    else
        m_target->setEditText(text);
    // HTTP/1.1 carries one call per connection at a time: default to one per caller.
    if (kind == TransportKind::Http && m_connections->value() == 1)
        m_connections->setValue(0);
    else if (kind != TransportKind::Http && m_connections->value() == 0)
        m_connections->setValue(1);
    m_validateTimer.start();
}

void ScenarioPage::setSchema(const Schema &schema)
{
    m_schema = schema;
    updateStreamFields();
    m_validateTimer.start();
}

void ScenarioPage::setMethod(const QString &fullName)
{
    if (fullName == m_method)
        return;
    m_method = fullName;
    m_methodLabel->setText(fullName);
    m_fills->clear(); // size knobs name fields of the previous method's request
    loadExample();
    updateStreamFields();
}

void ScenarioPage::updateStreamFields()
{
    const google::protobuf::MethodDescriptor *method = m_schema.findMethod(m_method);
    const bool streaming = method && (method->client_streaming() || method->server_streaming());
    // A unary method has no stream settings to show; a stream's that do not apply to its kind stay, disabled.
    for (QLineEdit *edit : { m_streamCallCount, m_streamInterval, m_streamCallDuration }) {
        edit->setEnabled(streaming);
        m_loadForm->setRowVisible(edit, streaming);
    }
    m_streamPingPong->setEnabled(method && method->client_streaming() && method->server_streaming());
    m_loadForm->setRowVisible(m_streamPingPong, streaming);
}

void ScenarioPage::setBuiltinTargets(const QMap<TransportKind, QString> &addresses)
{
    // The target follows the servers when it named them (their old ports after a restart, or "builtin" before they
    // started): not the user's edit.
    const QScopedValueRollback<bool> loading(m_loading, true);
    if (const QString text = m_target->currentText().trimmed();
        text == u"builtin" || m_builtinTargets.values().contains(text))
        m_target->setEditText(QString());
    m_builtinTargets = addresses;
    // rpcscope's own HTTP/2 client calls the same built-in gRPC server.
    if (addresses.contains(TransportKind::Grpc))
        m_builtinTargets.insert(TransportKind::H2Grpc, addresses.value(TransportKind::Grpc));
    transportChanged();
}

void ScenarioPage::setRequestJson(const QByteArray &json)
{
    m_request->setPlainText(QString::fromUtf8(json));
    validateNow();
}

void ScenarioPage::setFills(const QString &fills)
{
    m_fills->setText(fills);
    validateNow();
}

void ScenarioPage::loadExample()
{
    const google::protobuf::MethodDescriptor *method = m_schema.findMethod(m_method);
    if (method)
        setRequestJson(exampleJson(m_schema, method->input_type()));
}

void ScenarioPage::setRunning(bool running)
{
    m_running = running;
    m_stop->setEnabled(running);
    validateNow();
}

void ScenarioPage::showReply(const QString &text, bool sending)
{
    m_sending = sending;
    m_reply->setPlainText(text);
    m_tabs->setCurrentIndex(m_tabs->indexOf(m_reply->parentWidget()));
    validateNow();
}

QString ScenarioPage::replyText() const
{
    return m_reply->toPlainText();
}

QStringList ScenarioPage::checks() const
{
    QStringList out;
    for (const QString &part : m_checks->text().split(u',', Qt::SkipEmptyParts)) {
        if (!part.trimmed().isEmpty())
            out << part.trimmed();
    }
    return out;
}

QStringList ScenarioPage::expectations() const
{
    QStringList out;
    for (const QString &line : m_expect->toPlainText().split(u'\n')) {
        if (!line.trimmed().isEmpty())
            out << line.trimmed();
    }
    return out;
}

bool ScenarioPage::validateNow()
{
    m_validateTimer.stop();
    QString why;
    const std::optional<Prepared> prepared = prepare(&why, nullptr, BuiltinStart::Never); // checking starts no server
    const bool ok = prepared.has_value();
    m_run->setEnabled(ok && !m_running);
    m_run->setToolTip(ok ? tr("Start the benchmark (Ctrl+R).") : why);
    m_sendOnce->setEnabled(ok && !m_running && !m_sending);
    m_sendOnce->setToolTip(
        ok ? tr("Make one call and show its reply, status, headers and trailers (Ctrl+Enter).") : why);
    QString ready = tr("✓ Ready to run");
    // Fill sizes are applied over the JSON above: say so, and what is sent, so nums=[1,2] in the box with
    // nums=1000 below is not a puzzle.
    QStringList filled;
    for (const QString &fill : scenario().fills) // the field's knobs as the run takes them
        filled << fill.section(QLatin1Char('='), 0, 0).trimmed();
    if (ok && !filled.isEmpty()) {
        ready += tr(". Fill sizes replace %1 in the request above").arg(filled.join(QStringLiteral(", ")));
        // The size, where what is sent is the protobuf encoding (gRPC, or HTTP with protobuf bodies).
        const Codec codec = prepared->spec.transport.codec.value_or(defaultCodec(prepared->spec.transport.kind));
        if (codec == Codec::Protobuf && !prepared->call.perCall && !prepared->call.requests.empty())
            ready += tr(": %1 sent").arg(formatBytes(static_cast<double>(prepared->call.requests.front().size())));
    }
    // No RPC runs the codec in this process: callers beyond the CPUs wait for one, and that wait is in their latency.
    const int cpus = usableCpuCount();
    if (ok && prepared->spec.transport.kind == TransportKind::InProcess && m_concurrency->value() > cpus)
        ready += tr(". No RPC with %1 callers on %2 CPUs: they queue for a core and their latency includes the wait; "
                    "%2 or fewer callers time the codec alone")
                     .arg(m_concurrency->value())
                     .arg(cpus);
    m_requestStatus->setText(ok ? ready : QStringLiteral("✗ ") + why);
    QPalette pal = m_requestStatus->palette();
    pal.setColor(QPalette::WindowText, ok ? QColor(0x2e, 0x9d, 0x4f) : QColor(0xd0, 0x3b, 0x3b));
    m_requestStatus->setPalette(pal);
    return ok;
}

} // namespace rpcscope
