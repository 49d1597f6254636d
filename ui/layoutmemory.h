#pragma once

#include <QString>

class QSplitter;

namespace rpcscope {

/**
 * Restores @p splitter's sizes from the settings ("layout/<key>", as the user last left them) and saves them
 * whenever the user moves it. Call once its widgets are in; a splitter never moved keeps the sizes it was given.
 */
void rememberSplitter(QSplitter *splitter, const QString &key);

} // namespace rpcscope
