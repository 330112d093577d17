// The caching allocator's bookkeeping (measure/caching_allocator.hpp) and its replay
// (measure/caching_replay.hpp) on a fake segment source of known capacity: size classes,
// splitting, merging within a segment only, best fit, reserved vs allocated bytes, and the
// failure PyTorch users meet: a request refused while the cached free bytes would hold it.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <stdexcept>
#include <vector>

#include "measure/caching_allocator.hpp"
#include "measure/caching_replay.hpp"
#include "measure/fragmentation_pattern.hpp"

namespace pathbench::test_caching_allocator {
namespace {

constexpr std::uint64_t kKiB = std::uint64_t{1} << 10;
constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr std::uint64_t kBase = std::uint64_t{1} << 40;  // where the fake's segments start

// Hands out adjacent segments (so a merge across segments would be possible, were it allowed)
// up to a capacity; refuses beyond it, as cudaMalloc does when the device is full.
class FakeSegments final : public SegmentSource {
 public:
  explicit FakeSegments(std::uint64_t capacity) : capacity_(capacity) {}
  std::optional<std::uint64_t> allocate(std::uint64_t bytes) override {
    asked.push_back(bytes);
    if (outstanding_ + bytes > capacity_) return std::nullopt;
    const std::uint64_t address = next_;
    next_ += bytes;
    outstanding_ += bytes;
    live_[address] = bytes;
    return address;
  }
  void release(std::uint64_t address, std::uint64_t bytes) override {
    const auto it = live_.find(address);
    if (it == live_.end() || it->second != bytes) {
      throw std::logic_error("released a segment the source did not give");
    }
    live_.erase(it);
    outstanding_ -= bytes;
    released.push_back(address);
  }
  std::uint64_t free() const { return capacity_ - outstanding_; }
  std::uint64_t outstanding() const { return outstanding_; }

  std::vector<std::uint64_t> asked, released;

 private:
  std::uint64_t capacity_, outstanding_ = 0, next_ = kBase;
  std::map<std::uint64_t, std::uint64_t> live_;
};

TEST(CachingAllocator, SizeClassesRouteAsPyTorchDoes) {
  EXPECT_EQ(caching_block_size(0), 512u);
  EXPECT_EQ(caching_block_size(1), 512u);
  EXPECT_EQ(caching_block_size(512), 512u);
  EXPECT_EQ(caching_block_size(513), 1024u);
  EXPECT_EQ(caching_block_size(kMiB), kMiB);
  EXPECT_TRUE(caching_is_small(kMiB));
  EXPECT_FALSE(caching_is_small(kMiB + 512));
  EXPECT_EQ(caching_segment_size(512), 2 * kMiB);
  EXPECT_EQ(caching_segment_size(kMiB), 2 * kMiB);
  EXPECT_EQ(caching_segment_size(kMiB + 512), 20 * kMiB);
  EXPECT_EQ(caching_segment_size(10 * kMiB - 512), 20 * kMiB);
  EXPECT_EQ(caching_segment_size(10 * kMiB), 10 * kMiB);
  EXPECT_EQ(caching_segment_size(11 * kMiB + 512), 12 * kMiB);
  EXPECT_EQ(caching_segment_size(256 * kMiB), 256 * kMiB);
}

TEST(CachingAllocator, SmallRequestsSplitOneSmallSegment) {
  FakeSegments source(64 * kMiB);
  CachingAllocator a(source);
  EXPECT_EQ(a.allocate(1000), kBase);
  EXPECT_EQ(source.asked, (std::vector<std::uint64_t>{2 * kMiB}));
  CachingStats s = a.stats();
  EXPECT_EQ(s.reserved, 2 * kMiB);
  EXPECT_EQ(s.allocated, 1024u);
  EXPECT_EQ(s.requested, 1000u);
  EXPECT_EQ(s.reserved_unused(), 2 * kMiB - 1024);
  EXPECT_EQ(s.largest_free_block, 2 * kMiB - 1024);
  EXPECT_EQ(s.segments, 1u);
  EXPECT_EQ(s.free_blocks, 1u);
  EXPECT_EQ(s.live_blocks, 1u);
  // The next small ones come from the rest of the same segment, in address order.
  EXPECT_EQ(a.allocate(3000), kBase + 1024);
  EXPECT_EQ(a.allocate(600 * kKiB), kBase + 4096);
  EXPECT_EQ(a.stats().segment_allocations, 1u);
  EXPECT_EQ(a.stats().allocated, 1024 + 3072 + 600 * kKiB);
  // A large request never shares a small segment: it gets a 20 MiB one of its own.
  EXPECT_EQ(a.allocate(kMiB + 1), kBase + 2 * kMiB);
  EXPECT_EQ(source.asked, (std::vector<std::uint64_t>{2 * kMiB, 20 * kMiB}));
  EXPECT_EQ(a.stats().reserved, 22 * kMiB);
}

TEST(CachingAllocator, ALargeRestOfOneMiBOrLessIsHandedOutWithTheBlock) {
  FakeSegments source(64 * kMiB);
  CachingAllocator a(source);
  EXPECT_EQ(a.allocate(20 * kMiB - 512 * kKiB), kBase);  // a 20 MiB segment, rest 512 KiB
  CachingStats s = a.stats();
  EXPECT_EQ(s.allocated, 20 * kMiB) << "the rest is not worth a block: it goes with this one";
  EXPECT_EQ(s.requested, 20 * kMiB - 512 * kKiB);
  EXPECT_EQ(s.free_blocks, 0u);
  EXPECT_EQ(s.largest_free_block, 0u);
  EXPECT_EQ(s.reserved_unused(), 0u);
  // A rest above 1 MiB is split off and cached.
  EXPECT_EQ(a.allocate(3 * kMiB), kBase + 20 * kMiB);
  s = a.stats();
  EXPECT_EQ(s.allocated, 23 * kMiB);
  EXPECT_EQ(s.largest_free_block, 17 * kMiB);
  EXPECT_EQ(s.free_blocks, 1u);
}

TEST(CachingAllocator, FreeMergesWithFreeNeighboursInItsSegment) {
  FakeSegments source(64 * kMiB);
  CachingAllocator a(source);
  const auto x = *a.allocate(3 * kMiB);
  const auto y = *a.allocate(3 * kMiB);
  const auto z = *a.allocate(3 * kMiB);
  EXPECT_EQ(y, x + 3 * kMiB);
  EXPECT_EQ(z, x + 6 * kMiB);
  a.free(y);  // between two live blocks: cached on its own
  EXPECT_EQ(a.stats().free_blocks, 2u);
  EXPECT_EQ(a.stats().largest_free_block, 11 * kMiB);
  a.free(x);  // merges with y
  EXPECT_EQ(a.stats().free_blocks, 2u);
  EXPECT_EQ(a.stats().allocated, 3 * kMiB);
  EXPECT_EQ(a.allocate(6 * kMiB), x) << "x and y merged into one 6 MiB block";
  a.free(x);
  a.free(z);  // merges with both neighbours: the whole segment, still cached
  CachingStats s = a.stats();
  EXPECT_EQ(s.free_blocks, 1u);
  EXPECT_EQ(s.largest_free_block, 20 * kMiB);
  EXPECT_EQ(s.reserved, 20 * kMiB);
  EXPECT_EQ(s.allocated, 0u);
  EXPECT_TRUE(source.released.empty()) << "a free keeps the segment cached";
  EXPECT_EQ(a.release_cached(), 20 * kMiB);
  EXPECT_EQ(source.released, (std::vector<std::uint64_t>{kBase}));
  EXPECT_EQ(a.stats().reserved, 0u);
  EXPECT_EQ(a.stats().segments, 0u);
  EXPECT_EQ(a.stats().segments_released, 1u);
}

TEST(CachingAllocator, NeverMergesAcrossSegments) {
  FakeSegments source(64 * kMiB);
  CachingAllocator a(source);
  // Segment 1 [0, 20) MiB filled by 9 + 9 + 2 MiB; segment 2 starts right after it.
  const auto s1a = *a.allocate(9 * kMiB);
  static_cast<void>(*a.allocate(9 * kMiB));
  const auto s1c = *a.allocate(2 * kMiB);
  EXPECT_EQ(s1c, s1a + 18 * kMiB);
  const auto s2a = *a.allocate(9 * kMiB);
  EXPECT_EQ(s2a, s1a + 20 * kMiB) << "the fake's segments are adjacent";
  a.free(s1c);  // [18, 20) MiB, at the end of segment 1
  a.free(s2a);  // [20, 40) MiB once merged with its rest: segment 2 whole
  CachingStats s = a.stats();
  EXPECT_EQ(s.free_blocks, 2u);
  EXPECT_EQ(s.largest_free_block, 20 * kMiB) << "not 22 MiB: the two are different segments";
  EXPECT_EQ(a.release_cached(), 20 * kMiB);
  EXPECT_EQ(source.released, (std::vector<std::uint64_t>{kBase + 20 * kMiB}));
  EXPECT_EQ(a.stats().reserved, 20 * kMiB);
}

TEST(CachingAllocator, BestFitTakesTheSmallestFittingBlockThenTheLowestAddress) {
  FakeSegments source(64 * kMiB);
  CachingAllocator a(source);
  const auto p4 = *a.allocate(4 * kMiB);     // [0, 4)
  static_cast<void>(*a.allocate(2 * kMiB));  // [4, 6)
  const auto p8 = *a.allocate(8 * kMiB);     // [6, 14)
  static_cast<void>(*a.allocate(2 * kMiB));  // [14, 16), rest [16, 20) free
  a.free(p4);
  a.free(p8);
  // Free: 4 MiB at 0, 8 MiB at 6, 4 MiB at 16. 3 MiB fits the 4 MiB ones; the lower one wins,
  // and its 1 MiB rest is not split off.
  const std::uint64_t before = a.stats().allocated;
  EXPECT_EQ(a.allocate(3 * kMiB), p4);
  EXPECT_EQ(a.stats().allocated, before + 4 * kMiB);
  // 5 MiB fits only the 8 MiB block, split: 3 MiB rest.
  EXPECT_EQ(a.allocate(5 * kMiB), p8);
  EXPECT_EQ(a.stats().largest_free_block, 4 * kMiB);
  EXPECT_EQ(a.stats().free_blocks, 2u);
  EXPECT_EQ(a.stats().segment_allocations, 1u);
}

// 30 blocks of 2 MiB fill three 20 MiB segments of a 60 MiB... device; every other one freed.
void fill_and_punch(CachingAllocator& a, std::vector<std::uint64_t>* kept) {
  std::vector<std::uint64_t> all;
  for (int i = 0; i < 30; ++i) all.push_back(*a.allocate(2 * kMiB));
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (i % 2 == 0) {
      a.free(all[i]);
    } else if (kept != nullptr) {
      kept->push_back(all[i]);
    }
  }
}

TEST(CachingAllocator, FailsWhileTheCachedFreeBytesWouldSuffice) {
  FakeSegments source(64 * kMiB);
  CachingAllocator a(source);
  fill_and_punch(a, nullptr);
  CachingStats s = a.stats();
  EXPECT_EQ(s.reserved, 60 * kMiB);
  EXPECT_EQ(s.allocated, 30 * kMiB);
  EXPECT_EQ(s.largest_free_block, 2 * kMiB);
  // 4 MiB: no 2 MiB hole fits it, a new 20 MiB segment does not fit the 4 MiB the device has
  // left, and no segment is wholly free to give back: out of memory with 30 MiB cached.
  EXPECT_FALSE(a.allocate(4 * kMiB).has_value());
  ASSERT_TRUE(a.last_failure().has_value());
  EXPECT_EQ(a.last_failure()->requested, 4 * kMiB);
  EXPECT_EQ(a.last_failure()->block_size, 4 * kMiB);
  EXPECT_EQ(a.last_failure()->segment_size, 20 * kMiB);
  s = a.stats();
  EXPECT_EQ(s.reserved_unused(), 30 * kMiB);
  EXPECT_GE(s.reserved_unused(), a.last_failure()->requested);
  EXPECT_EQ(s.cache_flushes, 1u);
  EXPECT_EQ(s.segments_released, 0u);
  EXPECT_EQ(source.free(), 4 * kMiB);
  // A request a hole fits still succeeds, and clears the failure.
  EXPECT_TRUE(a.allocate(2 * kMiB).has_value());
  EXPECT_FALSE(a.last_failure().has_value());
}

TEST(CachingAllocator, ARefusalReturnsWhollyFreeSegmentsAndRetries) {
  FakeSegments source(64 * kMiB);
  CachingAllocator a(source);
  std::vector<std::uint64_t> blocks;
  for (int i = 0; i < 30; ++i) blocks.push_back(*a.allocate(2 * kMiB));
  for (int i = 10; i < 20; ++i) a.free(blocks[static_cast<std::size_t>(i)]);  // segment 2 whole
  EXPECT_EQ(a.stats().largest_free_block, 20 * kMiB);
  // 22 MiB: its own segment; 60 + 22 > 64 refused; segment 2 returned; 40 + 22 fits.
  EXPECT_TRUE(a.allocate(22 * kMiB).has_value());
  EXPECT_EQ(source.released, (std::vector<std::uint64_t>{kBase + 20 * kMiB}));
  const CachingStats s = a.stats();
  EXPECT_EQ(s.reserved, 62 * kMiB);
  EXPECT_EQ(s.cache_flushes, 1u);
  EXPECT_EQ(s.segments_released, 1u);
  EXPECT_EQ(s.segment_allocations, 4u);
}

TEST(CachingAllocator, RefusesToFreeWhatIsNotLiveAndReturnsEverySegmentWhenDestroyed) {
  FakeSegments source(64 * kMiB);
  {
    CachingAllocator a(source);
    const auto p = *a.allocate(kMiB);
    static_cast<void>(*a.allocate(5 * kMiB));
    EXPECT_THROW(a.free(p + 512), std::invalid_argument);
    a.free(p);
    EXPECT_THROW(a.free(p), std::invalid_argument) << "a double free";
    EXPECT_EQ(source.outstanding(), 22 * kMiB);
  }
  EXPECT_EQ(source.outstanding(), 0u);
}

FragmentationPattern punched_pattern() {
  FragmentationPattern p;
  for (std::uint32_t id = 0; id < 30; ++id) {
    p.events.push_back({AllocationEvent::Kind::kAlloc, id, 2 * kMiB});
  }
  p.holes_begin = p.events.size();
  for (std::uint32_t id = 0; id < 30; id += 2) {
    p.events.push_back({AllocationEvent::Kind::kFree, id, 2 * kMiB});
  }
  p.larger_begin = p.events.size();
  p.allocations = 30;
  p.frees = 15;
  return p;
}

TEST(CachingReplay, OutOfMemoryWhileTheDeviceAndTheCacheHoldEnoughInTotal) {
  FakeSegments source(64 * kMiB);
  CachingReplayOutcome out;
  {
    CachingAllocator a(source);
    out = run_caching_replay(a, punched_pattern(), 4 * kMiB, 1000, [&] { return source.free(); });
    EXPECT_EQ(a.stats().reserved, 0u) << "every block freed, every segment returned";
  }
  EXPECT_TRUE(out.failed);
  EXPECT_FALSE(out.failed_in_replay);
  EXPECT_EQ(out.allocations_until_failure, 0u);
  EXPECT_EQ(out.failure.requested, 4 * kMiB);
  EXPECT_EQ(out.failure.segment_size, 20 * kMiB);
  EXPECT_EQ(out.after_replay.reserved, 60 * kMiB);
  EXPECT_EQ(out.free_after_replay, 4 * kMiB);
  EXPECT_EQ(out.at_failure.reserved, 60 * kMiB);
  EXPECT_EQ(out.at_failure.allocated, 30 * kMiB);
  EXPECT_EQ(out.at_failure.reserved_unused(), 30 * kMiB);
  EXPECT_EQ(out.at_failure.largest_free_block, 2 * kMiB);
  // The device's 4 MiB free + 30 MiB cached would hold the 4 MiB request either way.
  EXPECT_EQ(out.free_at_failure, 4 * kMiB);
  EXPECT_EQ(source.outstanding(), 0u);
}

TEST(CachingReplay, BlocksTheHolesFitComeFirst) {
  FakeSegments source(64 * kMiB);
  CachingAllocator a(source);
  const auto out =
      run_caching_replay(a, punched_pattern(), 2 * kMiB, 1000, [&] { return source.free(); });
  EXPECT_TRUE(out.failed);
  EXPECT_EQ(out.allocations_until_failure, 15u) << "the 15 holes, then a new segment is refused";
  EXPECT_EQ(out.at_failure.reserved, 60 * kMiB);
  EXPECT_EQ(out.at_failure.allocated, 60 * kMiB);
  EXPECT_EQ(out.at_failure.reserved_unused(), 0u);
  EXPECT_EQ(out.at_failure.largest_free_block, 0u);
  EXPECT_EQ(out.free_at_failure, 4 * kMiB);
  // The loop's cap: a lower bound, nothing failed.
  const auto capped =
      run_caching_replay(a, punched_pattern(), 2 * kMiB, 5, [&] { return source.free(); });
  EXPECT_FALSE(capped.failed);
  EXPECT_EQ(capped.allocations_until_failure, 5u);
  EXPECT_EQ(source.outstanding(), 0u);
}

TEST(CachingReplay, AFailureInsideThePatternStopsThere) {
  FakeSegments source(30 * kMiB);  // one 20 MiB segment: the 11th block needs a second
  CachingAllocator a(source);
  const auto out =
      run_caching_replay(a, punched_pattern(), 2 * kMiB, 1000, [&] { return source.free(); });
  EXPECT_TRUE(out.failed);
  EXPECT_TRUE(out.failed_in_replay);
  EXPECT_EQ(out.failed_event, 10u);
  EXPECT_EQ(out.allocations_until_failure, 0u);
  EXPECT_EQ(out.at_failure.reserved, 20 * kMiB);
  EXPECT_EQ(out.free_at_failure, 10 * kMiB);
  EXPECT_EQ(source.outstanding(), 0u);
}

TEST(CachingReplay, TheKvPatternLeavesCachedBytesNoRequestFits) {
  const std::uint64_t capacity = 2048 * kMiB;
  FakeSegments source(capacity);
  CachingAllocator a(source);
  const SizeMix mix = kv_size_mix();
  const auto pattern = make_fragmentation_pattern(1, capacity / 100 * 80, mix);
  const auto out =
      run_caching_replay(a, pattern, mix.largest(), 100000, [&] { return source.free(); });
  ASSERT_TRUE(out.failed);
  const CachingStats& at = out.at_failure;
  EXPECT_EQ(at.reserved, capacity - out.free_at_failure) << "the fake's free is what is not held";
  EXPECT_LT(out.free_at_failure, out.failure.segment_size) << "the refusal was real";
  EXPECT_LT(at.largest_free_block, out.failure.block_size) << "no cached block fit";
  EXPECT_GT(at.reserved_unused(), 0u) << "the pattern's holes stay cached in their segments";
  EXPECT_EQ(at.reserved_unused(), at.reserved - at.allocated);
  EXPECT_LE(at.requested, at.allocated);
  EXPECT_EQ(source.outstanding(), 0u);
}

}  // namespace
}  // namespace pathbench::test_caching_allocator
