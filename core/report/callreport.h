#pragma once

#include "engine/singlecall.h"

#include <QString>

namespace rpcscope {

/// What a shown call was, for its report's first line and for reading its times.
struct CallDescription {
    QString method; ///< "pkg.Service/Method"
    QString transport; ///< "grpc", "http", ...
    QString codec;
    QString target; ///< empty in process
    bool clientStreams = false;
    bool serverStreams = false;
    bool inProcess = false; ///< no connection to make: the latency has no connecting in it
};

/**
 * One call as `rpcscope-cli call` prints it and the GUI's Reply tab shows it: what was called, the status with its
 * error in full, latency and bytes, headers, the reply (every message of a stream, numbered and timed as a load run
 * times them), trailers.
 */
QString formatSingleCall(const CallDescription &call, const SingleCallResult &result);

} // namespace rpcscope
