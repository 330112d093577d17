#include "core/units.hpp"
#include "core/text.hpp"

#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <stdexcept>

namespace pathbench {

namespace {

// |v| rounded to three significant digits: mantissa in [100, 999] and the decimal exponent of
// its first digit (0.0012345 -> {123, -3}). Rounding once, before a unit is chosen, keeps
// 0.9996 ms from printing as "1000 us".
struct ThreeDigits {
  int mantissa = 0;
  int exponent = 0;
};

ThreeDigits round_three(double v) {
  std::array<char, 32> buf{};
  std::snprintf(buf.data(), buf.size(), "%.2e", std::fabs(v));  // "1.23e-03"
  ThreeDigits r;
  r.mantissa = (buf[0] - '0') * 100 + (buf[2] - '0') * 10 + (buf[3] - '0');
  r.exponent = std::atoi(buf.data() + 5);
  return r;
}

// Writes the three digits scaled to a unit of 10^unit_exponent: {123, -3} with unit -3 -> "1.23".
std::string place_digits(ThreeDigits r, int unit_exponent) {
  const std::string digits = std::to_string(r.mantissa);
  const int integer_digits = r.exponent - unit_exponent + 1;
  if (integer_digits >= 3)
    return digits + std::string(static_cast<std::size_t>(integer_digits - 3), '0');
  if (integer_digits > 0) {
    const auto k = static_cast<std::size_t>(integer_digits);
    return digits.substr(0, k) + "." + digits.substr(k);
  }
  return "0." + std::string(static_cast<std::size_t>(-integer_digits), '0') + digits;
}

std::string non_finite(double v) {
  if (std::isnan(v)) return "nan";
  return v < 0 ? "-inf" : "inf";
}

// A plain number with three significant digits; from 1000 on, the integer (no exponent notation,
// which reads badly in tables).
std::string format_number(double v) {
  if (!std::isfinite(v)) return non_finite(v);
  if (v == 0) return "0";
  const ThreeDigits r = round_three(v);
  const std::string sign = v < 0 ? "-" : "";
  if (r.exponent >= 3) {
    std::array<char, 64> buf{};
    std::snprintf(buf.data(), buf.size(), "%.0f", std::fabs(v));
    return sign + buf.data();
  }
  return sign + place_digits(r, 0);
}

}  // namespace

std::string format_bytes(std::uint64_t bytes) {
  static constexpr std::array<const char*, 7> kUnits = {"B",   "KiB", "MiB", "GiB",
                                                        "TiB", "PiB", "EiB"};
  std::size_t unit = 0;
  while (unit + 1 < kUnits.size() && bytes >= (std::uint64_t{1} << (10 * (unit + 1)))) ++unit;
  const std::uint64_t scale = std::uint64_t{1} << (10 * unit);
  const std::uint64_t whole = bytes / scale;
  const std::uint64_t rest = bytes % scale;
  if (rest == 0) return std::to_string(whole) + " " + kUnits[unit];

  // Thousandths of the unit by long division, so that sizes near 2^64 stay exact (rest < 2^60,
  // so rest * 10 still fits in 64 bits).
  std::uint64_t thousandths = 0;
  std::uint64_t remainder = rest;
  for (int digit = 0; digit < 3; ++digit) {
    remainder *= 10;
    thousandths = thousandths * 10 + remainder / scale;
    remainder %= scale;
  }
  const bool exact = remainder == 0;
  if (remainder >= scale - remainder) ++thousandths;  // round half up
  std::uint64_t integer = whole;
  if (thousandths == 1000) {
    ++integer;
    thousandths = 0;
  }
  std::array<char, 8> frac{};
  std::snprintf(frac.data(), frac.size(), "%03u", static_cast<unsigned>(thousandths));
  std::string fraction = frac.data();
  // An exact value drops its trailing zeros ("1.5 KiB"); a rounded one keeps all three digits
  // ("1.001 KiB"), so a size that is not a round number never looks like one.
  if (exact) {
    while (!fraction.empty() && fraction.back() == '0') fraction.pop_back();
  }
  return std::to_string(integer) + "." + fraction + " " + kUnits[unit];
}

std::string format_seconds(double seconds) {
  if (!std::isfinite(seconds)) return non_finite(seconds) + " s";
  if (seconds == 0) return "0 s";
  if (seconds < 0) return concat("-", format_seconds(-seconds));
  const ThreeDigits r = round_three(seconds);
  if (r.exponent >= 3) return format_number(seconds) + " s";
  if (r.exponent >= 0) return place_digits(r, 0) + " s";
  if (r.exponent >= -3) return place_digits(r, -3) + " ms";
  if (r.exponent >= -6) return place_digits(r, -6) + " us";
  return place_digits(r, -9) + " ns";
}

std::string format_value(double value, const std::string& unit) {
  if (unit == "s") return format_seconds(value);
  // Costs such as "s/GiB": the time part reads best in ms/us like any other duration.
  if (unit.starts_with("s/")) return format_seconds(value) + unit.substr(1);
  if (unit == "B" && std::isfinite(value) && value >= 0 && value < 18446744073709551616.0 &&
      value == std::floor(value)) {
    return format_bytes(static_cast<std::uint64_t>(value));
  }
  const std::string number = format_number(value);
  return unit.empty() ? number : number + " " + unit;
}

std::string iso8601_utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  if (::gmtime_r(&now, &utc) == nullptr) throw std::runtime_error("gmtime_r failed");
  std::array<char, 32> buf{};
  const std::size_t n = std::strftime(buf.data(), buf.size(), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return std::string(buf.data(), n);
}

}  // namespace pathbench
