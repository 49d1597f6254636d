#pragma once

#include "engine/callsetup.h"
#include "engine/loadengine.h"
#include "schema/schema.h"
#include "transport/grpctransport.h"

#include <QTimer>
#include <QWidget>

#include <optional>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;

namespace rpcscope {

/// The scenario editor: method, target, request JSON (validated as you type), size knobs, load settings, Run/Stop.
class ScenarioPage : public QWidget
{
    Q_OBJECT
public:
    explicit ScenarioPage(QWidget *parent = nullptr);

    void setSchema(const Schema &schema);
    void setMethod(const QString &fullName);
    QString method() const { return m_method; }
    void setTargets(const QStringList &addresses);
    void setRequestJson(const QByteArray &json);
    void setFills(const QString &fills);
    void setRunning(bool running);

    /// Everything needed to start a run, or std::nullopt with the reason (also shown next to Run).
    struct Prepared
    {
        GrpcTarget target;
        GrpcCall call;
        LoadPlan plan;
    };
    std::optional<Prepared> prepare(QString *error) const;
    /// Re-checks the scenario now (normally done 250 ms after the last edit).
    bool validateNow();

Q_SIGNALS:
    void runRequested();
    void stopRequested();

private:
    void loadExample();

    Schema m_schema;
    QString m_method;
    bool m_running = false;
    QTimer m_validateTimer;

    QLabel *m_methodLabel;
    QComboBox *m_target;
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
    QCheckBox *m_discard;
    QPushButton *m_run;
    QPushButton *m_stop;
};

} // namespace rpcscope
