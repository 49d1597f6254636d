#pragma once

#include <QStringList>

namespace rpcscope::cli {

/// `history list|show|delete|rename|label`: the run history database.
int historyCommand(const QStringList &arguments);

} // namespace rpcscope::cli
