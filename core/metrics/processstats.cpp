#include "processstats.h"

#include <cstdio>
#include <ctime>
#include <sys/resource.h>
#include <unistd.h>

namespace rpcscope {

double processCpuSeconds()
{
    rusage usage {};
    if (getrusage(RUSAGE_SELF, &usage) != 0)
        return 0;
    auto seconds
        = [](const timeval &tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6; };
    return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

uint64_t processRssBytes()
{
    FILE *file = std::fopen("/proc/self/statm", "r");
    if (!file)
        return 0;
    unsigned long size = 0;
    unsigned long resident = 0;
    const int read = std::fscanf(file, "%lu %lu", &size, &resident);
    std::fclose(file);
    return read == 2 ? static_cast<uint64_t>(resident) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE)) : 0;
}

ProcessSample sampleProcess(pid_t pid)
{
    ProcessSample sample;
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
    FILE *file = std::fopen(path, "r");
    if (!file)
        return sample;
    char buffer[1024];
    const size_t n = std::fread(buffer, 1, sizeof buffer - 1, file);
    std::fclose(file);
    buffer[n] = '\0';
    // Fields after the command name (which may hold spaces, so skip to the last ')'): state is field 3,
    // utime 14, stime 15, rss 24 (pages).
    const char *p = nullptr;
    for (size_t i = n; i-- > 0;) {
        if (buffer[i] == ')') {
            p = buffer + i + 2;
            break;
        }
    }
    if (!p)
        return sample;
    unsigned long utime = 0;
    unsigned long stime = 0;
    long rss = 0;
    const int got
        = std::sscanf(p, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu %*d %*d %*d %*d %*d %*d %*u %*u %ld",
            &utime, &stime, &rss);
    if (got != 3)
        return sample;
    sample.valid = true;
    clockid_t clock {};
    timespec cpu {};
    if (clock_getcpuclockid(pid, &clock) == 0 && clock_gettime(clock, &cpu) == 0) {
        sample.cpuSeconds = static_cast<double>(cpu.tv_sec) + static_cast<double>(cpu.tv_nsec) / 1e9;
    } else {
        sample.cpuSeconds = static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
        sample.cpuFromTicks = true;
    }
    sample.rssBytes = static_cast<uint64_t>(rss) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    return sample;
}

} // namespace rpcscope
