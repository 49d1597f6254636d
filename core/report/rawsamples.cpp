#include "rawsamples.h"

#include "util/outputfile.h"

#include "metrics/callstatus.h"

#include <QIODevice>

namespace rpcscope {

bool writeRawSamplesCsv(QIODevice &device, const std::vector<RawSample> &samples)
{
    QByteArray text = "sent_ns,latency_us,status\n";
    for (const RawSample &sample : samples) {
        text += QByteArray::number(static_cast<qulonglong>(sample.sentNs)) + ',' + QByteArray::number(sample.latencyUs)
            + ',' + callStatusName(static_cast<int>(sample.status)).toLatin1() + '\n';
        if (text.size() > (1 << 20)) {
            if (device.write(text) != text.size())
                return false;
            text.clear();
        }
    }
    return device.write(text) == text.size();
}

bool saveRawSamplesCsv(const QString &path, const std::vector<RawSample> &samples, QString *error)
{
    OutputFile file(path);
    if (!file.open() || !writeRawSamplesCsv(*file.device(), samples)) {
        if (error)
            *error = file.error().isEmpty() ? path + QStringLiteral(": ") + file.device()->errorString() : file.error();
        return false;
    }
    if (!file.commit()) {
        if (error)
            *error = file.error();
        return false;
    }
    return true;
}

} // namespace rpcscope
