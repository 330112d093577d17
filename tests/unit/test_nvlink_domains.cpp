// Tensor-parallel groups on recorded topologies: an 8-GPU NVSwitch box (NV18 between every pair),
// a box of two 4-GPU NVLink islands joined through the CPUs, and a PCIe-only box.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "inventory/nvlink_domains.hpp"
#include "test_machines.hpp"

namespace pathbench::test_nvlink_domains {
namespace {

using testing::make_link;

// Both directions of every pair, `type_of(a, b)` deciding the link.
template <typename TypeOf>
std::vector<GpuLink> topology(int gpus, TypeOf type_of) {
  std::vector<GpuLink> links;
  for (int a = 0; a < gpus; ++a) {
    for (int b = 0; b < gpus; ++b) {
      if (a == b) continue;
      const auto [type, nvlinks] = type_of(a, b);
      links.push_back(make_link(a, b, type, nvlinks, true));
    }
  }
  return links;
}

const std::vector<int> kEight = {0, 1, 2, 3, 4, 5, 6, 7};

TEST(NvlinkDomains, AnNvswitchBoxIsOneDomain) {
  const auto links = topology(8, [](int, int) { return std::pair{LinkType::kNvlink, 18}; });
  EXPECT_EQ(nvlink_domains(kEight, links), (std::vector<std::vector<int>>{kEight}));
  EXPECT_EQ(tp_group_problem(kEight, links), std::nullopt);
  EXPECT_EQ(tp_group_problem({2, 5}, links), std::nullopt);
}

TEST(NvlinkDomains, TwoIslandsAreTwoDomainsAndAGroupAcrossThemIsNamed) {
  const auto links = topology(8, [](int a, int b) {
    return a / 4 == b / 4 ? std::pair{LinkType::kNvlink, 4} : std::pair{LinkType::kSys, 0};
  });
  EXPECT_EQ(nvlink_domains(kEight, links),
            (std::vector<std::vector<int>>{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(tp_group_problem({0, 1, 2, 3}, links), std::nullopt);
  EXPECT_EQ(tp_group_problem({4, 5, 6, 7}, links), std::nullopt);
  EXPECT_EQ(tp_group_problem(kEight, links),
            "GPUs 0 and 4: SYS (through the CPUs' interconnect), not NVLink: a tensor-parallel "
            "all-reduce over this group crosses the host");
  EXPECT_EQ(tp_group_problem({6, 3}, links).value_or("").rfind("GPUs 3 and 6: SYS", 0), 0u);
}

TEST(NvlinkDomains, APcieOnlyBoxHasOnlyOneGpuDomains) {
  const auto links = topology(4, [](int a, int b) {
    return a / 2 == b / 2 ? std::pair{LinkType::kPix, 0} : std::pair{LinkType::kNode, 0};
  });
  EXPECT_EQ(nvlink_domains({0, 1, 2, 3}, links),
            (std::vector<std::vector<int>>{{0}, {1}, {2}, {3}}));
  EXPECT_EQ(tp_group_problem({0, 1}, links),
            "GPUs 0 and 1: PIX (one PCIe switch), not NVLink: a tensor-parallel all-reduce over "
            "this group crosses the host");
  EXPECT_EQ(tp_group_problem({1, 2}, links).value_or("").rfind("GPUs 1 and 2: NODE", 0), 0u);
  EXPECT_EQ(tp_group_problem({3}, links), std::nullopt);  // one GPU: nothing to reduce across
  EXPECT_EQ(tp_group_problem({0, 9}, links).value_or(""),
            "GPUs 0 and 9: no link recorded, not NVLink: a tensor-parallel all-reduce over this "
            "group crosses the host");
}

}  // namespace
}  // namespace pathbench::test_nvlink_domains
