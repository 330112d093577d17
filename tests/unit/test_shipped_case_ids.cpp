// Every shipped scenario file expands to the case ids pinned in
// tests/fixtures/shipped_case_ids.txt ("file<TAB>id" per line), on a fixed two-GPU machine (so
// that peer's pairs and links expand too). A case id is what baselines and compare match on: a
// change that renames a case silently orphans every stored baseline.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bench/families.hpp"
#include "scenario/run_plan.hpp"
#include "test_machines.hpp"
#include "tests/unit/source_paths.hpp"

namespace pathbench::test_shipped_case_ids {
namespace {

Machine two_gpu_machine() {
  Machine m = testing::h200_machine(2);
  m.links.push_back(testing::make_link(0, 1, LinkType::kNvlink, 18, true));
  m.links.push_back(testing::make_link(1, 0, LinkType::kNvlink, 18, true));
  return m;
}

std::string shipped_ids() {
  const std::filesystem::path dir = std::filesystem::path(PATHBENCH_SOURCE_DIR) / "scenarios";
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  const FamilyRegistry families = builtin_families();
  const Machine machine = two_gpu_machine();
  std::ostringstream out;
  for (const auto& file : files) {
    // Each file alone: the folder's cross-file deduplication must not hide a file's own ids.
    const RunPlan plan = make_run_plan({file.string()}, "", families, machine, 0);
    for (const auto& [scenario, spec] : plan.cases) {
      out << file.filename().string() << '\t' << spec.id << '\n';
    }
  }
  return out.str();
}

TEST(ShippedScenarios, CaseIdsArePinned) {
  const std::filesystem::path pinned =
      std::filesystem::path(PATHBENCH_SOURCE_DIR) / "tests/fixtures/shipped_case_ids.txt";
  std::ifstream in(pinned);
  ASSERT_TRUE(in) << "cannot read " << pinned;
  std::stringstream expected;
  expected << in.rdbuf();
  const std::string actual = shipped_ids();
  if (actual != expected.str()) {
    const auto written = std::filesystem::current_path() / "shipped_case_ids.actual.txt";
    std::ofstream(written) << actual;
    ADD_FAILURE() << "the shipped scenarios' case ids changed; this machine's list is in "
                  << written << " (diff it against " << pinned
                  << "; update the fixture only for a case that was meant to be renamed, and "
                     "say so: stored baselines match on these ids)";
  }
}

}  // namespace
}  // namespace pathbench::test_shipped_case_ids
