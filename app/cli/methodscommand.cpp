#include "methodscommand.h"

#include "cliapp.h"
#include "runflags.h"

#include "scenario/runspec.h"
#include "scenario/scenario.h"
#include "schema/schema.h"

#include <QCommandLineParser>

namespace rpcscope::cli {

int methodsCommand(const QStringList &arguments)
{
    const QString cmd = QStringLiteral("methods");
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "Lists the methods of a schema, one per line as --call takes them (package.Service/Method): from .proto\n"
        "files, protosets, a gRPC server's reflection (TARGET, plaintext), or the built-in bench schema when none\n"
        "is given. --long adds each method's kind (unary, server streaming, ...)."));
    parser.addHelpOption();
    parser.addPositionalArgument(QStringLiteral("target"),
        QStringLiteral("HOST:PORT of a gRPC server to ask by reflection."), QStringLiteral("[TARGET]"));
    parser.addOptions({
        { QStringLiteral("proto"), QStringLiteral(".proto file to load (repeatable)."), QStringLiteral("FILE") },
        { { QStringLiteral("i"), QStringLiteral("import-paths") }, QStringLiteral("Import path (repeatable)."),
            QStringLiteral("DIR") },
        { QStringLiteral("protoset"), QStringLiteral("Compiled descriptors (repeatable)."), QStringLiteral("FILE") },
        { QStringLiteral("long"), QStringLiteral("Add each method's kind.") },
    });
    if (!parser.parse(arguments))
        return usageError(cmd, parser.errorText());
    if (printCommandHelp(parser, cmd))
        return ExitOk;
    const QStringList targets = parser.positionalArguments().mid(1);
    if (targets.size() > 1)
        return usageError(cmd, QStringLiteral("one target at most, got %1").arg(targets.size()));
    Scenario scenario;
    scenario.protos = parser.values(QStringLiteral("proto"));
    scenario.importPaths = parser.values(QStringLiteral("import-paths"));
    scenario.protosets = parser.values(QStringLiteral("protoset"));
    RunSpec spec;
    spec.transport.kind = TransportKind::Grpc;
    spec.server = targets.isEmpty() ? RunServer::Builtin : RunServer::Address;
    spec.target.timeout = std::chrono::seconds(5);
    ScenarioProblem problem;
    QString details;
    const std::optional<Schema> schema = loadRunSchema(scenario, spec, targets.value(0), &problem, &details);
    if (!schema) {
        if (!details.isEmpty())
            err() << details << '\n';
        if (problem.runtime) {
            err() << "rpcscope-cli " << cmd << ": " << problem.message << '\n';
            return ExitRuntime;
        }
        return usageError(cmd, describeForCli(problem, scenario));
    }
    const bool longForm = parser.isSet(QStringLiteral("long"));
    for (const ServiceInfo &service : schema->services()) {
        for (const MethodInfo &method : service.methods)
            out() << method.fullName() << (longForm ? QLatin1Char('\t') + method.kindName() : QString()) << '\n';
    }
    out().flush();
    return ExitOk;
}

} // namespace rpcscope::cli
