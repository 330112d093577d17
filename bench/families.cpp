#include "bench/copy_family.hpp"
#include "bench/host_memory.hpp"
#include "measure/family.hpp"

namespace pathbench {

FamilyRegistry builtin_families() {
  FamilyRegistry registry;
  registry.add(make_host_memory_family());
  registry.add(make_copy_family());
  return registry;
}

}  // namespace pathbench
