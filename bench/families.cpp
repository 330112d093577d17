#include <cstdlib>
#include <string_view>
#include <utility>

#include "bench/copy.hpp"
#include "bench/device_memory.hpp"
#include "bench/families.hpp"
#include "bench/host_memory.hpp"
#include "bench/ipc.hpp"
#include "bench/overlap.hpp"
#include "bench/peer.hpp"
#include "bench/serving.hpp"
#include "bench/small_copies.hpp"
#include "bench/storage.hpp"
#include "bench/unified_memory.hpp"
#include "faults/fault_injection_family.hpp"
#include "measure/family.hpp"

namespace pathbench {

FamilyRegistry builtin_families() {
  FamilyRegistry registry;
  registry.add(make_host_memory_family());
  registry.add(make_copy_family());
  registry.add(make_overlap_family());
  registry.add(make_small_copies_family());
  registry.add(make_unified_memory_family());
  registry.add(make_peer_family());
  registry.add(make_serving_family());
  registry.add(make_device_memory_family());
  registry.add(make_storage_family());
  registry.add(make_ipc_family());
  // Tests only: never part of a measuring run unless asked for by name in the environment.
  if (const char* v = std::getenv(kFaultInjectionVariable); v && std::string_view(v) == "1") {
    if (auto faults = make_fault_injection_family()) registry.add(std::move(faults));
  }
  return registry;
}

void release_kept_between_cases() { storage_test_files().release(); }

}  // namespace pathbench
