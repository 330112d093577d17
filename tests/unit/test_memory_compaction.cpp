// Compaction before a THP fault sample, and what each sample records about its faults, on fake
// /proc trees.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "fake_root.hpp"
#include "measure/thp_fault_conditions.hpp"
#include "placement/memory_compaction.hpp"

namespace pathbench::test_memory_compaction {
namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

bool four_kib_pages() { return ::sysconf(_SC_PAGESIZE) == 4096; }

class Compaction : public FakeRootTest {
 protected:
  std::string compact_memory_text() const {
    std::ifstream in(root_ / "proc/sys/vm/compact_memory");
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }
  // vmstat with these THP fault counters.
  void vmstat(std::uint64_t huge, std::uint64_t fallback) {
    write("proc/vmstat", "compact_stall 3\nthp_fault_alloc " + std::to_string(huge) +
                             "\nthp_fault_fallback " + std::to_string(fallback) + "\n");
  }
  // Two nodes, with 4 KiB pages: node 0 has 6 MiB free in 2 MiB+ blocks, node 1 4 MiB.
  void buddyinfo() {
    write("proc/buddyinfo",
          "Node 0, zone Normal 5 0 0 0 0 0 0 0 0 1 1\n"
          "Node 1, zone Normal 7 0 0 0 0 0 0 0 0 0 1\n");
    write("sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "2097152\n");
  }
};

TEST_F(Compaction, WritesOneWhereTheFileIsWritable) {
  write("proc/sys/vm/compact_memory", "");
  const CompactionOutcome outcome = compact_memory(root_);
  EXPECT_TRUE(outcome.compacted) << outcome.why_not;
  EXPECT_EQ(outcome.why_not, "");
  EXPECT_EQ(compact_memory_text(), "1");
}

TEST_F(Compaction, SaysWhyNotWhereItCannot) {
  // A kernel without CONFIG_COMPACTION: no file, and none is created.
  const CompactionOutcome missing = compact_memory(root_);
  EXPECT_FALSE(missing.compacted);
  EXPECT_NE(missing.why_not.find("compact_memory"), std::string::npos) << missing.why_not;
  EXPECT_NE(missing.why_not.find("CONFIG_COMPACTION"), std::string::npos) << missing.why_not;
  EXPECT_FALSE(std::filesystem::exists(root_ / "proc/sys/vm/compact_memory"));

  // Unwritable even for root.
  std::filesystem::create_directories(root_ / "proc/sys/vm/compact_memory");
  const CompactionOutcome directory = compact_memory(root_);
  EXPECT_FALSE(directory.compacted);
  EXPECT_NE(directory.why_not.find("cannot open"), std::string::npos) << directory.why_not;
}

TEST_F(Compaction, NotRootIsTold) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes a read-only file anyway";
  write("proc/sys/vm/compact_memory", "");
  std::filesystem::permissions(root_ / "proc/sys/vm/compact_memory",
                               std::filesystem::perms::owner_read);
  const CompactionOutcome outcome = compact_memory(root_);
  EXPECT_FALSE(outcome.compacted);
  EXPECT_NE(outcome.why_not.find("Permission denied (needs root)"), std::string::npos)
      << outcome.why_not;
  EXPECT_EQ(compact_memory_text(), "");
}

// By value: GCC 13+ warns (-Wdangling-reference) about a reference returned through one.
Check named(const std::vector<Check>& checks, const std::string& name) {
  for (const auto& c : checks) {
    if (c.name == name) return c;
  }
  throw std::runtime_error("no check " + name);
}

TEST_F(Compaction, EachSampleRecordsCompactionFreeBlocksAndFallbacks) {
  if (!four_kib_pages()) GTEST_SKIP() << "the buddyinfo sums assume 4 KiB pages";
  write("proc/sys/vm/compact_memory", "");
  buddyinfo();
  ThpFaultConditions conditions(std::nullopt, 512, root_);
  EXPECT_TRUE(conditions.checks().empty());

  // Warm-up: compacted, not recorded.
  vmstat(100, 10);
  (void)conditions.before_sample();
  // Sample 1: every fault got a huge page.
  auto start = conditions.before_sample();
  EXPECT_TRUE(start.compaction.compacted);
  EXPECT_EQ(start.free_thp_block_bytes, 10 * kMiB);  // both nodes
  vmstat(612, 10);
  conditions.after_sample(start);
  // Sample 2: 12 fell back to 4 KiB pages.
  start = conditions.before_sample();
  vmstat(1112, 22);
  conditions.after_sample(start);

  const auto checks = conditions.checks();
  ASSERT_EQ(checks.size(), 2u);
  const Check compaction = named(checks, "memory_compaction");
  EXPECT_TRUE(compaction.passed);
  EXPECT_NE(compaction.detail.find("compacted before each of the 2 samples"), std::string::npos)
      << compaction.detail;
  EXPECT_NE(compaction.detail.find("10 MiB"), std::string::npos) << compaction.detail;
  EXPECT_EQ(compaction.value.at("compacted_samples"), 2);
  EXPECT_EQ(compaction.value.at("free_thp_block_bytes"),
            (nlohmann::ordered_json{10 * kMiB, 10 * kMiB}));
  EXPECT_TRUE(compaction.value.at("node").is_null());

  const Check fallback = named(checks, "thp_fault_fallback");
  EXPECT_TRUE(fallback.passed);  // the sample still counts
  EXPECT_EQ(fallback.value.at("fallbacks"), (nlohmann::ordered_json{0, 12}));
  EXPECT_EQ(fallback.value.at("huge_faults"), (nlohmann::ordered_json{512, 500}));
  EXPECT_EQ(fallback.value.at("huge_pages_per_sample"), 512);
  EXPECT_NE(fallback.detail.find("in 1 of 2 counted samples: 12 in all"), std::string::npos)
      << fallback.detail;
}

TEST_F(Compaction, ABoundBufferCountsItsNodeAndUnreadableFilesAreSaid) {
  if (!four_kib_pages()) GTEST_SKIP() << "the buddyinfo sums assume 4 KiB pages";
  buddyinfo();  // no compact_memory, no vmstat
  ThpFaultConditions conditions(1, 4, root_);
  const auto start = conditions.before_sample();
  EXPECT_FALSE(start.compaction.compacted);
  EXPECT_EQ(start.free_thp_block_bytes, 4 * kMiB);
  EXPECT_FALSE(start.vmstat.has_value());
  conditions.after_sample(start);

  const auto checks = conditions.checks();
  const Check compaction = named(checks, "memory_compaction");
  EXPECT_TRUE(compaction.passed);
  EXPECT_NE(compaction.detail.find("not compacted before the samples: cannot open"),
            std::string::npos)
      << compaction.detail;
  EXPECT_NE(compaction.detail.find("on node 1"), std::string::npos) << compaction.detail;
  EXPECT_EQ(compaction.value.at("compacted_samples"), 0);
  EXPECT_EQ(compaction.value.at("node"), 1);
  EXPECT_NE(compaction.value.at("why_not").get<std::string>().find("compact_memory"),
            std::string::npos);
  const Check fallback = named(checks, "thp_fault_fallback");
  EXPECT_NE(fallback.detail.find("not counted"), std::string::npos) << fallback.detail;
  EXPECT_TRUE(fallback.value.at("fallbacks").at(0).is_null());

  // A node the buddy allocator does not list, and a hidden /proc/buddyinfo: unknown, not 0.
  EXPECT_FALSE(ThpFaultConditions(7, 4, root_).before_sample().free_thp_block_bytes.has_value());
  ThpFaultConditions hidden(std::nullopt, 4, root_ / "nothing");
  hidden.after_sample(hidden.before_sample());
  EXPECT_NE(named(hidden.checks(), "memory_compaction").detail.find("unknown"), std::string::npos);
}

}  // namespace
}  // namespace pathbench::test_memory_compaction
