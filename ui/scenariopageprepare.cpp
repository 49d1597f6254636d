// ScenarioPage's other half: turning the editor's fields into a run (prepare()). The fields become a Scenario, which
// core checks and types (prepareRun, prepareCall) exactly as it does the CLI's flags; this file only words core's
// problems in the editor's labels. The widgets and the document side: scenariopage.cpp.
#include "scenariopage.h"

#include "scheduleeditor.h"

#include "scenario/matrixcell.h"
#include "scenario/runspec.h"

#include <QMap>
#include <QRegularExpression>

namespace rpcscope {

std::optional<ScenarioPage::Prepared> ScenarioPage::prepare(
    QString *error, const Variation *variation, BuiltinStart start) const
{
    auto fail = [&](const QString &why) -> std::optional<Prepared> {
        if (error)
            *error = why;
        return std::nullopt;
    };
    if (m_method.isEmpty())
        return fail(tr("Pick a method in the schema."));
    // The editor's fields as a document, checked and typed by core as the CLI's flags are.
    Scenario s = scenario();
    const QString ownTarget = s.target;
    // What the GUI does not apply to its runs (the CLI's exports, history options and pinning, kept in the document
    // for the CLI) is not checked here either: a folder for exports on another machine must not stop a run here.
    s.exports.clear();
    s.compareTo.clear();
    s.compareThreshold.clear();
    s.clientCpus.clear();
    s.serverCpus.clear();
    // A segment and start time are for the rpcscope-cli workers of a split run (run --segment): the window runs the
    // whole plan.
    s.segment.clear();
    s.startAt.clear();
    if (variation) {
        // A cell of the stack comparison, as core makes one for the CLI's matrix: a stack's own target, else this
        // scenario's target for its own transport and the built-in server for another.
        MatrixCell cell = variation->cell;
        if (cell.target.isEmpty())
            cell.stack.clear(); // a stack without a target of its own goes where its transport does
        s = scenarioForCell(s, cell, cell.transport == transport() ? ownTarget : QStringLiteral("builtin"));
        if (!variation->matrixId.isEmpty())
            labelMatrixCell(&s, variation->cell, variation->matrixId);
        // Its cells are transports, codecs and payloads of rpcscope's own client: the Load tab's client command is a
        // single run's (the CLI's matrix --client runs one against named stacks).
        s.clientCommand.clear();
        s.clientEnvironment.clear();
    }
    ScenarioProblem problem;
    std::optional<RunSpec> spec = prepareRun(s, &problem);
    if (!spec)
        return fail(describeProblem(problem));
    std::optional<GrpcCall> call = prepareCall(*spec, m_schema, &problem);
    if (!call)
        return fail(describeProblem(problem));
    Prepared p { s, std::move(*spec), std::move(*call) };
    if (p.spec.server == RunServer::Builtin && p.spec.transport.kind != TransportKind::InProcess) {
        // The window's own servers start on their first use (and again if their process died).
        QString why;
        if (start == BuiltinStart::WhenUsed && m_builtinStarter && !m_builtinStarter(&why))
            return fail(tr("The built-in servers did not start: %1").arg(why));
        p.spec.target.address = m_builtinTargets.value(p.spec.transport.kind);
    }
    return p;
}

QString ScenarioPage::describeProblem(const ScenarioProblem &problem) const
{
    // The field as the editor labels it; the request's own errors (a field, a JSON position) speak for themselves.
    static const QRegularExpression index(QStringLiteral("\\[[0-9]+\\]"));
    QString field = problem.field;
    field.remove(index);
    const QMap<QString, QString> labels {
        { QStringLiteral("transport"), tr("Transport") },
        { QStringLiteral("codec"), tr("Codec") },
        { QStringLiteral("target"), tr("Target") },
        { QStringLiteral("fills"), tr("Fill sizes") },
        { QStringLiteral("metadata"), tr("Metadata") },
        { QStringLiteral("request_binary_file"), tr("Binary request") },
        { QStringLiteral("load.calls"), tr("Calls") },
        { QStringLiteral("load.concurrency"), tr("Concurrency") },
        { QStringLiteral("load.duration"), tr("Duration") },
        { QStringLiteral("load.rate"), tr("Rate") },
        { QStringLiteral("load.warmup"), tr("Warm-up") },
        { QStringLiteral("load.timeout"), tr("Timeout") },
        { QStringLiteral("load.connections"), tr("Connections") },
        { QStringLiteral("load.stream_call_count"), tr("Stream messages") },
        { QStringLiteral("load.stream_interval"), tr("Stream interval") },
        { QStringLiteral("load.stream_call_duration"), tr("Stream call duration") },
        { QStringLiteral("load.max_receive_size"), tr("Max receive") },
        { QStringLiteral("load.max_send_size"), tr("Max send") },
        { QStringLiteral("load.http2_window"), tr("HTTP/2 window") },
        { QStringLiteral("load.client_threads"), tr("Client threads") },
        { QStringLiteral("load.interval"), tr("Interval") },
        { QStringLiteral("connection"), tr("TLS") },
        { QStringLiteral("connection.security"), tr("Security") },
        { QStringLiteral("connection.cacert"), tr("CA file") },
        { QStringLiteral("connection.cert"), tr("Client cert") },
        { QStringLiteral("connection.key"), tr("Client key") },
        { QStringLiteral("raw_samples"), tr("Raw samples") },
        { QStringLiteral("checks"), tr("Checks") },
        { QStringLiteral("expect.replies"), tr("Expect") },
        { QStringLiteral("expect.first"), tr("Expect") },
        { QStringLiteral("expect.every"), tr("Expect") },
        { QStringLiteral("expect.status"), tr("Expect status") },
        { QStringLiteral("http_path"), tr("URL path") },
        // The A/B dialog's fields (prepareAb()).
        { QStringLiteral("ab.block"), tr("Block size") },
        { QStringLiteral("ab.restarts"), tr("Server processes per side") },
        { QStringLiteral("ab.connection"), tr("Connections") },
        { QStringLiteral("ab.threshold"), tr("Regression threshold") },
        { QStringLiteral("ab.until_decided"), tr("Until decided") },
        { QStringLiteral("ab.max_duration"), tr("Time limit") },
    };
    // Another field named in the message ("needs the rate (load.rate)") is its label too.
    QString message = problem.message;
    for (auto it = labels.begin(); it != labels.end(); ++it) {
        if (it.key().contains(QLatin1Char('.')))
            message.replace(it.key(), it.value());
    }
    const QMap<QString, QString> scheduleParts {
        { QString(), QString() },
        { QStringLiteral(".kind"), tr("Kind") },
        { QStringLiteral(".start"), tr("Start") },
        { QStringLiteral(".step"), tr("Step") },
        { QStringLiteral(".end"), tr("End") },
        { QStringLiteral(".step_duration"), tr("Step duration") },
        { QStringLiteral(".max_duration"), tr("Max duration") },
    };
    for (const auto &[prefix, editor] : { std::pair(QStringLiteral("load.rate_schedule"), m_rateSchedule),
             std::pair(QStringLiteral("load.concurrency_schedule"), m_callerSchedule) }) {
        if (!field.startsWith(prefix))
            continue;
        const QString part = scheduleParts.value(field.mid(prefix.size()));
        return part.isEmpty() ? tr("%1: %2").arg(editor->title(), message)
                              : tr("%1: %2: %3").arg(editor->title(), part, message);
    }
    if (field == u"request" || field == u"method" || !labels.contains(field))
        return message;
    return tr("%1: %2").arg(labels.value(field), message);
}

} // namespace rpcscope
