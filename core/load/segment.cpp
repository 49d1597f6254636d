#include "segment.h"

#include <QRegularExpression>

namespace rpcscope {

std::optional<Segment> Segment::parse(const QString &text, QString *error)
{
    static const QRegularExpression form(QStringLiteral("^\\s*(\\d{1,9})\\s*/\\s*(\\d{1,9})\\s*$"));
    const QRegularExpressionMatch m = form.match(text);
    auto fail = [&](const QString &why) -> std::optional<Segment> {
        if (error)
            *error = why;
        return std::nullopt;
    };
    if (!m.hasMatch())
        return fail(QStringLiteral("expected I/N, e.g. 0/4 for the first of four workers, got \"%1\"").arg(text));
    Segment s;
    s.index = m.captured(1).toInt();
    s.count = m.captured(2).toInt();
    if (s.count < 1 || s.count > kMaxCount)
        return fail(QStringLiteral("%1 workers: expected 1 to %2").arg(s.count).arg(kMaxCount));
    if (s.index >= s.count)
        return fail(QStringLiteral("segment %1 of %2 does not exist: segments are numbered 0 to %3")
                        .arg(s.index)
                        .arg(s.count)
                        .arg(s.count - 1));
    return s;
}

uint64_t Segment::share(uint64_t total) const
{
    const auto n = static_cast<uint64_t>(count);
    const auto i = static_cast<uint64_t>(index);
    return total / n + (i < total % n ? 1 : 0);
}

} // namespace rpcscope
