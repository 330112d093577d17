// The device_memory family's allocators: cudaMalloc, a stream-ordered pool, VMM through the
// driver entry points of cuda/vmm_driver_api.hpp, and the caching allocator on cudaMalloc'd
// segments.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "bench/device_memory_allocators.hpp"
#include "core/errors.hpp"
#include "core/units.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/cuda_resources.hpp"
#include "cuda/vmm_driver_api.hpp"

namespace pathbench {

namespace {

using Threshold = DeviceMemoryRequest::ReleaseThreshold;

// A runtime allocation's answer: true on success, false on out-of-memory (cleared: the error is
// not sticky, but cudaGetLastError would report it later), any other error thrown.
bool allocated(cudaError_t err, const char* call) {
  if (err == cudaErrorMemoryAllocation) {
    static_cast<void>(cudaGetLastError());
    return false;
  }
  cuda_check(err, call);
  return true;
}

class CudaMallocAllocator final : public DeviceAllocator {
 public:
  std::optional<DeviceBlock> allocate(std::uint64_t bytes) override {
    void* p = nullptr;
    if (!allocated(cudaMalloc(&p, bytes), "cudaMalloc")) return std::nullopt;
    return DeviceBlock{p, bytes, 0};
  }
  void free(const DeviceBlock& b) override { cuda_check(cudaFree(b.ptr), "cudaFree"); }
  Check describe() const override {
    return {"allocator", true, "cudaMalloc / cudaFree (the runtime's own sub-allocation)",
            "cuda_malloc"};
  }
};

// Segments for the caching allocator: one cudaMalloc each.
class CudaMallocSegments final : public SegmentSource {
 public:
  std::optional<std::uint64_t> allocate(std::uint64_t bytes) override {
    void* p = nullptr;
    if (!allocated(cudaMalloc(&p, bytes), "cudaMalloc")) return std::nullopt;
    return reinterpret_cast<std::uintptr_t>(p);
  }
  void release(std::uint64_t address, std::uint64_t) override {
    cuda_check(cudaFree(reinterpret_cast<void*>(static_cast<std::uintptr_t>(address))), "cudaFree");
  }
};

class CachingDeviceAllocator final : public DeviceAllocator {
 public:
  std::optional<DeviceBlock> allocate(std::uint64_t bytes) override {
    const auto address = caching_.allocate(bytes);
    if (!address) return std::nullopt;
    return DeviceBlock{reinterpret_cast<void*>(static_cast<std::uintptr_t>(*address)), bytes, 0};
  }
  void free(const DeviceBlock& b) override {
    caching_.free(reinterpret_cast<std::uintptr_t>(b.ptr));
  }
  std::uint64_t idle_bytes() const override { return caching_.stats().reserved_unused(); }
  Check describe() const override {
    return {"allocator", true,
            "a PyTorch-style caching allocator (src/measure/caching_allocator.hpp) on cudaMalloc'd "
            "segments: requests rounded to 512 B, up to 1 MiB from 2 MiB segments, below 10 MiB "
            "from 20 MiB segments, larger ones from their own segment rounded to 2 MiB; blocks "
            "split and kept cached on free",
            "caching"};
  }

 private:
  CudaMallocSegments segments_;  // declared first: the allocator returns its segments to it
  CachingAllocator caching_{segments_};
};

class PoolAllocator final : public DeviceAllocator {
 public:
  PoolAllocator(int device, Threshold threshold) : threshold_(threshold) {
    int supported = 0;
    PB_CUDA(cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, device));
    if (supported == 0) {
      throw SkipCase("GPU " + std::to_string(device) +
                     " does not support stream-ordered memory pools "
                     "(cudaDevAttrMemoryPoolsSupported = 0)");
    }
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    PB_CUDA(cudaMemPoolCreate(&pool_, &props));
    std::uint64_t value = wanted_threshold();
    PB_CUDA(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &value));
    PB_CUDA(cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &read_back_));
  }
  PoolAllocator(const PoolAllocator&) = delete;
  PoolAllocator& operator=(const PoolAllocator&) = delete;
  ~PoolAllocator() override {
    // Every free complete first: a pool destroyed with frees pending lingers until they are.
    cudaStreamSynchronize(stream_.get());
    if (pool_ != nullptr) cudaMemPoolDestroy(pool_);
  }

  std::optional<DeviceBlock> allocate(std::uint64_t bytes) override {
    void* p = nullptr;
    if (!allocated(cudaMallocFromPoolAsync(&p, bytes, pool_, stream_.get()),
                   "cudaMallocFromPoolAsync")) {
      return std::nullopt;
    }
    return DeviceBlock{p, bytes, 0};
  }
  void free(const DeviceBlock& b) override {
    cuda_check(cudaFreeAsync(b.ptr, stream_.get()), "cudaFreeAsync");
  }
  void settle() override { stream_.synchronize(); }
  std::uint64_t idle_bytes() const override {
    const PoolUsage u = *pool_usage();
    return u.reserved > u.used ? u.reserved - u.used : 0;
  }
  std::optional<PoolUsage> pool_usage() const override {
    PoolUsage u;
    PB_CUDA(cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrReservedMemCurrent, &u.reserved));
    PB_CUDA(cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrUsedMemCurrent, &u.used));
    return u;
  }
  // Only what the host has seen complete can go: callers synchronise first.
  void trim_to(std::uint64_t keep) override { PB_CUDA(cudaMemPoolTrimTo(pool_, keep)); }
  Check describe() const override {
    const std::uint64_t wanted = wanted_threshold();
    return {"allocator",
            read_back_ == wanted,
            "cudaMallocFromPoolAsync / cudaFreeAsync from a cudaMemPoolCreate pool on one "
            "stream; cudaMemPoolAttrReleaseThreshold reads back " +
                std::to_string(read_back_) + " (set " + std::to_string(wanted) + ")" +
                (threshold_ == Threshold::kTrimToZero
                     ? "; cudaMemPoolTrimTo(pool, 0) after the replay's free phase"
                     : ""),
            {{"allocator", "pool"}, {"release_threshold", read_back_}}};
  }

 private:
  std::uint64_t wanted_threshold() const {
    return threshold_ == Threshold::kZero ? 0 : std::numeric_limits<std::uint64_t>::max();
  }

  Threshold threshold_;
  Stream stream_;
  cudaMemPool_t pool_ = nullptr;
  std::uint64_t read_back_ = 0;
};

class VmmAllocator final : public DeviceAllocator {
 public:
  explicit VmmAllocator(int device) : d_(VmmDriverApi::get()) {
    CUdevice dev = 0;
    d_.check(d_.device_get(&dev, device), "cuDeviceGet");
    int supported = 0;
    d_.check(d_.device_attribute(&supported,
                                 CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, dev),
             "cuDeviceGetAttribute");
    if (supported == 0) {
      throw SkipCase("GPU " + std::to_string(device) +
                     " does not support the virtual memory management API "
                     "(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 0)");
    }
    prop_.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop_.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop_.location.id = dev;
    d_.check(d_.granularity(&granularity_, &prop_, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
             "cuMemGetAllocationGranularity");
    access_.location = prop_.location;
    access_.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  }

  std::optional<DeviceBlock> allocate(std::uint64_t bytes) override {
    const std::uint64_t size = (bytes + granularity_ - 1) / granularity_ * granularity_;
    CUmemGenericAllocationHandle handle = 0;
    if (!ok(d_.mem_create(&handle, size, &prop_, 0), "cuMemCreate")) return std::nullopt;
    CUdeviceptr va = 0;
    if (!ok(d_.address_reserve(&va, size, 0, 0, 0), "cuMemAddressReserve",
            [&] { d_.mem_release(handle); })) {
      return std::nullopt;
    }
    auto undo_reserve = [&] {
      d_.address_free(va, size);
      d_.mem_release(handle);
    };
    if (!ok(d_.map(va, size, 0, handle, 0), "cuMemMap", undo_reserve)) return std::nullopt;
    if (!ok(d_.set_access(va, size, &access_, 1), "cuMemSetAccess", [&] {
          d_.unmap(va, size);
          undo_reserve();
        })) {
      return std::nullopt;
    }
    return DeviceBlock{reinterpret_cast<void*>(va), size, handle};
  }
  void free(const DeviceBlock& b) override {
    const auto va = reinterpret_cast<CUdeviceptr>(b.ptr);
    d_.check(d_.unmap(va, b.bytes), "cuMemUnmap");
    d_.check(d_.address_free(va, b.bytes), "cuMemAddressFree");
    d_.check(d_.mem_release(b.handle), "cuMemRelease");
  }
  Check describe() const override {
    return {"allocator",
            true,
            "cuMemCreate + cuMemAddressReserve + cuMemMap + cuMemSetAccess (read-write on the "
            "device); sizes rounded up to cuMemGetAllocationGranularity(MINIMUM) = " +
                format_bytes(granularity_),
            {{"allocator", "vmm"}, {"granularity", granularity_}}};
  }

 private:
  // Success; out of memory (after `undo`) is false; any other error, after `undo`, throws.
  bool ok(CUresult r, const char* call) const {
    return ok(r, call, [] {});
  }
  template <typename Undo>
  bool ok(CUresult r, const char* call, Undo undo) const {
    if (r == CUDA_SUCCESS) return true;
    undo();
    if (r == CUDA_ERROR_OUT_OF_MEMORY) return false;
    throw CaseFailure(std::string(call) + ": " + d_.name_of(r));
  }

  const VmmDriverApi& d_;
  CUmemAllocationProp prop_{};
  CUmemAccessDesc access_{};
  std::size_t granularity_ = 0;
};

}  // namespace

std::unique_ptr<DeviceAllocator> make_device_allocator(const DeviceMemoryRequest& r, int device) {
  switch (r.allocator) {
    case DeviceMemoryRequest::Allocator::kCudaMalloc:
      return std::make_unique<CudaMallocAllocator>();
    case DeviceMemoryRequest::Allocator::kPool:
      return std::make_unique<PoolAllocator>(device,
                                             r.release_threshold.value_or(Threshold::kZero));
    case DeviceMemoryRequest::Allocator::kVmm:
      return std::make_unique<VmmAllocator>(device);
    case DeviceMemoryRequest::Allocator::kCaching:
      return std::make_unique<CachingDeviceAllocator>();
  }
  throw std::logic_error("device_memory: an allocator without a bench");
}

std::unique_ptr<SegmentSource> make_cuda_malloc_segments() {
  return std::make_unique<CudaMallocSegments>();
}

LiveBlocks::~LiveBlocks() {
  try {
    release_all();
  } catch (...) {
    // Unwinding already: the error that caused it is the one to report.
  }
}

void LiveBlocks::add(std::uint32_t id, const DeviceBlock& block) {
  if (!blocks_.emplace(id, block).second) {
    allocator_.free(block);
    throw CaseFailure("allocation id " + std::to_string(id) + " allocated twice");
  }
  bytes_ += block.bytes;
}

void LiveBlocks::release(std::uint32_t id) {
  const auto it = blocks_.find(id);
  if (it == blocks_.end()) {
    throw CaseFailure("allocation id " + std::to_string(id) + " freed but not held");
  }
  const DeviceBlock block = it->second;
  blocks_.erase(it);
  bytes_ -= block.bytes;
  allocator_.free(block);
}

void LiveBlocks::free_all() {
  while (!blocks_.empty()) {
    const auto it = blocks_.begin();
    const DeviceBlock block = it->second;
    blocks_.erase(it);
    bytes_ -= block.bytes;
    allocator_.free(block);
  }
}

void LiveBlocks::release_all() {
  free_all();
  allocator_.settle();
}

}  // namespace pathbench
