// The pinned staging pool of the serving family (measure/pinned_staging_pool.hpp), with a fake
// pinned allocator and fake copy completions that the test completes itself.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "measure/pinned_staging_pool.hpp"

namespace pathbench::test_pinned_staging_pool {
namespace {

constexpr std::size_t kKiB = 1024;
constexpr std::size_t kMiB = 1024 * kKiB;
constexpr std::byte kFreshFill{0xA5};

// Records every allocation and free, fills new memory with kFreshFill, and fails the n-th
// allocation on demand (null or std::bad_alloc). Owns the blocks itself, so a slot the pool
// leaks on purpose is still released at the end of the test.
class FakeSlotMemory : public SlotMemory {
 public:
  struct Allocation {
    std::byte* memory;
    std::size_t bytes;
  };

  std::byte* allocate(std::size_t bytes) override {
    ++allocate_calls_;
    if (fail_on_call_ == allocate_calls_) {
      if (fail_by_throwing_) throw std::bad_alloc();
      return nullptr;
    }
    auto block = std::make_unique<std::byte[]>(bytes);
    std::fill_n(block.get(), bytes, kFreshFill);
    std::byte* p = block.get();
    live_[p] = {std::move(block), bytes};
    allocations_.push_back({p, bytes});
    log(std::string("allocate ") + std::to_string(bytes));
    return p;
  }

  void free(std::byte* memory, std::size_t bytes) noexcept override {
    const auto it = live_.find(memory);
    if (it == live_.end() || it->second.bytes != bytes) {
      ++bad_frees_;
    } else {
      live_.erase(it);
    }
    ++frees_;
    log(std::string("free ") + std::to_string(bytes));
  }

  void fail_on_call(int n, bool by_throwing) {
    fail_on_call_ = n;
    fail_by_throwing_ = by_throwing;
  }
  void log_to(std::vector<std::string>* events) { events_ = events; }

  const std::vector<Allocation>& allocations() const { return allocations_; }
  std::size_t live_blocks() const { return live_.size(); }
  std::size_t live_bytes() const {
    std::size_t sum = 0;
    for (const auto& [p, block] : live_) sum += block.bytes;
    return sum;
  }
  int frees() const { return frees_; }
  int bad_frees() const { return bad_frees_; }

 private:
  struct Block {
    std::unique_ptr<std::byte[]> memory;
    std::size_t bytes;
  };
  void log(const std::string& event) {
    if (events_) events_->push_back(event);
  }

  std::map<std::byte*, Block> live_;
  std::vector<Allocation> allocations_;
  std::vector<std::string>* events_ = nullptr;
  int allocate_calls_ = 0;
  int fail_on_call_ = 0;
  bool fail_by_throwing_ = false;
  int frees_ = 0;
  int bad_frees_ = 0;
};

// What a test holds of one copy's completion, while the pool owns the Completion itself.
struct CopyState {
  std::mutex mutex;
  std::condition_variable completed_cv;
  bool completed = false;
  int polls = 0;
  int waits = 0;
  int completes_on_poll = 0;  // > 0: done() turns true on that poll (the copy ends meanwhile)
  bool wait_blocks = false;   // wait() blocks until complete() (real threads); else it completes
  bool wait_throws = false;
  std::function<void()> on_wait;      // called as wait() begins, e.g. to advance a fake clock
  std::function<void()> on_complete;  // called once, before the completion is seen as done

  void complete() {
    std::unique_lock lock(mutex);
    complete_locked(lock);
  }
  void complete_locked(std::unique_lock<std::mutex>& lock) {
    if (completed) return;
    if (on_complete) {
      lock.unlock();
      on_complete();
      lock.lock();
    }
    completed = true;
    completed_cv.notify_all();
  }
};

class FakeCompletion : public Completion {
 public:
  explicit FakeCompletion(std::shared_ptr<CopyState> state) : state_(std::move(state)) {}
  bool done() override {
    std::unique_lock lock(state_->mutex);
    ++state_->polls;
    if (state_->completes_on_poll > 0 && state_->polls >= state_->completes_on_poll) {
      state_->complete_locked(lock);
    }
    return state_->completed;
  }
  void wait() override {
    std::unique_lock lock(state_->mutex);
    ++state_->waits;
    if (state_->wait_throws) throw std::runtime_error("fake copy failed");
    if (state_->on_wait) {
      lock.unlock();
      state_->on_wait();
      lock.lock();
    }
    if (state_->wait_blocks) {
      state_->completed_cv.wait(lock, [&] { return state_->completed; });
    } else {
      state_->complete_locked(lock);
    }
  }

 private:
  std::shared_ptr<CopyState> state_;
};

struct FakeCopy {
  std::shared_ptr<CopyState> state = std::make_shared<CopyState>();
  std::unique_ptr<Completion> completion() const { return std::make_unique<FakeCompletion>(state); }
};

// Leases `lease`'s slot to a copy the test completes; returns the copy's state.
std::shared_ptr<CopyState> send(SlotLease& lease) {
  FakeCopy copy;
  lease.in_flight(copy.completion());
  return copy.state;
}

// Acquires and sends at once; value() throws (failing the test) when no slot came.
std::shared_ptr<CopyState> send(std::optional<SlotLease> lease) { return send(lease.value()); }

StagingPoolConfig config_of(std::vector<SlotBucket> buckets, ExhaustedPolicy policy,
                            std::size_t max_polls = 0) {
  StagingPoolConfig config;
  config.buckets = std::move(buckets);
  for (const SlotBucket& b : config.buckets) config.max_pinned_bytes += b.slot_bytes * b.slots;
  config.policy = policy;
  config.max_polls = max_polls;
  return config;
}

// The serving family's shape: 16 x 64 KiB + 8 x 1 MiB + 1 x 16 MiB = 25 MiB.
std::vector<SlotBucket> serving_buckets() {
  return {{16 * kMiB, 1}, {64 * kKiB, 16}, {1 * kMiB, 8}};
}

template <typename Fn>
std::string message_of(Fn&& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no exception)";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// ---- Construction, the bound, allocator failure

TEST(PinnedStagingPool, AllocatesEverySlotOnceSortedBySize) {
  FakeSlotMemory memory;
  PinnedStagingPool pool(config_of(serving_buckets(), ExhaustedPolicy::kFallback), memory);
  ASSERT_EQ(memory.allocations().size(), 25u);
  EXPECT_EQ(memory.allocations().front().bytes, 64 * kKiB);
  EXPECT_EQ(memory.allocations()[16].bytes, 1 * kMiB);
  EXPECT_EQ(memory.allocations().back().bytes, 16 * kMiB);
  const StagingPoolStats s = pool.stats();
  ASSERT_EQ(s.buckets.size(), 3u);
  EXPECT_EQ(s.buckets[0].slot_bytes, 64 * kKiB);
  EXPECT_EQ(s.buckets[0].slots, 16u);
  EXPECT_EQ(s.buckets[1].slot_bytes, 1 * kMiB);
  EXPECT_EQ(s.buckets[2].slot_bytes, 16 * kMiB);
  EXPECT_EQ(s.pinned_bytes, 25 * kMiB);
  EXPECT_EQ(s.max_pinned_bytes, 25 * kMiB);
  EXPECT_EQ(pool.largest_slot_bytes(), 16 * kMiB);
}

TEST(PinnedStagingPool, FreesEverySlotItAllocated) {
  FakeSlotMemory memory;
  { PinnedStagingPool pool(config_of(serving_buckets(), ExhaustedPolicy::kFallback), memory); }
  EXPECT_EQ(memory.frees(), 25);
  EXPECT_EQ(memory.bad_frees(), 0);
  EXPECT_EQ(memory.live_blocks(), 0u);
}

TEST(PinnedStagingPool, RefusesBucketsOverTheBoundSayingByHowMuch) {
  FakeSlotMemory memory;
  StagingPoolConfig config = config_of(serving_buckets(), ExhaustedPolicy::kWait);
  config.max_pinned_bytes = 24 * kMiB;
  const std::string what = message_of([&] { PinnedStagingPool pool(config, memory); });
  EXPECT_TRUE(contains(what,
                       "need 26214400 bytes, 1048576 bytes (1 MiB) more than "
                       "max_pinned_bytes 25165824 (24 MiB)"))
      << what;
  EXPECT_TRUE(contains(what, "16 x 64 KiB + 8 x 1 MiB + 1 x 16 MiB")) << what;
  EXPECT_THROW(PinnedStagingPool(config, memory), std::invalid_argument);
  EXPECT_TRUE(memory.allocations().empty());  // refused before allocating anything

  config.max_pinned_bytes = 25 * kMiB;  // exactly at the bound is fine
  PinnedStagingPool pool(config, memory);
  EXPECT_EQ(memory.live_bytes(), 25 * kMiB);
}

TEST(PinnedStagingPool, RefusesMalformedBuckets) {
  FakeSlotMemory memory;
  const auto refuses = [&](std::vector<SlotBucket> buckets, const std::string& part) {
    StagingPoolConfig config = config_of(buckets, ExhaustedPolicy::kWait);
    config.max_pinned_bytes = std::numeric_limits<std::size_t>::max();
    EXPECT_THROW(PinnedStagingPool(config, memory), std::invalid_argument);
    const std::string what = message_of([&] { PinnedStagingPool pool(config, memory); });
    EXPECT_TRUE(contains(what, part)) << what;
  };
  refuses({}, "no buckets");
  refuses({{0, 4}}, "no bytes or no slots");
  refuses({{64, 0}}, "no bytes or no slots");
  refuses({{64, 1}, {128, 1}, {64, 2}}, "two buckets of 64 B slots");
  refuses({{std::size_t{1} << 62, 8}}, "more bytes than a size_t holds");
  EXPECT_TRUE(memory.allocations().empty());
}

TEST(PinnedStagingPool, AllocatorReturningNullNamesTheBucketAndFreesWhatItHad) {
  FakeSlotMemory memory;
  memory.fail_on_call(3, /*by_throwing=*/false);  // the first 1 MiB slot, after 2 x 64 KiB
  StagingPoolConfig config = config_of({{64 * kKiB, 2}, {1 * kMiB, 2}}, ExhaustedPolicy::kWait);
  const std::string what = message_of([&] { PinnedStagingPool pool(config, memory); });
  EXPECT_TRUE(contains(what,
                       "could not allocate slot 1 of 2 of the 1 MiB bucket (1048576 bytes; "
                       "131072 bytes allocated before it): the allocator returned no memory"))
      << what;
  EXPECT_EQ(memory.frees(), 2);
  EXPECT_EQ(memory.live_blocks(), 0u);
  EXPECT_EQ(memory.bad_frees(), 0);
}

TEST(PinnedStagingPool, AllocatorThrowingNamesTheBucketAndItsReason) {
  FakeSlotMemory memory;
  memory.fail_on_call(4, /*by_throwing=*/true);  // the second 1 MiB slot
  StagingPoolConfig config = config_of({{64 * kKiB, 2}, {1 * kMiB, 2}}, ExhaustedPolicy::kWait);
  EXPECT_THROW(PinnedStagingPool(config, memory), std::runtime_error);
  FakeSlotMemory again;
  again.fail_on_call(4, true);
  const std::string what = message_of([&] { PinnedStagingPool pool(config, again); });
  EXPECT_TRUE(contains(what,
                       "slot 2 of 2 of the 1 MiB bucket (1048576 bytes; 1179648 bytes "
                       "allocated before it): std::bad_alloc"))
      << what;
  EXPECT_EQ(again.live_blocks(), 0u);
}

// ---- Bucket choice, chunking

TEST(PinnedStagingPool, PicksTheSmallestBucketThatFits) {
  FakeSlotMemory memory;
  PinnedStagingPool pool(config_of(serving_buckets(), ExhaustedPolicy::kFallback), memory);
  const auto bucket_for = [&](std::size_t bytes) {
    std::optional<SlotLease> lease = pool.acquire(bytes);
    EXPECT_TRUE(lease.has_value());
    EXPECT_EQ(lease->data().size(), bytes);
    return std::pair(lease->bucket(), lease->slot_bytes());
  };
  EXPECT_EQ(bucket_for(1), std::pair(std::size_t{0}, 64 * kKiB));
  EXPECT_EQ(bucket_for(64 * kKiB), std::pair(std::size_t{0}, 64 * kKiB));
  EXPECT_EQ(bucket_for(64 * kKiB + 1), std::pair(std::size_t{1}, 1 * kMiB));
  EXPECT_EQ(bucket_for(1 * kMiB), std::pair(std::size_t{1}, 1 * kMiB));
  EXPECT_EQ(bucket_for(1 * kMiB + 1), std::pair(std::size_t{2}, 16 * kMiB));
  EXPECT_EQ(bucket_for(16 * kMiB), std::pair(std::size_t{2}, 16 * kMiB));
  EXPECT_EQ(pool.stats().spills, 0u);
}

TEST(PinnedStagingPool, RefusesZeroBytesAndMoreThanTheLargestSlot) {
  FakeSlotMemory memory;
  PinnedStagingPool pool(config_of(serving_buckets(), ExhaustedPolicy::kFallback), memory);
  EXPECT_THROW(pool.acquire(0), std::invalid_argument);
  EXPECT_THROW(pool.acquire(16 * kMiB + 1), std::invalid_argument);
  const std::string what = message_of([&] { pool.acquire(16 * kMiB + 1); });
  EXPECT_TRUE(contains(what,
                       "16777217 bytes, more than the largest slot (16777216 bytes): split "
                       "it with chunks_for"))
      << what;
  const StagingPoolStats s = pool.stats();
  EXPECT_EQ(s.acquisitions, 0u);
  EXPECT_EQ(s.fallbacks, 0u);  // a refusal is not a fallback
}

TEST(PinnedStagingPool, ChunksARequestByTheLargestSlot) {
  FakeSlotMemory memory;
  PinnedStagingPool pool(config_of(serving_buckets(), ExhaustedPolicy::kFallback), memory);
  using Chunks = std::vector<std::size_t>;
  EXPECT_EQ(pool.chunks_for(0), Chunks{});
  EXPECT_EQ(pool.chunks_for(5), Chunks{5});
  EXPECT_EQ(pool.chunks_for(16 * kMiB), Chunks{16 * kMiB});
  EXPECT_EQ(pool.chunks_for(32 * kMiB), (Chunks{16 * kMiB, 16 * kMiB}));
  EXPECT_EQ(pool.chunks_for(40 * kMiB + 3), (Chunks{16 * kMiB, 16 * kMiB, 8 * kMiB + 3}));
  for (const std::size_t chunk : pool.chunks_for(40 * kMiB + 3)) {
    std::optional<SlotLease> lease = pool.acquire(chunk);  // every chunk is acquirable
    ASSERT_TRUE(lease.has_value());
    EXPECT_EQ(lease->bucket(), 2u);
  }
}

TEST(PinnedStagingPool, SpillsToALargerBucketBeforeGivingUp) {
  FakeSlotMemory memory;
  PinnedStagingPool pool(config_of({{64, 1}, {1024, 1}}, ExhaustedPolicy::kFallback), memory);
  std::optional<SlotLease> small = pool.acquire(10);
  std::optional<SlotLease> spilled = pool.acquire(10);
  ASSERT_TRUE(small && spilled);
  EXPECT_EQ(small->bucket(), 0u);
  EXPECT_EQ(spilled->bucket(), 1u);
  EXPECT_EQ(spilled->data().size(), 10u);
  EXPECT_FALSE(pool.acquire(10).has_value());
  const StagingPoolStats s = pool.stats();
  EXPECT_EQ(s.spills, 1u);
  EXPECT_EQ(s.buckets[0].acquisitions, 1u);
  EXPECT_EQ(s.buckets[1].acquisitions, 1u);
  EXPECT_EQ(s.fallbacks, 1u);
  // Per size class: all three requests were of the 64-byte class; one spilled, one fell back.
  EXPECT_EQ(s.buckets[0].requests, 3u);
  EXPECT_EQ(s.buckets[0].spills_out, 1u);
  EXPECT_EQ(s.buckets[0].fallbacks, 1u);
  EXPECT_EQ(s.buckets[1].spills_in, 1u);
  EXPECT_EQ(s.buckets[1].requests, 0u);
  EXPECT_EQ(s.buckets[0].high_water_in_use, 1u);
  EXPECT_EQ(s.buckets[1].high_water_in_use, 1u);
  EXPECT_EQ(s.buckets[0].in_use, 1u);
}

TEST(PinnedStagingPool, ReclaimsADoneSmallSlotRatherThanSpilling) {
  FakeSlotMemory memory;
  PinnedStagingPool pool(config_of({{64, 1}, {1024, 1}}, ExhaustedPolicy::kFallback), memory);
  std::optional<SlotLease> small = pool.acquire(10);
  std::byte* const small_slot = small->data().data();
  send(*small)->complete();
  std::optional<SlotLease> again = pool.acquire(10);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->bucket(), 0u);
  EXPECT_EQ(again->data().data(), small_slot);
  EXPECT_EQ(pool.stats().spills, 0u);
}

// ---- The invariant, under each policy

TEST(PinnedStagingPool, NeverHandsOutASlotWhoseCopyIsInFlight) {
  FakeSlotMemory memory;
  PinnedStagingPool pool(config_of({{64, 2}}, ExhaustedPolicy::kFallback), memory);
  std::optional<SlotLease> first = pool.acquire(64);
  std::byte* const first_slot = first->data().data();
  std::fill(first->data().begin(), first->data().end(), std::byte{0x11});
  const std::shared_ptr<CopyState> copy = send(*first);

  std::optional<SlotLease> second = pool.acquire(64);
  ASSERT_TRUE(second);
  EXPECT_NE(second->data().data(), first_slot);
  EXPECT_EQ(second->data()[0], kFreshFill);  // a different slot, never written
  const std::shared_ptr<CopyState> second_copy = send(*second);
  EXPECT_FALSE(pool.acquire(64).has_value());  // both in flight: fallback, not reuse
  EXPECT_TRUE(
      std::all_of(first_slot, first_slot + 64, [](std::byte b) { return b == std::byte{0x11}; }));

  copy->complete();
  std::optional<SlotLease> reused = pool.acquire(64);
  ASSERT_TRUE(reused);
  EXPECT_EQ(reused->data().data(), first_slot);  // after its completion, reuse is allowed
  EXPECT_EQ(reused->data()[0], std::byte{0x11});
}

TEST(PinnedStagingPool, FallbackReturnsNoSlotAndCountsIt) {
  FakeSlotMemory memory;
  PinnedStagingPool pool(config_of({{64, 2}}, ExhaustedPolicy::kFallback), memory);
  std::optional<SlotLease> a = pool.acquire(64), b = pool.acquire(64);
  const std::shared_ptr<CopyState> copy_a = send(*a);
  send(*b);
  EXPECT_FALSE(pool.acquire(1).has_value());
  EXPECT_FALSE(pool.acquire(1).has_value());
  EXPECT_EQ(copy_a->waits, 0);  // the fallback policy never blocks
  StagingPoolStats s = pool.stats();
  EXPECT_EQ(s.fallbacks, 2u);
  EXPECT_EQ(s.waits, 0u);
  EXPECT_EQ(s.in_flight_slots, 2u);
}

TEST(PinnedStagingPool, WaitBlocksOnTheOldestInFlightFittingSlot) {
  FakeSlotMemory memory;
  double clock = 100;
  StagingPoolConfig config = config_of({{64, 1}, {1024, 2}}, ExhaustedPolicy::kWait);
  config.clock = [&] { return clock; };
  PinnedStagingPool pool(std::move(config), memory);
  std::optional<SlotLease> small = pool.acquire(64);  // the oldest copy, but too small to fit
  std::optional<SlotLease> older = pool.acquire(1000);
  std::optional<SlotLease> newer = pool.acquire(1000);
  std::byte* const older_slot = older->data().data();
  const std::shared_ptr<CopyState> small_copy = send(*small);
  const std::shared_ptr<CopyState> older_copy = send(*older);
  const std::shared_ptr<CopyState> newer_copy = send(*newer);
  older_copy->on_wait = [&] { clock += 0.25; };

  std::optional<SlotLease> lease = pool.acquire(500);
  ASSERT_TRUE(lease);
  EXPECT_EQ(lease->data().data(), older_slot);
  EXPECT_EQ(small_copy->waits, 0);
  EXPECT_EQ(older_copy->waits, 1);
  EXPECT_EQ(newer_copy->waits, 0);
  EXPECT_FALSE(newer_copy->completed);
  const StagingPoolStats s = pool.stats();
  EXPECT_EQ(s.waits, 1u);
  EXPECT_DOUBLE_EQ(s.wait_seconds, 0.25);
  EXPECT_EQ(s.fallbacks, 0u);
}

TEST(PinnedStagingPool, WaitThenFallbackGetsTheSlotWithinItsPolls) {
  FakeSlotMemory memory;
  PinnedStagingPool pool(config_of({{64, 1}}, ExhaustedPolicy::kWaitThenFallback, 2), memory);
  std::optional<SlotLease> lease = pool.acquire(64);
  const std::shared_ptr<CopyState> copy = send(*lease);
  // Poll 1 is acquire's own look before waiting; polls 2 and 3 are the two allowed.
  copy->completes_on_poll = 3;
  EXPECT_TRUE(pool.acquire(64).has_value());
  EXPECT_EQ(copy->polls, 3);
  EXPECT_EQ(copy->waits, 0);  // polled, never blocked
  const StagingPoolStats s = pool.stats();
  EXPECT_EQ(s.waits, 1u);
  EXPECT_EQ(s.fallbacks, 0u);
}

TEST(PinnedStagingPool, WaitThenFallbackFallsBackAfterItsPolls) {
  FakeSlotMemory memory;
  PinnedStagingPool pool(config_of({{64, 1}}, ExhaustedPolicy::kWaitThenFallback, 1), memory);
  std::optional<SlotLease> lease = pool.acquire(64);
  const std::shared_ptr<CopyState> copy = send(*lease);
  copy->completes_on_poll = 3;
  EXPECT_FALSE(pool.acquire(64).has_value());
  EXPECT_EQ(copy->polls, 2);
  StagingPoolStats s = pool.stats();
  EXPECT_EQ(s.waits, 1u);  // it polled, then fell back: both counted
  EXPECT_EQ(s.fallbacks, 1u);
  EXPECT_TRUE(pool.acquire(64).has_value());  // poll 3: done
}

TEST(PinnedStagingPool, WaitThenFallbackWithNoPollsIsAPlainFallback) {
  FakeSlotMemory memory;
  PinnedStagingPool pool(config_of({{64, 1}}, ExhaustedPolicy::kWaitThenFallback, 0), memory);
  std::optional<SlotLease> lease = pool.acquire(64);
  const std::shared_ptr<CopyState> copy = send(*lease);
  EXPECT_FALSE(pool.acquire(64).has_value());
  EXPECT_EQ(copy->polls, 1);
  EXPECT_EQ(pool.stats().waits, 0u);
  EXPECT_EQ(pool.stats().fallbacks, 1u);
}

// ---- Lease RAII

TEST(PinnedStagingPool, ALeaseEndedByAnExceptionFreesItsSlot) {
  FakeSlotMemory memory;
  PinnedStagingPool pool(config_of({{64, 1}}, ExhaustedPolicy::kFallback), memory);
  std::byte* slot = nullptr;
  EXPECT_THROW(
      {
        std::optional<SlotLease> lease = pool.acquire(64);
        slot = lease->data().data();
        EXPECT_EQ(pool.stats().leased_slots, 1u);
        throw std::runtime_error("enqueue failed");
      },
      std::runtime_error);
  StagingPoolStats s = pool.stats();
  EXPECT_EQ(s.leased_slots, 0u);
  EXPECT_EQ(s.bytes_in_use, 0u);
  std::optional<SlotLease> again = pool.acquire(64);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->data().data(), slot);
}

TEST(PinnedStagingPool, AMovedLeaseOwnsTheSlotOnce) {
  FakeSlotMemory memory;
  PinnedStagingPool pool(config_of({{64, 2}}, ExhaustedPolicy::kFallback), memory);
  std::optional<SlotLease> a = pool.acquire(8);
  SlotLease moved = std::move(*a);
  EXPECT_FALSE(a->active());
  EXPECT_TRUE(a->data().empty());
  EXPECT_EQ(a->slot_bytes(), 0u);
  EXPECT_TRUE(moved.active());
  EXPECT_EQ(moved.data().size(), 8u);
  a.reset();  // the moved-from lease returns nothing
  EXPECT_EQ(pool.stats().leased_slots, 1u);

  std::optional<SlotLease> b = pool.acquire(8);
  moved = std::move(*b);  // returns the slot `moved` held, takes b's
  EXPECT_EQ(pool.stats().leased_slots, 1u);
  EXPECT_EQ(pool.stats().bytes_in_use, 64u);
  EXPECT_THROW(b->in_flight(FakeCopy().completion()), std::logic_error);
}

TEST(PinnedStagingPool, InFlightRefusesANullCompletionAndKeepsTheLease) {
  FakeSlotMemory memory;
  PinnedStagingPool pool(config_of({{64, 1}}, ExhaustedPolicy::kFallback), memory);
  std::optional<SlotLease> lease = pool.acquire(8);
  EXPECT_THROW(lease->in_flight(nullptr), std::invalid_argument);
  EXPECT_TRUE(lease->active());
  send(*lease);
  EXPECT_FALSE(lease->active());
  EXPECT_THROW(lease->in_flight(FakeCopy().completion()), std::logic_error);
  EXPECT_EQ(pool.stats().in_flight_slots, 1u);
}

// ---- reclaim, drain, destruction

TEST(PinnedStagingPool, ReclaimFreesOnlyTheDoneCopies) {
  FakeSlotMemory memory;
  PinnedStagingPool pool(config_of({{64, 3}}, ExhaustedPolicy::kFallback), memory);
  std::vector<std::shared_ptr<CopyState>> copies;
  for (int i = 0; i < 3; ++i) copies.push_back(send(pool.acquire(64)));
  EXPECT_EQ(pool.reclaim(), 0u);
  copies[0]->complete();
  copies[2]->complete();
  EXPECT_EQ(pool.reclaim(), 2u);
  EXPECT_EQ(pool.reclaim(), 0u);
  EXPECT_EQ(pool.stats().in_flight_slots, 1u);
  EXPECT_EQ(pool.stats().bytes_in_use, 64u);
}

TEST(PinnedStagingPool, DrainWaitsForEveryCopy) {
  FakeSlotMemory memory;
  PinnedStagingPool pool(config_of({{64, 3}}, ExhaustedPolicy::kFallback), memory);
  std::vector<std::shared_ptr<CopyState>> copies;
  for (int i = 0; i < 3; ++i) copies.push_back(send(pool.acquire(64)));
  copies[1]->complete();
  pool.drain();
  for (const auto& copy : copies) EXPECT_TRUE(copy->completed);
  EXPECT_EQ(copies[0]->waits, 1);
  EXPECT_EQ(copies[2]->waits, 1);
  const StagingPoolStats s = pool.stats();
  EXPECT_EQ(s.in_flight_slots, 0u);
  EXPECT_EQ(s.bytes_in_use, 0u);
}

TEST(PinnedStagingPool, DestructionWaitsForEveryCopyBeforeFreeingAnySlot) {
  std::vector<std::string> events;
  FakeSlotMemory memory;
  std::vector<std::shared_ptr<CopyState>> copies;
  {
    PinnedStagingPool pool(config_of({{64, 2}, {256, 2}}, ExhaustedPolicy::kFallback), memory);
    for (const std::size_t bytes : {64u, 64u, 200u}) copies.push_back(send(pool.acquire(bytes)));
    for (std::size_t i = 0; i < copies.size(); ++i) {
      copies[i]->on_wait = [&events, i] { events.push_back("wait " + std::to_string(i)); };
    }
    memory.log_to(&events);
  }
  for (const auto& copy : copies) {
    EXPECT_EQ(copy->waits, 1);
    EXPECT_TRUE(copy->completed);
  }
  // Every copy waited for, in the order they started, before the first slot is freed.
  ASSERT_EQ(events.size(), 7u);
  EXPECT_EQ(std::vector(events.begin(), events.begin() + 3),
            (std::vector<std::string>{"wait 0", "wait 1", "wait 2"}));
  std::vector<std::string> frees(events.begin() + 3, events.end());
  std::sort(frees.begin(), frees.end());
  EXPECT_EQ(frees, (std::vector<std::string>{"free 256", "free 256", "free 64", "free 64"}));
  EXPECT_EQ(memory.live_blocks(), 0u);
}

TEST(PinnedStagingPool, DestructionLeaksASlotWhoseWaitFailed) {
  FakeSlotMemory memory;
  std::byte* failed_slot = nullptr;
  {
    PinnedStagingPool pool(config_of({{64, 3}}, ExhaustedPolicy::kFallback), memory);
    std::optional<SlotLease> failing = pool.acquire(64);
    failed_slot = failing->data().data();
    send(*failing)->wait_throws = true;
    send(pool.acquire(64));
  }
  EXPECT_EQ(memory.frees(), 2);  // not the slot a copy may still read
  EXPECT_EQ(memory.live_blocks(), 1u);
  EXPECT_EQ(memory.live_bytes(), 64u);
  EXPECT_EQ(memory.allocations().front().memory, failed_slot);
}

// ---- Statistics

TEST(PinnedStagingPool, StatisticsAreExact) {
  FakeSlotMemory memory;
  double clock = 0;
  StagingPoolConfig config = config_of({{64, 2}, {1024, 1}}, ExhaustedPolicy::kWait);
  config.max_pinned_bytes = 4096;
  config.clock = [&] { return clock; };
  PinnedStagingPool pool(std::move(config), memory);

  std::optional<SlotLease> a = pool.acquire(10);  // 64
  std::optional<SlotLease> b = pool.acquire(64);  // 64
  std::optional<SlotLease> c = pool.acquire(30);  // spills to 1024; in use 1152 (high water)
  const std::shared_ptr<CopyState> copy_a = send(*a);
  copy_a->on_wait = [&] { clock += 1.5; };
  b.reset();                                      // in use 1088
  std::optional<SlotLease> d = pool.acquire(50);  // b's slot back; in use 1152
  std::optional<SlotLease> e = pool.acquire(1);   // waits 1.5 s for a's copy
  send(*c)->complete();
  pool.reclaim();  // in use 128
  d.reset();       // in use 64

  const nlohmann::ordered_json expected = {
      {"buckets",
       // Size class 64: five requests (a, b, c, d, e), c spilled out; they found 2, 1, 0, 1 and 0
       // free slots. Size class 1024: no request of its own, c spilled in; its copy was found
       // done by reclaim().
       {{{"slot_bytes", 64},
         {"slots", 2},
         {"acquisitions", 4},
         {"requests", 5},
         {"spills_out", 1},
         {"spills_in", 0},
         {"fallbacks", 0},
         {"mean_free_seen", 0.8},
         {"high_water_in_use", 2},
         {"reclaimed_on_poll", 0}},
        {{"slot_bytes", 1024},
         {"slots", 1},
         {"acquisitions", 1},
         {"requests", 0},
         {"spills_out", 0},
         {"spills_in", 1},
         {"fallbacks", 0},
         {"mean_free_seen", 0.0},
         {"high_water_in_use", 1},
         {"reclaimed_on_poll", 1}}}},
      {"acquisitions", 5},
      {"spills", 1},
      {"waits", 1},
      {"wait_seconds", 1.5},
      {"fallbacks", 0},
      {"bytes_in_use", 64},
      {"high_water_bytes_in_use", 1152},
      {"leased_slots", 1},
      {"in_flight_slots", 0},
      {"pinned_bytes", 1152},
      {"max_pinned_bytes", 4096}};
  EXPECT_EQ(to_json(pool.stats()), expected) << to_json(pool.stats()).dump(2);
  EXPECT_EQ(to_json(pool.stats()).dump(), expected.dump());  // the key order too
}

// ---- The invariant under a randomized schedule, against a reference model

// What the pool must do, slot by slot: which slots are free, lent, or read by a copy (done or
// not), in the order the copies started.
class ReferenceModel {
 public:
  enum class State { kFree, kLeased, kInFlight };
  struct Slot {
    std::byte* memory;
    std::size_t bytes;
    std::size_t bucket;
    State state = State::kFree;
    bool copy_done = false;
    std::byte fill{0};
  };

  ReferenceModel(const std::vector<FakeSlotMemory::Allocation>& allocations,
                 const std::vector<std::size_t>& bucket_bytes) {
    for (const auto& a : allocations) {
      const auto bucket = static_cast<std::size_t>(
          std::find(bucket_bytes.begin(), bucket_bytes.end(), a.bytes) - bucket_bytes.begin());
      slots.push_back({a.memory, a.bytes, bucket});
    }
    bucket_slot_bytes = bucket_bytes;
  }

  std::size_t first_bucket(std::size_t bytes) const {
    std::size_t b = 0;
    while (bucket_slot_bytes[b] < bytes) ++b;
    return b;
  }
  bool has(std::size_t bucket, bool count_done_copies) const {
    return std::any_of(slots.begin(), slots.end(), [&](const Slot& s) {
      return s.bucket == bucket &&
             (s.state == State::kFree ||
              (count_done_copies && s.state == State::kInFlight && s.copy_done));
    });
  }
  // The bucket the pool must lend from, or none: the first bucket if it has a free slot, else
  // (after reclaiming) the smallest fitting one with a free or done slot.
  std::optional<std::size_t> expected_bucket(std::size_t bytes) const {
    const std::size_t first = first_bucket(bytes);
    if (has(first, false)) return first;
    for (std::size_t b = first; b < bucket_slot_bytes.size(); ++b) {
      if (has(b, true)) return b;
    }
    return std::nullopt;
  }
  // The slot whose copy the pool must wait for: the oldest fitting one in flight.
  std::optional<std::size_t> oldest_fitting_copy(std::size_t bytes) const {
    const std::size_t first = first_bucket(bytes);
    for (const std::size_t slot : copy_order) {
      if (slots[slot].bucket >= first) return slot;
    }
    return std::nullopt;
  }
  std::size_t reclaim() {
    std::size_t freed = 0;
    for (auto it = copy_order.begin(); it != copy_order.end();) {
      if (slots[*it].copy_done) {
        slots[*it].state = State::kFree;
        slots[*it].copy_done = false;
        it = copy_order.erase(it);
        ++freed;
      } else {
        ++it;
      }
    }
    return freed;
  }
  std::size_t slot_of(const std::byte* memory) const {
    for (std::size_t i = 0; i < slots.size(); ++i) {
      if (slots[i].memory == memory) return i;
    }
    ADD_FAILURE() << "a lease of memory the pool never allocated";
    return 0;
  }
  std::size_t count(State state) const {
    return static_cast<std::size_t>(
        std::count_if(slots.begin(), slots.end(), [&](const Slot& s) { return s.state == state; }));
  }
  std::size_t bytes_in_use() const {
    std::size_t sum = 0;
    for (const Slot& s : slots) sum += s.state == State::kFree ? 0 : s.bytes;
    return sum;
  }

  std::vector<Slot> slots;
  std::vector<std::size_t> bucket_slot_bytes;
  std::vector<std::size_t> copy_order;  // slots in flight, oldest first
};

bool holds(const ReferenceModel::Slot& s, std::size_t bytes) {
  return std::all_of(s.memory, s.memory + bytes, [&](std::byte b) { return b == s.fill; });
}

void run_random_schedule(ExhaustedPolicy policy, std::uint64_t seed, int operations) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  struct Held {
    SlotLease lease;
    std::size_t slot;
  };
  struct Copy {
    std::shared_ptr<CopyState> state;
    std::size_t slot;
  };
  // Before the pool: the copies' callbacks use them until the pool is gone.
  std::optional<ReferenceModel> reference;
  std::vector<Copy> copies;  // not yet completed by the test
  std::vector<std::size_t> waited;
  FakeSlotMemory memory;
  double clock = 0;
  StagingPoolConfig config = config_of({{64, 3}, {256, 2}, {1024, 2}}, policy);
  config.clock = [&] { return clock; };
  PinnedStagingPool pool(std::move(config), memory);
  ReferenceModel& model =
      reference.emplace(memory.allocations(), std::vector<std::size_t>{64, 256, 1024});
  std::vector<Held> held;  // after the pool: leases end before it
  std::mt19937_64 rng(seed);
  std::uint64_t acquisitions = 0, spills = 0, waits = 0, fallbacks = 0;
  std::size_t high_water = 0;
  std::uint8_t next_fill = 1;

  const auto pick = [&](std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
  };
  const auto request_bytes = [&]() -> std::size_t {
    const std::size_t range = pick(10);
    if (range < 5) return 1 + pick(64);
    if (range < 8) return 65 + pick(192);
    return 257 + pick(768);
  };
  // The copy of `slot` ends: it must still read what was written before it started.
  const auto on_complete = [&](std::size_t slot, std::size_t bytes) {
    return [&, slot, bytes] {
      EXPECT_EQ(model.slots[slot].state, ReferenceModel::State::kInFlight);
      EXPECT_TRUE(holds(model.slots[slot], bytes)) << "a slot was written under its copy";
      model.slots[slot].copy_done = true;
      copies.erase(std::find_if(copies.begin(), copies.end(),
                                [&](const Copy& c) { return c.slot == slot; }));
    };
  };

  for (int op = 0; op < operations; ++op) {
    const std::size_t action = pick(100);
    if (action < 40) {
      const std::size_t bytes = request_bytes();
      const std::size_t first = model.first_bucket(bytes);
      const std::optional<std::size_t> bucket = model.expected_bucket(bytes);
      std::optional<std::size_t> must_wait_for;
      if (!bucket && policy == ExhaustedPolicy::kWait) {
        must_wait_for = model.oldest_fitting_copy(bytes);
        if (!must_wait_for) continue;  // every fitting slot is lent to this thread: it would hang
      }
      std::optional<SlotLease> lease = pool.acquire(bytes);
      if (!model.has(first, false)) model.reclaim();  // as the pool did before looking further
      if (!bucket && !must_wait_for) {
        EXPECT_FALSE(lease.has_value());
        ++fallbacks;
        continue;
      }
      ASSERT_TRUE(lease.has_value());
      const std::size_t slot = model.slot_of(lease->data().data());
      if (must_wait_for) {
        ASSERT_EQ(waited.size(), 1u);
        EXPECT_EQ(waited.back(), *must_wait_for);
        EXPECT_EQ(slot, *must_wait_for);
        model.reclaim();
        waited.clear();
        ++waits;
      } else {
        EXPECT_EQ(model.slots[slot].bucket, *bucket);
      }
      // The invariant: never a slot lent or still read by a copy.
      ASSERT_EQ(model.slots[slot].state, ReferenceModel::State::kFree) << "op " << op;
      model.slots[slot].state = ReferenceModel::State::kLeased;
      model.slots[slot].fill = std::byte{next_fill};
      next_fill = static_cast<std::uint8_t>(next_fill % 250 + 1);
      std::fill(lease->data().begin(), lease->data().end(), model.slots[slot].fill);
      ++acquisitions;
      if (model.slots[slot].bucket != first) ++spills;
      held.push_back({std::move(*lease), slot});
      high_water = std::max(high_water, model.bytes_in_use());
    } else if (action < 65 && !held.empty()) {
      const std::size_t i = pick(held.size());
      const std::size_t slot = held[i].slot;
      const std::size_t bytes = held[i].lease.data().size();
      FakeCopy copy;
      copy.state->on_complete = on_complete(slot, bytes);
      copy.state->on_wait = [&, slot] {
        waited.push_back(slot);
        clock += 1;
      };
      held[i].lease.in_flight(copy.completion());
      held.erase(held.begin() + static_cast<std::ptrdiff_t>(i));
      model.slots[slot].state = ReferenceModel::State::kInFlight;
      model.copy_order.push_back(slot);
      copies.push_back({copy.state, slot});
    } else if (action < 72 && !held.empty()) {
      const std::size_t i = pick(held.size());
      model.slots[held[i].slot].state = ReferenceModel::State::kFree;
      held.erase(held.begin() + static_cast<std::ptrdiff_t>(i));
    } else if (action < 92 && !copies.empty()) {
      const std::shared_ptr<CopyState> state = copies[pick(copies.size())].state;
      state->complete();
    } else if (action < 99) {
      EXPECT_EQ(pool.reclaim(), model.reclaim());
    } else {
      pool.drain();
      EXPECT_TRUE(copies.empty());
      model.reclaim();
      waited.clear();
    }
    const StagingPoolStats s = pool.stats();
    ASSERT_EQ(s.leased_slots, model.count(ReferenceModel::State::kLeased)) << "op " << op;
    ASSERT_EQ(s.in_flight_slots, model.count(ReferenceModel::State::kInFlight)) << "op " << op;
    ASSERT_EQ(s.bytes_in_use, model.bytes_in_use()) << "op " << op;
  }

  const StagingPoolStats s = pool.stats();
  EXPECT_EQ(s.acquisitions, acquisitions);
  EXPECT_EQ(s.spills, spills);
  EXPECT_EQ(s.waits, waits);
  EXPECT_DOUBLE_EQ(s.wait_seconds, static_cast<double>(waits));
  EXPECT_EQ(s.fallbacks, fallbacks);
  EXPECT_EQ(s.high_water_bytes_in_use, high_water);
  EXPECT_GT(acquisitions, static_cast<std::uint64_t>(operations) / 5);
  if (policy == ExhaustedPolicy::kWait) {
    EXPECT_GT(waits, 10u);
  } else {
    EXPECT_GT(fallbacks, 10u);
  }
  held.clear();
  pool.drain();
  EXPECT_EQ(pool.stats().bytes_in_use, 0u);
}

TEST(PinnedStagingPoolRandomized, FallbackMatchesTheModel) {
  for (const std::uint64_t seed : {1u, 2u, 3u, 20240601u}) {
    run_random_schedule(ExhaustedPolicy::kFallback, seed, 5000);
  }
}

TEST(PinnedStagingPoolRandomized, WaitMatchesTheModel) {
  for (const std::uint64_t seed : {4u, 5u, 6u, 20240602u}) {
    run_random_schedule(ExhaustedPolicy::kWait, seed, 5000);
  }
}

// ---- Real threads

// Submitter threads acquire, fill and send slots; one completer thread ends their copies in a
// random order. A slot may be lent only while no other thread holds or copies it.
void run_threaded_stress(ExhaustedPolicy policy, std::size_t max_polls) {
  constexpr int kSubmitters = 4;
  constexpr int kRequestsEach = 1500;
  // Before the pool: the copies' callbacks use them until the pool is gone.
  std::mutex busy_mutex;
  std::set<const std::byte*> busy;  // lent or read by a copy
  std::atomic<int> reused_while_busy{0};
  std::atomic<int> overwritten{0};
  std::atomic<std::uint64_t> lent{0}, fell_back{0};

  std::mutex queue_mutex;
  std::condition_variable queue_cv;
  std::vector<std::shared_ptr<CopyState>> queue;
  int submitters_left = kSubmitters;

  FakeSlotMemory memory;
  StagingPoolConfig config = config_of({{64, 2}, {256, 2}, {1024, 1}}, policy, max_polls);
  PinnedStagingPool pool(std::move(config), memory);

  const auto submitter = [&](int id) {
    std::mt19937_64 rng(1000 + static_cast<std::uint64_t>(id));
    std::uniform_int_distribution<std::size_t> bytes_of(1, 1024);
    for (int r = 0; r < kRequestsEach; ++r) {
      const std::size_t bytes = bytes_of(rng);
      std::optional<SlotLease> lease = pool.acquire(bytes);
      if (!lease) {
        ++fell_back;
        continue;
      }
      ++lent;
      std::byte* const slot = lease->data().data();
      {
        const std::lock_guard lock(busy_mutex);
        if (!busy.insert(slot).second) ++reused_while_busy;
      }
      const auto fill = static_cast<std::byte>(1 + (id * 31 + r) % 250);
      std::fill(lease->data().begin(), lease->data().end(), fill);
      const auto leave = [&, slot, bytes, fill] {
        if (!std::all_of(slot, slot + bytes, [&](std::byte b) { return b == fill; })) {
          ++overwritten;
        }
        const std::lock_guard lock(busy_mutex);
        busy.erase(slot);
      };
      if (rng() % 10 == 0) {
        leave();  // dropped before any copy (an exception in the real family)
        continue;
      }
      FakeCopy copy;
      copy.state->wait_blocks = true;
      copy.state->on_complete = leave;
      lease->in_flight(copy.completion());
      const std::lock_guard lock(queue_mutex);
      queue.push_back(copy.state);
      queue_cv.notify_one();
    }
    const std::lock_guard lock(queue_mutex);
    --submitters_left;
    queue_cv.notify_one();
  };

  std::thread completer([&] {
    std::mt19937_64 rng(99);
    std::unique_lock lock(queue_mutex);
    for (;;) {
      queue_cv.wait(lock, [&] { return !queue.empty() || submitters_left == 0; });
      if (queue.empty()) return;
      const std::size_t i = rng() % queue.size();
      const std::shared_ptr<CopyState> copy = queue[i];
      queue.erase(queue.begin() + static_cast<std::ptrdiff_t>(i));
      lock.unlock();
      if (rng() % 4 == 0) std::this_thread::yield();
      copy->complete();
      lock.lock();
    }
  });
  std::vector<std::thread> submitters;
  for (int id = 0; id < kSubmitters; ++id) submitters.emplace_back(submitter, id);
  for (std::thread& t : submitters) t.join();
  completer.join();
  pool.drain();

  EXPECT_EQ(reused_while_busy.load(), 0);
  EXPECT_EQ(overwritten.load(), 0);
  EXPECT_TRUE(busy.empty());
  const StagingPoolStats s = pool.stats();
  EXPECT_EQ(s.acquisitions, lent.load());
  EXPECT_EQ(s.fallbacks, fell_back.load());
  EXPECT_EQ(lent.load() + fell_back.load(), std::uint64_t{kSubmitters * kRequestsEach});
  EXPECT_EQ(s.leased_slots, 0u);
  EXPECT_EQ(s.in_flight_slots, 0u);
  EXPECT_EQ(s.bytes_in_use, 0u);
  EXPECT_LE(s.high_water_bytes_in_use, s.pinned_bytes);
  if (policy == ExhaustedPolicy::kWait) {
    EXPECT_EQ(s.fallbacks, 0u);
    EXPECT_GT(s.waits, 0u);
  }

  // No slot lost: all five can be lent at once, each a different allocation.
  std::vector<SlotLease> all;
  std::set<const std::byte*> distinct;
  for (int i = 0; i < 5; ++i) {
    std::optional<SlotLease> lease = pool.acquire(1);
    ASSERT_TRUE(lease.has_value()) << "slot " << i;
    distinct.insert(lease->data().data());
    all.push_back(std::move(*lease));
  }
  EXPECT_EQ(distinct.size(), 5u);
}

TEST(PinnedStagingPoolThreads, WaitPolicyNeverReusesABusySlotOrLosesOne) {
  run_threaded_stress(ExhaustedPolicy::kWait, 0);
}

TEST(PinnedStagingPoolThreads, WaitThenFallbackNeverReusesABusySlotOrLosesOne) {
  run_threaded_stress(ExhaustedPolicy::kWaitThenFallback, 3);
}

}  // namespace
}  // namespace pathbench::test_pinned_staging_pool
