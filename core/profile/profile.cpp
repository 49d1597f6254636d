#include "profile.h"

#include "compare/replicatetest.h"

#include <QJsonArray>
#include <QJsonValue>

#include <algorithm>
#include <cmath>
#include <limits>

namespace rpcscope {

namespace {

// A weight as folded text writes it: an integer when it is whole, else enough digits to read back the same double.
QString weightText(double weight)
{
    if (weight == std::floor(weight) && std::fabs(weight) < 9007199254740992.0) // 2^53: exact as an integer
        return QString::number(static_cast<qint64>(weight));
    return QString::number(weight, 'g', 17);
}

// The stacks heaviest first, ties by stack text: a stable order for files and for the reader.
std::vector<std::pair<QString, double>> sortedStacks(const FoldedStacks &stacks)
{
    std::vector<std::pair<QString, double>> out;
    out.reserve(stacks.size());
    for (auto it = stacks.cbegin(); it != stacks.cend(); ++it)
        out.emplace_back(it.key(), it.value());
    std::sort(out.begin(), out.end(), [](const auto &x, const auto &y) {
        if (x.second != y.second)
            return x.second > y.second;
        return x.first < y.first;
    });
    return out;
}

// A stack as one line of folded text: a line end inside a frame would end the line early.
QString oneLine(const QString &stack)
{
    if (!stack.contains(QLatin1Char('\n')) && !stack.contains(QLatin1Char('\r')))
        return stack;
    QString copy = stack;
    copy.replace(QLatin1Char('\n'), QLatin1Char(' ')).replace(QLatin1Char('\r'), QLatin1Char(' '));
    return copy;
}

// Folded text with the weights kept exactly (for the JSON file, not for FlameGraph's tools).
QString toExactFolded(const FoldedStacks &stacks)
{
    QString out;
    for (const auto &[stack, weight] : sortedStacks(stacks))
        out += oneLine(stack) + QLatin1Char(' ') + weightText(weight) + QLatin1Char('\n');
    return out;
}

struct Cost {
    double self = 0;
    double total = 0;
};
using CostMap = QHash<QString, Cost>;

// Self and total weight of every function of @p stacks; a function recursing in a stack counts once in its total.
CostMap costMap(const FoldedStacks &stacks)
{
    CostMap costs;
    std::vector<QStringView> frames;
    for (auto it = stacks.cbegin(); it != stacks.cend(); ++it) {
        const double weight = it.value();
        frames.clear();
        for (QStringView frame : QStringView(it.key()).tokenize(u';'))
            frames.push_back(frame);
        if (frames.empty())
            continue;
        costs[frames.back().toString()].self += weight;
        std::sort(frames.begin(), frames.end());
        frames.erase(std::unique(frames.begin(), frames.end()), frames.end());
        for (QStringView frame : frames)
            costs[frame.toString()].total += weight;
    }
    return costs;
}

// The p quantile of the standard normal distribution, by bisection of its CDF (monotone; exact enough here).
double normalQuantile(double p)
{
    double lo = -40;
    double hi = 40;
    for (int i = 0; i < 200 && hi - lo > 1e-12; ++i) {
        const double mid = (lo + hi) / 2;
        if (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}

// A side's variance of its estimate of one weight: see DiffSide::variance.
struct SideVariance {
    double sampling = 0;
    double spread = 0; ///< the processes' own differences beyond the sampling noise

    double value() const { return sampling + spread; }
};

/// Processes of one program differ beyond sampling noise (memory layout, caches, a core's other load): a process's
/// CPU per call in a function is taken to vary by at least this much (relative standard deviation) from process to
/// process, also where too few processes ran to see it.
constexpr double kProcessNoiseFloor = 0.03;

// One side of a diff, as the interval needs it.
struct DiffSide {
    struct Process {
        CostMap units; ///< the functions' weights in this process's units
        double totalUnits = 0;
        double nsPerUnit = 0;
        double calls = 0;
        bool replicate = false; ///< it served calls: its own us per call is one value of the side
        double factor = 1; ///< its CPU per call against the side's mean: what all its functions share
        double value(double units) const { return units * nsPerUnit / 1000.0 / calls; }
    };
    std::vector<Process> processes; ///< those whose unit is known: the ones the side's estimate adds up
    int replicates = 0;
    double replicateCalls = 0;
    double calls = 0; ///< the estimate's divisor: Profile::calls()
    CostMap usPerCall; ///< the side's estimate, from Profile::usPerCall()
    double totalUsPerCall = 0;
    double processNoise = 0; ///< relative variance of a process's value beyond sampling (estimateProcessNoise())
    double commonNoise = 0; ///< relative variance of the processes' totals beyond sampling: what they all share

    explicit DiffSide(const Profile &profile) : calls(profile.calls())
    {
        for (const ProcessProfile &process : profile.processes) {
            Process p;
            p.nsPerUnit = process.nsPerUnit();
            if (!(p.nsPerUnit > 0))
                continue;
            p.units = costMap(process.stacks);
            p.totalUnits = process.totalUnits();
            p.calls = process.calls;
            p.replicate = process.calls > 0;
            if (p.replicate) {
                ++replicates;
                replicateCalls += p.calls;
            }
            processes.push_back(std::move(p));
        }
        const FoldedStacks stacks = profile.usPerCall();
        usPerCall = costMap(stacks);
        for (double us : stacks)
            totalUsPerCall += us;
        commonNoise = estimateCommonNoise();
        processNoise = estimateProcessNoise();
    }

    /// The processes' factors (Process::factor) and how much their totals differ beyond sampling noise.
    double estimateCommonNoise()
    {
        if (replicates < 2)
            return 0;
        double mean = 0;
        double poisson = 0;
        for (const Process &p : processes) {
            if (p.replicate) {
                mean += p.value(p.totalUnits);
                poisson += p.totalUnits * p.value(1) * p.value(1);
            }
        }
        mean /= replicates;
        poisson /= replicates;
        if (!(mean > 0))
            return 0;
        double squares = 0;
        for (Process &p : processes) {
            if (!p.replicate)
                continue;
            p.factor = p.value(p.totalUnits) / mean;
            squares += (p.value(p.totalUnits) - mean) * (p.value(p.totalUnits) - mean);
        }
        return std::max(0.0, (squares / (replicates - 1) - poisson) / (mean * mean));
    }

    /**
     * How much this side's processes differ from each other beyond sampling noise, as a relative variance of a
     * process's us per call in a function: pooled over the functions with enough samples (each weighed by its
     * cost), never below kProcessNoiseFloor squared. Pooled because a handful of processes cannot tell each
     * function's own spread: with two or three a side, a per-function Welch interval at a Bonferroni-adjusted
     * confidence is too wide to find anything.
     */
    double estimateProcessNoise() const
    {
        double floor = kProcessNoiseFloor * kProcessNoiseFloor;
        if (replicates < 2)
            return floor;
        QSet<QString> names;
        for (const Process &p : processes)
            for (auto it = p.units.cbegin(); it != p.units.cend(); ++it)
                names.insert(it.key());
        double weighted = 0;
        double weights = 0;
        for (const QString &name : std::as_const(names)) {
            double mean = 0;
            double poisson = 0;
            double units = 0;
            for (const Process &p : processes) {
                if (!p.replicate)
                    continue;
                const double n = p.units.value(name).self;
                const double unitUs = p.nsPerUnit / 1000.0 / p.calls;
                mean += n * unitUs;
                poisson += n * unitUs * unitUs;
                units += n;
            }
            mean /= replicates;
            poisson /= replicates;
            if (units / replicates < 50 || !(mean > 0))
                continue; // too few samples to tell a process's own difference from sampling noise
            double squares = 0;
            for (const Process &p : processes) {
                if (!p.replicate)
                    continue;
                // what the process shares with all its functions (its factor) is left out: commonNoise has it
                const double d = p.value(p.units.value(name).self) / p.factor - mean;
                squares += d * d;
            }
            const double excess = (squares / (replicates - 1) - poisson) / (mean * mean);
            weighted += mean * excess;
            weights += mean;
        }
        return weights > 0 ? std::max(floor, weighted / weights) : floor;
    }

    /**
     * The variance of this side's estimate of a weight (@p unitsOf gives a process's units of it), in two parts.
     *
     * sampling: n units are Poisson, variance n x unit^2 (n at least one unit, so that a weight not seen at all is
     * not known exactly); the estimate adds the processes' ns and divides by all their calls.
     *
     * spread: the processes' own differences, processNoise (and with @p common, commonNoise: what a process's
     * functions share) x the estimate^2, times the sum of the processes' squared shares of the calls (1 / k when
     * they served equal calls: the variance of a plain mean).
     */
    template<typename UnitsOf> SideVariance variance(UnitsOf unitsOf, bool common = true) const
    {
        SideVariance out;
        if (replicates == 0 || !(calls > 0))
            return out;
        double estimate = 0;
        double shares = 0;
        for (const Process &p : processes) {
            const double unitUs = p.nsPerUnit / 1000.0 / calls; // a unit as us per call of the side
            out.sampling += std::max(unitsOf(p), 1.0) * unitUs * unitUs;
            estimate += unitsOf(p) * unitUs;
            if (p.replicate)
                shares += (p.calls / replicateCalls) * (p.calls / replicateCalls);
        }
        out.spread = (processNoise + (common ? commonNoise : 0.0)) * estimate * estimate * shares;
        return out;
    }
};

// How a diff judges: the sampling noise and the processes' own differences, as a normal interval.
struct Judge {
    bool judged = false; // false when a side has no process to judge by

    // The interval of @p change (B - A) from the sides' variances of their estimates, two-sided at @p confidence.
    DiffInterval interval(double change, const SideVariance &a, const SideVariance &b, double confidence) const
    {
        if (!judged)
            return { std::min(0.0, change), std::max(0.0, change) }; // contains zero: never flagged
        const double var = a.value() + b.value();
        if (!(var > 0))
            return { change, change };
        const double half = normalQuantile(1 - (1 - confidence) / 2) * std::sqrt(var);
        return { change - half, change + half };
    }
};

// Frames of a tree being built: children found by name, turned into FlameNode at the end.
struct TreeBuilder {
    QString name;
    double total = 0;
    double self = 0;
    double baseTotal = 0;
    double baseSelf = 0;
    QHash<QString, int> index;
    std::vector<TreeBuilder> children;

    void add(const QString &stack, double weight, bool base)
    {
        TreeBuilder *node = this;
        (base ? node->baseTotal : node->total) += weight;
        for (QStringView frame : QStringView(stack).tokenize(u';')) {
            const QString frameName = frame.toString();
            auto it = node->index.constFind(frameName);
            int i = 0;
            if (it == node->index.constEnd()) {
                i = int(node->children.size());
                node->index.insert(frameName, i);
                node->children.push_back(TreeBuilder { frameName, 0, 0, 0, 0, {}, {} });
            } else {
                i = it.value();
            }
            node = &node->children[size_t(i)];
            (base ? node->baseTotal : node->total) += weight;
        }
        if (node != this)
            (base ? node->baseSelf : node->self) += weight;
    }

    FlameNode toNode(const QHash<QString, int> &changes) const
    {
        FlameNode node;
        node.name = name;
        node.total = total;
        node.self = self;
        node.baseTotal = baseTotal;
        node.baseSelf = baseSelf;
        node.change = changes.value(name, 0);
        node.children.reserve(children.size());
        for (const TreeBuilder &child : children)
            node.children.push_back(child.toNode(changes));
        std::sort(node.children.begin(), node.children.end(), [](const FlameNode &x, const FlameNode &y) {
            if (x.total != y.total)
                return x.total > y.total;
            return x.name < y.name;
        });
        return node;
    }
};

int signOf(double v)
{
    return v > 0 ? 1 : (v < 0 ? -1 : 0);
}

} // namespace

// ---- ProcessProfile, Profile

double ProcessProfile::totalUnits() const
{
    double sum = 0;
    for (double weight : stacks)
        sum += weight;
    return sum;
}

double ProcessProfile::nsPerUnit() const
{
    if (cpuNsPerUnit > 0)
        return cpuNsPerUnit;
    if (measuredCpuNs > 0) {
        const double units = totalUnits();
        if (units > 0)
            return measuredCpuNs / units;
    }
    return 0;
}

double ProcessProfile::usPerCall(double units) const
{
    if (!(calls > 0))
        return 0;
    return units * nsPerUnit() / 1000.0 / calls;
}

bool Profile::isEmpty() const
{
    for (const ProcessProfile &process : processes)
        if (!process.stacks.isEmpty())
            return false;
    return true;
}

double Profile::calls() const
{
    double sum = 0;
    for (const ProcessProfile &process : processes)
        sum += process.calls;
    return sum;
}

double Profile::samples() const
{
    if (profiler != QLatin1String("perf") && profiler != QLatin1String("python"))
        return -1;
    double sum = 0;
    for (const ProcessProfile &process : processes)
        sum += process.totalUnits();
    return sum;
}

FoldedStacks Profile::usPerCall() const
{
    FoldedStacks out;
    const double allCalls = calls();
    if (!(allCalls > 0))
        return out;
    for (const ProcessProfile &process : processes) {
        const double nsPerUnit = process.nsPerUnit();
        if (!(nsPerUnit > 0))
            continue;
        for (auto it = process.stacks.cbegin(); it != process.stacks.cend(); ++it)
            out[it.key()] += it.value() * nsPerUnit / 1000.0 / allCalls;
    }
    return out;
}

double Profile::totalUsPerCall() const
{
    double sum = 0;
    for (double us : usPerCall())
        sum += us;
    return sum;
}

// ---- JSON

QJsonObject profileToJson(const Profile &profile)
{
    QJsonObject json;
    json.insert(QStringLiteral("scope"), profile.scope);
    json.insert(QStringLiteral("profiler"), profile.profiler);
    json.insert(QStringLiteral("how"), profile.how);
    if (profile.profilerCpuSeconds >= 0)
        json.insert(QStringLiteral("profilerCpuSeconds"), profile.profilerCpuSeconds);
    json.insert(QStringLiteral("notes"), QJsonArray::fromStringList(profile.notes));
    if (!profile.perfData.isEmpty())
        json.insert(QStringLiteral("perfData"), profile.perfData);
    QJsonArray processes;
    for (const ProcessProfile &process : profile.processes) {
        QJsonObject p;
        p.insert(QStringLiteral("pid"), process.pid);
        p.insert(QStringLiteral("command"), process.command);
        p.insert(QStringLiteral("calls"), process.calls);
        p.insert(QStringLiteral("cpuNsPerUnit"), process.cpuNsPerUnit);
        if (process.measuredCpuNs >= 0)
            p.insert(QStringLiteral("measuredCpuNs"), process.measuredCpuNs);
        p.insert(QStringLiteral("folded"), toExactFolded(process.stacks));
        processes.append(p);
    }
    json.insert(QStringLiteral("processes"), processes);
    return json;
}

std::optional<Profile> profileFromJson(const QJsonObject &json, const QString &where, QString *error)
{
    auto fail = [&](const QString &message) -> std::optional<Profile> {
        if (error)
            *error = where + QStringLiteral(": ") + message;
        return std::nullopt;
    };
    // A string member: required ones must be there; an optional one may be missing (then empty).
    auto readString = [](const QJsonObject &object, const QString &key, bool required, QString *out, QString *why) {
        const QJsonValue value = object.value(key);
        if (value.isUndefined() && !required)
            return true;
        if (value.isUndefined()) {
            *why = QStringLiteral("has no %1").arg(key);
            return false;
        }
        if (!value.isString()) {
            *why = QStringLiteral("%1 is not a string").arg(key);
            return false;
        }
        *out = value.toString();
        return true;
    };
    // A number member at least @p minimum; a missing optional one (or null) leaves *out as it is.
    auto readNumber
        = [](const QJsonObject &object, const QString &key, bool required, double minimum, double *out, QString *why) {
              const QJsonValue value = object.value(key);
              if ((value.isUndefined() || value.isNull()) && !required)
                  return true;
              if (value.isUndefined()) {
                  *why = QStringLiteral("has no %1").arg(key);
                  return false;
              }
              if (!value.isDouble() || !std::isfinite(value.toDouble())) {
                  *why = QStringLiteral("%1 is not a number").arg(key);
                  return false;
              }
              if (value.toDouble() < minimum) {
                  *why = QStringLiteral("%1 is negative").arg(key);
                  return false;
              }
              *out = value.toDouble();
              return true;
          };

    Profile profile;
    QString why;
    if (!readString(json, QStringLiteral("scope"), true, &profile.scope, &why)
        || !readString(json, QStringLiteral("profiler"), true, &profile.profiler, &why)
        || !readString(json, QStringLiteral("how"), false, &profile.how, &why)
        || !readNumber(json, QStringLiteral("profilerCpuSeconds"), false, 0, &profile.profilerCpuSeconds, &why)
        || !readString(json, QStringLiteral("perfData"), false, &profile.perfData, &why))
        return fail(why);

    const QJsonValue notes = json.value(QStringLiteral("notes"));
    if (!notes.isUndefined()) {
        if (!notes.isArray())
            return fail(QStringLiteral("notes is not a list"));
        const QJsonArray list = notes.toArray();
        for (qsizetype i = 0; i < list.size(); ++i) {
            if (!list.at(i).isString())
                return fail(QStringLiteral("note %1 is not a string").arg(i + 1));
            profile.notes.append(list.at(i).toString());
        }
    }

    const QJsonValue processes = json.value(QStringLiteral("processes"));
    if (processes.isUndefined())
        return fail(QStringLiteral("has no processes"));
    if (!processes.isArray())
        return fail(QStringLiteral("processes is not a list"));
    const QJsonArray list = processes.toArray();
    for (qsizetype i = 0; i < list.size(); ++i) {
        const QString name = QStringLiteral("process %1").arg(i + 1); // counted from 1, as the reader counts
        if (!list.at(i).isObject())
            return fail(name + QStringLiteral(" is not an object"));
        const QJsonObject object = list.at(i).toObject();
        ProcessProfile process;
        double pid = 0;
        QString folded;
        if (!readNumber(object, QStringLiteral("pid"), true, 0, &pid, &why)
            || !readString(object, QStringLiteral("command"), false, &process.command, &why)
            || !readNumber(object, QStringLiteral("calls"), true, 0, &process.calls, &why)
            || !readNumber(object, QStringLiteral("cpuNsPerUnit"), true, 0, &process.cpuNsPerUnit, &why)
            || !readNumber(object, QStringLiteral("measuredCpuNs"), false, 0, &process.measuredCpuNs, &why)
            || !readString(object, QStringLiteral("folded"), true, &folded, &why))
            return fail(name + QLatin1Char(' ') + why);
        if (pid != std::floor(pid))
            return fail(name + QStringLiteral(" has a pid that is not a whole number"));
        process.pid = static_cast<qint64>(pid);
        QString foldedError;
        if (!parseFolded(folded, where + QStringLiteral(", ") + name + QStringLiteral("'s stacks"), &process.stacks,
                &foldedError)) {
            if (error)
                *error = foldedError;
            return std::nullopt;
        }
        profile.processes.push_back(std::move(process));
    }
    return profile;
}

// ---- folded text

bool parseFolded(const QString &text, const QString &source, FoldedStacks *stacks, QString *error)
{
    FoldedStacks read;
    int lineNumber = 0;
    auto fail = [&](const QString &message) {
        if (error)
            *error = QStringLiteral("%1:%2: %3").arg(source).arg(lineNumber).arg(message);
        return false;
    };
    for (QStringView line : QStringView(text).tokenize(u'\n')) {
        ++lineNumber;
        line = line.trimmed(); // also a '\r' of a CRLF line end
        if (line.isEmpty() || line.startsWith(u'#'))
            continue;
        const qsizetype space = std::max(line.lastIndexOf(u' '), line.lastIndexOf(u'\t'));
        if (space < 0) {
            bool isNumber = false;
            (void)line.toDouble(&isNumber);
            return fail(isNumber ? QStringLiteral("empty stack") : QStringLiteral("no count after the stack"));
        }
        const QStringView countText = line.mid(space + 1);
        bool ok = false;
        const double count = countText.toDouble(&ok);
        if (!ok || !std::isfinite(count))
            return fail(QStringLiteral("\"%1\" is not a count").arg(countText.toString()));
        if (count < 0)
            return fail(QStringLiteral("negative count %1").arg(countText.toString()));
        const QStringView stack = line.left(space).trimmed();
        if (stack.isEmpty() || stack.count(u';') == stack.size())
            return fail(QStringLiteral("empty stack"));
        if (count > 0)
            read[stack.toString()] += count;
    }
    if (stacks) {
        for (auto it = read.cbegin(); it != read.cend(); ++it)
            (*stacks)[it.key()] += it.value();
    }
    return true;
}

QString toFolded(const FoldedStacks &stacks)
{
    FoldedStacks rounded;
    for (auto it = stacks.cbegin(); it != stacks.cend(); ++it) {
        const double weight = std::round(it.value());
        if (weight >= 1)
            rounded.insert(it.key(), weight);
    }
    QString out;
    for (const auto &[stack, weight] : sortedStacks(rounded))
        out += oneLine(stack) + QLatin1Char(' ') + weightText(weight) + QLatin1Char('\n');
    return out;
}

QString toFoldedNsPerCall(const FoldedStacks &usPerCallStacks)
{
    FoldedStacks ns;
    for (auto it = usPerCallStacks.cbegin(); it != usPerCallStacks.cend(); ++it)
        ns.insert(it.key(), it.value() * 1000.0);
    return toFolded(ns);
}

std::vector<FunctionCost> functionCosts(const FoldedStacks &stacks)
{
    const CostMap costs = costMap(stacks);
    std::vector<FunctionCost> out;
    out.reserve(costs.size());
    for (auto it = costs.cbegin(); it != costs.cend(); ++it)
        out.push_back(FunctionCost { it.key(), it.value().self, it.value().total });
    std::sort(out.begin(), out.end(), [](const FunctionCost &x, const FunctionCost &y) {
        if (x.self != y.self)
            return x.self > y.self;
        return x.name < y.name;
    });
    return out;
}

// ---- diff

std::vector<FunctionChange> ProfileDiff::topChanges(int count) const
{
    // The changed functions in the order of `functions`: biggest |self change| first, so a function that changed
    // only in total (a caller of one that changed) comes after the functions whose own code changed more.
    std::vector<FunctionChange> out;
    for (const FunctionChange &change : functions) {
        if (int(out.size()) >= count)
            break;
        if (change.changed)
            out.push_back(change);
    }
    return out;
}

std::vector<FunctionChange> ProfileDiff::ownChanges(int count) const
{
    std::vector<FunctionChange> out;
    for (const FunctionChange &change : functions) {
        if (int(out.size()) >= count)
            break;
        if (change.changed && !change.explainedByCallee)
            out.push_back(change);
    }
    return out.empty() ? topChanges(count) : out;
}

/// function -> its direct callee -> the weight of the stacks where the callee follows the function's first frame.
QHash<QString, QHash<QString, double>> calleeWeights(const FoldedStacks &stacks)
{
    QHash<QString, QHash<QString, double>> out;
    for (auto it = stacks.cbegin(); it != stacks.cend(); ++it) {
        const QStringList frames = it.key().split(QLatin1Char(';'));
        QSet<QString> seen;
        for (qsizetype i = 0; i + 1 < frames.size(); ++i) {
            if (seen.contains(frames.at(i)))
                continue; // recursion: the outermost frame's callee carries the stack
            seen.insert(frames.at(i));
            out[frames.at(i)][frames.at(i + 1)] += it.value();
        }
    }
    return out;
}

/**
 * Marks the changed functions whose total change is mostly (80% or more) one direct callee's: callers of the
 * function to blame, listed after it. A function whose own code (or that of several callees) changed stays first.
 */
void markExplainedByCallees(const FoldedStacks &a, const FoldedStacks &b, std::vector<FunctionChange> *functions)
{
    const QHash<QString, QHash<QString, double>> calleesA = calleeWeights(a);
    const QHash<QString, QHash<QString, double>> calleesB = calleeWeights(b);
    for (FunctionChange &change : *functions) {
        const double total = change.totalChange();
        if (!change.changed || total == 0)
            continue;
        QSet<QString> callees;
        for (const QString &callee : calleesA.value(change.name).keys())
            callees.insert(callee);
        for (const QString &callee : calleesB.value(change.name).keys())
            callees.insert(callee);
        for (const QString &callee : std::as_const(callees)) {
            const double delta = calleesB.value(change.name).value(callee) - calleesA.value(change.name).value(callee);
            if (delta / total >= 0.8) {
                change.explainedByCallee = true;
                break;
            }
        }
    }
}

/**
 * The ratio B / A that the functions share: the median of their self ratios, over the functions that carry at
 * least 0.5% of both sides' CPU (at least three of them; else 1). A change of one function or a few moves the
 * median little; a process that runs slower as a whole, or a machine that does, moves them all.
 */
double commonScale(const DiffSide &a, const DiffSide &b)
{
    std::vector<double> ratios;
    for (auto it = a.usPerCall.cbegin(); it != a.usPerCall.cend(); ++it) {
        const double selfA = it.value().self;
        const double selfB = b.usPerCall.value(it.key()).self;
        if (selfA >= 0.005 * a.totalUsPerCall && selfB >= 0.005 * b.totalUsPerCall && selfA > 0)
            ratios.push_back(selfB / selfA);
    }
    if (ratios.size() < 3)
        return 1.0;
    const auto middle = ratios.begin() + static_cast<std::ptrdiff_t>(ratios.size() / 2);
    std::nth_element(ratios.begin(), middle, ratios.end());
    return *middle;
}

ProfileDiff diffProfiles(const Profile &a, const Profile &b, double confidence, double minShare)
{
    const DiffSide sideA(a);
    const DiffSide sideB(b);

    ProfileDiff diff;
    diff.confidence = confidence;
    diff.processesA = sideA.replicates;
    diff.processesB = sideB.replicates;
    diff.totalA = sideA.totalUsPerCall;
    diff.totalB = sideB.totalUsPerCall;
    diff.minChangeUs = minShare * diff.totalA;

    const int countA = sideA.replicates;
    const int countB = sideB.replicates;
    Judge judge;
    judge.judged = countA > 0 && countB > 0;
    const bool perProcess = countA >= 2 && countB >= 2;
    const QString what = a.scope.isEmpty() ? QStringLiteral("process") : a.scope + QStringLiteral(" process");
    if (!judge.judged) {
        diff.method = QStringLiteral("not judged (no profiled calls in %1)")
                          .arg(countA == 0 && countB == 0 ? QStringLiteral("A and B")
                                  : countA == 0           ? QStringLiteral("A")
                                                          : QStringLiteral("B"));
    } else if (perProcess) {
        diff.method = countA == countB ? QStringLiteral("per %1 (%2 a side)").arg(what).arg(countA)
                                       : QStringLiteral("per %1 (%2 and %3)").arg(what).arg(countA).arg(countB);
    } else {
        diff.method = countA == 1 && countB == 1
            ? QStringLiteral("sampling noise only (one process a side)")
            : QStringLiteral("sampling noise only (%1 and %2 processes)").arg(countA).arg(countB);
    }

    const auto totalUnits = [](const DiffSide::Process &p) { return p.totalUnits; };
    diff.totalDiff
        = judge.interval(diff.totalB - diff.totalA, sideA.variance(totalUnits), sideB.variance(totalUnits), confidence);

    QStringList names = sideA.usPerCall.keys();
    for (auto it = sideB.usPerCall.cbegin(); it != sideB.usPerCall.cend(); ++it)
        if (!sideA.usPerCall.contains(it.key()))
            names.append(it.key());

    // Bonferroni: each function's self and total are both judged, so the family is twice the functions.
    const double tests = std::max(1.0, 2.0 * double(names.size()));
    const double adjusted = 1 - (1 - confidence) / tests;
    const double scale = commonScale(sideA, sideB);

    diff.functions.reserve(size_t(names.size()));
    for (const QString &name : std::as_const(names)) {
        const Cost costA = sideA.usPerCall.value(name);
        const Cost costB = sideB.usPerCall.value(name);
        FunctionChange change;
        change.name = name;
        change.selfA = costA.self;
        change.selfB = costB.self;
        change.totalA = costA.total;
        change.totalB = costB.total;
        const auto selfUnits = [&name](const DiffSide::Process &p) { return p.units.value(name).self; };
        const auto totalOf = [&name](const DiffSide::Process &p) { return p.units.value(name).total; };
        change.selfDiff
            = judge.interval(change.selfChange(), sideA.variance(selfUnits), sideB.variance(selfUnits), adjusted);
        change.totalDiff
            = judge.interval(change.totalChange(), sideA.variance(totalOf), sideB.variance(totalOf), adjusted);
        // Beyond noise, and beyond what B's processes share with all their functions: when every function of B is
        // 10% slower (or its processes happen to run 10% slower), no function is to blame for it, so each must also
        // have changed against A scaled by the functions' common ratio.
        const auto beyondScale = [&](double valueA, double valueB, auto unitsOf) {
            const DiffInterval shape = judge.interval(
                valueB - scale * valueA, sideA.variance(unitsOf, false), sideB.variance(unitsOf, false), adjusted);
            return shape.excludesZero() && (shape.low > 0) == (valueB > valueA);
        };
        const bool selfChanged = change.selfDiff.excludesZero() && std::fabs(change.selfChange()) >= diff.minChangeUs
            && beyondScale(change.selfA, change.selfB, selfUnits);
        const bool totalChanged = change.totalDiff.excludesZero() && std::fabs(change.totalChange()) >= diff.minChangeUs
            && beyondScale(change.totalA, change.totalB, totalOf);
        change.changed = selfChanged || totalChanged;
        diff.functions.push_back(std::move(change));
    }
    markExplainedByCallees(a.usPerCall(), b.usPerCall(), &diff.functions);
    std::sort(diff.functions.begin(), diff.functions.end(), [](const FunctionChange &x, const FunctionChange &y) {
        if (x.changed != y.changed)
            return x.changed;
        if (x.changed) {
            if (x.explainedByCallee != y.explainedByCallee)
                return !x.explainedByCallee;
            const double totalX = std::fabs(x.totalChange());
            const double totalY = std::fabs(y.totalChange());
            if (totalX != totalY)
                return totalX > totalY;
        }
        const double selfX = std::fabs(x.selfChange());
        const double selfY = std::fabs(y.selfChange());
        if (selfX != selfY)
            return selfX > selfY;
        const double totalX = std::fabs(x.totalChange());
        const double totalY = std::fabs(y.totalChange());
        if (totalX != totalY)
            return totalX > totalY;
        return x.name < y.name;
    });
    return diff;
}

// ---- flame trees

FlameNode buildFlameTree(const FoldedStacks &stacks, const QString &rootName)
{
    TreeBuilder root;
    root.name = rootName;
    for (auto it = stacks.cbegin(); it != stacks.cend(); ++it)
        root.add(it.key(), it.value(), false);
    return root.toNode({});
}

FlameNode buildDiffFlameTree(
    const FoldedStacks &a, const FoldedStacks &b, const ProfileDiff &diff, const QString &rootName)
{
    TreeBuilder root;
    root.name = rootName;
    for (auto it = a.cbegin(); it != a.cend(); ++it)
        root.add(it.key(), it.value(), true);
    for (auto it = b.cbegin(); it != b.cend(); ++it)
        root.add(it.key(), it.value(), false);

    // A changed function's direction: its self change when that is the one judged beyond noise, else its total's.
    QHash<QString, int> changes;
    for (const FunctionChange &change : diff.functions) {
        if (!change.changed)
            continue;
        const bool selfJudged = change.selfDiff.excludesZero() && std::fabs(change.selfChange()) >= diff.minChangeUs;
        changes.insert(change.name, signOf(selfJudged ? change.selfChange() : change.totalChange()));
    }
    FlameNode node = root.toNode(changes);
    // The root is not a function: it carries the judgement of all stacks together.
    const double totalChange = diff.totalB - diff.totalA;
    node.change = diff.totalDiff.excludesZero() && std::fabs(totalChange) >= diff.minChangeUs ? signOf(totalChange) : 0;
    return node;
}

} // namespace rpcscope
