#include "placement/memory_policy.hpp"

#include <numa.h>
#include <numaif.h>

#include <cerrno>
#include <string>

#include "core/errors.hpp"

namespace pathbench {

namespace {
constexpr std::size_t kMaskBits = 1024;
constexpr std::size_t kBitsPerWord = 8 * sizeof(unsigned long);
}  // namespace

MemoryPolicyScope::MemoryPolicyScope(int node) : previous_mask_(kMaskBits / kBitsPerWord, 0) {
  if (node < 0 || static_cast<std::size_t>(node) >= kMaskBits) {
    throw SystemError("set_mempolicy(MPOL_BIND, node " + std::to_string(node) + ")", EINVAL);
  }
  if (get_mempolicy(&previous_mode_, previous_mask_.data(), kMaskBits, nullptr, 0) != 0) {
    throw SystemError("get_mempolicy", errno);
  }
  std::vector<unsigned long> mask(kMaskBits / kBitsPerWord, 0);
  mask[node / kBitsPerWord] |= 1ul << (node % kBitsPerWord);
  if (set_mempolicy(MPOL_BIND, mask.data(), kMaskBits) != 0) {
    throw SystemError("set_mempolicy(MPOL_BIND, node " + std::to_string(node) + ")", errno);
  }
}

MemoryPolicyScope::~MemoryPolicyScope() {
  const bool empty_mask = previous_mode_ == MPOL_DEFAULT;
  set_mempolicy(previous_mode_, empty_mask ? nullptr : previous_mask_.data(),
                empty_mask ? 0 : kMaskBits);
}

}  // namespace pathbench
