#pragma once
// What the in-process CLI tests share: run one command with its output captured.
#include "cli/cliapp.h"

#include <QString>
#include <QStringList>

namespace rpcscope::cli {

/// What one command printed, and its exit code.
struct Printed {
    int code = -1;
    QString out;
    QString err;
};

/// Runs `rpcscope-cli NAME ARGUMENTS...` through @p command in this process, capturing out() and err().
template<typename Command> Printed runPrinted(Command command, const QString &name, const QStringList &arguments)
{
    OutputCapture capture;
    Printed printed;
    printed.code = command(QStringList { QStringLiteral("rpcscope-cli"), name } + arguments);
    printed.out = capture.standardOutput();
    printed.err = capture.standardError();
    return printed;
}

} // namespace rpcscope::cli
