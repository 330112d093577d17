#pragma once

// A KV-cache-like sequence of device allocations and frees for the device_memory family's
// fragmentation replay, generated on the host from a seed: fill a budget with a weighted mix of
// sizes (pages and sequences), free a seeded half of the blocks so that holes lie between live
// blocks, then allocate larger blocks into what is left. The generator is deterministic across
// compilers and standard libraries (its own splitmix64, no std distributions): the same seed,
// budget and mix give the same events everywhere, so two nodes replay the same pattern.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace pathbench {

// The sizes a replay allocates and how often each is drawn (weights, not shares).
struct SizeMix {
  std::string name;
  std::vector<std::uint64_t> sizes;  // ascending
  std::vector<unsigned> weights;     // one per size, > 0
  std::uint64_t smallest() const { return sizes.front(); }
  std::uint64_t largest() const { return sizes.back(); }
};

// `kv`: 2 MiB KV-cache pages (drawn most often) and 16 / 64 / 256 MiB sequence buffers.
SizeMix kv_size_mix();

struct AllocationEvent {
  enum class Kind { kAlloc, kFree };
  Kind kind = Kind::kAlloc;
  std::uint32_t id = 0;     // unique per allocation; a free names a live allocation's id
  std::uint64_t bytes = 0;  // the allocation's size (also on its free)
  bool operator==(const AllocationEvent&) const = default;
};

struct FragmentationPattern {
  std::vector<AllocationEvent> events;
  std::uint64_t peak_live_bytes = 0;   // never more than the budget
  std::uint64_t final_live_bytes = 0;  // live when the events end (what the replay leaves)
  std::uint64_t allocations = 0, frees = 0;
  // Where the phases start in `events`: [0, holes_begin) fills the budget, [holes_begin,
  // larger_begin) punches the holes, [larger_begin, end) allocates the larger blocks. A replay
  // that synchronises between phases does so at these two indices.
  std::size_t holes_begin = 0, larger_begin = 0;
};

// Phases: (1) allocate sizes drawn from the mix until the budget holds no further block of the
// smallest size (a drawn size that does not fit falls back to the smallest); (2) free each live
// block with probability 1/2, in allocation order, so holes are interleaved with live blocks;
// (3) allocate sizes drawn from the larger half of the mix while one fits. Live bytes never
// exceed `budget`. At most `max_allocations` allocations (a bound on the replay's time).
FragmentationPattern make_fragmentation_pattern(std::uint64_t seed, std::uint64_t budget,
                                                const SizeMix& mix,
                                                std::uint64_t max_allocations = 1000000);

}  // namespace pathbench
