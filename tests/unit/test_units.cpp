#include <cstdint>
#include <limits>
#include <regex>
#include <string>

#include <gtest/gtest.h>

#include "core/units.hpp"

namespace pathbench::test_units {
namespace {

constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kMiB = kKiB * 1024;
constexpr std::uint64_t kGiB = kMiB * 1024;

TEST(FormatBytes, ExactIntegers) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(4), "4 B");
  EXPECT_EQ(format_bytes(1023), "1023 B");
  EXPECT_EQ(format_bytes(kKiB), "1 KiB");
  EXPECT_EQ(format_bytes(4 * kKiB), "4 KiB");
  EXPECT_EQ(format_bytes(256 * kMiB), "256 MiB");
  EXPECT_EQ(format_bytes(kGiB), "1 GiB");
  EXPECT_EQ(format_bytes(1024 * kGiB), "1 TiB");
  EXPECT_EQ(format_bytes(std::uint64_t{1} << 60), "1 EiB");
}

TEST(FormatBytes, ExactFractions) {
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_bytes(kMiB + kMiB / 4), "1.25 MiB");
  EXPECT_EQ(format_bytes(kGiB + kGiB / 8), "1.125 GiB");
}

TEST(FormatBytes, InexactKeepsThreeDecimals) {
  EXPECT_EQ(format_bytes(1025), "1.001 KiB");
  EXPECT_EQ(format_bytes(1000000), "976.563 KiB");
  EXPECT_EQ(format_bytes(kGiB + 1), "1.000 GiB");
  EXPECT_EQ(format_bytes(kKiB + kKiB / 16), "1.063 KiB");  // 1.0625
}

TEST(FormatBytes, Largest) {
  EXPECT_EQ(format_bytes(std::numeric_limits<std::uint64_t>::max()), "16.000 EiB");
}

TEST(FormatSeconds, UnitsAndThreeSignificantDigits) {
  EXPECT_EQ(format_seconds(0), "0 s");
  EXPECT_EQ(format_seconds(1.5), "1.50 s");
  EXPECT_EQ(format_seconds(12.345), "12.3 s");
  EXPECT_EQ(format_seconds(123.4), "123 s");
  EXPECT_EQ(format_seconds(0.5), "500 ms");
  EXPECT_EQ(format_seconds(0.00123), "1.23 ms");
  EXPECT_EQ(format_seconds(0.0456), "45.6 ms");
  EXPECT_EQ(format_seconds(12.3e-6), "12.3 us");
  EXPECT_EQ(format_seconds(1e-6), "1.00 us");
  EXPECT_EQ(format_seconds(123e-9), "123 ns");
  EXPECT_EQ(format_seconds(4.5e-9), "4.50 ns");
  EXPECT_EQ(format_seconds(5e-12), "0.00500 ns");
}

TEST(FormatSeconds, RoundingCrossesIntoTheNextUnit) {
  EXPECT_EQ(format_seconds(0.0009996), "1.00 ms");
  EXPECT_EQ(format_seconds(0.9996), "1.00 s");
  EXPECT_EQ(format_seconds(999.6e-9), "1.00 us");
}

TEST(FormatSeconds, LongAndOdd) {
  EXPECT_EQ(format_seconds(1234.4), "1234 s");
  EXPECT_EQ(format_seconds(-0.002), "-2.00 ms");
  EXPECT_EQ(format_seconds(std::numeric_limits<double>::infinity()), "inf s");
  EXPECT_EQ(format_seconds(std::numeric_limits<double>::quiet_NaN()), "nan s");
}

TEST(FormatValue, Units) {
  EXPECT_EQ(format_value(45.23, "GB/s"), "45.2 GB/s");
  EXPECT_EQ(format_value(0.5123, "GB/s"), "0.512 GB/s");
  EXPECT_EQ(format_value(312.0, "GB/s"), "312 GB/s");
  EXPECT_EQ(format_value(0, "GB/s"), "0 GB/s");
  EXPECT_EQ(format_value(123456.0, "faults"), "123456 faults");
  EXPECT_EQ(format_value(3.0, ""), "3.00");
  EXPECT_EQ(format_value(0.00123, "s"), "1.23 ms");
  EXPECT_EQ(format_value(0.0456, "s/GiB"), "45.6 ms/GiB");
  EXPECT_EQ(format_value(4096, "B"), "4 KiB");
  EXPECT_EQ(format_value(-2.5, "%"), "-2.50 %");
}

TEST(Iso8601, UtcShape) {
  const std::string now = iso8601_utc_now();
  EXPECT_TRUE(std::regex_match(now, std::regex(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z)"))) << now;
  EXPECT_GE(now, "2024-01-01T00:00:00Z");
}

}  // namespace
}  // namespace pathbench::test_units
