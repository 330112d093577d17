#pragma once

#include <string>
#include <vector>

#include "result/run_context.hpp"

namespace pathbench {

// Why the run behind `context` was taken under noise (steal, another GPU process, throttling:
// inventory/environment.hpp noise_reasons); empty without environment samples. Throws
// std::invalid_argument naming the field when the environment is malformed: the caller knows
// the file and says so.
std::vector<std::string> run_noise_reasons(const RunContext& context);
// The same, a malformed environment being bad input of `file` (InputError at `pointer`, the
// context's "environment").
std::vector<std::string> checked_run_noise_reasons(const RunContext& context,
                                                   const std::string& file,
                                                   const std::string& pointer);

}  // namespace pathbench
