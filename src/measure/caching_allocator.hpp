#pragma once

// The bookkeeping of a PyTorch-style caching allocator (c10/cuda/CUDACachingAllocator.cpp, one
// stream, no expandable segments), host-only: segments come from an injected SegmentSource, so
// the device_memory family drives it with cudaMalloc'd segments and the unit tests with a fake of
// known capacity. What it reproduces is PyTorch's "out of memory while the driver reports free
// memory": freed blocks stay cached inside their segment, and a request that no cached block
// fits needs a new segment even when the cached bytes would suffice in total.
//
// The rules, as PyTorch has them:
// - Requests are rounded up to 512 B. Up to 1 MiB they are small and come from 2 MiB segments;
//   larger ones come from 20 MiB segments below 10 MiB, else from a segment of their own size
//   rounded up to 2 MiB. Small and large blocks never share a segment.
// - A request takes the smallest cached free block of its class that fits (best fit, then the
//   lowest address), split when the rest is worth keeping (small: at least 512 B; large: more
//   than 1 MiB), else handed out whole.
// - A freed block stays cached and merges with its free neighbours in the same segment, never
//   across segments (two segments are two cudaMalloc allocations, even where adjacent).
// - When the source refuses a new segment, every wholly free segment is returned to it and the
//   request is tried once more; refused again, the allocation fails.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <utility>

namespace pathbench {

// Where segments come from (cudaMalloc / cudaFree on a GPU).
class SegmentSource {
 public:
  virtual ~SegmentSource() = default;
  // The address of a new segment of `bytes`; nothing when the device has no room for it.
  virtual std::optional<std::uint64_t> allocate(std::uint64_t bytes) = 0;
  virtual void release(std::uint64_t address, std::uint64_t bytes) = 0;
};

// PyTorch's size classes.
inline constexpr std::uint64_t kCachingMinBlock = 512;                         // rounding unit
inline constexpr std::uint64_t kCachingSmallRequest = std::uint64_t{1} << 20;  // small: <= 1 MiB
inline constexpr std::uint64_t kCachingSmallSegment = std::uint64_t{2} << 20;
inline constexpr std::uint64_t kCachingMinLargeAlloc = std::uint64_t{10} << 20;
inline constexpr std::uint64_t kCachingLargeSegment = std::uint64_t{20} << 20;
inline constexpr std::uint64_t kCachingRoundLarge = std::uint64_t{2} << 20;

// A request's size as a block: at least 512 B, rounded up to 512 B.
std::uint64_t caching_block_size(std::uint64_t requested);
// Whether a block of that size is small (its own segments of 2 MiB).
bool caching_is_small(std::uint64_t block_size);
// The size of the segment a block of that size gets when no cached block fits it.
std::uint64_t caching_segment_size(std::uint64_t block_size);

// What the allocator holds.
struct CachingStats {
  std::uint64_t reserved = 0;            // bytes of all segments
  std::uint64_t allocated = 0;           // bytes of the blocks handed out (rounded, unsplit rest)
  std::uint64_t requested = 0;           // bytes the callers asked for, of those blocks
  std::uint64_t largest_free_block = 0;  // the largest cached free block
  std::uint64_t segments = 0, free_blocks = 0, live_blocks = 0;
  std::uint64_t segment_allocations = 0;  // segments the source gave, since construction
  std::uint64_t segments_released = 0;    // segments returned to the source, since construction
  std::uint64_t cache_flushes = 0;        // times a refusal made it return its free segments
  std::uint64_t reserved_unused() const { return reserved - allocated; }
};

// Why the last allocation failed.
struct CachingFailure {
  std::uint64_t requested = 0, block_size = 0, segment_size = 0;
};

class CachingAllocator {
 public:
  explicit CachingAllocator(SegmentSource& source) : source_(source) {}
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;
  // Returns every segment to the source, live blocks or not (their owner is done with them).
  ~CachingAllocator();

  // The block's address; nothing when the source refused a segment twice (last_failure() says
  // for what). Other errors of the source propagate.
  std::optional<std::uint64_t> allocate(std::uint64_t bytes);
  // Throws std::invalid_argument for an address that is not a live block.
  void free(std::uint64_t address);
  // Returns every wholly free segment to the source (torch.cuda.empty_cache()); the bytes.
  std::uint64_t release_cached();

  CachingStats stats() const;
  const std::optional<CachingFailure>& last_failure() const { return last_failure_; }

 private:
  struct Block {
    std::uint64_t size = 0;
    std::uint64_t segment = 0;    // its segment's address
    std::uint64_t requested = 0;  // 0 while free
    bool live = false;
    bool small = false;  // of a small segment (a split-off rest keeps its segment's class)
  };
  using FreeList = std::set<std::pair<std::uint64_t, std::uint64_t>>;  // (size, address)

  FreeList& free_list(bool small) { return small ? small_free_ : large_free_; }
  std::optional<std::uint64_t> new_segment(std::uint64_t bytes, bool small);
  void cache(std::uint64_t address);  // a free block into its free list, merged with neighbours

  SegmentSource& source_;
  std::map<std::uint64_t, Block> blocks_;            // by address: neighbours are adjacent
  std::map<std::uint64_t, std::uint64_t> segments_;  // address -> bytes
  FreeList small_free_, large_free_;
  CachingStats counts_;  // reserved, allocated, requested and the counters; stats() adds the rest
  std::optional<CachingFailure> last_failure_;
};

}  // namespace pathbench
