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

#include "inventory/gpu_selection.hpp"
#include "inventory/machine.hpp"
#include "inventory/requirements.hpp"
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

// A pair of GPUs, "S-D" (CUDA indexes, S != D). In a scenario file {"gpu_pairs": "all"} is every
// ordered pair of the selected GPUs (--devices), or "none" when there are fewer than two, so the
// cases exist and skip with the reason. No list of values names every machine's pairs: the value
// is checked by invalid() (from the family's invalid_combination), not by the schema.
class GpuPairAxis {
 public:
  GpuPairAxis(std::string name, std::string help)
      : name_(std::move(name)), help_(std::move(help)) {}

  const std::string& name() const { return name_; }

  AxisSchema schema() const {
    AxisSchema s;
    s.name = name_;
    s.kind = AxisSchema::Kind::kString;
    s.help = help_ + ", \"S-D\" (S != D); {\"gpu_pairs\": \"all\"} is every ordered pair of the " +
             "selected GPUs (--devices), or \"" + kNoGpuPair + "\" when there are fewer than two";
    return s;
  }

  // Whether the case has the axis (for a family where it is optional).
  bool present(const CaseSpec& spec) const { return spec.has(name_); }

  // {S, D}; nothing for "none" (or a value invalid() rejects).
  std::optional<std::pair<int, int>> decode(const CaseSpec& spec) const {
    return parse_gpu_pair(spec.str(name_));
  }

  // What the pair needs of the machine: two selected GPUs, then the pair's own two among them.
  // "none" was expanded where fewer than two GPUs were selected; with two or more it is a
  // scenario mistake, and the reason says so. The family adds what its method needs of the pair.
  Requirements requirements(const CaseSpec& spec) const {
    Requirements needs;
    needs.two_gpus();
    const auto pair = decode(spec);
    if (!pair) {
      return needs.custom(
          [name = name_](const Machine& machine, int) -> std::optional<std::string> {
            return name + "=" + kNoGpuPair + " names no GPU pair, but " +
                   std::to_string(machine.selected_gpus.size()) +
                   " GPUs are selected; use {\"gpu_pairs\": \"all\"} or \"S-D\"";
          });
    }
    return needs.named_gpus({pair->first, pair->second}, name_ + " " + spec.str(name_));
  }

  // The pair's `link` (the label of Machine::link(S, D): "nvlink18", "pcie-p2p", "host-staged"):
  // "none" for pair=none, "unknown" when the inventory has no link for the pair (nvidia-smi topo
  // unavailable). The link decides what a pair's case measures, so it belongs in the case id.
  std::string link(const CaseSpec& spec, const Machine& machine) const {
    const auto pair = decode(spec);
    if (!pair) return kNoGpuPair;
    const GpuLink* link = machine.link(pair->first, pair->second);
    return link == nullptr || link->param.empty() ? "unknown" : link->param;
  }

  // Adds `link` right after the pair (Family::derive_params), replacing one derived before.
  void derive_link(CaseSpec& spec, const Machine& machine) const {
    if (!spec.has(name_)) return;
    const std::string value = link(spec, machine);
    nlohmann::ordered_json params = nlohmann::ordered_json::object();
    for (const auto& [name, v] : spec.params.items()) {
      if (name == "link") continue;
      params[name] = v;
      if (name == name_) params["link"] = value;
    }
    spec.params = std::move(params);
  }

  // Why the case's value is neither "S-D" nor "none", else nothing.
  std::optional<std::string> invalid(const CaseSpec& spec) const {
    const std::string text = spec.str(name_);
    if (text == kNoGpuPair || parse_gpu_pair(text)) return std::nullopt;
    return name_ + " \"" + text +
           "\" is not \"S-D\" (two different CUDA device indexes, e.g. \"0-1\"); use "
           "{\"gpu_pairs\": \"all\"} for every pair of the selected GPUs";
  }

 private:
  std::string name_;
  std::string help_;
};

// The schema list of a family's axes, in declaration order (Family::axes).
template <typename... Axes>
std::vector<AxisSchema> axis_schemas(const Axes&... axes) {
  return {axes.schema()...};
}

}  // namespace pathbench
