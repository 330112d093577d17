#pragma once

// What a GPU supports of managed memory, as the CUDA runtime reports it (query_managed_memory_
// support in cuda/managed_memory.hpp), and what that rules out. Free of CUDA headers and
// header-only: the rules are host code, built with and without CUDA.

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/units.hpp"

namespace pathbench {

struct ManagedMemorySupport {
  int device = 0;
  bool managed_memory = false;             // cudaDevAttrManagedMemory
  bool concurrent_managed_access = false;  // cudaDevAttrConcurrentManagedAccess: GPU page faults
  bool pageable_memory_access = false;     // cudaDevAttrPageableMemoryAccess
  // cudaDevAttrPageableMemoryAccessUsesHostPageTables
  bool pageable_uses_host_page_tables = false;
  bool direct_managed_access_from_host = false;  // cudaDevAttrDirectManagedMemAccessFromHost
  std::uint64_t free_device_bytes = 0;           // cudaMemGetInfo when queried
};

// The attributes by their CUDA names, for checks and results.
inline nlohmann::ordered_json to_json(const ManagedMemorySupport& s) {
  return {{"managed_memory", s.managed_memory},
          {"concurrent_managed_access", s.concurrent_managed_access},
          {"pageable_memory_access", s.pageable_memory_access},
          {"pageable_memory_access_uses_host_page_tables", s.pageable_uses_host_page_tables},
          {"direct_managed_mem_access_from_host", s.direct_managed_access_from_host},
          {"free_device_bytes_before_allocation", s.free_device_bytes}};
}

// Why the GPU cannot page a managed buffer of `bytes` in on demand (GPU page faults, prefetch to
// the GPU) with `headroom` of its memory left free, else nothing. Managed memory is never
// oversubscribed: eviction would be measured instead of migration.
inline std::optional<std::string> demand_paging_gap(const ManagedMemorySupport& s,
                                                    std::uint64_t bytes, std::uint64_t headroom) {
  const std::string gpu = "GPU " + std::to_string(s.device);
  if (!s.managed_memory) {
    return gpu + " cannot allocate managed memory on this system (cudaDevAttrManagedMemory = 0)";
  }
  if (!s.concurrent_managed_access) {
    return gpu +
           " has cudaDevAttrConcurrentManagedAccess = 0 (a GPU older than Pascal, Windows or "
           "WSL): the driver migrates whole managed allocations at kernel launch, so there are "
           "no GPU page faults to measure and cudaMemPrefetchAsync to the GPU is not allowed";
  }
  if (s.free_device_bytes < bytes + headroom) {
    return "the managed buffer of " + format_bytes(bytes) + " (plus " + format_bytes(headroom) +
           " headroom) does not fit in the " + format_bytes(s.free_device_bytes) + " free on " +
           gpu + " (cudaMemGetInfo); pathbench never oversubscribes GPU memory with managed memory";
  }
  return std::nullopt;
}

}  // namespace pathbench
