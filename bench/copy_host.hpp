#pragma once

// The host side of the copy family's CUDA benches (bench/copy.cu, one GPU; bench/copy_all_gpus.cu,
// every GPU at once): how a host buffer is allocated for a host_memory kind and what is checked
// about it. CUDA builds only.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "bench/copy_family.hpp"
#include "cuda/cuda_resources.hpp"
#include "measure/family.hpp"
#include "placement/host_buffer.hpp"

namespace pathbench {

// A copy's host buffer: pinned (cudaHostAlloc) or an mmap'd buffer (optionally registered).
struct CopyHostMemory {
  std::optional<HostBuffer> buffer;
  PinnedHostMemory pinned;
  HostRegistration registration;  // declared after buffer: unregistered before unmapping
  std::byte* ptr = nullptr;
};

// Allocates `r.bytes` of the request's host_memory kind on NUMA node `node`: pinned memory under
// an MPOL_BIND policy (the driver faults it in on this thread), else a buffer of the requested
// page type bound to the node and touched, and registered for registered-*.
void allocate_copy_host_memory(CopyHostMemory& memory, const CopyRequest& r, int node);

// "host_memory_kind": what CUDA reports the pointer as, against `expected`.
Check host_memory_kind_check(const void* ptr, cudaMemoryType expected);

// "host_placement" (pages on `node`; driver-allocated pinned pages, which move_pages cannot see,
// are reported as such) and, for a page type, "huge_backing".
std::vector<Check> host_buffer_checks(const CopyRequest& r, const std::byte* ptr, int node);

// The bench of one gpus=all case (bench/copy_all_gpus.cu): H2D or D2H to every GPU of
// copy_all_gpus(machine) at once.
std::unique_ptr<CaseBench> make_copy_all_gpus_bench(const CaseSpec& spec, const Machine& machine);

}  // namespace pathbench
