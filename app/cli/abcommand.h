#pragma once

#include <QStringList>

namespace rpcscope::cli {

/// `ab --a X --b Y [run flags]`: one scenario against two targets in alternating blocks, then the verdict.
int abCommand(const QStringList &arguments);

} // namespace rpcscope::cli
