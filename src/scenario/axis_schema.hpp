#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace pathbench {

// What a family accepts on one axis. Scenario files are checked against this before anything is
// allocated.
struct AxisSchema {
  enum class Kind { kString, kInteger };
  std::string name;
  Kind kind = Kind::kString;
  std::vector<std::string> allowed;  // kString: the accepted values
  std::int64_t min = 0;              // kInteger: inclusive bounds
  std::int64_t max = INT64_MAX;
  std::string help;
};

// Returns an explanation when `value` does not fit `schema`, else nothing.
std::optional<std::string> check_axis_value(const AxisSchema& schema, const nlohmann::json& value);

}  // namespace pathbench
