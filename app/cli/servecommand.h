#pragma once

#include <QStringList>

namespace rpcscope::cli {

/// `serve grpc|http|msgpack|all`: a built-in bench server until SIGINT or SIGTERM; prints its address first.
int serveCommand(const QStringList &arguments);

} // namespace rpcscope::cli
