#include "compare/compare.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "compare/case_verdicts.hpp"
#include "compare/run_noise.hpp"
#include "core/errors.hpp"
#include "inventory/fingerprint.hpp"
#include "inventory/inventory.hpp"

// Matching a result's cases with the baseline's by id; the verdict rules are in case_verdicts.cpp.

namespace pathbench {

namespace {

ResultRef ref_of(const Result& r, const RunContext& context, const std::string& file) {
  std::string incomplete;
  if (!r.complete) {
    incomplete = r.incomplete_reason.empty() ? "the run did not finish (killed, or still running)"
                                             : r.incomplete_reason;
  }
  return {file,
          context.node_type.value_or(""),
          context.topology_fingerprint.value_or(""),
          context.hostname.value_or(""),
          r.start_time,
          1,
          std::move(incomplete)};
}

ResultRef ref_of(const Baseline& b, const std::string& file) {
  return {file,
          b.node_type,
          b.topology_fingerprint,
          b.runs.empty() ? "" : b.runs.back().hostname,
          b.runs.empty() ? "" : b.runs.back().start_time,
          b.runs.size(),
          {}};
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The canonical topology text behind a result's fingerprint, when its context can be read back
// as an inventory (the fingerprint is the inventory's; so is its reader).
std::optional<std::vector<std::string>> topology_lines(const RunContext& context) {
  try {
    return lines_of(
        topology_canonical_text(inventory_from_json(nlohmann::json(context.to_json()))));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// A malformed environment is bad input of the file that carries it.
std::vector<std::string> checked_noise_reasons(const RunContext& context, const std::string& file,
                                               const std::string& pointer) {
  return checked_run_noise_reasons(context, file, pointer);
}

std::vector<std::string> noise_of(const Baseline& baseline, const std::string& baseline_file,
                                  const RunContext& result, const std::string& result_file) {
  std::vector<std::string> out;
  for (const auto& why : checked_noise_reasons(result, result_file, "/context/environment")) {
    out.push_back("result: " + why);
  }
  for (std::size_t i = 0; i < baseline.run_contexts.size(); ++i) {
    const std::string pointer = "/runs/" + std::to_string(i) + "/context/environment";
    for (const auto& why :
         checked_noise_reasons(baseline.run_contexts[i], baseline_file, pointer)) {
      const std::string file = i < baseline.runs.size() ? baseline.runs[i].file : "";
      out.push_back("baseline run " + std::to_string(i + 1) + " (" + file + "): " + why);
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> identity_differences(const Result& baseline, const Result& result) {
  return identity_differences(RunContext::from_json(baseline.context, "baseline"),
                              RunContext::from_json(result.context, "result"));
}

std::vector<std::string> identity_differences(const RunContext& baseline,
                                              const RunContext& result) {
  std::vector<std::string> diffs;
  const std::string bt = baseline.node_type.value_or("");
  const std::string rt = result.node_type.value_or("");
  if (bt != rt) diffs.push_back("node_type: \"" + bt + "\" vs \"" + rt + "\"");
  if (baseline.topology_fingerprint.value_or("") == result.topology_fingerprint.value_or("")) {
    return diffs;
  }
  const auto bl = topology_lines(baseline);
  const auto rl = topology_lines(result);
  if (!bl || !rl) {
    diffs.push_back("topology_fingerprint differs");
    return diffs;
  }
  const std::set<std::string> bs(bl->begin(), bl->end()), rs(rl->begin(), rl->end());
  for (const auto& line : *bl) {
    if (!rs.contains(line)) diffs.push_back("topology: baseline has \"" + line + "\"");
  }
  for (const auto& line : *rl) {
    if (!bs.contains(line)) diffs.push_back("topology: result has \"" + line + "\"");
  }
  if (diffs.empty()) diffs.push_back("topology_fingerprint differs");
  return diffs;
}

Comparison compare_results(const Baseline& baseline, const std::string& baseline_file,
                           const Result& result, const std::string& result_file,
                           const CompareOptions& options) {
  // Read once, checked field by field: every rule below reads the typed context.
  const RunContext context = RunContext::from_json(result.context, result_file);
  Comparison c;
  c.across = options.across;
  c.baseline = ref_of(baseline, baseline_file);
  c.result = ref_of(result, context, result_file);
  c.alpha = options.alpha;
  c.k = options.k;
  c.allow_noisy = options.allow_noisy;
  c.default_threshold_pct = options.default_threshold_pct;
  c.changes = context_changes(baseline.context, context);
  c.floors = check_floors(context, result.cases, options.floors);
  if (!options.across) {
    c.incomparable = identity_differences(baseline.context, context);
    c.noise = noise_of(baseline, baseline_file, context, result_file);
  }
  if (!c.incomparable.empty()) {
    c.exit_code = exit_code_of(c);  // a floor not met still fails (1) before incomparable (2)
    return c;
  }
  // Hash indexes of views of the ids (the cases outlive them): a million cases are matched in
  // linear time without copying an id.
  std::unordered_map<std::string_view, const CaseResult*> by_id;
  by_id.reserve(result.cases.size());
  for (const auto& r : result.cases) by_id.insert_or_assign(r.id, &r);  // the last of an id wins
  std::unordered_set<std::string_view> seen;
  seen.reserve(baseline.cases.size());
  CompareOptions judged = options;
  judged.run_machines = run_machines_of(baseline);
  c.cases.reserve(baseline.cases.size());
  for (const auto& b : baseline.cases) {
    seen.insert(b.id);
    const auto it = by_id.find(b.id);
    if (it == by_id.end()) {
      c.cases.push_back({b.id, b.family, Verdict::kMissing, "not in the result", {}});
      continue;
    }
    c.cases.push_back(compare_case(b, *it->second, judged));
  }
  for (const auto& r : result.cases) {
    if (seen.contains(r.id)) continue;
    if (r.status == CaseStatus::kFailed && r.reason.starts_with(kInterruptedReason)) {
      c.cases.push_back({r.id, r.family, Verdict::kMissing, "did not finish: " + r.reason, {}});
    } else if (r.status == CaseStatus::kFailed) {
      c.cases.push_back({r.id, r.family, Verdict::kFailed, r.reason, {}});
    } else {
      c.cases.push_back({r.id, r.family, Verdict::kNew, "not in the baseline", {}});
    }
  }
  sort_worst_first(c.cases);
  if (options.across) {
    const bool failed = std::any_of(c.cases.begin(), c.cases.end(),
                                    [](const auto& k) { return k.verdict == Verdict::kFailed; });
    c.exit_code = failed ? 1 : c.cases.empty() ? 2 : 0;
  } else {
    c.exit_code = exit_code_of(c);
  }
  return c;
}

Comparison compare_results(const Result& baseline, const std::string& baseline_file,
                           const Result& result, const std::string& result_file,
                           const CompareOptions& options) {
  return compare_results(baseline_from_result(baseline, baseline_file), baseline_file, result,
                         result_file, options);
}

Comparison check_result_floors(const Result& result, const std::string& result_file,
                               const CompareOptions& options) {
  const RunContext context = RunContext::from_json(result.context, result_file);
  Comparison c;
  c.floors_only = true;
  c.result = ref_of(result, context, result_file);
  c.alpha = options.alpha;
  c.default_threshold_pct = options.default_threshold_pct;
  c.floors = check_floors(context, result.cases, options.floors);
  for (const auto& r : result.cases) {
    if (r.status == CaseStatus::kFailed) {
      c.cases.push_back({r.id, r.family, Verdict::kFailed, r.reason, {}});
    }
  }
  c.exit_code = exit_code_of(c);
  return c;
}

}  // namespace pathbench
