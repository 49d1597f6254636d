#include "segmentmerge.h"

#include <QJsonArray>

#include <algorithm>
#include <cmath>
#include <map>

namespace rpcscope {

void WorkerRecord::takeFigures(const RunSnapshot &s)
{
    calls = s.callsCompleted();
    failed = s.callsFailed();
    seconds = std::chrono::duration<double>(s.elapsed).count();
    p50Ns = s.latency.percentile(50);
    p99Ns = s.latency.percentile(99);
    clientCpuSeconds = s.clientCpuSeconds;
    clientPeakRssBytes = s.clientPeakRssBytes;
    timedStartUnixUs = s.timedStartUnixUs;
}

namespace {

/// The longest a merged run may span: from the first worker's start to the last one's end (reports past it refused).
constexpr double kMaxSeconds = 1e7;
/// Workers of one run start together; reports whose starts lie further apart are not one run.
constexpr int64_t kMaxStartSpreadUs = int64_t(24) * 3600 * 1000000;

/// The length of the workers' time-series intervals: the most common one (the last interval of a run is shorter).
double intervalSeconds(const QList<SegmentReport> &reports)
{
    std::map<int64_t, int> lengths; // in microseconds
    double longest = 0;
    for (const SegmentReport &r : reports) {
        const QList<IntervalPoint> &timeline = r.run.snapshot.timeline;
        for (qsizetype i = 0; i < timeline.size(); ++i) {
            longest = std::max(longest, timeline[i].seconds);
            if (i + 1 < timeline.size())
                ++lengths[std::llround(timeline[i].seconds * 1e6)];
        }
    }
    if (lengths.empty())
        return longest;
    const auto most = std::max_element(
        lengths.begin(), lengths.end(), [](const auto &a, const auto &b) { return a.second < b.second; });
    return static_cast<double>(most->first) / 1e6;
}

/// The workers' intervals on one wall clock: each goes to the merged interval that holds its midpoint.
QList<IntervalPoint> mergeTimelines(const QList<SegmentReport> &reports, int64_t startUs)
{
    const double width = intervalSeconds(reports);
    if (width <= 0)
        return {};
    struct Cell {
        IntervalPoint point;
        std::vector<std::pair<int, uint64_t>> buckets;
        uint64_t min = UINT64_MAX;
        uint64_t max = 0;
        double end = 0;
    };
    std::map<int64_t, Cell> cells;
    for (const SegmentReport &r : reports) {
        const RunSnapshot &s = r.run.snapshot;
        const double offset = s.timedStartUnixUs > 0 ? static_cast<double>(s.timedStartUnixUs - startUs) / 1e6 : 0.0;
        for (const IntervalPoint &p : s.timeline) {
            // A report is untrusted input: a time past any run's (or not a number) goes to the end, not past int64.
            double middle = offset + p.endSeconds - p.seconds / 2;
            middle = std::isfinite(middle) ? std::clamp(middle, 0.0, kMaxSeconds) : kMaxSeconds;
            const auto index = static_cast<int64_t>(std::floor(middle / width));
            Cell &slot = cells[index];
            IntervalPoint &m = slot.point;
            m.calls += p.calls;
            m.errors += p.errors;
            m.concurrency += p.concurrency;
            m.messages += p.messages;
            // Message percentiles come without buckets: the highest of the workers' is an upper bound.
            m.messageP50 = std::max(m.messageP50, p.messageP50);
            m.messageP90 = std::max(m.messageP90, p.messageP90);
            m.messageP99 = std::max(m.messageP99, p.messageP99);
            slot.buckets.insert(slot.buckets.end(), p.okBuckets.begin(), p.okBuckets.end());
            if (!p.okBuckets.empty()) {
                slot.min = std::min(slot.min, p.okMinNs);
                slot.max = std::max(slot.max, p.okMaxNs);
            }
            slot.end = std::max(slot.end, offset + p.endSeconds);
        }
    }
    QList<IntervalPoint> merged;
    for (auto &[index, slot] : cells) {
        IntervalPoint p = slot.point;
        const double begin = static_cast<double>(index) * width;
        p.endSeconds = std::min(begin + width, std::max(slot.end, begin));
        p.seconds = p.endSeconds - begin;
        if (p.seconds <= 0) { // a last interval shorter than the workers' start skew: keep its own length
            p.endSeconds = slot.end;
            p.seconds = std::max(1e-6, slot.end - begin);
        }
        if (!slot.buckets.empty()) {
            std::map<int, uint64_t> counts;
            for (const auto &[bucket, count] : slot.buckets)
                counts[bucket] += count;
            LatencyHistogram h;
            if (LatencyHistogram::restore({ counts.begin(), counts.end() }, slot.min, slot.max, 0, 0, &h)) {
                p.p50 = h.percentile(50);
                p.p90 = h.percentile(90);
                p.p99 = h.percentile(99);
                p.okBuckets = h.bucketCounts();
                p.okMinNs = h.min();
                p.okMaxNs = h.max();
            }
        }
        merged.append(p);
    }
    return merged;
}

QString segmentName(const SegmentReport &r)
{
    return QStringLiteral("%1 (segment %2/%3)")
        .arg(r.source)
        .arg(r.run.split.workers.value(0).index)
        .arg(r.run.split.count);
}

} // namespace

std::optional<RunRecord> mergeSegments(const QList<SegmentReport> &reports, bool partial, QString *error)
{
    auto refuse = [&](const QString &why) -> std::optional<RunRecord> {
        if (error)
            *error = why;
        return std::nullopt;
    };
    if (reports.isEmpty())
        return refuse(QStringLiteral("no reports to merge"));
    for (const SegmentReport &r : reports) {
        if (!r.run.split.isSplit())
            return refuse(QStringLiteral("%1 is not a segment's report (its run had no --segment I/N)").arg(r.source));
        if (r.run.split.workers.size() != 1)
            return refuse(QStringLiteral("%1 is already a merge of %2 segments; merge the segments' own reports")
                              .arg(r.source)
                              .arg(r.run.split.workers.size()));
        if (!r.run.snapshot.blocks.empty())
            return refuse(QStringLiteral("%1 is an A/B run, not a segment").arg(r.source));
    }
    const SegmentReport &first = reports.front();
    const int count = first.run.split.count;
    std::map<int, const SegmentReport *> byIndex;
    for (const SegmentReport &r : reports) {
        if (r.run.split.count != count)
            return refuse(QStringLiteral("%1 splits its plan over %2 workers, but %3 over %4: not one run")
                              .arg(segmentName(first))
                              .arg(count)
                              .arg(segmentName(r))
                              .arg(r.run.split.count));
        if (r.run.split.planId != first.run.split.planId)
            return refuse(QStringLiteral("%1 and %2 ran different plans (plan %3 and %4): not one run")
                              .arg(segmentName(first), segmentName(r), first.run.split.planId, r.run.split.planId));
        const int index = r.run.split.workers.front().index;
        if (const auto it = byIndex.find(index); it != byIndex.end())
            return refuse(QStringLiteral("segment %1/%2 is there twice: %3 and %4")
                              .arg(index)
                              .arg(count)
                              .arg(it->second->source, r.source));
        byIndex[index] = &r;
    }
    QList<int> missing;
    for (int i = 0; i < count; ++i) {
        if (!byIndex.count(i))
            missing << i;
    }
    if (!missing.isEmpty() && !partial) {
        QStringList names;
        for (int i : missing)
            names << QStringLiteral("%1/%2").arg(i).arg(count);
        return refuse(QStringLiteral("segment%1 %2 missing (of %3); merge what is there with --partial")
                          .arg(missing.size() > 1 ? QStringLiteral("s") : QString(), names.join(QStringLiteral(", ")),
                              QString::number(count)));
    }

    QList<SegmentReport> ordered;
    for (const auto &[index, report] : byIndex)
        ordered << *report;
    RunRecord merged;
    const RunRecord &base = ordered.front().run;
    merged.method = base.method;
    merged.transport = base.transport;
    merged.codec = base.codec;
    merged.target = base.target;
    merged.origin = QStringLiteral("rpcscope (merged: %1 of %2 segments)").arg(ordered.size()).arg(count);
    merged.scenario = base.scenario;
    QJsonObject load = merged.scenario.value(QStringLiteral("load")).toObject();
    load.remove(QStringLiteral("segment")); // the merge is the whole plan
    merged.scenario.insert(QStringLiteral("load"), load);
    merged.environment = base.environment;
    merged.server = base.server;
    merged.split.count = count;
    merged.split.planId = base.split.planId;
    merged.split.startAt = base.split.startAt;
    merged.split.partial = !missing.isEmpty();
    merged.split.missing = missing;
    if (merged.split.partial)
        merged.labels << QStringLiteral("partial");

    int64_t startUs = 0;
    bool allStarts = true;
    for (const SegmentReport &r : ordered) {
        const int64_t start = r.run.snapshot.timedStartUnixUs;
        allStarts = allStarts && start > 0;
        if (start > 0 && (startUs == 0 || start < startUs))
            startUs = start;
    }
    int64_t lastStartUs = 0;
    for (const SegmentReport &r : ordered)
        lastStartUs = std::max(lastStartUs, r.run.snapshot.timedStartUnixUs);
    if (startUs > 0 && lastStartUs - startUs > kMaxStartSpreadUs)
        return refuse(QStringLiteral("the segments started %1 hours apart: not one run (its workers start together)")
                          .arg(static_cast<double>(lastStartUs - startUs) / 3.6e9, 0, 'f', 1));
    RunSnapshot &total = merged.snapshot;
    total.state = RunState::Finished;
    total.openLoop = base.snapshot.openLoop;
    total.expectedStatuses = base.snapshot.expectedStatuses;
    total.timedStartUnixUs = allStarts ? startUs : 0;
    double endSeconds = 0;
    bool allRaw = true;
    merged.status = QString::fromUtf16(RunStatus::Finished);
    for (const SegmentReport &r : ordered) {
        const RunSnapshot &s = r.run.snapshot;
        addCounts(total, s);
        total.intendedRate += s.intendedRate; // side by side: the workers' rates add up
        total.clientPeakRssBytes += s.clientPeakRssBytes; // one process each
        total.serverPeakRssBytes += s.serverPeakRssBytes;
        total.plannedDuration = std::max(total.plannedDuration, s.plannedDuration);
        if (s.state == RunState::Stopped || r.run.status != QString::fromUtf16(RunStatus::Finished)) {
            total.state = RunState::Stopped;
            merged.status = QString::fromUtf16(RunStatus::Stopped);
        }
        const double offset = allStarts ? static_cast<double>(s.timedStartUnixUs - startUs) / 1e6 : 0.0;
        endSeconds = std::max(endSeconds, offset + std::chrono::duration<double>(s.elapsed).count());
        for (const QString &label : r.run.labels) {
            if (!merged.labels.contains(label))
                merged.labels << label;
        }
        if (!merged.startedAt.isValid() || (r.run.startedAt.isValid() && r.run.startedAt < merged.startedAt))
            merged.startedAt = r.run.startedAt;
        if (!merged.endedAt.isValid() || (r.run.endedAt.isValid() && r.run.endedAt > merged.endedAt))
            merged.endedAt = r.run.endedAt;
        allRaw = allRaw && !r.run.rawSamples.empty();
        WorkerRecord worker = r.run.split.workers.front();
        worker.takeFigures(s);
        worker.environment = r.run.environment;
        merged.split.workers << worker;
    }
    total.hasServerStats = std::all_of(
        ordered.begin(), ordered.end(), [](const SegmentReport &r) { return r.run.snapshot.hasServerStats; });
    if (!total.hasServerStats) {
        total.serverCpuSeconds = 0;
        total.serverCpuInTicks = false;
    }
    total.elapsed = std::chrono::nanoseconds(std::llround(std::min(endSeconds, kMaxSeconds) * 1e9));
    std::sort(total.errors.begin(), total.errors.end(), [](const auto &a, const auto &b) { return a.count > b.count; });
    total.timeline = mergeTimelines(ordered, startUs);
    if (allRaw) {
        for (const SegmentReport &r : ordered) {
            const auto shift = allStarts ? static_cast<uint64_t>(r.run.snapshot.timedStartUnixUs - startUs) * 1000 : 0;
            for (RawSample sample : r.run.rawSamples) {
                sample.sentNs += shift;
                merged.rawSamples.push_back(sample);
            }
        }
        std::stable_sort(merged.rawSamples.begin(), merged.rawSamples.end(),
            [](const RawSample &a, const RawSample &b) { return a.sentNs < b.sentNs; });
    }
    return merged;
}

QStringList outlyingWorkers(const SplitRecord &split)
{
    QStringList why(split.workers.size());
    if (split.workers.size() < 3)
        return why;
    auto median = [](std::vector<double> values) {
        std::sort(values.begin(), values.end());
        const size_t n = values.size();
        return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
    };
    std::vector<double> p99;
    std::vector<double> rps;
    for (const WorkerRecord &w : split.workers) {
        if (w.calls > w.failed)
            p99.push_back(static_cast<double>(w.p99Ns));
        rps.push_back(w.requestsPerSecond());
    }
    const double typicalP99 = p99.empty() ? 0 : median(p99);
    const double typicalRps = median(rps);
    for (qsizetype i = 0; i < split.workers.size(); ++i) {
        const WorkerRecord &w = split.workers[i];
        QStringList reasons;
        if (typicalP99 > 0 && w.calls > w.failed && static_cast<double>(w.p99Ns) > 1.5 * typicalP99)
            reasons << QStringLiteral("p99 %1x the workers' median")
                           .arg(static_cast<double>(w.p99Ns) / typicalP99, 0, 'f', 1);
        if (typicalRps > 0 && w.requestsPerSecond() < typicalRps * 2 / 3)
            reasons << QStringLiteral("throughput %1% of the workers' median")
                           .arg(std::lround(100 * w.requestsPerSecond() / typicalRps));
        why[i] = reasons.join(QStringLiteral(", "));
    }
    return why;
}

} // namespace rpcscope
