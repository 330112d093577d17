#pragma once

#include <string_view>
#include <vector>

#include "inventory/machine.hpp"
#include "scenario/family_schema.hpp"
#include "scenario/scenario.hpp"

namespace pathbench {

// The cartesian product of the scenario's axes minus its exclusions, in axis order. Throws
// InputError for a scenario beyond kMaxCasesPerScenario or kMaxExcludeRules (the file reader
// refuses those first). Exclusion costs one lookup per case, rule and named axis.
std::vector<CaseSpec> expand(const Scenario& scenario);

std::string case_id(const std::string& family, const nlohmann::ordered_json& params);

// Adds the parameters the machine decides (Family::derive_params, e.g. the peer family's `link`)
// to every case and recomputes its id, so they are part of the id that results are compared by.
// Run after expand() and before anything uses the ids.
void derive_case_params(std::vector<CaseSpec>& cases, const FamilySchema& family, const Machine& machine);

// Rejects, before anything is allocated, combinations the family does not accept and cases whose
// buffers cannot fit in this machine's memory, and gate blocks naming a metric no case records.
// Throws InputError (file, pointer, case id).
void validate_cases(const Scenario& scenario, const std::vector<CaseSpec>& cases,
                    const FamilySchema& family, const Machine& machine, int device);

// Whether a metric name is one of Family::metric_names's names: `pattern` with each placeholder
// "<...>" standing for a run of letters and digits ("bandwidth_gpu<N>": "bandwidth_gpu3").
bool metric_name_matches(std::string_view pattern, std::string_view name);

}  // namespace pathbench
