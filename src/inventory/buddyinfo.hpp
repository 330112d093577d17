#pragma once

// Free memory as the buddy allocator holds it (/proc/buddyinfo): how much of it lies in blocks
// big enough for a transparent huge page. A THP fault needs one free block of the THP's order
// (9: 2 MiB on x86-64 with 4 KiB pages); when there is none, a MADV_HUGEPAGE fault under
// defrag=madvise compacts memory in the fault path first, so the fault cost follows how
// fragmented free memory is, not only how much of it there is.

#include <cstdint>
#include <filesystem>
#include <string_view>
#include <vector>

namespace pathbench {

struct NodeFreeMemory {
  int node = 0;
  std::uint64_t free_bytes = 0;            // every free block, all zones
  std::uint64_t free_thp_block_bytes = 0;  // in blocks of the THP's order or larger
};

// Per NUMA node, summed over its zones, sorted by node. Line format:
// "Node 0, zone   Normal   1179  357 ..." with one count of free blocks per order from 0 up.
// Throws std::invalid_argument naming the line for one that is not in that format.
std::vector<NodeFreeMemory> parse_buddyinfo(std::string_view text, std::uint64_t page_bytes,
                                            unsigned thp_order);

// The order of a PMD-sized THP: log2(hpage_pmd_size / page_bytes), from
// <root>/sys/kernel/mm/transparent_hugepage/hpage_pmd_size; 9 when it cannot be read (a
// kernel without THP, a container).
unsigned read_thp_order(std::uint64_t page_bytes, const std::filesystem::path& root = "/");

// <root>/proc/buddyinfo with this process's base page size and read_thp_order(); empty when the
// file is hidden. Throws std::invalid_argument (parse_buddyinfo) when it is malformed.
std::vector<NodeFreeMemory> read_free_memory(const std::filesystem::path& root = "/");

}  // namespace pathbench
