// "What changed" for the khugepaged and compaction settings, and only for them: the free memory
// and page cache a run starts with differ between any two runs and are no change of the node.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compare/context_changes.hpp"
#include "core/errors.hpp"
#include "inventory/inventory.hpp"
#include "result/run_context.hpp"

namespace pathbench::test_vm_settings_changes {
namespace {

using ojson = nlohmann::ordered_json;

ojson context() {
  Inventory inv;
  inv.driver_version = "580.159.04";
  inv.thp_enabled = "madvise";
  inv.thp_defrag = "madvise";
  inv.vm_settings.khugepaged_defrag = 1;
  inv.vm_settings.khugepaged_pages_to_scan = 4096;
  inv.vm_settings.khugepaged_scan_sleep_millisecs = 10000;
  inv.vm_settings.khugepaged_max_ptes_none = 511;
  inv.vm_settings.compaction_proactiveness = 20;
  inv.vm_settings.extfrag_threshold = 500;
  inv.mem_free_bytes = std::uint64_t{100} << 30;
  inv.page_cache_bytes = std::uint64_t{7} << 30;
  inv.free_memory = {{0, std::uint64_t{100} << 30, std::uint64_t{90} << 30}};
  return to_json(inv);
}

std::vector<ContextChange> changes_between(const ojson& baseline, const ojson& result) {
  return context_changes(RunContext::from_json(baseline, "baseline.json"),
                         RunContext::from_json(result, "result.json"));
}

TEST(VmSettingsChanges, SettingsAreReported) {
  const ojson before = context();
  ojson after = before;
  after["khugepaged_defrag"] = 0;
  after["khugepaged_pages_to_scan"] = 512;
  after["khugepaged_scan_sleep_millisecs"] = 1000;
  after["khugepaged_max_ptes_none"] = 0;
  after["compaction_proactiveness"] = 0;
  after["extfrag_threshold"] = nullptr;  // hidden in the new run: still a difference
  const auto changes = changes_between(before, after);
  std::vector<std::string> texts;
  for (const auto& c : changes) texts.push_back(c.text());
  EXPECT_EQ(texts,
            (std::vector<std::string>{
                "khugepaged defrag 1 → 0", "khugepaged pages_to_scan 4096 → 512",
                "khugepaged scan_sleep_millisecs 10000 → 1000", "khugepaged max_ptes_none 511 → 0",
                "compaction_proactiveness 20 → 0", "extfrag_threshold 500 → (none)"}));
  EXPECT_EQ(changes.front().field, "khugepaged_defrag");
}

TEST(VmSettingsChanges, RunDependentAmountsAreNot) {
  const ojson before = context();
  ojson after = before;
  after["mem_free_bytes"] = std::uint64_t{3} << 30;
  after["page_cache_bytes"] = std::uint64_t{90} << 30;
  after["mem_available_bytes"] = std::uint64_t{95} << 30;
  after["hugepages_free"] = 3;
  after["free_memory"][0]["free_thp_block_bytes"] = 0;
  EXPECT_TRUE(changes_between(before, after).empty());
}

TEST(VmSettingsChanges, OlderContextsAndBadTypes) {
  // A baseline written before these fields existed: no change of the node.
  ojson older = context();
  for (const char* key :
       {"khugepaged_defrag", "khugepaged_pages_to_scan", "khugepaged_scan_sleep_millisecs",
        "khugepaged_max_ptes_none", "compaction_proactiveness", "extfrag_threshold"}) {
    older.erase(key);
  }
  ojson now = context();
  now["compaction_proactiveness"] = 0;
  EXPECT_TRUE(changes_between(older, now).empty());

  ojson bad = context();
  bad["khugepaged_max_ptes_none"] = "511";
  try {
    RunContext::from_json(bad, "result.json");
    ADD_FAILURE() << "accepted a string setting";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/context/khugepaged_max_ptes_none"), std::string::npos)
        << e.what();
  }
  // The modelled fields are written back as they were read.
  const ojson j = context();
  EXPECT_EQ(RunContext::from_json(j, "result.json").to_json().dump(), j.dump());
}

}  // namespace
}  // namespace pathbench::test_vm_settings_changes
