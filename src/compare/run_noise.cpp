#include "compare/run_noise.hpp"

#include "inventory/environment.hpp"

namespace pathbench {

std::vector<std::string> run_noise_reasons(const RunContext& context) {
  if (!context.environment) return {};
  // noise_reasons reads only the context's environment: hand it that, not the whole context.
  return noise_reasons(nlohmann::json{{"environment", nlohmann::json(*context.environment)}});
}

}  // namespace pathbench
