#pragma once
// Pictures and files for a person to look at, written only on request (RPCSCOPE_SCREENSHOTS names a directory):
// tests leave no files behind otherwise.
#include <QDir>
#include <QFile>
#include <QString>
#include <QTest>
#include <QWidget>

namespace rpcscope::kept {

/// Writes @p data as @p name in $RPCSCOPE_SCREENSHOTS, when set. Fails the calling test when it cannot.
inline void file(const QString &name, const QByteArray &data)
{
    const QString dir = qEnvironmentVariable("RPCSCOPE_SCREENSHOTS");
    if (dir.isEmpty())
        return;
    QFile out(QDir(dir).filePath(name));
    QVERIFY2(out.open(QIODevice::WriteOnly), qPrintable(out.fileName()));
    QVERIFY(out.write(data) == data.size());
    qInfo("kept: %s", qPrintable(out.fileName()));
}

/// @p widget as it is drawn now, as PNG @p name in $RPCSCOPE_SCREENSHOTS, when set.
inline void picture(const QString &name, QWidget *widget)
{
    const QString dir = qEnvironmentVariable("RPCSCOPE_SCREENSHOTS");
    if (dir.isEmpty())
        return;
    const QString path = QDir(dir).filePath(name);
    QVERIFY2(widget->grab().save(path), qPrintable(path));
    qInfo("screenshot: %s", qPrintable(path));
}

} // namespace rpcscope::kept
