#include "secrets.h"

#include <QCryptographicHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>

namespace rpcscope {

namespace {

const QString kRedactedPrefix = QStringLiteral("<redacted sha256:");

/// The scenario's own list of keys to redact ("secrets": {"redact": [...]}).
QStringList extraSecretKeys(const QJsonObject &scenario)
{
    QStringList keys;
    for (const auto &key :
        scenario.value(QStringLiteral("secrets")).toObject().value(QStringLiteral("redact")).toArray())
        keys << key.toString();
    return keys;
}

/// Redacts the secret values of a metadata JSON object in place; @p redacted collects "metadata KEY".
void redactMetadataObject(QJsonObject *metadata, const QStringList &extra, QStringList *redacted)
{
    for (auto it = metadata->begin(); it != metadata->end(); ++it) {
        if (!it.value().isString() || !isSecret(it.key(), it.value().toString(), extra)
            || isRedactedValue(it.value().toString()))
            continue;
        *it = redactedValue(it.value().toString());
        *redacted << QStringLiteral("metadata ") + it.key();
    }
}

/// The document's "metadata": [[key, value], ...] (or {key: value}, which documents may also use).
QJsonValue redactMetadata(const QJsonValue &metadata, const QStringList &extra, QStringList *redacted)
{
    if (metadata.isObject()) {
        QJsonObject object = metadata.toObject();
        redactMetadataObject(&object, extra, redacted);
        return object;
    }
    QJsonArray pairs = metadata.toArray();
    for (QJsonValueRef element : pairs) {
        QJsonArray pair = element.toArray();
        if (pair.size() != 2 || !isSecret(pair[0].toString(), pair[1].toString(), extra)
            || isRedactedValue(pair[1].toString()))
            continue;
        *redacted << QStringLiteral("metadata ") + pair[0].toString();
        pair[1] = redactedValue(pair[1].toString());
        element = pair;
    }
    return pairs;
}

/// A run saved with its CLI flags ({"arguments": [...]}, before runs kept a document): the JSON after -m/--metadata.
QJsonArray redactArguments(QJsonArray arguments, QStringList *redacted)
{
    auto redactJsonText = [redacted](const QString &text) {
        QJsonDocument doc = QJsonDocument::fromJson(text.toUtf8());
        if (!doc.isObject())
            return text;
        QJsonObject object = doc.object();
        const qsizetype before = redacted->size();
        redactMetadataObject(&object, {}, redacted);
        return redacted->size() == before ? text
                                          : QString::fromUtf8(QJsonDocument(object).toJson(QJsonDocument::Compact));
    };
    for (qsizetype i = 0; i < arguments.size(); ++i) {
        const QString argument = arguments[i].toString();
        if ((argument == u"-m" || argument == u"--metadata") && i + 1 < arguments.size()) {
            arguments[i + 1] = redactJsonText(arguments[i + 1].toString());
            ++i;
        } else if (argument.startsWith(QStringLiteral("--metadata="))) {
            arguments[i] = QString(QStringLiteral("--metadata=") + redactJsonText(argument.mid(11)));
        } else if (argument.startsWith(QStringLiteral("-m")) && argument.size() > 2) {
            arguments[i] = QString(QStringLiteral("-m") + redactJsonText(argument.mid(2)));
        }
    }
    return arguments;
}

/// A server command's "env": ["NAME=value", ...]: the values whose names or contents look like credentials.
QJsonArray redactEnvironment(QJsonArray environment, const QStringList &extra, QStringList *redacted)
{
    for (QJsonValueRef element : environment) {
        const QString entry = element.toString();
        const qsizetype equals = entry.indexOf(QLatin1Char('='));
        if (equals < 0 || isRedactedValue(entry.mid(equals + 1))
            || !isSecret(entry.left(equals), entry.mid(equals + 1), extra))
            continue;
        element = QString(entry.left(equals + 1) + redactedValue(entry.mid(equals + 1)));
        *redacted << QStringLiteral("server env ") + entry.left(equals);
    }
    return environment;
}

} // namespace

bool isSecretKey(const QString &key, const QStringList &extra)
{
    const QString k = key.trimmed().toLower();
    static const QStringList exact { QStringLiteral("authorization"), QStringLiteral("proxy-authorization"),
        QStringLiteral("cookie"), QStringLiteral("set-cookie"), QStringLiteral("x-api-key") };
    static const QStringList parts { QStringLiteral("token"), QStringLiteral("secret"), QStringLiteral("password"),
        QStringLiteral("passwd"), QStringLiteral("passphrase"), QStringLiteral("key"), QStringLiteral("auth"),
        QStringLiteral("cookie"), QStringLiteral("session"), QStringLiteral("credential") };
    if (exact.contains(k))
        return true;
    for (const QString &part : parts) {
        if (k.contains(part))
            return true;
    }
    for (const QString &e : extra) {
        if (e.trimmed().toLower() == k)
            return true;
    }
    return false;
}

bool isSecretValue(const QString &value)
{
    // A URL with a password (scheme://user:password@host), an HTTP credential, a JSON Web Token, a PEM key.
    static const QRegularExpression pattern(
        QStringLiteral("[A-Za-z][A-Za-z0-9+.-]*://[^/@\\s:]*:[^/@\\s]+@|^\\s*(?:Bearer|Basic|Digest|Token)\\s+\\S|"
                       "eyJ[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.|-----BEGIN [A-Z ]*PRIVATE KEY"),
        QRegularExpression::CaseInsensitiveOption);
    return pattern.match(value).hasMatch();
}

bool isSecret(const QString &key, const QString &value, const QStringList &extra)
{
    return isSecretKey(key, extra) || isSecretValue(value);
}

QString redactedValue(const QString &value)
{
    const QByteArray hash = QCryptographicHash::hash(value.toUtf8(), QCryptographicHash::Sha256).toHex();
    return kRedactedPrefix + QString::fromLatin1(hash.left(8)) + QLatin1Char('>');
}

bool isRedactedValue(const QString &value)
{
    static const QRegularExpression pattern(QStringLiteral("^<redacted sha256:[0-9a-f]{8}>$"));
    return pattern.match(value).hasMatch();
}

bool keepsSecrets(const RunRecord &run)
{
    return run.scenario.value(QStringLiteral("secrets")).toObject().value(QStringLiteral("keep")).toBool();
}

QStringList redactSecrets(RunRecord *run)
{
    QStringList redacted;
    if (keepsSecrets(*run))
        return redacted;
    const QStringList extra = extraSecretKeys(run->scenario);
    if (run->scenario.contains(QStringLiteral("metadata")))
        run->scenario.insert(QStringLiteral("metadata"),
            redactMetadata(run->scenario.value(QStringLiteral("metadata")), extra, &redacted));
    if (run->scenario.value(QStringLiteral("arguments")).isArray())
        run->scenario.insert(QStringLiteral("arguments"),
            redactArguments(run->scenario.value(QStringLiteral("arguments")).toArray(), &redacted));
    if (run->server.value(QStringLiteral("env")).isArray())
        run->server.insert(QStringLiteral("env"),
            redactEnvironment(run->server.value(QStringLiteral("env")).toArray(), extra, &redacted));
    return redacted;
}

QStringList redactedFields(const RunRecord &run)
{
    QStringList fields;
    const QJsonValue metadata = run.scenario.value(QStringLiteral("metadata"));
    if (metadata.isObject()) {
        const QJsonObject object = metadata.toObject();
        for (auto it = object.begin(); it != object.end(); ++it) {
            if (isRedactedValue(it.value().toString()))
                fields << QStringLiteral("metadata ") + it.key();
        }
    }
    for (const auto &pair : metadata.toArray()) {
        if (isRedactedValue(pair.toArray().at(1).toString()))
            fields << QStringLiteral("metadata ") + pair.toArray().at(0).toString();
    }
    for (const auto &argument : run.scenario.value(QStringLiteral("arguments")).toArray()) {
        static const QRegularExpression redactedKey(QStringLiteral("\"([^\"]+)\":\"<redacted sha256:[0-9a-f]{8}>\""));
        for (auto it = redactedKey.globalMatch(argument.toString()); it.hasNext();)
            fields << QStringLiteral("metadata ") + it.next().captured(1);
    }
    for (const auto &entry : run.server.value(QStringLiteral("env")).toArray()) {
        const QString text = entry.toString();
        const qsizetype equals = text.indexOf(QLatin1Char('='));
        if (equals >= 0 && isRedactedValue(text.mid(equals + 1)))
            fields << QStringLiteral("server env ") + text.left(equals);
    }
    return fields;
}

} // namespace rpcscope
