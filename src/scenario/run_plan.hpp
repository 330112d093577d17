#pragma once

// What a run or a listing will do, decided before any buffer is allocated: the scenario files
// loaded, their cases expanded, derived (machine-decided parameters), validated, filtered and
// deduplicated across files.

#include <string>
#include <utility>
#include <vector>

#include "inventory/machine.hpp"
#include "scenario/family_schema.hpp"
#include "scenario/scenario.hpp"
#include "scenario/scenario_file.hpp"

namespace pathbench {

struct RunPlan {
  std::vector<ScenarioFile> files;
  // Cases in file and scenario order, with the scenario each came from.
  std::vector<std::pair<const Scenario*, CaseSpec>> cases;
  // The files' warnings, then the notes on cases a later file repeated (run once, as defined
  // first), for the caller to print.
  std::vector<std::string> warnings, notes;
};

// `inputs`: scenario files and folders; `filter`: an RE2 pattern over case ids (empty: all).
// Throws InputError (exit 3) on bad input, a bad pattern, or a plan with no case.
RunPlan make_run_plan(const std::vector<std::string>& inputs, const std::string& filter,
                      const FamilyCatalog& families, const Machine& machine, int device);

}  // namespace pathbench
