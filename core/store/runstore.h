#pragma once

#include "runrecord.h"

#include <QDateTime>
#include <QHash>
#include <QString>

#include <optional>
#include <vector>

class QSqlQuery;

namespace rpcscope {

/// One line of the history list: what a table of runs shows, without the histograms.
struct RunListEntry {
    qint64 id = 0;
    QString name;
    QStringList labels;
    QString status;
    QDateTime startedAt;
    QDateTime endedAt;
    QString method;
    QString transport;
    QString codec;
    QString target;
    QString origin;
    uint64_t calls = 0;
    uint64_t failed = 0;
    double rps = 0;
    double meanNs = 0;
    uint64_t p50Ns = 0;
    uint64_t p99Ns = 0;
    /// An OK call at least: else the run has no latency and no rate to show ("-", never 0 ns).
    bool hasOkCalls() const { return calls > failed; }
};

/// Which runs list() returns. Empty fields match everything; matching is case-insensitive and by substring.
struct RunFilter {
    QString text; ///< in the name, method, target or a label
    QString method;
    QString target;
    QString label;
    QDateTime since;
    int limit = 0; ///< 0 = all; the newest first
};

/**
 * The run history: a SQLite database (Qt SQL) in WAL mode. A run is written while it goes (beginRun, then
 * updateRun every interval, then finishRun), each write one transaction, so a crash or kill -9 leaves the run
 * with everything up to its last interval and never a corrupt file; a run whose process is gone is reported as
 * interrupted. The schema carries a version and is migrated forward when opened for writing; readers open it
 * read-only and write nothing.
 *
 * One RunStore belongs to the thread that opened it (Qt SQL connections are per thread). Several processes may
 * use one database at once (WAL readers do not block the writer; writers wait up to 5 s for each other).
 */
class RunStore {
public:
    static constexpr int kSchemaVersion = 4;

    RunStore();
    ~RunStore();
    RunStore(const RunStore &) = delete;
    RunStore &operator=(const RunStore &) = delete;

    /// ~/.local/share/rpcscope/runs.sqlite (XDG data home), shared by the GUI and the CLI.
    static QString defaultPath();
    /// The history both front ends use when no --db is given: RPCSCOPE_DB when set, else defaultPath().
    static QString chosenPath();

    enum class OpenMode {
        ReadWrite, ///< creates the file (and its folder) when missing, migrates an older schema, marks dead runs
        /**
         * For readers (lists, reports, comparisons): writes nothing, not even a migration. The file must exist and
         * hold this version's schema; a run left running by a process that is gone reads as interrupted. Every
         * write fails, with an error saying so.
         */
        ReadOnly,
    };

    /**
     * Opens @p path; false with @p error naming the path. Read-write (the default) creates it and its folder and
     * migrates an older schema; read-only refuses a missing file and any other schema version.
     */
    bool open(const QString &path, QString *error, OpenMode mode = OpenMode::ReadWrite);
    bool isOpen() const;
    bool isReadOnly() const { return m_readOnly; }
    QString path() const { return m_path; }
    int schemaVersion() const;

    /// Inserts @p run as running and owned by this process; sets run->id. The record's snapshot may be empty.
    bool beginRun(RunRecord *run, QString *error);
    /// Replaces the run's measurements with @p snapshot: interval points not yet stored are appended.
    bool updateRun(qint64 id, const RunSnapshot &snapshot, QString *error);
    /// The last update, the raw samples, the end time and the final status (finished or stopped).
    bool finishRun(qint64 id, const RunSnapshot &snapshot, const std::vector<RawSample> &rawSamples,
        const QString &status, QString *error);
    /// Stores the run's CPU profiles (RunRecord::serverProfile, clientProfile), compressed; those it lacks stay as
    /// they were.
    bool saveProfiles(const RunRecord &run, QString *error);
    /// Stores a whole run at once (imports, or undoing a delete: a non-zero given.id is kept). Returns the id, 0 on
    /// error.
    qint64 addRun(const RunRecord &given, QString *error);

    std::vector<RunListEntry> list(const RunFilter &filter, QString *error) const;
    /// How much of a run load() reads.
    enum class Parts {
        Everything, ///< the snapshot with its time series, the raw samples, and the metadata
        Metadata, ///< names, labels, times, scenario, environment, server: no measurements (cheap for any run size)
    };
    /// The run: with Parts::Everything the snapshot with its time series, raw samples, scenario, environment.
    std::optional<RunRecord> load(qint64 id, QString *error, Parts parts = Parts::Everything) const;
    /**
     * A run named the way people name them: an ID ("12" or "#12"), "last" (the newest run: the top row of list()),
     * "last~N" (N runs before it), "label:NAME" (the newest run labelled NAME) or "label:NAME~N". Returns the ID, or
     * 0 with @p error saying what was not found or could not be read. An ID is returned as given (load() checks it).
     */
    qint64 resolve(const QString &reference, QString *error) const;
    /// @p text has the form of a resolve() reference (it may still name no run).
    static bool isReference(const QString &text);
    /// Every run carrying exactly @p label, oldest first; empty (and @p error set) when none does.
    std::vector<qint64> idsWithLabel(const QString &label, QString *error) const;

    bool rename(qint64 id, const QString &name, QString *error);
    bool setLabels(qint64 id, const QStringList &labels, QString *error);
    bool remove(qint64 id, QString *error);

    /// Marks runs left "running" by a process that is gone (same host) as interrupted; returns how many.
    int markInterruptedRuns();

    /// For migration tests: creates a database at an older schema @p version, as that version would have.
    static bool createAtVersion(const QString &path, int version, QString *error);

private:
    /// Runs @p query, which must touch exactly run @p id; otherwise false with the reason ("no run #7 in PATH").
    bool execOnRun(QSqlQuery &query, qint64 id, QString *error) const;
    /// False with @p error when the store was opened read-only (before SQLite says it less clearly).
    bool checkWritable(QString *error) const;

    QString m_connection;
    QString m_path;
    bool m_readOnly = false;
    QHash<qint64, qsizetype> m_storedIntervals; ///< per run this process writes: interval points already stored
};

} // namespace rpcscope
