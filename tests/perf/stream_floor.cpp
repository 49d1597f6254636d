// The floor for rpcscope-cli's overhead on streams: the least a C++ gRPC client can do to read a server stream
// (Bench/Download) or write a client stream (Bench/Upload), one stream at a time. No generated code, no protobuf
// library, no rpcscope core: the request bytes are written by hand, the generic stub carries them, the completion
// queue is polled on this thread, one operation at a time, and the messages are left undecoded.
//
//   stream_floor ADDRESS download|upload --messages N --size BYTES [--streams K]
//
// download: K streams one after the other, each Download{count: N, size: BYTES}, every message read.
// upload:   K streams one after the other, each N EchoRequest{payload: BYTES bytes} written, then the reply read.
// Prints "key value" lines: streams, messages (all streams), errors, wall_s, messages_per_s, cpu_s,
// cpu_us_per_message (and first_error when a stream failed). Exit 0 when it measured, 2 on bad usage, 3 when the
// completion queue fails.

#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>
#include <grpcpp/completion_queue.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/slice.h>
#include <grpcpp/support/status.h>

#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

[[noreturn]] void usage(const char *why)
{
    std::fprintf(stderr,
        "stream_floor: %s\n"
        "usage: stream_floor ADDRESS download|upload --messages N --size BYTES [--streams K]\n",
        why);
    std::exit(2);
}

void appendVarint(std::string *out, uint64_t value)
{
    while (value >= 0x80) {
        out->push_back(static_cast<char>((value & 0x7f) | 0x80));
        value >>= 7;
    }
    out->push_back(static_cast<char>(value));
}

double cpuSeconds()
{
    rusage usage {};
    getrusage(RUSAGE_SELF, &usage);
    auto seconds
        = [](const timeval &tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6; };
    return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

/// Waits for the one operation in flight; its ok flag.
bool await(grpc::CompletionQueue &cq, void *expected)
{
    void *tag = nullptr;
    bool ok = false;
    if (!cq.Next(&tag, &ok) || tag != expected) {
        std::fprintf(stderr, "stream_floor: completion queue failed\n");
        std::exit(3);
    }
    return ok;
}

} // namespace

int main(int argc, char **argv)
{
    if (argc < 3)
        usage("ADDRESS and a mode are required");
    const std::string address = argv[1];
    const std::string mode = argv[2];
    if (mode != "download" && mode != "upload")
        usage("the mode is download or upload");
    uint64_t messages = 0;
    uint64_t size = 0;
    uint64_t streams = 1;
    for (int i = 3; i < argc; ++i) {
        const std::string arg = argv[i];
        if (i + 1 >= argc)
            usage((arg + " needs a value").c_str());
        char *end = nullptr;
        const unsigned long long value = std::strtoull(argv[++i], &end, 10);
        if (*end != '\0')
            usage((arg + ": expected a whole number").c_str());
        if (arg == "--messages")
            messages = value;
        else if (arg == "--size")
            size = value;
        else if (arg == "--streams")
            streams = value;
        else
            usage(("unknown option " + arg).c_str());
    }
    if (messages == 0 || streams == 0)
        usage("--messages and --streams must be at least 1");

    auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
    grpc::GenericStub stub(channel);
    grpc::CompletionQueue cq;

    // download: DownloadRequest{count = 1, size = 2}; upload: EchoRequest{payload = 1}.
    std::string encoded;
    if (mode == "download") {
        encoded.push_back('\x08');
        appendVarint(&encoded, messages);
        encoded.push_back('\x10');
        appendVarint(&encoded, size);
    } else if (size > 0) {
        encoded.push_back('\x0a');
        appendVarint(&encoded, size);
        encoded.append(static_cast<size_t>(size), 'x');
    }
    const grpc::Slice slice(encoded.data(), encoded.size());
    const grpc::ByteBuffer request(&slice, 1);
    const char *method = mode == "download" ? "/rpcscope.bench.v1.Bench/Download" : "/rpcscope.bench.v1.Bench/Upload";

    uint64_t moved = 0; // messages read (download) or written (upload)
    uint64_t errors = 0;
    std::string firstError;
    const double cpuStart = cpuSeconds();
    const auto wallStart = std::chrono::steady_clock::now();
    for (uint64_t s = 0; s < streams; ++s) {
        grpc::ClientContext context;
        auto stream = stub.PrepareCall(&context, method, &cq);
        int tag = 0; // one operation at a time: any address will do
        stream->StartCall(&tag);
        bool ok = await(cq, &tag);
        grpc::ByteBuffer incoming;
        if (ok && mode == "download") {
            stream->Write(request, &tag);
            ok = await(cq, &tag);
            stream->WritesDone(&tag);
            await(cq, &tag);
            for (;;) {
                stream->Read(&incoming, &tag);
                if (!await(cq, &tag))
                    break;
                ++moved;
            }
        } else if (ok) {
            for (uint64_t m = 0; m < messages && ok; ++m) {
                stream->Write(request, &tag);
                ok = await(cq, &tag);
                moved += ok ? 1 : 0;
            }
            stream->WritesDone(&tag);
            await(cq, &tag);
            stream->Read(&incoming, &tag);
            await(cq, &tag);
        }
        grpc::Status status;
        stream->Finish(&status, &tag);
        await(cq, &tag);
        if (!status.ok()) {
            ++errors;
            if (firstError.empty())
                firstError = std::to_string(static_cast<int>(status.error_code())) + " " + status.error_message();
        }
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();
    const double cpu = cpuSeconds() - cpuStart;

    std::printf("mode %s\n", mode.c_str());
    std::printf("streams %llu\n", static_cast<unsigned long long>(streams));
    std::printf("messages %llu\n", static_cast<unsigned long long>(moved));
    std::printf("errors %llu\n", static_cast<unsigned long long>(errors));
    std::printf("wall_s %.6f\n", wall);
    std::printf("messages_per_s %.1f\n", wall > 0 ? static_cast<double>(moved) / wall : 0.0);
    std::printf("cpu_s %.6f\n", cpu);
    std::printf("cpu_us_per_message %.3f\n", moved ? cpu * 1e6 / static_cast<double>(moved) : 0.0);
    if (!firstError.empty())
        std::printf("first_error %s\n", firstError.c_str());
    return 0;
}
