#include "measure/fragmentation_pattern.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <utility>

namespace pathbench {

namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

// splitmix64 (Steele, Lea, Flood): a fixed, portable sequence for a seed.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // In [0, n): the modulo bias of a 64-bit draw over a handful of weights is negligible.
  std::uint64_t below(std::uint64_t n) { return next() % n; }

 private:
  std::uint64_t state_;
};

// A size of mix.sizes[first..], drawn by weight.
std::uint64_t draw(SplitMix64& rng, const SizeMix& mix, std::size_t first) {
  const unsigned total = std::accumulate(mix.weights.begin() + static_cast<std::ptrdiff_t>(first),
                                         mix.weights.end(), 0u);
  std::uint64_t pick = rng.below(total);
  for (std::size_t i = first; i < mix.sizes.size(); ++i) {
    if (pick < mix.weights[i]) return mix.sizes[i];
    pick -= mix.weights[i];
  }
  return mix.sizes.back();
}

void validate(const SizeMix& mix) {
  if (mix.sizes.empty() || mix.sizes.size() != mix.weights.size()) {
    throw std::invalid_argument("size mix " + mix.name + ": one weight per size, at least one");
  }
  for (std::size_t i = 0; i < mix.sizes.size(); ++i) {
    if (mix.sizes[i] == 0 || mix.weights[i] == 0 || (i > 0 && mix.sizes[i] <= mix.sizes[i - 1])) {
      throw std::invalid_argument("size mix " + mix.name +
                                  ": sizes ascending and non-zero, weights non-zero");
    }
  }
}

}  // namespace

SizeMix kv_size_mix() { return {"kv", {2 * kMiB, 16 * kMiB, 64 * kMiB, 256 * kMiB}, {8, 4, 2, 1}}; }

FragmentationPattern make_fragmentation_pattern(std::uint64_t seed, std::uint64_t budget,
                                                const SizeMix& mix, std::uint64_t max_allocations) {
  validate(mix);
  SplitMix64 rng(seed);
  FragmentationPattern p;
  std::uint64_t live_bytes = 0;
  std::uint32_t next_id = 0;
  struct Live {
    std::uint32_t id;
    std::uint64_t bytes;
  };
  std::vector<Live> live;  // in allocation order

  auto allocate = [&](std::uint64_t bytes) {
    p.events.push_back({AllocationEvent::Kind::kAlloc, next_id, bytes});
    live.push_back({next_id++, bytes});
    live_bytes += bytes;
    p.peak_live_bytes = std::max(p.peak_live_bytes, live_bytes);
    ++p.allocations;
  };

  // (1) Fill the budget.
  while (p.allocations < max_allocations) {
    std::uint64_t bytes = draw(rng, mix, 0);
    if (live_bytes + bytes > budget) bytes = mix.smallest();
    if (live_bytes + bytes > budget) break;
    allocate(bytes);
  }

  // (2) Punch holes: a seeded half of the blocks, interleaved with those that stay.
  p.holes_begin = p.events.size();
  std::vector<Live> kept;
  for (const Live& block : live) {
    if (rng.below(2) == 0) {
      kept.push_back(block);
      continue;
    }
    p.events.push_back({AllocationEvent::Kind::kFree, block.id, block.bytes});
    live_bytes -= block.bytes;
    ++p.frees;
  }
  live = std::move(kept);

  // (3) Larger blocks into what is left: most holes are too small for them.
  const std::size_t larger = mix.sizes.size() / 2;
  p.larger_begin = p.events.size();
  while (p.allocations < max_allocations) {
    std::uint64_t bytes = draw(rng, mix, larger);
    if (live_bytes + bytes > budget) bytes = mix.sizes[larger];
    if (live_bytes + bytes > budget) break;
    allocate(bytes);
  }
  p.final_live_bytes = live_bytes;
  return p;
}

}  // namespace pathbench
