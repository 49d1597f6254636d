#include "callreport.h"

#include "metrics/callstatus.h"
#include "util/printable.h"
#include "util/units.h"

namespace rpcscope {

namespace {

void appendLines(QString *text, const char *title, const MetadataLines &lines)
{
    if (lines.empty())
        return;
    *text += QLatin1String(title) + QStringLiteral(":\n");
    for (const auto &[key, value] : lines)
        *text += QStringLiteral("  ") + printable(QString::fromStdString(key)) + QStringLiteral(": ")
            + printable(QString::fromStdString(value)) + QLatin1Char('\n');
}

} // namespace

QString formatSingleCall(const CallDescription &call, const SingleCallResult &result)
{
    QString text = QStringLiteral("Call %1 over %2 (%3)").arg(call.method, call.transport, call.codec);
    if (!call.target.isEmpty())
        text += QStringLiteral(" to ") + call.target;
    text += QStringLiteral("\nStatus: ") + callStatusName(result.status);
    if (!result.errorMessage.empty())
        text += QStringLiteral(": ") + printable(QString::fromStdString(result.errorMessage), true);
    if (!result.expectedStatuses.onlyOk() && result.asExpected())
        text += QStringLiteral(" (expected, --expect-status)");
    text += QLatin1Char('\n');
    if (result.answered)
        text += QStringLiteral("Latency: ") + formatDuration(result.latency)
            + (call.inProcess ? QString() : QStringLiteral(" (connecting included)")) + QStringLiteral(", sent ")
            + formatBytes(double(result.bytesSent)) + QStringLiteral(", received ")
            + formatBytes(double(result.bytesReceived)) + QLatin1Char('\n');
    appendLines(&text, "Headers", result.headers);
    if (call.clientStreams || call.serverStreams) {
        text += QStringLiteral("Messages received: %1\n").arg(result.replies.size());
        for (size_t i = 0; i < result.replies.size(); ++i) {
            text += QStringLiteral("Message %1").arg(i + 1);
            // What the time is measured from, as a load run measures it (StreamOptions).
            const auto latency = i < result.messageLatencies.size() ? result.messageLatencies[i].count() : -1;
            if (latency >= 0)
                text += QStringLiteral(" (") + formatDuration(std::chrono::nanoseconds(latency))
                    + (call.clientStreams ? QStringLiteral(" after its request")
                            : i == 0      ? QStringLiteral(" after the call began")
                                          : QStringLiteral(" after the previous message"))
                    + QLatin1Char(')');
            text += QStringLiteral(":\n")
                + (result.replies[i].isEmpty() ? QStringLiteral("(not decoded)")
                                               : printable(QString::fromUtf8(result.replies[i]), true))
                + QLatin1Char('\n');
        }
    } else if (!result.replies.empty()) {
        text += QStringLiteral("Reply:\n") + printable(QString::fromUtf8(result.replies.front()), true)
            + QLatin1Char('\n');
    } else if (result.status == CallStatus::Ok) {
        text += QStringLiteral("Reply: not decoded (--discard-response)\n");
    }
    appendLines(&text, "Trailers", result.trailers);
    if (!result.expectations.empty()) {
        text += QStringLiteral("Expect:\n");
        for (const SingleCallResult::Checked &checked : result.expectations)
            text += QStringLiteral("  ") + checked.expectation
                + (checked.held ? QStringLiteral(": held\n")
                                : QStringLiteral(": FAILED, got ") + printable(checked.got) + u'\n');
    }
    return text;
}

} // namespace rpcscope
