#pragma once

#include <QStringList>

namespace rpcscope::cli {

/// `rpcscope-cli codecs`: what encoding and decoding a message costs in each codec, without any network.
int codecsCommand(const QStringList &arguments);

} // namespace rpcscope::cli
