#include "schemapanel.h"

#include "sourceviewer.h"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace rpcscope {

namespace {
constexpr int kMethodRole = Qt::UserRole + 1;
constexpr int kFileRole = Qt::UserRole + 2;
constexpr int kLineRole = Qt::UserRole + 3;
constexpr int kColumnRole = Qt::UserRole + 4;
} // namespace

SchemaPanel::SchemaPanel(QWidget *parent)
    : QWidget(parent)
    , m_tree(new QTreeWidget(this))
    , m_importPaths(new QListWidget(this))
    , m_removeImportPath(new QPushButton(tr("Remove")))
    , m_errors(new QListWidget(this))
{
    m_tree->setObjectName(QStringLiteral("schemaTree"));
    m_tree->setHeaderLabels({ tr("Service / method"), tr("Kind") });
    m_tree->header()->setStretchLastSection(false);
    m_tree->header()->setSectionResizeMode(0, QHeaderView::Stretch);
    m_tree->header()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
    m_tree->setToolTip(tr("Services and methods of the loaded schema. Drop .proto files on the window to load more."));

    m_importPaths->setObjectName(QStringLiteral("importPaths"));
    m_importPaths->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_importPaths->setToolTip(
        tr("Folders searched for imported .proto files; changing them reloads the .proto files."));
    m_importPaths->setMaximumHeight(m_importPaths->fontMetrics().lineSpacing() * 4 + 8);
    auto *addPath = new QPushButton(tr("Add folder…"));
    addPath->setObjectName(QStringLiteral("addImportPath"));
    addPath->setToolTip(tr("Add a folder to search for imported .proto files."));
    m_removeImportPath->setObjectName(QStringLiteral("removeImportPath"));
    m_removeImportPath->setToolTip(tr("Remove the selected import folders."));
    m_removeImportPath->setEnabled(false);
    m_askFolder = [this] { return QFileDialog::getExistingDirectory(this, tr("Import folder")); };

    m_errors->setObjectName(QStringLiteral("schemaErrors"));
    m_errors->setVisible(false);
    m_errors->setWordWrap(true);
    m_errors->setToolTip(tr("Problems found while loading the schema, as file:line:column: message; double-click one "
                            "to see the line."));

    auto *pathsHeader = new QHBoxLayout;
    pathsHeader->addWidget(new QLabel(tr("Import paths:")), 1);
    pathsHeader->addWidget(addPath);
    pathsHeader->addWidget(m_removeImportPath);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_tree, 3);
    layout->addLayout(pathsHeader);
    layout->addWidget(m_importPaths);
    layout->addWidget(m_errors, 1);

    connect(m_tree, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem *item) {
        if (item && item->data(0, kMethodRole).isValid())
            Q_EMIT methodSelected(item->data(0, kMethodRole).toString());
    });
    connect(addPath, &QPushButton::clicked, this, [this] {
        const QString folder = m_askFolder();
        if (!folder.isEmpty())
            addImportPath(folder);
    });
    connect(m_removeImportPath, &QPushButton::clicked, this, &SchemaPanel::removeSelectedImportPaths);
    connect(m_importPaths, &QListWidget::itemSelectionChanged, this,
        [this] { m_removeImportPath->setEnabled(!m_importPaths->selectedItems().isEmpty()); });
    connect(
        m_errors, &QListWidget::itemActivated, this, [this](QListWidgetItem *item) { showError(m_errors->row(item)); });
}

void SchemaPanel::setSchema(const Schema &schema, const QString &origin)
{
    const QSignalBlocker blocker(m_tree);
    m_tree->clear();
    for (const ServiceInfo &service : schema.services()) {
        auto *serviceItem = new QTreeWidgetItem(m_tree, { service.name, QString() });
        serviceItem->setToolTip(0, tr("%1, from %2 (%3)").arg(service.name, service.file, origin));
        for (const MethodInfo &method : service.methods) {
            auto *item = new QTreeWidgetItem(serviceItem, { method.name, method.kindName() });
            item->setData(0, kMethodRole, method.fullName());
            item->setToolTip(
                0, QStringLiteral("%1(%2) returns (%3)").arg(method.fullName(), method.inputType, method.outputType));
            if (method.clientStreaming || method.serverStreaming)
                item->setToolTip(1,
                    tr("A %1 method: one call is one stream, timed whole and per message (gRPC only; "
                       "the Load tab's stream settings drive it).")
                        .arg(method.kindName()));
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
        item->setData(kFileRole, error.file);
        item->setData(kLineRole, error.line);
        item->setData(kColumnRole, error.column);
        if (!error.file.isEmpty())
            item->setToolTip(tr("Double-click to see %1 at line %2.").arg(error.file).arg(error.line));
    }
    m_errors->setVisible(!errors.isEmpty());
}

bool SchemaPanel::showError(int row)
{
    const QListWidgetItem *item = m_errors->item(row);
    if (!item || item->data(kFileRole).toString().isEmpty())
        return false;
    if (!m_viewer)
        m_viewer = new SourceViewer(this); // one window, reused: errors are looked at one after the other
    const bool ok = m_viewer->showLocation(
        item->data(kFileRole).toString(), item->data(kLineRole).toInt(), item->data(kColumnRole).toInt());
    m_viewer->show();
    m_viewer->raise();
    m_viewer->activateWindow();
    return ok;
}

QStringList SchemaPanel::importPaths() const
{
    QStringList paths;
    for (int i = 0; i < m_importPaths->count(); ++i)
        paths << m_importPaths->item(i)->text();
    return paths;
}

void SchemaPanel::setImportPaths(const QStringList &paths)
{
    m_importPaths->clear();
    for (const QString &path : paths) {
        if (importPaths().contains(path))
            continue;
        m_importPaths->addItem(path);
    }
    m_removeImportPath->setEnabled(false);
}

void SchemaPanel::addImportPath(const QString &path)
{
    if (path.isEmpty() || importPaths().contains(path))
        return;
    m_importPaths->addItem(path);
    Q_EMIT importPathsChanged(importPaths());
}

void SchemaPanel::removeSelectedImportPaths()
{
    const QList<QListWidgetItem *> selected = m_importPaths->selectedItems();
    if (selected.isEmpty())
        return;
    qDeleteAll(selected);
    Q_EMIT importPathsChanged(importPaths());
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

bool SchemaPanel::selectMethodOrFirst(const QString &fullName)
{
    if (!fullName.isEmpty() && selectMethod(fullName))
        return true;
    for (int s = 0; s < m_tree->topLevelItemCount(); ++s) {
        QTreeWidgetItem *service = m_tree->topLevelItem(s);
        if (service->childCount() > 0) {
            m_tree->setCurrentItem(service->child(0));
            return true;
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
