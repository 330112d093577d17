#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace pathbench {

// A range's NUMA memory policy (mbind), as a scenario's `policy` axis names it.
enum class MemoryPolicyMode {
  kBind,        // MPOL_BIND: only the node; when it is full the kernel reclaims, then OOM-kills
  kPreferred,   // MPOL_PREFERRED: the node first, other nodes when it is full
  kInterleave,  // MPOL_INTERLEAVE: page by page round robin over the nodes
  kLocal,       // no policy: first touch puts each page on the touching thread's node
};
const char* policy_name(MemoryPolicyMode mode);

// Applies `mode` over `nodes` (one node for bind and preferred, one or more for interleave, none
// for local) to [addr, addr+len) before first touch. Throws SystemError naming the call.
void apply_memory_policy(void* addr, std::size_t len, MemoryPolicyMode mode,
                         const std::vector<int>& nodes);

// The share of `pages_per_node` that is not where `mode` puts pages when memory is plentiful:
// off `target` for bind, preferred and local; for interleave, the pages that would have to move
// to spread them evenly over `nodes`. 0 for no pages.
double misplaced_share(const std::map<int, std::uint64_t>& pages_per_node, MemoryPolicyMode mode,
                       std::optional<int> target, const std::vector<int>& nodes);

// Binds the calling thread's memory policy to one NUMA node (MPOL_BIND) for the scope, so that
// memory a library allocates and faults in on our behalf (cudaMallocHost) lands there too.
// Restores the previous policy on destruction. Throws SystemError naming the node.
class MemoryPolicyScope {
 public:
  explicit MemoryPolicyScope(int node);
  MemoryPolicyScope(const MemoryPolicyScope&) = delete;
  MemoryPolicyScope& operator=(const MemoryPolicyScope&) = delete;
  ~MemoryPolicyScope();

 private:
  int previous_mode_ = 0;
  std::vector<unsigned long> previous_mask_;
};

}  // namespace pathbench
