#pragma once

#include <QString>
#include <QStringView>

#include <chrono>
#include <optional>

namespace rpcscope {

/**
 * Parses a duration the way ghz and Go spell it: "250ms", "1.5s", "1m30s", "2h", "100us"/"100µs", "10ns".
 * A bare number is rejected (ambiguous unit). Returns std::nullopt and sets @p error on bad input.
 */
std::optional<std::chrono::nanoseconds> parseDuration(QStringView text, QString *error = nullptr);

/**
 * Parses a wall-clock time: RFC 3339 with its offset ("2026-12-03T15:00:00Z", "2026-12-03T16:00:00.5+01:00") or Unix
 * seconds ("1796310000", "1796310000.25"). Returns std::nullopt and sets @p error on bad input (a time without an
 * offset is refused: whose clock would it be?).
 */
std::optional<std::chrono::system_clock::time_point> parseWallTime(QStringView text, QString *error = nullptr);

/**
 * Parses a byte size: "1024", "1KiB", "10MiB", "1GiB", "1kB" (1000), "1MB" (10^6), "512B".
 * Returns std::nullopt and sets @p error on bad input.
 */
std::optional<qint64> parseByteSize(QStringView text, QString *error = nullptr);

/// "830 ns", "12.3 us", "4.56 ms", "1.23 s": three significant digits, unit picked by magnitude.
QString formatDuration(std::chrono::nanoseconds value);
/// The same, from a value in nanoseconds that may be fractional.
QString formatNanos(double nanos);
/// "512 B", "1.0 KiB", "10.0 MiB".
QString formatBytes(double bytes);

/// Reads a threshold like "5%" or "0.05" into a fraction in [0, 1) ("5" is 5%, as is "0.05"); false with @p error.
bool parseFraction(const QString &text, double *fraction, QString *error);

} // namespace rpcscope
