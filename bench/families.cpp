#include "bench/copy_family.hpp"
#include "bench/host_memory.hpp"
#include "bench/overlap_family.hpp"
#include "bench/peer_family.hpp"
#include "bench/small_copies_family.hpp"
#include "bench/unified_memory_family.hpp"
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
  return registry;
}

}  // namespace pathbench
