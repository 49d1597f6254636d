#include "runstore.h"

#include "runjson.h"
#include "secrets.h"
#include "util/printable.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QStandardPaths>
#include <QSysInfo>
#include <QThread>

#include <atomic>
#include <csignal>
#include <cstring>
#include <unistd.h>

namespace rpcscope {

QString RunRecord::displayName() const
{
    if (!name.isEmpty())
        return name;
    QString text = id > 0 ? QStringLiteral("#%1").arg(id) : QString();
    for (const QString &part : { transport, method.section(u'/', -1) }) {
        if (!part.isEmpty())
            text += (text.isEmpty() ? QString() : QStringLiteral(" ")) + part;
    }
    if (startedAt.isValid())
        text += u' ' + startedAt.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm"));
    return text;
}

namespace {

std::atomic<int> g_connections { 0 };

QByteArray compact(const QJsonObject &o)
{
    return QJsonDocument(o).toJson(QJsonDocument::Compact);
}

QJsonObject objectFrom(const QVariant &v)
{
    return QJsonDocument::fromJson(v.toByteArray()).object();
}

QString timeText(const QDateTime &t)
{
    return t.isValid() ? t.toUTC().toString(Qt::ISODateWithMs) : QString();
}

QDateTime timeFrom(const QVariant &v)
{
    const QString text = v.toString();
    return text.isEmpty() ? QDateTime() : QDateTime::fromString(text, Qt::ISODateWithMs).toUTC();
}

QString sqlError(const QSqlQuery &q)
{
    return q.lastError().text();
}

/// Identifies this process across pid reuse: the boot and the process's start time (in clock ticks since boot).
QString processIdentity(pid_t pid)
{
    QFile boot(QStringLiteral("/proc/sys/kernel/random/boot_id"));
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!boot.open(QIODevice::ReadOnly) || !stat.open(QIODevice::ReadOnly))
        return {};
    const QByteArray line = stat.readAll();
    // The command name (field 2) may hold spaces and parentheses: count fields after its closing ')'.
    const QList<QByteArray> fields = line.mid(line.lastIndexOf(')') + 2).split(' ');
    if (fields.size() < 20)
        return {};
    return QString::fromLatin1(boot.readAll().trimmed()) + u'/' + QString::fromLatin1(fields.at(19));
}

/// The process that began a run (on this host) is still the one running: its pid is alive and is the same process.
bool ownerAlive(const QVariant &pid, const QVariant &identity)
{
    const auto id = static_cast<pid_t>(pid.toLongLong());
    return id > 0 && (::kill(id, 0) == 0 || errno == EPERM) && processIdentity(id) == identity.toString();
}

/// @p status as it is now: a run still "running" whose process on this host is gone was interrupted.
QString statusNow(const QString &status, const QVariant &host, const QVariant &pid, const QVariant &identity)
{
    if (status == QStringView(RunStatus::Running) && host.toString() == QSysInfo::machineHostName()
        && !ownerAlive(pid, identity))
        return QString::fromUtf16(RunStatus::Interrupted);
    return status;
}

/// Schema steps: step k brings a database from version k-1 to k.
bool migrateStep(QSqlDatabase &db, int to, QString *error)
{
    QSqlQuery q(db);
    auto exec = [&](const QString &sql) {
        if (q.exec(sql))
            return true;
        *error = QStringLiteral("schema version %1: %2").arg(to).arg(sqlError(q));
        return false;
    };
    if (to == 1) {
        return exec(QStringLiteral("CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)"))
            && exec(QStringLiteral(
                "CREATE TABLE runs(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL DEFAULT '', "
                "labels TEXT NOT NULL DEFAULT '[]', status TEXT NOT NULL, started_at TEXT, ended_at TEXT, "
                "method TEXT, transport TEXT, codec TEXT, target TEXT, origin TEXT, scenario TEXT, environment TEXT, "
                "server TEXT, owner_host TEXT, owner_pid INTEGER, owner_identity TEXT, calls INTEGER DEFAULT 0, "
                "failed INTEGER DEFAULT 0, rps REAL DEFAULT 0, mean_ns REAL DEFAULT 0, p50_ns INTEGER DEFAULT 0, "
                "p99_ns INTEGER DEFAULT 0, snapshot TEXT)"))
            && exec(QStringLiteral("CREATE TABLE intervals(run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE "
                                   "CASCADE, seq INTEGER NOT NULL, data TEXT NOT NULL, PRIMARY KEY(run_id, seq))"));
    }
    if (to == 2) {
        // Labels move from a JSON column to rows (so a filter can use an index); raw samples get their own table.
        if (!exec(QStringLiteral("CREATE TABLE run_labels(run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE "
                                 "CASCADE, label TEXT NOT NULL, PRIMARY KEY(run_id, label))"))
            || !exec(QStringLiteral("CREATE INDEX run_labels_label ON run_labels(label)"))
            || !exec(QStringLiteral("CREATE TABLE raw_samples(run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON "
                                    "DELETE CASCADE, data BLOB NOT NULL)"))
            || !exec(QStringLiteral("CREATE INDEX runs_started ON runs(started_at)")))
            return false;
        QList<QPair<qint64, QStringList>> labels;
        if (!exec(QStringLiteral("SELECT id, labels FROM runs")))
            return false;
        while (q.next()) {
            QStringList list;
            for (const auto &v : QJsonDocument::fromJson(q.value(1).toByteArray()).array())
                list << v.toString();
            labels.append({ q.value(0).toLongLong(), list });
        }
        QSqlQuery insert(db);
        insert.prepare(QStringLiteral("INSERT OR IGNORE INTO run_labels(run_id, label) VALUES(?, ?)"));
        for (const auto &[id, list] : labels) {
            for (const QString &label : list) {
                insert.addBindValue(id);
                insert.addBindValue(label);
                if (!insert.exec()) {
                    *error = QStringLiteral("schema version 2: %1").arg(insert.lastError().text());
                    return false;
                }
            }
        }
        return exec(QStringLiteral("UPDATE runs SET labels = '[]'"));
    }
    if (to == 3) // split runs (run --segment, merge): the plan, the start time and every worker's figures, as JSON
        return exec(QStringLiteral("ALTER TABLE runs ADD COLUMN split TEXT"));
    if (to == 4) // CPU profiles (--profile): a run's server and client profile, compressed JSON
        return exec(QStringLiteral("CREATE TABLE profiles(run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE "
                                   "CASCADE, scope TEXT NOT NULL, data BLOB NOT NULL, PRIMARY KEY(run_id, scope))"));
    *error = QStringLiteral("no migration to schema version %1").arg(to);
    return false;
}

/// Inserts (or replaces) @p run's profiles under @p id with @p q; false with q's error.
bool insertProfiles(QSqlQuery &q, qint64 id, const RunRecord &run)
{
    for (const std::optional<Profile> &profile : { run.serverProfile, run.clientProfile }) {
        if (!profile)
            continue;
        q.prepare(QStringLiteral("INSERT OR REPLACE INTO profiles(run_id, scope, data) VALUES(?, ?, ?)"));
        q.addBindValue(id);
        q.addBindValue(profile->scope);
        q.addBindValue(qCompress(QJsonDocument(profileToJson(*profile)).toJson(QJsonDocument::Compact)));
        if (!q.exec())
            return false;
    }
    return true;
}

int readVersion(QSqlDatabase &db)
{
    QSqlQuery q(db);
    if (!q.exec(QStringLiteral("SELECT value FROM meta WHERE key = 'schema_version'")) || !q.next())
        return 0;
    return q.value(0).toInt();
}

bool migrate(QSqlDatabase &db, int target, QString *error)
{
    int version = readVersion(db);
    if (version > RunStore::kSchemaVersion) {
        *error = QStringLiteral("made by a newer rpcscope (schema version %1; this one knows up to %2)")
                     .arg(version)
                     .arg(RunStore::kSchemaVersion);
        return false;
    }
    while (version < target) {
        // Each step under the database's write lock (BEGIN IMMEDIATE waits for it, up to the busy timeout), with the
        // version read again under it: two rpcscope processes opening one new history at once (runs started
        // together, a run and the GUI) both read version 0 before either wrote, and the second then tried to create
        // the tables the first had just made ("table run_labels already exists").
        QSqlQuery begin(db);
        if (!begin.exec(QStringLiteral("BEGIN IMMEDIATE"))) {
            *error = sqlError(begin);
            return false;
        }
        if (const int now = readVersion(db); now > version) {
            QSqlQuery(db).exec(QStringLiteral("COMMIT"));
            version = now; // another process migrated meanwhile
            if (version > RunStore::kSchemaVersion) {
                *error = QStringLiteral("made by a newer rpcscope (schema version %1; this one knows up to %2)")
                             .arg(version)
                             .arg(RunStore::kSchemaVersion);
                return false;
            }
            continue;
        }
        QSqlQuery q(db);
        if (!migrateStep(db, version + 1, error)
            || !q.exec(QStringLiteral("INSERT OR REPLACE INTO meta(key, value) VALUES('schema_version', '%1')")
                           .arg(version + 1))) {
            if (error->isEmpty())
                *error = sqlError(q);
            QSqlQuery(db).exec(QStringLiteral("ROLLBACK"));
            return false;
        }
        if (QSqlQuery commit(db); !commit.exec(QStringLiteral("COMMIT"))) {
            *error = sqlError(commit);
            return false;
        }
        ++version;
    }
    return true;
}

/// A read-only connection to @p path: nothing is created or changed, and the schema must be this version's.
bool openReadOnlyConnection(const QString &name, const QString &path, QString *error)
{
    if (!QFileInfo(path).isFile()) {
        *error = QStringLiteral("%1: no run history there (nothing has been saved to it yet)").arg(path);
        return false;
    }
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
    db.setDatabaseName(path);
    db.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=5000;QSQLITE_OPEN_READONLY"));
    if (!db.open()) {
        *error = QStringLiteral("%1: %2").arg(path, db.lastError().text());
        return false;
    }
    QSqlQuery q(db);
    // Reading the schema reads the header: a file that is not a database at all fails here.
    if (!q.exec(QStringLiteral("SELECT count(*) FROM sqlite_master")) || !q.next()) {
        *error = QStringLiteral("%1: not an rpcscope run database (%2)").arg(path, sqlError(q));
        return false;
    }
    q.finish();
    const int version = readVersion(db);
    if (version == RunStore::kSchemaVersion)
        return true;
    if (version > RunStore::kSchemaVersion)
        *error = QStringLiteral("%1: made by a newer rpcscope (schema version %2; this one knows up to %3)")
                     .arg(path)
                     .arg(version)
                     .arg(RunStore::kSchemaVersion);
    else if (version == 0)
        *error = QStringLiteral("%1: not an rpcscope run database (no schema version)").arg(path);
    else
        *error = QStringLiteral("%1: made by an older rpcscope (schema version %2; this one reads %3): it is updated "
                                "the next time rpcscope writes to it (a run, an import, the GUI), not by a reader")
                     .arg(path)
                     .arg(version)
                     .arg(RunStore::kSchemaVersion);
    return false;
}

bool openConnection(const QString &name, const QString &path, QString *error)
{
    const QFileInfo info(path);
    // Only the default location's folders are made: a path the user typed names a folder that exists (a typo in
    // --db /nonexistent/dir/x.db must not create directories).
    const bool isDefault = info.absoluteFilePath() == QFileInfo(RunStore::defaultPath()).absoluteFilePath();
    if (isDefault && !QDir().mkpath(info.absolutePath())) {
        *error = QStringLiteral("%1: cannot create the folder %2").arg(path, info.absolutePath());
        return false;
    }
    if (!QFileInfo(info.absolutePath()).isDir()) {
        *error = QStringLiteral("%1: the folder %2 does not exist").arg(path, info.absolutePath());
        return false;
    }
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
    db.setDatabaseName(path);
    db.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=5000"));
    if (!db.open()) {
        *error = QStringLiteral("%1: %2").arg(path, db.lastError().text());
        return false;
    }
    QSqlQuery q(db);
    // Not a database at all (a text file given by mistake) fails here, before anything is written to it.
    if (!q.exec(QStringLiteral("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"))) {
        *error = QStringLiteral("%1: not an rpcscope run database (%2)").arg(path, sqlError(q));
        return false;
    }
    QStringList tables;
    while (q.next())
        tables << q.value(0).toString();
    q.finish();
    // Another program's database (--db app.sqlite, a document's history.db): never given rpcscope's tables, nor
    // switched to WAL. A history has its meta row from the step that made its first tables.
    if (!tables.isEmpty() && (!tables.contains(QStringLiteral("meta")) || readVersion(db) == 0)) {
        const qsizetype shown = std::min<qsizetype>(tables.size(), 5);
        *error = QStringLiteral("%1: another program's SQLite database (tables: %2%3), not an rpcscope run history; "
                                "rpcscope adds nothing to it. Give --db a new file or an rpcscope history")
                     .arg(path, printable(tables.first(shown).join(QStringLiteral(", "))),
                         tables.size() > shown ? QStringLiteral(", ...") : QString());
        return false;
    }
    // Another process making the same new history holds its write lock while it creates the tables, and SQLite
    // answers a journal mode change then with "database is locked" at once, not after the busy timeout: tried again
    // for as long as that timeout (seen with four runs started together on a new history, under ASan).
    bool walSet = false;
    for (QDeadlineTimer deadline(5000); !walSet;) {
        walSet = q.exec(QStringLiteral("PRAGMA journal_mode=WAL")) && q.next();
        if (walSet || deadline.hasExpired() || !sqlError(q).contains(QLatin1String("locked")))
            break;
        q.finish();
        QThread::msleep(20);
    }
    if (!walSet) {
        *error = info.exists() && !info.isWritable()
            ? QStringLiteral("%1: the history is read-only here (%2)").arg(path, sqlError(q))
            : QStringLiteral("%1: not an rpcscope run database (%2)").arg(path, sqlError(q));
        return false;
    }
    for (const char *pragma : { "PRAGMA synchronous=NORMAL", "PRAGMA foreign_keys=ON" }) {
        if (!q.exec(QLatin1String(pragma))) {
            *error = QStringLiteral("%1: %2").arg(path, sqlError(q));
            return false;
        }
    }
    return true;
}

void bindSummary(QSqlQuery &q, const RunSnapshot &s)
{
    q.bindValue(QStringLiteral(":calls"), static_cast<qint64>(s.callsCompleted()));
    q.bindValue(QStringLiteral(":failed"), static_cast<qint64>(s.callsFailed()));
    q.bindValue(QStringLiteral(":rps"), s.requestsPerSecond());
    q.bindValue(QStringLiteral(":mean"), s.latency.mean());
    q.bindValue(QStringLiteral(":p50"), static_cast<qint64>(s.latency.percentile(50)));
    q.bindValue(QStringLiteral(":p99"), static_cast<qint64>(s.latency.percentile(99)));
    q.bindValue(QStringLiteral(":snapshot"), compact(snapshotToJson(s, false)));
}

QByteArray packRaw(const std::vector<RawSample> &raw)
{
    static_assert(sizeof(RawSample) == 16);
    return { reinterpret_cast<const char *>(raw.data()), static_cast<qsizetype>(raw.size() * sizeof(RawSample)) };
}

} // namespace

RunStore::RunStore() : m_connection(QStringLiteral("rpcscope-runstore-%1").arg(g_connections.fetch_add(1))) { }

RunStore::~RunStore()
{
    if (QSqlDatabase::contains(m_connection)) {
        QSqlDatabase::database(m_connection, false).close();
        QSqlDatabase::removeDatabase(m_connection);
    }
}

QString RunStore::defaultPath()
{
    return QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation)
        + QStringLiteral("/rpcscope/runs.sqlite");
}

QString RunStore::chosenPath()
{
    const QString fromEnvironment = qEnvironmentVariable("RPCSCOPE_DB");
    return fromEnvironment.isEmpty() ? defaultPath() : fromEnvironment;
}

bool RunStore::open(const QString &path, QString *error, OpenMode mode)
{
    QString why;
    m_readOnly = mode == OpenMode::ReadOnly;
    if (m_readOnly) {
        if (!openReadOnlyConnection(m_connection, path, &why)) {
            *error = why;
            QSqlDatabase::database(m_connection, false).close();
            return false;
        }
        m_path = path;
        return true;
    }
    if (!openConnection(m_connection, path, &why)) {
        *error = why;
        return false;
    }
    QSqlDatabase db = QSqlDatabase::database(m_connection);
    if (!migrate(db, kSchemaVersion, &why)) {
        *error = path + QStringLiteral(": ") + why;
        db.close();
        return false;
    }
    m_path = path;
    markInterruptedRuns();
    return true;
}

bool RunStore::isOpen() const
{
    return !m_path.isEmpty() && QSqlDatabase::database(m_connection, false).isOpen();
}

int RunStore::schemaVersion() const
{
    QSqlDatabase db = QSqlDatabase::database(m_connection, false);
    return readVersion(db);
}

bool RunStore::createAtVersion(const QString &path, int version, QString *error)
{
    const QString name = QStringLiteral("rpcscope-runstore-create-%1").arg(g_connections.fetch_add(1));
    bool ok = openConnection(name, path, error);
    if (ok) {
        QSqlDatabase db = QSqlDatabase::database(name);
        ok = migrate(db, version, error);
        db.close();
    }
    QSqlDatabase::removeDatabase(name);
    return ok;
}

bool RunStore::beginRun(RunRecord *run, QString *error)
{
    run->status = QString::fromUtf16(RunStatus::Running);
    run->endedAt = {};
    if (!run->startedAt.isValid())
        run->startedAt = QDateTime::currentDateTimeUtc();
    redactSecrets(run); // the caller's copy too: what it shows of the run is what the history holds
    const qint64 id = addRun(*run, error);
    if (id == 0)
        return false;
    run->id = id;
    QSqlQuery q(QSqlDatabase::database(m_connection));
    q.prepare(QStringLiteral("UPDATE runs SET owner_host = ?, owner_pid = ?, owner_identity = ? WHERE id = ?"));
    q.addBindValue(QSysInfo::machineHostName());
    q.addBindValue(static_cast<qint64>(getpid()));
    q.addBindValue(processIdentity(getpid()));
    q.addBindValue(id);
    if (!q.exec()) {
        *error = sqlError(q);
        return false;
    }
    m_storedIntervals.insert(id, run->snapshot.timeline.size());
    return true;
}

bool RunStore::updateRun(qint64 id, const RunSnapshot &snapshot, QString *error)
{
    if (!checkWritable(error))
        return false;
    QSqlDatabase db = QSqlDatabase::database(m_connection);
    if (!db.transaction()) {
        *error = db.lastError().text();
        return false;
    }
    auto fail = [&](const QSqlQuery &q) {
        *error = sqlError(q);
        db.rollback();
        return false;
    };
    QSqlQuery q(db);
    q.prepare(QStringLiteral("UPDATE runs SET calls = :calls, failed = :failed, rps = :rps, mean_ns = :mean, "
                             "p50_ns = :p50, p99_ns = :p99, snapshot = :snapshot WHERE id = :id"));
    bindSummary(q, snapshot);
    q.bindValue(QStringLiteral(":id"), id);
    if (!q.exec())
        return fail(q);
    if (q.numRowsAffected() != 1) {
        *error = QStringLiteral("run #%1 is not in the history").arg(id);
        db.rollback();
        return false;
    }
    const qsizetype stored = m_storedIntervals.value(id, 0);
    QSqlQuery insert(db);
    insert.prepare(QStringLiteral("INSERT OR REPLACE INTO intervals(run_id, seq, data) VALUES(?, ?, ?)"));
    for (qsizetype i = stored; i < snapshot.timeline.size(); ++i) {
        insert.addBindValue(id);
        insert.addBindValue(static_cast<qint64>(i));
        insert.addBindValue(compact(intervalToJson(snapshot.timeline.at(i))));
        if (!insert.exec())
            return fail(insert);
    }
    if (!db.commit()) {
        *error = db.lastError().text();
        return false;
    }
    m_storedIntervals.insert(id, std::max(stored, snapshot.timeline.size()));
    return true;
}

bool RunStore::finishRun(qint64 id, const RunSnapshot &snapshot, const std::vector<RawSample> &rawSamples,
    const QString &status, QString *error)
{
    if (!updateRun(id, snapshot, error))
        return false;
    QSqlDatabase db = QSqlDatabase::database(m_connection);
    if (!db.transaction()) {
        *error = db.lastError().text();
        return false;
    }
    QSqlQuery q(db);
    q.prepare(QStringLiteral("UPDATE runs SET status = ?, ended_at = ?, owner_pid = NULL WHERE id = ?"));
    q.addBindValue(status);
    q.addBindValue(timeText(QDateTime::currentDateTimeUtc()));
    q.addBindValue(id);
    bool ok = q.exec();
    if (ok && !rawSamples.empty()) {
        q.prepare(QStringLiteral("INSERT OR REPLACE INTO raw_samples(run_id, data) VALUES(?, ?)"));
        q.addBindValue(id);
        q.addBindValue(packRaw(rawSamples));
        ok = q.exec();
    }
    if (!ok) {
        *error = sqlError(q);
        db.rollback();
        return false;
    }
    m_storedIntervals.remove(id);
    if (!db.commit()) {
        *error = db.lastError().text();
        return false;
    }
    return true;
}

qint64 RunStore::addRun(const RunRecord &given, QString *error)
{
    if (!checkWritable(error))
        return 0;
    RunRecord run = given; // what is stored never holds a secret in clear (an imported report may)
    redactSecrets(&run);
    QSqlDatabase db = QSqlDatabase::database(m_connection);
    if (!db.isOpen()) {
        *error = QStringLiteral("the run history is not open");
        return 0;
    }
    if (!db.transaction()) {
        *error = db.lastError().text();
        return 0;
    }
    QSqlQuery q(db);
    auto fail = [&](const QSqlQuery &failed) {
        *error = sqlError(failed);
        db.rollback();
        return qint64(0);
    };
    q.prepare(QStringLiteral(
        "INSERT INTO runs(id, name, status, started_at, ended_at, method, transport, codec, target, origin, scenario, "
        "environment, server, calls, failed, rps, mean_ns, p50_ns, p99_ns, snapshot, split) VALUES(:rid, :name, "
        ":status, :started, :ended, :method, :transport, :codec, :target, :origin, :scenario, :environment, :server, "
        ":calls, :failed, :rps, :mean, :p50, :p99, :snapshot, :split)"));
    q.bindValue(QStringLiteral(":rid"), run.id > 0 ? QVariant(run.id) : QVariant());
    q.bindValue(QStringLiteral(":name"), run.name.isNull() ? QStringLiteral("") : run.name);
    q.bindValue(QStringLiteral(":status"), run.status);
    q.bindValue(QStringLiteral(":started"), timeText(run.startedAt));
    q.bindValue(QStringLiteral(":ended"), timeText(run.endedAt));
    q.bindValue(QStringLiteral(":method"), run.method);
    q.bindValue(QStringLiteral(":transport"), run.transport);
    q.bindValue(QStringLiteral(":codec"), run.codec);
    q.bindValue(QStringLiteral(":target"), run.target);
    q.bindValue(QStringLiteral(":origin"), run.origin);
    q.bindValue(QStringLiteral(":scenario"), compact(run.scenario));
    q.bindValue(QStringLiteral(":environment"), compact(run.environment));
    q.bindValue(QStringLiteral(":server"), compact(run.server));
    q.bindValue(QStringLiteral(":split"), run.split.isSplit() ? QVariant(compact(splitToJson(run.split))) : QVariant());
    bindSummary(q, run.snapshot);
    if (!q.exec())
        return fail(q);
    const qint64 id = q.lastInsertId().toLongLong();
    QSqlQuery insert(db);
    insert.prepare(QStringLiteral("INSERT INTO intervals(run_id, seq, data) VALUES(?, ?, ?)"));
    for (qsizetype i = 0; i < run.snapshot.timeline.size(); ++i) {
        insert.addBindValue(id);
        insert.addBindValue(static_cast<qint64>(i));
        insert.addBindValue(compact(intervalToJson(run.snapshot.timeline.at(i))));
        if (!insert.exec())
            return fail(insert);
    }
    insert.prepare(QStringLiteral("INSERT OR IGNORE INTO run_labels(run_id, label) VALUES(?, ?)"));
    for (const QString &label : run.labels) {
        insert.addBindValue(id);
        insert.addBindValue(label);
        if (!insert.exec())
            return fail(insert);
    }
    if (!run.rawSamples.empty()) {
        insert.prepare(QStringLiteral("INSERT INTO raw_samples(run_id, data) VALUES(?, ?)"));
        insert.addBindValue(id);
        insert.addBindValue(packRaw(run.rawSamples));
        if (!insert.exec())
            return fail(insert);
    }
    if (!insertProfiles(insert, id, run))
        return fail(insert);
    if (!db.commit()) {
        *error = db.lastError().text();
        return 0;
    }
    return id;
}

std::vector<RunListEntry> RunStore::list(const RunFilter &filter, QString *error) const
{
    std::vector<RunListEntry> out;
    QSqlDatabase db = QSqlDatabase::database(m_connection);
    QString sql = QStringLiteral(
        "SELECT id, name, status, started_at, ended_at, method, transport, codec, target, origin, calls, failed, rps, "
        "mean_ns, p50_ns, p99_ns, (SELECT group_concat(label, char(31)) FROM run_labels WHERE run_id = runs.id), "
        "owner_host, owner_pid, owner_identity FROM runs WHERE 1 = 1");
    QVariantList binds;
    auto like = [](const QString &text) { return QString(u'%' + text + u'%'); };
    if (!filter.text.isEmpty()) {
        sql += QStringLiteral(" AND (name LIKE ? OR method LIKE ? OR target LIKE ? OR EXISTS (SELECT 1 FROM run_labels "
                              "WHERE run_id = runs.id AND label LIKE ?))");
        binds << like(filter.text) << like(filter.text) << like(filter.text) << like(filter.text);
    }
    if (!filter.method.isEmpty()) {
        sql += QStringLiteral(" AND method LIKE ?");
        binds << like(filter.method);
    }
    if (!filter.target.isEmpty()) {
        sql += QStringLiteral(" AND target LIKE ?");
        binds << like(filter.target);
    }
    if (!filter.label.isEmpty()) {
        sql += QStringLiteral(" AND EXISTS (SELECT 1 FROM run_labels WHERE run_id = runs.id AND label LIKE ?)");
        binds << like(filter.label);
    }
    if (filter.since.isValid()) {
        sql += QStringLiteral(" AND started_at >= ?");
        binds << timeText(filter.since);
    }
    sql += QStringLiteral(" ORDER BY id DESC");
    if (filter.limit > 0)
        sql += QStringLiteral(" LIMIT %1").arg(filter.limit);
    QSqlQuery q(db);
    q.prepare(sql);
    for (const QVariant &v : binds)
        q.addBindValue(v);
    if (!q.exec()) {
        if (error)
            *error = sqlError(q);
        return out;
    }
    while (q.next()) {
        RunListEntry e;
        e.id = q.value(0).toLongLong();
        e.name = q.value(1).toString();
        e.status = statusNow(q.value(2).toString(), q.value(17), q.value(18), q.value(19));
        e.startedAt = timeFrom(q.value(3));
        e.endedAt = timeFrom(q.value(4));
        e.method = q.value(5).toString();
        e.transport = q.value(6).toString();
        e.codec = q.value(7).toString();
        e.target = q.value(8).toString();
        e.origin = q.value(9).toString();
        e.calls = static_cast<uint64_t>(q.value(10).toLongLong());
        e.failed = static_cast<uint64_t>(q.value(11).toLongLong());
        e.rps = q.value(12).toDouble();
        e.meanNs = q.value(13).toDouble();
        e.p50Ns = static_cast<uint64_t>(q.value(14).toLongLong());
        e.p99Ns = static_cast<uint64_t>(q.value(15).toLongLong());
        const QString labels = q.value(16).toString();
        if (!labels.isEmpty()) {
            e.labels = labels.split(QChar(31));
            e.labels.sort();
        }
        out.push_back(e);
    }
    return out;
}

std::optional<RunRecord> RunStore::load(qint64 id, QString *error, Parts parts) const
{
    const bool everything = parts == Parts::Everything;
    QSqlDatabase db = QSqlDatabase::database(m_connection);
    QSqlQuery q(db);
    q.prepare(
        QStringLiteral("SELECT name, status, started_at, ended_at, method, transport, codec, target, origin, "
                       "scenario, environment, server, %1, owner_host, owner_pid, owner_identity, split FROM runs "
                       "WHERE id = ?")
            .arg(everything ? QStringLiteral("snapshot") : QStringLiteral("NULL")));
    q.addBindValue(id);
    if (!q.exec()) {
        *error = sqlError(q);
        return std::nullopt;
    }
    if (!q.next()) {
        *error = QStringLiteral("no run #%1 in %2").arg(id).arg(m_path);
        return std::nullopt;
    }
    RunRecord run;
    run.id = id;
    run.name = q.value(0).toString();
    run.status = statusNow(q.value(1).toString(), q.value(13), q.value(14), q.value(15));
    run.startedAt = timeFrom(q.value(2));
    run.endedAt = timeFrom(q.value(3));
    run.method = q.value(4).toString();
    run.transport = q.value(5).toString();
    run.codec = q.value(6).toString();
    run.target = q.value(7).toString();
    run.origin = q.value(8).toString();
    run.scenario = objectFrom(q.value(9));
    run.environment = objectFrom(q.value(10));
    run.server = objectFrom(q.value(11));
    redactSecrets(&run); // runs saved before rpcscope redacted secrets are read as if it always had
    if (const QByteArray split = q.value(16).toByteArray(); !split.isEmpty()) {
        QString why;
        const auto read = splitFromJson(QJsonDocument::fromJson(split).object(), QStringLiteral("split"), &why);
        if (!read) {
            *error = QStringLiteral("run #%1: %2").arg(id).arg(why);
            return std::nullopt;
        }
        run.split = *read;
    }
    const QByteArray snapshotText = q.value(12).toByteArray();
    if (!snapshotText.isEmpty()) {
        QString why;
        const auto snapshot
            = snapshotFromJson(QJsonDocument::fromJson(snapshotText).object(), QStringLiteral("snapshot"), &why);
        if (!snapshot) {
            *error = QStringLiteral("run #%1: %2").arg(id).arg(why);
            return std::nullopt;
        }
        run.snapshot = *snapshot;
    }
    q.prepare(QStringLiteral("SELECT label FROM run_labels WHERE run_id = ? ORDER BY label"));
    q.addBindValue(id);
    if (q.exec()) {
        while (q.next())
            run.labels << q.value(0).toString();
    }
    if (!everything)
        return run;
    q.prepare(QStringLiteral("SELECT data FROM intervals WHERE run_id = ? ORDER BY seq"));
    q.addBindValue(id);
    if (!q.exec()) {
        *error = sqlError(q);
        return std::nullopt;
    }
    run.snapshot.timeline.clear();
    while (q.next()) {
        QString why;
        const auto point = intervalFromJson(
            QJsonDocument::fromJson(q.value(0).toByteArray()).object(), QStringLiteral("interval"), &why);
        if (!point) {
            *error = QStringLiteral("run #%1: %2").arg(id).arg(why);
            return std::nullopt;
        }
        run.snapshot.timeline.append(*point);
    }
    q.prepare(QStringLiteral("SELECT data FROM raw_samples WHERE run_id = ?"));
    q.addBindValue(id);
    if (q.exec() && q.next()) {
        const QByteArray data = q.value(0).toByteArray();
        run.rawSamples.resize(static_cast<size_t>(data.size()) / sizeof(RawSample));
        std::memcpy(run.rawSamples.data(), data.constData(), run.rawSamples.size() * sizeof(RawSample));
    }
    q.prepare(QStringLiteral("SELECT scope, data FROM profiles WHERE run_id = ?"));
    q.addBindValue(id);
    if (q.exec()) {
        while (q.next()) {
            const QString scope = q.value(0).toString();
            QString why;
            const std::optional<Profile> profile
                = profileFromJson(QJsonDocument::fromJson(qUncompress(q.value(1).toByteArray())).object(),
                    QStringLiteral("run #%1's %2 profile").arg(id).arg(scope), &why);
            if (!profile) {
                *error = why;
                return std::nullopt;
            }
            (scope == u"client" ? run.clientProfile : run.serverProfile) = profile;
        }
    }
    return run;
}

bool RunStore::saveProfiles(const RunRecord &run, QString *error)
{
    if (!run.serverProfile && !run.clientProfile)
        return true;
    if (!checkWritable(error))
        return false;
    QSqlQuery q(QSqlDatabase::database(m_connection));
    if (!insertProfiles(q, run.id, run)) {
        *error = sqlError(q);
        return false;
    }
    return true;
}

namespace {

/// "last", "last~3", "label:baseline", "label:baseline~1" split into the label (null for "last") and the offset.
bool parseReference(const QString &text, QString *label, int *offset)
{
    static const QRegularExpression re(QStringLiteral("^(?:last|label:(.+?))(?:~(\\d{1,6}))?$"));
    const QRegularExpressionMatch m = re.match(text);
    if (!m.hasMatch())
        return false;
    *label = m.captured(1);
    if (text.startsWith(QStringLiteral("label:")) && label->isEmpty())
        return false;
    *offset = m.captured(2).isEmpty() ? 0 : m.captured(2).toInt();
    return true;
}

std::optional<qint64> plainId(const QString &text)
{
    bool ok = false;
    const qint64 id = (text.startsWith(u'#') ? text.mid(1) : text).toLongLong(&ok);
    return ok && id > 0 ? std::optional(id) : std::nullopt;
}

} // namespace

bool RunStore::isReference(const QString &text)
{
    QString label;
    int offset = 0;
    return plainId(text) || parseReference(text, &label, &offset);
}

qint64 RunStore::resolve(const QString &reference, QString *error) const
{
    if (const std::optional<qint64> id = plainId(reference))
        return *id;
    QString label;
    int offset = 0;
    if (!parseReference(reference, &label, &offset)) {
        *error = QStringLiteral("\"%1\" names no run: give an ID (12), last, last~N, label:NAME or label:NAME~N")
                     .arg(reference);
        return 0;
    }
    QSqlQuery q(QSqlDatabase::database(m_connection));
    q.prepare(label.isEmpty()
            ? QStringLiteral("SELECT id FROM runs ORDER BY id DESC LIMIT 1 OFFSET ?")
            : QStringLiteral("SELECT id FROM runs WHERE EXISTS (SELECT 1 FROM run_labels WHERE run_id = runs.id "
                             "AND label = ?) ORDER BY id DESC LIMIT 1 OFFSET ?"));
    if (!label.isEmpty())
        q.addBindValue(label);
    q.addBindValue(offset);
    if (!q.exec()) {
        *error = sqlError(q);
        return 0;
    }
    if (q.next())
        return q.value(0).toLongLong();
    // Say how many there are, so the user sees how far back the history goes.
    QSqlQuery count(QSqlDatabase::database(m_connection));
    count.prepare(label.isEmpty() ? QStringLiteral("SELECT count(*) FROM runs")
                                  : QStringLiteral("SELECT count(*) FROM run_labels WHERE label = ?"));
    if (!label.isEmpty())
        count.addBindValue(label);
    const qint64 n = count.exec() && count.next() ? count.value(0).toLongLong() : 0;
    if (label.isEmpty())
        *error = n == 0
            ? QStringLiteral("%1: %2 has no runs yet").arg(reference, m_path)
            : QStringLiteral("%1: %2 has %3 run(s), so the oldest is last~%4").arg(reference, m_path).arg(n).arg(n - 1);
    else
        *error = n == 0 ? QStringLiteral("%1: no run in %2 is labelled \"%3\"").arg(reference, m_path, label)
                        : QStringLiteral("%1: %2 run(s) in %3 are labelled \"%4\", so the oldest is label:%4~%5")
                              .arg(reference)
                              .arg(n)
                              .arg(m_path, label)
                              .arg(n - 1);
    return 0;
}

std::vector<qint64> RunStore::idsWithLabel(const QString &label, QString *error) const
{
    std::vector<qint64> ids;
    QSqlQuery q(QSqlDatabase::database(m_connection));
    q.prepare(QStringLiteral("SELECT run_id FROM run_labels WHERE label = ? ORDER BY run_id"));
    q.addBindValue(label);
    if (!q.exec()) {
        *error = sqlError(q);
        return ids;
    }
    while (q.next())
        ids.push_back(q.value(0).toLongLong());
    if (ids.empty())
        *error = QStringLiteral("no run in %1 is labelled \"%2\"").arg(m_path, label);
    return ids;
}

bool RunStore::checkWritable(QString *error) const
{
    if (!m_readOnly)
        return true;
    *error = QStringLiteral("%1 is open read-only here: nothing was changed").arg(m_path);
    return false;
}

bool RunStore::execOnRun(QSqlQuery &query, qint64 id, QString *error) const
{
    if (!query.exec()) {
        *error = sqlError(query);
        return false;
    }
    if (query.numRowsAffected() != 1) {
        *error = QStringLiteral("no run #%1 in %2").arg(id).arg(m_path);
        return false;
    }
    return true;
}

bool RunStore::rename(qint64 id, const QString &name, QString *error)
{
    if (!checkWritable(error))
        return false;
    QSqlQuery q(QSqlDatabase::database(m_connection));
    q.prepare(QStringLiteral("UPDATE runs SET name = ? WHERE id = ?"));
    q.addBindValue(name);
    q.addBindValue(id);
    return execOnRun(q, id, error);
}

bool RunStore::setLabels(qint64 id, const QStringList &labels, QString *error)
{
    if (!checkWritable(error))
        return false;
    QSqlDatabase db = QSqlDatabase::database(m_connection);
    if (!db.transaction()) {
        *error = db.lastError().text();
        return false;
    }
    QSqlQuery q(db);
    q.prepare(QStringLiteral("SELECT 1 FROM runs WHERE id = ?"));
    q.addBindValue(id);
    if (!q.exec() || !q.next()) {
        *error = q.lastError().isValid() ? sqlError(q) : QStringLiteral("no run #%1 in %2").arg(id).arg(m_path);
        db.rollback();
        return false;
    }
    q.prepare(QStringLiteral("DELETE FROM run_labels WHERE run_id = ?"));
    q.addBindValue(id);
    bool ok = q.exec();
    for (const QString &label : labels) {
        if (!ok || label.trimmed().isEmpty())
            continue;
        q.prepare(QStringLiteral("INSERT OR IGNORE INTO run_labels(run_id, label) VALUES(?, ?)"));
        q.addBindValue(id);
        q.addBindValue(label.trimmed());
        ok = q.exec();
    }
    if (!ok) {
        *error = sqlError(q);
        db.rollback();
        return false;
    }
    return db.commit();
}

bool RunStore::remove(qint64 id, QString *error)
{
    if (!checkWritable(error))
        return false;
    QSqlQuery q(QSqlDatabase::database(m_connection));
    q.prepare(QStringLiteral("DELETE FROM runs WHERE id = ?"));
    q.addBindValue(id);
    return execOnRun(q, id, error);
}

int RunStore::markInterruptedRuns()
{
    if (m_readOnly)
        return 0; // its readers see such runs as interrupted all the same (statusNow)
    QSqlDatabase db = QSqlDatabase::database(m_connection);
    QSqlQuery q(db);
    q.prepare(QStringLiteral("SELECT id, owner_pid, owner_identity FROM runs WHERE status = ? AND owner_host = ?"));
    q.addBindValue(QString::fromUtf16(RunStatus::Running));
    q.addBindValue(QSysInfo::machineHostName());
    if (!q.exec())
        return 0;
    QList<qint64> dead;
    while (q.next()) {
        if (!ownerAlive(q.value(1), q.value(2)))
            dead << q.value(0).toLongLong();
    }
    int marked = 0;
    for (const qint64 id : dead) {
        QSqlQuery update(db);
        update.prepare(QStringLiteral("UPDATE runs SET status = ?, owner_pid = NULL WHERE id = ? AND status = ?"));
        update.addBindValue(QString::fromUtf16(RunStatus::Interrupted));
        update.addBindValue(id);
        update.addBindValue(QString::fromUtf16(RunStatus::Running));
        if (update.exec())
            marked += update.numRowsAffected();
    }
    return marked;
}

} // namespace rpcscope
