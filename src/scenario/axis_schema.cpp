#include "scenario/axis_schema.hpp"

#include <algorithm>
#include <cstdint>

namespace pathbench {

std::optional<std::string> check_axis_value(const AxisSchema& schema, const nlohmann::json& value) {
  if (schema.kind == AxisSchema::Kind::kString) {
    if (!value.is_string()) return "expected a string, found " + value.dump();
    const auto& s = value.get_ref<const std::string&>();
    if (!schema.allowed.empty() &&
        std::find(schema.allowed.begin(), schema.allowed.end(), s) == schema.allowed.end()) {
      std::string list;
      for (const auto& a : schema.allowed) list += (list.empty() ? "" : ", ") + a;
      return "\"" + s + "\" is not one of: " + list;
    }
    return std::nullopt;
  }
  if (!value.is_number_integer()) return "expected an integer, found " + value.dump();
  // JSON integers up to 2^64 - 1 parse as unsigned: one beyond int64 is out of every axis's
  // bounds, and must not wrap to a negative number on the way.
  if (value.is_number_unsigned() &&
      value.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
    return value.dump() + " is outside [" + std::to_string(schema.min) + ", " +
           std::to_string(schema.max) + "]";
  }
  const auto v = value.get<std::int64_t>();
  if (v < schema.min || v > schema.max) {
    return std::to_string(v) + " is outside [" + std::to_string(schema.min) + ", " +
           std::to_string(schema.max) + "]";
  }
  return std::nullopt;
}

}  // namespace pathbench
