#include "matrixcell.h"

#include "codec/codec.h"
#include "transport/transports.h"

namespace rpcscope {

Scenario scenarioForCell(const Scenario &base, const MatrixCell &cell, const QString &transportTarget)
{
    Scenario s = base;
    s.transport = transportName(cell.transport);
    s.codec = codecName(cell.codec);
    if (cell.transport == TransportKind::InProcess)
        s.concurrency = 1;
    else if (cell.concurrency > 0)
        s.concurrency = cell.concurrency;
    for (const QString &fill : cell.payload.split(QLatin1Char(','), Qt::SkipEmptyParts))
        s.fills << fill.trimmed();
    if (cell.transport == TransportKind::InProcess) {
        s.target.clear();
    } else if (!cell.stack.isEmpty()) {
        s.target = cell.target;
        s.rpcMethod = cell.rpcMethod;
        s.httpPath = cell.httpPath;
    } else {
        s.target = transportTarget;
    }
    const bool elsewhere = s.target != base.target || s.transport != base.transport;
    if (!base.target.isEmpty() && elsewhere) {
        s.connections = -1;
        s.security = QStringLiteral("auto");
        s.clearTlsSettings();
    }
    if (cell.transport != TransportKind::H2Grpc)
        s.http2Window.clear();
    s.rawSamples.clear();
    return s;
}

QString matrixCellTitle(const MatrixCell &cell, int concurrency)
{
    return cell.label() + (cell.payload.isEmpty() ? QString() : QLatin1Char(' ') + cell.payload)
        + QStringLiteral(" c=%1").arg(concurrency);
}

void labelMatrixCell(Scenario *scenario, const MatrixCell &cell, const QString &matrixId)
{
    const QString title = matrixCellTitle(cell, scenario->concurrency);
    scenario->name = scenario->name.isEmpty() ? title : scenario->name + QLatin1Char(' ') + title;
    scenario->labels << QStringLiteral("matrix:") + matrixId << QStringLiteral("stack:") + cell.label()
                     << QStringLiteral("c:%1").arg(scenario->concurrency);
    if (!cell.payload.isEmpty())
        scenario->labels << QStringLiteral("payload:") + cell.payload;
}

} // namespace rpcscope
