#pragma once

// The standard checks of a host buffer, for every family: where its pages really are
// (move_pages) and how they are really backed (/proc/self/smaps). Callers name each check
// ("host_placement", "source_huge_backing", ...); the judgement and its wording are the same
// everywhere.

#include <cstddef>
#include <optional>
#include <string>

#include <vector>

#include "placement/host_buffer.hpp"
#include "placement/page_type.hpp"
#include "result/vocabulary.hpp"

namespace pathbench {

// The pages of [ptr, ptr + bytes) against `node`: at least 99 % of the sampled pages there. With
// no node nothing was claimed, and the check records where first touch put them. With
// `driver_pages` (cudaMallocHost memory, invisible to move_pages) a range move_pages cannot see is
// reported as such, not judged.
Check page_placement_check(const std::string& name, const void* ptr, std::size_t bytes,
                           std::optional<int> node, bool driver_pages = false);

// The backing of [ptr, ptr + bytes) against `page`: 4 KiB pages only, or at least 90 % THP- or
// hugetlb-backed.
Check huge_backing_check(const std::string& name, const void* ptr, std::size_t bytes,
                         PageType page);

// `what`_placement (against `node`) and `what`_huge_backing (against `page`) of a HostBuffer.
void add_buffer_checks(std::vector<Check>& out, const std::string& what, const HostBuffer& buffer,
                       std::optional<int> node, PageType page);

}  // namespace pathbench
