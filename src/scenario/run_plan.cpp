#include "scenario/run_plan.hpp"

#include "core/errors.hpp"
#include "scenario/case_filter.hpp"
#include "scenario/duplicate_cases.hpp"
#include "scenario/expansion.hpp"

namespace pathbench {

RunPlan make_run_plan(const std::vector<std::string>& inputs, const std::string& filter,
                      const FamilyCatalog& families, const Machine& machine, int device) {
  const CaseFilter re(filter);  // RE2, linear time; a bad pattern is bad input (exit 3)
  RunPlan plan;
  for (const auto& path : collect_scenario_paths(inputs)) {
    plan.files.push_back(
        load_scenario_file(path, families, machine.numa_nodes, machine.selected_gpus));
  }
  // A case of a later file that an earlier file already produced runs once, as defined first
  // (the shipped folder overlaps on purpose); within one file a repeated id is an error.
  DuplicateCases duplicates;
  for (std::size_t file_index = 0; file_index < plan.files.size(); ++file_index) {
    for (const auto& scenario : plan.files[file_index].scenarios) {
      const FamilySchema& family = *families.find_schema(scenario.family);
      auto cases = expand(scenario);
      derive_case_params(cases, family, machine);  // e.g. peer's link=nvlink18, part of the id
      validate_cases(scenario, cases, family, machine, device);
      for (auto& c : cases) {
        if (!re.matches(c.id)) continue;
        if (duplicates.admit(file_index, c)) plan.cases.emplace_back(&scenario, std::move(c));
      }
    }
  }
  for (const auto& file : plan.files) {
    plan.warnings.insert(plan.warnings.end(), file.warnings.begin(), file.warnings.end());
  }
  plan.notes = duplicates.notes();
  if (plan.cases.empty()) {
    throw InputError(re ? "--filter" : inputs.front(), "",
                     re ? "no case matches \"" + filter + "\"" : "no cases");
  }
  return plan;
}

}  // namespace pathbench
