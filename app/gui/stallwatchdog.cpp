#include "stallwatchdog.h"

#include <QSaveFile>

#include <ctime>

namespace rpcscope {

namespace {
constexpr uint64_t kNsPerMs = 1'000'000;

QString ms(uint64_t nanos)
{
    return QString::number(static_cast<double>(nanos) / 1e6, 'f', 2);
}

int64_t threadCpuNs()
{
    timespec t {};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}
} // namespace

void StallWatchdog::Stalls::record(uint64_t nanos)
{
    histogram.record(nanos);
    over16ms += nanos > 16 * kNsPerMs ? 1 : 0;
    over50ms += nanos > 50 * kNsPerMs ? 1 : 0;
}

StallWatchdog::StallWatchdog(std::chrono::milliseconds period, QObject *parent) : QObject(parent), m_period(period)
{
    // A coarse timer may be moved by up to 5% to batch wake-ups, which would read as stalls.
    m_timer.setTimerType(Qt::PreciseTimer);
    m_timer.setInterval(period);
    connect(&m_timer, &QTimer::timeout, this, &StallWatchdog::tick);
}

StallWatchdog::~StallWatchdog()
{
    stop();
}

void StallWatchdog::start()
{
    if (m_timer.isActive())
        return;
    m_clock.start();
    m_lastTickNs = -1; // the first firing has no predecessor: whatever ran before start() is not the loop's fault
    m_timer.start();
    {
        const std::lock_guard lock(m_mutex);
        m_stopping = false;
    }
    m_pinger = std::thread([this] { pingLoop(); });
}

void StallWatchdog::stop()
{
    m_timer.stop();
    {
        const std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_wake.notify_all();
    if (m_pinger.joinable())
        m_pinger.join();
}

void StallWatchdog::beginWindow()
{
    m_timerStalls.window = {};
    m_pingLatency.window = {};
    m_windowClock.start();
    m_windowCpuStartNs = threadCpuNs();
    m_inWindow = true;
}

void StallWatchdog::endWindow()
{
    if (!m_inWindow)
        return;
    m_windowNs = m_windowClock.nsecsElapsed();
    m_windowCpuNs = threadCpuNs() - m_windowCpuStartNs;
    m_inWindow = false;
}

void StallWatchdog::tick()
{
    const qint64 now = m_clock.nsecsElapsed();
    if (m_lastTickNs >= 0) {
        const qint64 stall = now - m_lastTickNs - std::chrono::nanoseconds(m_period).count();
        // Firing a little early after a late one is Qt keeping the period on schedule, not negative stall.
        m_timerStalls.record(stall > 0 ? static_cast<uint64_t>(stall) : 0, m_inWindow);
    }
    m_lastTickNs = now;
}

void StallWatchdog::pingLoop()
{
    // One ping in flight at a time, so a long stall is one sample of its length rather than a queue of pings
    // that each report part of it (the timer probe counts it the same way).
    std::unique_lock lock(m_mutex);
    while (!m_stopping) {
        m_answered = false;
        const auto sent = std::chrono::steady_clock::now();
        QMetaObject::invokeMethod(
            this, [this, sent] { pong(sent); }, Qt::QueuedConnection);
        m_wake.wait(lock, [this] { return m_answered || m_stopping; });
        m_wake.wait_for(lock, m_period, [this] { return m_stopping; });
    }
}

void StallWatchdog::pong(std::chrono::steady_clock::time_point sent)
{
    const auto waited = std::chrono::steady_clock::now() - sent;
    {
        const std::lock_guard lock(m_mutex);
        if (m_stopping)
            return; // a ping posted just before stop(); its pinger is gone
        m_answered = true;
    }
    m_wake.notify_all();
    m_pingLatency.record(static_cast<uint64_t>(std::chrono::nanoseconds(waited).count()), m_inWindow);
}

void StallWatchdog::appendStalls(QStringList *lines, const QString &prefix, const Stalls &stalls)
{
    const LatencyHistogram &h = stalls.histogram;
    *lines << prefix + QStringLiteral("max_ms=") + ms(h.max())
           << prefix + QStringLiteral("p99_ms=") + ms(h.percentile(99))
           << prefix + QStringLiteral("mean_ms=") + QString::number(h.mean() / 1e6, 'f', 3)
           << prefix + QStringLiteral("over_16ms=") + QString::number(stalls.over16ms)
           << prefix + QStringLiteral("over_50ms=") + QString::number(stalls.over50ms)
           << prefix + QStringLiteral("samples=") + QString::number(h.count());
}

QString StallWatchdog::report(const QStringList &extra) const
{
    QStringList lines;
    lines << QStringLiteral("period_ms=") + QString::number(m_period.count());
    const qint64 windowNs = m_inWindow ? m_windowClock.nsecsElapsed() : m_windowNs;
    const int64_t cpuNs = m_inWindow ? threadCpuNs() - m_windowCpuStartNs : m_windowCpuNs;
    lines << QStringLiteral("window_s=") + QString::number(static_cast<double>(windowNs) / 1e9, 'f', 3);
    // Includes the probes' own wake-ups (a few hundred a second).
    lines << QStringLiteral("gui_thread_cpu_s=") + QString::number(static_cast<double>(cpuNs) / 1e9, 'f', 3);
    lines << QStringLiteral("gui_thread_cpu_percent=")
            + QString::number(
                windowNs > 0 ? 100.0 * static_cast<double>(cpuNs) / static_cast<double>(windowNs) : 0.0, 'f', 1);
    appendStalls(&lines, QStringLiteral("stall_"), m_timerStalls.window);
    appendStalls(&lines, QStringLiteral("ping_"), m_pingLatency.window);
    appendStalls(&lines, QStringLiteral("session_stall_"), m_timerStalls.session);
    appendStalls(&lines, QStringLiteral("session_ping_"), m_pingLatency.session);
    lines << extra;
    return lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

bool StallWatchdog::writeReport(const QString &path, const QStringList &extra, QString *error) const
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Text) || file.write(report(extra).toUtf8()) < 0
        || !file.commit()) {
        if (error)
            *error = file.errorString();
        return false;
    }
    return true;
}

QStringList StallWatchdog::runLines(const RunSnapshot &run)
{
    return {
        QStringLiteral("run_state=") + runStateName(run.state),
        QStringLiteral("requests_per_s=") + QString::number(run.requestsPerSecond(), 'f', 1),
        QStringLiteral("calls=") + QString::number(run.callsCompleted()),
        QStringLiteral("failed=") + QString::number(run.callsFailed()),
        QStringLiteral("elapsed_s=") + QString::number(std::chrono::duration<double>(run.elapsed).count(), 'f', 3),
        // The whole process's CPU: the engine's and the GUI thread's painting together.
        QStringLiteral("client_cpu_us_per_call=") + QString::number(run.clientCpuPerCallUs(), 'f', 2),
        QStringLiteral("server_cpu_us_per_call=") + QString::number(run.serverCpuPerCallUs(), 'f', 2),
    };
}

} // namespace rpcscope
