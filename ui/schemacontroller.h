#pragma once

#include "schema/schema.h"

#include <QObject>
#include <QStringList>

namespace rpcscope {

class SchemaPanel;
struct Scenario;

/**
 * The schema the window works with and where it came from: .proto files (loaded again when the schema dock's
 * import paths change, since a missing import is usually fixed by adding its folder), protosets, server reflection
 * (on a worker thread) or the built-in bench schema. It fills the schema dock (@p panel) and keeps the previous
 * schema when a load fails.
 */
class SchemaController : public QObject {
    Q_OBJECT
public:
    explicit SchemaController(SchemaPanel *panel, QObject *parent = nullptr);

    /// Loads .proto files with @p importPaths added to the dock's; errors are listed, the previous schema kept.
    bool openProtoFiles(const QStringList &files, const QStringList &importPaths = {});
    /// Loads .proto files with exactly @p importPaths (shown in the dock).
    bool loadProtos(const QStringList &files, const QStringList &importPaths);
    /// Loads protosets (FileDescriptorSet files); errors are listed and the previous schema is kept.
    bool openProtosets(const QStringList &files);
    /// Asks the gRPC server at @p address for its schema on a worker thread (bounded by a 10 s deadline).
    void loadFromReflection(const QString &address);
    /// The built-in bench schema; with @p clearDock also no errors and no import paths (a new document).
    void useBuiltin(bool clearDock = false);

    /// Loads the schema scenario document @p scenario names (its .proto files with its import paths, its protosets,
    /// or the built-in schema); when that fails, everything stays as it was.
    bool loadForScenario(const Scenario &scenario);
    /// Names the schema's source in @p scenario, for saving it.
    void describeIn(Scenario *scenario) const;
    /// Selects @p method in the schema dock.
    bool selectMethod(const QString &method);

    const Schema &schema() const { return m_schema; }

Q_SIGNALS:
    /// A schema replaced the previous one (from any source); @p origin says from where.
    void schemaLoaded(const QString &origin);
    /// Loading a schema failed; the errors are listed in the schema dock.
    void schemaFailed(const QString &why);
    /// The schema changed (emitted before schemaLoaded(), also for the built-in one).
    void schemaChanged(const rpcscope::Schema &schema);
    /// The .proto files were loaded again because the import paths changed: the document names them.
    void reloadedForImportPaths();
    void statusMessage(const QString &text, int timeoutMs);

private:
    void reloadWithImportPaths(const QStringList &paths);
    bool applyLoaded(const SchemaLoadResult &result, const QString &origin);
    void setSchema(const Schema &schema, const QString &origin);
    void forgetSources();

    SchemaPanel *m_panel;
    Schema m_schema;
    QStringList m_protos; ///< where the loaded schema came from, for the scenario document
    QStringList m_importPaths;
    QStringList m_protosets;
    /// The .proto files last asked for, loaded or not: loaded again when the import paths change.
    QStringList m_pendingProtos;
};

} // namespace rpcscope
