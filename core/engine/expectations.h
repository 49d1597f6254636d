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
    /// std::nullopt with @p error saying what is wrong with @p input (or, given @p type, which field it cannot find).
    static std::optional<Expectation> parse(
        const QString &input, const google::protobuf::Descriptor *type, QString *error);

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
 *
 * A streaming call is sampled as a whole, when its first message comes: every message of a sampled stream (a client
 * stream's one reply, each message of a server or bidi stream) is checked, and the call fails when one message
 * fails. Each slot's stream state is touched only by its own call, one call at a time.
 */
class ReplyChecker {
public:
    ReplyChecker(std::vector<Expectation> expectations, ExpectSampling sampling, size_t slotCount);
    /// For a call of @p slot that ended: a unary call ending OK with a decoded reply is checked when sampled, a
    /// stream ending OK fails when one of its messages did; either turns @p outcome into UNEXPECTED_REPLY, and the
    /// first few failed replies are kept. Called for every call that ends, OK or not (it ends the slot's stream).
    void check(int slot, CallOutcome &outcome);
    /// A streaming call of @p slot received @p message (nullptr when not decoded).
    void checkMessage(int slot, const google::protobuf::Message *message);
    uint64_t checked() const { return m_checked.load(std::memory_order_relaxed); }
    std::vector<UnexpectedReply> kept() const;

private:
    /// Whether the call is sampled, counting it as seen (and as checked when it is).
    bool sampleNext();
    /// The first expectation @p reply fails (kept, with @p where after what it had), or nullptr.
    const Expectation *firstFailed(const google::protobuf::Message &reply, const QString &where);

    struct Stream {
        bool begun = false; ///< a message came (the call is a stream, and its sampling is decided)
        bool sampled = false;
        uint64_t messages = 0;
        std::string failure; ///< the call's error when a message failed an expectation
    };
    const std::vector<Expectation> m_expectations;
    const ExpectSampling m_sampling;
    std::vector<Stream> m_streams; ///< one per slot
    std::atomic<uint64_t> m_seen { 0 };
    std::atomic<uint64_t> m_checked { 0 };
    mutable std::mutex m_keptMutex;
    std::vector<UnexpectedReply> m_kept;
};

} // namespace rpcscope
