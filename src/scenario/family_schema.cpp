#include "scenario/family_schema.hpp"

#include "core/text.hpp"

namespace pathbench {

std::optional<std::string> FamilySchema::case_error(const CaseSpec& spec) const {
  for (const auto& axis : required_axes()) {
    if (!spec.has(axis)) return concat("the ", axis, " axis is required");
  }
  for (const auto& axis : axes()) {
    if (!spec.has(axis.name)) continue;
    if (auto why = check_axis_value(axis, spec.params.at(axis.name))) {
      return concat(axis.name, ": ", *why);
    }
  }
  return invalid_combination(spec);
}

}  // namespace pathbench
