#pragma once

#include <QCommandLineParser>

namespace rpcscope::cli {

/// `run`'s flags (ghz's names where ghz has one), their help, and its description: shared by run, matrix and ab.
void addRunOptions(QCommandLineParser &parser);

} // namespace rpcscope::cli
