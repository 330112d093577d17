#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/managed_memory_support.hpp"

namespace pathbench {

// cudaMallocManaged memory, attached globally (any stream, any processor), with the calls that
// move, advise and query the whole range. Freeing never throws (see cuda_resources.hpp); nothing
// may still use the memory then.
class ManagedMemory {
 public:
  // Where cudaMemPrefetchAsync moves pages to: a GPU index, or the host.
  static constexpr int kHost = cudaCpuDeviceId;

  ManagedMemory() = default;
  explicit ManagedMemory(std::size_t bytes) : bytes_(bytes) {
    void* ptr = nullptr;
    PB_CUDA(cudaMallocManaged(&ptr, bytes == 0 ? 1 : bytes, cudaMemAttachGlobal));
    ptr_.reset(static_cast<unsigned char*>(ptr));
  }
  unsigned char* get() const { return ptr_.get(); }
  std::size_t size() const { return bytes_; }

  // Enqueues the migration of every page to GPU `device` (or kHost) on `stream`.
  void prefetch(int device, cudaStream_t stream) const {
    PB_CUDA(cudaMemPrefetchAsync(get(), bytes_, location(device), 0, stream));
  }
  void advise(cudaMemoryAdvise advice, int device) const {
    PB_CUDA(cudaMemAdvise(get(), bytes_, advice, location(device)));
  }
  // What the driver reports for the range: the preferred GPU (cudaInvalidDeviceId: none, or not
  // one for the whole range), and the GPUs it is mapped for (SetAccessedBy).
  int preferred_location() const {
    int device = cudaInvalidDeviceId;
    PB_CUDA(cudaMemRangeGetAttribute(&device, sizeof device, cudaMemRangeAttributePreferredLocation,
                                     get(), bytes_));
    return device;
  }
  std::vector<int> accessed_by() const {
    std::vector<int> ids(kMaxAccessedBy, cudaInvalidDeviceId);
    PB_CUDA(cudaMemRangeGetAttribute(ids.data(), ids.size() * sizeof(int),
                                     cudaMemRangeAttributeAccessedBy, get(), bytes_));
    std::erase(ids, cudaInvalidDeviceId);
    return ids;
  }

 private:
  // The driver fills the slots it has and leaves the rest untouched.
  static constexpr std::size_t kMaxAccessedBy = 8;

  static cudaMemLocation location(int device) {
    cudaMemLocation l{};
    l.type = device == kHost ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
    l.id = device == kHost ? 0 : device;  // the host's id is ignored
    return l;
  }

  struct Free {
    void operator()(unsigned char* p) const noexcept { cudaFree(p); }
  };
  std::unique_ptr<unsigned char, Free> ptr_;
  std::size_t bytes_ = 0;
};

// What `device` supports of managed memory, and its free memory now. Makes `device` current and
// creates its context first (a caller configuring CUPTI in it needs that too).
inline ManagedMemorySupport query_managed_memory_support(int device) {
  PB_CUDA(cudaSetDevice(device));
  PB_CUDA(cudaFree(nullptr));
  auto flag = [device](cudaDeviceAttr a) {
    int value = 0;
    PB_CUDA(cudaDeviceGetAttribute(&value, a, device));
    return value != 0;
  };
  ManagedMemorySupport s;
  s.device = device;
  s.managed_memory = flag(cudaDevAttrManagedMemory);
  s.concurrent_managed_access = flag(cudaDevAttrConcurrentManagedAccess);
  s.pageable_memory_access = flag(cudaDevAttrPageableMemoryAccess);
  s.pageable_uses_host_page_tables = flag(cudaDevAttrPageableMemoryAccessUsesHostPageTables);
  s.direct_managed_access_from_host = flag(cudaDevAttrDirectManagedMemAccessFromHost);
  std::size_t free_bytes = 0, total_bytes = 0;
  PB_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  s.free_device_bytes = free_bytes;
  return s;
}

}  // namespace pathbench
