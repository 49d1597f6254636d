#pragma once

#include "server/servercommand.h"

#include <QDialog>

#include <array>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QSpinBox;

namespace rpcscope {

/// What the A/B dialog asks for: two targets, how to interleave, what counts as a regression.
struct AbRequest {
    enum class Kind { Builtin, Address, Command };
    struct Target {
        Kind kind = Kind::Builtin;
        QString text; ///< the address, or the command line (with {port})
        QList<QPair<QString, QString>> environment; ///< commands and built-in servers
        QString workingDirectory;
        /// A client command that makes this side's calls (docs/client-protocol.md); empty: rpcscope's own client.
        QString client;
        QList<QPair<QString, QString>> clientEnvironment;
        /// An address's server to profile, by process id (--a-profile-pid): 0 = the process listening on its port.
        qint64 profilePid = 0;
    };
    std::array<Target, 2> targets;
    QString block; ///< calls or a duration; empty = automatic
    int restarts = 0; ///< server processes per command side over the run; 0 = automatic (AbBlocks::defaultRestarts)
    bool connectionPerBlock = false; ///< dial anew for every block instead of keeping a side's connection
    QString readyPattern; ///< empty = ready when the port accepts connections
    QString readyTimeout = QStringLiteral("10s");
    double threshold = 0.05;
    /// Judge every pair of blocks with the anytime-valid sequence and end the run once it decides (restarts 1).
    bool untilDecided = false;
    QString maxDuration; ///< a wall-clock limit for the whole run; empty = none
    bool profileServer = false; ///< each side's server CPU profiled during its blocks (--profile)
    bool profileClient = false; ///< rpcscope's own CPU, per side (--profile-client)

    /// The command to start for @p side (a built-in server is `rpcscope-cli serve KIND --port {port}`), when it is one.
    std::optional<ServerCommand> command(
        int side, const QString &cliPath, const QString &transport, QString *error) const;
    /// "builtin", the address, or the command line: what the run records as its target.
    QString targetText(int side) const;
};

/**
 * "Compare A/B" for the scenario being edited: the two targets (the built-in server, an address, or a server
 * command rpcscope starts, each with its own environment), the block size and the regression threshold. The
 * commands are shown as they will be run; nothing starts before the user says Run.
 */
class AbDialog : public QDialog {
    Q_OBJECT
public:
    explicit AbDialog(QWidget *parent = nullptr);

    AbRequest request() const;
    void setRequest(const AbRequest &request);
    /// The request as entered, or std::nullopt with the reason (shown in the dialog too).
    std::optional<AbRequest> validatedRequest(QString *error) const;

    void accept() override;

private:
    struct SideWidgets {
        QComboBox *kind = nullptr;
        QLineEdit *text = nullptr;
        QPlainTextEdit *environment = nullptr;
        QLineEdit *directory = nullptr;
        QLineEdit *client = nullptr;
        QPlainTextEdit *clientEnvironment = nullptr;
        QSpinBox *profilePid = nullptr;
    };
    QWidget *makeSide(int side, const QString &title);
    void updateSide(int side);

    std::array<SideWidgets, 2> m_sides;
    QLineEdit *m_block = nullptr;
    QSpinBox *m_restarts = nullptr;
    QCheckBox *m_connectionPerBlock = nullptr;
    QLineEdit *m_ready = nullptr;
    QLineEdit *m_readyTimeout = nullptr;
    QDoubleSpinBox *m_threshold = nullptr;
    QCheckBox *m_untilDecided = nullptr;
    QCheckBox *m_profileServer = nullptr;
    QCheckBox *m_profileClient = nullptr;
    QLineEdit *m_maxDuration = nullptr;
    QLabel *m_error = nullptr;
};

} // namespace rpcscope
