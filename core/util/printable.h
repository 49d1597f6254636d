#pragma once

#include <QString>

namespace rpcscope {

/**
 * @p text made safe to print on a terminal: control characters (escape sequences a server or a shared report could
 * put in an error message or a reply) are written as \xNN, so nothing we print can move the cursor, recolour or
 * retitle the terminal. Newlines are kept when @p keepNewlines.
 */
QString printable(const QString &text, bool keepNewlines = false);

} // namespace rpcscope
