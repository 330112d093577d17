#include "placement/buffer_checks.hpp"

#include "core/errors.hpp"
#include "placement/page_placement.hpp"
#include "placement/smaps.hpp"

namespace pathbench {

namespace {

constexpr double kMinFractionOnNode = 0.99;
constexpr double kMinHugeFraction = 0.9;

}  // namespace

Check page_placement_check(const std::string& name, const void* ptr, std::size_t bytes,
                           std::optional<int> node, bool driver_pages) {
  Check check{name, true, "", nullptr};
  PagePlacement placement;
  try {
    placement = query_page_placement(ptr, bytes);
  } catch (const SystemError& e) {
    // A bind that cannot be confirmed is not trusted; without a bind nothing was claimed.
    check.passed = !node.has_value();
    check.detail = std::string("cannot query page placement: ") + e.what();
    return check;
  }
  if (!node) {
    nlohmann::ordered_json per_node = nlohmann::ordered_json::object();
    for (const auto& [n, pages] : placement.pages_per_node) per_node[std::to_string(n)] = pages;
    check.detail = "no memory binding requested; pages are where first touch put them: " +
                   placement.describe();
    check.value = per_node;
    return check;
  }
  if (driver_pages && placement.pages_error == placement.pages_sampled) {
    check.detail = "move_pages cannot see cudaMallocHost pages (" + placement.describe() +
                   "); allocated under MPOL_BIND to node " + std::to_string(*node);
    return check;
  }
  const double fraction = placement.fraction_on(*node);
  check.passed = fraction >= kMinFractionOnNode;
  check.detail = "expected >= 99 % of sampled pages on node " + std::to_string(*node) +
                 " (move_pages): " + placement.describe();
  check.value = fraction;
  return check;
}

Check huge_backing_check(const std::string& name, const void* ptr, std::size_t bytes,
                         PageType page) {
  Check check{name, false, "", nullptr};
  const auto backing = query_huge_backing(ptr, bytes);
  if (!backing) {
    check.detail = "no /proc/self/smaps entry covers the buffer";
    return check;
  }
  check.value = backing->fraction();
  switch (page) {
    case PageType::k4K:
      check.passed = backing->huge_kb == 0;
      check.detail = "expected no huge pages (MADV_NOHUGEPAGE): " + backing->describe();
      break;
    case PageType::kThp:
      check.passed = !backing->hugetlb && backing->fraction() >= kMinHugeFraction;
      check.detail = "expected >= 90 % THP-backed (MADV_HUGEPAGE): " + backing->describe();
      if (!check.passed) {
        check.detail +=
            "; the range is (partly) mapped with 4 KiB pages: THP allocation fell back or the "
            "huge pages were split (fragmented memory? see "
            "/sys/kernel/mm/transparent_hugepage/defrag)";
      }
      break;
    case PageType::kHugetlb:
      check.passed = backing->hugetlb && backing->fraction() >= kMinHugeFraction;
      check.detail = "expected >= 90 % hugetlb-backed (MAP_HUGETLB): " + backing->describe();
      break;
  }
  return check;
}

void add_buffer_checks(std::vector<Check>& out, const std::string& what, const HostBuffer& buffer,
                       std::optional<int> node, PageType page) {
  out.push_back(
      page_placement_check(what + "_placement", buffer.data(), buffer.mapped_size(), node));
  out.push_back(
      huge_backing_check(what + "_huge_backing", buffer.data(), buffer.mapped_size(), page));
}

}  // namespace pathbench
