#include "scenario/expansion.hpp"

#include <algorithm>
#include <limits>

#include "core/errors.hpp"
#include "core/units.hpp"

namespace pathbench {

std::string CaseSpec::str(const std::string& axis) const {
  if (!params.contains(axis)) throw std::out_of_range(id + ": no axis \"" + axis + "\"");
  const auto& v = params.at(axis);
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::int64_t CaseSpec::integer(const std::string& axis) const {
  if (!params.contains(axis)) throw std::out_of_range(id + ": no axis \"" + axis + "\"");
  return params.at(axis).get<std::int64_t>();
}

std::string case_id(const std::string& family, const nlohmann::ordered_json& params) {
  std::string id = family;
  for (const auto& [name, value] : params.items()) {
    id += "/" + name + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
  }
  return id;
}

namespace {
bool excluded(const nlohmann::ordered_json& params, const std::vector<ExcludeRule>& rules) {
  return std::any_of(rules.begin(), rules.end(), [&](const ExcludeRule& rule) {
    return std::all_of(rule.match.begin(), rule.match.end(), [&](const auto& entry) {
      const auto& [axis, values] = entry;
      const nlohmann::json v = params.at(axis);
      return std::find(values.begin(), values.end(), v) != values.end();
    });
  });
}
}  // namespace

std::vector<CaseSpec> expand(const Scenario& scenario) {
  std::vector<CaseSpec> cases;
  std::vector<std::size_t> index(scenario.axes.size(), 0);
  if (std::any_of(scenario.axes.begin(), scenario.axes.end(),
                  [](const Axis& a) { return a.values.empty(); })) {
    return cases;
  }
  // Odometer over the axes; the last axis varies fastest, so cases read in file order.
  while (true) {
    nlohmann::ordered_json params = nlohmann::ordered_json::object();
    for (std::size_t a = 0; a < scenario.axes.size(); ++a) {
      params[scenario.axes[a].name] = scenario.axes[a].values[index[a]];
    }
    if (!excluded(params, scenario.exclude)) {
      CaseSpec spec;
      spec.id = case_id(scenario.family, params);
      spec.scenario = scenario.name;
      spec.family = scenario.family;
      spec.file = scenario.file;
      spec.pointer = scenario.pointer;
      spec.params = std::move(params);
      spec.repetitions = scenario.repetitions;
      spec.min_time = scenario.min_time;
      spec.gate = scenario.gate;
      cases.push_back(std::move(spec));
    }
    std::size_t a = scenario.axes.size();
    while (a > 0) {
      --a;
      if (++index[a] < scenario.axes[a].values.size()) break;
      index[a] = 0;
      if (a == 0) return cases;
    }
    if (scenario.axes.empty()) return cases;
  }
}

void derive_case_params(std::vector<CaseSpec>& cases, const Family& family,
                        const Machine& machine) {
  for (auto& c : cases) {
    family.derive_params(c, machine);
    c.id = case_id(c.family, c.params);
  }
}

void validate_cases(const Scenario& scenario, const std::vector<CaseSpec>& cases,
                    const Family& family, const Machine& machine, int device) {
  if (cases.empty()) {
    throw InputError(scenario.file, scenario.pointer + "/exclude",
                     "the exclusions remove every case of scenario \"" + scenario.name + "\"");
  }
  auto bytes_pointer = [&] {
    for (const auto& a : scenario.axes) {
      if (a.name == "bytes") return a.pointer;
    }
    return scenario.pointer + "/axes";
  };
  std::uint64_t device_memory = 0;
  for (const auto& g : machine.gpus) {
    if (g.index == device) device_memory = g.memory_bytes;
  }
  for (const auto& c : cases) {
    if (auto why = family.invalid_combination(c)) {
      throw InputError(
          scenario.file, scenario.pointer + "/axes",
          c.id + ": " + *why +
              (why->find("exclude") == std::string::npos ? " (remove it with an \"exclude\" rule)"
                                                         : ""));
    }
    const MemoryNeeds needs = family.memory_needs(c);
    if (machine.mem_available_bytes > 0 && needs.host_bytes > machine.mem_available_bytes) {
      throw InputError(scenario.file, bytes_pointer(),
                       c.id + ": needs " + format_bytes(needs.host_bytes) +
                           " of host memory; this machine has " +
                           format_bytes(machine.mem_available_bytes) + " available");
    }
    if (device_memory > 0 && needs.device_bytes > device_memory) {
      throw InputError(scenario.file, bytes_pointer(),
                       c.id + ": needs " + format_bytes(needs.device_bytes) +
                           " of GPU memory; GPU " + std::to_string(device) + " has " +
                           format_bytes(device_memory));
    }
  }
}

}  // namespace pathbench
