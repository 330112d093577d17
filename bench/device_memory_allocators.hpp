#pragma once

// The device_memory family's allocators behind one interface (CUDA builds only; included by
// bench/device_memory*.cu): cudaMalloc, a memory pool of the case's own, the VMM API, and the
// caching allocator of measure/caching_allocator.hpp on cudaMalloc'd segments.
// Out of memory is an expected outcome here: allocate() answers nothing for it, and throws for
// any other error.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "bench/device_memory.hpp"
#include "measure/caching_allocator.hpp"

namespace pathbench {

struct DeviceBlock {
  void* ptr = nullptr;
  std::uint64_t bytes = 0;        // as allocated (vmm: rounded up to its granularity)
  unsigned long long handle = 0;  // vmm: the physical allocation's handle
};

class DeviceAllocator {
 public:
  virtual ~DeviceAllocator() = default;
  // The block; nothing when the device is out of memory (the error cleared).
  virtual std::optional<DeviceBlock> allocate(std::uint64_t bytes) = 0;
  // Frees the block (the pool: enqueues its cudaFreeAsync; settle() completes it).
  virtual void free(const DeviceBlock& block) = 0;
  // Waits until every free is complete (the pool: a stream synchronisation, where the pool trims
  // its unused memory to the release threshold); the others free synchronously.
  virtual void settle() {}
  // Reserved but unused bytes the allocator keeps from the driver (the pool, the caching
  // allocator's cached blocks), else 0.
  virtual std::uint64_t idle_bytes() const { return 0; }
  // A memory pool's reserved and used bytes (cudaMemPoolAttrReservedMemCurrent and
  // UsedMemCurrent); nothing for an allocator without a pool.
  struct PoolUsage {
    std::uint64_t reserved = 0, used = 0;
  };
  virtual std::optional<PoolUsage> pool_usage() const { return std::nullopt; }
  // The pool: cudaMemPoolTrimTo(pool, keep); the others keep nothing to trim.
  virtual void trim_to(std::uint64_t /*keep*/) {}
  // What the allocator is, read back from the driver (`allocator` check).
  virtual Check describe() const = 0;
};

// Creates the request's allocator on `device` (current). Throws SkipCase when the device lacks
// memory pools or VMM.
std::unique_ptr<DeviceAllocator> make_device_allocator(const DeviceMemoryRequest& r, int device);

// Segments from cudaMalloc / cudaFree on the current device; out of memory is a refusal.
std::unique_ptr<SegmentSource> make_cuda_malloc_segments();

// Blocks held, by id; frees what is left when it goes (errors then swallowed: the destructor may
// run during unwinding).
class LiveBlocks {
 public:
  explicit LiveBlocks(DeviceAllocator& allocator) : allocator_(allocator) {}
  LiveBlocks(const LiveBlocks&) = delete;
  LiveBlocks& operator=(const LiveBlocks&) = delete;
  ~LiveBlocks();
  void add(std::uint32_t id, const DeviceBlock& block);
  void release(std::uint32_t id);  // throws CaseFailure for an id not held
  void free_all();                 // enqueued (the pool): settle() completes them
  void release_all();              // free_all(), then settle()
  std::uint64_t bytes() const { return bytes_; }
  std::size_t size() const { return blocks_.size(); }

 private:
  DeviceAllocator& allocator_;
  std::unordered_map<std::uint32_t, DeviceBlock> blocks_;
  std::uint64_t bytes_ = 0;
};

}  // namespace pathbench
