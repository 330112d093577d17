#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

#include "placement/physical_runs.hpp"

namespace pathbench::test_physical_runs {
namespace {

constexpr std::uint64_t kPresent = std::uint64_t{1} << 63;

// Pagemap entries of present pages at these frames.
std::vector<std::uint64_t> frames(std::initializer_list<std::uint64_t> pfns) {
  std::vector<std::uint64_t> out;
  for (const std::uint64_t pfn : pfns) out.push_back(kPresent | pfn);
  return out;
}

TEST(PhysicalRuns, CountsRunsOfAscendingFrames) {
  EXPECT_EQ(count_physical_runs(frames({100, 101, 102, 103})), 1u);
  EXPECT_EQ(count_physical_runs(frames({100, 101, 200, 201, 202, 50})), 3u);
  // Descending frames (the order a free list often hands out) are no run: one segment each.
  EXPECT_EQ(count_physical_runs(frames({103, 102, 101, 100})), 4u);
  EXPECT_EQ(count_physical_runs(frames({7})), 1u);
  EXPECT_EQ(count_physical_runs({}), 0u);
  // Bits above the frame number (soft-dirty, exclusive, file-mapped) do not break a run.
  std::vector<std::uint64_t> flagged = frames({10, 11, 12});
  flagged[1] |= std::uint64_t{1} << 55;
  flagged[2] |= std::uint64_t{1} << 56 | std::uint64_t{1} << 61;
  EXPECT_EQ(count_physical_runs(flagged), 1u);
}

TEST(PhysicalRuns, UnknownWhenAPageIsAbsentOrItsFrameHidden) {
  std::vector<std::uint64_t> absent = frames({10, 11, 12});
  absent[1] = 11;  // frame bits without the present bit
  EXPECT_EQ(count_physical_runs(absent), std::nullopt);
  EXPECT_EQ(count_physical_runs(frames({0, 0, 0})), std::nullopt);  // hidden: present, frame 0
}

TEST(PhysicalRuns, DescribesTheRunsAndTheSplitAtMaxSegments) {
  const PhysicalRunsSummary scattered{12, 200, 256, 256, 256};
  const std::string split = describe_slot_runs(scattered, 254);
  EXPECT_NE(split.find("200-256 runs of physically contiguous memory per slot (median 256, of 256 "
                       "pages)"),
            std::string::npos)
      << split;
  EXPECT_NE(split.find("more than the disk's max_segments (254)"), std::string::npos) << split;
  const std::string whole = describe_slot_runs(PhysicalRunsSummary{8, 1, 1, 1, 256}, 254);
  EXPECT_NE(whole.find("lay in 1 run of physically"), std::string::npos) << whole;
  EXPECT_EQ(whole.find("max_segments"), std::string::npos) << whole;
  // No max_segments known (no block device): no claim of a split.
  EXPECT_EQ(describe_slot_runs(scattered, std::nullopt).find("max_segments"), std::string::npos);
  EXPECT_NE(describe_slot_runs(std::nullopt, 254)
                .find("unknown (/proc/self/pagemap shows frame "
                      "numbers only to CAP_SYS_ADMIN)"),
            std::string::npos);
}

// This process's own pages: one entry per page the range touches, every touched page present;
// frame numbers either all hidden (no CAP_SYS_ADMIN: the summary is unknown) or all shown (then
// each range's runs lie between 1 and its pages).
TEST(PhysicalRuns, ReadsThisProcesssPagemap) {
  const std::size_t bytes = 8 * 4096;
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  auto* base = static_cast<std::byte*>(p);
  std::memset(base, 1, bytes);
  const std::optional<std::vector<std::uint64_t>> all = read_pagemap(base, bytes);
  if (!all) {
    ::munmap(p, bytes);
    GTEST_SKIP() << "/proc/self/pagemap cannot be read here";
  }
  ASSERT_EQ(all->size(), 8u);
  EXPECT_EQ(read_pagemap(base + 4095, 2)->size(), 2u);  // straddles a page boundary
  EXPECT_EQ(read_pagemap(base, 0)->size(), 0u);
  bool hidden = true;
  for (const std::uint64_t e : *all) {
    EXPECT_NE(e & kPresent, 0u);
    if ((e & ((std::uint64_t{1} << 55) - 1)) != 0) hidden = false;
  }
  const std::vector<std::span<const std::byte>> ranges{{base, 4 * 4096}, {base + 4 * 4096, 4096}};
  const std::optional<PhysicalRunsSummary> s = summarize_physical_runs(ranges);
  if (hidden) {
    EXPECT_FALSE(s.has_value());
  } else {
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->ranges, 2u);
    EXPECT_EQ(s->pages_per_range, 4u);
    EXPECT_EQ(s->min_runs, 1u);  // the one-page range
    EXPECT_GE(s->max_runs, 1u);
    EXPECT_LE(s->max_runs, 4u);
  }
  ::munmap(p, bytes);
}

}  // namespace
}  // namespace pathbench::test_physical_runs
