#pragma once

#include "profile/profile.h"

#include <QString>

namespace rpcscope {

/**
 * A profile for the terminal: how it was recorded, the CPU per call it saw, and the @p top functions by self time
 * per call, each with its total and its share of the CPU:
 *
 *     Server profile: 52.3 us CPU per call over 20000 calls, 1 process (perf record ...)
 *       self us/call  total us/call  share  function
 *             40.1           40.6    76.7%  rpcscope::burnCpu(...)
 */
QString formatProfileSummary(const Profile &profile, int top = 10);

/**
 * Where B's extra time went: the changed functions (at most @p top), B - A in us per call with the interval, or
 * a line saying that no function changed beyond noise; the method the intervals came from.
 */
QString formatProfileChanges(const ProfileDiff &diff, const QString &scope, int top = 5);

/// CPU microseconds per call as every view of a profile writes them: no decimals from 100, one below ("40.1"), and
/// with @p fine two below 1 ("0.42"); a "+" before a change that is not negative when @p sign.
QString formatUsPerCall(double value, bool sign = false, bool fine = false);

/// The profiler's own CPU while it recorded, "4.21 ms (0.42 us per call)", the per-call figure set beside the
/// profile's; empty when it was not measured (an imported profile, a profiler rpcscope did not start).
QString profilerCpuText(const Profile &profile);

/// How many samples @p profile stands on, "312 samples", and when they are few (under 200) what that means: "37
/// samples (few: the figures per function are rough; a longer run gives more)". Empty when not known (a profiler
/// command's weights).
QString profileSamplesText(const Profile &profile);

/// Why @p profile has no samples when a profiler ran and none of its notes says why: "the run used less CPU than one
/// sample takes (one per 10 ms of CPU): run more calls, or sample more often (--profile-period)". Empty otherwise.
QString noSamplesHint(const Profile &profile);

/// How @p change was judged, in words: "within noise", "slower in B", "faster in B", with " (a callee's change)"
/// for a caller that only passes a callee's change on; @p newName names B.
QString profileChangeVerdict(const FunctionChange &change, const QString &newName = QStringLiteral("B"));

/// Whether @p change is told by its total (the function with what it calls), as the CLI, the reports and the GUI tell
/// it: when the total was judged beyond noise, or the self was not either; else by its self.
bool changeToldByTotal(const FunctionChange &change);

/// "B spends +38.7 us per call more in `burnCpu` (95% CI +35.0 .. +42.4)": one change for a slide or a report.
/// @p newName names B in it.
QString profileChangeSentence(
    const FunctionChange &change, double confidence, const QString &newName = QStringLiteral("B"));

} // namespace rpcscope
