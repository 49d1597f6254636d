#include "singlecall.h"

#include "codec/messagejson.h"
#include "metrics/callstatus.h"

#include <condition_variable>
#include <mutex>

namespace rpcscope {

namespace {

/// Collects one call's end and messages; told on a transport thread, read by the waiting one.
class OneCallSink final : public CallSink {
public:
    OneCallSink(std::vector<Expectation> expectations, const ExpectedStatuses &expectedStatuses)
        : m_expectations(std::move(expectations))
    {
        m_result.expectedStatuses = expectedStatuses;
    }

    void callDone(int /*slot*/, CallOutcome &outcome) override
    {
        const auto now = std::chrono::steady_clock::now();
        std::lock_guard lock(m_mutex);
        if (m_result.answered)
            return;
        m_result.answered = true;
        m_result.latency = now - m_started;
        m_result.status = outcome.status;
        m_result.errorMessage = outcome.errorMessage;
        m_result.bytesSent = outcome.bytesSent;
        m_result.bytesReceived = outcome.bytesReceived;
        if (m_result.status == CallStatus::Ok && !m_result.expectedStatuses.has(CallStatus::Ok)) {
            m_result.status = CallStatus::UnexpectedReply;
            m_result.errorMessage = "ended OK, but --expect-status wanted "
                + m_result.expectedStatuses.names().join(QStringLiteral(" or ")).toStdString();
        }
        if (outcome.reply) { // decoded while the reply is still the slot's to lend
            m_result.replies.push_back(messageToJson(*outcome.reply, true));
            if (outcome.status == CallStatus::Ok)
                checkExpectations(*outcome.reply);
        } else if (!m_streamChecks.empty() && outcome.status == CallStatus::Ok) {
            // A stream: each expectation held when it held for every message.
            for (const SingleCallResult::Checked &checked : m_streamChecks) {
                if (!checked.held && m_result.status == CallStatus::Ok) {
                    m_result.status = CallStatus::UnexpectedReply;
                    m_result.errorMessage = "a message failed --expect " + checked.expectation.toStdString();
                }
            }
            m_result.expectations = std::move(m_streamChecks);
        }
        m_result.headers = std::move(outcome.headers);
        m_result.trailers = std::move(outcome.trailers);
        m_done.notify_all();
    }

    void messageReceived(
        int /*slot*/, MessageTiming /*timing*/, int64_t latencyNs, const google::protobuf::Message *message) override
    {
        std::lock_guard lock(m_mutex);
        if (m_result.answered)
            return;
        m_result.replies.push_back(message ? messageToJson(*message, true) : QByteArray());
        m_result.messageLatencies.emplace_back(latencyNs);
        if (!message || m_expectations.empty())
            return;
        if (m_streamChecks.empty()) {
            for (const Expectation &expectation : m_expectations)
                m_streamChecks.push_back({ expectation.text(), true, QString() });
        }
        for (size_t i = 0; i < m_expectations.size(); ++i) {
            SingleCallResult::Checked &checked = m_streamChecks[i];
            QString got;
            if (checked.held && !m_expectations[i].check(*message, &got)) { // the first message that fails it
                checked.held = false;
                checked.got = QStringLiteral("%1 (message %2)").arg(got).arg(m_result.replies.size());
            }
        }
    }

    void started() { m_started = std::chrono::steady_clock::now(); }

    bool waitUntil(std::chrono::steady_clock::time_point deadline)
    {
        std::unique_lock lock(m_mutex);
        return m_done.wait_until(lock, deadline, [this] { return m_result.answered; });
    }

    SingleCallResult take()
    {
        std::lock_guard lock(m_mutex);
        return std::move(m_result);
    }

private:
    void checkExpectations(const google::protobuf::Message &reply)
    {
        for (const Expectation &expectation : m_expectations) {
            SingleCallResult::Checked checked;
            checked.expectation = expectation.text();
            checked.held = expectation.check(reply, &checked.got);
            if (!checked.held && m_result.status == CallStatus::Ok) {
                m_result.status = CallStatus::UnexpectedReply;
                m_result.errorMessage = "reply failed --expect " + expectation.text().toStdString();
            }
            m_result.expectations.push_back(std::move(checked));
        }
    }

    const std::vector<Expectation> m_expectations; ///< a copy: a sink left behind may still be told of its call
    std::vector<SingleCallResult::Checked> m_streamChecks; ///< a stream's, over the messages so far
    std::mutex m_mutex;
    std::condition_variable m_done;
    std::chrono::steady_clock::time_point m_started;
    SingleCallResult m_result;
};

} // namespace

std::chrono::nanoseconds sendOnceWait(std::chrono::nanoseconds timeout)
{
    if (timeout.count() > 0)
        return timeout + std::chrono::seconds(1);
    return std::chrono::seconds(30);
}

SingleCallResult sendOnce(Transport &transport, std::chrono::nanoseconds wait,
    const std::vector<Expectation> &expectations, const ExpectedStatuses &expectedStatuses)
{
    auto sink = std::make_unique<OneCallSink>(expectations, expectedStatuses);
    std::unique_ptr<CallSlot> slot = transport.makeSlot(0, sink.get());
    sink->started();
    slot->start(0);
    if (sink->waitUntil(std::chrono::steady_clock::now() + wait))
        return sink->take();
    slot->cancel();
    if (!sink->waitUntil(std::chrono::steady_clock::now() + std::chrono::seconds(1))) {
        // The transport did not end it even when cancelled. The slot and the sink must outlive the call that may
        // still report, so both are left behind (a one-off leak in a failure case rather than a crash).
        (void)slot.release();
        (void)sink.release();
        SingleCallResult result;
        result.status = CallStatus::Cancelled;
        result.errorMessage = "no answer within the wait, and the call did not end when cancelled";
        return result;
    }
    SingleCallResult result = sink->take();
    result.answered = false;
    result.status = CallStatus::DeadlineExceeded;
    result.errorMessage = "no answer within the wait; the call was cancelled";
    return result;
}

} // namespace rpcscope
