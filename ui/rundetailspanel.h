#pragma once

#include "store/runrecord.h"

#include <QWidget>

class QLabel;
class QPlainTextEdit;
class QTabWidget;
class QTableWidget;

namespace rpcscope {

/// What a stored run was, read-only: its labels, scenario JSON, environment fingerprint and server command.
class RunDetailsPanel : public QWidget {
    Q_OBJECT
public:
    explicit RunDetailsPanel(QWidget *parent = nullptr);

    void showRun(const RunRecord &run);
    /// Shows @p message (or nothing) in place of a run.
    void clear(const QString &message = {});

    /// The run shown, 0 when none.
    qint64 runId() const { return m_runId; }
    QLabel *header() const { return m_header; }
    QPlainTextEdit *scenarioView() const { return m_scenario; }
    QTableWidget *environmentTable() const { return m_environment; }
    QTableWidget *serverTable() const { return m_server; }

private:
    qint64 m_runId = 0;
    QLabel *m_header;
    QTabWidget *m_tabs;
    QPlainTextEdit *m_scenario;
    QTableWidget *m_environment;
    QTableWidget *m_server;
};

} // namespace rpcscope
