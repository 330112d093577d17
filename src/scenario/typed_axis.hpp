#pragma once

// A family's axes declared once: the schema a scenario file is validated against at load and the
// decoding of a case's value into the family's own type come from the same table, so a value the
// schema accepts always decodes, and one it rejects never reaches a family (exit 3 at load).

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scenario/axis_schema.hpp"
#include "scenario/scenario.hpp"

namespace pathbench {

template <typename E>
class EnumAxis {
 public:
  struct Value {
    std::string_view name;
    E value;
  };

  EnumAxis(std::string name, std::vector<Value> values, std::string help)
      : name_(std::move(name)), values_(std::move(values)), help_(std::move(help)) {}

  const std::string& name() const { return name_; }

  AxisSchema schema() const {
    AxisSchema s;
    s.name = name_;
    s.kind = AxisSchema::Kind::kString;
    for (const auto& v : values_) s.allowed.emplace_back(v.name);
    s.help = help_;
    return s;
  }

  bool present(const CaseSpec& spec) const { return spec.has(name_); }

  // The case's value; the axis must be present (a required axis, or checked with present()).
  E decode(const CaseSpec& spec) const {
    const std::string text = spec.str(name_);
    for (const auto& v : values_) {
      if (v.name == text) return v.value;
    }
    // Load validation makes this unreachable; a default here would measure something else.
    throw std::logic_error(spec.id + ": axis \"" + name_ + "\" value \"" + text +
                           "\" was not validated against the family's schema");
  }
  E decode_or(const CaseSpec& spec, E absent) const {
    return present(spec) ? decode(spec) : absent;
  }
  std::optional<E> decode_optional(const CaseSpec& spec) const {
    return present(spec) ? std::optional<E>(decode(spec)) : std::nullopt;
  }

  std::string_view name_of(E value) const {
    for (const auto& v : values_) {
      if (v.value == value) return v.name;
    }
    throw std::logic_error("axis \"" + name_ + "\": a value without a name");
  }

 private:
  std::string name_;
  std::vector<Value> values_;
  std::string help_;
};

class IntegerAxis {
 public:
  IntegerAxis(std::string name, std::int64_t min, std::int64_t max, std::string help)
      : name_(std::move(name)), min_(min), max_(max), help_(std::move(help)) {}

  const std::string& name() const { return name_; }

  AxisSchema schema() const {
    AxisSchema s;
    s.name = name_;
    s.kind = AxisSchema::Kind::kInteger;
    s.min = min_;
    s.max = max_;
    s.help = help_;
    return s;
  }

  bool present(const CaseSpec& spec) const { return spec.has(name_); }
  std::int64_t decode(const CaseSpec& spec) const { return spec.integer(name_); }
  std::int64_t decode_or(const CaseSpec& spec, std::int64_t absent) const {
    return present(spec) ? decode(spec) : absent;
  }
  std::optional<std::int64_t> decode_optional(const CaseSpec& spec) const {
    return present(spec) ? std::optional<std::int64_t>(decode(spec)) : std::nullopt;
  }

 private:
  std::string name_;
  std::int64_t min_, max_;
  std::string help_;
};

// The schema list of a family's axes, in declaration order (Family::axes).
template <typename... Axes>
std::vector<AxisSchema> axis_schemas(const Axes&... axes) {
  return {axes.schema()...};
}

}  // namespace pathbench
