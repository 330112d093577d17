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

  HostBufferRequest buffer() const { return {bytes, page, mem_node}; }
  int buffers() const { return measure == Measure::kMemcpy ? 2 : 1; }
  // What one buffer occupies: huge kinds round up to whole huge pages.
  std::uint64_t mapped(std::uint64_t huge_page) const {
    const std::uint64_t unit = page == PageType::k4K ? 4096 : huge_page;
    return (bytes + unit - 1) / unit * unit;
  }
};

// The metrics a case records, in order. `page` names the unit a per-page metric counts in ("4k",
// "2m"; first_touch counts per page).
std::vector<MetricSpec> host_memory_metrics(HostMemoryParams::Measure measure,
                                            const std::string& page);

// first_touch and mlock (bench/host_memory_fresh.cpp): one fresh buffer per sample.
std::unique_ptr<CaseBench> make_fresh_buffer_bench(const HostMemoryParams& p,
                                                   const Machine& machine);

}  // namespace pathbench
