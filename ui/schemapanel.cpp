#include "schemapanel.h"

#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace rpcscope {

namespace {
constexpr int kMethodRole = Qt::UserRole + 1;
}

SchemaPanel::SchemaPanel(QWidget *parent)
    : QWidget(parent)
    , m_tree(new QTreeWidget(this))
    , m_errors(new QListWidget(this))
{
    m_tree->setObjectName(QStringLiteral("schemaTree"));
    m_tree->setHeaderLabels({tr("Service / method"), tr("Kind")});
    m_tree->header()->setStretchLastSection(false);
    m_tree->header()->setSectionResizeMode(0, QHeaderView::Stretch);
    m_tree->header()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
    m_tree->setToolTip(tr("Services and methods of the loaded schema. Drop .proto files on the window to load more."));
    m_errors->setObjectName(QStringLiteral("schemaErrors"));
    m_errors->setVisible(false);
    m_errors->setWordWrap(true);
    m_errors->setToolTip(tr("Problems found while loading the schema, as file:line:column: message."));

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_tree, 3);
    layout->addWidget(m_errors, 1);

    connect(m_tree, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem *item) {
        if (item && item->data(0, kMethodRole).isValid())
            Q_EMIT methodSelected(item->data(0, kMethodRole).toString());
    });
}

void SchemaPanel::setSchema(const Schema &schema, const QString &origin)
{
    const QSignalBlocker blocker(m_tree);
    m_tree->clear();
    for (const ServiceInfo &service : schema.services()) {
        auto *serviceItem = new QTreeWidgetItem(m_tree, {service.name, QString()});
        serviceItem->setToolTip(0, tr("%1, from %2 (%3)").arg(service.name, service.file, origin));
        for (const MethodInfo &method : service.methods) {
            auto *item = new QTreeWidgetItem(serviceItem, {method.name, method.kindName()});
            item->setData(0, kMethodRole, method.fullName());
            item->setToolTip(0, QStringLiteral("%1(%2) returns (%3)").arg(method.fullName(), method.inputType, method.outputType));
            if (method.clientStreaming || method.serverStreaming) {
                item->setDisabled(true);
                item->setToolTip(1, tr("Streaming methods cannot be benchmarked yet."));
            }
        }
    }
    m_tree->expandAll();
}

void SchemaPanel::setErrors(const QList<SchemaError> &errors)
{
    m_errors->clear();
    for (const SchemaError &error : errors) {
        auto *item = new QListWidgetItem(error.toString(), m_errors);
        item->setForeground(QColor(0xd0, 0x3b, 0x3b));
    }
    m_errors->setVisible(!errors.isEmpty());
}

bool SchemaPanel::selectMethod(const QString &fullName)
{
    for (int s = 0; s < m_tree->topLevelItemCount(); ++s) {
        QTreeWidgetItem *service = m_tree->topLevelItem(s);
        for (int m = 0; m < service->childCount(); ++m) {
            if (service->child(m)->data(0, kMethodRole).toString() == fullName) {
                m_tree->setCurrentItem(service->child(m));
                return true;
            }
        }
    }
    return false;
}

QString SchemaPanel::selectedMethod() const
{
    const QTreeWidgetItem *item = m_tree->currentItem();
    return item ? item->data(0, kMethodRole).toString() : QString();
}

} // namespace rpcscope
