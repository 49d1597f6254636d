#pragma once

#include <QStringList>

namespace rpcscope::cli {

/// `rpcscope-cli methods`: the methods a schema offers, one per line as --call takes them (shell completion uses it).
int methodsCommand(const QStringList &arguments);

} // namespace rpcscope::cli
