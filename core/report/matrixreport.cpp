#include "matrixreport.h"

#include "metrics/callstatus.h"
#include "report/profilereport.h"
#include "util/printable.h"
#include "util/units.h"

#include <QRegularExpression>
#include <QTextStream>

#include <algorithm>
#include <cmath>

namespace rpcscope {

namespace {
const char *const kCodecShareNote
    = "codec share: the no-RPC baseline's mean (the request decoded, the method run, the reply encoded and decoded: "
      "one call's codec work in rpcscope's C++ codecs, one caller) over the cell's mean, same codec and payload; "
      "only for cells served by rpcscope's built-in servers, which use the same codecs, or for a stack with a "
      "baseline command of its own (,baseline=COMMAND: that command's time per call over the cell's mean); '-' where "
      "the baseline took longer than the whole call, which then cannot be split.";
} // namespace

QString MatrixStack::spec() const
{
    QString text = name + QLatin1Char('=') + transportName(transport) + QLatin1Char('/') + codecName(codec);
    if (!target.isEmpty())
        text += QLatin1Char('@') + target;
    if (!rpcMethod.isEmpty())
        text += QStringLiteral(",method=") + rpcMethod;
    if (!httpPath.isEmpty())
        text += QStringLiteral(",path=") + httpPath;
    if (!baselineCommand.isEmpty())
        text += QStringLiteral(",baseline=") + baselineCommand;
    return text;
}

std::optional<MatrixStack> parseMatrixStack(const QString &input, QString *error)
{
    auto fail = [&](const QString &why) -> std::optional<MatrixStack> {
        if (error)
            *error = QStringLiteral("\"%1\": %2").arg(input, why);
        return std::nullopt;
    };
    const qsizetype equals = input.indexOf(QLatin1Char('='));
    if (equals <= 0)
        return fail(
            QStringLiteral("expected NAME=TRANSPORT[/CODEC]@TARGET, e.g. fastapi=http/json@http://127.0.0.1:8000/sum"));
    MatrixStack stack;
    stack.name = input.left(equals).trimmed();
    static const QRegularExpression nameChars(QStringLiteral("^[A-Za-z0-9_.+:-]+$"));
    if (!nameChars.match(stack.name).hasMatch())
        return fail(QStringLiteral("the name \"%1\" may hold letters, digits and . _ + : - only").arg(stack.name));
    QString rest = input.mid(equals + 1).trimmed();
    // Options after the target, cut off the end: `,KEY=VALUE`, the value running to the end of what is left. The
    // baseline command comes last and may hold anything (commas, '=' and '@' too): cut at its first key.
    auto takeOption = [&rest](const QString &key, bool first) {
        const qsizetype at = first ? rest.indexOf(key) : rest.lastIndexOf(key);
        if (at < 0)
            return std::optional<QString>();
        const QString value = rest.mid(at + key.size()).trimmed();
        rest = rest.left(at).trimmed();
        return std::optional<QString>(value);
    };
    if (const auto command = takeOption(QStringLiteral(",baseline="), true)) {
        stack.baselineCommand = *command;
        if (stack.baselineCommand.isEmpty())
            return fail(QStringLiteral("baseline= needs a command that prints one call's codec time"));
    }
    if (const auto method = takeOption(QStringLiteral(",method="), false)) {
        stack.rpcMethod = *method;
        if (stack.rpcMethod.isEmpty())
            return fail(QStringLiteral("method= needs the server's method name"));
    }
    if (const auto path = takeOption(QStringLiteral(",path="), false)) {
        stack.httpPath = *path;
        if (!stack.httpPath.startsWith(QLatin1Char('/')))
            return fail(QStringLiteral("path= needs a URL path, e.g. path=/rpc"));
    }
    const qsizetype at = rest.indexOf(QLatin1Char('@'));
    const QString kind = at < 0 ? rest : rest.left(at).trimmed();
    stack.target = at < 0 ? QString() : rest.mid(at + 1).trimmed();
    const QString transport = kind.section(QLatin1Char('/'), 0, 0);
    const auto parsedTransport = parseTransport(transport);
    if (!parsedTransport)
        return fail(QStringLiteral("\"%1\" is not grpc, h2grpc, http, msgpack or none").arg(transport));
    stack.transport = *parsedTransport;
    stack.codec = defaultCodec(stack.transport);
    if (kind.contains(QLatin1Char('/'))) {
        const QString codec = kind.section(QLatin1Char('/'), 1);
        const auto parsedCodec = parseCodec(codec);
        if (!parsedCodec)
            return fail(QStringLiteral("\"%1\" is not protobuf, json or msgpack").arg(codec));
        stack.codec = *parsedCodec;
    }
    if (!carriesCodec(stack.transport, stack.codec))
        return fail(QStringLiteral("%1 carries %2 only")
                        .arg(transportName(stack.transport), codecName(defaultCodec(stack.transport))));
    if (stack.transport == TransportKind::InProcess && !stack.target.isEmpty())
        return fail(QStringLiteral("none runs in process, with no target: drop @%1").arg(stack.target));
    if (stack.transport != TransportKind::InProcess && stack.target.isEmpty())
        return fail(QStringLiteral("no target: add @ADDRESS, @URL, @'SERVER COMMAND {port}' or @builtin"));
    if (!stack.rpcMethod.isEmpty() && stack.transport != TransportKind::Msgpack)
        return fail(QStringLiteral("method= names a msgpack-rpc method (an HTTP stack's path is in its URL, or in "
                                   "path= for a server command)"));
    if (!stack.httpPath.isEmpty() && stack.transport != TransportKind::Http)
        return fail(QStringLiteral("path= is for an HTTP stack"));
    if (!stack.baselineCommand.isEmpty() && stack.transport == TransportKind::InProcess)
        return fail(QStringLiteral("baseline= is for a stack with a server; none is a baseline itself"));
    return stack;
}

QString MatrixCell::kind() const
{
    return transportName(transport) + QLatin1Char('/') + codecName(codec);
}

QString MatrixCell::label() const
{
    return stack.isEmpty() ? kind() : stack;
}

QList<MatrixCell> matrixCells(const QList<TransportKind> &transports, const QList<Codec> &codecs,
    const QStringList &payloads, const QList<int> &concurrency)
{
    QList<MatrixStack> stacks;
    for (TransportKind transport : transports) {
        for (Codec codec : codecs) {
            if (carriesCodec(transport, codec))
                stacks.append({ QString(), transport, codec, QString(), QString(), QString(), QString() });
        }
    }
    // The baseline last.
    std::stable_partition(stacks.begin(), stacks.end(),
        [](const MatrixStack &stack) { return stack.transport != TransportKind::InProcess; });
    return stackCells(stacks, payloads, concurrency);
}

QList<MatrixCell> stackCells(
    const QList<MatrixStack> &stacks, const QStringList &payloads, const QList<int> &concurrency)
{
    QList<MatrixCell> cells;
    const QStringList variants = payloads.isEmpty() ? QStringList { QString() } : payloads;
    const QList<int> levels = concurrency.isEmpty() ? QList<int> { 0 } : concurrency;
    for (const QString &payload : variants) {
        QList<MatrixCell> baseline; // once per payload, after the networked cells of every level
        for (qsizetype level = 0; level < levels.size(); ++level) {
            for (const MatrixStack &stack : stacks) {
                const bool inProcess = stack.transport == TransportKind::InProcess;
                if (inProcess && level > 0)
                    continue;
                MatrixCell cell;
                cell.transport = stack.transport;
                cell.codec = stack.codec;
                cell.payload = payload;
                cell.concurrency = inProcess ? 1 : levels.at(level);
                cell.stack = stack.name;
                cell.target = stack.target;
                cell.rpcMethod = stack.rpcMethod;
                cell.httpPath = stack.httpPath;
                cell.baselineCommand = stack.baselineCommand;
                (inProcess ? baseline : cells).append(cell);
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
    // A share of the whole is at most all of it: a baseline that took longer than the call (noise, another
    // machine's baseline command) cannot split it, and is unknown rather than "127.5%".
    auto share = [](double baselineNs, double cellMean) {
        return baselineNs > 0 && cellMean > 0 && baselineNs <= cellMean ? baselineNs / cellMean : -1.0;
    };
    if (!r.cell.baselineCommand.isEmpty()) // the user's own baseline, for their own server
        return share(r.baselineNs, meanNs(r.run));
    if (!r.cell.ownServer)
        return -1;
    for (const MatrixResult &other : results) {
        if (other.cell.transport == TransportKind::InProcess && other.cell.codec == r.cell.codec
            && other.cell.payload == r.cell.payload) {
            return share(meanNs(other.run), meanNs(r.run));
        }
    }
    return -1;
}

MatrixTable matrixTable(const QList<MatrixResult> &results)
{
    MatrixTable table;
    table.header = QStringList { QStringLiteral("payload"), QStringLiteral("stack"), QStringLiteral("c"),
        QStringLiteral("mean"), QStringLiteral("p50"), QStringLiteral("p99"), QStringLiteral("req/s"),
        QStringLiteral("bytes/call"), QStringLiteral("client CPU"), QStringLiteral("server CPU"),
        QStringLiteral("codec share"), QStringLiteral("errors") };
    for (qsizetype i = 0; i < results.size(); ++i) {
        const MatrixResult &r = results.at(i);
        const double share = codecShare(results, i);
        const bool baseline = r.cell.transport == TransportKind::InProcess;
        // A cell whose calls all failed has no latency and no rate: unknown, not 0 (which would read as the fastest
        // cell) and not the rate at which it failed.
        const bool measured = r.run.latency.count() > 0;
        auto latency = [measured](uint64_t ns) { return measured ? formatNanos(ns) : QStringLiteral("-"); };
        const QString stack
            = r.cell.stack.isEmpty() ? r.cell.kind() : r.cell.stack + QStringLiteral(" (") + r.cell.kind() + u')';
        table.rows.append({ r.cell.payload.isEmpty() ? QStringLiteral("(as given)") : r.cell.payload, stack,
            r.cell.concurrency > 0 ? QString::number(r.cell.concurrency) : QStringLiteral("-"),
            latency(static_cast<uint64_t>(meanNs(r.run))), latency(r.run.latency.percentile(50)),
            latency(r.run.latency.percentile(99)),
            measured ? QString::number(r.run.requestsPerSecond(), 'f', 0) : QStringLiteral("-"),
            // Bytes and CPU of calls that all failed (a refused connection) say nothing about the stack.
            measured ? formatBytes(static_cast<uint64_t>(bytesPerCall(r.run))) : QStringLiteral("-"),
            measured ? QString::number(r.run.clientCpuPerCallUs(), 'f', 1) + QStringLiteral(" us")
                     : QStringLiteral("-"),
            baseline || r.run.serverCpuSeconds <= 0
                ? QStringLiteral("-")
                : QString::number(r.run.serverCpuPerCallUs(), 'f', 1) + QStringLiteral(" us"),
            share < 0 ? QStringLiteral("-") : QString::number(share * 100, 'f', 1) + QLatin1Char('%'),
            // A cell that could not be run counted no calls at all: its errors are unknown, not none.
            r.failure.isEmpty() ? QString::number(r.run.callsFailed()) : QStringLiteral("-") });
        QString why;
        if (!measured) {
            why = QStringLiteral("no call ended OK");
            if (!r.failure.isEmpty())
                why = printable(r.failure);
            else if (!r.run.errors.isEmpty())
                why += QStringLiteral(" (%1: %2)")
                           .arg(callStatusName(r.run.errors.first().status), printable(r.run.errors.first().message));
        }
        table.failures.append(why);
    }
    return table;
}

QString formatMatrixTable(const QList<MatrixResult> &results)
{
    QString text;
    QTextStream out(&text);
    const MatrixTable table = matrixTable(results);
    const QStringList &header = table.header;
    const QList<QStringList> &rows = table.rows;
    constexpr qsizetype kTextColumns = 2;
    QStringList failures;
    for (qsizetype i = 0; i < rows.size(); ++i) {
        if (!table.failures.at(i).isEmpty())
            failures << QStringLiteral("%1 %2 c=%3: FAILED, %4")
                            .arg(rows.at(i).at(0), rows.at(i).at(1), rows.at(i).at(2), table.failures.at(i));
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
            out << (c < kTextColumns ? cells.at(c).leftJustified(widths.at(c))
                                     : cells.at(c).rightJustified(widths.at(c)));
            out << (c + 1 < cells.size() ? "  " : "\n");
        }
    };
    line(header);
    for (const QStringList &row : std::as_const(rows))
        line(row);
    if (!failures.isEmpty())
        out << '\n' << failures.join(u'\n') << '\n';
    out << '\n' << kCodecShareNote << '\n';
    return text;
}

QString formatMatrixMarkdown(const QList<MatrixResult> &results, const QString &method)
{
    const MatrixTable table = matrixTable(results);
    constexpr qsizetype kTextColumns = 2;
    // A cell's text may hold a '|' (a stack's name cannot, a payload can): escaped, it stays in its cell.
    auto cell = [](QString text) { return printable(text.replace(QLatin1Char('|'), QStringLiteral("\\|"))); };
    QString text = QStringLiteral("## %1: %2 cells\n\n").arg(cell(method)).arg(results.size());
    QStringList header;
    QStringList align;
    for (qsizetype c = 0; c < table.header.size(); ++c) {
        header << cell(table.header.at(c));
        align << (c < kTextColumns ? QStringLiteral(":--") : QStringLiteral("--:")); // text left, numbers right
    }
    text += QStringLiteral("| ") + header.join(QStringLiteral(" | ")) + QStringLiteral(" |\n| ")
        + align.join(QStringLiteral(" | ")) + QStringLiteral(" |\n");
    QStringList failures;
    for (qsizetype i = 0; i < table.rows.size(); ++i) {
        QStringList cells;
        for (const QString &value : table.rows.at(i))
            cells << cell(value);
        text += QStringLiteral("| ") + cells.join(QStringLiteral(" | ")) + QStringLiteral(" |\n");
        if (!table.failures.at(i).isEmpty())
            failures << QStringLiteral("- %1 %2 c=%3: **failed**, %4")
                            .arg(cells.at(0), cells.at(1), cells.at(2), cell(table.failures.at(i)));
    }
    if (!failures.isEmpty())
        text += u'\n' + failures.join(u'\n') + u'\n';
    text += QStringLiteral("\n")
        + QString::fromLatin1(kCodecShareNote).replace(QStringLiteral("codec share:"), QStringLiteral("*codec share*:"))
        + u'\n';
    return text;
}

QString formatMatrixCsv(const QList<MatrixResult> &results)
{
    QString text;
    QTextStream out(&text);
    auto quoted = [](QString field) {
        if (field.contains(QLatin1Char(',')) || field.contains(QLatin1Char('"')) || field.contains(QLatin1Char('\n')))
            field = QLatin1Char('"') + field.replace(QStringLiteral("\""), QStringLiteral("\"\"")) + QLatin1Char('"');
        return field;
    };
    out << "payload,stack,transport,codec,concurrency,calls,errors,mean_ns,p50_ns,p90_ns,p99_ns,requests_per_s,"
           "bytes_sent_per_call,bytes_received_per_call,client_cpu_us_per_call,server_cpu_us_per_call,codec_share\n";
    for (qsizetype i = 0; i < results.size(); ++i) {
        const MatrixResult &r = results.at(i);
        const uint64_t completed = r.run.callsCompleted();
        const auto calls = static_cast<double>(completed);
        const double share = codecShare(results, i);
        // No OK call, no latency and no rate: those fields are left empty rather than 0.
        const bool measured = r.run.latency.count() > 0;
        auto latency = [measured](double ns) { return measured ? QString::number(ns, 'f', 0) : QString(); };
        auto perCall = [completed, calls](uint64_t total) {
            return completed ? QString::number(static_cast<double>(total) / calls, 'f', 1) : QString();
        };
        out << quoted(r.cell.payload) << ',' << quoted(r.cell.label()) << ',' << transportName(r.cell.transport) << ','
            << codecName(r.cell.codec) << ','
            << (r.cell.concurrency > 0 ? QString::number(r.cell.concurrency) : QString()) << ',' << completed << ','
            << r.run.callsFailed() << ',' << latency(meanNs(r.run)) << ',' << latency(r.run.latency.percentile(50))
            << ',' << latency(r.run.latency.percentile(90)) << ',' << latency(r.run.latency.percentile(99)) << ','
            << (measured ? QString::number(r.run.requestsPerSecond(), 'f', 1) : QString()) << ','
            << perCall(r.run.bytesSent) << ',' << perCall(r.run.bytesReceived) << ','
            << (completed ? QString::number(r.run.clientCpuPerCallUs(), 'f', 2) : QString()) << ','
            << (r.run.serverCpuSeconds > 0 ? QString::number(r.run.serverCpuPerCallUs(), 'f', 2) : QString()) << ','
            << (share < 0 ? QString() : QString::number(share, 'f', 4)) << '\n';
    }
    return text;
}

QString formatMatrixProfiles(const QList<MatrixResult> &results, int top)
{
    QString text;
    QTextStream out(&text);
    for (const MatrixResult &r : results) {
        for (const std::optional<Profile> *given : { &r.serverProfile, &r.clientProfile }) {
            if (!*given)
                continue;
            const Profile &profile = **given;
            if (text.isEmpty())
                out << "Where each cell's CPU goes (us per call; its " << top
                    << " heaviest functions by self time, self us per call each):\n";
            out << "  " << (r.cell.payload.isEmpty() ? QStringLiteral("-") : r.cell.payload) << "  " << r.cell.label()
                << "  c=" << r.cell.concurrency << "  " << profile.scope << ' ';
            if (profile.isEmpty() || profile.calls() <= 0) {
                out << "no samples";
                if (!profile.notes.isEmpty())
                    out << " (" << profile.notes.join(QStringLiteral("; ")) << ')';
                out << '\n';
                continue;
            }
            out << formatUsPerCall(profile.totalUsPerCall()) << " us:";
            const std::vector<FunctionCost> costs = functionCosts(profile.usPerCall());
            for (size_t i = 0; i < costs.size() && i < static_cast<size_t>(top); ++i)
                out << (i == 0 ? " " : "; ") << formatUsPerCall(costs[i].self) << ' ' << costs[i].name;
            out << '\n';
        }
    }
    return text;
}

} // namespace rpcscope
