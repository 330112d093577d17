#pragma once

#include <vector>

#include "inventory/machine.hpp"
#include "measure/family.hpp"
#include "scenario/scenario.hpp"

namespace pathbench {

// The cartesian product of the scenario's axes minus its exclusions, in axis order.
std::vector<CaseSpec> expand(const Scenario& scenario);

std::string case_id(const std::string& family, const nlohmann::ordered_json& params);

// Adds the parameters the machine decides (Family::derive_params, e.g. the peer family's `link`)
// to every case and recomputes its id, so they are part of the id that results are compared by.
// Run after expand() and before anything uses the ids.
void derive_case_params(std::vector<CaseSpec>& cases, const Family& family, const Machine& machine);

// Rejects, before anything is allocated, combinations the family does not accept and cases whose
// buffers cannot fit in this machine's memory. Throws InputError (file, pointer, case id).
void validate_cases(const Scenario& scenario, const std::vector<CaseSpec>& cases,
                    const Family& family, const Machine& machine, int device);

}  // namespace pathbench
