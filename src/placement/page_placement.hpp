#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace pathbench {

// Where the pages of a range actually are, from move_pages(2) in query mode. Large ranges are
// sampled evenly (at most `max_samples` pages).
struct PagePlacement {
  std::uint64_t pages_sampled = 0;
  std::map<int, std::uint64_t> pages_per_node;  // node -> pages
  std::uint64_t pages_not_present = 0;          // -ENOENT: not faulted in yet
  std::uint64_t pages_error = 0;                // other negative status

  double fraction_on(int node) const;
  std::string describe() const;  // "4096/4096 pages on node 0"
};

PagePlacement query_page_placement(const void* addr, std::size_t bytes,
                                   std::size_t max_samples = 4096);

// Builds a placement from move_pages status values (testable without a NUMA machine).
PagePlacement placement_from_status(const int* status, std::size_t count);

}  // namespace pathbench
