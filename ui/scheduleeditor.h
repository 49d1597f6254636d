#pragma once

#include "load/pacer.h"
#include "scenario/scenario.h"

#include <QGroupBox>

#include <optional>

class QComboBox;
class QLineEdit;

namespace rpcscope {

/// A checkable group that edits a schedule (a rate for open loops, a number of callers for closed loops).
class ScheduleEditor : public QGroupBox {
    Q_OBJECT
public:
    /// @p unit names the scheduled value in the fields' tooltips ("calls/s", "callers").
    ScheduleEditor(const QString &title, const QString &unit, const QString &objectPrefix, QWidget *parent = nullptr);

    void setValues(const QString &kind, const QString &start, const QString &step, const QString &end,
        const QString &stepDuration, const QString &maxDuration);

    /// The fields as typed (for scenario documents; core's prepareRun() checks them); unset when unchecked.
    std::optional<ScheduleText> text() const;
    /// Fills the fields and checks the group; std::nullopt unchecks it.
    void setText(const std::optional<ScheduleText> &text);

Q_SIGNALS:
    void edited();

private:
    QComboBox *m_kind;
    QLineEdit *m_start;
    QLineEdit *m_step;
    QLineEdit *m_end;
    QLineEdit *m_stepDuration;
    QLineEdit *m_maxDuration;
};

} // namespace rpcscope
