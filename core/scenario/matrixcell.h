#pragma once

#include "report/matrixreport.h"
#include "scenario/scenario.h"

namespace rpcscope {

/**
 * The document one cell of a matrix runs and the history stores, for the CLI's matrix and the window's stack
 * comparison alike: @p base with the cell's transport, codec, callers (one for the no-RPC baseline, whose mean is then
 * one call's codec time), payload (its fills after the base's) and target: a stack's own (with its method name and
 * path), else @p transportTarget (what the front end gives the cell's transport: its address, or "builtin"); none in
 * process. The connection settings (connections, security and TLS files) belong to the base's own target: a cell with
 * another target or transport gets that transport's defaults, unless the base names no target (the CLI's matrix,
 * whose connection flags are for every cell). The HTTP/2 window is h2grpc's alone, and raw samples are left out (each
 * cell would overwrite the file).
 */
Scenario scenarioForCell(const Scenario &base, const MatrixCell &cell, const QString &transportTarget);

/// "grpc/protobuf nums=1000 c=8": one cell as the matrix's progress, messages and run names say it.
QString matrixCellTitle(const MatrixCell &cell, int concurrency);

/**
 * Names @p scenario (scenarioForCell()'s document) as a cell of the matrix @p matrixId, so that the history finds a
 * matrix's cells together and the stored document says what the record says: its name is the base's name (if any)
 * then matrixCellTitle(), and the labels matrix:ID, stack:LABEL, c:N and payload:P follow the base's.
 */
void labelMatrixCell(Scenario *scenario, const MatrixCell &cell, const QString &matrixId);

} // namespace rpcscope
