#pragma once

#include <QString>

#include <chrono>
#include <optional>

namespace rpcscope {

/**
 * A codec baseline of the user's own, for a matrix stack whose server is not rpcscope's: a command that times one
 * call's codec work in the server's own language and libraries (decode the request, run the method, encode the
 * reply) and prints it. Run once per payload, with `{payload}` in any of its words replaced by the payload variant
 * ("nums=1000", empty for the request as given); split as a shell would, but no shell runs it. Its last non-empty
 * line of standard output is the time per call: a duration (`398us`, `1.2ms`) or a bare number of nanoseconds.
 */
struct BaselineCommand {
    QString command;
    std::chrono::milliseconds timeout { 120'000 };
    /// The time per call it printed; std::nullopt with @p error saying what went wrong (it did not start, failed,
    /// timed out, or printed no time), its output quoted.
    std::optional<std::chrono::nanoseconds> run(const QString &payload, QString *error) const;
};

} // namespace rpcscope
