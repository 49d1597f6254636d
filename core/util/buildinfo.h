#pragma once

#include <QList>
#include <QPair>
#include <QString>

namespace rpcscope {

/// rpcscope's version, git revision and the versions of the libraries it runs on (About box, run fingerprints).
QList<QPair<QString, QString>> buildInfo();
/// The source tree's `git describe --always --dirty` when this binary was built ("unknown" outside git).
QString gitRevision();

} // namespace rpcscope
