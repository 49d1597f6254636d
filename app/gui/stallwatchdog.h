#pragma once

#include "metrics/latencyhistogram.h"
#include "metrics/runsnapshot.h"

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <QTimer>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace rpcscope {

/**
 * Measures how long the GUI thread fails to get back to its event loop, for the responsiveness benchmark
 * (tests/perf/gui_responsiveness.sh). Off unless asked for (--stall-report / RPCSCOPE_STALL_REPORT).
 *
 * Two probes, both living on the GUI thread's event loop:
 * - a precise timer every period: a firing later than one period after the previous one means the thread was
 *   busy (or not scheduled) for the difference; that difference is the stall recorded;
 * - a pinger thread that posts a queued call to the GUI thread, waits for it to run, sleeps one period, and
 *   records how long the call waited: a cross-check that also sees posted events queueing behind each other.
 *
 * Samples go into the session's histograms, and between beginWindow() and endWindow() also into the window's
 * (the benchmark's window is the run), with the GUI thread's CPU time over the window. Call both on the GUI thread.
 */
class StallWatchdog : public QObject {
    Q_OBJECT
public:
    explicit StallWatchdog(std::chrono::milliseconds period = std::chrono::milliseconds(5), QObject *parent = nullptr);
    ~StallWatchdog() override;

    void start();
    void stop();
    void beginWindow();
    void endWindow();

    /// `key=value` lines: stalls (ms) in the window and in the whole session; @p extra lines are appended as given.
    QString report(const QStringList &extra = {}) const;
    bool writeReport(const QString &path, const QStringList &extra, QString *error) const;
    /// `key=value` lines for a report's @p extra: the run's state, requests/s, calls, elapsed time, CPU per call.
    static QStringList runLines(const RunSnapshot &run);

private:
    struct Stalls {
        LatencyHistogram histogram;
        uint64_t over16ms = 0; // exact, not read off bucket edges
        uint64_t over50ms = 0;
        void record(uint64_t nanos);
    };
    struct Probe {
        Stalls window;
        Stalls session;
        void record(uint64_t nanos, bool inWindow)
        {
            session.record(nanos);
            if (inWindow)
                window.record(nanos);
        }
    };
    static void appendStalls(QStringList *lines, const QString &prefix, const Stalls &stalls);

    void tick();
    void pingLoop();
    void pong(std::chrono::steady_clock::time_point sent);

    const std::chrono::milliseconds m_period;
    QTimer m_timer;
    QElapsedTimer m_clock;
    qint64 m_lastTickNs = -1;
    bool m_inWindow = false;
    QElapsedTimer m_windowClock;
    qint64 m_windowNs = 0;
    // CPU time of the GUI thread (begin/endWindow run on it), to tell painting's cost apart from waiting for a core.
    int64_t m_windowCpuStartNs = 0;
    int64_t m_windowCpuNs = 0;
    Probe m_timerStalls;
    Probe m_pingLatency; // touched on the GUI thread only, like m_timerStalls

    std::thread m_pinger;
    std::mutex m_mutex;
    std::condition_variable m_wake;
    bool m_stopping = false; // guarded by m_mutex
    bool m_answered = false; // guarded by m_mutex
};

} // namespace rpcscope
