#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "placement/host_buffer.hpp"
#include "placement/smaps.hpp"
#include "tests/unit/source_paths.hpp"

namespace pathbench::test_smaps {
namespace {

std::string read_fixture(const std::string& name) {
  const std::string path = std::string(PATHBENCH_FIXTURES) + "/smaps/" + name;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open fixture " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(Smaps, ParsesThpMappingAndItsNeighbours) {
  const auto entries = parse_smaps(read_fixture("thp.smaps"));
  ASSERT_EQ(entries.size(), 5u);
  EXPECT_EQ(entries[0].start, 0x55b9fdffe000u);
  EXPECT_EQ(entries[0].end, 0x55b9fe000000u);
  EXPECT_EQ(entries[1].rss_kb, 192u);
  // A path with spaces and a colon must not be mistaken for a key line.
  EXPECT_EQ(entries[2].start, 0x7f7250000000u);
  EXPECT_EQ(entries[2].vm_flags, "rd wr sh mr mw me ms");

  const SmapsEntry& thp = entries[3];
  EXPECT_EQ(thp.start, 0x7f7258a00000u);
  EXPECT_EQ(thp.end, 0x7f7259200000u);
  EXPECT_EQ(thp.rss_kb, 8192u);
  EXPECT_EQ(thp.anon_huge_kb, 8192u);
  EXPECT_EQ(thp.kernel_page_kb, 4u);
  EXPECT_EQ(thp.private_hugetlb_kb, 0u);
  EXPECT_EQ(thp.vm_flags, "rd wr mr mw me ac hg");

  const auto backing = huge_backing_in(entries, 0x7f7258a00000u, 8u << 20);
  ASSERT_TRUE(backing.has_value());
  EXPECT_FALSE(backing->hugetlb);
  EXPECT_EQ(backing->resident_kb, 8192u);
  EXPECT_EQ(backing->huge_kb, 8192u);
  EXPECT_DOUBLE_EQ(backing->fraction(), 1.0);
  EXPECT_NE(backing->describe().find("AnonHugePages"), std::string::npos);
}

TEST(Smaps, HugetlbResidentIsTheHugetlbTotal) {
  const auto entries = parse_smaps(read_fixture("hugetlb.smaps"));
  ASSERT_EQ(entries.size(), 4u);
  const SmapsEntry& h = entries[2];
  EXPECT_EQ(h.rss_kb, 0u);
  EXPECT_EQ(h.private_hugetlb_kb, 4096u);
  EXPECT_EQ(h.kernel_page_kb, 2048u);

  const auto backing = huge_backing_in(entries, 0x7f7257800000u, 4u << 20);
  ASSERT_TRUE(backing.has_value());
  EXPECT_TRUE(backing->hugetlb);
  EXPECT_EQ(backing->resident_kb, 4096u);
  EXPECT_EQ(backing->huge_kb, 4096u);
  EXPECT_EQ(backing->kernel_page_kb, 2048u);
  EXPECT_DOUBLE_EQ(backing->fraction(), 1.0);
  EXPECT_NE(backing->describe().find("hugetlb"), std::string::npos);
}

TEST(Smaps, HugetlbMappingWithoutFaultedPagesIsStillHugetlb) {
  std::string text = read_fixture("hugetlb.smaps");
  const std::string faulted = "Private_Hugetlb:    4096 kB";
  const auto at = text.find(faulted);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, faulted.size(), "Private_Hugetlb:       0 kB");
  const auto backing = huge_backing_in(parse_smaps(text), 0x7f7257800000u, 4u << 20);
  ASSERT_TRUE(backing.has_value());
  EXPECT_TRUE(backing->hugetlb);  // from VmFlags "ht"
  EXPECT_EQ(backing->resident_kb, 0u);
  EXPECT_DOUBLE_EQ(backing->fraction(), 0.0);
}

TEST(Smaps, Plain4kMappingHasNoHugeBacking) {
  const auto entries = parse_smaps(read_fixture("plain_4k.smaps"));
  const auto backing = huge_backing_in(entries, 0x7f7258600000u, 4u << 20);
  ASSERT_TRUE(backing.has_value());
  EXPECT_FALSE(backing->hugetlb);
  EXPECT_EQ(backing->resident_kb, 4096u);
  EXPECT_EQ(backing->huge_kb, 0u);
  EXPECT_DOUBLE_EQ(backing->fraction(), 0.0);
}

TEST(Smaps, SumsEveryEntryOfASplitMapping) {
  const auto entries = parse_smaps(read_fixture("split.smaps"));
  ASSERT_EQ(entries.size(), 5u);
  EXPECT_EQ(entries[2].locked_kb, 4096u);
  EXPECT_EQ(entries[3].locked_kb, 0u);

  const auto whole = huge_backing_in(entries, 0x7f7257c00000u, 8u << 20);
  ASSERT_TRUE(whole.has_value());
  EXPECT_EQ(whole->resident_kb, 8192u);
  EXPECT_EQ(whole->huge_kb, 6144u);
  EXPECT_DOUBLE_EQ(whole->fraction(), 0.75);

  // A range inside the second entry only sees that entry.
  const auto second = huge_backing_in(entries, 0x7f7258100000u, 4096);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->resident_kb, 4096u);
  EXPECT_EQ(second->huge_kb, 2048u);

  // The range ends exactly where the second entry starts: only the first one counts.
  const auto first = huge_backing_in(entries, 0x7f7257c00000u, 4u << 20);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->huge_kb, 4096u);
}

TEST(Smaps, RangeOutsideEveryMappingGivesNothing) {
  const auto entries = parse_smaps(read_fixture("thp.smaps"));
  EXPECT_FALSE(huge_backing_in(entries, 0x1000, 4096).has_value());
  EXPECT_TRUE(parse_smaps("").empty());
}

TEST(Smaps, MalformedValueOfANeededFieldIsAnError) {
  const std::string text =
      "7f0000000000-7f0000200000 rw-p 00000000 00:00 0\n"
      "Rss:                 12 kB\n"
      "AnonHugePages:     lots kB\n";
  try {
    parse_smaps(text);
    FAIL() << "expected an exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("line 3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("AnonHugePages"), std::string::npos) << e.what();
  }
}

TEST(Smaps, ParsesLiveSmapsOfThisProcess) {
  std::ifstream in("/proc/self/smaps");
  std::ostringstream text;
  text << in.rdbuf();
  const auto entries = parse_smaps(text.str());
  ASSERT_FALSE(entries.empty());
  for (const auto& e : entries) {
    EXPECT_LT(e.start, e.end);
    EXPECT_FALSE(e.vm_flags.empty());
  }
  // The stack holds this local variable.
  int local = 0;
  const auto at = reinterpret_cast<std::uintptr_t>(&local);
  const auto backing = huge_backing_in(entries, at, sizeof local);
  ASSERT_TRUE(backing.has_value());
  EXPECT_GT(backing->resident_kb, 0u);
}

TEST(Smaps, QueryFindsATouchedBuffer) {
  HostBuffer buffer({1u << 20, PageType::k4K, std::nullopt});
  buffer.touch();
  const auto backing = query_huge_backing(buffer.data(), buffer.size());
  ASSERT_TRUE(backing.has_value());
  EXPECT_GE(backing->resident_kb, 1024u);
  EXPECT_EQ(backing->huge_kb, 0u);
}

}  // namespace
}  // namespace pathbench::test_smaps
