#pragma once

#include <QHash>
#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <optional>
#include <vector>

namespace rpcscope {

/// Folded stacks: "root;caller;leaf" -> weight. The frames are root first, separated by ';' (Brendan Gregg's
/// FlameGraph format, "frame;frame;frame COUNT" a line).
using FoldedStacks = QHash<QString, double>;

/**
 * What a profiler saw of one process while the load ran (a server process, or rpcscope's own client). Weights are
 * in units of cpuNsPerUnit nanoseconds of CPU: perf's sampling period for perf, 1000 (microseconds of thread CPU)
 * for rpcscope's Python sampler. A profiler whose unit is unknown (a user's command writing sample counts) sets
 * cpuNsPerUnit to 0; then the weights are scaled so that they add up to measuredCpuNs.
 */
struct ProcessProfile {
    qint64 pid = 0;
    QString command; ///< what the process was (its comm or command line), for the reader
    FoldedStacks stacks;
    double calls = 0; ///< OK calls made while this process was sampled (for a server: the calls it served)
    double cpuNsPerUnit = 0; ///< ns of CPU one unit of weight stands for; 0 = unknown
    double measuredCpuNs = -1; ///< the process's CPU over the same window, measured from outside; -1 = unknown

    double totalUnits() const;
    /// ns of CPU a unit stands for here: cpuNsPerUnit, or measuredCpuNs / totalUnits() when that is unknown; 0
    /// when neither is known.
    double nsPerUnit() const;
    /// Weight @p units as CPU microseconds per call (0 when there were no calls or the unit is unknown).
    double usPerCall(double units) const;
};

/// A run's profile of one side (the server's processes, or the client's own process).
struct Profile {
    QString scope; ///< "server" or "client"
    QString profiler; ///< "perf", "python" or "command"
    QString how; ///< how it was recorded, for the reader: "perf record -a ... filtered to the server's processes"
    std::vector<ProcessProfile> processes;
    double profilerCpuSeconds = -1; ///< the profiler's own CPU while it ran; -1 = not measured
    QStringList notes; ///< what went wrong or was worked around, one sentence each
    /// perf's recording, kept for hotspot (--profile-keep; isKeptPerfData() says whether it may be opened); empty
    /// when not kept.
    QString perfData;

    bool isEmpty() const; ///< no process has a stack
    double calls() const; ///< the processes' calls added up
    /// The samples behind it, left-out ones not counted: perf's and rpcscope's Python sampler's weights count
    /// samples. -1 when they are not known (a profiler command's weights are of its own unit).
    double samples() const;
    /// Every process's stacks in CPU microseconds per call: each process's weights as ns, added up, divided by
    /// calls(). A server's processes share the calls, so this is the server's CPU per call.
    FoldedStacks usPerCall() const;
    /// The CPU microseconds per call of all stacks (the sum of usPerCall()).
    double totalUsPerCall() const;
};

/// Unknown weights are left out, not written as zero: profilerCpuSeconds and measuredCpuNs when -1.
QJsonObject profileToJson(const Profile &profile);
/// @p where names the place in the file for an error ("run 12's server profile: process 2 has no calls"; processes
/// are counted from 1). Unknown members are ignored, so that a later version's file still reads.
std::optional<Profile> profileFromJson(const QJsonObject &json, const QString &where, QString *error);

/**
 * Reads folded text ("frame;frame;frame COUNT" a line; the count may have a fraction; empty lines and lines
 * starting with '#' are skipped) into @p stacks, adding to what is there. False with an error naming
 * @p source and the line ("server.folded:12: no count after the stack").
 */
bool parseFolded(const QString &text, const QString &source, FoldedStacks *stacks, QString *error);
/// Folded text, one stack a line, heaviest first, weights rounded to integers (as FlameGraph's tools read them).
QString toFolded(const FoldedStacks &stacks);
/// @p stacks in CPU nanoseconds per call (us x 1000) as folded text: what `-O folded` writes.
QString toFoldedNsPerCall(const FoldedStacks &usPerCallStacks);

/// One function's cost: self = in stacks where it is the leaf; total = in stacks where it appears (once a stack
/// even when it recurses).
struct FunctionCost {
    QString name;
    double self = 0;
    double total = 0;
};
/// The functions of @p stacks, by self weight (heaviest first; ties by name).
std::vector<FunctionCost> functionCosts(const FoldedStacks &stacks);

/// An interval of B - A.
struct DiffInterval {
    double low = 0;
    double high = 0;
    bool excludesZero() const { return low > 0 || high < 0; }
};

/// How one function's CPU per call changed from A to B.
struct FunctionChange {
    QString name;
    double selfA = 0; ///< us per call
    double selfB = 0;
    double totalA = 0;
    double totalB = 0;
    DiffInterval selfDiff; ///< us per call, B - A, at the diff's confidence (adjusted for the functions compared)
    DiffInterval totalDiff;
    /// B's change in this function is beyond noise: its self or total interval excludes zero and the change is
    /// at least ProfileDiff::minChangeUs.
    bool changed = false;
    /// Changed, but most of its total change (80% or more) is one callee's: a caller of the function to blame.
    bool explainedByCallee = false;
    double selfChange() const { return selfB - selfA; }
    double totalChange() const { return totalB - totalA; }
};

/**
 * B's profile against A's: per function, CPU us per call A and B, and whether the change is beyond noise.
 *
 * The replicate is the process, as for the verdict: with two or more processes a side, each process's us per call
 * is one value and the interval is Welch's over them (its variance never taken below the sampling noise's). With
 * one process on a side, only sampling noise can be judged: sample counts are Poisson, so a weight of n units has
 * variance n x unit^2; the method then says so. Intervals are Bonferroni-adjusted for the number of functions
 * compared, so that an A/A comparison rarely flags any function.
 *
 * The intervals are around the changes of the side's estimates (Profile::usPerCall(): all processes' CPU over all
 * their calls), with the variance of that estimate: the spread of the processes' values weighted by their shares
 * of the calls (s^2 / k when the shares are equal).
 */
struct ProfileDiff {
    /// The changed ones first: those whose change is their own (not explainedByCallee) by |total change|, then their
    /// callers; then the rest by |self change|.
    std::vector<FunctionChange> functions;
    double totalA = 0; ///< CPU us per call, all stacks
    double totalB = 0;
    DiffInterval totalDiff;
    int processesA = 0; ///< the replicates: processes with calls and a known unit
    int processesB = 0;
    double confidence = 0.95;
    double minChangeUs = 0; ///< smaller changes are never flagged (a share of A's total, see diffProfiles)
    /// "per server process (3 a side)", "per server process (3 and 4)", "sampling noise only (one process a side)",
    /// "sampling noise only (1 and 3 processes)", or "not judged (no profiled calls in A)" (then nothing is flagged).
    QString method;

    /// The changed functions, biggest self change first (at most @p count): the order of `functions`, so one that
    /// changed only in total (a caller of a changed function) comes after those whose own change is bigger.
    std::vector<FunctionChange> topChanges(int count) const;
    /// The changed functions whose change is their own (not explainedByCallee), in the same order, at most @p count:
    /// what a sentence names ("B spends +38.7 us per call more in burnCpu"), without the callers that only pass the
    /// change on. When every changed function is a caller (a change spread over many callees), topChanges().
    std::vector<FunctionChange> ownChanges(int count) const;
};

/// @p minShare: a function's change must be at least this share of A's total CPU per call to be flagged.
ProfileDiff diffProfiles(const Profile &a, const Profile &b, double confidence = 0.95, double minShare = 0.01);

/**
 * A flame graph's node: a frame under its callers. For a plain flame graph, total and self are in the graph's
 * unit; for a differential one they are B's, baseTotal and baseSelf A's, and change says how the function of this
 * frame was judged (ProfileDiff): +1 slower in B, -1 faster, 0 within noise.
 */
struct FlameNode {
    QString name;
    double total = 0;
    double self = 0;
    double baseTotal = 0;
    double baseSelf = 0;
    int change = 0;
    std::vector<FlameNode> children; ///< heaviest first
};
/// The tree of @p stacks under a root named @p rootName (its total: all stacks').
FlameNode buildFlameTree(const FoldedStacks &stacks, const QString &rootName);
/// The differential tree: frames of both, widths B's, base A's, change from @p diff's functions by name (the sign
/// of the self change when that is the one beyond noise, else of the total change). The root's change is that of
/// all stacks (diff.totalDiff). A frame only A has is kept, with B's total 0.
FlameNode buildDiffFlameTree(
    const FoldedStacks &a, const FoldedStacks &b, const ProfileDiff &diff, const QString &rootName);

} // namespace rpcscope
