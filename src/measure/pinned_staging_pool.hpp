#pragma once

// A bounded pool of pinned host slots through which pageable request data is staged for an
// asynchronous H2D copy (the serving family's request replay). The caller copies its pageable
// bytes into a slot, enqueues the copy, and hands the slot back as in flight with the copy's
// completion; the pool gives the slot out again only once that completion is done, because the
// copy engine may still be reading it until then. Nothing here touches CUDA: the pinned memory
// (cudaHostAlloc) and the completion (a CUDA event) are plugged in, so the pool's rules are
// tested on a machine without a GPU.
//
// Thread safety: every member of PinnedStagingPool may be called from several threads at once
// (one mutex; a completion's wait() is called with it released). A SlotLease belongs to one
// thread at a time.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

namespace pathbench {

// Where slots come from: pinned host memory in the CUDA family (cudaHostAlloc / cudaFreeHost).
// The pool allocates every slot once, at construction, and frees each at destruction.
class SlotMemory {
 public:
  virtual ~SlotMemory() = default;
  // `bytes` of memory, or nullptr (or an exception) when it cannot be had.
  virtual std::byte* allocate(std::size_t bytes) = 0;
  virtual void free(std::byte* memory, std::size_t bytes) noexcept = 0;
};

// The end of one asynchronous copy out of a slot (a CUDA event recorded after it). Once done()
// has returned true or wait() has returned, the copy no longer reads the slot.
class Completion {
 public:
  virtual ~Completion() = default;
  virtual bool done() = 0;  // poll, never blocks (cudaEventQuery)
  virtual void wait() = 0;  // blocks until done (cudaEventSynchronize)
};

struct SlotBucket {
  std::size_t slot_bytes = 0;
  std::size_t slots = 0;
};

// What acquire does when no slot of a fitting bucket is free.
enum class ExhaustedPolicy {
  kWait,              // wait for the oldest in-flight fitting slot (or for a lease to come back)
  kFallback,          // return no slot: the caller copies from pageable memory
  kWaitThenFallback,  // poll up to max_polls times, then as kFallback
};

struct StagingPoolConfig {
  std::vector<SlotBucket> buckets;  // any order; kept sorted by slot size
  std::size_t max_pinned_bytes = 0;
  ExhaustedPolicy policy = ExhaustedPolicy::kWait;
  std::size_t max_polls = 0;  // kWaitThenFallback
  // Between two polls of kWaitThenFallback; zero yields the thread instead of sleeping.
  std::chrono::microseconds poll_interval{0};
  // Seconds on some monotonic clock, for the wait statistics; empty: std::chrono::steady_clock.
  std::function<double()> clock;
};

struct BucketStats {
  std::size_t slot_bytes = 0;
  std::size_t slots = 0;
  std::uint64_t acquisitions = 0;  // leases handed out of this bucket
  // Per size class: acquisitions whose smallest fitting bucket is this one ...
  std::uint64_t requests = 0;
  std::uint64_t spills_out = 0;  // ... served by a larger bucket
  std::uint64_t fallbacks = 0;   // ... that got no slot (pageable)
  std::uint64_t free_seen = 0;   // summed free slots of this bucket they found (after polling)
  std::uint64_t spills_in = 0;   // leases of this bucket for a smaller class
  // Slots leased or in flight: now, and at most.
  std::size_t in_use = 0;
  std::size_t high_water_in_use = 0;
  // Slots whose copy had completed but were still counted in flight when an acquisition polled
  // the bucket: what lazy reclaiming held back.
  std::uint64_t reclaimed_on_poll = 0;

  // Mean free slots a request of this class found: its occupancy as the requests saw it.
  double mean_free_seen() const {
    return requests == 0 ? 0.0 : static_cast<double>(free_seen) / static_cast<double>(requests);
  }
};

struct StagingPoolStats {
  std::vector<BucketStats> buckets;  // ascending slot size
  std::uint64_t acquisitions = 0;
  // Acquisitions served by a larger bucket than the smallest that fits (it had no free slot).
  std::uint64_t spills = 0;
  // Acquisitions that found no free fitting slot and waited or polled, whatever they ended
  // with; wait_seconds is the time they spent doing so.
  std::uint64_t waits = 0;
  double wait_seconds = 0;
  std::uint64_t fallbacks = 0;  // acquisitions that returned no slot
  // Bytes of slots not free (leased or in flight), counted by slot size: what is pinned for it.
  std::size_t bytes_in_use = 0;
  std::size_t high_water_bytes_in_use = 0;
  std::size_t leased_slots = 0;
  std::size_t in_flight_slots = 0;
  std::size_t pinned_bytes = 0;  // allocated, never above max_pinned_bytes
  std::size_t max_pinned_bytes = 0;
};

nlohmann::ordered_json to_json(const StagingPoolStats& stats);

class PinnedStagingPool;

// One slot, lent to the caller. Give it back busy with in_flight() once a copy out of it is
// enqueued; destroyed without that (an exception between acquire and enqueue), the slot is free
// again at once. Must not outlive its pool.
class SlotLease {
 public:
  SlotLease(SlotLease&& other) noexcept;
  SlotLease& operator=(SlotLease&& other) noexcept;
  SlotLease(const SlotLease&) = delete;
  SlotLease& operator=(const SlotLease&) = delete;
  ~SlotLease();

  // The requested bytes of the slot, which may be larger (slot_bytes). Once the lease has ended:
  // empty, 0 and 0.
  std::span<std::byte> data() const;
  std::size_t slot_bytes() const;
  std::size_t bucket() const;  // index into stats().buckets
  bool active() const { return pool_ != nullptr; }
  // Ends the lease: the slot stays busy until `completion` is done. Throws
  // std::invalid_argument for a null completion (the lease is kept), std::logic_error on a
  // lease already ended.
  void in_flight(std::unique_ptr<Completion> completion);

 private:
  friend class PinnedStagingPool;
  SlotLease(PinnedStagingPool& pool, std::size_t slot, std::size_t bytes)
      : pool_(&pool), slot_(slot), bytes_(bytes) {}
  void return_slot() noexcept;

  PinnedStagingPool* pool_;  // null once the lease has ended
  std::size_t slot_;
  std::size_t bytes_;
};

class PinnedStagingPool {
 public:
  // Allocates every slot from `memory`, which must outlive the pool. Throws
  // std::invalid_argument for an empty or zero-sized bucket, two buckets of one slot size, or
  // buckets that need more than max_pinned_bytes (the message says by how much), and
  // std::runtime_error naming the bucket and its bytes when an allocation fails (whatever was
  // allocated is freed again).
  PinnedStagingPool(StagingPoolConfig config, SlotMemory& memory);
  // Waits for every in-flight copy before freeing its slot. A slot whose wait throws is leaked
  // rather than freed under a copy that may still read it.
  ~PinnedStagingPool();
  PinnedStagingPool(const PinnedStagingPool&) = delete;
  PinnedStagingPool& operator=(const PinnedStagingPool&) = delete;

  // A slot of the smallest bucket that fits `bytes`, else of the next larger one with a free
  // slot, else as the policy says; nullopt means go pageable (counted as a fallback). Throws
  // std::invalid_argument for zero bytes or more than the largest slot (split those with
  // chunks_for). Under kWait a thread holding every fitting slot as an unended lease waits for
  // another thread to end one.
  std::optional<SlotLease> acquire(std::size_t bytes);

  // How a request of `bytes` is split into acquirable chunks: largest-slot chunks, then the
  // rest. Empty for zero bytes.
  std::vector<std::size_t> chunks_for(std::size_t bytes) const;
  std::size_t largest_slot_bytes() const;

  // Polls every in-flight completion and frees the slots of those done; returns how many.
  std::size_t reclaim();
  // Waits for every in-flight completion, including ones added while waiting.
  void drain();

  StagingPoolStats stats() const;

 private:
  friend class SlotLease;
  enum class SlotState { kFree, kLeased, kInFlight };
  struct FreeSlotMemory {
    SlotMemory* memory;
    std::size_t bytes;
    void operator()(std::byte* p) const noexcept { memory->free(p, bytes); }
  };
  struct Slot {
    std::unique_ptr<std::byte, FreeSlotMemory> memory;
    std::size_t bytes;
    std::size_t bucket;
    SlotState state = SlotState::kFree;
  };
  // Shared, not owned by the entry alone: a thread waits on it with the mutex released while
  // another may reclaim the entry.
  struct InFlight {
    std::size_t slot;
    std::shared_ptr<Completion> completion;
  };

  std::size_t smallest_fitting_bucket(std::size_t bytes) const;
  // `first_look`: the acquisition's first look, whose free slots its size class's stats count.
  std::optional<std::size_t> take_free_slot(std::size_t first_bucket, bool first_look = false);
  std::optional<std::size_t> when_exhausted(std::unique_lock<std::mutex>& lock,
                                            std::size_t first_bucket);
  void lease(std::size_t slot, std::size_t first_bucket);
  void end_lease(std::size_t slot, std::shared_ptr<Completion> completion) noexcept;
  std::size_t reclaim_done();
  void retire(const std::shared_ptr<Completion>& completion);
  void free_slot(std::size_t slot);
  double now() const;

  StagingPoolConfig config_;
  std::vector<Slot> slots_;  // fixed at construction: leases read their memory unlocked
  // Free slots of each bucket, last freed on top; reserved for every slot, so returning one never
  // allocates (and never throws under a copy in flight).
  std::vector<std::vector<std::size_t>> free_slots_;
  std::vector<InFlight> in_flight_;  // oldest first; reserved for every slot, as free_slots_
  StagingPoolStats stats_;
  mutable std::mutex mutex_;
  std::condition_variable lease_ended_;
};

}  // namespace pathbench
