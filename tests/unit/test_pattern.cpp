#include <gtest/gtest.h>

#include <vector>

#include "core/errors.hpp"
#include "measure/pattern.hpp"

namespace pathbench {
namespace {

TEST(Pattern, FilledBufferVerifiesAndEveryCorruptionIsFoundAtItsByte) {
  for (std::size_t size : {0u, 1u, 7u, 8u, 9u, 4096u, 4099u}) {
    std::vector<std::byte> buffer(size);
    fill_pattern(buffer, 99);
    EXPECT_FALSE(find_pattern_mismatch(buffer, 99).has_value()) << size;
    for (std::size_t i = 0; i < size; i += std::max<std::size_t>(1, size / 5)) {
      auto copy = buffer;
      copy[i] ^= std::byte{0x01};
      const auto bad = find_pattern_mismatch(copy, 99);
      ASSERT_TRUE(bad.has_value()) << size << " " << i;
      EXPECT_EQ(*bad, i);
    }
  }
}

TEST(Pattern, DependsOnSeedAndPositionSoStaleOrShiftedDataFails) {
  std::vector<std::byte> a(4096), b(4096);
  fill_pattern(a, 1);
  fill_pattern(b, 2);
  EXPECT_NE(a, b);
  EXPECT_TRUE(find_pattern_mismatch(a, 2).has_value());
  // The same data one word further on does not verify: a copy with a wrong offset fails.
  std::vector<std::byte> shifted(a.begin() + 8, a.end());
  EXPECT_TRUE(find_pattern_mismatch(shifted, 1).has_value());
  std::vector<std::byte> zero(4096);
  EXPECT_EQ(find_pattern_mismatch(zero, 1), std::optional<std::size_t>(0));
}

TEST(Pattern, VerifyThrowsCaseFailureNamingTheByte) {
  std::vector<std::byte> buffer(100);
  fill_pattern(buffer, 5);
  buffer[42] = std::byte{0};
  buffer[43] = std::byte{0};
  try {
    verify_pattern(buffer, 5, "destination");
    FAIL() << "expected CaseFailure";
  } catch (const CaseFailure& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("destination: byte 42 of 100"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace pathbench
