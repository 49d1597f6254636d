#pragma once

#include "codec/codec.h"
#include "metrics/runsnapshot.h"
#include "profile/profile.h"
#include "transport/transports.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace rpcscope {

/**
 * One stack a matrix compares, as the user runs it: a transport and codec, with its own target (an address, an
 * HTTP URL with its path, a server command, or "builtin" for rpcscope's own server) and its own RPC method name
 * (msgpack-rpc's method) or URL path (HTTP, when the target is a command). Written `NAME=TRANSPORT[/CODEC]@TARGET`
 * with `,method=NAME` or `,path=/PATH` last: `fastapi=http/json@http://127.0.0.1:8000/sum`,
 * `py=msgpack@127.0.0.1:18800,method=sum_nums`, `api=http/json@'uvicorn app:app --port {port}',path=/sum`,
 * `cpp=grpc@builtin`, `codec=none/json` (no target: in process). `,baseline=COMMAND` (last of all) gives the stack a
 * codec baseline of its own (see BaselineCommand): its codec share is then that command's time over the cell's mean.
 */
struct MatrixStack {
    QString name;
    TransportKind transport = TransportKind::Grpc;
    Codec codec = Codec::Protobuf;
    QString target; ///< empty for the in-process baseline
    QString rpcMethod; ///< empty: the schema method's own name
    QString httpPath; ///< HTTP: the path when the target (a server command) has none
    QString baselineCommand; ///< the user's own codec baseline (see BaselineCommand); empty: none
    QString spec() const; ///< as written
};
/// @p input read (see MatrixStack); std::nullopt with @p error saying which part is wrong.
std::optional<MatrixStack> parseMatrixStack(const QString &input, QString *error);

/// One cell of a matrix: a transport x codec (or a named stack) x payload x concurrency.
struct MatrixCell {
    TransportKind transport = TransportKind::Grpc;
    Codec codec = Codec::Protobuf;
    QString payload; ///< the payload variant, e.g. "nums=1000" (a --fill), or "" for the request as given
    int concurrency = 0; ///< callers; 0: the run's own (-c)
    QString stack; ///< the stack's name; empty for a transport x codec cell (which goes to the transport's target)
    QString target; ///< the stack's target
    QString rpcMethod; ///< the stack's RPC method name
    QString httpPath; ///< the stack's URL path, for an HTTP server command
    QString baselineCommand; ///< the stack's own codec baseline command
    /// Served by rpcscope's own built-in server, whose codecs are the baseline's: only then is a codec share known.
    bool ownServer = false;
    QString kind() const; ///< "grpc/protobuf", "http/json", "none/msgpack"
    QString label() const; ///< the stack's name, else kind()
};

/**
 * The cells worth running for these lists: each transport with each codec it can carry (gRPC protobuf, msgpack-rpc
 * msgpack, HTTP and the no-RPC baseline any), for each payload and concurrency level (none: the run's own); payloads
 * outermost, then concurrency, the no-RPC baseline last and once per payload (it runs with one caller).
 */
QList<MatrixCell> matrixCells(const QList<TransportKind> &transports, const QList<Codec> &codecs,
    const QStringList &payloads, const QList<int> &concurrency = {});
/// The same for named stacks, in the order given (an in-process stack once per payload).
QList<MatrixCell> stackCells(
    const QList<MatrixStack> &stacks, const QStringList &payloads, const QList<int> &concurrency = {});

struct MatrixResult {
    MatrixCell cell;
    RunSnapshot run;
    QString failure; ///< why the cell could not be run at all (its server did not start), else empty
    /// The stack's own baseline command's time per call for this payload (its codec share's numerator); negative
    /// when the stack has none (or it failed).
    double baselineNs = -1;
    /// The cell's CPU profiles (matrix --profile, --profile-client); unset when not profiled.
    std::optional<Profile> serverProfile = std::nullopt;
    std::optional<Profile> clientProfile = std::nullopt;
};

/**
 * The codec's share of a cell's mean latency: the stack's own baseline command's time when it has one, else the
 * no-RPC baseline's mean (run with one caller, so it is the codec work and method time of one call), over the cell's
 * mean, for the same codec and payload. -1 when there is no such baseline, or the cell's server is not rpcscope's own
 * and the stack has no baseline of its own (another server's codec is not the one rpcscope's baseline timed, so no
 * share of its time can be claimed), or the baseline took longer than the whole call (a share is at most 1).
 */
double codecShare(const QList<MatrixResult> &results, qsizetype index);

/// The matrix table's cells as text, for the text table and the HTML report alike.
struct MatrixTable {
    QStringList header;
    QList<QStringList> rows; ///< one per result, in order, as many cells as the header
    QStringList failures; ///< per row: why no call ended OK (printable), empty for a measured cell
};
MatrixTable matrixTable(const QList<MatrixResult> &results);

/**
 * One row per cell: payload, stack (or transport/codec), callers, mean, p50, p99, req/s, bytes/call, CPU/call, codec
 * share, errors. A cell without one OK call has no latency and no rate: "-", as for any value not measured.
 */
QString formatMatrixTable(const QList<MatrixResult> &results);
/// The same as CSV, one header row with units, numbers unformatted (ns, bytes, seconds), bytes per call sent and
/// received apart; unknown values empty.
QString formatMatrixCsv(const QList<MatrixResult> &results);
/// The table as GitHub-flavoured markdown (for a wiki page, an issue, a slide tool that imports it), headed by
/// @p method; a failed cell's values are "-" with its error listed below, as in the text table.
QString formatMatrixMarkdown(const QList<MatrixResult> &results, const QString &method);
/**
 * Where each profiled cell's CPU goes (matrix --profile, --profile-client): a line per cell and profile with its
 * CPU per call and its @p top functions by self time per call ("nums=10  grpc/protobuf  c=1  server 47.6 us:
 * 12.3 grpc_call_start_batch, ..."); "no samples" with the profiler's notes for a cell it could not profile. Empty
 * when no cell was profiled.
 */
QString formatMatrixProfiles(const QList<MatrixResult> &results, int top = 3);

} // namespace rpcscope
