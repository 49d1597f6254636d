#include "codecbench.h"

#include <google/protobuf/message.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>

namespace gp = google::protobuf;

namespace rpcscope {

namespace {

using Clock = std::chrono::steady_clock;

/// Makes the compiler assume @p pointer's memory is read and any memory written (Google Benchmark's DoNotOptimize
/// and ClobberMemory in one), so no encode, decode or copy is dropped as unused or hoisted out of the loop.
inline void escape(const void *pointer)
{
    asm volatile("" : : "g"(pointer) : "memory");
}

/**
 * The median time per call of @p op (bool(), false = failed) over batches of about 10 ms, run until @p budget is
 * spent; std::nullopt if op failed. A first batch grown to about 1 ms (warming the caches) sizes the others and
 * stands in for them only when the budget allows no other batch.
 */
template<class Op> std::optional<double> medianNsPerCall(Op &&op, std::chrono::nanoseconds budget)
{
    const Clock::time_point deadline = Clock::now() + budget;
    auto runBatch = [&op](uint64_t calls, double *ns) {
        const Clock::time_point start = Clock::now();
        for (uint64_t i = 0; i < calls; ++i) {
            if (!op())
                return false;
        }
        *ns = std::chrono::duration<double, std::nano>(Clock::now() - start).count();
        return true;
    };

    uint64_t calls = 1;
    double ns = 0;
    for (;;) {
        if (!runBatch(calls, &ns))
            return std::nullopt;
        if (ns >= 1e6 || Clock::now() >= deadline || calls >= (uint64_t(1) << 40))
            break;
        // Aim past 1 ms at once when the batch was tiny, but never more than tenfold on a noisy first reading.
        const double factor = ns > 0 ? std::clamp(1.2e6 / ns, 2.0, 10.0) : 10.0;
        calls = static_cast<uint64_t>(static_cast<double>(calls) * factor);
    }
    const double calibration = ns / static_cast<double>(calls);
    const uint64_t batch = std::max<uint64_t>(1, static_cast<uint64_t>(1e7 / std::max(calibration, 0.01)));
    const auto batchDuration = std::chrono::nanoseconds(static_cast<int64_t>(static_cast<double>(batch) * calibration));

    std::vector<double> samples;
    while (Clock::now() + batchDuration <= deadline) {
        if (!runBatch(batch, &ns))
            return std::nullopt;
        samples.push_back(ns / static_cast<double>(batch));
    }
    if (samples.empty())
        return calibration;
    const auto middle = samples.begin() + static_cast<std::ptrdiff_t>(samples.size() / 2);
    std::nth_element(samples.begin(), middle, samples.end());
    return *middle;
}

double megabytesPerSecond(size_t bytes, double ns)
{
    return ns > 0 ? static_cast<double>(bytes) / ns * 1e3 : 0; // bytes/ns is GB/s
}

} // namespace

CodecBenchResult benchmarkCodecs(
    const gp::Message &message, const std::vector<Codec> &codecs, std::chrono::nanoseconds budgetPerCodec)
{
    CodecBenchResult result;
    const std::chrono::nanoseconds half = budgetPerCodec / 2;

    std::string protobufBytes;
    message.SerializeToString(&protobufBytes);
    result.floorBytes = protobufBytes.size();
    std::string copy(protobufBytes.size(), '\0');
    const auto memcpyNs = medianNsPerCall(
        [&] {
            std::memcpy(copy.data(), protobufBytes.data(), protobufBytes.size());
            escape(copy.data());
            return true;
        },
        half);
    result.memcpyNs = memcpyNs.value_or(0);
    result.memcpyMBps = megabytesPerSecond(result.floorBytes, result.memcpyNs);

    const std::unique_ptr<gp::Message> decoded(message.New());
    std::string encoded;
    for (const Codec codec : codecs) {
        CodecTiming timing;
        timing.codec = codec;
        if (!encodeMessage(codec, message, &encoded, &timing.error)) {
            result.codecs.push_back(std::move(timing));
            continue;
        }
        timing.encodedBytes = encoded.size();

        // Encoding reuses one output string (cleared, capacity kept) as a caller sending many requests would.
        std::string out;
        const std::optional<double> encodeNs = medianNsPerCall(
            [&] {
                const bool ok = encodeMessage(codec, message, &out, &timing.error);
                escape(out.data());
                return ok;
            },
            half);
        const std::optional<double> decodeNs = medianNsPerCall(
            [&] {
                const bool ok = decodeMessage(codec, encoded, decoded.get(), &timing.error);
                escape(decoded.get());
                return ok;
            },
            half);
        if (encodeNs && decodeNs) {
            timing.encodeNs = *encodeNs;
            timing.decodeNs = *decodeNs;
            timing.encodeMBps = megabytesPerSecond(timing.encodedBytes, timing.encodeNs);
            timing.decodeMBps = megabytesPerSecond(timing.encodedBytes, timing.decodeNs);
        }
        result.codecs.push_back(std::move(timing));
    }
    return result;
}

} // namespace rpcscope
