#pragma once

#include <QStringList>

namespace rpcscope::cli {

/// `export ID... [--db PATH] -O FORMAT -o FILE [-O FORMAT -o FILE ...]`: runs from the history as files.
int exportCommand(const QStringList &arguments);

/// `import FILE|DIR... [--db PATH] [--label TEXT]`: ghz or rpcscope-run JSON reports into the history.
int importCommand(const QStringList &arguments);

} // namespace rpcscope::cli
