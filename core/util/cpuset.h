#pragma once

#include <QString>
#include <QStringList>

#include <optional>
#include <vector>

namespace rpcscope {

/**
 * Parses a CPU list as taskset -c and /sys/devices/system/cpu/online write it: "0", "0,2", "1-3", "0,2-3".
 * Returns the CPUs sorted, each once. std::nullopt with @p error naming the bad part: an item that is neither N
 * nor N-M, a range that runs backwards, or a CPU this process may not run on (not in availableCpus()).
 */
std::optional<std::vector<int>> parseCpuList(const QString &text, QString *error);

/// "0,2-3": the inverse of parseCpuList(), ranges where CPUs follow each other; empty for no CPUs.
QString formatCpuList(const std::vector<int> &cpus);

/// The CPUs this process may run on (its affinity mask, which a container's cpuset also narrows), sorted.
std::vector<int> availableCpus();

/**
 * How many CPUs this process may run on (availableCpus()), at least 1: the default thread count of work that keeps
 * each CPU busy once. std::thread::hardware_concurrency() counts the machine's CPUs, including those a taskset or a
 * container's cpuset keeps this process off: a server pinned to one CPU then ran two serving threads on it.
 */
int usableCpuCount();

/// Where to pin a client and the servers it starts apart (see clientApartFromServers()).
struct ClientServerCpus {
    std::vector<int> client;
    std::vector<int> servers;
};

/**
 * The client on the first CPU this process may use and the servers on the others; std::nullopt with fewer than
 * two. What ab --until-decided (CLI and GUI) pins when it starts both servers and is not told otherwise.
 */
std::optional<ClientServerCpus> clientApartFromServers();

/**
 * The kernel's CPU bit mask for @p cpus, laid out as cpu_set_t is (an array of unsigned long), sized for the
 * highest CPU: pass data() and size() * sizeof(unsigned long) to sched_setaffinity. Built before a fork() so the
 * child only makes the system call.
 */
std::vector<unsigned long> cpuAffinityMask(const std::vector<int> &cpus);

/**
 * Pins every thread of this process to @p cpus. sched_setaffinity(0) pins only the calling thread (threads that
 * exist keep their mask; threads started later inherit their creator's), so each thread in /proc/self/task is
 * pinned by its id, and the list is read again until no new thread shows up. Call it before the threads that do
 * the work start (the CLI does it just before the load engine starts), so they inherit the mask. Children
 * started afterwards inherit it too: start servers that must not share the client's CPUs first.
 * False with @p error when a thread could not be pinned.
 */
bool pinCurrentProcess(const std::vector<int> &cpus, QString *error);

/**
 * Why results measured on this machine now may be noisier than they should be, one sentence each: a 1-minute
 * load average above half the online CPUs (other work competes for them), and CPU frequency governors other than
 * "performance" (the clock changes under the benchmark). Files that do not exist give no warning. @p root
 * replaces "/" in front of /proc/loadavg and /sys/devices/system/cpu/..., for tests.
 */
QStringList machineNoiseWarnings(const QString &root = QStringLiteral("/"));

} // namespace rpcscope
