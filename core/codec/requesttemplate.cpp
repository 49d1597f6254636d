#include "requesttemplate.h"

#include <QRegularExpression>
#include <QStringList>

#include <chrono>

namespace rpcscope {

namespace {
/// The longest {{randomString N}}: 100 million characters per call is already far past any sane request.
constexpr int64_t kMaxRandomString = 100'000'000;
} // namespace

std::optional<RequestTemplate> RequestTemplate::parse(const QByteArray &json, QString *error)
{
    RequestTemplate result;
    const std::string text = json.toStdString();
    size_t pos = 0;
    while (pos < text.size()) {
        const size_t open = text.find("{{", pos);
        if (open == std::string::npos) {
            result.m_segments.push_back({ Kind::Literal, text.substr(pos), 0, 0 });
            break;
        }
        if (open > pos)
            result.m_segments.push_back({ Kind::Literal, text.substr(pos, open - pos), 0, 0 });
        const size_t close = text.find("}}", open);
        if (close == std::string::npos) {
            if (error)
                *error = QStringLiteral("template: \"{{\" at offset %1 is never closed with \"}}\"").arg(open);
            return std::nullopt;
        }
        const QString inner = QString::fromStdString(text.substr(open + 2, close - open - 2)).trimmed();
        const QStringList words = inner.split(QLatin1Char(' '), Qt::SkipEmptyParts);
        Segment segment;
        bool ok = true;
        QString why; // a known placeholder with a bad value: what is wrong with it
        if (inner == u".RequestNumber")
            segment.kind = Kind::RequestNumber;
        else if (inner == u".WorkerID")
            segment.kind = Kind::WorkerId;
        else if (inner == u".TimestampUnix")
            segment.kind = Kind::UnixSeconds;
        else if (inner == u".TimestampUnixMilli")
            segment.kind = Kind::UnixMillis;
        else if (inner == u".TimestampUnixNano")
            segment.kind = Kind::UnixNanos;
        else if (inner == u".UUID")
            segment.kind = Kind::Uuid;
        else if (words.size() == 2 && words[0] == u"randomString") {
            segment.kind = Kind::RandomString;
            segment.a = words[1].toLongLong(&ok);
            if (!ok || segment.a < 0)
                why = QStringLiteral("N must be a whole number >= 0, got \"%1\"").arg(words[1]);
            else if (segment.a > kMaxRandomString)
                why = QStringLiteral("N = %1 is too large (at most %2 characters)").arg(words[1]).arg(kMaxRandomString);
        } else if (words.size() == 3 && words[0] == u"randomInt") {
            bool ok2 = false;
            segment.kind = Kind::RandomInt;
            segment.a = words[1].toLongLong(&ok);
            segment.b = words[2].toLongLong(&ok2);
            if (!ok || !ok2)
                why = QStringLiteral("MIN and MAX must be 64-bit whole numbers, got \"%1\" and \"%2\"")
                          .arg(words[1], words[2]);
            else if (segment.a > segment.b)
                why = QStringLiteral("MIN %1 is greater than MAX %2").arg(segment.a).arg(segment.b);
        } else {
            ok = false;
        }
        if (!why.isEmpty()) {
            if (error)
                *error = QStringLiteral("template: {{%1}}: %2").arg(inner, why);
            return std::nullopt;
        }
        if (!ok) {
            if (error)
                *error = QStringLiteral("template: unknown or malformed placeholder {{%1}} (known: {{.RequestNumber}}, "
                                        "{{.WorkerID}}, {{.TimestampUnix}}, {{.TimestampUnixMilli}}, "
                                        "{{.TimestampUnixNano}}, {{.UUID}}, {{randomString N}}, {{randomInt MIN MAX}})")
                             .arg(inner);
            return std::nullopt;
        }
        result.m_segments.push_back(segment);
        pos = close + 2;
    }
    return result;
}

std::string RequestTemplate::render(const TemplateContext &context) const
{
    static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    std::mt19937_64 fallback(context.requestNumber);
    std::mt19937_64 &rng = context.rng ? *context.rng : fallback;
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    std::string out;
    for (const Segment &s : m_segments) {
        switch (s.kind) {
        case Kind::Literal:
            out += s.text;
            break;
        case Kind::RequestNumber:
            out += std::to_string(context.requestNumber);
            break;
        case Kind::WorkerId:
            out += std::to_string(context.workerId);
            break;
        case Kind::UnixSeconds:
            out += std::to_string(std::chrono::duration_cast<std::chrono::seconds>(now).count());
            break;
        case Kind::UnixMillis:
            out += std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(now).count());
            break;
        case Kind::UnixNanos:
            out += std::to_string(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count());
            break;
        case Kind::Uuid: {
            static constexpr char kHex[] = "0123456789abcdef";
            for (int i = 0; i < 32; ++i) {
                if (i == 8 || i == 12 || i == 16 || i == 20)
                    out += '-';
                int nibble = static_cast<int>(rng() & 15);
                if (i == 12)
                    nibble = 4; // version 4
                if (i == 16)
                    nibble = 8 | (nibble & 3); // variant
                out += kHex[nibble];
            }
            break;
        }
        case Kind::RandomString:
            for (int64_t i = 0; i < s.a; ++i)
                out += kAlphabet[rng() % (sizeof kAlphabet - 1)];
            break;
        case Kind::RandomInt: {
            // In unsigned arithmetic: MIN..MAX may span all of int64 (the span then wraps to 0: any value goes).
            const uint64_t span = static_cast<uint64_t>(s.b) - static_cast<uint64_t>(s.a) + 1;
            const uint64_t offset = span == 0 ? rng() : rng() % span;
            out += std::to_string(static_cast<int64_t>(static_cast<uint64_t>(s.a) + offset));
        } break;
        }
    }
    return out;
}

} // namespace rpcscope
