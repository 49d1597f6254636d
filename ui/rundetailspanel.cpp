#include "rundetailspanel.h"

#include "jsonhighlighter.h"

#include <QFontDatabase>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QPlainTextEdit>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>

namespace rpcscope {

namespace {

QString jsonValueText(const QJsonValue &value)
{
    switch (value.type()) {
    case QJsonValue::String:
        return value.toString();
    case QJsonValue::Bool:
        return value.toBool() ? QStringLiteral("true") : QStringLiteral("false");
    case QJsonValue::Double:
        return value.toVariant().toString();
    case QJsonValue::Array: {
        const QJsonArray array = value.toArray();
        QStringList parts;
        for (const auto &v : array) {
            if (!v.isString())
                return QString::fromUtf8(QJsonDocument(array).toJson(QJsonDocument::Compact));
            parts << v.toString();
        }
        return parts.join(u' ');
    }
    case QJsonValue::Object:
        return QString::fromUtf8(QJsonDocument(value.toObject()).toJson(QJsonDocument::Compact));
    default:
        return {};
    }
}

void fillKeyValues(QTableWidget *table, const QJsonObject &object)
{
    table->clearContents();
    table->setRowCount(static_cast<int>(object.size()));
    int row = 0;
    for (auto it = object.begin(); it != object.end(); ++it, ++row) {
        auto *key = new QTableWidgetItem(it.key());
        auto *value = new QTableWidgetItem(jsonValueText(it.value()));
        value->setToolTip(value->text());
        table->setItem(row, 0, key);
        table->setItem(row, 1, value);
    }
    table->resizeColumnToContents(0);
}

QTableWidget *keyValueTable(QWidget *parent)
{
    auto *table = new QTableWidget(0, 2, parent);
    table->setHorizontalHeaderLabels({ RunDetailsPanel::tr("Key"), RunDetailsPanel::tr("Value") });
    table->horizontalHeader()->setStretchLastSection(true);
    table->verticalHeader()->hide();
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    table->setWordWrap(false);
    table->setAlternatingRowColors(true);
    return table;
}

} // namespace

RunDetailsPanel::RunDetailsPanel(QWidget *parent)
    : QWidget(parent)
    , m_header(new QLabel(this))
    , m_tabs(new QTabWidget(this))
    , m_scenario(new QPlainTextEdit(this))
    , m_environment(keyValueTable(this))
    , m_server(keyValueTable(this))
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_header->setWordWrap(true);
    m_header->setTextFormat(Qt::RichText);
    m_header->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_header);
    m_scenario->setReadOnly(true);
    m_scenario->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_scenario->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    new JsonHighlighter(m_scenario->document());
    m_tabs->addTab(m_scenario, tr("Scenario"));
    m_tabs->addTab(m_environment, tr("Environment"));
    m_tabs->addTab(m_server, tr("Server"));
    m_tabs->setTabToolTip(0, tr("What was run: the scenario document, or the CLI's flags"));
    m_tabs->setTabToolTip(1, tr("Where it ran: versions, OS, CPU, memory, CPU governor"));
    m_tabs->setTabToolTip(2, tr("The server command rpcscope started for the run, if any"));
    layout->addWidget(m_tabs, 1);
    clear();
}

void RunDetailsPanel::showRun(const RunRecord &run)
{
    m_runId = run.id;
    QString header = u"<b>" + run.displayName().toHtmlEscaped() + u"</b>";
    if (!run.name.isEmpty())
        header += QStringLiteral(" &nbsp;#%1").arg(run.id);
    header += u" &nbsp;&middot;&nbsp; " + run.method.toHtmlEscaped();
    header += u" &nbsp;&middot;&nbsp; "
        + (run.labels.isEmpty() ? tr("no labels") : tr("labels: %1").arg(run.labels.join(QStringLiteral(", "))))
              .toHtmlEscaped();
    if (!run.origin.isEmpty() && run.origin != u"rpcscope")
        header += u" &nbsp;&middot;&nbsp; " + tr("from %1").arg(run.origin).toHtmlEscaped();
    m_header->setText(header);
    m_scenario->setPlainText(run.scenario.isEmpty()
            ? tr("(no scenario stored)")
            : QString::fromUtf8(QJsonDocument(run.scenario).toJson(QJsonDocument::Indented)));
    fillKeyValues(m_environment, run.environment);
    fillKeyValues(m_server, run.server);
    m_tabs->setTabText(2, run.server.isEmpty() ? tr("Server (none)") : tr("Server"));
    m_tabs->setEnabled(true);
}

void RunDetailsPanel::clear(const QString &message)
{
    m_runId = 0;
    m_header->setText(
        message.isEmpty() ? tr("Select a run to see its scenario, environment and server.") : message.toHtmlEscaped());
    m_scenario->clear();
    m_environment->setRowCount(0);
    m_server->setRowCount(0);
    m_tabs->setTabText(2, tr("Server"));
    m_tabs->setEnabled(false);
}

} // namespace rpcscope
