#include "schemacontroller.h"

#include "backgroundjob.h"
#include "scenario/scenario.h"
#include "schemapanel.h"

#include <QFileInfo>

namespace rpcscope {

SchemaController::SchemaController(SchemaPanel *panel, QObject *parent) : QObject(parent), m_panel(panel)
{
    connect(m_panel, &SchemaPanel::importPathsChanged, this, &SchemaController::reloadWithImportPaths);
}

void SchemaController::reloadWithImportPaths(const QStringList &paths)
{
    if (m_pendingProtos.isEmpty())
        return; // no .proto files in use: the paths serve the next load
    if (loadProtos(m_pendingProtos, paths))
        Q_EMIT reloadedForImportPaths();
}

bool SchemaController::applyLoaded(const SchemaLoadResult &result, const QString &origin)
{
    m_panel->setErrors(result.errors);
    if (!result.ok()) {
        Q_EMIT statusMessage(
            tr("%n schema error(s); the previous schema stays loaded", nullptr, static_cast<int>(result.errors.size())),
            15000);
        Q_EMIT schemaFailed(result.errorText());
        return false;
    }
    setSchema(result.schema, origin);
    Q_EMIT statusMessage(tr("Loaded %1").arg(origin), 10000);
    Q_EMIT schemaLoaded(origin);
    return true;
}

void SchemaController::setSchema(const Schema &schema, const QString &origin)
{
    const QString selected = m_panel->selectedMethod();
    m_schema = schema;
    m_panel->setSchema(schema, origin);
    Q_EMIT schemaChanged(schema);
    // The method picked before, when the new schema has it; else the new schema's first one, so that a loaded
    // .proto never leaves the page on a method it does not have ("service ... not found", Run disabled).
    m_panel->selectMethodOrFirst(selected);
}

void SchemaController::forgetSources()
{
    m_pendingProtos.clear();
    m_protos.clear();
    m_importPaths.clear();
    m_protosets.clear();
}

bool SchemaController::openProtoFiles(const QStringList &files, const QStringList &importPaths)
{
    QStringList paths = m_panel->importPaths();
    for (const QString &p : importPaths) {
        if (!paths.contains(p))
            paths << p;
    }
    return loadProtos(files, paths);
}

bool SchemaController::loadProtos(const QStringList &files, const QStringList &importPaths)
{
    QStringList names;
    QStringList absolute;
    for (const QString &f : files) {
        names << QFileInfo(f).fileName();
        absolute << QFileInfo(f).absoluteFilePath();
    }
    m_pendingProtos = absolute;
    m_panel->setImportPaths(importPaths);
    if (!applyLoaded(loadProtoFiles(files, importPaths), names.join(QStringLiteral(", "))))
        return false;
    m_protos = absolute;
    m_importPaths = importPaths;
    m_protosets.clear();
    return true;
}

bool SchemaController::openProtosets(const QStringList &files)
{
    QStringList names;
    for (const QString &f : files)
        names << QFileInfo(f).fileName();
    if (!applyLoaded(loadProtoset(files), names.join(QStringLiteral(", "))))
        return false;
    forgetSources();
    for (const QString &f : files)
        m_protosets << QFileInfo(f).absoluteFilePath();
    return true;
}

void SchemaController::loadFromReflection(const QString &address)
{
    Q_EMIT statusMessage(tr("Asking %1 for its schema (server reflection)…").arg(address), 0);
    ReflectionTarget target;
    target.address = address;
    target.timeout = std::chrono::seconds(10);
    // Reflection waits on the network: never on the GUI thread.
    runInBackground(
        this, [target] { return loadSchemaFromReflection(target); },
        [this, address](const SchemaLoadResult &result) {
            // A document then names no schema source: rpcscope-cli asks the server by reflection too.
            if (applyLoaded(result, tr("reflection at %1").arg(address)))
                forgetSources();
        });
}

void SchemaController::useBuiltin(bool clearDock)
{
    setSchema(builtinBenchSchema(), tr("built in"));
    if (clearDock) {
        m_panel->setErrors({});
        m_panel->setImportPaths({});
    }
    forgetSources();
}

bool SchemaController::loadForScenario(const Scenario &scenario)
{
    bool ok = true;
    const QStringList previousPaths = m_panel->importPaths();
    const QStringList previousPending = m_pendingProtos;
    if (!scenario.protos.isEmpty())
        ok = loadProtos(scenario.protos, scenario.importPaths); // the document's paths, not the last one's
    else if (!scenario.protosets.isEmpty())
        ok = openProtosets(scenario.protosets);
    else
        useBuiltin();
    if (ok && scenario.protos.isEmpty())
        m_panel->setImportPaths(scenario.importPaths);
    if (!ok) {
        m_panel->setImportPaths(previousPaths);
        m_pendingProtos = previousPending;
    }
    return ok;
}

void SchemaController::describeIn(Scenario *scenario) const
{
    scenario->protos = m_protos;
    scenario->importPaths = m_importPaths;
    scenario->protosets = m_protosets;
}

bool SchemaController::selectMethod(const QString &method)
{
    return m_panel->selectMethod(method);
}

} // namespace rpcscope
