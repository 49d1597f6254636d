#pragma once

#include "metrics/runsnapshot.h"

#include <QByteArray>
#include <QJsonValue>
#include <QString>
#include <QStringList>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace google::protobuf {
class Descriptor;
class Message;
} // namespace google::protobuf

namespace rpcscope {

struct CallOutcome;

/**
 * One assertion on a reply (--expect), in one of two forms:
 * - `PATH OP VALUE`: PATH names a field by its .proto or JSON name, dotted into messages (`inner.total`), with an
 *   index into a repeated field (`items[0].name` or `items.0.name`) or `length` last (elements of a repeated field
 *   or map, bytes of a string or bytes field: `items.length>=10`); OP is one of = == != < <= > >=; VALUE is a JSON
 *   literal (42, "text", true) or a bare word (an enum name, a string). Numbers compare as numbers (64-bit integers
 *   exactly), enums by name or number, messages as JSON.
 * - a JSON object: the reply, in the proto3 JSON mapping, must contain it (every key given, with an equal value;
 *   objects inside compared the same way, arrays element by element).
 */
class Expectation {
public:
    /// std::nullopt with @p error saying what is wrong with @p text (or, given @p type, which field it cannot find).
    static std::optional<Expectation> parse(
        const QString &text, const google::protobuf::Descriptor *type, QString *error);

    QString text() const { return m_text; }
    /// True when @p reply meets it; else false with @p got saying what the reply has instead.
    bool check(const google::protobuf::Message &reply, QString *got) const;

private:
    enum class Op { Equal, NotEqual, Less, LessEqual, Greater, GreaterEqual };
    /// Whether m_op holds for a comparison's @p order (negative: less, 0: equal, positive: greater).
    bool holds(int order) const;
    QString m_text;
    bool m_subset = false;
    QJsonValue m_value; ///< what is compared with (the whole object for a subset)
    QStringList m_path; ///< segments; "length" last for a size; digits for an index
    Op m_op = Op::Equal;
};

/// Which calls' replies are checked: the first @c first, then one in @c every (0: no more).
struct ExpectSampling {
    uint64_t first = 10;
    uint64_t every = 100;
    bool sampled(uint64_t index) const { return index < first || (every > 0 && (index - first) % every == 0); }
};

/**
 * Checks the sampled replies of a run against its expectations, on the transport thread that reports the call: the
 * reply is already decoded there (the transports decode every reply unless --discard-response), so a check costs
 * a few field lookups (a JSON print for the object form), and only the sampled calls pay it. Thread-safe.
 */
class ReplyChecker {
public:
    ReplyChecker(std::vector<Expectation> expectations, ExpectSampling sampling);
    /// For a call that ended OK with a decoded reply: when it is sampled, checks the reply; one that fails an
    /// expectation turns @p outcome into UNEXPECTED_REPLY, and the first few are kept.
    void check(CallOutcome &outcome);
    uint64_t checked() const { return m_checked.load(std::memory_order_relaxed); }
    std::vector<UnexpectedReply> kept() const;

private:
    const std::vector<Expectation> m_expectations;
    const ExpectSampling m_sampling;
    std::atomic<uint64_t> m_seen { 0 };
    std::atomic<uint64_t> m_checked { 0 };
    mutable std::mutex m_keptMutex;
    std::vector<UnexpectedReply> m_kept;
};

} // namespace rpcscope
