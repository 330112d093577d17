#pragma once

// A case as scenario "test" of a scenario file would expand it: the families' unit tests build
// their cases here, so an error message they check names the same file and pointer.

#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "scenario/expansion.hpp"
#include "scenario/scenario.hpp"

namespace pathbench::testing {

// `repetitions` 0 keeps CaseSpec's default.
inline CaseSpec scenario_case(const std::string& family, nlohmann::ordered_json params,
                              std::string file = "test.json", int repetitions = 0) {
  CaseSpec spec;
  spec.family = family;
  spec.scenario = "test";
  spec.file = std::move(file);
  spec.pointer = "/scenarios/0";
  spec.params = std::move(params);
  spec.id = case_id(family, spec.params);
  if (repetitions > 0) spec.repetitions = repetitions;
  return spec;
}

}  // namespace pathbench::testing
