// The floor for rpcscope-cli's overhead: the least a C++ gRPC client can do to call Bench/Echo, one call in
// flight at a time. No generated code, no protobuf library, no rpcscope core: the EchoRequest bytes are written
// by hand, the generic stub sends them, the completion queue is polled on this thread and the reply is left
// undecoded. Each timed call is measured with steady_clock and kept, so the percentiles are exact.
//
//   floor_client ADDRESS --payload BYTES [--response-size N] -n CALLS [--warmup N] [--max-recv-size BYTES]
//
// Prints one "key value" pair per line: request_bytes, reply_bytes (of the last call), count, errors, p50_us,
// p99_us, mean_us, min_us, max_us, cpu_s, cpu_us_per_call, voluntary_switches_per_call,
// involuntary_switches_per_call, wall_s, calls_per_s (and first_error when a call failed). Exit 0 when it
// measured (failed calls included: they are counted in errors), 2 on bad usage, 3 when the completion queue fails.
// Sizes take an optional suffix: 10MiB, 4MiB, 512KiB, 1GiB (powers of 1024).

#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>
#include <grpcpp/completion_queue.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/channel_arguments.h>
#include <grpcpp/support/slice.h>
#include <grpcpp/support/status.h>

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace {

const char *const kMethod = "/rpcscope.bench.v1.Bench/Echo";

[[noreturn]] void usage(const char *why)
{
    std::fprintf(stderr,
        "floor_client: %s\n"
        "usage: floor_client ADDRESS --payload BYTES [--response-size N] -n CALLS [--warmup N] "
        "[--max-recv-size BYTES]\n",
        why);
    std::exit(2);
}

/// "123", "4KiB", "10MiB", "1GiB" -> bytes; nullopt when it is none of these.
std::optional<uint64_t> parseSize(const std::string &text)
{
    if (text.empty() || text[0] < '0' || text[0] > '9')
        return std::nullopt;
    errno = 0;
    char *end = nullptr;
    const unsigned long long number = std::strtoull(text.c_str(), &end, 10);
    if (errno != 0)
        return std::nullopt;
    const std::string unit(end);
    uint64_t scale = 1;
    if (unit.empty() || unit == "B")
        scale = 1;
    else if (unit == "KiB" || unit == "K")
        scale = uint64_t { 1 } << 10;
    else if (unit == "MiB" || unit == "M")
        scale = uint64_t { 1 } << 20;
    else if (unit == "GiB" || unit == "G")
        scale = uint64_t { 1 } << 30;
    else
        return std::nullopt;
    if (number > std::numeric_limits<uint64_t>::max() / scale)
        return std::nullopt;
    return number * scale;
}

void appendVarint(std::string *out, uint64_t value)
{
    while (value >= 0x80) {
        out->push_back(static_cast<char>((value & 0x7f) | 0x80));
        value >>= 7;
    }
    out->push_back(static_cast<char>(value));
}

/// EchoRequest{payload: `payloadBytes` bytes, response_size: `responseSize` if set} in protobuf wire format.
std::string encodeEchoRequest(uint64_t payloadBytes, std::optional<uint32_t> responseSize)
{
    std::string out;
    out.reserve(static_cast<size_t>(payloadBytes) + 16);
    if (payloadBytes > 0) { // proto3: an empty bytes field is not written
        out.push_back('\x0a'); // field 1, wire type 2 (length-delimited)
        appendVarint(&out, payloadBytes);
        out.append(static_cast<size_t>(payloadBytes), 'x');
    }
    if (responseSize) { // optional field: written whenever it is set, 0 included
        out.push_back('\x10'); // field 2, wire type 0 (varint)
        appendVarint(&out, *responseSize);
    }
    return out;
}

struct Usage {
    double cpuSeconds = 0; ///< user + system, every thread of the process
    long voluntarySwitches = 0; ///< the process's threads gave up the CPU (waited)
    long involuntarySwitches = 0; ///< the process's threads were preempted
};

Usage usageNow()
{
    rusage usage {};
    getrusage(RUSAGE_SELF, &usage);
    auto seconds
        = [](const timeval &tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6; };
    return { seconds(usage.ru_utime) + seconds(usage.ru_stime), usage.ru_nvcsw, usage.ru_nivcsw };
}

struct Options {
    std::string address;
    uint64_t payloadBytes = 0;
    std::optional<uint32_t> responseSize;
    uint64_t calls = 0;
    uint64_t warmup = 0;
    std::optional<int> maxRecvBytes;
};

Options parseArguments(int argc, char **argv)
{
    Options o;
    bool havePayload = false;
    bool haveCalls = false;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc)
                usage((arg + " needs a value").c_str());
            return argv[++i];
        };
        auto size = [&](const std::string &text) {
            const auto parsed = parseSize(text);
            if (!parsed)
                usage((arg + ": \"" + text + "\" is not a size (e.g. 5, 1KiB, 10MiB)").c_str());
            return *parsed;
        };
        if (arg == "--payload") {
            o.payloadBytes = size(value());
            havePayload = true;
        } else if (arg == "--response-size") {
            const uint64_t n = size(value());
            if (n > std::numeric_limits<uint32_t>::max())
                usage("--response-size: at most 4 GiB - 1");
            o.responseSize = static_cast<uint32_t>(n);
        } else if (arg == "-n") {
            o.calls = size(value());
            haveCalls = o.calls > 0;
        } else if (arg == "--warmup") {
            o.warmup = size(value());
        } else if (arg == "--max-recv-size") {
            const uint64_t n = size(value());
            if (n > static_cast<uint64_t>(std::numeric_limits<int>::max()))
                usage("--max-recv-size: at most 2 GiB - 1");
            o.maxRecvBytes = static_cast<int>(n);
        } else if (arg == "-h" || arg == "--help") {
            usage("help");
        } else if (!arg.empty() && arg[0] == '-') {
            usage(("unknown option " + arg).c_str());
        } else if (o.address.empty()) {
            o.address = arg;
        } else {
            usage(("one address expected, got a second: " + arg).c_str());
        }
    }
    if (o.address.empty())
        usage("no ADDRESS (host:port)");
    if (!havePayload)
        usage("--payload is required");
    if (!haveCalls)
        usage("-n is required (at least 1)");
    return o;
}

} // namespace

int main(int argc, char **argv)
{
    const Options options = parseArguments(argc, argv);

    grpc::ChannelArguments args;
    // Requests are as large as asked (gRPC clients send without limit by default; said explicitly all the same).
    args.SetMaxSendMessageSize(-1);
    if (options.maxRecvBytes)
        args.SetMaxReceiveMessageSize(*options.maxRecvBytes);
    auto channel = grpc::CreateCustomChannel(options.address, grpc::InsecureChannelCredentials(), args);
    grpc::GenericStub stub(channel);
    grpc::CompletionQueue cq;

    // Encoded once; a ByteBuffer copy only takes a reference on the slice.
    const std::string encoded = encodeEchoRequest(options.payloadBytes, options.responseSize);
    const grpc::Slice slice(encoded.data(), encoded.size());
    const grpc::ByteBuffer request(&slice, 1);

    std::string firstError;
    uint64_t replyBytes = 0; // of the last call: the serialized EchoResponse, as received
    auto call = [&]() -> bool { // one unary call, start to finish; true when it ended OK
        grpc::ClientContext context;
        grpc::ByteBuffer reply;
        grpc::Status status;
        auto rpc = stub.PrepareUnaryCall(&context, kMethod, request, &cq);
        rpc->StartCall();
        rpc->Finish(&reply, &status, &context); // any unique tag will do
        void *tag = nullptr;
        bool ok = false;
        if (!cq.Next(&tag, &ok) || tag != &context) {
            std::fprintf(stderr, "floor_client: completion queue failed\n");
            std::exit(3);
        }
        replyBytes = reply.Length();
        if (!status.ok() && firstError.empty())
            firstError = std::to_string(static_cast<int>(status.error_code())) + " " + status.error_message();
        return status.ok();
    };

    uint64_t warmupErrors = 0;
    for (uint64_t i = 0; i < options.warmup; ++i)
        warmupErrors += call() ? 0 : 1;

    std::vector<int64_t> samples; // nanoseconds, every timed call
    samples.reserve(static_cast<size_t>(options.calls));
    uint64_t errors = 0;
    const Usage usageStart = usageNow();
    const auto wallStart = std::chrono::steady_clock::now();
    for (uint64_t i = 0; i < options.calls; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        const bool ok = call();
        const auto t1 = std::chrono::steady_clock::now();
        samples.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
        errors += ok ? 0 : 1;
    }
    const auto wallEnd = std::chrono::steady_clock::now();
    const Usage usageEnd = usageNow();
    const double cpu = usageEnd.cpuSeconds - usageStart.cpuSeconds;
    const double wall = std::chrono::duration<double>(wallEnd - wallStart).count();

    std::sort(samples.begin(), samples.end());
    // Nearest rank: the smallest sample with at least p% of the samples at or below it.
    auto percentileUs = [&](double p) {
        const auto n = static_cast<double>(samples.size());
        const auto rank = static_cast<size_t>(std::max(1.0, std::ceil(p / 100.0 * n)));
        return static_cast<double>(samples[std::min(rank, samples.size()) - 1]) / 1e3;
    };
    double sum = 0;
    for (int64_t s : samples)
        sum += static_cast<double>(s);

    std::printf("address %s\n", options.address.c_str());
    std::printf("request_bytes %zu\n", encoded.size());
    std::printf("reply_bytes %llu\n", static_cast<unsigned long long>(replyBytes));
    std::printf("count %zu\n", samples.size());
    std::printf("errors %llu\n", static_cast<unsigned long long>(errors));
    std::printf("warmup %llu\n", static_cast<unsigned long long>(options.warmup));
    std::printf("warmup_errors %llu\n", static_cast<unsigned long long>(warmupErrors));
    std::printf("p50_us %.3f\n", percentileUs(50));
    std::printf("p99_us %.3f\n", percentileUs(99));
    std::printf("mean_us %.3f\n", sum / static_cast<double>(samples.size()) / 1e3);
    std::printf("min_us %.3f\n", static_cast<double>(samples.front()) / 1e3);
    std::printf("max_us %.3f\n", static_cast<double>(samples.back()) / 1e3);
    std::printf("cpu_s %.6f\n", cpu);
    std::printf("cpu_us_per_call %.3f\n", cpu * 1e6 / static_cast<double>(samples.size()));
    const auto perCall = [&](long n) { return static_cast<double>(n) / static_cast<double>(samples.size()); };
    std::printf(
        "voluntary_switches_per_call %.3f\n", perCall(usageEnd.voluntarySwitches - usageStart.voluntarySwitches));
    std::printf(
        "involuntary_switches_per_call %.3f\n", perCall(usageEnd.involuntarySwitches - usageStart.involuntarySwitches));
    std::printf("wall_s %.6f\n", wall);
    std::printf("calls_per_s %.1f\n", wall > 0 ? static_cast<double>(samples.size()) / wall : 0.0);
    if (!firstError.empty())
        std::printf("first_error %s\n", firstError.c_str());
    return 0;
}
