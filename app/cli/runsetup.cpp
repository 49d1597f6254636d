#include "runsetup.h"

#include "cliapp.h"
#include "runflags.h"

#include <QCoreApplication>

namespace rpcscope::cli {

int prepareSession(const QString &cmd, RunSession *session)
{
    session->setStartingHook([](const QString &command) {
        err() << "Starting " << command << '\n';
        err().flush();
    });
    ScenarioProblem problem;
    QString details;
    const bool prepared = session->prepare(&problem, &details);
    for (const QString &note : session->notes())
        err() << "rpcscope-cli " << cmd << ": note: " << note << '\n';
    if (prepared)
        return ExitOk;
    if (!details.isEmpty())
        err() << details << '\n';
    const QString text = describeForCli(problem, session->scenario())
        + (details.isEmpty() ? QString() : QStringLiteral(", see above"));
    if (problem.runtime) { // a server did not start or answer: nothing wrong with what was given
        err() << "rpcscope-cli " << cmd << ": " << text << '\n';
        return ExitRuntime;
    }
    return usageError(cmd, text);
}

} // namespace rpcscope::cli
