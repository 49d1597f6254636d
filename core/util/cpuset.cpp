#include "cpuset.h"

#include <QDir>
#include <QFile>
#include <QRegularExpression>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <set>

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace rpcscope {

namespace {

// Far above any machine's CPU count, low enough that the mask of a typo ("1-1000000000") stays small.
constexpr int kMaxCpu = 65535;
constexpr int kBitsPerWord = sizeof(unsigned long) * CHAR_BIT;

/// parseCpuList() without the check against this process's CPUs (for the kernel's own lists).
std::optional<std::vector<int>> parseRanges(const QString &text, QString *error)
{
    auto fail = [&](const QString &why) -> std::optional<std::vector<int>> {
        if (error)
            *error = why;
        return std::nullopt;
    };
    if (text.trimmed().isEmpty())
        return fail(QStringLiteral("empty CPU list (expected e.g. 0, 0,2 or 1-3)"));
    std::set<int> cpus;
    const QStringList items = text.split(QLatin1Char(','));
    for (const QString &raw : items) {
        const QString item = raw.trimmed();
        const QStringList bounds = item.split(QLatin1Char('-'));
        bool ok = bounds.size() <= 2;
        int low = 0;
        int high = 0;
        if (ok) {
            bool okHigh = true;
            low = bounds.first().toInt(&ok);
            high = bounds.size() == 2 ? bounds.last().toInt(&okHigh) : low;
            ok = ok && okHigh && low >= 0 && high >= 0 && !bounds.first().startsWith(QLatin1Char('+'))
                && !bounds.last().startsWith(QLatin1Char('+'));
        }
        if (!ok)
            return fail(QStringLiteral("\"%1\" in \"%2\" is not a CPU number or range (N or N-M)").arg(item, text));
        if (low > high)
            return fail(QStringLiteral("\"%1\" in \"%2\": the range runs backwards").arg(item, text));
        if (high > kMaxCpu)
            return fail(QStringLiteral("\"%1\" in \"%2\": no machine has CPU %3").arg(item, text).arg(high));
        for (int cpu = low; cpu <= high; ++cpu)
            cpus.insert(cpu);
    }
    return std::vector<int>(cpus.begin(), cpus.end());
}

QByteArray readAll(const QString &path)
{
    QFile file(path);
    // /proc and /sys files report size 0: read them whole, never by size.
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

std::vector<int> threadIds()
{
    std::vector<int> ids;
    const QStringList entries = QDir(QStringLiteral("/proc/self/task")).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    for (const QString &entry : entries) {
        bool ok = false;
        const int id = entry.toInt(&ok);
        if (ok)
            ids.push_back(id);
    }
    return ids;
}

} // namespace

std::optional<std::vector<int>> parseCpuList(const QString &text, QString *error)
{
    std::optional<std::vector<int>> cpus = parseRanges(text, error);
    if (!cpus)
        return std::nullopt;
    const std::vector<int> available = availableCpus();
    for (int cpu : *cpus) {
        if (!std::binary_search(available.begin(), available.end(), cpu)) {
            if (error)
                *error = QStringLiteral("CPU %1 in \"%2\" is not available to this process (available: %3)")
                             .arg(cpu)
                             .arg(text, formatCpuList(available));
            return std::nullopt;
        }
    }
    return cpus;
}

QString formatCpuList(const std::vector<int> &cpus)
{
    std::vector<int> sorted = cpus;
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    QStringList parts;
    for (size_t i = 0; i < sorted.size();) {
        size_t last = i;
        while (last + 1 < sorted.size() && sorted[last + 1] == sorted[last] + 1)
            ++last;
        parts << (last == i ? QString::number(sorted[i]) : QStringLiteral("%1-%2").arg(sorted[i]).arg(sorted[last]));
        i = last + 1;
    }
    return parts.join(QLatin1Char(','));
}

std::optional<ClientServerCpus> clientApartFromServers()
{
    const std::vector<int> cpus = availableCpus();
    if (cpus.size() < 2)
        return std::nullopt;
    return ClientServerCpus { { cpus.front() }, std::vector<int>(cpus.begin() + 1, cpus.end()) };
}

std::vector<int> availableCpus()
{
    std::vector<int> cpus;
    // Sized for many CPUs, and grown when the kernel says the mask is too small for its own.
    for (int count = 1024; count <= 8 * (kMaxCpu + 1); count *= 2) {
        cpu_set_t *set = CPU_ALLOC(count);
        const size_t size = CPU_ALLOC_SIZE(count);
        CPU_ZERO_S(size, set);
        const bool got = ::sched_getaffinity(0, size, set) == 0;
        const bool tooSmall = !got && errno == EINVAL;
        if (got) {
            for (int cpu = 0; cpu < count; ++cpu) {
                if (CPU_ISSET_S(cpu, size, set))
                    cpus.push_back(cpu);
            }
        }
        CPU_FREE(set);
        if (!tooSmall)
            break;
    }
    if (cpus.empty()) { // no affinity to read (not Linux?): every configured CPU
        const long configured = ::sysconf(_SC_NPROCESSORS_CONF);
        for (long cpu = 0; cpu < std::max(configured, 1L); ++cpu)
            cpus.push_back(static_cast<int>(cpu));
    }
    return cpus;
}

int usableCpuCount()
{
    return std::max(1, static_cast<int>(availableCpus().size()));
}

std::vector<unsigned long> cpuAffinityMask(const std::vector<int> &cpus)
{
    const int highest = cpus.empty() ? 0 : *std::max_element(cpus.begin(), cpus.end());
    std::vector<unsigned long> mask(static_cast<size_t>(highest / kBitsPerWord + 1), 0UL);
    for (int cpu : cpus) {
        if (cpu >= 0)
            mask[static_cast<size_t>(cpu / kBitsPerWord)] |= 1UL << (cpu % kBitsPerWord);
    }
    return mask;
}

bool pinCurrentProcess(const std::vector<int> &cpus, QString *error)
{
    auto fail = [&](const QString &why) {
        if (error)
            *error = why;
        return false;
    };
    if (cpus.empty())
        return fail(QStringLiteral("no CPUs to pin to"));
    std::vector<unsigned long> mask = cpuAffinityMask(cpus);
    const size_t bytes = mask.size() * sizeof(unsigned long);
    auto *set = reinterpret_cast<cpu_set_t *>(mask.data());
    // The calling thread first: threads it starts from now on inherit the mask.
    if (::sched_setaffinity(0, bytes, set) != 0)
        return fail(QStringLiteral("cannot pin to CPUs %1: %2")
                        .arg(formatCpuList(cpus), QString::fromLocal8Bit(std::strerror(errno))));
    // Threads that already run keep their own mask: pin each by id. One may start another while we go through
    // the list (with the old mask), so read it again until a pass finds no thread it has not pinned.
    std::set<int> pinned { static_cast<int>(::syscall(SYS_gettid)) };
    for (int pass = 0; pass < 10; ++pass) {
        bool fresh = false;
        for (int id : threadIds()) {
            if (!pinned.insert(id).second)
                continue;
            fresh = true;
            if (::sched_setaffinity(id, bytes, set) != 0 && errno != ESRCH) // ESRCH: it has just exited
                return fail(QStringLiteral("cannot pin thread %1 to CPUs %2: %3")
                                .arg(id)
                                .arg(formatCpuList(cpus), QString::fromLocal8Bit(std::strerror(errno))));
        }
        if (!fresh)
            return true;
    }
    return true;
}

QStringList machineNoiseWarnings(const QString &root)
{
    QStringList warnings;
    const QDir base(root);
    const QString cpuDir = base.filePath(QStringLiteral("sys/devices/system/cpu"));

    int cpuCount = 0;
    if (const auto online = parseRanges(QString::fromLatin1(readAll(cpuDir + QStringLiteral("/online"))), nullptr))
        cpuCount = static_cast<int>(online->size());
    if (cpuCount == 0)
        cpuCount = static_cast<int>(std::max(::sysconf(_SC_NPROCESSORS_ONLN), 1L));
    const QByteArray loadavg = readAll(base.filePath(QStringLiteral("proc/loadavg")));
    bool okLoad = false;
    const double load = loadavg.split(' ').value(0).toDouble(&okLoad);
    // Half the CPUs busy with something else leaves the client and server competing for the rest: run queues,
    // migrations and shared caches show up in the tail of the latency.
    const double threshold = 0.5 * cpuCount;
    if (okLoad && load > threshold)
        warnings << QStringLiteral("load average %1 over the last minute on %2 CPU%3 (above %4, half of them): other "
                                   "work is running; results will be noisier")
                        .arg(load, 0, 'f', 2)
                        .arg(cpuCount)
                        .arg(cpuCount == 1 ? QString() : QStringLiteral("s"))
                        .arg(threshold, 0, 'f', 1);

    QStringList governors;
    static const QRegularExpression cpuName(QStringLiteral("^cpu[0-9]+$"));
    const QStringList cpus = QDir(cpuDir).entryList({ QStringLiteral("cpu*") }, QDir::Dirs | QDir::NoDotAndDotDot);
    for (const QString &cpu : cpus) {
        if (!cpuName.match(cpu).hasMatch())
            continue;
        const QString path = cpuDir + QLatin1Char('/') + cpu + QStringLiteral("/cpufreq/scaling_governor");
        const QString governor = QString::fromLatin1(readAll(path)).trimmed();
        if (!governor.isEmpty() && governor != u"performance" && !governors.contains(governor))
            governors << governor;
    }
    if (!governors.isEmpty()) {
        QStringList quoted;
        for (const QString &governor : governors)
            quoted << QLatin1Char('\'') + governor + QLatin1Char('\'');
        warnings << QStringLiteral("%1 %2, not 'performance': frequency changes add noise")
                        .arg(governors.size() == 1 ? QStringLiteral("CPU governor is")
                                                   : QStringLiteral("CPU governors are"),
                            quoted.join(QStringLiteral(", ")));
    }
    return warnings;
}

} // namespace rpcscope
