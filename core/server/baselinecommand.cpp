#include "baselinecommand.h"

#include "servercommand.h"
#include "util/printable.h"
#include "util/units.h"

#include <QProcess>

#include <cmath>

namespace rpcscope {

std::optional<std::chrono::nanoseconds> BaselineCommand::run(const QString &payload, QString *error) const
{
    auto fail = [&](const QString &why) -> std::optional<std::chrono::nanoseconds> {
        if (error)
            *error = QStringLiteral("baseline command \"%1\": %2").arg(printable(command), why);
        return std::nullopt;
    };
    QString why;
    std::optional<QStringList> words = splitCommandLine(command, &why);
    if (!words)
        return fail(why);
    if (words->isEmpty())
        return fail(QStringLiteral("empty"));
    for (QString &word : *words)
        word.replace(QStringLiteral("{payload}"), payload);
    QProcess process;
    process.setProgram(words->takeFirst());
    process.setArguments(*words);
    process.setStandardInputFile(QProcess::nullDevice());
    process.start();
    if (!process.waitForStarted())
        return fail(QStringLiteral("did not start: %1").arg(process.errorString()));
    if (!process.waitForFinished(static_cast<int>(timeout.count()))) {
        process.kill();
        process.waitForFinished(1000);
        return fail(QStringLiteral("no answer within %1 s").arg(timeout.count() / 1000));
    }
    const QString output = QString::fromUtf8(process.readAllStandardOutput());
    auto lastLine = [](const QString &text) {
        const QStringList lines = text.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        for (qsizetype i = lines.size(); i-- > 0;) {
            if (!lines.at(i).trimmed().isEmpty())
                return lines.at(i).trimmed();
        }
        return QString();
    };
    if (process.exitStatus() != QProcess::NormalExit || process.exitCode() != 0) {
        const QString said = lastLine(QString::fromUtf8(process.readAllStandardError()));
        return fail(QStringLiteral("exited with %1%2")
                        .arg(process.exitStatus() == QProcess::NormalExit ? QString::number(process.exitCode())
                                                                          : QStringLiteral("a crash"),
                            said.isEmpty() ? QString() : QStringLiteral(": ") + printable(said)));
    }
    const QString last = lastLine(output);
    bool number = false;
    const double nanos = last.toDouble(&number);
    if (number && nanos > 0 && nanos < 1e15)
        return std::chrono::nanoseconds(static_cast<int64_t>(std::llround(nanos)));
    const std::optional<std::chrono::nanoseconds> duration = parseDuration(last, nullptr);
    if (duration && duration->count() > 0)
        return duration;
    return fail(QStringLiteral("its last line \"%1\" is not a time per call (e.g. 398us, 1.2ms, or nanoseconds)")
                    .arg(printable(last.left(200))));
}

} // namespace rpcscope
