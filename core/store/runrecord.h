#pragma once

#include "metrics/runsnapshot.h"
#include "profile/profile.h"

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

/// One worker of a split run (`run --segment I/N`): where it ran, how its clock stood, and its own figures.
struct WorkerRecord {
    int index = 0; ///< I
    QString host;
    int64_t timedStartUnixUs = 0; ///< when its timed phase began (wall clock, us since 1970); 0 = unknown
    /// Its wall clock as the kernel judged it (adjtimex): synchronized (by NTP or PTP) with an estimated error, or not
    /// synchronized, or unknown. Workers' time series line up only as well as their clocks do.
    enum class Clock { Unknown, Synchronized, Unsynchronized };
    Clock clock = Clock::Unknown;
    double clockErrorUs = -1; ///< Synchronized: the kernel's estimated error; -1 = unknown
    // Its own figures, from its snapshot.
    uint64_t calls = 0;
    uint64_t failed = 0;
    double seconds = 0; ///< its timed phase
    uint64_t p50Ns = 0;
    uint64_t p99Ns = 0;
    double clientCpuSeconds = 0;
    uint64_t clientPeakRssBytes = 0;
    QJsonObject environment; ///< a merged run: the worker's environment fingerprint (a segment's is the run's own)

    double requestsPerSecond() const { return seconds > 0 ? static_cast<double>(calls) / seconds : 0.0; }
    /// Fills the figures from @p snapshot.
    void takeFigures(const RunSnapshot &snapshot);
};

/// A run split over workers: one segment's report (one worker, itself) or their merge (every worker that reported).
struct SplitRecord {
    int count = 0; ///< N; 0 = not a split run
    /// The whole plan's fingerprint (planFingerprint()): segments of one plan share it, so a merge can tell them apart
    /// from another plan's.
    QString planId;
    QString startAt; ///< the start time asked for (--start-at, RFC 3339 UTC); empty = none
    bool partial = false; ///< a merge of fewer than count segments (merge --partial)
    QList<int> missing; ///< partial: the segments that were not there
    QList<WorkerRecord> workers; ///< by index

    bool isSplit() const { return count > 0; }
    /// The earliest of the workers' timed starts (us since 1970), the time the others' starts are told against; 0 =
    /// none known.
    int64_t firstStartUnixUs() const
    {
        int64_t first = 0;
        for (const WorkerRecord &w : workers) {
            if (w.timedStartUnixUs > 0 && (first == 0 || w.timedStartUnixUs < first))
                first = w.timedStartUnixUs;
        }
        return first;
    }
};

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
    SplitRecord split; ///< a segment of a split run, or their merge; empty otherwise

    RunSnapshot snapshot;
    std::vector<RawSample> rawSamples; ///< empty unless the run recorded them
    std::optional<Profile> serverProfile; ///< --profile: the server's CPU during the timed phase
    std::optional<Profile> clientProfile; ///< --profile-client: rpcscope's own CPU

    /// "#12 grpc Sum 2026-12-01 10:00" when it has no name.
    QString displayName() const;
};

} // namespace rpcscope
