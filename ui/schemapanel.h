#pragma once

#include "schema/schema.h"

#include <QWidget>

class QListWidget;
class QTreeWidget;

namespace rpcscope {

/// The schema dock: services and methods of the loaded schema, and the errors of the last load.
class SchemaPanel : public QWidget
{
    Q_OBJECT
public:
    explicit SchemaPanel(QWidget *parent = nullptr);

    void setSchema(const Schema &schema, const QString &origin);
    void setErrors(const QList<SchemaError> &errors);
    bool selectMethod(const QString &fullName);
    QString selectedMethod() const;

    QTreeWidget *tree() const { return m_tree; }
    QListWidget *errorList() const { return m_errors; }

Q_SIGNALS:
    void methodSelected(const QString &fullName);

private:
    QTreeWidget *m_tree;
    QListWidget *m_errors;
};

} // namespace rpcscope
