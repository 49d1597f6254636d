#pragma once

#include "scenario.h"

#include <QList>
#include <QString>

namespace rpcscope {

/**
 * What a scenario file may do on its own: a shared document is untrusted input, so without its reader's say-so
 * (`--trust`, or a confirmation in the GUI) every file it names stays inside the document's folder, symbolic links
 * resolved (schema files, import paths, protosets, TLS files, request files, raw samples, exports, the history
 * database), and the outputs it names (raw samples, exports) are new files: it never overwrites one.
 *
 * Returns one problem per offending field of @p document, which Scenario::load() read from @p documentPath (its
 * paths are absolute): field "raw_samples", message "/home/u/.bashrc is outside the document's folder (/tmp/x)".
 * Empty when the document keeps to its folder.
 */
QList<ScenarioProblem> confinementProblems(const Scenario &document, const QString &documentPath);

} // namespace rpcscope
