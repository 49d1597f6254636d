#pragma once

#include <QStringList>

namespace rpcscope::cli {

/// `rpcscope-cli merge`: the segment reports of a split run (run --segment I/N) as one run (store/segmentmerge.h).
int mergeCommand(const QStringList &arguments);

} // namespace rpcscope::cli
