#include "compare/run_noise.hpp"

#include <stdexcept>

#include "core/errors.hpp"
#include "inventory/environment.hpp"

namespace pathbench {

std::vector<std::string> run_noise_reasons(const RunContext& context) {
  if (!context.environment) return {};
  // noise_reasons reads only the context's environment: hand it that, not the whole context.
  return noise_reasons(nlohmann::json{{"environment", nlohmann::json(*context.environment)}});
}

std::vector<std::string> checked_run_noise_reasons(const RunContext& context,
                                                   const std::string& file,
                                                   const std::string& pointer) {
  try {
    return run_noise_reasons(context);
  } catch (const std::invalid_argument& e) {
    throw InputError(file, pointer, e.what());
  }
}

}  // namespace pathbench
