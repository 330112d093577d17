#pragma once

#include <cstddef>
#include <memory>
#include <span>

#include "measure/family.hpp"

namespace pathbench {

// The host_memory family: host memcpy bandwidth per NUMA node pair, first-touch fault cost
// (4 KiB vs THP vs hugetlb) and mlock cost, with page node (move_pages) and huge backing
// (/proc/self/smaps) verified after every sample. Needs no GPU.
std::unique_ptr<Family> make_host_memory_family();

// Test hook: the destination buffer of a prepared host_memory memcpy case, so a test can corrupt
// it between measure() and verify() and see verify() fail. Throws std::invalid_argument for any
// other CaseBench.
std::span<std::byte> host_memory_destination_for_testing(CaseBench& bench);

}  // namespace pathbench
