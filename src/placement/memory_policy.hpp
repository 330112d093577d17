#pragma once

#include <vector>

namespace pathbench {

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
