// ScenarioPage's other half: turning the editor's fields into a run (prepare()), checked as the CLI checks its
// flags, with the reason when they do not make one. The widgets and the document side: scenariopage.cpp.
#include "scenariopage.h"

#include "metadataeditor.h"
#include "scheduleeditor.h"

#include "server/servercommand.h"
#include "util/units.h"

#include <google/protobuf/descriptor.h>

#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QSpinBox>
#include <QUrl>

#include <limits>
#include <tuple>

namespace rpcscope {

std::optional<ScenarioPage::Prepared> ScenarioPage::prepare(QString *error, const Variation *variation) const
{
    auto fail = [&](const QString &why) -> std::optional<Prepared> {
        if (error)
            *error = why;
        return std::nullopt;
    };
    if (m_method.isEmpty())
        return fail(tr("Pick a method in the schema."));
    Prepared p;
    RequestSpec spec;
    spec.call = m_method;
    spec.json = m_request->toPlainText().toUtf8();
    if (const QString binary = m_requestBinary->text().trimmed(); !binary.isEmpty()) {
        QFile file(binary);
        if (!file.open(QIODevice::ReadOnly))
            return fail(tr("Binary request %1: %2").arg(binary, file.errorString()));
        spec.binary = file.readAll();
        spec.json.clear();
    }
    for (const QString &fill : m_fills->text().split(QLatin1Char(','), Qt::SkipEmptyParts))
        spec.fills << fill.trimmed();
    if (variation)
        spec.fills += variation->fills;
    spec.decodeResponse = !m_discard->isChecked();
    QString why;
    std::optional<GrpcCall> call = prepareGrpcCall(m_schema, spec, &why);
    if (!call)
        return fail(why);
    if (!parseStreamOptions({ m_streamCallCount->text(), m_streamInterval->text(), m_streamCallDuration->text(),
                                m_streamPingPong->isChecked() },
            &call->stream, &why))
        return fail(why.replace(QStringLiteral("--stream-call-count"), tr("Stream messages"))
                        .replace(QStringLiteral("--stream-interval"), tr("Stream interval"))
                        .replace(QStringLiteral("--stream-call-duration"), tr("Stream call duration")));
    p.call = std::move(*call);

    p.transport.kind = variation ? variation->transport : transport();
    p.transport.codec = variation ? variation->codec : static_cast<Codec>(m_codec->currentData().toInt());
    p.transport.rpcMethod = m_rpcMethod->text().trimmed();
    p.transport.msgpackParamsMap = m_msgpackParams->currentIndex() == 1;
    if (p.transport.kind != TransportKind::Http && p.transport.kind != TransportKind::InProcess
        && p.transport.codec != defaultCodec(p.transport.kind))
        return fail(
            tr("%1 carries %2 only.").arg(m_transport->currentText(), codecName(defaultCodec(p.transport.kind))));
    const MethodInfo method = Schema::methodInfo(p.call.method);
    if (p.transport.kind != TransportKind::Grpc && (method.clientStreaming || method.serverStreaming))
        return fail(tr("%1 is a %2 method: streaming calls go over gRPC only.").arg(method.name, method.kindName()));
    if (p.transport.kind != TransportKind::InProcess) {
        p.target.address = variation && variation->transport != transport()
            ? m_builtinTargets.value(variation->transport)
            : m_target->currentText().trimmed();
        if (looksLikeCommand(p.target.address)) {
            // A server command: the window starts it and dials the port it gets.
            p.serverCommand = p.target.address;
            p.target.address.clear();
            ServerCommand command;
            command.command = p.serverCommand;
            if (QString why; !command.check(&why))
                return fail(tr("Server command: %1").arg(why));
        } else if (p.transport.kind == TransportKind::Http) {
            const QUrl url(p.target.address, QUrl::StrictMode);
            if (!url.isValid() || url.scheme() != u"http" || url.host().isEmpty())
                return fail(tr("Target \"%1\" is not an http:// URL.").arg(p.target.address));
        } else if (!p.target.address.contains(QLatin1Char(':'))) {
            return fail(tr("Target \"%1\" is not HOST:PORT.").arg(p.target.address));
        }
    }
    for (const auto &[rawKey, value] : m_metadata->pairs()) {
        const QString key = rawKey.toLower();
        if (key.isEmpty())
            return fail(tr("Metadata: the value \"%1\" has no key.").arg(value));
        if (key.startsWith(QLatin1Char(':')) || key.contains(QLatin1Char(' ')))
            return fail(tr("Metadata: \"%1\" is not a valid key.").arg(rawKey));
        p.target.metadata.emplace_back(key.toStdString(), value.toStdString());
    }
    if (const std::optional<QString> problem = prepareConnection(&p, variation))
        return fail(*problem);
    for (const auto &[edit, field, name] : { std::tuple(m_maxReceive, &p.target.maxReceiveBytes, tr("Max receive")),
             std::tuple(m_maxSend, &p.target.maxSendBytes, tr("Max send")) }) {
        const QString text = edit->text().trimmed();
        if (text.isEmpty())
            continue;
        const auto size = parseByteSize(text, &why);
        if (!size || *size > std::numeric_limits<int>::max())
            return fail(tr("%1: %2").arg(name, size ? tr("at most 2 GiB") : why));
        *field = static_cast<int>(*size);
    }
    p.target.connections = m_connections->value();
    if (variation && variation->transport != transport()) // the connection default that suits that transport
        p.target.connections = variation->transport == TransportKind::Http ? 0 : 1;
    const QString timeout = m_timeout->text().trimmed();
    if (!timeout.isEmpty() && timeout != u"0") {
        const auto d = parseDuration(timeout, &why);
        if (!d)
            return fail(tr("Timeout: %1").arg(why));
        p.target.timeout = *d;
    }

    p.plan.concurrency = m_concurrency->value();
    p.plan.totalCalls = static_cast<uint64_t>(m_calls->value());
    if (!parseWarmup(m_warmup->text(), &p.plan, &why))
        return fail(tr("Warm-up: %1").arg(why));
    const QString duration = m_duration->text().trimmed();
    if (!duration.isEmpty()) {
        const auto d = parseDuration(duration, &why);
        if (!d)
            return fail(tr("Duration: %1").arg(why));
        p.plan.duration = *d;
    }
    const QString rate = m_rate->text().trimmed();
    if (!rate.isEmpty()) {
        bool ok = false;
        RateSchedule schedule;
        schedule.start = rate.toDouble(&ok);
        if (!ok || schedule.start <= 0)
            return fail(tr("Rate: \"%1\" is not a positive number of calls per second.").arg(rate));
        p.plan.rate = schedule;
    }
    const std::optional<RateSchedule> rateSchedule = m_rateSchedule->schedule(&why);
    if (!rateSchedule && m_rateSchedule->isChecked())
        return fail(why);
    const std::optional<RateSchedule> callerSchedule = m_callerSchedule->schedule(&why);
    if (!callerSchedule && m_callerSchedule->isChecked())
        return fail(why);
    if (rateSchedule) {
        if (p.plan.rate)
            return fail(tr("Give either a Rate or a rate schedule, not both."));
        p.plan.rate = rateSchedule;
    }
    if (callerSchedule) {
        if (p.plan.rate)
            return fail(tr("A concurrency schedule is for closed loops: clear the Rate and the rate schedule."));
        p.plan.concurrencySchedule = callerSchedule;
    }
    const bool scheduleEnds = (p.plan.rate && p.plan.rate->maxDuration.count() > 0)
        || (p.plan.concurrencySchedule && p.plan.concurrencySchedule->maxDuration.count() > 0);
    if (p.plan.totalCalls == 0 && p.plan.duration.count() == 0 && !scheduleEnds)
        return fail(tr("Set a number of calls or a duration."));

    p.target.clientThreads
        = m_clientThreads->value() > 0 ? m_clientThreads->value() : autoClientThreads(p.plan.concurrency);
    const QString interval = m_interval->text().trimmed();
    if (!interval.isEmpty()) {
        const auto d = parseDuration(interval, &why);
        if (!d || d->count() <= 0)
            return fail(tr("Interval: %1").arg(d ? tr("must be positive") : why));
        p.plan.interval = *d;
    }
    for (const QString &text : checks()) {
        const std::optional<Check> check = parseCheck(text, &why);
        if (!check)
            return fail(tr("Checks: %1").arg(why));
        p.checks.push_back(*check);
    }
    // A matrix makes many runs: one file of samples would be overwritten by each, so only single runs write it.
    if (!variation) {
        p.rawSamplesPath = m_rawSamples->text().trimmed();
        p.plan.recordRawSamples = !p.rawSamplesPath.isEmpty();
    }
    return p;
}

std::optional<QString> ScenarioPage::prepareConnection(Prepared *p, const Variation *variation) const
{
    p->target.authority = m_authority->text().trimmed().toStdString();
    // TLS belongs to the scenario's own gRPC target; a matrix cell on another transport goes to a built-in server.
    if (p->transport.kind != TransportKind::Grpc || transport() != TransportKind::Grpc
        || (variation && variation->transport != transport()))
        return std::nullopt;
    const QString mode = m_security->currentData().toString();
    if (mode == u"plaintext")
        return std::nullopt;
    if (mode == u"auto") {
        p->target.tls.enabled
            = p->serverCommand.isEmpty() && !isLoopbackAddress(p->target.address); // commands listen on loopback
        return std::nullopt;
    }
    const bool hasCert = !m_clientCert->text().trimmed().isEmpty();
    if (hasCert != !m_clientKey->text().trimmed().isEmpty())
        return tr("TLS: a client certificate and its key go together.");
    if (m_builtinTargets.values().contains(p->target.address))
        return tr("TLS: the built-in servers serve plaintext; choose Automatic or Plaintext.");
    const bool anySetting = !m_caCert->text().trimmed().isEmpty() || hasCert
        || !m_serverName->text().trimmed().isEmpty() || m_skipVerify->isChecked();
    // A document says TLS through these settings (as the CLI's flags do); with none, a loopback target would
    // run in plaintext from the CLI. Such a server's certificate needs a CA file or a name anyway.
    if (!anySetting && isLoopbackAddress(p->target.address))
        return tr("TLS to a loopback target: give the CA file, the server name or skip verification.");
    for (const auto &[edit, into, name] : { std::tuple(m_caCert, &p->target.tls.rootCerts, tr("CA file")),
             std::tuple(m_clientCert, &p->target.tls.certChain, tr("Client cert")),
             std::tuple(m_clientKey, &p->target.tls.privateKey, tr("Client key")) }) {
        const QString path = edit->text().trimmed();
        if (path.isEmpty())
            continue;
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly))
            return tr("%1 %2: %3").arg(name, path, file.errorString());
        *into = file.readAll().toStdString();
        if (into->find("-----BEGIN") == std::string::npos)
            return tr("%1 %2: not a PEM file").arg(name, path);
    }
    p->target.tls.serverNameOverride = m_serverName->text().trimmed().toStdString();
    p->target.tls.skipVerify = m_skipVerify->isChecked();
    p->target.tls.enabled = true;
    return std::nullopt;
}

} // namespace rpcscope
