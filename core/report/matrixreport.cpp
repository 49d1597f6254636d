#include "matrixreport.h"

#include "util/units.h"

#include <QTextStream>

namespace rpcscope {

QString MatrixCell::label() const
{
    return transportName(transport) + QLatin1Char('/') + codecName(codec);
}

QList<MatrixCell> matrixCells(
    const QList<TransportKind> &transports, const QList<Codec> &codecs, const QStringList &payloads)
{
    QList<MatrixCell> cells;
    const QStringList variants = payloads.isEmpty() ? QStringList { QString() } : payloads;
    for (const QString &payload : variants) {
        QList<MatrixCell> baseline;
        for (TransportKind transport : transports) {
            for (Codec codec : codecs) {
                const bool carries = transport == TransportKind::Http || transport == TransportKind::InProcess
                    || codec == defaultCodec(transport);
                if (!carries)
                    continue;
                MatrixCell cell { transport, codec, payload };
                (transport == TransportKind::InProcess ? baseline : cells).append(cell);
            }
        }
        cells += baseline;
    }
    return cells;
}

namespace {

double meanNs(const RunSnapshot &run)
{
    return run.latency.count() ? run.latency.mean() : 0.0;
}

double bytesPerCall(const RunSnapshot &run)
{
    const uint64_t calls = run.callsCompleted();
    return calls ? static_cast<double>(run.bytesSent + run.bytesReceived) / static_cast<double>(calls) : 0.0;
}

} // namespace

double codecShare(const QList<MatrixResult> &results, qsizetype index)
{
    const MatrixResult &r = results.at(index);
    if (r.cell.transport == TransportKind::InProcess)
        return -1;
    for (const MatrixResult &other : results) {
        if (other.cell.transport == TransportKind::InProcess && other.cell.codec == r.cell.codec
            && other.cell.payload == r.cell.payload) {
            const double cellMean = meanNs(r.run);
            return cellMean > 0 ? meanNs(other.run) / cellMean : -1;
        }
    }
    return -1;
}

QString formatMatrixTable(const QList<MatrixResult> &results)
{
    QString text;
    QTextStream out(&text);
    const QStringList header { QStringLiteral("payload"), QStringLiteral("transport/codec"), QStringLiteral("mean"),
        QStringLiteral("p50"), QStringLiteral("p99"), QStringLiteral("req/s"), QStringLiteral("bytes/call"),
        QStringLiteral("client CPU"), QStringLiteral("server CPU"), QStringLiteral("codec share"),
        QStringLiteral("errors") };
    QList<QStringList> rows;
    for (qsizetype i = 0; i < results.size(); ++i) {
        const MatrixResult &r = results.at(i);
        const double share = codecShare(results, i);
        const bool baseline = r.cell.transport == TransportKind::InProcess;
        // A cell whose calls all failed has no latency: unknown, not 0 (which would read as the fastest cell).
        auto latency = [&r](uint64_t ns) { return r.run.latency.count() ? formatNanos(ns) : QStringLiteral("-"); };
        rows.append({ r.cell.payload.isEmpty() ? QStringLiteral("(as given)") : r.cell.payload,
            r.cell.label() + (baseline ? QStringLiteral(" (c=1)") : QString()),
            latency(static_cast<uint64_t>(meanNs(r.run))), latency(r.run.latency.percentile(50)),
            latency(r.run.latency.percentile(99)), QString::number(r.run.requestsPerSecond(), 'f', 0),
            formatBytes(static_cast<uint64_t>(bytesPerCall(r.run))),
            QString::number(r.run.clientCpuPerCallUs(), 'f', 1) + QStringLiteral(" us"),
            baseline || r.run.serverCpuSeconds <= 0
                ? QStringLiteral("-")
                : QString::number(r.run.serverCpuPerCallUs(), 'f', 1) + QStringLiteral(" us"),
            share < 0 ? QStringLiteral("-") : QString::number(share * 100, 'f', 1) + QLatin1Char('%'),
            QString::number(r.run.callsFailed()) });
    }
    QList<qsizetype> widths;
    for (qsizetype c = 0; c < header.size(); ++c) {
        qsizetype w = header.at(c).size();
        for (const QStringList &row : std::as_const(rows))
            w = std::max(w, row.at(c).size());
        widths.append(w);
    }
    auto line = [&](const QStringList &cells) {
        for (qsizetype c = 0; c < cells.size(); ++c) {
            // Text left, numbers right.
            out << (c < 2 ? cells.at(c).leftJustified(widths.at(c)) : cells.at(c).rightJustified(widths.at(c)));
            out << (c + 1 < cells.size() ? "  " : "\n");
        }
    };
    line(header);
    for (const QStringList &row : std::as_const(rows))
        line(row);
    out << "\ncodec share: the no-RPC baseline's mean (encode + decode both ways + the method, one caller) over the"
           " cell's mean, same codec and payload.\n";
    return text;
}

QString formatMatrixCsv(const QList<MatrixResult> &results)
{
    QString text;
    QTextStream out(&text);
    out << "payload,transport,codec,calls,errors,mean_ns,p50_ns,p90_ns,p99_ns,requests_per_s,bytes_sent_per_call,"
           "bytes_received_per_call,client_cpu_us_per_call,server_cpu_us_per_call,codec_share\n";
    for (qsizetype i = 0; i < results.size(); ++i) {
        const MatrixResult &r = results.at(i);
        const double calls = std::max<double>(1, static_cast<double>(r.run.callsCompleted()));
        QString payload = r.cell.payload;
        if (payload.contains(QLatin1Char(',')) || payload.contains(QLatin1Char('"')))
            payload
                = QLatin1Char('"') + payload.replace(QStringLiteral("\""), QStringLiteral("\"\"")) + QLatin1Char('"');
        const double share = codecShare(results, i);
        // No OK call, no latency: those fields are left empty rather than 0.
        auto latency = [&r](double ns) { return r.run.latency.count() ? QString::number(ns, 'f', 0) : QString(); };
        out << payload << ',' << transportName(r.cell.transport) << ',' << codecName(r.cell.codec) << ','
            << r.run.callsCompleted() << ',' << r.run.callsFailed() << ',' << latency(meanNs(r.run)) << ','
            << latency(r.run.latency.percentile(50)) << ',' << latency(r.run.latency.percentile(90)) << ','
            << latency(r.run.latency.percentile(99)) << ',' << QString::number(r.run.requestsPerSecond(), 'f', 1) << ','
            << QString::number(static_cast<double>(r.run.bytesSent) / calls, 'f', 1) << ','
            << QString::number(static_cast<double>(r.run.bytesReceived) / calls, 'f', 1) << ','
            << QString::number(r.run.clientCpuPerCallUs(), 'f', 2) << ','
            << (r.run.serverCpuSeconds > 0 ? QString::number(r.run.serverCpuPerCallUs(), 'f', 2) : QString()) << ','
            << (share < 0 ? QString() : QString::number(share, 'f', 4)) << '\n';
    }
    return text;
}

} // namespace rpcscope
