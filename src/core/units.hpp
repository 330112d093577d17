#pragma once

#include <cstdint>
#include <string>

namespace pathbench {

inline constexpr double kGB = 1e9;                    // bandwidth unit: GB = 1e9 bytes
inline constexpr double kGiB = 1024.0 * 1024 * 1024;  // cost unit: seconds per GiB

std::string format_bytes(std::uint64_t bytes);  // "256 MiB", "4 B"
std::string format_seconds(double seconds);     // "1.23 ms"
std::string format_value(double value, const std::string& unit);
std::string iso8601_utc_now();

}  // namespace pathbench
