#pragma once

// The one way a GPU family gets host memory: of a kind (pageable, pinned, registered), a page
// type and a NUMA node, allocated where asked and touched, with the standard checks of what it
// really is — the memory kind CUDA reports, the node its pages are on, its huge-page backing.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "cuda/cuda_resources.hpp"
#include "placement/host_buffer.hpp"
#include "result/vocabulary.hpp"

namespace pathbench {

enum class HostMemoryKind { kPageable, kPinned, kRegistered };

struct HostMemoryRequest {
  HostMemoryKind kind = HostMemoryKind::kPinned;
  std::size_t bytes = 0;
  // Pageable and registered memory: the page backing, checked when given (pinned memory comes
  // from the driver, whose pages pathbench does not choose).
  std::optional<PageType> page;
  std::optional<int> node;                // bound there (MPOL_BIND) before first touch
  unsigned pinned_flags = cudaHostAllocDefault;  // e.g. cudaHostAllocMapped
};

class PlacedHostMemory {
 public:
  PlacedHostMemory() = default;
  explicit PlacedHostMemory(const HostMemoryRequest& request);
  PlacedHostMemory(PlacedHostMemory&&) noexcept = default;
  PlacedHostMemory& operator=(PlacedHostMemory&&) noexcept = default;

  std::byte* data() const { return ptr_; }
  std::size_t size() const { return request_.bytes; }

  // host_memory_kind, host_placement and (with a page type) huge_backing, each name followed by
  // `suffix` ("_gpu1" when one case holds a buffer per GPU); `what` names the buffer in details.
  std::vector<Check> checks(const std::string& what = "host buffer",
                            const std::string& suffix = "") const;

 private:
  HostMemoryRequest request_;
  std::optional<HostBuffer> buffer_;
  PinnedHostMemory pinned_;
  HostRegistration registration_;  // declared after buffer_: unregistered before unmapping
  std::byte* ptr_ = nullptr;
};

// "host_memory_kind": what CUDA reports the pointer as, against `expected`; with `mapped`, the
// memory must also be mapped into the device's address space.
Check host_memory_kind_check(const void* ptr, cudaMemoryType expected, const std::string& what,
                             bool mapped = false);

}  // namespace pathbench
