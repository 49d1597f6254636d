#include "profile/perfscript.h"
#include "profile/profile.h"
#include "report/profilereport.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <random>

using namespace rpcscope;

namespace {

// ---- a synthetic server: ~100 us of CPU per call over 50 functions, sampled as perf does (Poisson counts)

constexpr int kFunctions = 50;
constexpr double kBaseUsPerCall = 100;
constexpr double kBurnUsPerCall = 40;
constexpr double kNsPerSample = 250000; // perf's default 4 kHz cpu-clock

QString functionName(int i)
{
    return QStringLiteral("func%1").arg(i, 2, 10, QLatin1Char('0'));
}

QString functionStack(int i)
{
    return QStringLiteral("main;serve;mod%1;%2").arg(i % 5).arg(functionName(i));
}

const QString kBurnStack = QStringLiteral("main;serve;mod0;burnCpu");

// Function i's cost in us per call: uneven weights (1..11) adding up to kBaseUsPerCall.
double functionUs(int i)
{
    double sum = 0;
    for (int j = 0; j < kFunctions; ++j)
        sum += 1 + (j * 7) % 11;
    return kBaseUsPerCall * (1 + (i * 7) % 11) / sum;
}

/**
 * A server of @p processes processes, each serving about 50000 calls and sampled at kNsPerSample: every stack's
 * count is Poisson around its CPU (burnCpu: about 8000 samples a process). @p processSpread: each process's costs
 * are also scaled by a factor of this relative spread (processes that differ by more than sampling noise).
 *
 * (A per-function Welch interval over 2 or 3 processes a side, Bonferroni-adjusted, needed ~48 standard errors
 * to flag a change and found nothing with 2 a side: diffProfiles pools the processes' spread over functions.)
 */
Profile syntheticServer(std::mt19937 &rng, int processes, bool burn, double processSpread = 0)
{
    Profile profile;
    profile.scope = QStringLiteral("server");
    profile.profiler = QStringLiteral("perf");
    std::normal_distribution<double> factorDist(1.0, processSpread);
    std::uniform_real_distribution<double> callsDist(45000, 55000);
    for (int p = 0; p < processes; ++p) {
        ProcessProfile process;
        process.pid = 1000 + p;
        process.command = QStringLiteral("server");
        process.calls = std::round(callsDist(rng));
        process.cpuNsPerUnit = kNsPerSample;
        const double factor = processSpread > 0 ? std::max(0.5, factorDist(rng)) : 1.0;
        auto sample = [&](const QString &stack, double usPerCall) {
            const double expected = usPerCall * factor * process.calls * 1000 / kNsPerSample;
            std::poisson_distribution<int> counts(expected);
            const int n = counts(rng);
            if (n > 0)
                process.stacks[stack] += n;
        };
        for (int i = 0; i < kFunctions; ++i)
            sample(functionStack(i), functionUs(i));
        if (burn)
            sample(kBurnStack, kBurnUsPerCall);
        profile.processes.push_back(std::move(process));
    }
    return profile;
}

bool anyFlagged(const ProfileDiff &diff)
{
    for (const FunctionChange &change : diff.functions)
        if (change.changed)
            return true;
    return false;
}

const FunctionChange *findChange(const ProfileDiff &diff, const QString &name)
{
    for (const FunctionChange &change : diff.functions)
        if (change.name == name)
            return &change;
    return nullptr;
}

const FlameNode *child(const FlameNode &node, const QString &name)
{
    for (const FlameNode &c : node.children)
        if (c.name == name)
            return &c;
    return nullptr;
}

// A few samples of `perf script -F comm,pid,tid,period,ip,sym,dso` as recorded here (headers end in a space), then
// crafted ones: a comm with a space, C++ symbols with spaces and parentheses, a ';' in a name, an unknown symbol in
// a known library, a kernel module's frame, a sample without frames and a header that cannot be read.
const char kPerfScript[] = "bash 10369/10369    1000000 \n"
                           "\tffffffff822382f7 clear_page_erms ([kernel.kallsyms])\n"
                           "\tffffffff8163d350 get_page_from_freelist ([kernel.kallsyms])\n"
                           "\tffffffff8135fd8d __do_sys_clone ([kernel.kallsyms])\n"
                           "\tffffffff8223c951 do_syscall_64 ([kernel.kallsyms])\n"
                           "\tffffffff81000130 entry_SYSCALL_64_after_hwframe ([kernel.kallsyms])\n"
                           "\t           d4353 _Fork (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
                           "\n"
                           "python3 10377/10377    1000000 \n"
                           "\t           fcc77 _PyEval_EvalFrameDefault "
                           "(/root/.pyenv/versions/3.11.7/lib/libpython3.11.so.1.0)\n"
                           "\t    7f894c0ceac0 [unknown] ([unknown])\n"
                           "\t    7f894c856240 [unknown] ([unknown])\n"
                           "\n"
                           "grpc server 4242/4243    250000 \n"
                           "\tffffffffc0a01234 nft_do_chain ([nf_tables])\n"
                           "\t    55d0c0ffee12 std::function<void (int)>::operator()(int) const "
                           "(/usr/lib/libfoo.so.1)\n"
                           "\t    55d0c0ffee00 handle;request (/opt/srv/bin/server)\n"
                           "\t    7f0000001234 [unknown] (/usr/lib/x86_64-linux-gnu/libgrpc.so.29)\n"
                           "\t    7f0000009999 [unknown] ([unknown])\n"
                           "\n"
                           "this header has no numbers\n"
                           "\t    7f0000009999 lost_frame (/opt/srv/bin/server)\n"
                           "\n"
                           "grpc server 4242/4244    250000 \n"
                           "\n"
                           "grpc server 4242/4243    250000 \n"
                           "\tffffffffc0a01234 nft_do_chain ([nf_tables])\n"
                           "\t    55d0c0ffee12 std::function<void (int)>::operator()(int) const "
                           "(/usr/lib/libfoo.so.1)\n"
                           "\t    55d0c0ffee00 handle;request (/opt/srv/bin/server)\n"
                           "\t    7f0000001234 [unknown] (/usr/lib/x86_64-linux-gnu/libgrpc.so.29)\n"
                           "\t    7f0000009999 [unknown] ([unknown])"; // the last sample without its empty line

const QString kCraftedStack = QStringLiteral("[unknown];[libgrpc.so.29];handle:request;"
                                             "std::function<void (int)>::operator()(int) const;nft_do_chain_[k]");

PerfScriptFolder foldPerfScript(const QSet<qint64> &pids)
{
    PerfScriptFolder folder;
    folder.setPids(pids);
    const QByteArray text(kPerfScript);
    for (const QByteArray &line : text.split('\n'))
        folder.addLine(line);
    folder.finish();
    return folder;
}

} // namespace

class TestProfile : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void foldedParse();
    void foldedErrors();
    void foldedWrite();
    void functionCostsRecursion();
    void usPerCallNormalisation();
    void samplesCounted();
    void jsonRoundTrip();
    void jsonRejected();
    void perfScriptFolding();
    void diffFindsBurn();
    void diffAAFlagsRarely();
    void perfScriptTimesAndKeys();
    void samplesDeferredToASwitch();
    void diffTwoProcessesASide();
    void diffOneProcessASide();
    void flameTree();
    void diffFlameTree();
};

void TestProfile::foldedParse()
{
    const QString text = QStringLiteral("# perf folded\n"
                                        "\n"
                                        "main;std::function<void (int)>::operator()(int) const;leaf 12\n"
                                        "main;work 2.5\r\n"
                                        "main;work 1.25\n"
                                        "main;idle 0\n");
    FoldedStacks stacks;
    stacks.insert(QStringLiteral("before"), 1);
    QString error;
    QVERIFY2(parseFolded(text, QStringLiteral("t.folded"), &stacks, &error), qPrintable(error));
    QCOMPARE(stacks.size(), 3);
    QCOMPARE(stacks.value(QStringLiteral("before")), 1.0);
    QCOMPARE(stacks.value(QStringLiteral("main;std::function<void (int)>::operator()(int) const;leaf")), 12.0);
    QCOMPARE(stacks.value(QStringLiteral("main;work")), 3.75);
    QVERIFY(!stacks.contains(QStringLiteral("main;idle"))); // a zero count adds nothing

    // Written and read back: the same stacks (whole weights survive toFolded exactly).
    FoldedStacks whole;
    whole.insert(QStringLiteral("a;b c;d"), 7);
    whole.insert(QStringLiteral("a"), 3);
    FoldedStacks back;
    QVERIFY(parseFolded(toFolded(whole), QStringLiteral("x"), &back, &error));
    QCOMPARE(back, whole);
}

void TestProfile::foldedErrors()
{
    struct Case {
        QString text;
        QString error;
    };
    const std::vector<Case> cases = {
        { QStringLiteral("a;b 1\n\na;b\n"), QStringLiteral("s.folded:3: no count after the stack") },
        { QStringLiteral("a;b x\n"), QStringLiteral("s.folded:1: \"x\" is not a count") },
        { QStringLiteral("# c\na;b 2\na;b -3\n"), QStringLiteral("s.folded:3: negative count -3") },
        { QStringLiteral("a 1\n   5\n"), QStringLiteral("s.folded:2: empty stack") },
        { QStringLiteral("a 1\n;; 5\n"), QStringLiteral("s.folded:2: empty stack") },
        { QStringLiteral("a;b 1e999\n"), QStringLiteral("s.folded:1: \"1e999\" is not a count") },
    };
    for (const Case &c : cases) {
        FoldedStacks stacks;
        stacks.insert(QStringLiteral("kept"), 1);
        QString error;
        QVERIFY2(!parseFolded(c.text, QStringLiteral("s.folded"), &stacks, &error), qPrintable(c.text));
        QCOMPARE(error, c.error);
        QCOMPARE(stacks.size(), 1); // nothing added from a file with an error
    }
}

void TestProfile::foldedWrite()
{
    FoldedStacks stacks;
    stacks.insert(QStringLiteral("b"), 3);
    stacks.insert(QStringLiteral("a;c"), 3.4);
    stacks.insert(QStringLiteral("a;b"), 2.6);
    stacks.insert(QStringLiteral("x"), 0.4); // rounds to nothing
    stacks.insert(QStringLiteral("big"), 10.5);
    QCOMPARE(toFolded(stacks), QStringLiteral("big 11\na;b 3\na;c 3\nb 3\n"));

    FoldedStacks us;
    us.insert(QStringLiteral("main;f"), 2.25);
    us.insert(QStringLiteral("main;g"), 0.0004); // 0.4 ns: dropped
    us.insert(QStringLiteral("main;h"), 12);
    QCOMPARE(toFoldedNsPerCall(us), QStringLiteral("main;h 12000\nmain;f 2250\n"));
}

void TestProfile::functionCostsRecursion()
{
    FoldedStacks stacks;
    stacks.insert(QStringLiteral("main;f;f;g"), 4);
    stacks.insert(QStringLiteral("main;f"), 1);
    stacks.insert(QStringLiteral("main;g;f"), 2);
    stacks.insert(QStringLiteral("main;f;f;f"), 5);
    const std::vector<FunctionCost> costs = functionCosts(stacks);
    QCOMPARE(int(costs.size()), 3);
    QCOMPARE(costs[0].name, QStringLiteral("f"));
    QCOMPARE(costs[0].self, 8.0); // 1 + 2 + 5
    QCOMPARE(costs[0].total, 12.0); // every stack once, however often f recurses in it
    QCOMPARE(costs[1].name, QStringLiteral("g"));
    QCOMPARE(costs[1].self, 4.0);
    QCOMPARE(costs[1].total, 6.0);
    QCOMPARE(costs[2].name, QStringLiteral("main"));
    QCOMPARE(costs[2].self, 0.0);
    QCOMPARE(costs[2].total, 12.0);

    // Equal self weights: by name.
    FoldedStacks ties;
    ties.insert(QStringLiteral("r;b"), 1);
    ties.insert(QStringLiteral("r;a"), 1);
    const std::vector<FunctionCost> tied = functionCosts(ties);
    QCOMPARE(tied[0].name, QStringLiteral("a"));
    QCOMPARE(tied[1].name, QStringLiteral("b"));
    QCOMPARE(tied[2].name, QStringLiteral("r"));
}

void TestProfile::usPerCallNormalisation()
{
    // perf: units of 1 ms of CPU, 1000 calls: 3 samples = 3 ms = 3 us per call.
    ProcessProfile perf;
    perf.calls = 1000;
    perf.cpuNsPerUnit = 1e6;
    perf.stacks.insert(QStringLiteral("main;a"), 3);
    perf.stacks.insert(QStringLiteral("main;b"), 1);
    QCOMPARE(perf.totalUnits(), 4.0);
    QCOMPARE(perf.nsPerUnit(), 1e6);
    QCOMPARE(perf.usPerCall(3), 3.0);

    // A command writing sample counts: the unit is unknown, the counts are scaled to the measured CPU (8 ms over 40
    // samples: 200 us a sample).
    ProcessProfile counts;
    counts.calls = 2000;
    counts.cpuNsPerUnit = 0;
    counts.measuredCpuNs = 8e6;
    counts.stacks.insert(QStringLiteral("main;a"), 30);
    counts.stacks.insert(QStringLiteral("main;b"), 10);
    QCOMPARE(counts.nsPerUnit(), 2e5);
    QCOMPARE(counts.usPerCall(30), 3.0);
    QCOMPARE(counts.usPerCall(10), 1.0);

    ProcessProfile unknown = counts;
    unknown.measuredCpuNs = -1;
    QCOMPARE(unknown.nsPerUnit(), 0.0);
    QCOMPARE(unknown.usPerCall(30), 0.0);
    ProcessProfile noCalls = perf;
    noCalls.calls = 0;
    QCOMPARE(noCalls.usPerCall(3), 0.0);

    // The server's CPU per call: both processes' ns added up over all their calls. a: (3 ms + 6 ms) / 3000 calls.
    Profile profile;
    QVERIFY(profile.isEmpty());
    profile.processes = { perf, counts };
    QVERIFY(!profile.isEmpty());
    QCOMPARE(profile.calls(), 3000.0);
    const FoldedStacks us = profile.usPerCall();
    QCOMPARE(us.size(), 2);
    QVERIFY(qFuzzyCompare(us.value(QStringLiteral("main;a")), 3.0));
    QVERIFY(qFuzzyCompare(us.value(QStringLiteral("main;b")), (1e6 + 2e6) / 1000 / 3000));
    QVERIFY(qFuzzyCompare(profile.totalUsPerCall(), 4.0));
    QCOMPARE(std::llround(profile.totalUsPerCall() * 1000), 4000LL);
}

void TestProfile::samplesCounted()
{
    // perf's weights are samples: two processes' added up, and a summary that says when they are few.
    ProcessProfile one;
    one.stacks = { { QStringLiteral("main;a"), 120 }, { QStringLiteral("main;b"), 30 } };
    std::tie(one.calls, one.cpuNsPerUnit) = std::pair(1000.0, 1e7);
    ProcessProfile two = one;
    two.stacks[QStringLiteral("main;a")] = 49;
    Profile profile;
    profile.scope = QStringLiteral("server");
    profile.profiler = QStringLiteral("perf");
    profile.processes = { one, two };
    QCOMPARE(profile.samples(), 229.0);
    QCOMPARE(profileSamplesText(profile), QStringLiteral("229 samples"));
    QVERIFY2(formatProfileSummary(profile).startsWith(
                 QStringLiteral("Server profile: 1145 us CPU per call over 2000 calls, 2 processes, 229 samples\n")),
        qPrintable(formatProfileSummary(profile)));
    profile.processes = { one };
    QCOMPARE(profileSamplesText(profile),
        QStringLiteral("150 samples (few: the figures per function are rough; a longer run gives more)"));
    profile.processes[0].stacks = { { QStringLiteral("main;a"), 1 } };
    QCOMPARE(profileSamplesText(profile).left(9), QStringLiteral("1 sample "));
    // No samples at all: when perf ran and said nothing went wrong, the run was too short for one, and the summary
    // says what to do; a note (perf missing, not allowed) speaks for itself.
    Profile none;
    none.scope = QStringLiteral("server");
    none.profiler = QStringLiteral("perf");
    none.how = QStringLiteral("perf record -e cpu-clock -c 10000000 --call-graph fp (one sample per 10000 us of CPU)");
    QVERIFY2(formatProfileSummary(none).startsWith(
                 QStringLiteral("Server profile: no samples: the run used less CPU than one sample takes (one per 10")),
        qPrintable(formatProfileSummary(none)));
    QVERIFY(noSamplesHint(none).endsWith(QStringLiteral("run more calls, or sample more often (--profile-period)")));
    none.notes = QStringList { QStringLiteral("perf is not installed") };
    QVERIFY(noSamplesHint(none).isEmpty());
    QCOMPARE(formatProfileSummary(none), QStringLiteral("Server profile: no samples (perf is not installed)\n"));
    QVERIFY(noSamplesHint(profile).isEmpty()); // one with samples needs no excuse

    // A command's weights are of its own unit: no count is claimed.
    profile.profiler = QStringLiteral("command");
    QCOMPARE(profile.samples(), -1.0);
    QVERIFY(profileSamplesText(profile).isEmpty());
    QVERIFY(!formatProfileSummary(profile).contains(QLatin1String("sample")));
}

void TestProfile::jsonRoundTrip()
{
    Profile profile;
    profile.scope = QStringLiteral("server");
    profile.profiler = QStringLiteral("perf");
    profile.how = QStringLiteral("perf record -a -g, filtered to the server's processes");
    profile.notes = QStringList { QStringLiteral("perf lost 12 samples.") };
    ProcessProfile one;
    one.pid = 4242;
    one.command = QStringLiteral("grpc server");
    one.calls = 12345;
    one.cpuNsPerUnit = 250000;
    one.stacks.insert(QStringLiteral("main;std::function<void (int)>::operator()(int) const"), 17);
    one.stacks.insert(QStringLiteral("main;frac"), 1.0 / 3.0);
    one.stacks.insert(QStringLiteral("main;tiny"), 1.2345678901234567e-7);
    ProcessProfile two;
    two.pid = 4243;
    two.calls = 0.5;
    two.cpuNsPerUnit = 0;
    two.measuredCpuNs = 98765.4321;
    two.stacks.insert(QStringLiteral("x"), 123456789012.0);
    profile.processes = { one, two };

    const QJsonObject json = profileToJson(profile);
    QVERIFY(!json.contains(QStringLiteral("profilerCpuSeconds"))); // unknown is not zero
    const QJsonArray processes = json.value(QStringLiteral("processes")).toArray();
    QCOMPARE(processes.size(), 2);
    QVERIFY(!processes.at(0).toObject().contains(QStringLiteral("measuredCpuNs")));
    QVERIFY(processes.at(1).toObject().contains(QStringLiteral("measuredCpuNs")));
    QCOMPARE(processes.at(1).toObject().value(QStringLiteral("folded")).toString(), QStringLiteral("x 123456789012\n"));

    // Through text, as the file holds it.
    const QJsonObject reread = QJsonDocument::fromJson(QJsonDocument(json).toJson()).object();
    QString error;
    const std::optional<Profile> back = profileFromJson(reread, QStringLiteral("run 1's server profile"), &error);
    QVERIFY2(back, qPrintable(error));
    QCOMPARE(back->scope, profile.scope);
    QCOMPARE(back->profiler, profile.profiler);
    QCOMPARE(back->how, profile.how);
    QCOMPARE(back->notes, profile.notes);
    QCOMPARE(back->profilerCpuSeconds, -1.0);
    QCOMPARE(int(back->processes.size()), 2);
    for (size_t i = 0; i < 2; ++i) {
        QCOMPARE(back->processes[i].pid, profile.processes[i].pid);
        QCOMPARE(back->processes[i].command, profile.processes[i].command);
        QCOMPARE(back->processes[i].calls, profile.processes[i].calls);
        QCOMPARE(back->processes[i].cpuNsPerUnit, profile.processes[i].cpuNsPerUnit);
        QCOMPARE(back->processes[i].measuredCpuNs, profile.processes[i].measuredCpuNs);
        QCOMPARE(back->processes[i].stacks, profile.processes[i].stacks); // exactly: fractions kept
    }

    profile.profilerCpuSeconds = 0.25;
    const std::optional<Profile> withCpu = profileFromJson(profileToJson(profile), QString(), &error);
    QVERIFY(withCpu);
    QCOMPARE(withCpu->profilerCpuSeconds, 0.25);
}

void TestProfile::jsonRejected()
{
    Profile profile;
    profile.scope = QStringLiteral("server");
    profile.profiler = QStringLiteral("perf");
    ProcessProfile process;
    process.pid = 1;
    process.calls = 10;
    process.cpuNsPerUnit = 1000;
    process.stacks.insert(QStringLiteral("a;b"), 2);
    profile.processes = { process, process };
    const QJsonObject good = profileToJson(profile);
    const QString where = QStringLiteral("run 12's server profile");
    QString error;
    QVERIFY(profileFromJson(good, where, &error));

    auto withProcess = [&](int index, const QString &key, const QJsonValue &value) {
        QJsonObject json = good;
        QJsonArray processes = json.value(QStringLiteral("processes")).toArray();
        QJsonObject p = processes.at(index).toObject();
        if (value.isUndefined())
            p.remove(key);
        else
            p.insert(key, value);
        processes.replace(index, p);
        json.insert(QStringLiteral("processes"), processes);
        return json;
    };
    auto rejected = [&](const QJsonObject &json) {
        error.clear();
        if (profileFromJson(json, where, &error))
            return QStringLiteral("(accepted)");
        return error;
    };

    QCOMPARE(rejected(withProcess(1, QStringLiteral("calls"), QJsonValue::Undefined)),
        QStringLiteral("run 12's server profile: process 2 has no calls"));
    QCOMPARE(rejected(withProcess(0, QStringLiteral("calls"), QStringLiteral("ten"))),
        QStringLiteral("run 12's server profile: process 1 calls is not a number"));
    QCOMPARE(rejected(withProcess(0, QStringLiteral("cpuNsPerUnit"), -5)),
        QStringLiteral("run 12's server profile: process 1 cpuNsPerUnit is negative"));
    QCOMPARE(rejected(withProcess(1, QStringLiteral("folded"), 3)),
        QStringLiteral("run 12's server profile: process 2 folded is not a string"));
    QCOMPARE(rejected(withProcess(1, QStringLiteral("folded"), QStringLiteral("a;b 1\na;b\n"))),
        QStringLiteral("run 12's server profile, process 2's stacks:2: no count after the stack"));

    QJsonObject json = good;
    json.insert(QStringLiteral("scope"), 3);
    QCOMPARE(rejected(json), QStringLiteral("run 12's server profile: scope is not a string"));
    json = good;
    json.remove(QStringLiteral("processes"));
    QCOMPARE(rejected(json), QStringLiteral("run 12's server profile: has no processes"));
    json = good;
    json.insert(QStringLiteral("processes"), QJsonObject());
    QCOMPARE(rejected(json), QStringLiteral("run 12's server profile: processes is not a list"));
    json = good;
    json.insert(QStringLiteral("notes"), QJsonArray { QStringLiteral("fine"), 2 });
    QCOMPARE(rejected(json), QStringLiteral("run 12's server profile: note 2 is not a string"));
    json = good;
    json.insert(QStringLiteral("profilerCpuSeconds"), QStringLiteral("1"));
    QCOMPARE(rejected(json), QStringLiteral("run 12's server profile: profilerCpuSeconds is not a number"));

    // Unknown members are a later version's: ignored. A null profilerCpuSeconds is "not measured".
    json = good;
    json.insert(QStringLiteral("futureMember"), 1);
    json.insert(QStringLiteral("profilerCpuSeconds"), QJsonValue::Null);
    const std::optional<Profile> read = profileFromJson(json, where, &error);
    QVERIFY(read);
    QCOMPARE(read->profilerCpuSeconds, -1.0);
}

void TestProfile::perfScriptFolding()
{
    const PerfScriptFolder all = foldPerfScript({});
    QCOMPARE(all.samplesSeen(), 5);
    QCOMPARE(all.samples(), 5);
    QCOMPARE(all.badLines(), 1);
    QCOMPARE(all.firstBadLine(), QStringLiteral("line 21: this header has no numbers"));

    QCOMPARE(all.stacks().size(), 3);
    const FoldedStacks bash = all.stacks().value(10369);
    QCOMPARE(bash.size(), 1);
    const QString bashStack = QStringLiteral("_Fork;entry_SYSCALL_64_after_hwframe_[k];do_syscall_64_[k];"
                                             "__do_sys_clone_[k];get_page_from_freelist_[k];clear_page_erms_[k]");
    QCOMPARE(bash.value(bashStack), 1e6);

    const FoldedStacks python = all.stacks().value(10377);
    QCOMPARE(python.value(QStringLiteral("[unknown];[unknown];_PyEval_EvalFrameDefault")), 1e6);

    const FoldedStacks server = all.stacks().value(4242);
    QCOMPARE(server.size(), 2);
    QCOMPARE(server.value(kCraftedStack), 500000.0); // two samples' periods, the last one ended by finish()
    QCOMPARE(server.value(QStringLiteral("[grpc server]")), 250000.0); // no frames: the comm
    QVERIFY(!server.contains(QStringLiteral("lost_frame"))); // the frame of the unreadable header is not kept

    QCOMPARE(all.comms().value(4242), QStringLiteral("grpc server"));
    QCOMPARE(all.comms().value(10369), QStringLiteral("bash"));

    // Only the server's pid kept; every sample still seen.
    const PerfScriptFolder filtered = foldPerfScript({ 4242 });
    QCOMPARE(filtered.samplesSeen(), 5);
    QCOMPARE(filtered.samples(), 3);
    QCOMPARE(filtered.stacks().size(), 1);
    QCOMPARE(filtered.stacks().value(4242), server);
    QVERIFY(!filtered.comms().contains(10369));
}

void TestProfile::diffFindsBurn()
{
    int found = 0;
    for (unsigned seed = 1; seed <= 20; ++seed) {
        std::mt19937 rng(seed);
        const Profile a = syntheticServer(rng, 3, false);
        const Profile b = syntheticServer(rng, 3, true);
        const ProfileDiff diff = diffProfiles(a, b);
        QCOMPARE(diff.processesA, 3);
        QCOMPARE(diff.processesB, 3);
        QCOMPARE(diff.method, QStringLiteral("per server process (3 a side)"));
        QVERIFY(std::fabs(diff.totalA - kBaseUsPerCall) < 5);
        QVERIFY(std::fabs(diff.minChangeUs - 0.01 * diff.totalA) < 1e-12);
        QCOMPARE(int(diff.functions.size()), kFunctions + 8); // and main, serve, mod0..mod4, burnCpu
        const std::vector<FunctionChange> top = diff.topChanges(5);
        if (top.empty() || top.front().name != QStringLiteral("burnCpu"))
            continue;
        const FunctionChange &burn = top.front();
        QCOMPARE(burn.selfA, 0.0);
        QVERIFY(burn.changed);
        // What a sentence names: burnCpu, not the callers that pass its change on (serve, main).
        const std::vector<FunctionChange> own = diff.ownChanges(3);
        QCOMPARE(own.front().name, QStringLiteral("burnCpu"));
        for (const FunctionChange &change : own)
            QVERIFY2(!change.explainedByCallee, qPrintable(change.name));
        QVERIFY(std::any_of(top.cbegin(), top.cend(), [](const FunctionChange &c) { return c.explainedByCallee; }));
        if (burn.selfDiff.low <= kBurnUsPerCall && kBurnUsPerCall <= burn.selfDiff.high && burn.selfDiff.excludesZero())
            ++found;
    }
    qInfo("burnCpu first and its interval around 40 us/call in %d of 20 seeds", found);
    QVERIFY2(found >= 19, qPrintable(QString::number(found)));
}

void TestProfile::diffAAFlagsRarely()
{
    // A against A: the same generator both sides, the Bonferroni-adjusted family should rarely flag anything. Also
    // with the smallest change at 0 (the intervals alone), and with processes 5% apart (more than sampling noise).
    int flagged = 0;
    int flaggedNoMinimum = 0;
    int flaggedSpread = 0;
    for (unsigned seed = 1; seed <= 100; ++seed) {
        std::mt19937 rng(1000 + seed);
        const Profile a = syntheticServer(rng, 3, false);
        const Profile b = syntheticServer(rng, 3, false);
        if (anyFlagged(diffProfiles(a, b)))
            ++flagged;
        if (anyFlagged(diffProfiles(a, b, 0.95, 0.0)))
            ++flaggedNoMinimum;
        const Profile c = syntheticServer(rng, 3, false, 0.05);
        const Profile d = syntheticServer(rng, 3, false, 0.05);
        if (anyFlagged(diffProfiles(c, d, 0.95, 0.0)))
            ++flaggedSpread;
    }
    qInfo("A/A: %d of 100 seeds flag a function (%d without the smallest change, %d with processes 5%% apart)", flagged,
        flaggedNoMinimum, flaggedSpread);
    QVERIFY2(flagged <= 5, qPrintable(QString::number(flagged)));
    QVERIFY2(flaggedNoMinimum <= 5, qPrintable(QString::number(flaggedNoMinimum)));
    QVERIFY2(flaggedSpread <= 5, qPrintable(QString::number(flaggedSpread)));
}

void TestProfile::perfScriptTimesAndKeys()
{
    // With -F ...,time,...: samples sorted into keys by process and time (an A/B run's windows).
    const QByteArray text = "server 10/10 100.000000500:    1000000 \n"
                            "\t  1 work (/srv)\n\n"
                            "server 10/11 100.5:    1000000 \n"
                            "\t  1 work (/srv)\n\n"
                            "rpcscope 20/20 101.25:    2000000 \n"
                            "\t  2 encode (/cli)\n\n"
                            "other 30/30 100.1:    1000000 \n"
                            "\t  3 noise (/x)\n";
    PerfScriptFolder folder;
    QList<qint64> times;
    folder.setClassifier([&times](qint64 pid, qint64 timeNs) {
        times << timeNs;
        if (pid == 30)
            return PerfScriptFolder::Skip;
        return timeNs < 100'400'000'000 ? 1 : 2;
    });
    for (const QByteArray &line : text.split('\n'))
        folder.addLine(line);
    folder.finish();
    QCOMPARE(times, (QList<qint64> { 100'000'000'500, 100'500'000'000, 101'250'000'000, 100'100'000'000 }));
    QCOMPARE(folder.badLines(), 0);
    QCOMPARE(folder.samples(), 3);
    QCOMPARE(folder.samplesSeen(), 4);
    QCOMPARE(folder.keyedStacks().value(1).value(QStringLiteral("work")), 1000000.0);
    QCOMPARE(folder.keyedStacks().value(2).value(QStringLiteral("work")), 1000000.0);
    QCOMPARE(folder.keyedStacks().value(2).value(QStringLiteral("encode")), 2000000.0);
    QVERIFY(folder.stacks().isEmpty());
}

void TestProfile::samplesDeferredToASwitch()
{
    // Only a leaf on finish_task_switch (with or without the compiler's suffix) is a sample delivered late.
    QVERIFY(isDeferredToSwitch(QStringLiteral("main;epoll_wait_[k];schedule_[k];finish_task_switch.isra.0_[k]")));
    QVERIFY(isDeferredToSwitch(QStringLiteral("finish_task_switch_[k]")));
    QVERIFY(!isDeferredToSwitch(QStringLiteral("main;finish_task_switch.isra.0_[k];do_work")));
    QVERIFY(!isDeferredToSwitch(QStringLiteral("main;rpcscope::burnCpu")));
    QVERIFY(!isDeferredToSwitch(QStringLiteral("main;my_finish_task_switch")));
    QVERIFY(!isDeferredToSwitch(QString()));
}

void TestProfile::diffTwoProcessesASide()
{
    // What ab's default restarts give: two server processes a side, processes a few percent apart.
    int found = 0;
    int aaFlagged = 0;
    int aaFlaggedApart = 0;
    for (unsigned seed = 1; seed <= 40; ++seed) {
        std::mt19937 rng(7000 + seed);
        const Profile a = syntheticServer(rng, 2, false, 0.03);
        const Profile b = syntheticServer(rng, 2, true, 0.03);
        const std::vector<FunctionChange> top = diffProfiles(a, b).topChanges(1);
        if (!top.empty() && top.front().name == QStringLiteral("burnCpu") && top.front().selfDiff.low <= kBurnUsPerCall
            && kBurnUsPerCall <= top.front().selfDiff.high)
            ++found;
        if (anyFlagged(diffProfiles(syntheticServer(rng, 2, false, 0.03), syntheticServer(rng, 2, false, 0.03))))
            ++aaFlagged;
        if (anyFlagged(diffProfiles(syntheticServer(rng, 2, false, 0.15), syntheticServer(rng, 2, false, 0.15))))
            ++aaFlaggedApart;
    }
    qInfo("2 a side: burnCpu found in %d of 40; A/A flagged %d of 40 (processes 3%% apart), %d of 40 (15%% apart)",
        found, aaFlagged, aaFlaggedApart);
    QVERIFY2(found >= 38, qPrintable(QString::number(found)));
    QVERIFY2(aaFlagged <= 2, qPrintable(QString::number(aaFlagged)));
    QVERIFY2(aaFlaggedApart <= 2, qPrintable(QString::number(aaFlaggedApart)));
}

void TestProfile::diffOneProcessASide()
{
    int found = 0;
    int aaFlagged = 0;
    for (unsigned seed = 1; seed <= 20; ++seed) {
        std::mt19937 rng(500 + seed);
        const Profile a = syntheticServer(rng, 1, false, 0);
        const Profile b = syntheticServer(rng, 1, true, 0);
        const ProfileDiff diff = diffProfiles(a, b);
        QCOMPARE(diff.method, QStringLiteral("sampling noise only (one process a side)"));
        QCOMPARE(diff.processesA, 1);
        const FunctionChange *burn = findChange(diff, QStringLiteral("burnCpu"));
        QVERIFY(burn);
        // Not seen in A at all, still not known exactly: the interval has a width from A's side too.
        QVERIFY(burn->selfDiff.high - burn->selfDiff.low > 0);
        const std::vector<FunctionChange> top = diff.topChanges(1);
        if (!top.empty() && top.front().name == QStringLiteral("burnCpu") && burn->selfDiff.low <= kBurnUsPerCall
            && kBurnUsPerCall <= burn->selfDiff.high && burn->selfDiff.excludesZero())
            ++found;

        const Profile a2 = syntheticServer(rng, 1, false, 0);
        if (anyFlagged(diffProfiles(a, a2)))
            ++aaFlagged;
    }
    QVERIFY2(found >= 19, qPrintable(QString::number(found)));
    QVERIFY2(aaFlagged <= 1, qPrintable(QString::number(aaFlagged)));

    // One process against three: sampling noise only, saying how many.
    std::mt19937 rng(7);
    const ProfileDiff mixed = diffProfiles(syntheticServer(rng, 1, false), syntheticServer(rng, 3, false));
    QCOMPARE(mixed.method, QStringLiteral("sampling noise only (1 and 3 processes)"));

    // No profiled calls on a side (no calls, or a unit that cannot be known): nothing can be judged.
    Profile unknownUnit = syntheticServer(rng, 1, false);
    unknownUnit.processes[0].cpuNsPerUnit = 0;
    const ProfileDiff notJudged = diffProfiles(unknownUnit, syntheticServer(rng, 3, true));
    QCOMPARE(notJudged.method, QStringLiteral("not judged (no profiled calls in A)"));
    QCOMPARE(notJudged.processesA, 0);
    QVERIFY(!anyFlagged(notJudged));
    QVERIFY(!notJudged.totalDiff.excludesZero());
}

void TestProfile::flameTree()
{
    FoldedStacks stacks;
    stacks.insert(QStringLiteral("main;a;b"), 3);
    stacks.insert(QStringLiteral("main;a"), 2);
    stacks.insert(QStringLiteral("main;c"), 6);
    stacks.insert(QStringLiteral("main;d"), 5);
    stacks.insert(QStringLiteral("other"), 1);
    stacks.insert(QStringLiteral("main;c;main"), 1); // recursion: a frame of the same name, a node of its own
    const FlameNode root = buildFlameTree(stacks, QStringLiteral("all"));
    QCOMPARE(root.name, QStringLiteral("all"));
    QCOMPARE(root.total, 18.0);
    QCOMPARE(root.self, 0.0);
    QCOMPARE(int(root.children.size()), 2);
    const FlameNode &main = root.children[0];
    QCOMPARE(main.name, QStringLiteral("main"));
    QCOMPARE(main.total, 17.0);
    QCOMPARE(main.self, 0.0);
    QCOMPARE(root.children[1].name, QStringLiteral("other"));
    QCOMPARE(root.children[1].self, 1.0);
    // Heaviest first, ties by name: c 7, then a 5 before d 5.
    QCOMPARE(int(main.children.size()), 3);
    QCOMPARE(main.children[0].name, QStringLiteral("c"));
    QCOMPARE(main.children[0].total, 7.0);
    QCOMPARE(main.children[0].self, 6.0);
    QCOMPARE(main.children[0].children[0].name, QStringLiteral("main"));
    QCOMPARE(main.children[1].name, QStringLiteral("a"));
    QCOMPARE(main.children[1].total, 5.0);
    QCOMPARE(main.children[1].self, 2.0);
    QCOMPARE(main.children[1].children[0].name, QStringLiteral("b"));
    QCOMPARE(main.children[1].children[0].self, 3.0);
    QCOMPARE(main.children[2].name, QStringLiteral("d"));

    const FlameNode empty = buildFlameTree({}, QStringLiteral("nothing"));
    QCOMPARE(empty.total, 0.0);
    QVERIFY(empty.children.empty());
}

void TestProfile::diffFlameTree()
{
    std::mt19937 rng(3);
    Profile a = syntheticServer(rng, 3, false);
    const Profile b = syntheticServer(rng, 3, true);
    a.processes[0].stacks.insert(QStringLiteral("main;gone"), 4); // a frame only A has
    const ProfileDiff diff = diffProfiles(a, b);
    const FoldedStacks usA = a.usPerCall();
    const FoldedStacks usB = b.usPerCall();
    const FlameNode root = buildDiffFlameTree(usA, usB, diff, QStringLiteral("server"));
    QVERIFY(qFuzzyCompare(root.total, b.totalUsPerCall()));
    QVERIFY(qFuzzyCompare(root.baseTotal, a.totalUsPerCall()));
    QCOMPARE(root.change, 1); // 140 against 100 us per call

    const FlameNode *main = child(root, QStringLiteral("main"));
    QVERIFY(main);
    const FlameNode *serve = child(*main, QStringLiteral("serve"));
    QVERIFY(serve);
    const FlameNode *mod0 = child(*serve, QStringLiteral("mod0"));
    QVERIFY(mod0);
    const FlameNode *burn = child(*mod0, QStringLiteral("burnCpu"));
    QVERIFY(burn);
    QCOMPARE(burn->change, 1);
    QCOMPARE(burn->baseTotal, 0.0);
    QVERIFY(std::fabs(burn->total - kBurnUsPerCall) < 4);
    QVERIFY(std::fabs(burn->self - burn->total) < 1e-9);

    // An unchanged function: judged within noise, its widths B's and its base A's.
    const FlameNode *mod1 = child(*serve, QStringLiteral("mod1"));
    QVERIFY(mod1);
    const FlameNode *unchanged = child(*mod1, functionName(1));
    QVERIFY(unchanged);
    QCOMPARE(unchanged->change, 0);
    QVERIFY(std::fabs(unchanged->total - functionUs(1)) < 0.5);
    QVERIFY(std::fabs(unchanged->baseTotal - functionUs(1)) < 0.5);

    // Only in A: kept with B's width 0 and A's base, after B's frames.
    QCOMPARE(main->children.back().name, QStringLiteral("gone"));
    QCOMPARE(main->children.back().total, 0.0);
    QVERIFY(main->children.back().baseTotal > 0);
    QCOMPARE(main->children.front().name, QStringLiteral("serve"));
}

QTEST_GUILESS_MAIN(TestProfile)
#include "tst_profile.moc"
