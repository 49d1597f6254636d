#pragma once

#include "codec/codec.h"
#include "metrics/runsnapshot.h"
#include "transport/transports.h"

#include <QList>
#include <QString>
#include <QStringList>

namespace rpcscope {

/// One cell of a transport x codec x payload matrix.
struct MatrixCell {
    TransportKind transport = TransportKind::Grpc;
    Codec codec = Codec::Protobuf;
    QString payload; ///< the payload variant, e.g. "nums=1000" (a --fill), or "" for the request as given
    QString label() const; ///< "grpc/protobuf", "http/json", "none/msgpack"
};

/**
 * The cells worth running for these lists: each transport with each codec it can carry (gRPC protobuf, msgpack-rpc
 * msgpack, HTTP and the no-RPC baseline any), for each payload; payloads outermost, the no-RPC baseline last.
 */
QList<MatrixCell> matrixCells(
    const QList<TransportKind> &transports, const QList<Codec> &codecs, const QStringList &payloads);

struct MatrixResult {
    MatrixCell cell;
    RunSnapshot run;
};

/**
 * The codec's share of a cell's mean latency: the no-RPC baseline's mean (run with one caller, so it is the
 * encode/decode/method time of one call) over the cell's mean, for the same codec and payload. -1 when the
 * matrix has no such baseline.
 */
double codecShare(const QList<MatrixResult> &results, qsizetype index);

/**
 * One row per cell: payload, transport, codec, mean, p50, p99, req/s, bytes/call, CPU/call, codec share. A cell
 * without one OK call has no latency: "-", as for any value not measured.
 */
QString formatMatrixTable(const QList<MatrixResult> &results);
/// The same as CSV, one header row with units, numbers unformatted (ns, bytes, seconds); unknown values empty.
QString formatMatrixCsv(const QList<MatrixResult> &results);

} // namespace rpcscope
