#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace pathbench {

// How a host buffer's pages are backed.
enum class PageType {
  k4K,       // anonymous memory with MADV_NOHUGEPAGE
  kThp,      // 2 MiB-aligned anonymous memory with MADV_HUGEPAGE
  kHugetlb,  // MAP_HUGETLB from the default hugetlb pool
};

std::string_view to_string(PageType t);
std::optional<PageType> page_type_from_string(std::string_view s);  // "4k" | "thp" | "hugetlb"

}  // namespace pathbench
