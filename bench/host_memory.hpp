#pragma once

// The host_memory family: host memcpy bandwidth per NUMA node pair, first-touch fault cost
// (4 KiB vs THP vs hugetlb) and mlock cost, with page node (move_pages) and huge backing
// (/proc/self/smaps) verified after every sample. Needs no GPU.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "measure/family.hpp"
#include "placement/host_buffer.hpp"
#include "placement/page_placement.hpp"
#include "result/vocabulary.hpp"

namespace pathbench {

std::unique_ptr<Family> make_host_memory_family();

// Test hook: the destination buffer of a prepared host_memory memcpy case, so a test can corrupt
// it between measure() and verify() and see verify() fail. Throws std::invalid_argument for any
// other CaseBench.
std::span<std::byte> host_memory_destination_for_testing(CaseBench& bench);

// What a host_memory case's axes ask for, decoded once (bench/host_memory.cpp).
struct HostMemoryParams {
  enum class Measure { kMemcpy, kFirstTouch, kMlock };
  Measure measure = Measure::kMemcpy;
  PageType page = PageType::k4K;
  std::optional<int> cpu_node;
  std::optional<int> mem_node;
  std::uint64_t bytes = 0;
  std::optional<int> pinned_pct;  // % of MemTotal locked while the case runs (pinning pressure)
  // The `policy` axis (absent: bind to mem_node when given, else first touch) and, for
  // interleave, the nodes it spreads over (every node with memory, filled in at prepare).
  std::optional<MemoryPolicyMode> policy;
  std::vector<int> interleave_nodes;
  std::optional<std::uint64_t> memory_cap;  // first_touch in a capped memory cgroup
  // memcpy: the buffers first touched from this node's CPUs, unbound, then copied from
  // cpu_node's; numa_balancing set on or off for the case.
  std::optional<int> touch_node;
  std::optional<bool> numa_balancing;

  HostBufferRequest buffer() const {
    HostBufferRequest r{bytes, page, mem_node};
    r.policy = policy.value_or(MemoryPolicyMode::kBind);
    r.interleave_nodes = interleave_nodes;
    return r;
  }
  // The node the policy puts pages on when memory is plentiful (none for interleave).
  std::optional<int> target_node() const {
    return policy == MemoryPolicyMode::kLocal ? cpu_node : mem_node;
  }
  // Whether the buffers' pages must all be on mem_node (the `buffer_placement` check): a bind.
  bool bound() const {
    return mem_node && policy.value_or(MemoryPolicyMode::kBind) == MemoryPolicyMode::kBind;
  }
  int buffers() const { return measure == Measure::kMemcpy ? 2 : 1; }
  // What one buffer occupies: huge kinds round up to whole huge pages.
  std::uint64_t mapped(std::uint64_t huge_page) const {
    const std::uint64_t unit = page == PageType::k4K ? 4096 : huge_page;
    return (bytes + unit - 1) / unit * unit;
  }
};

// The metrics a case records, in order. `page` names the unit a per-page metric counts in ("4k",
// "2m"; first_touch counts per page).
std::vector<MetricSpec> host_memory_metrics(const HostMemoryParams& p, const std::string& page);

// first_touch and mlock (bench/host_memory_fresh.cpp): one fresh buffer per sample.
std::unique_ptr<CaseBench> make_fresh_buffer_bench(const HostMemoryParams& p,
                                                   const Machine& machine);
// first_touch with memory_cap (bench/host_memory_capped.cpp): each sample's buffer faulted in
// by a child process in a capped memory cgroup.
std::unique_ptr<CaseBench> make_capped_touch_bench(const HostMemoryParams& p,
                                                   const Machine& machine);
// "policy_outcome": where the policy put a buffer's pages (move_pages, sampled), with the share
// that is not where it says; passes for every outcome but a bind that left its node.
Check policy_outcome_check(const HostMemoryParams& p, const PagePlacement& placement);

}  // namespace pathbench
