// What drives the cost of a transparent huge page fault, as the run context records it: free
// memory in THP-sized blocks (/proc/buddyinfo), the khugepaged and compaction settings, the page
// cache, and the compaction and THP fault counters (/proc/vmstat) over the run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <stdexcept>
#include <string>

#include "fake_root.hpp"
#include "inventory/buddyinfo.hpp"
#include "inventory/environment.hpp"
#include "inventory/inventory.hpp"
#include "inventory/sysfs.hpp"
#include "inventory/vmstat.hpp"
#include "inventory_json_errors.hpp"

namespace pathbench::test_page_allocator_state {
namespace {

constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kMiB = kKiB << 10;
constexpr std::uint64_t kPage = 4 * kKiB;

using FakeRoot = FakeRootTest;

// ---- /proc/buddyinfo ----------------------------------------------------------------------------

TEST(Buddyinfo, SumsZonesPerNodeAndOrdersFromTheThpOrderUp) {
  const auto nodes = parse_buddyinfo(read_fixture_text("proc/buddyinfo"), kPage, 9);
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].node, 0);
  // Orders 9 (2 MiB) and 10 (4 MiB) of DMA, DMA32 and Normal.
  EXPECT_EQ(nodes[0].free_thp_block_bytes, (1 + 1 + 124) * 2 * kMiB + (3 + 753 + 252) * 4 * kMiB);
  // Every order of the three zones: 1171227 free 4 KiB pages.
  EXPECT_EQ(nodes[0].free_bytes, 1171227 * kPage);
  EXPECT_EQ(nodes[1].node, 1);
  // Plenty free, little of it in 2 MiB blocks: the fragmented node a THP fault compacts on.
  EXPECT_EQ(nodes[1].free_thp_block_bytes, 2 * 2 * kMiB + 1 * 4 * kMiB);
  EXPECT_EQ(nodes[1].free_bytes, 242383 * kPage);
}

TEST(Buddyinfo, TheThresholdIsTheThpOrder) {
  const std::string text = read_fixture_text("proc/buddyinfo");
  EXPECT_EQ(parse_buddyinfo(text, kPage, 10)[0].free_thp_block_bytes, (3 + 753 + 252) * 4 * kMiB);
  // 64 KiB pages (aarch64): a THP is 512 MiB, order 13, beyond every order listed here.
  const auto large_pages = parse_buddyinfo(text, 64 * kKiB, 13);
  EXPECT_EQ(large_pages[0].free_thp_block_bytes, 0u);
  EXPECT_EQ(large_pages[0].free_bytes, 1171227 * 64 * kKiB);
}

TEST(Buddyinfo, NodesComeSortedWhateverTheLineOrder) {
  const auto nodes = parse_buddyinfo(
      "Node 3, zone   Normal 0 0 0 0 0 0 0 0 0 1 0\n"
      "Node 1, zone   Normal 2 0 0 0 0 0 0 0 0 0 0\n"
      "\n"
      "Node 3, zone  Movable 0 0 0 0 0 0 0 0 0 0 1\n",
      kPage, 9);
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].node, 1);
  EXPECT_EQ(nodes[0].free_bytes, 2 * kPage);
  EXPECT_EQ(nodes[0].free_thp_block_bytes, 0u);
  EXPECT_EQ(nodes[1].node, 3);
  EXPECT_EQ(nodes[1].free_thp_block_bytes, 6 * kMiB);
  EXPECT_TRUE(parse_buddyinfo("", kPage, 9).empty());
}

TEST(Buddyinfo, MalformedLinesAreNamed) {
  for (const char* bad :
       {"Node x, zone Normal 1 2\n", "Node 0 zone Normal 1 2\n", "Node 0, Normal 1 2\n",
        "Node 0, zone Normal 1 two\n", "Node -1, zone Normal 1\n", "garbage\n"}) {
    try {
      parse_buddyinfo(bad, kPage, 9);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("buddyinfo"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(std::string(bad).substr(0, 4)), std::string::npos)
          << e.what();
    }
  }
}

TEST_F(FakeRoot, ThpOrderComesFromHpagePmdSize) {
  EXPECT_EQ(read_thp_order(kPage, root_), 9u);  // hidden: the x86-64 order
  write("sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "2097152\n");
  EXPECT_EQ(read_thp_order(kPage, root_), 9u);
  write("sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "536870912\n");
  EXPECT_EQ(read_thp_order(64 * kKiB, root_), 13u);
  write("sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "3000000\n");
  EXPECT_EQ(read_thp_order(kPage, root_), 9u);  // not a power of two pages: ignored
}

TEST_F(FakeRoot, FreeMemoryFromTheRoot) {
  EXPECT_TRUE(read_free_memory(root_).empty());  // hidden: nothing, no error
  if (::sysconf(_SC_PAGESIZE) != static_cast<long>(kPage)) GTEST_SKIP() << "needs 4 KiB pages";
  write("proc/buddyinfo", read_fixture_text("proc/buddyinfo"));
  write("sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "2097152\n");
  const auto nodes = read_free_memory(root_);
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[1].free_thp_block_bytes, 8 * kMiB);
  write("proc/buddyinfo", "Node 0, zone Normal one\n");
  EXPECT_THROW(read_free_memory(root_), std::invalid_argument);
}

// ---- /proc/vmstat -------------------------------------------------------------------------------

TEST(Vmstat, ReadsTheCompactionAndThpFaultCounters) {
  const VmCounters c = parse_vmstat(read_fixture_text("proc/vmstat"));
  EXPECT_EQ(c.compact_stall, 412u);
  EXPECT_EQ(c.compact_fail, 37u);
  EXPECT_EQ(c.compact_success, 375u);
  EXPECT_EQ(c.thp_fault_alloc, 204811u);
  EXPECT_EQ(c.thp_fault_fallback, 1536u);  // not thp_fault_fallback_charge
  // A kernel without compaction or THP counts none of them.
  const VmCounters none = parse_vmstat("nr_free_pages 1\npgfault 2\n");
  EXPECT_FALSE(none.compact_stall.has_value());
  EXPECT_FALSE(none.thp_fault_fallback.has_value());
  try {
    parse_vmstat("compact_stall 1\nthp_fault_fallback -3\n");
    ADD_FAILURE() << "accepted a negative counter";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("thp_fault_fallback"), std::string::npos) << e.what();
  }
}

TEST(Vmstat, DifferenceOverAnInterval) {
  VmCounters start, end;
  start.compact_stall = 412;
  end.compact_stall = 415;
  start.thp_fault_fallback = 1536;
  end.thp_fault_fallback = 1536;
  start.thp_fault_alloc = 10;  // the end lacks it
  start.compact_fail = 40;
  end.compact_fail = 3;  // backwards: another boot, not a negative count
  const VmCounters d = vm_counter_difference(start, end);
  EXPECT_EQ(d.compact_stall, 3u);
  EXPECT_EQ(d.thp_fault_fallback, 0u);
  EXPECT_FALSE(d.thp_fault_alloc.has_value());
  EXPECT_FALSE(d.compact_fail.has_value());
  EXPECT_FALSE(d.compact_success.has_value());
}

TEST_F(FakeRoot, VmstatFromTheRoot) {
  EXPECT_FALSE(read_vmstat(root_).has_value());
  write("proc/vmstat", read_fixture_text("proc/vmstat"));
  ASSERT_TRUE(read_vmstat(root_).has_value());
  EXPECT_EQ(read_vmstat(root_)->compact_stall, 412u);
}

// ---- settings and /proc/meminfo -----------------------------------------------------------------

TEST_F(FakeRoot, KhugepagedAndCompactionSettings) {
  const VmSettings hidden = read_vm_settings(root_);
  EXPECT_FALSE(hidden.khugepaged_defrag.has_value());
  EXPECT_FALSE(hidden.compaction_proactiveness.has_value());
  write("sys/kernel/mm/transparent_hugepage/khugepaged/defrag", "1\n");
  write("sys/kernel/mm/transparent_hugepage/khugepaged/pages_to_scan", "4096\n");
  write("sys/kernel/mm/transparent_hugepage/khugepaged/scan_sleep_millisecs", "10000\n");
  write("sys/kernel/mm/transparent_hugepage/khugepaged/max_ptes_none", "511\n");
  write("proc/sys/vm/compaction_proactiveness", "20\n");
  write("proc/sys/vm/extfrag_threshold", "garbage\n");
  const VmSettings s = read_vm_settings(root_);
  EXPECT_EQ(s.khugepaged_defrag, 1);
  EXPECT_EQ(s.khugepaged_pages_to_scan, 4096);
  EXPECT_EQ(s.khugepaged_scan_sleep_millisecs, 10000);
  EXPECT_EQ(s.khugepaged_max_ptes_none, 511);
  EXPECT_EQ(s.compaction_proactiveness, 20);
  EXPECT_FALSE(s.extfrag_threshold.has_value());  // not a number: unknown
}

TEST(Meminfo, FreeAndPageCache) {
  const MemInfo info = parse_meminfo(read_fixture_text("proc/meminfo"));
  EXPECT_EQ(info.mem_free_bytes, 120331244 * kKiB);
  EXPECT_EQ(info.cached_bytes, 7383140 * kKiB);  // "Cached", not "SwapCached"
}

// ---- the context --------------------------------------------------------------------------------

Inventory with_allocator_state() {
  Inventory inv;
  inv.thp_enabled = "madvise";
  inv.thp_defrag = "madvise";
  inv.vm_settings.khugepaged_defrag = 1;
  inv.vm_settings.khugepaged_pages_to_scan = 4096;
  inv.vm_settings.khugepaged_scan_sleep_millisecs = 10000;
  inv.vm_settings.khugepaged_max_ptes_none = 511;
  inv.vm_settings.compaction_proactiveness = 20;
  // extfrag_threshold hidden: null
  inv.mem_free_bytes = 120331244 * kKiB;
  inv.page_cache_bytes = 7383140 * kKiB;
  inv.free_memory = {{0, 1171227 * kPage, 4284 * kMiB}, {1, 242383 * kPage, 8 * kMiB}};
  return inv;
}

TEST(InventoryAllocatorState, RoundTripsThroughTheContext) {
  const auto json = to_json(with_allocator_state());
  EXPECT_EQ(json.at("khugepaged_max_ptes_none"), 511);
  EXPECT_EQ(json.at("compaction_proactiveness"), 20);
  EXPECT_TRUE(json.at("extfrag_threshold").is_null());
  EXPECT_EQ(json.at("page_cache_bytes"), 7383140 * kKiB);
  EXPECT_EQ(json.at("free_memory").at(1),
            (nlohmann::ordered_json{
                {"node", 1}, {"free_bytes", 242383 * kPage}, {"free_thp_block_bytes", 8 * kMiB}}));
  const Inventory back = inventory_from_json(nlohmann::json::parse(json.dump()));
  EXPECT_EQ(to_json(back), json);
  EXPECT_EQ(back.vm_settings.khugepaged_scan_sleep_millisecs, 10000);
  EXPECT_FALSE(back.vm_settings.extfrag_threshold.has_value());
  EXPECT_EQ(back.mem_free_bytes, 120331244 * kKiB);
  ASSERT_EQ(back.free_memory.size(), 2u);
  EXPECT_EQ(back.free_memory[0].free_thp_block_bytes, 4284 * kMiB);
}

TEST(InventoryAllocatorState, OlderContextsReadAndWrongTypesAreNamed) {
  auto json = nlohmann::json::parse(to_json(with_allocator_state()).dump());
  auto old = json;
  for (const char* key :
       {"khugepaged_defrag", "khugepaged_pages_to_scan", "khugepaged_scan_sleep_millisecs",
        "khugepaged_max_ptes_none", "compaction_proactiveness", "extfrag_threshold",
        "mem_free_bytes", "page_cache_bytes", "free_memory"}) {
    old.erase(key);
  }
  const Inventory older = inventory_from_json(old);
  EXPECT_FALSE(older.vm_settings.khugepaged_defrag.has_value());
  EXPECT_TRUE(older.free_memory.empty());
  EXPECT_EQ(older.page_cache_bytes, 0u);

  auto bad = json;
  bad["khugepaged_pages_to_scan"] = "4096";
  testing::expect_inventory_json_error(bad, "/khugepaged_pages_to_scan");
  bad = json;
  bad["free_memory"][1]["free_thp_block_bytes"] = -1;
  testing::expect_inventory_json_error(bad, "/free_memory/1/free_thp_block_bytes");
  bad = json;
  bad["free_memory"][0] = "node 0";
  testing::expect_inventory_json_error(bad, "/free_memory/0");
}

TEST_F(FakeRoot, EnvironmentSamplesCarryTheCountersAndTheRunTheirIncrease) {
  write("proc/vmstat", read_fixture_text("proc/vmstat"));
  const EnvironmentSample start = collect_environment_sample(Inventory{}, root_);
  ASSERT_TRUE(start.vmstat.has_value());
  EXPECT_EQ(start.vmstat->thp_fault_fallback, 1536u);
  write("proc/vmstat",
        "compact_stall 420\ncompact_fail 37\ncompact_success 383\nthp_fault_alloc 205323\n"
        "thp_fault_fallback 1600\n");
  const EnvironmentSample end = collect_environment_sample(Inventory{}, root_);

  const auto sample = to_json(start);
  EXPECT_EQ(sample.at("vmstat").at("compact_stall"), 412);
  EXPECT_EQ(to_json(environment_sample_from_json(nlohmann::json::parse(sample.dump()))), sample);

  const auto run = run_environment_json(start, end);
  EXPECT_EQ(run.at("vmstat_over_run"), (nlohmann::ordered_json{{"compact_stall", 8},
                                                               {"compact_fail", 0},
                                                               {"compact_success", 8},
                                                               {"thp_fault_alloc", 512},
                                                               {"thp_fault_fallback", 64}}));
  // While the run is in progress, or where /proc/vmstat is hidden: nulls.
  const auto running = run_environment_json(start, std::nullopt);
  EXPECT_TRUE(running.at("vmstat_over_run").at("thp_fault_fallback").is_null());
  const EnvironmentSample hidden = collect_environment_sample(Inventory{}, root_ / "nothing");
  EXPECT_TRUE(to_json(hidden).at("vmstat").is_null());

  auto bad = nlohmann::json::parse(sample.dump());
  bad["vmstat"]["compact_stall"] = -1;
  try {
    environment_sample_from_json(bad, "/context/environment/start");
    ADD_FAILURE() << "accepted a negative counter";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("/context/environment/start/vmstat/compact_stall"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace pathbench::test_page_allocator_state
