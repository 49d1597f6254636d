#include "processstats.h"

#include <QDir>
#include <QFile>
#include <QHash>

#include <algorithm>
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
    long cutime = 0;
    long cstime = 0;
    long rss = 0;
    const int got
        = std::sscanf(p, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu %ld %ld %*d %*d %*d %*d %*u %*u %ld",
            &utime, &stime, &cutime, &cstime, &rss);
    if (got != 5)
        return sample;
    sample.valid = true;
    sample.reapedChildrenCpuSeconds
        = static_cast<double>(std::max(0L, cutime) + std::max(0L, cstime)) / static_cast<double>(sysconf(_SC_CLK_TCK));
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

namespace {

qint64 parentOf(qint64 pid)
{
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!stat.open(QIODevice::ReadOnly))
        return -1;
    const QByteArray text = stat.readAll();
    const qsizetype close = text.lastIndexOf(')'); // the comm may hold spaces and parentheses
    if (close < 0)
        return -1;
    const QList<QByteArray> fields = text.mid(close + 2).split(' ');
    return fields.size() > 1 ? fields.at(1).toLongLong() : -1;
}

} // namespace

QSet<qint64> processTree(qint64 pid)
{
    QSet<qint64> tree { pid };
    QHash<qint64, qint64> parents;
    const QStringList entries = QDir(QStringLiteral("/proc")).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    for (const QString &entry : entries) {
        bool number = false;
        const qint64 child = entry.toLongLong(&number);
        if (number)
            parents.insert(child, parentOf(child));
    }
    for (bool grew = true; grew;) {
        grew = false;
        for (auto it = parents.cbegin(); it != parents.cend(); ++it) {
            if (!tree.contains(it.key()) && tree.contains(it.value())) {
                tree.insert(it.key());
                grew = true;
            }
        }
    }
    return tree;
}

} // namespace rpcscope
