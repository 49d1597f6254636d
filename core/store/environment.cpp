#include "environment.h"

#include "scenario/scenario.h"
#include "server/servercommand.h"
#include "store/secrets.h"
#include "util/buildinfo.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonValue>
#include <QMap>
#include <QSet>
#include <QSysInfo>

#include <algorithm>
#include <cmath>
#include <optional>
#include <thread>
#include <tuple>

namespace rpcscope {

namespace {

QString firstLineValue(const QString &path, const QByteArray &key)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    // /proc files report size 0 and atEnd() at once: read them whole.
    for (const QByteArray &line : file.readAll().split('\n')) {
        if (line.startsWith(key)) {
            const qsizetype colon = line.indexOf(':');
            return colon < 0 ? QString() : QString::fromUtf8(line.mid(colon + 1)).trimmed();
        }
    }
    return {};
}

QString fileText(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()).trimmed() : QString();
}

/// @p text at most @p longest characters, elided in the middle.
QString elidedMiddle(const QString &text, int longest)
{
    if (text.size() <= longest || longest < 5)
        return text;
    const qsizetype head = (longest - 1) / 2;
    return text.left(head) + QChar(0x2026) + text.right(longest - 1 - head);
}

/// A JSON value as a person reads it in a "what: A -> B" line: text as it is, whole numbers without a decimal point,
/// lists joined with commas, an empty or missing value as "(none)", a redacted one as "(redacted)"; at most 60
/// characters (elided in the middle).
QString shownValue(const QJsonValue &v)
{
    QString text;
    if (v.isUndefined() || v.isNull()) {
        text = QStringLiteral("(none)");
    } else if (v.isString()) {
        text = isRedactedValue(v.toString()) ? QStringLiteral("(redacted)") : v.toString();
    } else if (v.isDouble()) {
        const double d = v.toDouble();
        text = d == std::floor(d) && std::abs(d) < 1e15 ? QString::number(static_cast<qint64>(d)) : QString::number(d);
    } else if (v.isBool()) {
        text = v.toBool() ? QStringLiteral("true") : QStringLiteral("false");
    } else if (v.isArray()) {
        QStringList items;
        bool plain = true;
        for (const auto &item : v.toArray()) {
            plain = plain && (item.isString() || item.isDouble() || item.isBool());
            items << shownValue(item);
        }
        text = plain ? items.join(QStringLiteral(", "))
                     : QString::fromUtf8(QJsonDocument(v.toArray()).toJson(QJsonDocument::Compact));
    } else {
        text = QString::fromUtf8(QJsonDocument(v.toObject()).toJson(QJsonDocument::Compact));
    }
    if (text.isEmpty())
        text = QStringLiteral("(none)");
    return elidedMiddle(text, 60);
}

/// "what: A -> B", or "what: differs (redacted)" when both values are secrets that differ; a value that is not there
/// reads @p missing when one is given ("(unset)" for an environment variable).
QString differenceLine(const QString &what, const QJsonValue &a, const QJsonValue &b, const QString &missing = {})
{
    if (a.isString() && b.isString() && isRedactedValue(a.toString()) && isRedactedValue(b.toString()))
        return what + QStringLiteral(": differs (redacted)");
    auto shown = [&missing](const QJsonValue &v) {
        return (v.isUndefined() || v.isNull()) && !missing.isEmpty() ? missing : shownValue(v);
    };
    return QStringLiteral("%1: %2 -> %3").arg(what, shown(a), shown(b));
}

/// Flattens @p object into "prefix.key" paths (objects only; arrays are values).
void flatten(const QJsonObject &object, const QString &prefix, QList<QPair<QString, QJsonValue>> *into)
{
    for (auto it = object.begin(); it != object.end(); ++it) {
        const QString path = prefix.isEmpty() ? it.key() : prefix + u'.' + it.key();
        if (it.value().isObject())
            flatten(it.value().toObject(), path, into);
        else
            into->append({ path, it.value() });
    }
}

/// Lines for the paths whose values differ between @p a and @p b, in @p order's order (paths starting with an entry of
/// it, that entry's index), then the rest sorted; paths under @p skip are left out.
QStringList objectDifferences(const QJsonObject &a, const QJsonObject &b, const QString &prefix,
    const QStringList &order = {}, const QStringList &skip = {}, const QString &missing = QString())
{
    QList<QPair<QString, QJsonValue>> flatA;
    QList<QPair<QString, QJsonValue>> flatB;
    flatten(a, QString(), &flatA);
    flatten(b, QString(), &flatB);
    QMap<QString, QPair<QJsonValue, QJsonValue>> paths;
    for (const auto &[path, value] : flatA)
        paths[path].first = value;
    for (const auto &[path, value] : flatB)
        paths[path].second = value;
    auto under = [](const QString &path, const QString &root) { return path == root || path.startsWith(root + u'.'); };
    auto rank = [&](const QString &path) {
        for (qsizetype i = 0; i < order.size(); ++i) {
            if (under(path, order[i]))
                return i;
        }
        return order.size();
    };
    QStringList keys;
    for (auto it = paths.begin(); it != paths.end(); ++it) {
        const bool skipped
            = std::any_of(skip.begin(), skip.end(), [&](const QString &s) { return under(it.key(), s); });
        if (!skipped && it.value().first != it.value().second)
            keys << it.key();
    }
    std::stable_sort(keys.begin(), keys.end(), [&](const QString &x, const QString &y) { return rank(x) < rank(y); });
    QStringList lines;
    for (const QString &key : keys)
        lines << differenceLine(prefix + key, paths[key].first, paths[key].second, missing);
    return lines;
}

/// A metadata list ([[key, value], ...] or {key: value}) as an object keyed by its keys (a repeated key's values
/// joined).
QJsonObject metadataByKey(const QJsonValue &metadata)
{
    QJsonObject byKey;
    auto add = [&byKey](const QString &key, const QJsonValue &value) {
        if (byKey.contains(key))
            byKey.insert(key, QJsonValue(byKey.value(key).toString() + QStringLiteral(", ") + value.toString()));
        else
            byKey.insert(key, value);
    };
    if (metadata.isObject()) {
        const QJsonObject object = metadata.toObject();
        for (auto it = object.begin(); it != object.end(); ++it)
            add(it.key(), it.value());
    }
    for (const auto &pair : metadata.toArray())
        add(pair.toArray().at(0).toString(), pair.toArray().at(1));
    return byKey;
}

/// "NAME=value" entries as an object keyed by name.
QJsonObject environmentByName(const QJsonValue &environment)
{
    QJsonObject byName;
    for (const auto &entry : environment.toArray()) {
        const QString text = entry.toString();
        const qsizetype equals = text.indexOf(u'=');
        if (equals > 0)
            byName.insert(text.left(equals), text.mid(equals + 1));
    }
    return byName;
}

/// A run's scenario document as the comparison reads it: parsed and written again when it is a document, so that
/// a field left out and a field at its default read the same; with the request as JSON when it parses, and the
/// metadata keyed by key.
QJsonObject comparableScenario(const QJsonObject &scenario)
{
    QJsonObject document = scenario;
    document.remove(QStringLiteral("ab_side")); // which side of an A/B run it was: what is compared, not a condition
    if (document.contains(QStringLiteral("rpcscope_scenario"))) {
        if (const auto parsed = Scenario::fromJson(
                QJsonDocument(document).toJson(QJsonDocument::Compact), nullptr, DocumentCheck::ShapeOnly))
            document = QJsonDocument::fromJson(parsed->toJson()).object();
    }
    const QJsonDocument request
        = QJsonDocument::fromJson(document.value(QStringLiteral("request")).toString().toUtf8());
    if (request.isObject())
        document.insert(QStringLiteral("request"), request.object());
    document.insert(QStringLiteral("metadata"), metadataByKey(document.value(QStringLiteral("metadata"))));
    return document;
}

} // namespace

QJsonObject environmentFingerprint()
{
    QJsonObject o;
    for (const auto &[name, version] : buildInfo()) {
        if (name != u"OS")
            o.insert(name.section(u' ', 0, 0).toLower(), version);
    }
    o.insert(QStringLiteral("rpcscope_version"), QStringLiteral(RPCSCOPE_VERSION));
    o.insert(QStringLiteral("git_revision"), gitRevision());
    o.insert(QStringLiteral("os"), QSysInfo::prettyProductName());
    o.insert(QStringLiteral("kernel"), QString(QSysInfo::kernelType() + u' ' + QSysInfo::kernelVersion()));
    o.insert(QStringLiteral("arch"), QSysInfo::currentCpuArchitecture());
    o.insert(QStringLiteral("cpu_model"), firstLineValue(QStringLiteral("/proc/cpuinfo"), "model name"));
    o.insert(QStringLiteral("cores"), static_cast<int>(std::thread::hardware_concurrency()));
    o.insert(QStringLiteral("memory"), firstLineValue(QStringLiteral("/proc/meminfo"), "MemTotal"));
    o.insert(QStringLiteral("hostname"), QSysInfo::machineHostName());
    const QString governor = fileText(QStringLiteral("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"));
    if (!governor.isEmpty())
        o.insert(QStringLiteral("cpu_governor"), governor);
    return o;
}

QStringList environmentDifferences(const QJsonObject &a, const QJsonObject &b)
{
    QStringList keys = a.keys();
    for (const QString &k : b.keys()) {
        if (!a.contains(k))
            keys << k;
    }
    keys.sort();
    QStringList lines;
    for (const QString &k : keys) {
        const QJsonValue va = a.value(k);
        const QJsonValue vb = b.value(k);
        if (va == vb)
            continue;
        auto text = [](const QJsonValue &v) {
            if (v.isArray())
                return QString::fromUtf8(QJsonDocument(v.toArray()).toJson(QJsonDocument::Compact));
            if (v.isObject())
                return QString::fromUtf8(QJsonDocument(v.toObject()).toJson(QJsonDocument::Compact));
            return v.isUndefined() ? QStringLiteral("(none)") : v.toVariant().toString();
        };
        lines << QStringLiteral("%1: %2 -> %3").arg(k, text(va), text(vb));
    }
    return lines;
}

namespace {

/// A target's words as a name shows them: a program by its file name, without the {port} it is given (and the flag
/// before it).
QStringList nameWords(const QString &target)
{
    QStringList words = splitCommandLine(target, nullptr).value_or(QStringList { target });
    for (qsizetype i = words.size() - 1; i >= 0; --i) {
        if (!words[i].contains(QStringLiteral("{port}")))
            continue;
        const bool flag = i > 0 && words[i - 1].startsWith(u'-') && !words[i].startsWith(u'-');
        words.remove(flag ? i - 1 : i, flag ? 2 : 1);
        i -= flag ? 1 : 0;
    }
    // Paths by their file names (a program, a script): "python3 grpc_echo_client.py", not its folders.
    for (QString &word : words) {
        if (words.size() > 1 && word.contains(u'/') && !word.startsWith(u'-') && !word.contains(QStringLiteral("://"))
            && !word.endsWith(u'/'))
            word = word.section(u'/', -1);
    }
    return words;
}

/// The words of the two command lines (or addresses) that differ: what is left once the words both start and end
/// with are taken away; a path by its file name when the file names differ.
std::array<QString, 2> differingWords(const QString &a, const QString &b)
{
    const QStringList wordsA = nameWords(a);
    const QStringList wordsB = nameWords(b);
    qsizetype prefix = 0;
    while (prefix < wordsA.size() && prefix < wordsB.size() && wordsA[prefix] == wordsB[prefix])
        ++prefix;
    qsizetype suffix = 0;
    while (suffix < wordsA.size() - prefix && suffix < wordsB.size() - prefix
        && wordsA[wordsA.size() - 1 - suffix] == wordsB[wordsB.size() - 1 - suffix])
        ++suffix;
    std::array<QStringList, 2> middle { wordsA.mid(prefix, wordsA.size() - prefix - suffix),
        wordsB.mid(prefix, wordsB.size() - prefix - suffix) };
    for (qsizetype i = 0; i < std::min(middle[0].size(), middle[1].size()); ++i) {
        QString &x = middle[0][i];
        QString &y = middle[1][i];
        const QString nameX = x.section(u'/', -1);
        const QString nameY = y.section(u'/', -1);
        if (x.contains(u'/') && y.contains(u'/') && nameX != nameY && !nameX.isEmpty() && !nameY.isEmpty()) {
            x = nameX;
            y = nameY;
        }
    }
    return { middle[0].join(u' '), middle[1].join(u' ') };
}

} // namespace

std::array<QString, 2> abSideNames(const AbSideIdentity &a, const AbSideIdentity &b, int longest)
{
    const std::array<const AbSideIdentity *, 2> sides { &a, &b };
    std::array<QStringList, 2> parts;
    if (a.target != b.target) {
        const auto words = differingWords(a.target, b.target);
        for (size_t i = 0; i < 2; ++i)
            parts[i] << (words[i].isEmpty() ? nameWords(sides[i]->target).join(u' ') : words[i]);
    }
    if (a.client != b.client) {
        const auto words = differingWords(a.client, b.client);
        for (size_t i = 0; i < 2; ++i) {
            const QString &client = sides[i]->client;
            parts[i] << (client.isEmpty() ? QStringLiteral("rpcscope's client")
                    : words[i].isEmpty()  ? nameWords(client).join(u' ')
                                          : words[i]);
        }
    }
    // The environment variables that differ, by name: the server's, then the client's.
    QMap<QString, std::array<std::optional<QString>, 2>> variables;
    for (size_t i = 0; i < 2; ++i) {
        for (const auto &[name, value] : sides[i]->environment)
            variables[name][i] = value;
        for (const auto &[name, value] : sides[i]->clientEnvironment)
            variables[name][i] = value;
    }
    for (auto it = variables.begin(); it != variables.end(); ++it) {
        if (it.value()[0] == it.value()[1])
            continue;
        for (size_t i = 0; i < 2; ++i) {
            const std::optional<QString> &value = it.value()[i];
            if (!value)
                parts[i] << QStringLiteral("no ") + it.key();
            else if (isSecret(it.key(), *value))
                parts[i] << it.key() + QStringLiteral("=(secret)");
            else
                parts[i] << it.key() + u'=' + *value;
        }
    }
    std::array<QString, 2> names;
    for (size_t i = 0; i < 2; ++i) {
        const QString target = sides[i]->target == u"builtin" ? QStringLiteral("built-in server") : sides[i]->target;
        names[i] = elidedMiddle(parts[i].isEmpty() ? target : parts[i].join(QStringLiteral(", ")), longest);
    }
    return names;
}

QStringList runDifferences(const RunRecord &a, const RunRecord &b)
{
    QStringList lines;
    // What was called, over what and where.
    for (const auto &[what, va, vb] : { std::tuple(QStringLiteral("method"), a.method, b.method),
             std::tuple(QStringLiteral("transport"), a.transport, b.transport),
             std::tuple(QStringLiteral("codec"), a.codec, b.codec),
             std::tuple(QStringLiteral("target"), a.target, b.target) }) {
        if (va != vb)
            lines << differenceLine(what, va, vb);
    }
    // The server rpcscope started: its command, its environment variable by variable, then the rest of it (its CPUs
    // are the fingerprint's server_cpus, below).
    const QString command = QStringLiteral("command");
    const QString env = QStringLiteral("env");
    if (a.server.value(command) != b.server.value(command))
        lines << differenceLine(QStringLiteral("server command"), a.server.value(command), b.server.value(command));
    lines += objectDifferences(environmentByName(a.server.value(env)), environmentByName(b.server.value(env)),
        QStringLiteral("server env "), {}, {}, QStringLiteral("(unset)"));
    lines += objectDifferences(
        a.server, b.server, QStringLiteral("server "), {}, { command, env, QStringLiteral("cpus") });
    // The client command that made the calls (issue 36), and its environment variable by variable.
    const QJsonObject clientA = a.scenario.value(QStringLiteral("client_command")).toObject();
    const QJsonObject clientB = b.scenario.value(QStringLiteral("client_command")).toObject();
    if (clientA.value(command) != clientB.value(command)) {
        const QJsonValue rpcscope(QStringLiteral("(rpcscope's own client)"));
        lines << differenceLine(QStringLiteral("client command"), clientA.isEmpty() ? rpcscope : clientA.value(command),
            clientB.isEmpty() ? rpcscope : clientB.value(command));
    }
    lines += objectDifferences(environmentByName(clientA.value(env)), environmentByName(clientB.value(env)),
        QStringLiteral("client env "), {}, {}, QStringLiteral("(unset)"));
    // The scenario document, field by field as it names them: what is sent first, then the load, the connection and
    // the rest. Left out: what the record's fields above already say, and what only says where results went.
    lines += objectDifferences(comparableScenario(a.scenario), comparableScenario(b.scenario), QString(),
        { QStringLiteral("request"), QStringLiteral("request_file"), QStringLiteral("request_binary_file"),
            QStringLiteral("fills"), QStringLiteral("metadata"), QStringLiteral("load"), QStringLiteral("connection"),
            QStringLiteral("schema"), QStringLiteral("rpc_method"), QStringLiteral("http_path"),
            QStringLiteral("msgpack_params"), QStringLiteral("server_command"), QStringLiteral("expect"),
            QStringLiteral("checks") },
        { QStringLiteral("rpcscope_scenario"), QStringLiteral("method"), QStringLiteral("transport"),
            QStringLiteral("codec"), QStringLiteral("target"), QStringLiteral("output"), QStringLiteral("history"),
            QStringLiteral("raw_samples"), QStringLiteral("pinning"), QStringLiteral("client_command") });
    // Where it ran: the machine, the pinning and the versions.
    lines += environmentDifferences(a.environment, b.environment);
    return lines;
}

} // namespace rpcscope
