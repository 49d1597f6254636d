// run's flags, the Scenario they describe, and core's preparation of it: in process, no QProcess.
#include "cli/cliapp.h"
#include "cli/runcommand.h"
#include "cli/runflags.h"

#include "scenario/runspec.h"
#include "scenario/scenario.h"
#include "store/runstore.h"
#include "store/secrets.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

using namespace rpcscope;
using namespace rpcscope::cli;

namespace {

QString dashed(const QString &name)
{
    return (name.size() == 1 ? QStringLiteral("-") : QStringLiteral("--")) + name;
}

/// The scenario the flags @p args describe over @p base; an empty optional with @p error when they do not.
std::optional<Scenario> fromFlags(const QStringList &args, const Scenario &base = Scenario(), QString *error = nullptr)
{
    QCommandLineParser parser;
    addRunOptions(parser);
    QString why;
    if (!parser.parse(QStringList { QStringLiteral("rpcscope-cli"), QStringLiteral("run") } + args)) {
        if (error)
            *error = parser.errorText();
        return std::nullopt;
    }
    return scenarioFromFlags(parser, base, error ? error : &why);
}

/// The value at @p field ("load.rate_schedule.kind") in a document; the first element of an array on the way.
QJsonValue valueAt(const QJsonObject &document, const QString &field)
{
    QJsonValue at = document;
    for (const QString &key : field.split(QLatin1Char('.'))) {
        if (at.isArray())
            at = at.toArray().first();
        at = at.toObject().value(key);
    }
    return at;
}

} // namespace

class TestRunFlags : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        // As rpcscope-cli's main does first: a run waits for SIGINT/SIGTERM on a thread of its own (sigwait).
        blockTerminationSignals();
    }

    void everyFlagHasAFieldThatRoundTripsThroughADocument()
    {
        Scenario base;
        base.target.clear(); // the command line's own default: no target
        QVERIFY(runFlags().size() >= 60);
        QSet<QString> names;
        for (const RunFlag &flag : runFlags()) {
            const QString name = dashed(flag.names.first());
            QVERIFY2(!names.contains(name), qPrintable(name + QStringLiteral(" twice in the table")));
            names.insert(name);
            QVERIFY2(!flag.field.isEmpty() && !flag.help.isEmpty() && flag.set, qPrintable(name));
            QCOMPARE(flag.valueName.isEmpty(), flag.example.isEmpty());
            QStringList args;
            if (name == u"-o") // -o names the file of the -O before it
                args << QStringLiteral("-O") << QStringLiteral("csv");
            if (name == u"--cert") // a client certificate and its key go together
                args << QStringLiteral("--key") << QStringLiteral("client.key");
            if (name == u"--key")
                args << QStringLiteral("--cert") << QStringLiteral("client.pem");
            args << name;
            if (!flag.valueName.isEmpty())
                args << flag.example;
            QString error;
            const std::optional<Scenario> s = fromFlags(args, base, &error);
            QVERIFY2(s, qPrintable(name + QStringLiteral(": ") + error));
            QVERIFY2(*s != base, qPrintable(name + QStringLiteral(" changed nothing")));
            if (name == u"--profile-pid" || name == u"--client" || name == u"--client-env") {
                // The command line's alone: a process id, or a command to run, is never written to a document (nor
                // read from one).
                QCOMPARE(s->toJson(), base.toJson());
                QCOMPARE(flagFor(flag.field), name);
                continue;
            }
            // Written and read back, the document is the same scenario...
            const std::optional<Scenario> back = Scenario::fromJson(s->toJson(), &error);
            QVERIFY2(back, qPrintable(name + QStringLiteral(": ") + error));
            QVERIFY2(*back == *s, qPrintable(name + QStringLiteral(" is lost in the document")));
            // ...and the field the table names is where the value went.
            const QJsonObject document = QJsonDocument::fromJson(s->toJson()).object();
            const QJsonValue value = valueAt(document, flag.field);
            QVERIFY2(!value.isUndefined() && !value.isNull(), qPrintable(name + QStringLiteral(" -> ") + flag.field));
            const QJsonObject defaults = QJsonDocument::fromJson(base.toJson()).object();
            QVERIFY2(valueAt(defaults, flag.field) != value, qPrintable(flag.field + QStringLiteral(" unchanged")));
            // A problem with the field is told as the flag.
            QCOMPARE(flagFor(flag.field), name);
        }
    }

    void chartAfterAnOutputIsItsOwn()
    {
        QString error;
        const std::optional<Scenario> s = fromFlags(
            { QStringLiteral("--chart"), QStringLiteral("spectrum"), QStringLiteral("-O"), QStringLiteral("png"),
                QStringLiteral("-o"), QStringLiteral("a.png"), QStringLiteral("--chart"), QStringLiteral("throughput"),
                QStringLiteral("-O"), QStringLiteral("csv"), QStringLiteral("-o"), QStringLiteral("a.csv"),
                QStringLiteral("-O"), QStringLiteral("svg"), QStringLiteral("-o"), QStringLiteral("b.svg") },
            Scenario(), &error);
        QVERIFY2(s, qPrintable(error));
        QCOMPARE(s->chart, QStringLiteral("spectrum")); // every rendered output without a chart of its own
        QCOMPARE(s->exports.size(), 3);
        QCOMPARE(s->exports.at(0).chart, QStringLiteral("throughput"));
        QVERIFY(s->exports.at(1).chart.isEmpty() && s->exports.at(2).chart.isEmpty());
        // Kept through a document.
        const std::optional<Scenario> back = Scenario::fromJson(s->toJson(), &error);
        QVERIFY2(back && *back == *s, qPrintable(error));
        QVERIFY(!Scenario::fromJson(
            R"({"rpcscope_scenario":1,"output":{"exports":[{"format":"png","file":"a.png","chart":3}]}})", &error));
        QVERIFY2(error.contains(QStringLiteral("output.exports[0]")), qPrintable(error));
    }

    void flagsOverrideADocumentAndRepeatableOnesAdd()
    {
        Scenario document;
        document.concurrency = 10;
        document.fills = { QStringLiteral("payload=1KiB") };
        document.request = "{\"payload\":\"aGk=\"}";
        document.security = QStringLiteral("plaintext");
        const std::optional<Scenario> s
            = fromFlags({ QStringLiteral("-c"), QStringLiteral("3"), QStringLiteral("--fill"),
                            QStringLiteral("nums=10"), QStringLiteral("-b"), QStringLiteral("/tmp/r.bin"),
                            QStringLiteral("--cacert"), QStringLiteral("/tmp/ca.pem") },
                document);
        QVERIFY(s);
        QCOMPARE(s->concurrency, 3);
        QCOMPARE(s->fills, (QStringList { QStringLiteral("payload=1KiB"), QStringLiteral("nums=10") }));
        // The request comes one way: the flag's replaces the document's.
        QVERIFY(s->request.isEmpty());
        QCOMPARE(s->requestBinaryFile, QStringLiteral("/tmp/r.bin"));
        // A TLS flag asks for TLS over the document's plaintext.
        QCOMPARE(s->security, QStringLiteral("auto"));
        QCOMPARE(s->caCert, QStringLiteral("/tmp/ca.pem"));
    }

    void contradictionsNameTheFlags_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("expected");
        QTest::newRow("two requests") << QStringList { QStringLiteral("-d"), QStringLiteral("{}"), QStringLiteral("-D"),
            QStringLiteral("r.json") } << QStringLiteral("give the request with one of -d, -D or -b");
        QTest::newRow("insecure tls") << QStringList { QStringLiteral("--insecure"), QStringLiteral("--skipTLS") }
                                      << QStringLiteral("--insecure contradicts the TLS flags");
        QTest::newRow("unpaired -o") << QStringList { QStringLiteral("-O"), QStringLiteral("csv"), QStringLiteral("-O"),
            QStringLiteral("json"), QStringLiteral("-o"), QStringLiteral("a.csv") }
                                     << QStringLiteral("-O/-o: give them in pairs");
        QTest::newRow("not a count") << QStringList { QStringLiteral("-c"), QStringLiteral("many") }
                                     << QStringLiteral("-c: expected a number from 1 to 100000, got \"many\"");
        QTest::newRow("metadata") << QStringList { QStringLiteral("-m"), QStringLiteral("[1]") }
                                  << QStringLiteral("-m/--metadata: expected a JSON object");
        QTest::newRow("target twice") << QStringList { QStringLiteral("--builtin"), QStringLiteral("localhost:1") }
                                      << QStringLiteral("give either a target or --builtin");
    }
    void contradictionsNameTheFlags()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, expected);
        QString error;
        QVERIFY(!fromFlags(args, Scenario(), &error));
        QVERIFY2(error.contains(expected), qPrintable(error));
    }

    void defaultsFollowWhatWasGiven()
    {
        // A run bounded by time needs no default count; a concurrency schedule sizes its own callers.
        Scenario base;
        std::optional<Scenario> s = fromFlags({ QStringLiteral("-z"), QStringLiteral("2s"), QStringLiteral("--call"),
            QStringLiteral("a.B/C"), QStringLiteral("127.0.0.1:1") });
        QVERIFY(s);
        QCOMPARE(s->calls, quint64(0));
        ScenarioProblem problem;
        std::optional<RunSpec> spec = prepareRun(*s, &problem);
        QVERIFY2(spec, qPrintable(problem.text()));
        QCOMPARE(spec->plan.totalCalls, uint64_t(0));
        QCOMPARE(spec->plan.duration, std::chrono::nanoseconds(std::chrono::seconds(2)));
        QCOMPARE(spec->server, RunServer::Address);
        QVERIFY(!spec->target.tls.enabled); // loopback: plaintext
        s = fromFlags({ QStringLiteral("--concurrency-schedule"), QStringLiteral("step"),
            QStringLiteral("--concurrency-start"), QStringLiteral("2"), QStringLiteral("--concurrency-step"),
            QStringLiteral("3"), QStringLiteral("--concurrency-end"), QStringLiteral("11"), QStringLiteral("--call"),
            QStringLiteral("a.B/C"), QStringLiteral("--builtin") });
        QVERIFY(s);
        spec = prepareRun(*s, &problem);
        QVERIFY2(spec, qPrintable(problem.text()));
        QCOMPARE(spec->plan.concurrency, 11);
        QVERIFY(spec->plan.concurrencySchedule);
        QCOMPARE(spec->server, RunServer::Builtin);
        // A remote address is dialled with TLS unless told otherwise.
        s = fromFlags({ QStringLiteral("--call"), QStringLiteral("a.B/C"), QStringLiteral("bench.example.com:443") });
        spec = prepareRun(*s, &problem);
        QVERIFY2(spec, qPrintable(problem.text()));
        QVERIFY(spec->target.tls.enabled);
    }

    void problemsNameTheFieldAndTheCliNamesTheFlag_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("cli");
        const QStringList call { QStringLiteral("--call"), QStringLiteral("a.B/C"), QStringLiteral("--builtin") };
        QTest::newRow("duration") << call + QStringList { QStringLiteral("-z"), QStringLiteral("soon") }
                                  << QStringLiteral("load.duration") << QStringLiteral("-z: ");
        QTest::newRow("warmup") << call + QStringList { QStringLiteral("--warmup"), QStringLiteral("lots") }
                                << QStringLiteral("load.warmup")
                                << QStringLiteral("--warmup: expected a number of calls");
        QTest::newRow("schedule kind") << call
                + QStringList { QStringLiteral("--load-schedule"), QStringLiteral("wave"),
                      QStringLiteral("--load-start"), QStringLiteral("5") }
                                       << QStringLiteral("load.rate_schedule.kind")
                                       << QStringLiteral("--load-schedule: \"wave\" is not const, step or line");
        QTest::newRow("const without rate")
            << call + QStringList { QStringLiteral("--load-schedule"), QStringLiteral("const") }
            << QStringLiteral("load.rate_schedule.kind")
            << QStringLiteral("--load-schedule: a constant schedule needs the rate");
        QTest::newRow("size") << call + QStringList { QStringLiteral("--max-recv-size"), QStringLiteral("huge") }
                              << QStringLiteral("load.max_receive_size") << QStringLiteral("--max-recv-size: ");
        QTest::newRow("cpus") << call + QStringList { QStringLiteral("--client-cpus"), QStringLiteral("x") }
                              << QStringLiteral("pinning.client_cpus") << QStringLiteral("--client-cpus: ");
        QTest::newRow("server cpus on an address") << QStringList { QStringLiteral("--call"), QStringLiteral("a.B/C"),
            QStringLiteral("127.0.0.1:1"), QStringLiteral("--server-cpus"), QStringLiteral("1") }
                                                   << QStringLiteral("pinning.server_cpus")
                                                   << QStringLiteral("--server-cpus: is for a server rpcscope starts");
        QTest::newRow("check") << call + QStringList { QStringLiteral("--check"), QStringLiteral("p99<fast") }
                               << QStringLiteral("checks[0]") << QStringLiteral("--check: ");
        QTest::newRow("export format") << call + QStringList { QStringLiteral("-O"), QStringLiteral("xls") }
                                       << QStringLiteral("output.exports[0].format")
                                       << QStringLiteral("-O: \"xls\" is not one of");
        QTest::newRow("threshold alone") << call
                + QStringList { QStringLiteral("--compare-threshold"), QStringLiteral("3%") }
                                         << QStringLiteral("history.compare_threshold")
                                         << QStringLiteral("--compare-threshold: needs a baseline");
        QTest::newRow("no method") << QStringList { QStringLiteral("--builtin") } << QStringLiteral("method")
                                   << QStringLiteral("--call is required");
        QTest::newRow("tls to builtin")
            << call + QStringList { QStringLiteral("--skipTLS") } << QStringLiteral("connection")
            << QStringLiteral(
                   "the TLS flags (--cacert, --cert, --key, --cname, --skipTLS): the built-in server serves plaintext");
        QTest::newRow("grpc-timeout as metadata")
            << call + QStringList { QStringLiteral("-m"), QStringLiteral(R"({"grpc-timeout":"1S"})") }
            << QStringLiteral("metadata")
            << QStringLiteral("-m: \"grpc-timeout\" is a header gRPC sets itself; give the deadline with --timeout");
        QTest::newRow("te as metadata") << call + QStringList { QStringLiteral("-m"), QStringLiteral(R"({"TE":"x"})") }
                                        << QStringLiteral("metadata")
                                        << QStringLiteral("-m: \"TE\" is a header gRPC sets itself");
        QTest::newRow("missing request file")
            << call + QStringList { QStringLiteral("-D"), QStringLiteral("/nonexistent/r.json") }
            << QStringLiteral("request_file") << QStringLiteral("-D /nonexistent/r.json: ");
    }
    void problemsNameTheFieldAndTheCliNamesTheFlag()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, field);
        QFETCH(QString, cli);
        QString error;
        const std::optional<Scenario> s = fromFlags(args, Scenario(), &error);
        QVERIFY2(s, qPrintable(error));
        ScenarioProblem problem;
        QVERIFY(!prepareRun(*s, &problem));
        QCOMPARE(problem.field, field);
        const QString told = describeForCli(problem, *s);
        QVERIFY2(told.startsWith(cli), qPrintable(told));
    }

    void aRunIsSavedWithItsScenarioDocument()
    {
        // The no-RPC baseline runs in this process: the whole run command, its history and its exit code.
        QTemporaryDir dir;
        const QString db = dir.filePath(QStringLiteral("runs.sqlite"));
        std::optional<Scenario> s = fromFlags({ QStringLiteral("--transport"), QStringLiteral("none"),
            QStringLiteral("--call"), QStringLiteral("rpcscope.bench.v1.Bench/Echo"), QStringLiteral("-d"),
            QStringLiteral("{\"payload\":\"aGk=\"}"), QStringLiteral("-n"), QStringLiteral("300"),
            QStringLiteral("--db"), db, QStringLiteral("--label"), QStringLiteral("in-process"),
            QStringLiteral("--check"), QStringLiteral("errors==0") });
        QVERIFY(s);
        QCOMPARE(runScenario(QStringLiteral("run"), *s), int(ExitOk));
        RunStore store;
        QString error;
        QVERIFY2(store.open(db, &error), qPrintable(error));
        const std::vector<qint64> ids = store.idsWithLabel(QStringLiteral("in-process"), &error);
        QCOMPARE(ids.size(), size_t(1));
        const std::optional<RunRecord> run = store.load(ids.front(), &error);
        QVERIFY2(run, qPrintable(error));
        QCOMPARE(run->snapshot.callsCompleted(), uint64_t(300));
        // The history holds the typed document, not argv: it reads back as the same scenario.
        QVERIFY(!run->scenario.contains(QStringLiteral("arguments")));
        const std::optional<Scenario> stored = Scenario::fromJson(QJsonDocument(run->scenario).toJson(), &error);
        QVERIFY2(stored, qPrintable(error));
        QCOMPARE(stored->calls, quint64(300));
        QCOMPARE(stored->checks, QStringList { QStringLiteral("errors==0") });
        // A check that fails makes the exit code say so.
        s->checks = { QStringLiteral("p50<1ns") };
        s->labels.clear();
        s->db.clear();
        QCOMPARE(runScenario(QStringLiteral("run"), *s), int(ExitRegression));
    }

    void aSharedDocumentTouchesFilesOutsideItsFolderOnlyWithTrust()
    {
        QTemporaryDir root;
        QVERIFY(QDir(root.path()).mkdir(QStringLiteral("shared")));
        const QString victim = root.filePath(QStringLiteral("bashrc"));
        QFile file(victim);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("keep me\n");
        file.close();
        const QString path = root.filePath(QStringLiteral("shared/x.rpcscope.json"));
        QFile doc(path);
        QVERIFY(doc.open(QIODevice::WriteOnly));
        doc.write(R"({"rpcscope_scenario":1,"method":"rpcscope.bench.v1.Bench/Echo","transport":"none",
            "request":"{}","raw_samples":"../bashrc","load":{"calls":3}})");
        doc.close();
        auto arguments = [&](const QStringList &more) {
            return QStringList { QStringLiteral("rpcscope-cli"), QStringLiteral("run"), QStringLiteral("--scenario"),
                path }
            + more;
        };
        int code = -1;
        QVERIFY(!scenarioFromArguments(QStringLiteral("run"), arguments({}), &code, false));
        QCOMPARE(code, int(ExitUsage));
        // Run whole, it is refused before anything is written: the file it named is as it was.
        QCOMPARE(runCommand(arguments({})), int(ExitUsage));
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(file.readAll(), QByteArray("keep me\n"));
        file.close();
        // The user's own path for the field replaces the document's: allowed.
        const QString mine = root.filePath(QStringLiteral("mine.csv"));
        const auto replaced = scenarioFromArguments(
            QStringLiteral("run"), arguments({ QStringLiteral("--raw-samples"), mine }), &code, false);
        QVERIFY(replaced);
        QCOMPARE(replaced->rawSamples, mine);
        // ab and matrix read documents the same way.
        QVERIFY(!scenarioFromArguments(QStringLiteral("ab"), arguments({}), &code, true));
        // --trust: the user vouches for the file.
        QCOMPARE(runCommand(arguments({ QStringLiteral("--trust") })), int(ExitOk));
        QVERIFY(file.open(QIODevice::ReadOnly));
        QVERIFY(file.readAll().startsWith("sent_ns")); // what the document asked for, now that the user said so
    }

    void everyOutputIsCheckedBeforeAnyLoadIsSent()
    {
        QTemporaryDir dir;
        const QString db = dir.filePath(QStringLiteral("runs.sqlite"));
        for (const QString &output :
            { dir.path(), QStringLiteral("/proc/version"), QStringLiteral("/no/such/dir/x.json") }) {
            std::optional<Scenario> s = fromFlags({ QStringLiteral("--transport"), QStringLiteral("none"),
                QStringLiteral("--call"), QStringLiteral("rpcscope.bench.v1.Bench/Echo"), QStringLiteral("-d"),
                QStringLiteral("{}"), QStringLiteral("-n"), QStringLiteral("20"), QStringLiteral("--db"), db,
                QStringLiteral("-O"), QStringLiteral("json"), QStringLiteral("-o"), output });
            QVERIFY(s);
            QCOMPARE(runScenario(QStringLiteral("run"), *s), int(ExitUsage));
            QVERIFY2(!QFile::exists(db), qPrintable(output)); // refused before the history was even opened
        }
        QCOMPARE(QDir(dir.path()).entryList(QDir::NoDotAndDotDot | QDir::AllEntries), QStringList()); // nothing left
    }

    void aRunsSecretsAreRedactedAndARedactedValueIsNotSent()
    {
        QTemporaryDir dir;
        const QString db = dir.filePath(QStringLiteral("runs.sqlite"));
        const QString json = dir.filePath(QStringLiteral("run.json"));
        std::optional<Scenario> s = fromFlags({ QStringLiteral("--transport"), QStringLiteral("none"),
            QStringLiteral("--call"), QStringLiteral("rpcscope.bench.v1.Bench/Echo"), QStringLiteral("-d"),
            QStringLiteral("{}"), QStringLiteral("-n"), QStringLiteral("20"), QStringLiteral("-m"),
            QStringLiteral("{\"authorization\":\"Bearer SECRET\",\"x-run\":\"7\"}"), QStringLiteral("--db"), db,
            QStringLiteral("-O"), QStringLiteral("json"), QStringLiteral("-o"), json });
        QVERIFY(s);
        QCOMPARE(runScenario(QStringLiteral("run"), *s), int(ExitOk));
        QFile report(json);
        QVERIFY(report.open(QIODevice::ReadOnly));
        const QByteArray text = report.readAll();
        QVERIFY2(!text.contains("SECRET") && text.contains(redactedValue(QStringLiteral("Bearer SECRET")).toUtf8()),
            text.constData());
        RunStore store;
        QString error;
        QVERIFY2(store.open(db, &error), qPrintable(error));
        const std::optional<RunRecord> run = store.load(1, &error);
        QVERIFY2(run, qPrintable(error));
        QVERIFY(!QJsonDocument(run->scenario).toJson().contains("SECRET"));
        // Run again from the history, the redacted value would be sent as the header: refused, naming it.
        std::optional<Scenario> again = Scenario::fromJson(QJsonDocument(run->scenario).toJson(), &error);
        QVERIFY2(again, qPrintable(error));
        again->db.clear();
        again->exports.clear();
        ScenarioProblem problem;
        QVERIFY(!prepareRun(*again, &problem));
        QCOMPARE(problem.field, QStringLiteral("metadata"));
        QVERIFY2(
            problem.message.contains(QStringLiteral("\"authorization\" was redacted")), qPrintable(problem.message));
        // --keep-secrets: kept, and the run says so.
        s->keepSecrets = true;
        s->exports.clear();
        QCOMPARE(runScenario(QStringLiteral("run"), *s), int(ExitOk));
        const std::optional<RunRecord> kept = store.load(2, &error);
        QVERIFY2(kept, qPrintable(error));
        QVERIFY(QJsonDocument(kept->scenario).toJson().contains("Bearer SECRET"));
        QVERIFY(keepsSecrets(*kept));
    }
};

QTEST_GUILESS_MAIN(TestRunFlags)
#include "tst_runflags.moc"
