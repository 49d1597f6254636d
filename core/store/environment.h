#pragma once

#include "store/runrecord.h"

#include <QJsonObject>
#include <QStringList>

namespace rpcscope {

/**
 * Where a run ran, so two runs can be told apart later: rpcscope's version and git revision, the library
 * versions (Qt, gRPC, protobuf, msgpack-c, Boost), OS, kernel, CPU model, cores, memory, hostname, and the CPU
 * frequency governor when the kernel exposes it (a "powersave" governor explains many a slow run).
 */
QJsonObject environmentFingerprint();

/// The fingerprint's fields that differ between @p a and @p b, as "key: A -> B" lines (empty when the same).
QStringList environmentDifferences(const QJsonObject &a, const QJsonObject &b);

/**
 * What differs between two runs, as "what: A -> B" lines: the method, transport, codec and target first, then the
 * environment fingerprints' fields, then the server command rpcscope started ("server command: A -> B"). Empty when
 * the two ran the same thing in the same place. What the Compare runs page, `compare` and the slides list.
 */
QStringList runDifferences(const RunRecord &a, const RunRecord &b);

} // namespace rpcscope
