#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "inventory/cpulist.hpp"
#include "tests/unit/source_paths.hpp"

namespace pathbench::test_cpulist {
namespace {

using Ids = std::vector<int>;

TEST(CpuList, ParsesSinglesAndRanges) {
  EXPECT_EQ(parse_cpu_list("0-3,8,10-11"), (Ids{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpu_list("5"), (Ids{5}));
  EXPECT_EQ(parse_cpu_list("7-7"), (Ids{7}));
}

TEST(CpuList, EmptyAndWhitespaceAreTheEmptySet) {
  EXPECT_TRUE(parse_cpu_list("").empty());
  EXPECT_TRUE(parse_cpu_list("\n").empty());
  EXPECT_TRUE(parse_cpu_list("  \t\n").empty());
}

TEST(CpuList, ToleratesWhitespaceAndTrailingNewline) {
  EXPECT_EQ(parse_cpu_list("0-1,4\n"), (Ids{0, 1, 4}));
  EXPECT_EQ(parse_cpu_list(" 0 - 2 , 9 \n"), (Ids{0, 1, 2, 9}));
}

TEST(CpuList, SortsAndDeduplicates) { EXPECT_EQ(parse_cpu_list("8,0-2,1,8"), (Ids{0, 1, 2, 8})); }

TEST(CpuList, AcceptsKernelStrideSyntax) {
  // "use 2 of every 4" over 0-11: 0,1 4,5 8,9
  EXPECT_EQ(parse_cpu_list("0-11:2/4"), (Ids{0, 1, 4, 5, 8, 9}));
  EXPECT_EQ(parse_cpu_list("0-6:1/2"), (Ids{0, 2, 4, 6}));
}

TEST(CpuList, RejectsGarbageNamingTheText) {
  for (const char* bad : {"abc", "0-", "-3", "3-1", "1,,2", "1,", "0x3", "1-2-3", "4:1/2",
                          "0-7:0/2", "0-7:3/2", "0-99999999999"}) {
    try {
      parse_cpu_list(bad);
      ADD_FAILURE() << "accepted \"" << bad << "\"";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("\"") + bad + "\""), std::string::npos)
          << e.what();
    }
  }
}

std::string fuzz_fixture(const std::string& name) {
  std::ifstream in(std::string(PATHBENCH_FIXTURES) + "/fuzz/fuzz_cpulist/" + name);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Found by tests/fuzz/fuzz_cpulist: 400 copies of "0-1048576" (4 KiB) were expanded element by
// element before deduplication, 400 million ids; now spans merge first.
TEST(CpuList, RepeatedRangesCostOnlyTheirUnion) {
  const std::string text = fuzz_fixture("repeated-full-ranges");
  ASSERT_GT(text.size(), 1000u);
  const Ids ids = parse_cpu_list(text);
  ASSERT_EQ(ids.size(), 1048577u);
  EXPECT_EQ(ids.front(), 0);
  EXPECT_EQ(ids.back(), 1048576);
}

TEST(CpuList, OverlappingStridedAndPlainRangesMerge) {
  EXPECT_EQ(parse_cpu_list("0-11:2/4,2-3"), (Ids{0, 1, 2, 3, 4, 5, 8, 9}));
  EXPECT_EQ(parse_cpu_list("4-9:3/3,0-5:1/5"), (Ids{0, 4, 5, 6, 7, 8, 9}));
}

// Strided ranges cannot merge before they are expanded, so their groups are bounded in all.
TEST(CpuList, BoundsTheGroupsOfStridedRanges) {
  const std::string text = fuzz_fixture("repeated-strided-ranges");
  ASSERT_GT(text.size(), 1000u);
  EXPECT_THROW(parse_cpu_list(text), std::invalid_argument);
  EXPECT_EQ(parse_cpu_list("0-1048575:1/2").size(), 524288u);
}

TEST(CpuMask, ParsesSysfsCpumap) {
  Ids forty;
  for (int i = 0; i < 40; ++i) forty.push_back(i);
  EXPECT_EQ(parse_cpu_mask("ff,ffffffff"), forty);
  EXPECT_EQ(parse_cpu_mask("00ff00ff\n"), parse_cpu_list("0-7,16-23"));
  EXPECT_EQ(parse_cpu_mask("00000001,00000000,00000003"), (Ids{0, 1, 64}));
  EXPECT_EQ(parse_cpu_mask("A"), (Ids{1, 3}));
}

TEST(CpuMask, ParsesLongMemsAllowed) {
  std::string mask;
  for (int i = 0; i < 31; ++i) mask += "00000000,";
  mask += "00000001";
  EXPECT_EQ(parse_cpu_mask(mask), (Ids{0}));
}

TEST(CpuMask, ZeroAndEmptyAreEmpty) {
  EXPECT_TRUE(parse_cpu_mask("00000000,00000000").empty());
  EXPECT_TRUE(parse_cpu_mask("  \n").empty());
}

TEST(CpuMask, RejectsGarbageNamingTheText) {
  for (const char* bad : {"xyz", "123456789", "ff,,ff", "ff,", "0x1f", "-1"}) {
    try {
      parse_cpu_mask(bad);
      ADD_FAILURE() << "accepted \"" << bad << "\"";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
}

TEST(CpuListFormat, CompactsRuns) {
  EXPECT_EQ(format_cpu_list({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(format_cpu_list({}), "");
  EXPECT_EQ(format_cpu_list({4}), "4");
  EXPECT_EQ(format_cpu_list({5, 6}), "5-6");
}

TEST(CpuListFormat, SortsAndDeduplicates) {
  EXPECT_EQ(format_cpu_list({11, 3, 2, 2, 10, 0, 1}), "0-3,10-11");
}

TEST(CpuListFormat, RoundTripsThroughTheParser) {
  for (const char* text : {"0-3,8,10-11", "0", "1,3,5,7", "0-127", "0-55,112-167"}) {
    EXPECT_EQ(format_cpu_list(parse_cpu_list(text)), text);
  }
}

TEST(CpuListFormat, RejectsNegativeIds) {
  EXPECT_THROW(format_cpu_list({-1, 2}), std::invalid_argument);
}

TEST(SortedUnique, SortsAndKeepsEachIdOnce) {
  EXPECT_EQ(sorted_unique({5, 1, 3, 1, 5, 0}), (std::vector<int>{0, 1, 3, 5}));
  EXPECT_EQ(sorted_unique({}), std::vector<int>{});
  EXPECT_EQ(sorted_unique({7, 7, 7}), std::vector<int>{7});
}

}  // namespace
}  // namespace pathbench::test_cpulist
