#include <gtest/gtest.h>

#include <vector>

#include "core/errors.hpp"
#include "measure/pattern.hpp"

namespace pathbench::test_pattern {
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

TEST(Pattern, PiecesAtOffsetsTogetherHoldTheContiguousPattern) {
  // Pieces of odd sizes at every alignment: each filled at its offset, laid end to end, equals
  // the pattern of the whole; each verifies at its own offset and at no other.
  std::vector<std::byte> whole(1000);
  fill_pattern(whole, 7);
  std::vector<std::byte> joined;
  std::size_t offset = 0;
  for (std::size_t size : {1u, 3u, 8u, 13u, 0u, 64u, 5u, 906u}) {
    std::vector<std::byte> piece(size);
    fill_pattern(piece, 7, offset);
    EXPECT_FALSE(find_pattern_mismatch(piece, 7, offset).has_value()) << offset;
    if (size >= 8) {
      EXPECT_TRUE(find_pattern_mismatch(piece, 7, offset + 1).has_value()) << offset;
    }
    if (size > 0) {
      auto bad = piece;
      bad[size - 1] ^= std::byte{0x80};
      EXPECT_EQ(find_pattern_mismatch(bad, 7, offset), std::optional<std::size_t>(size - 1));
    }
    joined.insert(joined.end(), piece.begin(), piece.end());
    offset += size;
  }
  EXPECT_EQ(joined, whole);
}

TEST(Pattern, VerifyAtAnOffsetNamesTheByteWithinTheBuffer) {
  std::vector<std::byte> piece(20);
  fill_pattern(piece, 5, 4099);
  EXPECT_NO_THROW(verify_pattern(piece, 5, "piece", 4099));
  piece[9] ^= std::byte{0x01};
  try {
    verify_pattern(piece, 5, "piece 3", 4099);
    FAIL() << "expected CaseFailure";
  } catch (const CaseFailure& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("piece 3: byte 9 of 20"), std::string::npos) << what;
  }
}

TEST(Pattern, ScatteredPiecesHoldOnePatternAndTheirGapsStayClear) {
  // 5 pieces of 13 bytes, one every 24: together the pattern of 65 bytes, gaps zero.
  std::vector<std::byte> memory(5 * 24, std::byte{0xee});
  const PatternPieces pieces{memory.data(), 5, 13, 24};
  fill_pattern_pieces(pieces, 3);
  std::vector<std::byte> joined, whole(65);
  for (std::size_t i = 0; i < 5; ++i) {
    joined.insert(joined.end(), memory.begin() + i * 24, memory.begin() + i * 24 + 13);
    for (std::size_t g = 13; g < 24; ++g) EXPECT_EQ(memory[i * 24 + g], std::byte{0}) << i;
  }
  fill_pattern(whole, 3);
  EXPECT_EQ(joined, whole);
  EXPECT_NO_THROW(verify_pattern_pieces(pieces, 3, "pieces"));

  auto failure = [&](std::size_t at) {
    auto copy = memory;
    copy[at] ^= std::byte{0x10};
    try {
      verify_pattern_pieces({copy.data(), 5, 13, 24}, 3, "pieces");
    } catch (const CaseFailure& e) {
      return std::string(e.what());
    }
    return std::string("no failure");
  };
  const std::string bad = failure(2 * 24 + 7);
  EXPECT_NE(bad.find("pieces: piece 2 of 5: byte 7 of 13 differs"), std::string::npos) << bad;
  const std::string overran = failure(3 * 24 + 13 + 4);
  EXPECT_NE(overran.find("piece 3 of 5: byte 4 of the gap"), std::string::npos) << overran;
}

}  // namespace
}  // namespace pathbench::test_pattern
