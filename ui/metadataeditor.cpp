#include "metadataeditor.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>

namespace rpcscope {

MetadataEditor::MetadataEditor(QWidget *parent)
    : QWidget(parent), m_table(new QTableWidget(0, 2, this)), m_remove(new QPushButton(tr("Remove")))
{
    m_table->setObjectName(QStringLiteral("metadataTable"));
    m_table->setHorizontalHeaderLabels({ tr("Key"), tr("Value") });
    m_table->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Interactive);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->horizontalHeader()->resizeSection(0, 140);
    m_table->verticalHeader()->setVisible(false);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setToolTip(tr("Sent with every call: gRPC metadata, or HTTP headers; keys are lowercased."));
    m_table->setTabKeyNavigation(false); // Tab leaves the table, as in the other fields
    auto *add = new QPushButton(tr("Add"));
    add->setObjectName(QStringLiteral("metadataAdd"));
    add->setToolTip(tr("Add a key/value row."));
    m_remove->setObjectName(QStringLiteral("metadataRemove"));
    m_remove->setToolTip(tr("Remove the selected rows."));
    m_remove->setEnabled(false);

    auto *buttons = new QHBoxLayout;
    buttons->addWidget(add);
    buttons->addWidget(m_remove);
    buttons->addStretch();
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_table, 1);
    layout->addLayout(buttons);

    connect(add, &QPushButton::clicked, this, &MetadataEditor::addRow);
    connect(m_remove, &QPushButton::clicked, this, &MetadataEditor::removeSelectedRows);
    connect(m_table, &QTableWidget::itemChanged, this, [this] {
        if (!m_loading)
            Q_EMIT edited();
    });
    auto updateRemove = [this] {
        m_remove->setEnabled(!m_table->selectionModel()->selectedRows().isEmpty() || m_table->currentRow() >= 0);
    };
    connect(m_table, &QTableWidget::currentCellChanged, this, updateRemove);
    connect(m_table, &QTableWidget::itemSelectionChanged, this, updateRemove);
}

QList<QPair<QString, QString>> MetadataEditor::pairs() const
{
    QList<QPair<QString, QString>> result;
    for (int row = 0; row < m_table->rowCount(); ++row) {
        const QTableWidgetItem *key = m_table->item(row, 0);
        const QTableWidgetItem *value = m_table->item(row, 1);
        const QString k = key ? key->text().trimmed() : QString();
        const QString v = value ? value->text().trimmed() : QString();
        if (!k.isEmpty() || !v.isEmpty())
            result.append({ k, v });
    }
    return result;
}

void MetadataEditor::setPairs(const QList<QPair<QString, QString>> &pairs)
{
    m_loading = true;
    m_table->setRowCount(0);
    for (const auto &[key, value] : pairs)
        appendRow(key, value);
    m_loading = false;
    m_remove->setEnabled(m_table->currentRow() >= 0);
}

void MetadataEditor::appendRow(const QString &key, const QString &value)
{
    const int row = m_table->rowCount();
    m_table->insertRow(row);
    m_table->setItem(row, 0, new QTableWidgetItem(key));
    m_table->setItem(row, 1, new QTableWidgetItem(value));
}

void MetadataEditor::addRow()
{
    m_loading = true; // an empty row changes nothing sent
    appendRow(QString(), QString());
    m_loading = false;
    const int row = m_table->rowCount() - 1;
    m_table->setCurrentCell(row, 0);
    m_table->editItem(m_table->item(row, 0));
}

void MetadataEditor::removeSelectedRows()
{
    QList<int> rows;
    for (const QModelIndex &index : m_table->selectionModel()->selectedRows())
        rows << index.row();
    if (rows.isEmpty() && m_table->currentRow() >= 0)
        rows << m_table->currentRow();
    if (rows.isEmpty())
        return;
    std::sort(rows.begin(), rows.end(), std::greater<>()); // from the bottom, so the other indices stay valid
    for (int row : rows)
        m_table->removeRow(row);
    Q_EMIT edited();
}

} // namespace rpcscope
