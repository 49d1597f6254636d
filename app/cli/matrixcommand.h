#pragma once

#include <QStringList>

namespace rpcscope::cli {

/// `rpcscope-cli matrix`: one method over transports x codecs x payloads, one table (arguments[1] is "matrix").
int matrixCommand(const QStringList &arguments);

} // namespace rpcscope::cli
