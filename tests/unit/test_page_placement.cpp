#include <gtest/gtest.h>
#include <numa.h>

#include <cerrno>
#include <vector>

#include "placement/host_buffer.hpp"
#include "placement/page_placement.hpp"

namespace pathbench::test_page_placement {
namespace {

// The lowest node this process may allocate on (node 0 on a one-node machine).
int first_allowed_node() {
  if (numa_available() < 0) return 0;
  struct bitmask* allowed = numa_get_mems_allowed();
  int node = 0;
  for (int n = 0; n <= numa_max_node(); ++n) {
    long long free_bytes = 0;
    if (numa_bitmask_isbitset(allowed, n) && numa_node_size64(n, &free_bytes) > 0) {
      node = n;
      break;
    }
  }
  numa_bitmask_free(allowed);
  return node;
}

TEST(PagePlacement, HistogramFromSyntheticStatus) {
  const std::vector<int> status{0, 0, 1, -ENOENT, -EFAULT, 0, 3, -ENOENT};
  const PagePlacement p = placement_from_status(status.data(), status.size());
  EXPECT_EQ(p.pages_sampled, 8u);
  EXPECT_EQ(p.pages_per_node.at(0), 3u);
  EXPECT_EQ(p.pages_per_node.at(1), 1u);
  EXPECT_EQ(p.pages_per_node.at(3), 1u);
  EXPECT_EQ(p.pages_per_node.count(2), 0u);
  EXPECT_EQ(p.pages_not_present, 2u);
  EXPECT_EQ(p.pages_error, 1u);
  EXPECT_DOUBLE_EQ(p.fraction_on(0), 3.0 / 8.0);
  EXPECT_DOUBLE_EQ(p.fraction_on(2), 0.0);
  EXPECT_EQ(p.describe(),
            "3/8 pages on node 0, 1/8 pages on node 1, 1/8 pages on node 3, 2/8 pages not present, "
            "1/8 pages with errors");
}

TEST(PagePlacement, AllOnOneNode) {
  const std::vector<int> status(4096, 0);
  const PagePlacement p = placement_from_status(status.data(), status.size());
  EXPECT_DOUBLE_EQ(p.fraction_on(0), 1.0);
  EXPECT_EQ(p.describe(), "4096/4096 pages on node 0");
}

TEST(PagePlacement, EmptyStatus) {
  const PagePlacement p = placement_from_status(nullptr, 0);
  EXPECT_EQ(p.pages_sampled, 0u);
  EXPECT_DOUBLE_EQ(p.fraction_on(0), 0.0);
  EXPECT_EQ(p.describe(), "no pages sampled");
}

TEST(PagePlacement, TouchedBoundBufferIsOnItsNode) {
  const int node = first_allowed_node();
  HostBuffer buffer({4u << 20, PageType::k4K, node});
  buffer.touch();
  const PagePlacement p = query_page_placement(buffer.data(), buffer.size());
  EXPECT_EQ(p.pages_sampled, 1024u);
  EXPECT_DOUBLE_EQ(p.fraction_on(node), 1.0) << p.describe();
  EXPECT_EQ(p.pages_not_present, 0u);
}

TEST(PagePlacement, TouchedUnboundBufferIsPresent) {
  HostBuffer buffer({1u << 20, PageType::k4K, std::nullopt});
  buffer.touch();
  const PagePlacement p = query_page_placement(buffer.data(), buffer.size());
  EXPECT_EQ(p.pages_sampled, 256u);
  EXPECT_EQ(p.pages_not_present + p.pages_error, 0u) << p.describe();
  if (numa_available() >= 0 && numa_max_node() == 0) {
    EXPECT_DOUBLE_EQ(p.fraction_on(0), 1.0) << p.describe();
  }
}

TEST(PagePlacement, UntouchedBufferIsNotPresent) {
  HostBuffer buffer({1u << 20, PageType::k4K, std::nullopt});
  const PagePlacement p = query_page_placement(buffer.data(), buffer.size());
  EXPECT_EQ(p.pages_sampled, 256u);
  EXPECT_EQ(p.pages_not_present, 256u) << p.describe();
  EXPECT_TRUE(p.pages_per_node.empty());
}

TEST(PagePlacement, LargeRangesAreSampledEvenly) {
  HostBuffer buffer({64u << 20, PageType::k4K, std::nullopt});
  // Touch only the first half: an even sample sees about half the pages present.
  for (std::size_t off = 0; off < buffer.size() / 2; off += 4096) buffer.data()[off] = std::byte{1};
  const PagePlacement p = query_page_placement(buffer.data(), buffer.size(), 100);
  EXPECT_EQ(p.pages_sampled, 100u);
  EXPECT_EQ(p.pages_not_present, 50u) << p.describe();
}

TEST(PagePlacement, UnalignedRangeCoversEveryPageItTouches) {
  HostBuffer buffer({16384, PageType::k4K, std::nullopt});
  buffer.touch();
  // 5000 bytes starting 100 bytes into the first page reach into the second page.
  EXPECT_EQ(query_page_placement(buffer.data() + 100, 5000).pages_sampled, 2u);
  EXPECT_EQ(query_page_placement(buffer.data(), 0).pages_sampled, 0u);
}

}  // namespace
}  // namespace pathbench::test_page_placement
