#include "measure/caching_replay.hpp"

#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace pathbench {

namespace {

// The blocks a replay holds; gives them back to the allocator, whatever happens.
class HeldBlocks {
 public:
  explicit HeldBlocks(CachingAllocator& allocator) : allocator_(allocator) {}
  HeldBlocks(const HeldBlocks&) = delete;
  HeldBlocks& operator=(const HeldBlocks&) = delete;
  ~HeldBlocks() {
    try {
      release_all();
    } catch (...) {
      // Unwinding already: the error that caused it is the one to report.
    }
  }
  void add(std::uint32_t id, std::uint64_t address) {
    if (!by_id_.emplace(id, address).second) {
      allocator_.free(address);
      throw std::invalid_argument("caching replay: allocation id " + std::to_string(id) +
                                  " allocated twice");
    }
  }
  void release(std::uint32_t id) {
    const auto it = by_id_.find(id);
    if (it == by_id_.end()) {
      throw std::invalid_argument("caching replay: allocation id " + std::to_string(id) +
                                  " freed but not held");
    }
    const std::uint64_t address = it->second;
    by_id_.erase(it);
    allocator_.free(address);
  }
  void release_all() {
    while (!by_id_.empty()) release(by_id_.begin()->first);
  }

 private:
  CachingAllocator& allocator_;
  std::unordered_map<std::uint32_t, std::uint64_t> by_id_;
};

}  // namespace

CachingReplayOutcome run_caching_replay(CachingAllocator& allocator,
                                        const FragmentationPattern& pattern,
                                        std::uint64_t loop_bytes, std::uint64_t max_loop,
                                        const std::function<std::uint64_t()>& device_free) {
  CachingReplayOutcome out;
  {
    HeldBlocks held(allocator);
    auto fail_now = [&] {
      out.failed = true;
      out.failure = *allocator.last_failure();
      out.at_failure = allocator.stats();
      out.free_at_failure = device_free();
    };
    for (std::size_t i = 0; i < pattern.events.size() && !out.failed; ++i) {
      const AllocationEvent& e = pattern.events[i];
      if (e.kind == AllocationEvent::Kind::kFree) {
        held.release(e.id);
        continue;
      }
      const auto address = allocator.allocate(e.bytes);
      if (!address) {
        out.failed_in_replay = true;
        out.failed_event = i;
        fail_now();
        break;
      }
      held.add(e.id, *address);
    }
    out.after_replay = allocator.stats();
    out.free_after_replay = device_free();
    // The loop's ids follow the pattern's: no pattern has 2^32 allocations.
    std::uint32_t id = static_cast<std::uint32_t>(pattern.allocations);
    while (!out.failed && out.allocations_until_failure < max_loop) {
      const auto address = allocator.allocate(loop_bytes);
      if (!address) {
        fail_now();
        break;
      }
      held.add(id++, *address);
      ++out.allocations_until_failure;
    }
    held.release_all();
  }
  allocator.release_cached();
  return out;
}

}  // namespace pathbench
