#pragma once

#include <QStringList>

namespace rpcscope::cli {

/// `rpcscope-cli call`: one call, its reply shown (run's flags; no load).
int callCommand(const QStringList &arguments);

} // namespace rpcscope::cli
