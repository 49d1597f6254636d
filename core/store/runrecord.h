#pragma once

#include "metrics/runsnapshot.h"

#include <QDateTime>
#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <vector>

namespace rpcscope {

/// How a stored run ended (or that it has not, or came from elsewhere).
namespace RunStatus {
inline constexpr char16_t Running[] = u"running"; ///< being written now (by a process that is alive)
inline constexpr char16_t Finished[] = u"finished";
inline constexpr char16_t Stopped[] = u"stopped"; ///< the user stopped it; what was measured is kept
inline constexpr char16_t Interrupted[] = u"interrupted"; ///< its process died mid-run; kept up to the last interval
inline constexpr char16_t Imported[] = u"imported";
} // namespace RunStatus

/**
 * One run as it is kept: what was run (the scenario, the target, the environment it ran in), what was measured
 * (the snapshot: histograms, time series, CPU, statuses) and, when recorded, every call. The run store, the JSON
 * report and the importers all read and write this one value.
 */
struct RunRecord {
    qint64 id = 0; ///< in the run store; 0 = not stored
    QString name;
    QStringList labels; ///< free text, e.g. "protobuf 4.25.8"; a set (the store returns them sorted)
    QString status = QString::fromUtf16(RunStatus::Finished);
    QDateTime startedAt; ///< UTC
    QDateTime endedAt; ///< UTC; invalid while running

    QString method; ///< package.Service/Method
    QString transport; ///< grpc, http, msgpack, none
    QString codec;
    QString target; ///< the address dialled, "builtin", or a server command
    QString origin = QStringLiteral("rpcscope"); ///< or "ghz: FILE" for imports

    QJsonObject scenario; ///< the scenario document (Scenario::toJson) or the CLI flags ({"arguments": [...]})
    QJsonObject environment; ///< environmentFingerprint() of the machine that ran it
    QJsonObject server; ///< the server command rpcscope started (command, directory, environment), if any

    RunSnapshot snapshot;
    std::vector<RawSample> rawSamples; ///< empty unless the run recorded them

    /// "#12 grpc Sum 2026-12-01 10:00" when it has no name.
    QString displayName() const;
};

} // namespace rpcscope
