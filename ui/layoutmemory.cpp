#include "layoutmemory.h"

#include <QSettings>
#include <QSplitter>

namespace rpcscope {

void rememberSplitter(QSplitter *splitter, const QString &key)
{
    const QString name = QStringLiteral("layout/") + key;
    const QByteArray state = QSettings().value(name).toByteArray();
    if (!state.isEmpty())
        splitter->restoreState(state); // a state of another shape (widgets added since) is refused by Qt, unharmed
    QObject::connect(splitter, &QSplitter::splitterMoved, splitter,
        [splitter, name] { QSettings().setValue(name, splitter->saveState()); });
}

} // namespace rpcscope
