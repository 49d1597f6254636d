#pragma once

#include "profile/profile.h"

#include <QByteArray>
#include <QHash>
#include <QSet>
#include <QString>

#include <functional>
#include <limits>

namespace rpcscope {

/**
 * Folds the text of `perf script -F comm,pid,tid[,time],period,ip,sym,dso` (with call graphs: a header line "COMM
 * PID/TID [SECONDS.NANOSECONDS:] PERIOD", then one frame a line, leaf first, "ADDRESS SYMBOL (DSO)", then an empty
 * line) into folded stacks per process, weighted by the samples' periods (ns of CPU for cpu-clock). Fed line by line,
 * so that a long recording is never held whole.
 *
 * Frames: "[unknown]" symbols are named by their DSO's file name ("[libgrpc.so.29]"); kernel frames get "_[k]"
 * appended (as FlameGraph's stackcollapse does); ';' inside a name becomes ':'. A comm with spaces is kept whole.
 */
class PerfScriptFolder {
public:
    /// Keep only these processes (empty = all).
    void setPids(const QSet<qint64> &pids) { m_pids = pids; }
    static constexpr int Skip = std::numeric_limits<int>::min();
    /// Sort the samples by what @p classify says of their process and time (ns, -1 when perf script printed no
    /// time): a key of keyedStacks(), or Skip to drop the sample. With a classifier, stacks() stays empty.
    void setClassifier(std::function<int(qint64 pid, qint64 timeNs)> classify) { m_classifier = std::move(classify); }
    /// key -> folded stacks, weights in ns of CPU, when a classifier is set.
    const QHash<int, FoldedStacks> &keyedStacks() const { return m_keyed; }
    /// One line of perf script's output, without its line end.
    void addLine(QByteArrayView line);
    /// Ends the last sample (call after the last line).
    void finish();

    /// pid -> folded stacks, weights in ns of CPU (the samples' periods).
    const QHash<qint64, FoldedStacks> &stacks() const { return m_stacks; }
    /// pid -> the comm of its first sample
    const QHash<qint64, QString> &comms() const { return m_comms; }
    qint64 samples() const { return m_samples; } ///< samples kept
    qint64 samplesSeen() const { return m_seen; } ///< samples read, kept or not
    /// Lines that could not be read (a header without pid/tid or period), with the first one's number and text.
    int badLines() const { return m_badLines; }
    QString firstBadLine() const { return m_firstBad; }

private:
    void endSample();

    QSet<qint64> m_pids;
    std::function<int(qint64, qint64)> m_classifier;
    QHash<int, FoldedStacks> m_keyed;
    QHash<qint64, FoldedStacks> m_stacks;
    QHash<qint64, QString> m_comms;
    qint64 m_samples = 0;
    qint64 m_seen = 0;
    int m_line = 0;
    int m_badLines = 0;
    QString m_firstBad;
    // the sample being read
    bool m_inSample = false;
    qint64 m_pid = 0;
    qint64 m_timeNs = -1;
    double m_period = 0;
    QString m_comm;
    QStringList m_frames; ///< leaf first
};

/**
 * A sample perf took while interrupts were off at a context switch, delivered to the task switched in when they came
 * back on: its leaf (the last frame of @p stack, folded root first) is finish_task_switch. Without hardware counters
 * (cpu-clock, a timer), a CPU that idled until a server thread woke hands that thread the samples of its idle time:
 * in a loop burning 40 us between sleeps, 22% of its samples landed there, and without them its samples' shares
 * matched its thread CPU clock (0.857 and 0.862).
 */
bool isDeferredToSwitch(const QString &stack);

} // namespace rpcscope
