#include "abdialog.h"

#include "client/clientcommand.h"
#include "server/serverlaunch.h"
#include "util/units.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>
#include <limits>

namespace rpcscope {

namespace {

/// "NAME=value" lines as variables (a line without "=" is a name with an empty value; blank lines are skipped).
QList<QPair<QString, QString>> environmentOf(const QString &text)
{
    QList<QPair<QString, QString>> variables;
    for (const QString &line : text.split(u'\n')) {
        const QString trimmed = line.trimmed();
        if (trimmed.isEmpty())
            continue;
        const qsizetype eq = trimmed.indexOf(u'=');
        variables.append({ eq < 0 ? trimmed : trimmed.left(eq), eq < 0 ? QString() : trimmed.mid(eq + 1) });
    }
    return variables;
}

QString environmentText(const QList<QPair<QString, QString>> &variables)
{
    QStringList lines;
    for (const auto &[name, value] : variables)
        lines << name + u'=' + value;
    return lines.join(u'\n');
}

/// The first variable of @p variables whose name is not one, or empty.
QString badVariableName(const QList<QPair<QString, QString>> &variables)
{
    static const QRegularExpression name(QStringLiteral("^[A-Za-z_][A-Za-z0-9_]*$"));
    for (const auto &[variable, value] : variables) {
        if (!name.match(variable).hasMatch())
            return variable.isEmpty() ? QStringLiteral("=") + value : variable;
    }
    return {};
}

} // namespace

std::optional<ServerCommand> AbRequest::command(
    int side, const QString &cliPath, const QString &transport, QString *error) const
{
    const Target &t = targets[static_cast<size_t>(side)];
    if (t.kind == Kind::Address)
        return std::nullopt;
    ServerCommand c;
    if (t.kind == Kind::Builtin) {
        c = builtinServeCommand(cliPath, parseTransport(transport).value_or(TransportKind::Grpc));
    } else {
        c.command = t.text;
        c.readyPattern = readyPattern;
    }
    c.environment = t.environment;
    c.workingDirectory = t.workingDirectory;
    QString why;
    const auto timeout = parseDuration(readyTimeout, &why);
    if (!timeout) {
        *error = QStringLiteral("Ready timeout: ") + why;
        return std::nullopt;
    }
    c.readyTimeout = std::chrono::duration_cast<std::chrono::milliseconds>(*timeout);
    if (!c.check(&why)) {
        *error = QStringLiteral("%1: %2").arg(QChar(side == 0 ? u'A' : u'B')).arg(why);
        return std::nullopt;
    }
    return c;
}

QString AbRequest::targetText(int side) const
{
    const Target &t = targets[static_cast<size_t>(side)];
    return t.kind == Kind::Builtin ? QStringLiteral("builtin") : t.text;
}

AbDialog::AbDialog(QWidget *parent) : QDialog(parent)
{
    setWindowTitle(tr("Compare A/B"));
    auto *layout = new QVBoxLayout(this);
    auto *intro = new QLabel(
        tr("Runs this scenario against two targets in alternating blocks of calls (A B, B A, B A, A B ...), "
           "so whatever changes on the machine meanwhile, and going first, hits both alike, then "
           "compares B against A."));
    intro->setWordWrap(true);
    layout->addWidget(intro);
    auto *sides = new QHBoxLayout;
    sides->addWidget(makeSide(0, tr("A (baseline)")));
    sides->addWidget(makeSide(1, tr("B")));
    layout->addLayout(sides);

    auto *form = new QFormLayout;
    m_block = new QLineEdit;
    m_block->setPlaceholderText(tr("automatic (a tenth of the run)"));
    m_block->setToolTip(tr("Calls per block for a counted run (e.g. 500), or a duration for a timed run (e.g. 2s)."));
    form->addRow(tr("Block size:"), m_block);
    m_restarts = new QSpinBox;
    m_restarts->setObjectName(QStringLiteral("abRestarts"));
    m_restarts->setRange(0, 100);
    m_restarts->setSpecialValueText(tr("automatic (5 for server commands)"));
    m_restarts->setToolTip(tr("How many times each server command (or built-in server) is started over the run, A1 B1 "
                              "B2 A2 ...: what differs from one server process to the next (CPU placement, memory "
                              "layout) is then measured and counted, not mistaken for a difference between A and B. "
                              "A client command is started anew with them."));
    form->addRow(tr("Server processes per side:"), m_restarts);
    m_connectionPerBlock = new QCheckBox(tr("Dial a new connection for every block"));
    m_connectionPerBlock->setObjectName(QStringLiteral("abConnectionPerBlock"));
    m_connectionPerBlock->setToolTip(tr("By default each side keeps its connection across its blocks (one per server "
                                        "process)."));
    form->addRow(tr("Connections:"), m_connectionPerBlock);
    m_ready = new QLineEdit;
    m_ready->setPlaceholderText(tr("ready when its port accepts connections"));
    m_ready->setToolTip(tr("A regular expression: a server command is ready when a line of its output matches."));
    form->addRow(tr("Ready when output matches:"), m_ready);
    m_readyTimeout = new QLineEdit(QStringLiteral("10s"));
    m_readyTimeout->setToolTip(tr("How long a server command may take to become ready before the A/B run gives up."));
    form->addRow(tr("Ready timeout:"), m_readyTimeout);
    m_threshold = new QDoubleSpinBox;
    m_threshold->setRange(0.1, 90);
    m_threshold->setDecimals(1);
    m_threshold->setSuffix(QStringLiteral(" %"));
    m_threshold->setValue(5);
    m_threshold->setToolTip(tr("The smallest significant slow-down of p50, p95, p99 or CPU per call that counts as a "
                               "regression. To find a change of a few percent of the server's CPU, set it to 1% and "
                               "stop when decided: each pair of server processes is then judged (README, \"Small "
                               "changes\")."));
    form->addRow(tr("Regression threshold:"), m_threshold);
    m_untilDecided = new QCheckBox(tr("Stop as soon as the verdict is decided"));
    m_untilDecided->setObjectName(QStringLiteral("abUntilDecided"));
    m_untilDecided->setToolTip(
        tr("Judges p50 after every pair of blocks with an anytime-valid 95% confidence sequence (looking after every "
           "pair does not inflate false verdicts) and ends the run once it is a regression, an improvement or no "
           "change beyond the threshold. Blocks default to a fortieth of the run. Server commands are started anew "
           "every few rounds (10 processes a side by default) and judged per pair of processes, so the verdict is "
           "about the servers, not two of their processes; their CPU per call is judged beside the p50, each at "
           "97.5%, and the verdict names the one that decided. When both servers are started here, rpcscope runs "
           "on the first CPU and the servers on the others while the run lasts: blocks vary less."));
    form->addRow(tr("Until decided:"), m_untilDecided);
    m_maxDuration = new QLineEdit;
    m_maxDuration->setObjectName(QStringLiteral("abMaxDuration"));
    m_maxDuration->setPlaceholderText(tr("none: the run's calls or duration end it"));
    m_maxDuration->setToolTip(tr("A time limit for the whole A/B run (e.g. 2m), whatever the scenario plans."));
    form->addRow(tr("Time limit:"), m_maxDuration);
    m_profileServer = new QCheckBox(tr("Servers"));
    m_profileServer->setObjectName(QStringLiteral("abProfileServer"));
    m_profileServer->setToolTip(tr("Sample each side's server CPU during its blocks and show where B's time went "
                                   "against A's: a differential flame graph and the functions that changed, per call "
                                   "with an interval (--profile). A side's client command is profiled too: where "
                                   "B's client time went."));
    m_profileClient = new QCheckBox(tr("Client (rpcscope)"));
    m_profileClient->setObjectName(QStringLiteral("abProfileClient"));
    m_profileClient->setToolTip(tr("Sample rpcscope's own CPU during each side's blocks (--profile-client)."));
    auto *profile = new QHBoxLayout;
    profile->addWidget(m_profileServer);
    profile->addWidget(m_profileClient);
    profile->addStretch();
    form->addRow(tr("CPU profiles:"), profile);
    connect(m_untilDecided, &QCheckBox::toggled, this, [this](bool on) {
        m_restarts->setSpecialValueText(
            on ? tr("automatic (10 for server commands)") : tr("automatic (5 for server commands)"));
        m_block->setPlaceholderText(
            on ? tr("automatic (a fortieth of the run)") : tr("automatic (a tenth of the run)"));
    });
    layout->addLayout(form);

    m_error = new QLabel;
    m_error->setWordWrap(true);
    m_error->setStyleSheet(QStringLiteral("color: #c0392b"));
    m_error->hide();
    layout->addWidget(m_error);

    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Run A/B"));
    connect(buttons, &QDialogButtonBox::accepted, this, &AbDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &AbDialog::reject);
    layout->addWidget(buttons);
}

QWidget *AbDialog::makeSide(int side, const QString &title)
{
    SideWidgets &w = m_sides[static_cast<size_t>(side)];
    auto *box = new QGroupBox(title);
    auto *form = new QFormLayout(box);
    w.kind = new QComboBox;
    w.kind->setObjectName(QStringLiteral("abKind%1").arg(side));
    w.kind->addItem(tr("Built-in server"));
    w.kind->addItem(tr("Address"));
    w.kind->addItem(tr("Server command"));
    w.kind->setToolTip(tr("The built-in server (started for the run), a server already running, or a command rpcscope "
                          "starts and stops."));
    form->addRow(tr("Target:"), w.kind);
    w.text = new QLineEdit;
    w.text->setObjectName(QStringLiteral("abText%1").arg(side));
    form->addRow(tr("Address / command:"), w.text);
    w.profilePid = new QSpinBox;
    w.profilePid->setObjectName(QStringLiteral("abProfilePid%1").arg(side));
    w.profilePid->setRange(0, std::numeric_limits<int>::max());
    w.profilePid->setSpecialValueText(tr("the process on its port"));
    w.profilePid->setToolTip(tr("An address's server to profile, by process id, when the process listening on its "
                                "port is not the server (a proxy's, a container's); implies profiling the servers "
                                "(--a-profile-pid)."));
    form->addRow(tr("Server PID:"), w.profilePid);
    w.environment = new QPlainTextEdit;
    w.environment->setObjectName(QStringLiteral("abEnv%1").arg(side));
    w.environment->setPlaceholderText(tr("NAME=value, one per line"));
    w.environment->setToolTip(
        tr("Environment variables for this side's server (e.g. LD_LIBRARY_PATH to another library "
           "version; RPCSCOPE_SERVE_DELAY=1ms makes the built-in server slower)."));
    w.environment->setMaximumHeight(fontMetrics().lineSpacing() * 5);
    form->addRow(tr("Environment:"), w.environment);
    w.directory = new QLineEdit;
    w.directory->setPlaceholderText(tr("rpcscope's folder"));
    w.directory->setToolTip(tr("Working directory of the server command."));
    auto *browse = new QPushButton(tr("..."));
    browse->setMaximumWidth(30);
    connect(browse, &QPushButton::clicked, this, [this, side] {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Working directory"));
        if (!dir.isEmpty())
            m_sides[static_cast<size_t>(side)].directory->setText(dir);
    });
    auto *row = new QHBoxLayout;
    row->addWidget(w.directory);
    row->addWidget(browse);
    form->addRow(tr("Directory:"), row);
    w.client = new QLineEdit;
    w.client->setObjectName(QStringLiteral("abClient%1").arg(side));
    w.client->setPlaceholderText(tr("rpcscope's own client"));
    w.client->setToolTip(
        tr("A client command that makes this side's calls instead of rpcscope, when the code under test is the "
           "client (a protobuf runtime, a gRPC library): {target} is the side's HOST:PORT. It reports each call "
           "as a JSON line (docs/client-protocol.md; examples/clients has Python, Go and shell clients)."));
    form->addRow(tr("Client command:"), w.client);
    w.clientEnvironment = new QPlainTextEdit;
    w.clientEnvironment->setObjectName(QStringLiteral("abClientEnv%1").arg(side));
    w.clientEnvironment->setPlaceholderText(tr("NAME=value, one per line"));
    w.clientEnvironment->setToolTip(tr("Environment variables for this side's client command (e.g. "
                                       "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python)."));
    w.clientEnvironment->setMaximumHeight(fontMetrics().lineSpacing() * 3);
    form->addRow(tr("Client environment:"), w.clientEnvironment);
    connect(w.client, &QLineEdit::textChanged, this, [this, side] { updateSide(side); });
    connect(w.kind, &QComboBox::currentIndexChanged, this, [this, side] { updateSide(side); });
    updateSide(side);
    return box;
}

void AbDialog::updateSide(int side)
{
    SideWidgets &w = m_sides[static_cast<size_t>(side)];
    const auto kind = static_cast<AbRequest::Kind>(w.kind->currentIndex());
    w.text->setEnabled(kind != AbRequest::Kind::Builtin);
    w.environment->setEnabled(kind != AbRequest::Kind::Address);
    w.directory->setEnabled(kind == AbRequest::Kind::Command);
    w.profilePid->setEnabled(kind == AbRequest::Kind::Address);
    w.clientEnvironment->setEnabled(!w.client->text().trimmed().isEmpty());
    w.text->setPlaceholderText(kind == AbRequest::Kind::Address ? tr("127.0.0.1:50051 or http://host:port")
            : kind == AbRequest::Kind::Command                  ? tr("./server --port {port}")
                                                                : QString());
    w.text->setToolTip(kind == AbRequest::Kind::Command
            ? tr("The command line; {port} is replaced by a free port. No shell: use sh -c '...' for pipes "
                 "or variables.")
            : tr("Where the server listens."));
}

AbRequest AbDialog::request() const
{
    AbRequest r;
    for (size_t i = 0; i < 2; ++i) {
        const SideWidgets &w = m_sides[i];
        AbRequest::Target &t = r.targets[i];
        t.kind = static_cast<AbRequest::Kind>(w.kind->currentIndex());
        t.text = w.text->text().trimmed();
        t.workingDirectory = w.directory->text().trimmed();
        t.environment = environmentOf(w.environment->toPlainText());
        t.client = w.client->text().trimmed();
        t.clientEnvironment = environmentOf(w.clientEnvironment->toPlainText());
        t.profilePid = t.kind == AbRequest::Kind::Address ? w.profilePid->value() : 0;
    }
    r.block = m_block->text().trimmed();
    r.restarts = m_restarts->value();
    r.connectionPerBlock = m_connectionPerBlock->isChecked();
    r.readyPattern = m_ready->text();
    r.readyTimeout = m_readyTimeout->text().trimmed();
    r.threshold = m_threshold->value() / 100.0;
    r.untilDecided = m_untilDecided->isChecked();
    r.maxDuration = m_maxDuration->text().trimmed();
    r.profileServer = m_profileServer->isChecked();
    r.profileClient = m_profileClient->isChecked();
    return r;
}

void AbDialog::setRequest(const AbRequest &r)
{
    for (size_t i = 0; i < 2; ++i) {
        const AbRequest::Target &t = r.targets[i];
        SideWidgets &w = m_sides[i];
        w.kind->setCurrentIndex(static_cast<int>(t.kind));
        w.text->setText(t.text);
        w.directory->setText(t.workingDirectory);
        w.environment->setPlainText(environmentText(t.environment));
        w.client->setText(t.client);
        w.clientEnvironment->setPlainText(environmentText(t.clientEnvironment));
        w.profilePid->setValue(static_cast<int>(std::clamp<qint64>(t.profilePid, 0, w.profilePid->maximum())));
    }
    m_block->setText(r.block);
    m_restarts->setValue(r.restarts);
    m_connectionPerBlock->setChecked(r.connectionPerBlock);
    m_ready->setText(r.readyPattern);
    m_readyTimeout->setText(r.readyTimeout);
    m_threshold->setValue(r.threshold * 100);
    m_untilDecided->setChecked(r.untilDecided);
    m_maxDuration->setText(r.maxDuration);
    m_profileServer->setChecked(r.profileServer);
    m_profileClient->setChecked(r.profileClient);
}

std::optional<AbRequest> AbDialog::validatedRequest(QString *error) const
{
    const AbRequest r = request();
    for (size_t i = 0; i < 2; ++i) {
        const AbRequest::Target &t = r.targets[i];
        const QString side = i == 0 ? QStringLiteral("A") : QStringLiteral("B");
        if (t.kind != AbRequest::Kind::Builtin && t.text.isEmpty()) {
            *error
                = tr("%1: give the %2.").arg(side, t.kind == AbRequest::Kind::Address ? tr("address") : tr("command"));
            return std::nullopt;
        }
        // The CLI's rule (core's AbSession): a command has a space or {port}, an address has neither.
        if (t.kind == AbRequest::Kind::Command && !looksLikeCommand(t.text)) {
            *error = tr("%1: \"%2\" has no space and no {port}, so it reads as an address: give the server its "
                        "arguments or {port} (%2 --port {port}, or env PORT={port} %2).")
                         .arg(side, t.text);
            return std::nullopt;
        }
        if (t.kind == AbRequest::Kind::Address && looksLikeCommand(t.text)) {
            *error = tr(R"(%1: "%2" looks like a command (it has a space or {port}); pick "Server command".)")
                         .arg(side, t.text);
            return std::nullopt;
        }
        for (const auto &variables : { t.environment, t.clientEnvironment }) {
            if (const QString bad = badVariableName(variables); !bad.isEmpty()) {
                *error = tr("%1: \"%2\" is not an environment variable name (NAME=value).").arg(side, bad);
                return std::nullopt;
            }
        }
        if (!t.client.isEmpty()) {
            ClientCommand client;
            client.command = t.client;
            client.environment = t.clientEnvironment;
            if (QString why; !client.check(&why)) {
                *error = QStringLiteral("%1: %2").arg(side, why);
                return std::nullopt;
            }
        } else if (!t.clientEnvironment.isEmpty()) {
            *error = tr("%1: the client environment is for a client command; give one, or clear it.").arg(side);
            return std::nullopt;
        }
        if (t.kind == AbRequest::Kind::Command) {
            QString why;
            if (!r.command(static_cast<int>(i), QStringLiteral("rpcscope-cli"), QStringLiteral("grpc"), &why)) {
                *error = why;
                return std::nullopt;
            }
        }
    }
    QString why;
    if (!parseDuration(r.readyTimeout, &why)) {
        *error = tr("Ready timeout: %1").arg(why);
        return std::nullopt;
    }
    if (!r.maxDuration.isEmpty()) {
        const auto limit = parseDuration(r.maxDuration, &why);
        if (!limit || limit->count() <= 0) {
            *error = tr("Time limit: a duration (90s, 2m), not \"%1\".").arg(r.maxDuration);
            return std::nullopt;
        }
    }
    if (!r.block.isEmpty()) {
        bool isNumber = false;
        const qulonglong calls = r.block.toULongLong(&isNumber);
        if ((isNumber && calls == 0) || (!isNumber && !parseDuration(r.block, &why))) {
            *error = tr("Block size: a number of calls (500) or a duration (2s), not \"%1\".").arg(r.block);
            return std::nullopt;
        }
    }
    return r;
}

void AbDialog::accept()
{
    QString error;
    if (!validatedRequest(&error)) {
        m_error->setText(error);
        m_error->show();
        return;
    }
    QDialog::accept();
}

} // namespace rpcscope
