// What reading a client command's reports costs rpcscope (issue 36's target: under 1 us a call), against a floor
// measured in the same run: the same bytes read from the same kind of pipe with their lines counted and nothing
// parsed. A real process (`sh -c 'echo READY; read l; cat FILE'`) prints N protocol lines as a client that only reports
// would; ClientCommandRunner::runBlock reads, parses and records them on this thread, whose CPU clock is the measure.
//
//   clientprotocol_bench [CALLS]      (default 2000000; tests/perf/client_protocol_overhead.sh runs it)
#include "client/clientcommand.h"

#include <QCoreApplication>
#include <QFile>
#include <QTemporaryDir>

#include <cstdio>
#include <ctime>

#include <fcntl.h>
#include <unistd.h>

using namespace rpcscope;

namespace {

double threadCpuSeconds()
{
    timespec t {};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

/// The floor: the file's bytes through a pipe from cat, newlines counted, on this thread.
double floorSeconds(const QString &path, uint64_t *lines)
{
    int pipes[2];
    if (::pipe(pipes) != 0)
        return -1;
    const pid_t child = ::fork();
    if (child == 0) {
        ::dup2(pipes[1], STDOUT_FILENO);
        ::close(pipes[0]);
        ::execlp("cat", "cat", QFile::encodeName(path).constData(), static_cast<char *>(nullptr));
        ::_exit(127);
    }
    ::close(pipes[1]);
    const double before = threadCpuSeconds();
    char buffer[65536];
    ssize_t got;
    *lines = 0;
    while ((got = ::read(pipes[0], buffer, sizeof buffer)) > 0) {
        for (ssize_t i = 0; i < got; ++i)
            *lines += buffer[i] == '\n' ? 1 : 0;
    }
    const double spent = threadCpuSeconds() - before;
    ::close(pipes[0]);
    return spent;
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    const uint64_t calls = argc > 1 ? QByteArray(argv[1]).toULongLong() : 2000000;
    if (calls == 0) {
        std::fprintf(stderr, "clientprotocol_bench: CALLS must be a number above 0\n");
        return 2;
    }
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("reports.jsonl"));
    {
        QFile file(path);
        if (!file.open(QIODevice::WriteOnly))
            return 2;
        // Lines as the example clients write them, with latencies that vary (a histogram sees many values).
        QByteArray chunk;
        for (uint64_t i = 0; i < calls; ++i) {
            chunk += "{\"latency_ns\": " + QByteArray::number(40000 + (i * 7919) % 30000)
                + ", \"ok\": true, \"bytes_sent\": 7, \"bytes_received\": 7}\n";
            if (chunk.size() > (1 << 20)) {
                file.write(chunk);
                chunk.clear();
            }
        }
        chunk += "{\"done\": 1}\n";
        file.write(chunk);
    }
    uint64_t floorLines = 0;
    const double floor = floorSeconds(path, &floorLines);

    ClientCommand command;
    command.command = QStringLiteral("sh -c 'echo \"{\\\"ready\\\": true}\"; read l; exec cat %1'").arg(path);
    ClientCommandRunner runner;
    QString error;
    if (!runner.start(command, QStringLiteral("127.0.0.1:1"), &error)) {
        std::fprintf(stderr, "clientprotocol_bench: %s\n", qPrintable(error));
        return 3;
    }
    ClientBlock block;
    block.calls = calls;
    RunSnapshot snapshot;
    const double before = threadCpuSeconds();
    const bool ok = runner.runBlock(block, &snapshot, &error);
    const double spent = threadCpuSeconds() - before;
    runner.stop();
    if (!ok || snapshot.latency.count() != calls) {
        std::fprintf(stderr, "clientprotocol_bench: %s\n", ok ? "not every call was counted" : qPrintable(error));
        return 1;
    }
    const double perCall = spent / static_cast<double>(calls) * 1e9;
    const double floorPerLine = floor / static_cast<double>(floorLines) * 1e9;
    std::printf("client protocol: %llu reports read and recorded in %.3f s of rpcscope's CPU: %.0f ns a call "
                "(target: under 1000 ns)\n",
        static_cast<unsigned long long>(calls), spent, perCall);
    std::printf("floor: the same bytes through a pipe, lines counted: %.0f ns a line; protocol / floor %.1fx\n",
        floorPerLine, perCall / floorPerLine);
    std::printf("%s\n", perCall < 1000 ? "MET" : "MISSED");
    return 0;
}
