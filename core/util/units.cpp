#include "units.h"

#include <QDateTime>
#include <QRegularExpression>

#include <cmath>

namespace rpcscope {

namespace {
void setError(QString *error, const QString &message)
{
    if (error)
        *error = message;
}
} // namespace

std::optional<std::chrono::system_clock::time_point> parseWallTime(QStringView text, QString *error)
{
    using namespace std::chrono;
    const QString s = text.trimmed().toString();
    static const QRegularExpression unixSeconds(QStringLiteral("^\\d{1,11}(\\.\\d{1,9})?$"));
    if (unixSeconds.match(s).hasMatch()) {
        const qsizetype dot = s.indexOf(QLatin1Char('.'));
        const qint64 whole = (dot < 0 ? s : s.left(dot)).toLongLong();
        const qint64 fraction = dot < 0 ? 0 : s.mid(dot + 1).leftJustified(9, QLatin1Char('0')).toLongLong();
        return system_clock::time_point(duration_cast<system_clock::duration>(seconds(whole) + nanoseconds(fraction)));
    }
    // RFC 3339: a date, "T" (or a space), a time with optional fraction, and an offset.
    static const QRegularExpression rfc3339(
        QStringLiteral("^(\\d{4}-\\d{2}-\\d{2})[Tt ](\\d{2}:\\d{2}:\\d{2})(\\.\\d{1,9})?([Zz]|[+-]\\d{2}:\\d{2})?$"));
    const QRegularExpressionMatch m = rfc3339.match(s);
    if (!m.hasMatch()) {
        setError(error,
            QStringLiteral("expected an RFC 3339 time like 2026-12-03T15:00:00Z or Unix seconds, got \"%1\"").arg(s));
        return std::nullopt;
    }
    if (m.captured(4).isEmpty()) {
        setError(error, QStringLiteral("%1 has no time zone: add Z for UTC or an offset like +01:00").arg(s));
        return std::nullopt;
    }
    const QString zone = m.captured(4).toUpper();
    const QDateTime t = QDateTime::fromString(m.captured(1) + QLatin1Char('T') + m.captured(2) + zone, Qt::ISODate);
    if (!t.isValid()) {
        setError(error, QStringLiteral("%1 is not a valid date and time").arg(s));
        return std::nullopt;
    }
    const qint64 fraction
        = m.captured(3).isEmpty() ? 0 : m.captured(3).mid(1).leftJustified(9, QLatin1Char('0')).toLongLong();
    return system_clock::time_point(
        duration_cast<system_clock::duration>(seconds(t.toSecsSinceEpoch()) + nanoseconds(fraction)));
}

std::optional<std::chrono::nanoseconds> parseDuration(QStringView text, QString *error)
{
    const QString s = text.trimmed().toString();
    if (s.isEmpty()) {
        setError(error, QStringLiteral("empty duration"));
        return std::nullopt;
    }
    // A sequence of <number><unit> pairs, as Go's time.ParseDuration accepts.
    static const QRegularExpression part(QStringLiteral("([0-9]*\\.?[0-9]+)(ns|us|µs|ms|s|m|h)"));
    long double total = 0;
    qsizetype pos = 0;
    while (pos < s.size()) {
        const auto match
            = part.match(s, pos, QRegularExpression::NormalMatch, QRegularExpression::AnchorAtOffsetMatchOption);
        if (!match.hasMatch()) {
            setError(error, QStringLiteral("invalid duration \"%1\" (use e.g. 500ms, 10s, 1m30s)").arg(s));
            return std::nullopt;
        }
        const long double number = match.captured(1).toDouble();
        const QString unit = match.captured(2);
        long double scale = 1;
        if (unit == u"us" || unit == u"µs")
            scale = 1e3;
        else if (unit == u"ms")
            scale = 1e6;
        else if (unit == u"s")
            scale = 1e9;
        else if (unit == u"m")
            scale = 60e9;
        else if (unit == u"h")
            scale = 3600e9;
        total += number * scale;
        pos += match.capturedLength(0);
    }
    if (total > 1e18L) {
        setError(error, QStringLiteral("duration \"%1\" is too long").arg(s));
        return std::nullopt;
    }
    return std::chrono::nanoseconds(static_cast<qint64>(std::llround(static_cast<double>(total))));
}

std::optional<qint64> parseByteSize(QStringView text, QString *error)
{
    const QString s = text.trimmed().toString();
    static const QRegularExpression re(QStringLiteral("^([0-9]*\\.?[0-9]+)\\s*(B|KiB|MiB|GiB|kB|KB|MB|GB|k|K|M|G)?$"));
    const auto match = re.match(s);
    if (!match.hasMatch()) {
        setError(error, QStringLiteral("invalid size \"%1\" (use e.g. 100, 1KiB, 10MiB, 1MB)").arg(s));
        return std::nullopt;
    }
    const double number = match.captured(1).toDouble();
    const QString unit = match.captured(2);
    double scale = 1;
    if (unit == u"KiB" || unit == u"K" || unit == u"k")
        scale = 1024.0;
    else if (unit == u"MiB" || unit == u"M")
        scale = 1024.0 * 1024;
    else if (unit == u"GiB" || unit == u"G")
        scale = 1024.0 * 1024 * 1024;
    else if (unit == u"kB" || unit == u"KB")
        scale = 1e3;
    else if (unit == u"MB")
        scale = 1e6;
    else if (unit == u"GB")
        scale = 1e9;
    const double value = number * scale;
    if (value > 4.0 * 1024 * 1024 * 1024) {
        setError(error, QStringLiteral("size \"%1\" is larger than 4 GiB").arg(s));
        return std::nullopt;
    }
    return static_cast<qint64>(std::llround(value));
}

QString formatNanos(double nanos)
{
    const double a = std::fabs(nanos);
    auto fmt = [](double v, const char *unit) -> QString {
        const int decimals = v >= 100 ? 0 : (v >= 10 ? 1 : 2);
        return QString::number(v, 'f', decimals) + QLatin1Char(' ') + QLatin1String(unit);
    };
    if (a < 1e3)
        return QString::number(nanos, 'f', 0) + QStringLiteral(" ns");
    if (a < 1e6)
        return fmt(nanos / 1e3, "us");
    if (a < 1e9)
        return fmt(nanos / 1e6, "ms");
    return fmt(nanos / 1e9, "s");
}

QString formatDuration(std::chrono::nanoseconds value)
{
    return formatNanos(static_cast<double>(value.count()));
}

bool parseFraction(const QString &text, double *fraction, QString *error)
{
    QString t = text.trimmed();
    const bool percent = t.endsWith(u'%');
    if (percent)
        t.chop(1);
    bool ok = false;
    double v = t.toDouble(&ok);
    if (!ok || v < 0) {
        *error = QStringLiteral("\"%1\" is not a percentage like 5% or 0.05").arg(text);
        return false;
    }
    // "5" means 5%, "0.05" means 5%: a bare number of 1 or more is read as percent.
    if (percent || v >= 1)
        v /= 100;
    if (v >= 1) {
        *error = QStringLiteral("\"%1\" is 100% or more").arg(text);
        return false;
    }
    *fraction = v;
    return true;
}

QString formatBytes(double bytes)
{
    if (bytes < 1024)
        return QString::number(bytes, 'f', bytes == std::floor(bytes) ? 0 : 1) + QStringLiteral(" B");
    if (bytes < 1024.0 * 1024)
        return QString::number(bytes / 1024, 'f', 1) + QStringLiteral(" KiB");
    if (bytes < 1024.0 * 1024 * 1024)
        return QString::number(bytes / (1024.0 * 1024), 'f', 1) + QStringLiteral(" MiB");
    return QString::number(bytes / (1024.0 * 1024 * 1024), 'f', 2) + QStringLiteral(" GiB");
}

} // namespace rpcscope
