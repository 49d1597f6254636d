#pragma once

#include <QString>

#include <cstdint>
#include <optional>

namespace rpcscope {

/**
 * One worker's part of a plan split over N workers (`--segment I/N`): the whole plan's calls are numbered 0, 1, 2 ...
 * as one process would send them, and segment I takes those numbered I, I + N, I + 2N ... So the N segments
 * together send exactly the whole plan, each call once; an open-loop segment sends its calls at the whole
 * schedule's intended times, and a template's {{.RequestNumber}} is the call's number in the whole plan.
 * Everything else that is counted (callers, calls in flight, warm-up calls, a concurrency schedule's callers at
 * each instant) is dealt the same way: item i goes to segment i mod N, so a share is whole and the remainders fall
 * to the first segments.
 */
struct Segment {
    int index = 0;
    int count = 1; ///< 1 = the whole plan, no segment

    static constexpr int kMaxCount = 1000;

    bool isWhole() const { return count == 1; }
    /// "I/N".
    QString text() const { return QStringLiteral("%1/%2").arg(index).arg(count); }
    /// Reads "I/N" (0 <= I < N <= kMaxCount); std::nullopt with @p error saying what is wrong.
    static std::optional<Segment> parse(const QString &text, QString *error);

    /// How many of @p total items (numbered 0 .. total-1) are this segment's.
    uint64_t share(uint64_t total) const;
    /// The whole plan's number of this segment's @p local-th item.
    uint64_t globalNumber(uint64_t local) const { return local * static_cast<uint64_t>(count) + index; }
    bool operator==(const Segment &) const = default;
};

} // namespace rpcscope
