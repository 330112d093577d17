#include "placement/memory_policy.hpp"

#include <numa.h>
#include <numaif.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
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

const char* policy_name(MemoryPolicyMode mode) {
  switch (mode) {
    case MemoryPolicyMode::kBind:
      return "bind";
    case MemoryPolicyMode::kPreferred:
      return "preferred";
    case MemoryPolicyMode::kInterleave:
      return "interleave";
    case MemoryPolicyMode::kLocal:
      return "local";
  }
  return "?";
}

void apply_memory_policy(void* addr, std::size_t len, MemoryPolicyMode mode,
                         const std::vector<int>& nodes) {
  if (mode == MemoryPolicyMode::kLocal) return;
  std::string node_text;
  for (const int node : nodes) {
    if (!node_text.empty()) node_text += ',';
    node_text += std::to_string(node);
  }
  const std::string call = std::string("mbind(") + policy_name(mode) + " to NUMA node" +
                           (nodes.size() == 1 ? " " : "s ") + node_text +
                           (mode == MemoryPolicyMode::kBind ? ", MPOL_MF_STRICT, " : ", ") +
                           std::to_string(len) + " bytes)";
  const bool one_node = mode != MemoryPolicyMode::kInterleave;
  if (nodes.empty() || (one_node && nodes.size() != 1)) throw SystemError(call, EINVAL);
  const int highest = *std::max_element(nodes.begin(), nodes.end());
  if (*std::min_element(nodes.begin(), nodes.end()) < 0) throw SystemError(call, EINVAL);
  std::vector<unsigned long> mask(static_cast<std::size_t>(highest) / kBitsPerWord + 1, 0);
  for (const int node : nodes) {
    const auto bit = static_cast<std::size_t>(node);
    mask[bit / kBitsPerWord] |= 1UL << (bit % kBitsPerWord);
  }
  // The kernel reads maxnode - 1 bits (a long-standing off-by-one libnuma also compensates for).
  const unsigned long maxnode = mask.size() * kBitsPerWord + 1;
  const int kernel_mode = mode == MemoryPolicyMode::kBind        ? MPOL_BIND
                          : mode == MemoryPolicyMode::kPreferred ? MPOL_PREFERRED
                                                                 : MPOL_INTERLEAVE;
  // Strict only for bind: the pages of a fresh range are not there yet, and a preferred or
  // interleaved range promises no node to check them against.
  const unsigned flags = mode == MemoryPolicyMode::kBind ? MPOL_MF_STRICT : 0;
  if (::mbind(addr, len, kernel_mode, mask.data(), maxnode, flags) != 0) {
    throw SystemError(call, errno);
  }
}

double misplaced_share(const std::map<int, std::uint64_t>& pages_per_node, MemoryPolicyMode mode,
                       std::optional<int> target, const std::vector<int>& nodes) {
  std::uint64_t total = 0;
  for (const auto& [node, pages] : pages_per_node) total += pages;
  if (total == 0) return 0.0;
  if (mode != MemoryPolicyMode::kInterleave) {
    const auto on = target ? pages_per_node.find(*target) : pages_per_node.end();
    const std::uint64_t there = on == pages_per_node.end() ? 0 : on->second;
    return static_cast<double>(total - there) / static_cast<double>(total);
  }
  // Pages outside the set all move; inside it, the excess over an even share does.
  if (nodes.empty()) return 0.0;
  const double even = static_cast<double>(total) / static_cast<double>(nodes.size());
  double excess = 0;
  for (const auto& [node, pages] : pages_per_node) {
    const bool in_set = std::find(nodes.begin(), nodes.end(), node) != nodes.end();
    excess +=
        in_set ? std::max(0.0, static_cast<double>(pages) - even) : static_cast<double>(pages);
  }
  return excess / static_cast<double>(total);
}

}  // namespace pathbench
