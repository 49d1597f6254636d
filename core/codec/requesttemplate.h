#pragma once

#include <QByteArray>
#include <QString>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace rpcscope {

/// What a template's placeholders are filled from, per call.
struct TemplateContext {
    uint64_t requestNumber = 0; ///< 0-based, in sending order
    int workerId = 0; ///< the caller (slot) making the call
    std::mt19937_64 *rng = nullptr;
};

/**
 * A request written as JSON with ghz-style placeholders, filled in per call:
 * {{.RequestNumber}}, {{.WorkerID}}, {{.TimestampUnix}}, {{.TimestampUnixMilli}}, {{.TimestampUnixNano}},
 * {{.UUID}}, {{randomString N}}, {{randomInt MIN MAX}}. Text outside placeholders is kept as is.
 */
class RequestTemplate {
public:
    /// std::nullopt with @p error naming the placeholder when one is unknown or malformed.
    static std::optional<RequestTemplate> parse(const QByteArray &json, QString *error);
    static bool hasPlaceholders(const QByteArray &json) { return json.contains("{{"); }

    std::string render(const TemplateContext &context) const;

private:
    enum class Kind {
        Literal,
        RequestNumber,
        WorkerId,
        UnixSeconds,
        UnixMillis,
        UnixNanos,
        Uuid,
        RandomString,
        RandomInt
    };
    struct Segment {
        Kind kind = Kind::Literal;
        std::string text;
        int64_t a = 0;
        int64_t b = 0;
    };
    std::vector<Segment> m_segments;
};

} // namespace rpcscope
