#pragma once

// What a GPU supports of managed memory, as the CUDA runtime reports it (query_managed_memory_
// support in cuda/managed_memory.hpp), and what that rules out. Free of CUDA headers: rules about
// it are host code.

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

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
nlohmann::ordered_json to_json(const ManagedMemorySupport& s);

// Why the GPU cannot page a managed buffer of `bytes` in on demand (GPU page faults, prefetch to
// the GPU) with `headroom` of its memory left free, else nothing. Managed memory is never
// oversubscribed: eviction would be measured instead of migration.
std::optional<std::string> demand_paging_gap(const ManagedMemorySupport& s, std::uint64_t bytes,
                                             std::uint64_t headroom);

}  // namespace pathbench
