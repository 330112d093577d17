#include "measure/caching_allocator.hpp"

#include <algorithm>
#include <iterator>
#include <stdexcept>
#include <string>

namespace pathbench {

std::uint64_t caching_block_size(std::uint64_t requested) {
  if (requested < kCachingMinBlock) return kCachingMinBlock;
  return (requested + kCachingMinBlock - 1) / kCachingMinBlock * kCachingMinBlock;
}

bool caching_is_small(std::uint64_t block_size) { return block_size <= kCachingSmallRequest; }

std::uint64_t caching_segment_size(std::uint64_t block_size) {
  if (caching_is_small(block_size)) return kCachingSmallSegment;
  if (block_size < kCachingMinLargeAlloc) return kCachingLargeSegment;
  return (block_size + kCachingRoundLarge - 1) / kCachingRoundLarge * kCachingRoundLarge;
}

CachingAllocator::~CachingAllocator() {
  for (const auto& [address, bytes] : segments_) {
    try {
      source_.release(address, bytes);
    } catch (...) {
      // A destructor may run during unwinding: the error that caused it is the one to report.
    }
  }
}

std::optional<std::uint64_t> CachingAllocator::new_segment(std::uint64_t bytes, bool small) {
  const auto address = source_.allocate(bytes);
  if (!address) return std::nullopt;
  // Segments are separate allocations: one that overlaps another is the source's error, and
  // would let blocks merge across segments.
  const auto after = segments_.upper_bound(*address);
  const bool overlaps_next = after != segments_.end() && after->first < *address + bytes;
  const bool overlaps_prev =
      after != segments_.begin() && std::prev(after)->first + std::prev(after)->second > *address;
  if (overlaps_next || overlaps_prev) {
    source_.release(*address, bytes);
    throw std::logic_error("caching allocator: the segment source gave overlapping segments");
  }
  segments_.emplace(*address, bytes);
  blocks_.emplace(*address, Block{bytes, *address, 0, false, small});
  counts_.reserved += bytes;
  ++counts_.segment_allocations;
  return address;
}

std::optional<std::uint64_t> CachingAllocator::allocate(std::uint64_t bytes) {
  last_failure_.reset();
  const std::uint64_t size = caching_block_size(bytes);
  const bool small = caching_is_small(size);
  FreeList& list = free_list(small);
  std::uint64_t address = 0;
  if (const auto fit = list.lower_bound({size, 0}); fit != list.end()) {
    address = fit->second;
    list.erase(fit);
  } else {
    const std::uint64_t segment = caching_segment_size(size);
    auto fresh = new_segment(segment, small);
    if (!fresh) {
      ++counts_.cache_flushes;
      release_cached();
      fresh = new_segment(segment, small);
    }
    if (!fresh) {
      last_failure_ = CachingFailure{bytes, size, segment};
      return std::nullopt;
    }
    address = *fresh;
  }
  Block& block = blocks_.at(address);
  const std::uint64_t rest = block.size - size;
  if (small ? rest >= kCachingMinBlock : rest > kCachingSmallRequest) {
    blocks_.emplace(address + size, Block{rest, block.segment, 0, false, small});
    free_list(small).emplace(rest, address + size);
    block.size = size;
  }
  block.live = true;
  block.requested = bytes;
  counts_.allocated += block.size;
  counts_.requested += bytes;
  return address;
}

void CachingAllocator::free(std::uint64_t address) {
  const auto it = blocks_.find(address);
  if (it == blocks_.end() || !it->second.live) {
    throw std::invalid_argument("caching allocator: free of " + std::to_string(address) +
                                ", which is not a live block");
  }
  counts_.allocated -= it->second.size;
  counts_.requested -= it->second.requested;
  it->second.live = false;
  it->second.requested = 0;
  cache(address);
}

void CachingAllocator::cache(std::uint64_t address) {
  auto it = blocks_.find(address);
  FreeList& list = free_list(it->second.small);
  const auto mergeable = [&](const auto& other) {
    return other->second.segment == it->second.segment && !other->second.live;
  };
  if (const auto next = std::next(it); next != blocks_.end() && mergeable(next)) {
    list.erase({next->second.size, next->first});
    it->second.size += next->second.size;
    blocks_.erase(next);
  }
  if (it != blocks_.begin()) {
    if (const auto prev = std::prev(it); mergeable(prev)) {
      list.erase({prev->second.size, prev->first});
      prev->second.size += it->second.size;
      blocks_.erase(it);
      it = prev;
    }
  }
  list.emplace(it->second.size, it->first);
}

std::uint64_t CachingAllocator::release_cached() {
  std::uint64_t released = 0;
  for (auto segment = segments_.begin(); segment != segments_.end();) {
    const auto [address, bytes] = *segment;
    const Block& head = blocks_.at(address);
    if (head.live || head.size != bytes) {
      ++segment;
      continue;
    }
    free_list(head.small).erase({bytes, address});
    blocks_.erase(address);
    segment = segments_.erase(segment);
    counts_.reserved -= bytes;
    ++counts_.segments_released;
    released += bytes;
    source_.release(address, bytes);
  }
  return released;
}

CachingStats CachingAllocator::stats() const {
  CachingStats s = counts_;
  for (const FreeList* list : {&small_free_, &large_free_}) {
    if (!list->empty())
      s.largest_free_block = std::max(s.largest_free_block, list->rbegin()->first);
  }
  s.segments = segments_.size();
  s.free_blocks = small_free_.size() + large_free_.size();
  s.live_blocks = blocks_.size() - s.free_blocks;
  return s;
}

}  // namespace pathbench
