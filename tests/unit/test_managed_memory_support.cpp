// What a GPU's managed-memory support rules out (cuda/managed_memory_support.hpp).
#include <gtest/gtest.h>

#include <string>

#include "cuda/managed_memory_support.hpp"

namespace pathbench::test_managed_memory_support {
namespace {

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

ManagedMemorySupport h200() {
  ManagedMemorySupport s;
  s.device = 1;
  s.managed_memory = true;
  s.concurrent_managed_access = true;
  s.free_device_bytes = 139 * kGiB;
  return s;
}

TEST(ManagedMemorySupport, DemandPagingNeedsConcurrentAccessAndRoom) {
  EXPECT_FALSE(demand_paging_gap(h200(), kGiB, kGiB));
  auto none = h200();
  none.managed_memory = false;
  none.concurrent_managed_access = false;
  // The first gap found is the reason: no managed memory at all.
  const auto no_managed = demand_paging_gap(none, kGiB, 0);
  ASSERT_TRUE(no_managed);
  EXPECT_EQ(no_managed->rfind("GPU 1 cannot allocate managed memory", 0), 0u) << *no_managed;
  auto pre_pascal = h200();
  pre_pascal.concurrent_managed_access = false;
  const auto no_faults = demand_paging_gap(pre_pascal, kGiB, 0);
  ASSERT_TRUE(no_faults);
  EXPECT_NE(no_faults->find("cudaDevAttrConcurrentManagedAccess = 0"), std::string::npos);
  // Exactly the free memory fits; one byte more does not.
  EXPECT_FALSE(demand_paging_gap(h200(), 138 * kGiB, kGiB));
  const auto too_big = demand_paging_gap(h200(), 138 * kGiB + 1, kGiB);
  ASSERT_TRUE(too_big);
  EXPECT_NE(too_big->find("139 GiB free on GPU 1"), std::string::npos) << *too_big;
}

TEST(ManagedMemorySupport, JsonNamesEveryAttribute) {
  auto s = h200();
  s.direct_managed_access_from_host = true;
  const auto j = to_json(s);
  EXPECT_EQ(j["managed_memory"], true);
  EXPECT_EQ(j["concurrent_managed_access"], true);
  EXPECT_EQ(j["pageable_memory_access"], false);
  EXPECT_EQ(j["pageable_memory_access_uses_host_page_tables"], false);
  EXPECT_EQ(j["direct_managed_mem_access_from_host"], true);
  EXPECT_EQ(j["free_device_bytes_before_allocation"], 139 * kGiB);
  EXPECT_EQ(j.size(), 6u);
}

}  // namespace
}  // namespace pathbench::test_managed_memory_support
