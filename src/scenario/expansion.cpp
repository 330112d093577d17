#include "scenario/expansion.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <set>
#include <unordered_map>

#include "core/errors.hpp"
#include "core/json_text.hpp"
#include "core/units.hpp"
#include "scenario/scenario_file.hpp"

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

// A placeholder takes the whole run of letters and digits (families put one only where a
// non-alphanumeric character or the end of the name follows): linear in the length of the name.
bool metric_name_matches(std::string_view pattern, std::string_view name) {
  std::size_t i = 0, j = 0;
  while (i < pattern.size()) {
    if (pattern[i] == '<') {
      const std::size_t close = pattern.find('>', i);
      if (close != std::string_view::npos) {
        const std::size_t start = j;
        while (j < name.size() && std::isalnum(static_cast<unsigned char>(name[j]))) ++j;
        if (j == start) return false;
        i = close + 1;
        continue;
      }
    }
    if (j >= name.size() || pattern[i] != name[j]) return false;
    ++i;
    ++j;
  }
  return j == name.size();
}

namespace {

// An exclude rule as, per axis of the scenario, which of that axis's values it lists (by index);
// axes the rule does not name are left out.
struct RuleMask {
  std::vector<std::pair<std::size_t, std::vector<char>>> axes;  // (axis index, listed[value])
};

std::vector<RuleMask> rule_masks(const Scenario& scenario) {
  std::vector<std::unordered_map<std::string, std::size_t>> index_of(scenario.axes.size());
  for (std::size_t a = 0; a < scenario.axes.size(); ++a) {
    for (std::size_t v = 0; v < scenario.axes[a].values.size(); ++v) {
      index_of[a].emplace(scenario.axes[a].values[v].dump(), v);
    }
  }
  std::vector<RuleMask> masks;
  for (const auto& rule : scenario.exclude) {
    RuleMask mask;
    for (const auto& [name, listed] : rule.match) {
      const auto axis = std::find_if(scenario.axes.begin(), scenario.axes.end(),
                                     [&name = name](const Axis& x) { return x.name == name; });
      if (axis == scenario.axes.end()) {
        throw InputError(scenario.file, rule.pointer + "/" + pointer_token(name),
                         "\"" + name + "\" is not an axis of this scenario");
      }
      const auto a = static_cast<std::size_t>(axis - scenario.axes.begin());
      std::vector<char> on(axis->values.size(), 0);
      for (const auto& v : listed) {
        if (const auto it = index_of[a].find(v.dump()); it != index_of[a].end()) on[it->second] = 1;
      }
      mask.axes.emplace_back(a, std::move(on));
    }
    masks.push_back(std::move(mask));
  }
  return masks;
}

// Every metric a gate block names must be one that some case of the scenario records: a typo
// there would otherwise gate nothing, silently.
void validate_gate_metrics(const Scenario& scenario, const std::vector<CaseSpec>& cases,
                           const FamilySchema& family) {
  if (!scenario.gate.is_object()) return;
  const auto metrics = scenario.gate.find("metrics");
  if (metrics == scenario.gate.end() || !metrics->is_object()) return;
  std::vector<std::string> known;  // the cases' metric names, in first-seen order
  std::set<std::string> seen;
  for (const auto& c : cases) {
    const auto names = family.metric_names(c);
    if (!names) return;  // the family does not declare its metrics
    for (const auto& n : *names) {
      if (seen.insert(n).second) known.push_back(n);
    }
  }
  std::set<std::string> per_operation;
  for (const auto& c : cases) {
    for (auto& n : family.per_operation_metric_names(c)) per_operation.insert(std::move(n));
  }
  for (const auto& item : metrics->items()) {
    const std::string& name = item.key();
    const bool found = std::any_of(known.begin(), known.end(), [&](const std::string& pattern) {
      return metric_name_matches(pattern, name);
    });
    if (found) {
      // A percentile exists only for a metric timed operation by operation: gating one on any
      // other would make every comparison "missing" instead of failing here.
      const auto statistic =
          item.value().is_object() ? item.value().find("statistic") : item.value().end();
      if (statistic != item.value().end() && statistic->is_string() &&
          statistic->get<std::string>() != "median" && !per_operation.contains(name)) {
        std::string list;
        for (const auto& n : per_operation) list += (list.empty() ? "" : ", ") + n;
        throw InputError(
            scenario.file, scenario.pointer + "/gate/metrics/" + pointer_token(name) + "/statistic",
            "\"" + statistic->get<std::string>() + "\" of metric \"" + name +
                "\": only a metric timed operation by operation has percentiles (" +
                (list.empty() ? "family " + scenario.family + " has none" : "here: " + list) +
                "); gate its median instead");
      }
      continue;
    }
    std::string list;
    for (const auto& n : known) list += (list.empty() ? "" : ", ") + n;
    throw InputError(scenario.file, scenario.pointer + "/gate/metrics/" + pointer_token(name),
                     "unknown metric \"" + name + "\": no case of scenario \"" + scenario.name +
                         "\" records it (family " + scenario.family +
                         " records for these cases: " + list + ")");
  }
}

bool excluded(const std::vector<std::size_t>& index, const std::vector<RuleMask>& rules) {
  return std::any_of(rules.begin(), rules.end(), [&](const RuleMask& rule) {
    return std::all_of(rule.axes.begin(), rule.axes.end(),
                       [&](const auto& axis) { return axis.second[index[axis.first]] != 0; });
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
  // The file reader refuses larger scenarios before building their values; a Scenario built
  // otherwise is held to the same bound here, before anything is allocated per case.
  std::uint64_t product = 1;
  for (const auto& a : scenario.axes) {
    if (__builtin_mul_overflow(product, static_cast<std::uint64_t>(a.values.size()), &product) ||
        product > kMaxCasesPerScenario) {
      throw InputError(
          scenario.file, scenario.pointer + "/axes",
          "the axes expand to more than " + std::to_string(kMaxCasesPerScenario) + " cases");
    }
  }
  if (scenario.exclude.size() > kMaxExcludeRules) {
    throw InputError(
        scenario.file, scenario.pointer + "/exclude",
        "a scenario may have at most " + std::to_string(kMaxExcludeRules) + " exclude rules");
  }
  // Work: at most kMaxCasesPerScenario points x kMaxExcludeRules rules x axes, one lookup each.
  const std::vector<RuleMask> rules = rule_masks(scenario);
  // Odometer over the axes; the last axis varies fastest, so cases read in file order.
  while (true) {
    if (!excluded(index, rules)) {
      nlohmann::ordered_json params = nlohmann::ordered_json::object();
      for (std::size_t a = 0; a < scenario.axes.size(); ++a) {
        params[scenario.axes[a].name] = scenario.axes[a].values[index[a]];
      }
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

void derive_case_params(std::vector<CaseSpec>& cases, const FamilySchema& family,
                        const Machine& machine) {
  for (auto& c : cases) {
    family.derive_params(c, machine);
    c.id = case_id(c.family, c.params);
  }
}

void validate_cases(const Scenario& scenario, const std::vector<CaseSpec>& cases,
                    const FamilySchema& family, const Machine& machine, int device) {
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
  validate_gate_metrics(scenario, cases, family);
}

}  // namespace pathbench
