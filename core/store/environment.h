#pragma once

#include "store/runrecord.h"

#include <QJsonObject>
#include <QList>
#include <QPair>
#include <QStringList>

#include <array>

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
 * server command rpcscope started ("server command: A -> B") and its environment, the client command that made the
 * calls ("client command: (rpcscope) -> python3 client.py", "client env NAME: a -> b"), the scenario's fields, then
 * the environment fingerprints' fields. Empty when the two ran the same thing in the same place. What the Compare
 * runs page, `compare` and the slides list.
 */
QStringList runDifferences(const RunRecord &a, const RunRecord &b);

/// One side of an A/B run as its name is made from it: its target ("builtin", an address, a command line) and the
/// environment given to its server.
struct AbSideIdentity {
    QString target;
    QList<QPair<QString, QString>> environment;
    QString client; ///< the client command making its calls; empty: rpcscope's own client
    QList<QPair<QString, QString>> clientEnvironment;
};

/**
 * Names for the two sides of an A/B run that say what distinguishes them, at most @p longest characters each
 * (elided in the middle, never cut mid-word): the words of their targets that differ ("server_a.py" against
 * "server_b.py"; a program by its file name, without its {port}), then those of their client commands, then the
 * environment variables that differ, the server's and the client's ("RPCSCOPE_SERVE_DELAY=1ms" against "no
 * RPCSCOPE_SERVE_DELAY"; a value that looks like a credential is not shown). The whole target when nothing differs.
 * The side's letter is not part of it: the caller adds it once.
 */
std::array<QString, 2> abSideNames(const AbSideIdentity &a, const AbSideIdentity &b, int longest = 60);

} // namespace rpcscope
