#pragma once
// Runs made in code for the chart, report and slide tests: real histograms of log-normal latencies (as a server's
// look), a time series, CPU and memory figures, and A/B sides made of blocks.
#include "store/runrecord.h"

#include <QDate>
#include <QJsonObject>
#include <QTime>

#include <chrono>
#include <cmath>
#include <random>

namespace rpcscope {

inline void recordLognormal(LatencyHistogram &h, uint64_t seed, double medianNs, double sigma, int samples)
{
    std::mt19937_64 rng(seed);
    std::lognormal_distribution<double> dist(std::log(medianNs), sigma);
    for (int i = 0; i < samples; ++i)
        h.record(static_cast<uint64_t>(dist(rng)));
}

inline RunRecord makeRun(const QString &name, uint64_t seed, double medianNs, bool openLoop = false)
{
    RunRecord run;
    run.name = name;
    run.method = QStringLiteral("bench.Bench/Echo");
    run.transport = QStringLiteral("grpc");
    run.codec = QStringLiteral("protobuf");
    run.target = QStringLiteral("builtin");
    run.startedAt = QDateTime(QDate(2026, 11, 30), QTime(10, 0), Qt::UTC);
    run.endedAt = run.startedAt.addSecs(30);
    run.scenario = QJsonObject { { QStringLiteral("load"),
        QJsonObject { { QStringLiteral("calls"), 0 }, { QStringLiteral("concurrency"), 16 },
            { QStringLiteral("duration"), QStringLiteral("30s") }, { QStringLiteral("rate"), QString() } } } };
    run.environment = QJsonObject { { QStringLiteral("os"), QStringLiteral("Debian GNU/Linux 12") },
        { QStringLiteral("cores"), 8 }, { QStringLiteral("cpu_governor"), QStringLiteral("performance") } };

    RunSnapshot &s = run.snapshot;
    s.generation = seed;
    s.state = RunState::Finished;
    recordLognormal(s.latency, seed, medianNs, 0.5, 60'000);
    recordLognormal(s.errorLatency, seed + 1, medianNs * 3, 0.3, 120);
    s.statusCounts[CallStatus::Ok] = s.latency.count();
    s.statusCounts[CallStatus::Unavailable] = s.errorLatency.count();
    s.errors << ErrorSample { CallStatus::Unavailable, QStringLiteral("connect failed: <refused> & gone"), 120 };
    if (openLoop) {
        s.openLoop = true;
        recordLognormal(s.serviceLatency, seed + 2, medianNs * 0.7, 0.4, 60'000);
        s.intendedRate = 2000;
        s.callsSent = s.callsCompleted();
    }
    for (int i = 0; i < 30; ++i) {
        IntervalPoint p;
        p.endSeconds = i + 1;
        p.seconds = 1;
        p.calls = static_cast<uint64_t>(2000 * 2e6 / medianNs) + static_cast<uint64_t>((i * 37) % 200);
        p.errors = i % 5 == 0 ? 20 : 0;
        p.p50 = static_cast<uint64_t>(medianNs * (1 + 0.05 * std::sin(i)));
        p.p90 = static_cast<uint64_t>(medianNs * 1.9 * (1 + 0.05 * std::cos(i)));
        p.p99 = static_cast<uint64_t>(medianNs * 3.2 * (1 + 0.1 * std::sin(i * 0.7)));
        p.concurrency = 16;
        s.timeline << p;
    }
    s.elapsed = std::chrono::seconds(30);
    s.clientCpuSeconds = 4.2;
    s.clientPeakRssBytes = 48 << 20;
    s.hasServerStats = true;
    s.serverCpuSeconds = 6.5;
    s.serverPeakRssBytes = 64 << 20;
    s.bytesSent = s.callsCompleted() * 1024;
    s.bytesReceived = s.callsCompleted() * 1030;
    return run;
}

// An interleaved A/B side: @p blocks blocks of 2,000 calls, each block a little faster or slower than the next (as
// connections land on different cores), pooled into the run's own histogram as the A/B runner does.
inline RunRecord blockedRun(const QString &name, uint64_t seed, double medianNs, int blocks)
{
    RunRecord run = makeRun(name, seed, medianNs);
    RunSnapshot &s = run.snapshot;
    s.latency = LatencyHistogram();
    std::mt19937_64 rng(seed * 7919);
    std::lognormal_distribution<double> blockFactor(0, 0.03);
    for (int i = 0; i < blocks; ++i) {
        RunBlock block;
        block.round = i + 1;
        block.elapsed = std::chrono::seconds(1);
        recordLognormal(block.latency, seed * 1000 + static_cast<uint64_t>(i), medianNs * blockFactor(rng), 0.3, 2000);
        block.calls = block.latency.count();
        s.latency.merge(block.latency);
        s.blocks.push_back(block);
    }
    s.statusCounts[CallStatus::Ok] = s.latency.count();
    s.elapsed = std::chrono::seconds(blocks);
    s.blocksConnection = QStringLiteral("kept");
    return run;
}

/**
 * A server profile as perf gives one: @p processes processes of 10000 calls each, 1 ms of CPU a sample, the handler
 * with 20 us of its own per call, encoding 10 us and, with @p burnUs, rpcscope::burnCpu that long; sample counts
 * drawn as Poisson, as sampling makes them.
 */
inline Profile makeProfile(
    double burnUs, uint64_t seed, int processes = 3, const QString &scope = QStringLiteral("server"))
{
    Profile profile;
    profile.scope = scope;
    profile.profiler = QStringLiteral("perf");
    profile.how = QStringLiteral("perf record -a -e cpu-clock -c 1000000 -g, filtered to the server's processes");
    profile.profilerCpuSeconds = 0.25;
    std::mt19937_64 rng(seed);
    const double calls = 10000;
    const auto samples = [&](double usPerCall) {
        std::poisson_distribution<int> draw(usPerCall * calls / 1000);
        return static_cast<double>(draw(rng));
    };
    for (int i = 0; i < processes; ++i) {
        ProcessProfile process;
        process.pid = 1000 + i;
        process.command = QStringLiteral("rpcscope-cli serve grpc");
        process.calls = calls;
        process.cpuNsPerUnit = 1e6;
        process.stacks.insert(QStringLiteral("main;grpc::Server::handle;EchoService::Echo"), samples(20));
        process.stacks.insert(
            QStringLiteral("main;grpc::Server::handle;EchoService::Echo;proto::Serialize"), samples(10));
        if (burnUs > 0)
            process.stacks.insert(
                QStringLiteral("main;grpc::Server::handle;EchoService::Echo;rpcscope::burnCpu"), samples(burnUs));
        profile.processes.push_back(process);
    }
    return profile;
}

} // namespace rpcscope
