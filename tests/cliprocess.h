#pragma once
// What the process tests of rpcscope-cli share: run the real binary (RPCSCOPE_CLI) and take what it printed.
#include <QProcess>
#include <QString>
#include <QStringList>

/// What one rpcscope-cli process printed, and its exit code (-1: timed out and killed; -2: crashed).
struct CliResult {
    int exitCode;
    QString out;
    QString err;
};

inline CliResult runCliProcess(const QStringList &arguments, int timeoutMs = 60000)
{
    QProcess process;
    process.start(QStringLiteral(RPCSCOPE_CLI), arguments);
    if (!process.waitForFinished(timeoutMs)) {
        process.kill();
        process.waitForFinished();
        return { -1, QString(), QStringLiteral("timed out") };
    }
    return { process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -2,
        QString::fromUtf8(process.readAllStandardOutput()), QString::fromUtf8(process.readAllStandardError()) };
}
