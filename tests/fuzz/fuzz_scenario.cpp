// The scenario loader: Scenario::fromJson() in both DocumentCheck modes, the round trip through toJson() a saved
// document makes, and prepareRun() on every document that parses.

#include "fuzzapp.h"

#include "scenario/runspec.h"
#include "scenario/scenario.h"

#include <QFile>
#include <QTemporaryDir>

#include <cstdio>
#include <cstdlib>
#include <sys/stat.h>

using namespace rpcscope;

namespace {

QString g_folder; ///< small files for prepareRun() to read: request.json, ca.pem

/// prepareRun() reads the request and TLS files a document names. The fuzzer resolves them against a folder of
/// files, as Scenario::load() resolves them against the document's, and keeps them there (an absolute path or ".."
/// could name the machine's files). The folder holds the inputs a careless document may name besides small files:
/// a FIFO nobody writes ("pipe"), an endless device ("zero", a link to /dev/zero) and a file above every reader's
/// limit ("huge", sparse); each must be refused by name, never block or be read to the end. False when a path leaves
/// the folder.
bool keepInFuzzFolder(Scenario *s)
{
    for (QString *path : { &s->caCert, &s->clientCert, &s->clientKey, &s->requestBinaryFile, &s->requestFile }) {
        if (path->isEmpty())
            continue;
        if (path->startsWith(u'/') || path->contains(QStringLiteral("..")) || path->startsWith(u'~'))
            return false;
        *path = g_folder + u'/' + *path;
    }
    return true;
}

void check(const QByteArray &json, DocumentCheck mode)
{
    QString error;
    const std::optional<Scenario> scenario = Scenario::fromJson(json, &error, mode);
    if (!scenario) {
        if (error.isEmpty())
            abort(); // a refusal always says why
        return;
    }
    // A document that opens saves and reopens unchanged.
    const QByteArray saved = scenario->toJson();
    const std::optional<Scenario> reopened = Scenario::fromJson(saved, &error, mode);
    if (!reopened || !(*reopened == *scenario)) {
        fprintf(stderr, "does not round-trip: %s\n%s\n", qPrintable(error), saved.constData());
        abort();
    }
    Scenario resolved = *scenario;
    if (!keepInFuzzFolder(&resolved))
        return;
    ScenarioProblem problem;
    if (!prepareRun(resolved, &problem) && problem.message.isEmpty())
        abort();
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz::makeApplication(argc, argv);
    static QTemporaryDir folder;
    g_folder = folder.path();
    QFile request(folder.filePath(QStringLiteral("request.json")));
    if (request.open(QIODevice::WriteOnly))
        request.write(R"({"nums": [1, 2, 3]})");
    request.close();
    QFile pem(folder.filePath(QStringLiteral("ca.pem")));
    if (pem.open(QIODevice::WriteOnly))
        pem.write("-----BEGIN CERTIFICATE-----\nnot one\n-----END CERTIFICATE-----\n");
    pem.close();
    // The inputs no reader may wait on or read whole (util/inputfile.h).
    ::mkfifo(QFile::encodeName(folder.filePath(QStringLiteral("pipe"))).constData(), 0600);
    QFile::link(QStringLiteral("/dev/zero"), folder.filePath(QStringLiteral("zero")));
    QFile huge(folder.filePath(QStringLiteral("huge")));
    if (huge.open(QIODevice::WriteOnly))
        huge.resize((1LL << 30) + 1);
    huge.close();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArray json = QByteArray::fromRawData(reinterpret_cast<const char *>(data), qsizetype(size));
    check(json, DocumentCheck::Values);
    check(json, DocumentCheck::ShapeOnly);
    return 0;
}
