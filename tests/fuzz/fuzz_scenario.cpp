// Scenario files as `run` and `list` read them (cli/commands.cpp, make_plan): parse and validate
// the text, expand each scenario's axes into cases, let the family derive its machine-decided
// parameters, validate the cases against a machine, ask for skip reasons and admit the ids. The
// machine has two NUMA nodes and two NVLink-joined GPUs so that every expansion ({"numa_nodes":
// "all"}, {"gpu_pairs": "all"}) and every family's checks have something to work on.

#include <cstdint>

#include "bench/families.hpp"
#include "core/errors.hpp"
#include "inventory/machine.hpp"
#include "measure/family.hpp"
#include "scenario/duplicate_cases.hpp"
#include "scenario/expansion.hpp"
#include "scenario/scenario_file.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace pathbench;

namespace {

Machine two_node_machine() {
  Machine m;
  m.numa_nodes = {0, 1};
  m.node_cpus = {{0, 1}, {2, 3}};
  m.mem_available_bytes = 64ull << 30;
  m.hugetlb_free_pages = 512;
  m.memlock_limit_bytes = UINT64_MAX;
  m.thp_enabled = "madvise";
  for (int i = 0; i < 2; ++i) {
    MachineGpu g;
    g.index = i;
    g.name = "NVIDIA H200";
    g.pci_bus_id = i == 0 ? "0000:18:00.0" : "0000:9a:00.0";
    g.numa_node = i;
    g.memory_bytes = 141ull << 30;
    m.gpus.push_back(g);
    m.selected_gpus.push_back(i);
  }
  for (const auto& [from, to] : {std::pair{0, 1}, std::pair{1, 0}}) {
    GpuLink link;
    link.from = from;
    link.to = to;
    link.type = LinkType::kNvlink;
    link.nvlinks = 18;
    link.peer_access = true;
    link.param = link_param(link.type, link.nvlinks, link.peer_access);
    m.links.push_back(link);
  }
  return m;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const FamilyRegistry families = builtin_families();
  static const Machine machine = two_node_machine();
  fuzz::expect_only<InputError>("scenario file", [&] {
    const ScenarioFile file = parse_scenario_file("fuzz.json", fuzz::as_text(data, size), families,
                                                  machine.numa_nodes, machine.selected_gpus);
    DuplicateCases duplicates;
    for (const auto& scenario : file.scenarios) {
      const Family* family = families.find(scenario.family);
      fuzz::check(family != nullptr, "parsed a scenario of unknown family " + scenario.family);
      auto cases = expand(scenario);
      derive_case_params(cases, *family, machine);
      validate_cases(scenario, cases, *family, machine, 0);
      for (const auto& c : cases) {
        (void)family->skip_reason(c, machine, 0);
        (void)duplicates.admit(0, c);
      }
    }
    (void)duplicates.notes();
  });
  return 0;
}
