#include "scheduleeditor.h"

#include "util/units.h"

#include <QComboBox>
#include <QFormLayout>
#include <QLineEdit>
#include <QVBoxLayout>

namespace rpcscope {

ScheduleEditor::ScheduleEditor(const QString &title, const QString &unit, const QString &objectPrefix, QWidget *parent)
    : QGroupBox(title, parent)
    , m_kind(new QComboBox)
    , m_start(new QLineEdit)
    , m_step(new QLineEdit)
    , m_end(new QLineEdit)
    , m_stepDuration(new QLineEdit(QStringLiteral("1s")))
    , m_maxDuration(new QLineEdit)
{
    setObjectName(objectPrefix + QStringLiteral("Schedule"));
    setCheckable(true);
    setChecked(false);
    m_kind->setObjectName(objectPrefix + QStringLiteral("Kind"));
    m_kind->addItem(tr("Step"), QStringLiteral("step"));
    m_kind->addItem(tr("Line"), QStringLiteral("line"));
    m_kind->addItem(tr("Constant"), QStringLiteral("const"));
    m_kind->setToolTip(
        tr("Step: add Step every Step duration. Line: add Step every second. Constant: Start throughout."));
    const struct {
        QLineEdit *edit;
        const char *name;
        QString tip;
    } fields[] = {
        { m_start, "Start", tr("%1 at the start.").arg(unit) },
        { m_step, "Step", tr("%1 added per step (or per second for Line); may be negative.").arg(unit) },
        { m_end, "End", tr("The value stays here once reached (empty = no bound).") },
        { m_stepDuration, "StepDuration", tr("Length of each step, e.g. 5s.") },
        { m_maxDuration, "MaxDuration", tr("Stop after this long (empty = by the run's count or duration).") },
    };
    for (const auto &field : fields) {
        field.edit->setObjectName(objectPrefix + QLatin1String(field.name));
        field.edit->setToolTip(field.tip);
        connect(field.edit, &QLineEdit::textChanged, this, &ScheduleEditor::edited);
    }
    m_end->setPlaceholderText(tr("no bound"));
    m_maxDuration->setPlaceholderText(tr("e.g. 30s"));
    // The fields show only while the schedule is on, so an unused schedule takes one line.
    auto *body = new QWidget;
    auto *outer = new QVBoxLayout(this);
    outer->setContentsMargins(4, 4, 4, 4);
    outer->addWidget(body);
    body->setVisible(false);
    connect(this, &QGroupBox::toggled, body, &QWidget::setVisible);
    auto *form = new QFormLayout(body);
    form->setContentsMargins(0, 0, 0, 0);
    form->addRow(tr("Shape:"), m_kind);
    form->addRow(tr("Start (%1):").arg(unit), m_start);
    form->addRow(tr("Step:"), m_step);
    form->addRow(tr("End:"), m_end);
    form->addRow(tr("Step duration:"), m_stepDuration);
    form->addRow(tr("Max duration:"), m_maxDuration);
    connect(m_kind, &QComboBox::currentIndexChanged, this, &ScheduleEditor::edited);
    connect(this, &QGroupBox::toggled, this, &ScheduleEditor::edited);
}

void ScheduleEditor::setValues(const QString &kind, const QString &start, const QString &step, const QString &end,
    const QString &stepDuration, const QString &maxDuration)
{
    setChecked(true);
    m_kind->setCurrentIndex(std::max(0, m_kind->findData(kind)));
    m_start->setText(start);
    m_step->setText(step);
    m_end->setText(end);
    m_stepDuration->setText(stepDuration);
    m_maxDuration->setText(maxDuration);
}

std::optional<ScheduleText> ScheduleEditor::text() const
{
    if (!isChecked())
        return std::nullopt;
    return ScheduleText { m_kind->currentData().toString(), m_start->text(), m_step->text(), m_end->text(),
        m_stepDuration->text(), m_maxDuration->text() };
}

void ScheduleEditor::setText(const std::optional<ScheduleText> &text)
{
    if (!text) {
        setChecked(false);
        return;
    }
    setValues(text->kind, text->start, text->step, text->end, text->stepDuration, text->maxDuration);
}

} // namespace rpcscope
