#pragma once

// The device_memory family's caching-allocator replay, host-only: a fragmentation pattern
// through a CachingAllocator, then allocations of one size until the first one fails, with what
// the allocator and the device held at that moment (PyTorch's out-of-memory message: the
// request, the device's free memory, reserved, allocated and reserved-but-unused bytes). The
// allocator's segment source decides what a failure is: cudaMalloc on a GPU, a fake of known
// capacity in the unit tests.

#include <cstdint>
#include <functional>

#include "measure/caching_allocator.hpp"
#include "measure/fragmentation_pattern.hpp"

namespace pathbench {

struct CachingReplayOutcome {
  bool failed = false;            // false: the loop stopped at its cap, nothing failed
  bool failed_in_replay = false;  // the pattern itself did not fit
  std::size_t failed_event = 0;   // failed_in_replay: the event's index in the pattern
  std::uint64_t allocations_until_failure = 0;  // of the loop's size, after the replay
  CachingFailure failure;                       // the request that failed
  CachingStats after_replay;
  std::uint64_t free_after_replay = 0;  // the device's free memory then
  // At the failure: the allocator had returned its wholly free segments and asked once more.
  CachingStats at_failure;
  std::uint64_t free_at_failure = 0;
};

// Replays `pattern`, then allocates `loop_bytes` blocks until one fails (at most `max_loop`);
// `device_free` reads the device's free memory (cudaMemGetInfo). Frees every block and returns
// every segment before it returns. Throws std::invalid_argument for a pattern that frees what it
// does not hold.
CachingReplayOutcome run_caching_replay(CachingAllocator& allocator,
                                        const FragmentationPattern& pattern,
                                        std::uint64_t loop_bytes, std::uint64_t max_loop,
                                        const std::function<std::uint64_t()>& device_free);

}  // namespace pathbench
