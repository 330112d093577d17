#include "measure/pinned_staging_pool.hpp"

#include <algorithm>
#include <exception>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "core/units.hpp"

namespace pathbench {

namespace {

constexpr const char* kWho = "pinned staging pool: ";

std::string bucket_name(const SlotBucket& b) {
  return std::to_string(b.slots) + " x " + format_bytes(b.slot_bytes);
}

// Sorted by slot size, so that the first bucket that fits is the smallest.
std::vector<SlotBucket> checked_buckets(std::vector<SlotBucket> buckets,
                                        std::size_t max_pinned_bytes) {
  if (buckets.empty()) throw std::invalid_argument(std::string(kWho) + "no buckets");
  std::sort(buckets.begin(), buckets.end(),
            [](const SlotBucket& a, const SlotBucket& b) { return a.slot_bytes < b.slot_bytes; });
  constexpr std::size_t kMax = std::numeric_limits<std::size_t>::max();
  std::size_t needed = 0;
  bool overflows = false;
  std::string listed;
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    const SlotBucket& b = buckets[i];
    if (b.slot_bytes == 0 || b.slots == 0) {
      throw std::invalid_argument(std::string(kWho) + "bucket " + bucket_name(b) +
                                  " has no bytes or no slots");
    }
    if (i > 0 && buckets[i - 1].slot_bytes == b.slot_bytes) {
      throw std::invalid_argument(std::string(kWho) + "two buckets of " +
                                  format_bytes(b.slot_bytes) + " slots");
    }
    if (b.slots > kMax / b.slot_bytes || needed > kMax - b.slots * b.slot_bytes) {
      overflows = true;
    } else {
      needed += b.slots * b.slot_bytes;
    }
    listed += (i > 0 ? " + " : "") + bucket_name(b);
  }
  if (overflows) {
    throw std::invalid_argument(std::string(kWho) + "the buckets (" + listed +
                                ") need more bytes than a size_t holds, max_pinned_bytes is " +
                                std::to_string(max_pinned_bytes));
  }
  if (needed > max_pinned_bytes) {
    const std::size_t over = needed - max_pinned_bytes;
    throw std::invalid_argument(std::string(kWho) + "the buckets (" + listed + ") need " +
                                std::to_string(needed) + " bytes, " + std::to_string(over) +
                                " bytes (" + format_bytes(over) + ") more than max_pinned_bytes " +
                                std::to_string(max_pinned_bytes) + " (" +
                                format_bytes(max_pinned_bytes) + ")");
  }
  return buckets;
}

std::byte* allocate_slot(SlotMemory& memory, const SlotBucket& bucket, std::size_t index,
                         std::size_t allocated_before) {
  std::string reason = "the allocator returned no memory";
  try {
    if (std::byte* p = memory.allocate(bucket.slot_bytes)) return p;
  } catch (const std::exception& e) {
    reason = e.what();
  }
  throw std::runtime_error(
      std::string(kWho) + "could not allocate slot " + std::to_string(index + 1) + " of " +
      std::to_string(bucket.slots) + " of the " + format_bytes(bucket.slot_bytes) + " bucket (" +
      std::to_string(bucket.slot_bytes) + " bytes; " + std::to_string(allocated_before) +
      " bytes allocated before it): " + reason);
}

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

nlohmann::ordered_json to_json(const StagingPoolStats& stats) {
  nlohmann::ordered_json buckets = nlohmann::ordered_json::array();
  for (const BucketStats& b : stats.buckets) {
    buckets.push_back({{"slot_bytes", b.slot_bytes},
                       {"slots", b.slots},
                       {"acquisitions", b.acquisitions},
                       {"requests", b.requests},
                       {"spills_out", b.spills_out},
                       {"spills_in", b.spills_in},
                       {"fallbacks", b.fallbacks},
                       {"mean_free_seen", b.mean_free_seen()},
                       {"high_water_in_use", b.high_water_in_use},
                       {"reclaimed_on_poll", b.reclaimed_on_poll}});
  }
  return {{"buckets", std::move(buckets)},
          {"acquisitions", stats.acquisitions},
          {"spills", stats.spills},
          {"waits", stats.waits},
          {"wait_seconds", stats.wait_seconds},
          {"fallbacks", stats.fallbacks},
          {"bytes_in_use", stats.bytes_in_use},
          {"high_water_bytes_in_use", stats.high_water_bytes_in_use},
          {"leased_slots", stats.leased_slots},
          {"in_flight_slots", stats.in_flight_slots},
          {"pinned_bytes", stats.pinned_bytes},
          {"max_pinned_bytes", stats.max_pinned_bytes}};
}

// ---- SlotLease

SlotLease::SlotLease(SlotLease&& other) noexcept
    : pool_(std::exchange(other.pool_, nullptr)), slot_(other.slot_), bytes_(other.bytes_) {}

SlotLease& SlotLease::operator=(SlotLease&& other) noexcept {
  if (this != &other) {
    return_slot();
    pool_ = std::exchange(other.pool_, nullptr);
    slot_ = other.slot_;
    bytes_ = other.bytes_;
  }
  return *this;
}

SlotLease::~SlotLease() { return_slot(); }

std::span<std::byte> SlotLease::data() const {
  if (!pool_) return {};
  return {pool_->slots_[slot_].memory.get(), bytes_};
}

std::size_t SlotLease::slot_bytes() const { return pool_ ? pool_->slots_[slot_].bytes : 0; }

std::size_t SlotLease::bucket() const { return pool_ ? pool_->slots_[slot_].bucket : 0; }

void SlotLease::in_flight(std::unique_ptr<Completion> completion) {
  if (!pool_) throw std::logic_error(std::string(kWho) + "in_flight on a lease already ended");
  if (!completion) throw std::invalid_argument(std::string(kWho) + "in_flight without completion");
  std::shared_ptr<Completion> shared;
  try {
    shared = std::move(completion);
  } catch (...) {
    // The copy is enqueued: the lease's destructor frees the slot, so it must not still be read.
    completion->wait();
    throw;
  }
  std::exchange(pool_, nullptr)->end_lease(slot_, std::move(shared));
}

void SlotLease::return_slot() noexcept {
  if (pool_) std::exchange(pool_, nullptr)->end_lease(slot_, nullptr);
}

// ---- PinnedStagingPool

PinnedStagingPool::PinnedStagingPool(StagingPoolConfig config, SlotMemory& memory)
    : config_(std::move(config)) {
  config_.buckets = checked_buckets(std::move(config_.buckets), config_.max_pinned_bytes);
  std::size_t total_slots = 0;
  for (const SlotBucket& b : config_.buckets) total_slots += b.slots;
  slots_.reserve(total_slots);
  in_flight_.reserve(total_slots);
  free_slots_.resize(config_.buckets.size());
  stats_.max_pinned_bytes = config_.max_pinned_bytes;
  for (std::size_t bucket = 0; bucket < config_.buckets.size(); ++bucket) {
    const SlotBucket& b = config_.buckets[bucket];
    free_slots_[bucket].reserve(b.slots);
    stats_.buckets.push_back({b.slot_bytes, b.slots, 0});
    for (std::size_t i = 0; i < b.slots; ++i) {
      std::byte* p = allocate_slot(memory, b, i, stats_.pinned_bytes);
      slots_.push_back({std::unique_ptr<std::byte, FreeSlotMemory>(p, {&memory, b.slot_bytes}),
                        b.slot_bytes, bucket});
      stats_.pinned_bytes += b.slot_bytes;
    }
    // Reversed, so that the first slot of a bucket is the first handed out.
    for (std::size_t i = 0; i < b.slots; ++i) free_slots_[bucket].push_back(slots_.size() - 1 - i);
  }
}

PinnedStagingPool::~PinnedStagingPool() {
  // No other thread may use a pool being destroyed, so the mutex is not needed here.
  for (InFlight& entry : in_flight_) {
    try {
      entry.completion->wait();
    } catch (...) {
      (void)slots_[entry.slot].memory.release();  // leaked: the copy may still read it
    }
  }
}

std::size_t PinnedStagingPool::largest_slot_bytes() const {
  return config_.buckets.back().slot_bytes;
}

std::vector<std::size_t> PinnedStagingPool::chunks_for(std::size_t bytes) const {
  const std::size_t largest = largest_slot_bytes();
  std::vector<std::size_t> chunks(bytes / largest, largest);
  if (bytes % largest != 0) chunks.push_back(bytes % largest);
  return chunks;
}

std::size_t PinnedStagingPool::smallest_fitting_bucket(std::size_t bytes) const {
  if (bytes == 0) throw std::invalid_argument(std::string(kWho) + "acquire of 0 bytes");
  const auto& buckets = config_.buckets;
  const auto it = std::find_if(buckets.begin(), buckets.end(),
                               [bytes](const SlotBucket& b) { return b.slot_bytes >= bytes; });
  if (it == buckets.end()) {
    throw std::invalid_argument(std::string(kWho) + "acquire of " + std::to_string(bytes) +
                                " bytes, more than the largest slot (" +
                                std::to_string(largest_slot_bytes()) +
                                " bytes): split it with chunks_for");
  }
  return static_cast<std::size_t>(it - buckets.begin());
}

std::optional<SlotLease> PinnedStagingPool::acquire(std::size_t bytes) {
  const std::size_t first_bucket = smallest_fitting_bucket(bytes);
  std::unique_lock lock(mutex_);
  BucketStats& cls = stats_.buckets[first_bucket];
  ++cls.requests;
  std::optional<std::size_t> slot = take_free_slot(first_bucket, true);
  if (!slot) slot = when_exhausted(lock, first_bucket);
  if (!slot) {
    ++cls.fallbacks;
    return std::nullopt;
  }
  if (slots_[*slot].bucket != first_bucket) ++cls.spills_out;
  return SlotLease(*this, *slot, bytes);
}

// The smallest bucket's free slot if it has one; otherwise, after polling the copies in flight,
// the first free slot from there up: reclaiming first keeps a small request out of a large slot
// when a small one has just become free.
std::optional<std::size_t> PinnedStagingPool::take_free_slot(std::size_t first_bucket,
                                                             bool first_look) {
  if (free_slots_[first_bucket].empty()) reclaim_done();
  // What a request finds of its own size class, once the finished copies are reclaimed.
  if (first_look) stats_.buckets[first_bucket].free_seen += free_slots_[first_bucket].size();
  for (std::size_t bucket = first_bucket; bucket < free_slots_.size(); ++bucket) {
    if (free_slots_[bucket].empty()) continue;
    const std::size_t slot = free_slots_[bucket].back();
    free_slots_[bucket].pop_back();
    lease(slot, first_bucket);
    return slot;
  }
  return std::nullopt;
}

std::optional<std::size_t> PinnedStagingPool::when_exhausted(std::unique_lock<std::mutex>& lock,
                                                             std::size_t first_bucket) {
  const ExhaustedPolicy policy = config_.policy;
  if (policy == ExhaustedPolicy::kFallback ||
      (policy == ExhaustedPolicy::kWaitThenFallback && config_.max_polls == 0)) {
    ++stats_.fallbacks;
    return std::nullopt;
  }
  const double start = now();
  std::optional<std::size_t> slot;
  if (policy == ExhaustedPolicy::kWait) {
    while (!slot) {
      const auto oldest =
          std::find_if(in_flight_.begin(), in_flight_.end(),
                       [&](const InFlight& e) { return slots_[e.slot].bucket >= first_bucket; });
      if (oldest == in_flight_.end()) {
        lease_ended_.wait(lock);  // every fitting slot is leased: another thread will end one
      } else {
        // The oldest copy is the likeliest to end first; a slot another thread frees meanwhile
        // is taken on the next look, after this wait.
        const std::shared_ptr<Completion> completion = oldest->completion;
        lock.unlock();
        completion->wait();
        lock.lock();
        retire(completion);
      }
      slot = take_free_slot(first_bucket);
    }
  } else {
    for (std::size_t poll = 0; poll < config_.max_polls && !slot; ++poll) {
      lock.unlock();
      if (config_.poll_interval.count() > 0) {
        std::this_thread::sleep_for(config_.poll_interval);
      } else {
        std::this_thread::yield();
      }
      lock.lock();
      slot = take_free_slot(first_bucket);  // polls the copies in flight
    }
    if (!slot) ++stats_.fallbacks;
  }
  ++stats_.waits;
  stats_.wait_seconds += now() - start;
  return slot;
}

void PinnedStagingPool::lease(std::size_t slot, std::size_t first_bucket) {
  Slot& s = slots_[slot];
  s.state = SlotState::kLeased;
  ++stats_.acquisitions;
  BucketStats& b = stats_.buckets[s.bucket];
  ++b.acquisitions;
  ++b.in_use;
  b.high_water_in_use = std::max(b.high_water_in_use, b.in_use);
  if (s.bucket != first_bucket) {
    ++stats_.spills;
    ++b.spills_in;
  }
  ++stats_.leased_slots;
  stats_.bytes_in_use += s.bytes;
  stats_.high_water_bytes_in_use = std::max(stats_.high_water_bytes_in_use, stats_.bytes_in_use);
}

void PinnedStagingPool::end_lease(std::size_t slot,
                                  std::shared_ptr<Completion> completion) noexcept {
  const std::lock_guard lock(mutex_);
  if (completion) {
    slots_[slot].state = SlotState::kInFlight;
    --stats_.leased_slots;
    ++stats_.in_flight_slots;
    in_flight_.push_back({slot, std::move(completion)});  // within the reserve: cannot throw
  } else {
    free_slot(slot);
  }
  lease_ended_.notify_all();
}

std::size_t PinnedStagingPool::reclaim() {
  const std::lock_guard lock(mutex_);
  return reclaim_done();
}

std::size_t PinnedStagingPool::reclaim_done() {
  std::size_t freed = 0;
  // One entry at a time, so that a done() that throws leaves every other entry in place.
  for (std::size_t i = 0; i < in_flight_.size();) {
    if (in_flight_[i].completion->done()) {
      ++stats_.buckets[slots_[in_flight_[i].slot].bucket].reclaimed_on_poll;
      free_slot(in_flight_[i].slot);
      in_flight_.erase(in_flight_.begin() + static_cast<std::ptrdiff_t>(i));
      ++freed;
    } else {
      ++i;
    }
  }
  if (freed > 0) lease_ended_.notify_all();
  return freed;
}

void PinnedStagingPool::drain() {
  std::unique_lock lock(mutex_);
  while (!in_flight_.empty()) {
    const std::shared_ptr<Completion> completion = in_flight_.front().completion;
    lock.unlock();
    completion->wait();
    lock.lock();
    retire(completion);
  }
}

// After `completion`'s wait returned; another thread may have retired it meanwhile.
void PinnedStagingPool::retire(const std::shared_ptr<Completion>& completion) {
  const auto it = std::find_if(in_flight_.begin(), in_flight_.end(),
                               [&](const InFlight& e) { return e.completion == completion; });
  if (it == in_flight_.end()) return;
  free_slot(it->slot);
  in_flight_.erase(it);
  lease_ended_.notify_all();
}

void PinnedStagingPool::free_slot(std::size_t slot) {
  Slot& s = slots_[slot];
  --(s.state == SlotState::kLeased ? stats_.leased_slots : stats_.in_flight_slots);
  s.state = SlotState::kFree;
  --stats_.buckets[s.bucket].in_use;
  stats_.bytes_in_use -= s.bytes;
  free_slots_[s.bucket].push_back(slot);  // within the reserve: cannot throw
}

StagingPoolStats PinnedStagingPool::stats() const {
  const std::lock_guard lock(mutex_);
  return stats_;
}

double PinnedStagingPool::now() const { return config_.clock ? config_.clock() : steady_seconds(); }

}  // namespace pathbench
