// What is worked out about a LoadPlan before it runs (loadengine.h): a warm-up read from its text, and a plan divided
// over the workers of a split run (load/segment.h).

#include "loadengine.h"

#include "util/units.h"

namespace rpcscope {

bool parseWarmup(const QString &text, LoadPlan *plan, QString *error)
{
    const QString value = text.trimmed();
    bool isCount = false;
    const uint64_t calls = value.isEmpty() ? 0 : value.toULongLong(&isCount);
    if (value.isEmpty() || isCount) {
        plan->warmupCalls = calls;
        plan->warmupDuration = std::chrono::nanoseconds(0);
        return true;
    }
    const auto duration = parseDuration(value);
    if (!duration) {
        if (error)
            *error = QStringLiteral("expected a number of calls or a duration like 5s, got \"%1\"").arg(value);
        return false;
    }
    plan->warmupCalls = 0;
    plan->warmupDuration = *duration;
    return true;
}

std::optional<LoadPlan> segmentPlan(const LoadPlan &whole, Segment segment, QString *error)
{
    LoadPlan part = whole;
    part.segment = segment;
    if (segment.isWhole())
        return part;
    auto refuse = [&](const QString &why) -> std::optional<LoadPlan> {
        if (error)
            *error = why;
        return std::nullopt;
    };
    const auto workers = static_cast<uint64_t>(segment.count);
    if (whole.concurrency < segment.count)
        return refuse(QStringLiteral("%1 %2 cannot be split over %3 workers: each needs at least one")
                          .arg(whole.rate ? QStringLiteral("a cap of") : QStringLiteral("concurrency"))
                          .arg(whole.concurrency)
                          .arg(segment.count));
    if (whole.totalCalls > 0 && whole.totalCalls < workers)
        return refuse(QStringLiteral("%1 calls cannot be split over %2 workers: each needs at least one")
                          .arg(whole.totalCalls)
                          .arg(segment.count));
    part.concurrency = static_cast<int>(segment.share(static_cast<uint64_t>(whole.concurrency)));
    part.totalCalls = segment.share(whole.totalCalls);
    part.warmupCalls = segment.share(whole.warmupCalls);
    return part;
}

} // namespace rpcscope
