#include "environment.h"

#include "util/buildinfo.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonValue>
#include <QSet>
#include <QSysInfo>

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

QStringList runDifferences(const RunRecord &a, const RunRecord &b)
{
    QStringList lines;
    for (const auto &[what, va, vb] : { std::tuple(QStringLiteral("method"), a.method, b.method),
             std::tuple(QStringLiteral("transport"), a.transport, b.transport),
             std::tuple(QStringLiteral("codec"), a.codec, b.codec),
             std::tuple(QStringLiteral("target"), a.target, b.target) }) {
        if (va != vb)
            lines << QStringLiteral("%1: %2 -> %3").arg(what, va, vb);
    }
    lines += environmentDifferences(a.environment, b.environment);
    for (const QString &line : environmentDifferences(a.server, b.server))
        lines << QStringLiteral("server ") + line;
    return lines;
}

} // namespace rpcscope
