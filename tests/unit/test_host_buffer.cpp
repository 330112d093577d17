#include <gtest/gtest.h>
#include <numa.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "core/errors.hpp"
#include "placement/host_buffer.hpp"
#include "placement/page_placement.hpp"
#include "placement/smaps.hpp"

namespace pathbench::test_host_buffer {
namespace {

std::string thp_mode() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  std::getline(in, line);
  const auto open = line.find('['), close = line.find(']');
  if (open == std::string::npos || close == std::string::npos) return "";
  return line.substr(open + 1, close - open - 1);
}

std::uint64_t meminfo(const std::string& key) {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string name;
    std::uint64_t value = 0;
    if (fields >> name >> value && name == key + ":") return value;
  }
  return 0;
}

std::uint64_t read_number(const std::string& path) {
  std::ifstream in(path);
  std::uint64_t value = 0;
  in >> value;
  return value;
}

bool is_mapped(const void* addr, std::size_t len) {
  unsigned char vec[1];
  return ::mincore(const_cast<void*>(addr), len < 4096 ? len : 4096, vec) == 0 || errno != ENOMEM;
}

TEST(PageType, RoundTripsItsNames) {
  for (const PageType t : {PageType::k4K, PageType::kThp, PageType::kHugetlb}) {
    EXPECT_EQ(page_type_from_string(to_string(t)), t);
  }
  EXPECT_EQ(to_string(PageType::k4K), "4k");
  EXPECT_EQ(to_string(PageType::kThp), "thp");
  EXPECT_EQ(to_string(PageType::kHugetlb), "hugetlb");
  EXPECT_FALSE(page_type_from_string("2m").has_value());
  EXPECT_FALSE(page_type_from_string("").has_value());
  EXPECT_FALSE(page_type_from_string("THP").has_value());
}

TEST(HostBuffer, FourKBufferHasNoHugePages) {
  HostBuffer buffer({(8u << 20) + 100, PageType::k4K, std::nullopt});
  EXPECT_EQ(buffer.size(), (8u << 20) + 100);
  EXPECT_EQ(buffer.mapped_size() % 4096, 0u);
  EXPECT_GE(buffer.mapped_size(), buffer.size());
  EXPECT_EQ(buffer.span().size(), buffer.size());
  buffer.touch();
  const auto backing = query_huge_backing(buffer.data(), buffer.mapped_size());
  ASSERT_TRUE(backing.has_value());
  EXPECT_EQ(backing->huge_kb, 0u) << backing->describe();
  EXPECT_GE(backing->resident_kb, buffer.mapped_size() / 1024);
}

TEST(HostBuffer, ThpBufferIsAlignedAndHugeAfterTouch) {
  HostBuffer buffer({3u << 20, PageType::kThp, std::nullopt});
  const std::size_t huge = page_size_of(PageType::kThp);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buffer.data()) % huge, 0u);
  EXPECT_EQ(buffer.mapped_size() % huge, 0u);
  EXPECT_GE(buffer.mapped_size(), 3u << 20);
  buffer.touch();
  const auto backing = query_huge_backing(buffer.data(), buffer.mapped_size());
  ASSERT_TRUE(backing.has_value());
  const std::string mode = thp_mode();
  if (mode != "always" && mode != "madvise") {
    GTEST_SKIP() << "THP mode is '" << mode << "': no huge pages expected";
  }
  EXPECT_GE(backing->fraction(), 0.9) << backing->describe();
  EXPECT_FALSE(backing->hugetlb);
}

TEST(HostBuffer, HugetlbWithoutFreePagesIsASkipWithTheFix) {
  if (read_number("/proc/sys/vm/nr_overcommit_hugepages") > 0) {
    GTEST_SKIP() << "hugetlb overcommit is on: the kernel may create surplus pages";
  }
  // Ask for one page more than the pool can give, whatever its state.
  const std::uint64_t page = page_size_of(PageType::kHugetlb);
  const std::uint64_t pages = meminfo("HugePages_Free") + 1;
  try {
    HostBuffer buffer({pages * page, PageType::kHugetlb, std::nullopt});
    FAIL() << "expected SkipCase";
  } catch (const SkipCase& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("no free hugetlb pages"), std::string::npos) << what;
    EXPECT_NE(what.find("need " + std::to_string(pages) + " ×"), std::string::npos) << what;
    EXPECT_NE(what.find("HugePages_Free="), std::string::npos) << what;
    EXPECT_NE(what.find("/proc/sys/vm/nr_hugepages"), std::string::npos) << what;
  }
}

TEST(HostBuffer, BindToNonexistentNodeThrowsNamingTheNode) {
  void* p = ::mmap(nullptr, 1u << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  const int missing = (numa_available() >= 0 ? numa_max_node() : 0) + 1;
  for (const int node : {missing, 4095}) {
    try {
      bind_to_node(p, 1u << 20, node);
      ADD_FAILURE() << "bind to node " << node << " succeeded";
    } catch (const SystemError& e) {
      EXPECT_NE(std::string(e.what()).find("node " + std::to_string(node)), std::string::npos)
          << e.what();
    }
  }
  EXPECT_THROW(bind_to_node(p, 1u << 20, -1), SystemError);
  ::munmap(p, 1u << 20);
}

TEST(HostBuffer, BufferOnNonexistentNodeIsASkip) {
  const int missing = (numa_available() >= 0 ? numa_max_node() : 0) + 1;
  try {
    HostBuffer buffer({1u << 20, PageType::k4K, missing});
    FAIL() << "expected SkipCase";
  } catch (const SkipCase& e) {
    EXPECT_NE(std::string(e.what()).find("node " + std::to_string(missing)), std::string::npos)
        << e.what();
  }
}

TEST(HostBuffer, BoundBufferLandsOnItsNode) {
  if (numa_available() < 0) GTEST_SKIP() << "no NUMA support";
  HostBuffer buffer({2u << 20, PageType::k4K, 0});
  buffer.touch();
  EXPECT_DOUBLE_EQ(query_page_placement(buffer.data(), buffer.size()).fraction_on(0), 1.0);
}

TEST(HostBuffer, MoveTransfersOwnership) {
  HostBuffer a({1u << 20, PageType::k4K, std::nullopt});
  std::byte* const data = a.data();
  const std::size_t mapped = a.mapped_size();
  a.touch();

  HostBuffer b(std::move(a));
  EXPECT_EQ(b.data(), data);
  EXPECT_EQ(b.size(), 1u << 20);
  EXPECT_EQ(b.mapped_size(), mapped);
  EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move): the moved-from state is API
  EXPECT_EQ(a.size(), 0u);
  EXPECT_EQ(b.data()[0], std::byte{1});

  HostBuffer c({4096, PageType::k4K, std::nullopt});
  std::byte* const replaced = c.data();
  c = std::move(b);
  EXPECT_EQ(c.data(), data);
  EXPECT_EQ(b.data(), nullptr);  // NOLINT(bugprone-use-after-move)
  EXPECT_FALSE(is_mapped(replaced, 4096)) << "move assignment must unmap the old buffer";
  EXPECT_TRUE(is_mapped(data, 4096));
}

TEST(HostBuffer, DestructorUnmaps) {
  std::byte* data = nullptr;
  {
    HostBuffer buffer({1u << 20, PageType::k4K, std::nullopt});
    data = buffer.data();
    EXPECT_TRUE(is_mapped(data, 4096));
  }
  EXPECT_FALSE(is_mapped(data, 4096));
}

TEST(HostBuffer, NeighbouringBuffersAreDescribedSeparately) {
  // Equal flags would let the kernel merge the two into one smaps entry; the guard pages keep
  // each buffer's backing its own.
  for (const PageType t : {PageType::k4K, PageType::kThp}) {
    HostBuffer a({4u << 20, t, std::nullopt});
    HostBuffer b({4u << 20, t, std::nullopt});
    a.touch();
    b.touch();
    for (const HostBuffer* buffer : {&a, &b}) {
      const auto backing = query_huge_backing(buffer->data(), buffer->mapped_size());
      ASSERT_TRUE(backing.has_value());
      EXPECT_EQ(backing->resident_kb, 4096u) << to_string(t) << ": " << backing->describe();
    }
  }
}

TEST(HostBufferDeathTest, OverrunHitsTheGuardPage) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  HostBuffer buffer({8192, PageType::k4K, std::nullopt});
  EXPECT_DEATH(
      {
        volatile std::byte* p = buffer.data();
        p[buffer.mapped_size()] = std::byte{1};
      },
      "");
}

TEST(HostBuffer, ZeroBytesIsRejected) {
  EXPECT_THROW(HostBuffer({0, PageType::k4K, std::nullopt}), std::invalid_argument);
}

TEST(HostBuffer, PageSizes) {
  EXPECT_EQ(page_size_of(PageType::k4K) % 4096, 0u);
  EXPECT_GE(page_size_of(PageType::kThp), 2u << 20);
  EXPECT_EQ(page_size_of(PageType::kHugetlb), meminfo("Hugepagesize") * 1024);
}

}  // namespace
}  // namespace pathbench::test_host_buffer
