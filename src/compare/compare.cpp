#include "compare/compare.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "compare/mann_whitney.hpp"
#include "core/units.hpp"
#include "inventory/environment.hpp"
#include "inventory/fingerprint.hpp"
#include "inventory/inventory.hpp"

namespace pathbench {

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::kPass:
      return "pass";
    case Verdict::kRegression:
      return "regression";
    case Verdict::kImprovement:
      return "improvement";
    case Verdict::kNoise:
      return "noise";
    case Verdict::kMissing:
      return "missing";
    case Verdict::kNew:
      return "new";
    case Verdict::kSkipped:
      return "skipped";
    case Verdict::kFailed:
      return "failed";
    case Verdict::kAcross:
      return "across";
    case Verdict::kUnstable:
      return "unstable";
    case Verdict::kFlaky:
      return "flaky";
    case Verdict::kInsufficient:
      return "insufficient_samples";
  }
  return "unknown";
}

int severity(Verdict v) {
  switch (v) {
    case Verdict::kFailed:
      return 11;
    case Verdict::kRegression:
      return 10;
    case Verdict::kMissing:
      return 9;
    case Verdict::kInsufficient:
      return 8;
    case Verdict::kFlaky:
      return 7;
    case Verdict::kNoise:
      return 6;
    case Verdict::kUnstable:
      return 5;
    case Verdict::kSkipped:
      return 4;
    case Verdict::kNew:
      return 3;
    case Verdict::kImprovement:
      return 2;
    case Verdict::kAcross:
      return 1;
    case Verdict::kPass:
      return 0;
  }
  return 0;
}

GateRuleOptions CompareOptions::rule() const {
  GateRuleOptions r;
  r.alpha = alpha;
  r.k = k;
  r.min_samples = min_samples;
  r.allow_few_samples = allow_few_samples;
  return r;
}

namespace {

std::string context_string(const nlohmann::ordered_json& context, const char* key) {
  const auto it = context.find(key);
  return it != context.end() && it->is_string() ? it->get<std::string>() : std::string();
}

ResultRef ref_of(const Result& r, const std::string& file) {
  std::string incomplete;
  if (!r.complete) {
    incomplete = r.incomplete_reason.empty() ? "the run did not finish (killed, or still running)"
                                             : r.incomplete_reason;
  }
  return {file,
          context_string(r.context, "node_type"),
          context_string(r.context, "topology_fingerprint"),
          context_string(r.context, "hostname"),
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

// The canonical topology text behind a result's fingerprint, when its context can be read back.
std::optional<std::vector<std::string>> topology_lines(const nlohmann::ordered_json& context) {
  try {
    return lines_of(topology_canonical_text(inventory_from_json(nlohmann::json(context))));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

const MetricResult* find_metric(const CaseResult& c, const std::string& name) {
  for (const auto& m : c.metrics) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

// The gate block that applies: the new result's (its scenario may have been tuned), else the
// baseline's.
const nlohmann::ordered_json& gate_of(const BaselineCase& baseline, const CaseResult& result) {
  return result.gate.is_object() ? result.gate : baseline.gate;
}

double threshold_for(const nlohmann::ordered_json& gate, const std::string& metric,
                     double default_pct) {
  if (!gate.is_object()) return default_pct;
  if (const auto m = gate.find("metrics"); m != gate.end() && m->contains(metric)) {
    return m->at(metric).get<double>();
  }
  if (const auto t = gate.find("threshold_pct"); t != gate.end()) return t->get<double>();
  return default_pct;
}

// The headline metric is always gated; a gate block can add others by naming them.
std::vector<std::string> gated_metrics(const BaselineCase& baseline, const CaseResult& result) {
  std::vector<std::string> names;
  if (!baseline.metrics.empty()) names.push_back(baseline.metrics.front().name);
  const auto& gate = gate_of(baseline, result);
  if (gate.is_object()) {
    if (const auto m = gate.find("metrics"); m != gate.end()) {
      for (const auto& [name, pct] : m->items()) {
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
      }
    }
  }
  return names;
}

Verdict verdict_of(RuleOutcome o) {
  switch (o) {
    case RuleOutcome::kPass:
      return Verdict::kPass;
    case RuleOutcome::kRegression:
      return Verdict::kRegression;
    case RuleOutcome::kImprovement:
      return Verdict::kImprovement;
    case RuleOutcome::kNoise:
      return Verdict::kNoise;
    case RuleOutcome::kUnstable:
      return Verdict::kUnstable;
    case RuleOutcome::kInsufficient:
      return Verdict::kInsufficient;
  }
  return Verdict::kNoise;
}

MetricComparison compare_metric(const BaselineMetric& b, const MetricResult& r,
                                double threshold_pct, const CompareOptions& options) {
  MetricComparison m;
  m.name = b.name;
  m.unit = b.unit;
  m.better = b.better;
  m.timing_class = b.timing_class;
  m.n_runs = b.runs.size();
  m.baseline_median = b.between.center;
  m.result_median = r.stats.median;
  m.n_baseline = 0;
  for (const auto& run : b.runs) m.n_baseline += run.samples.size();
  m.n_result = r.samples.size();
  m.threshold_pct = threshold_pct;
  m.ratio = m.baseline_median != 0 ? r.stats.median / m.baseline_median : 0;
  m.change_pct = m.baseline_median != 0 ? (m.ratio - 1) * 100 : 0;
  if (options.across) {
    m.verdict = Verdict::kAcross;
    return m;
  }
  const RuleJudgement j = judge_metric(b, r.samples, threshold_pct, options.rule());
  m.verdict = verdict_of(j.outcome);
  m.reason = j.reason;
  m.p_value = j.p_within;
  m.p_between = j.p_between;
  m.spread_pct = j.spread_pct;
  m.spread_known = j.spread_known;
  m.effective_threshold_pct = j.effective_threshold_pct;
  return m;
}

void settle_case_verdict(CaseComparison& c, bool across) {
  if (c.metrics.empty()) return;
  c.verdict = Verdict::kPass;
  c.reason.clear();
  for (const auto& m : c.metrics) {
    if (severity(m.verdict) > severity(c.verdict)) {
      c.verdict = m.verdict;
      c.reason = m.reason;
    }
  }
  if (across && c.verdict != Verdict::kFailed) c.verdict = Verdict::kAcross;
}

CaseComparison compare_case(const BaselineCase& b, const CaseResult& r,
                            const CompareOptions& options) {
  CaseComparison c{r.id, r.family, Verdict::kPass, "", {}};
  if (r.status == CaseStatus::kFailed) {
    // A stop signal cut the case short: it measured nothing to judge, and the node did not fail.
    const bool interrupted = r.reason.starts_with(kInterruptedReason);
    c.verdict = interrupted ? Verdict::kMissing : Verdict::kFailed;
    c.reason = interrupted ? "did not finish: " + r.reason : r.reason;
    return c;
  }
  if (b.status == CaseStatus::kOk && r.status == CaseStatus::kSkipped) {
    // Measured before, not now (a driver that no longer loads, a lost NUMA node): the gate must
    // not pass on what it could not measure.
    c.verdict = Verdict::kMissing;
    c.reason = "ran in the baseline, skipped in the result: " + r.reason;
    return c;
  }
  if (b.status != CaseStatus::kOk || r.status != CaseStatus::kOk) {
    c.verdict = Verdict::kSkipped;
    c.reason = r.status != CaseStatus::kOk        ? "skipped in the result: " + r.reason
               : b.status == CaseStatus::kSkipped ? "skipped in the baseline: " + b.reason
                                                  : "failed in the baseline: " + b.reason;
    return c;
  }
  const auto& gate = gate_of(b, r);
  for (const auto& name : gated_metrics(b, r)) {
    const BaselineMetric* bm = b.metric(name);
    const MetricResult* rm = find_metric(r, name);
    if (bm == nullptr || rm == nullptr) {
      MetricComparison m;
      m.name = name;
      m.verdict = Verdict::kMissing;
      m.reason = std::string("metric absent from the ") + (bm ? "result" : "baseline");
      c.metrics.push_back(std::move(m));
      continue;
    }
    c.metrics.push_back(compare_metric(
        *bm, *rm, threshold_for(gate, name, options.default_threshold_pct), options));
  }
  settle_case_verdict(c, options.across);
  return c;
}

void sort_worst_first(std::vector<CaseComparison>& cases) {
  std::stable_sort(cases.begin(), cases.end(), [](const auto& a, const auto& b) {
    if (severity(a.verdict) != severity(b.verdict))
      return severity(a.verdict) > severity(b.verdict);
    const double ca = a.metrics.empty() ? 0 : a.metrics.front().change_pct;
    const double cb = b.metrics.empty() ? 0 : b.metrics.front().change_pct;
    return std::abs(ca) > std::abs(cb);
  });
}

int exit_code_of(const Comparison& c) {
  bool failing = false;
  bool incomplete = !c.incomparable.empty() || (!c.noise.empty() && !c.allow_noisy) ||
                    !c.result.incomplete.empty() || !c.baseline.incomplete.empty();
  for (const auto& k : c.cases) {
    if (k.verdict == Verdict::kRegression || k.verdict == Verdict::kFailed) failing = true;
    if (k.verdict == Verdict::kMissing || k.verdict == Verdict::kInsufficient) incomplete = true;
  }
  for (const auto& f : c.floors) {
    if (is_failure(f.verdict)) failing = true;
  }
  // Verdicts taken under noise cannot be trusted either way: incomparable, not failed.
  if (!c.noise.empty() && !c.allow_noisy) return 2;
  if (failing) return 1;
  return incomplete ? 2 : 0;
}

// A malformed environment is bad input of the file that carries it.
std::vector<std::string> checked_noise_reasons(const nlohmann::ordered_json& context,
                                               const std::string& file,
                                               const std::string& pointer) {
  try {
    return noise_reasons(nlohmann::json(context));
  } catch (const std::invalid_argument& e) {
    throw InputError(file, pointer, e.what());
  }
}

std::vector<std::string> noise_of(const Baseline& baseline, const std::string& baseline_file,
                                  const Result& result, const std::string& result_file) {
  std::vector<std::string> out;
  for (const auto& why :
       checked_noise_reasons(result.context, result_file, "/context/environment")) {
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
  return identity_differences(baseline.context, result.context);
}

std::vector<std::string> identity_differences(const nlohmann::ordered_json& baseline,
                                              const nlohmann::ordered_json& result) {
  std::vector<std::string> diffs;
  const std::string bt = context_string(baseline, "node_type");
  const std::string rt = context_string(result, "node_type");
  if (bt != rt) diffs.push_back("node_type: \"" + bt + "\" vs \"" + rt + "\"");
  if (context_string(baseline, "topology_fingerprint") ==
      context_string(result, "topology_fingerprint")) {
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
  Comparison c;
  c.across = options.across;
  c.baseline = ref_of(baseline, baseline_file);
  c.result = ref_of(result, result_file);
  c.alpha = options.alpha;
  c.k = options.k;
  c.allow_noisy = options.allow_noisy;
  c.default_threshold_pct = options.default_threshold_pct;
  c.changes = context_changes(baseline.context, result.context);
  c.floors = check_floors(result, options.floors);
  if (!options.across) {
    c.incomparable = identity_differences(baseline.context, result.context);
    c.noise = noise_of(baseline, baseline_file, result, result_file);
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
  c.cases.reserve(baseline.cases.size());
  for (const auto& b : baseline.cases) {
    seen.insert(b.id);
    const auto it = by_id.find(b.id);
    if (it == by_id.end()) {
      c.cases.push_back({b.id, b.family, Verdict::kMissing, "not in the result", {}});
      continue;
    }
    c.cases.push_back(compare_case(b, *it->second, options));
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

std::vector<std::string> suspect_case_ids(const Comparison& c) {
  std::vector<std::string> ids;
  for (const auto& k : c.cases) {
    const bool suspect = std::any_of(k.metrics.begin(), k.metrics.end(), [](const auto& m) {
      return m.verdict == Verdict::kRegression;
    });
    if (suspect) ids.push_back(k.id);
  }
  return ids;
}

void apply_confirmation(Comparison& c, const Baseline& baseline, const std::vector<Result>& reruns,
                        const CompareOptions& options) {
  const GateRuleOptions rule = options.rule();
  // Indexes built once: looking each suspect up in every list would be quadratic when a whole
  // large result regresses.
  std::unordered_map<std::string_view, const BaselineCase*> baseline_by_id;
  baseline_by_id.reserve(baseline.cases.size());
  for (const auto& b : baseline.cases) baseline_by_id.try_emplace(b.id, &b);  // the first wins
  std::vector<std::unordered_map<std::string_view, const CaseResult*>> rerun_by_id(reruns.size());
  for (std::size_t i = 0; i < reruns.size(); ++i) {
    for (const auto& x : reruns[i].cases) rerun_by_id[i].insert_or_assign(x.id, &x);  // the last
  }
  for (auto& k : c.cases) {
    const auto found = baseline_by_id.find(k.id);
    if (found == baseline_by_id.end()) continue;
    const BaselineCase* b = found->second;
    for (auto& m : k.metrics) {
      if (m.verdict != Verdict::kRegression) continue;
      const BaselineMetric* bm = b->metric(m.name);
      if (bm == nullptr) continue;
      Confirmation conf;
      conf.runs = 1 + reruns.size();
      conf.reproduced = 1;  // the run that raised it
      for (std::size_t i = 0; i < reruns.size(); ++i) {
        const auto hit = rerun_by_id[i].find(k.id);
        const CaseResult* rc = hit == rerun_by_id[i].end() ? nullptr : hit->second;
        const MetricResult* rm =
            rc != nullptr && rc->status == CaseStatus::kOk ? find_metric(*rc, m.name) : nullptr;
        if (rm == nullptr) {
          // A re-run that cannot measure the case again is no evidence of noise: it counts
          // against the node, as the failure it is.
          ++conf.reproduced;
          conf.notes.push_back("re-run " + std::to_string(i + 1) + ": " +
                               (rc == nullptr ? std::string("the case did not run")
                                              : "the case " + std::string(to_string(rc->status)) +
                                                    ": " + rc->reason));
          continue;
        }
        const RuleJudgement j = judge_metric(*bm, rm->samples, m.threshold_pct, rule);
        conf.rerun_medians.push_back(j.result_median);
        conf.rerun_changes_pct.push_back(j.change_pct);
        if (j.outcome == RuleOutcome::kRegression) ++conf.reproduced;
      }
      if (!conf.confirmed()) {
        m.verdict = Verdict::kFlaky;
        m.reason = "did not reproduce: regression in " + std::to_string(conf.reproduced) + " of " +
                   std::to_string(conf.runs) + " runs (" + m.reason + ")";
      }
      m.confirmation = std::move(conf);
    }
    settle_case_verdict(k, c.across);
  }
  sort_worst_first(c.cases);
  c.exit_code = exit_code_of(c);
}

Comparison check_result_floors(const Result& result, const std::string& result_file,
                               const CompareOptions& options) {
  Comparison c;
  c.floors_only = true;
  c.result = ref_of(result, result_file);
  c.alpha = options.alpha;
  c.default_threshold_pct = options.default_threshold_pct;
  c.floors = check_floors(result, options.floors);
  for (const auto& r : result.cases) {
    if (r.status == CaseStatus::kFailed) {
      c.cases.push_back({r.id, r.family, Verdict::kFailed, r.reason, {}});
    }
  }
  c.exit_code = exit_code_of(c);
  return c;
}

namespace {

std::string verdict_label(const MetricComparison& m) {
  std::string label(to_string(m.verdict));
  if (m.confirmation) {
    label += m.verdict == Verdict::kRegression ? " (confirmed " : " (";
    label += std::to_string(m.confirmation->reproduced) + "/" +
             std::to_string(m.confirmation->runs) + ")";
  }
  return label;
}

std::vector<const MetricComparison*> not_gateable(const Comparison& c,
                                                  std::vector<std::string>* ids = nullptr) {
  std::vector<const MetricComparison*> out;
  for (const auto& k : c.cases) {
    for (const auto& m : k.metrics) {
      if (m.verdict != Verdict::kUnstable) continue;
      out.push_back(&m);
      if (ids) ids->push_back(k.id);
    }
  }
  return out;
}

}  // namespace

namespace {

using ojson = nlohmann::ordered_json;

ojson opt_json(const std::optional<double>& v) { return v ? ojson(*v) : ojson(nullptr); }

ojson case_json(const CaseComparison& k) {
  ojson metrics = ojson::array();
  for (const auto& m : k.metrics) {
    ojson mj{{"name", m.name},
             {"unit", m.unit},
             {"better", to_string(m.better)},
             {"verdict", to_string(m.verdict)},
             {"label", verdict_label(m)},
             {"timing_class", to_string(m.timing_class)},
             {"baseline_median", m.baseline_median},
             {"result_median", m.result_median},
             {"change_pct", m.change_pct},
             {"ratio", m.ratio},
             {"threshold_pct", m.threshold_pct},
             {"effective_threshold_pct", m.effective_threshold_pct},
             {"n_runs", m.n_runs},
             {"spread_pct", m.spread_pct},
             {"spread_known", m.spread_known},
             {"p_between", opt_json(m.p_between)},
             {"p_value", opt_json(m.p_value)},
             {"n_baseline", m.n_baseline},
             {"n_result", m.n_result},
             {"reason", m.reason}};
    if (m.confirmation) {
      const auto& cf = *m.confirmation;
      mj["confirmation"] = ojson{{"reproduced", cf.reproduced},
                                 {"runs", cf.runs},
                                 {"confirmed", cf.confirmed()},
                                 {"rerun_medians", cf.rerun_medians},
                                 {"rerun_changes_pct", cf.rerun_changes_pct},
                                 {"notes", cf.notes}};
    } else {
      mj["confirmation"] = nullptr;
    }
    metrics.push_back(std::move(mj));
  }
  return ojson{{"id", k.id},
               {"family", k.family},
               {"verdict", to_string(k.verdict)},
               {"reason", k.reason},
               {"metrics", std::move(metrics)}};
}

ojson not_gateable_json(const std::string& id, const MetricComparison& m) {
  return ojson{{"id", id},
               {"metric", m.name},
               {"timing_class", to_string(m.timing_class)},
               {"spread_pct", m.spread_pct},
               {"threshold_pct", m.threshold_pct},
               {"n_runs", m.n_runs},
               {"change_pct", m.change_pct}};
}

// Everything but the elements of "cases" and "not_gateable" (there, empty arrays), in order.
ojson head_json(const Comparison& c) {
  auto ref = [](const ResultRef& r) {
    return ojson{{"file", r.file},
                 {"node_type", r.node_type},
                 {"topology_fingerprint", r.topology_fingerprint},
                 {"hostname", r.hostname},
                 {"start_time", r.start_time},
                 {"complete", r.incomplete.empty()},
                 {"incomplete_reason", r.incomplete}};
  };
  ojson j;
  j["schema"] = kCompareSchema;
  j["mode"] = c.floors_only ? "floors" : c.across ? "across" : "gate";
  if (!c.floors_only) {
    j["baseline"] = ref(c.baseline);
    j["baseline"]["runs"] = c.baseline.runs;
  }
  j["result"] = ref(c.result);
  j["alpha"] = c.alpha;
  j["k"] = c.k;
  j["default_threshold"] = c.default_threshold_pct / 100;
  j["default_threshold_pct"] = c.default_threshold_pct;
  j["exit_code"] = c.exit_code;
  ojson changes = ojson::array();
  for (const auto& ch : c.changes) {
    changes.push_back(ojson{{"field", ch.field},
                            {"label", ch.label},
                            {"baseline", ch.baseline},
                            {"result", ch.result},
                            {"note", ch.note},
                            {"text", ch.text()}});
  }
  j["changes"] = changes;
  j["noise"] = c.noise;
  j["allow_noisy"] = c.allow_noisy;
  j["incomparable"] = c.incomparable;
  std::map<Verdict, std::size_t> counts;
  for (const auto& k : c.cases) ++counts[k.verdict];
  ojson summary = ojson::object();
  for (auto v : {Verdict::kPass, Verdict::kRegression, Verdict::kImprovement, Verdict::kNoise,
                 Verdict::kMissing, Verdict::kNew, Verdict::kSkipped, Verdict::kFailed,
                 Verdict::kAcross, Verdict::kUnstable, Verdict::kFlaky, Verdict::kInsufficient}) {
    summary[std::string(to_string(v))] = static_cast<std::ptrdiff_t>(counts[v]);
  }
  j["summary"] = summary;
  j["cases"] = ojson::array();
  j["not_gateable"] = ojson::array();
  ojson floors = ojson::array();
  for (const auto& f : c.floors) floors.push_back(to_json(f));
  j["floors"] = floors;
  return j;
}

// Replaces the empty array of top-level `key` in `text` (a dump(2)) with `count` elements, each
// dumped on its own and indented as dump(2) would have indented it there.
template <typename Element>
std::string splice_array(std::string text, const std::string& key, std::size_t count,
                         const Element& element) {
  const std::string placeholder = "\n  \"" + key + "\": []";
  const std::size_t at = text.find(placeholder);
  if (count == 0 || at == std::string::npos) return text;
  const std::size_t open = at + placeholder.size() - 2;  // the "[]"
  std::string out;
  // Room for it all at once: the size of a few elements, scaled up (one more allocation at
  // most when the sample was small).
  std::size_t sampled = 0, sample_bytes = 0;
  for (std::size_t i = 0; i < count; i += std::max<std::size_t>(1, count / 32), ++sampled) {
    sample_bytes += element(i).dump(2).size() + 8;
  }
  out.reserve(text.size() + sample_bytes / sampled * count * 11 / 10 + 64);
  out.append(text, 0, open);
  out += '[';
  for (std::size_t i = 0; i < count; ++i) {
    out += i == 0 ? "\n    " : ",\n    ";
    const std::string dumped = element(i).dump(2);
    for (const char ch : dumped) {
      out += ch;
      if (ch == '\n') out += "    ";  // two levels deeper than the element's own dump
    }
  }
  out += "\n  ]";
  out.append(text, open + 2, std::string::npos);
  return out;
}

}  // namespace

nlohmann::ordered_json to_json(const Comparison& c) {
  ojson j = head_json(c);
  ojson& cases = j["cases"];
  for (const auto& k : c.cases) cases.push_back(case_json(k));
  std::vector<std::string> ids;
  const auto unstable = not_gateable(c, &ids);
  ojson& ng = j["not_gateable"];
  for (std::size_t i = 0; i < unstable.size(); ++i)
    ng.push_back(not_gateable_json(ids[i], *unstable[i]));
  return j;
}

std::string to_json_text(const Comparison& c) {
  std::vector<std::string> ids;
  const auto unstable = not_gateable(c, &ids);
  // The elements one at a time: never the whole comparison as one document in memory. The
  // cases last, so that their text (the bulk) is not copied again.
  std::string text =
      splice_array(head_json(c).dump(2), "not_gateable", unstable.size(),
                   [&](std::size_t i) { return not_gateable_json(ids[i], *unstable[i]); });
  text = splice_array(std::move(text), "cases", c.cases.size(),
                      [&](std::size_t i) { return case_json(c.cases[i]); });
  text += '\n';
  return text;
}

namespace {

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // XML 1.0 forbids most control characters even when escaped.
        if (static_cast<unsigned char>(ch) < 0x20 && ch != '\n' && ch != '\t' && ch != '\r') {
          out += '?';
        } else {
          out += ch;
        }
    }
  }
  return out;
}

std::string format_p(const std::optional<double>& p) {
  if (!p) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", *p);
  return buf;
}

std::string describe_metric(const MetricComparison& m) {
  if (m.verdict == Verdict::kMissing) return m.name + ": " + m.reason;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%s: %s: %s -> %s (%+.2f %%, threshold %.1f %%, applied %.2f %%, between-run "
                "spread %.2f %%%s over %zu run%s, p = %s between runs, %s within, n = %zu/%zu)",
                m.name.c_str(), verdict_label(m).c_str(),
                format_value(m.baseline_median, m.unit).c_str(),
                format_value(m.result_median, m.unit).c_str(), m.change_pct, m.threshold_pct,
                m.effective_threshold_pct, m.spread_pct, m.spread_known ? "" : " (default)",
                m.n_runs, m.n_runs == 1 ? "" : "s", format_p(m.p_between).c_str(),
                format_p(m.p_value).c_str(), m.n_baseline, m.n_result);
  std::string text = buf;
  if (m.confirmation) {
    text += "; re-run medians:";
    for (std::size_t i = 0; i < m.confirmation->rerun_medians.size(); ++i) {
      char r[96];
      std::snprintf(r, sizeof r, " %s (%+.2f %%)",
                    format_value(m.confirmation->rerun_medians[i], m.unit).c_str(),
                    m.confirmation->rerun_changes_pct[i]);
      text += r;
    }
    for (const auto& n : m.confirmation->notes) text += "; " + n;
  }
  return text;
}

}  // namespace

std::string junit_xml(const Comparison& c) {
  // The counts first: the header carries them, and the body is then written once, straight into
  // the one string (a large comparison's XML is hundreds of MB: no stream, no copies).
  std::size_t failures = 0, errors = 0, skipped = 0;
  for (const auto& k : c.cases) {
    switch (k.verdict) {
      case Verdict::kRegression:
      case Verdict::kFailed:
        ++failures;
        break;
      case Verdict::kMissing:
      case Verdict::kInsufficient:
        ++errors;
        break;
      case Verdict::kSkipped:
      case Verdict::kUnstable:
        ++skipped;
        break;
      default:
        break;
    }
  }
  for (const auto& f : c.floors) {
    if (is_failure(f.verdict)) {
      ++failures;
    } else if (f.verdict == FloorVerdict::kUnknownLink) {
      ++skipped;
    }
  }
  const bool noisy = !c.noise.empty() && !c.allow_noisy;
  if (!c.incomparable.empty()) ++errors;
  if (noisy) ++errors;
  const std::size_t tests =
      c.cases.size() + c.floors.size() + (c.incomparable.empty() ? 0 : 1) + (noisy ? 1 : 0);

  std::string out;
  const std::string counts = "tests=\"" + std::to_string(tests) + "\" failures=\"" +
                             std::to_string(failures) + "\" errors=\"" + std::to_string(errors) +
                             "\" skipped=\"" + std::to_string(skipped) + "\"";
  out += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<testsuites name=\"pathbench\" " + counts + ">\n";
  out += "  <testsuite name=\"pathbench compare " + xml_escape(c.result.node_type) + "\" " +
         counts + ">\n";
  // What changed comes first: the properties a CI page shows before the test cases.
  out += "    <properties>\n";
  if (!c.floors_only) {
    out += "      <property name=\"baseline.runs\" value=\"" + std::to_string(c.baseline.runs) +
           "\"/>\n";
  }
  for (const auto& ch : c.changes) {
    out += "      <property name=\"changed." + xml_escape(ch.field) + "\" value=\"" +
           xml_escape(ch.text()) + "\"/>\n";
  }
  if (!c.result.incomplete.empty()) {
    out += "      <property name=\"result.incomplete\" value=\"" + xml_escape(c.result.incomplete) +
           "\"/>\n";
  }
  for (std::size_t i = 0; i < c.noise.size(); ++i) {
    out += "      <property name=\"noise." + std::to_string(i) + "\" value=\"" +
           xml_escape(c.noise[i]) + "\"/>\n";
  }
  out += "    </properties>\n";

  for (const auto& k : c.cases) {
    out += "    <testcase classname=\"pathbench." + xml_escape(k.family) + "\" name=\"" +
           xml_escape(k.id) + "\">\n";
    std::string text, headline;
    for (const auto& m : k.metrics) {
      text += describe_metric(m) + "\n";
      if (m.verdict == k.verdict && headline.empty()) headline = verdict_label(m);
    }
    if (!k.reason.empty()) text += k.reason + "\n";
    if (headline.empty()) headline = std::string(to_string(k.verdict));
    switch (k.verdict) {
      case Verdict::kRegression:
      case Verdict::kFailed:
        out += "      <failure type=\"" + std::string(to_string(k.verdict)) + "\" message=\"" +
               xml_escape(headline + (k.reason.empty() ? "" : ": " + k.reason)) + "\">" +
               xml_escape(text) + "</failure>\n";
        break;
      case Verdict::kMissing:
      case Verdict::kInsufficient:
        out +=
            "      <error type=\"" + std::string(to_string(k.verdict)) + "\" message=\"" +
            xml_escape(k.verdict == Verdict::kMissing ? "case missing from the result" : k.reason) +
            "\">" + xml_escape(text) + "</error>\n";
        break;
      case Verdict::kSkipped:
        out += "      <skipped message=\"" + xml_escape(k.reason) + "\"/>\n";
        break;
      case Verdict::kUnstable:
        // Not gateable on this node type: visible as a skip, never a silent pass.
        out += "      <skipped message=\"" + xml_escape("not gateable: " + k.reason) + "\"/>\n";
        break;
      default:
        if (!text.empty()) {
          out += "      <system-out>" + xml_escape(headline + "\n" + text) + "</system-out>\n";
        }
    }
    out += "    </testcase>\n";
  }
  for (const auto& f : c.floors) {
    out += "    <testcase classname=\"pathbench.floors\" name=\"" + xml_escape(f.id) + "\">\n";
    if (is_failure(f.verdict)) {
      out += "      <failure type=\"" + std::string(to_string(f.verdict)) + "\" message=\"" +
             xml_escape(f.detail) + "\"/>\n";
    } else if (f.verdict == FloorVerdict::kUnknownLink) {
      out += "      <skipped message=\"" + xml_escape(f.detail) + "\"/>\n";
    } else {
      out += "      <system-out>" + xml_escape(f.detail) + "</system-out>\n";
    }
    out += "    </testcase>\n";
  }
  if (!c.incomparable.empty()) {
    std::string text;
    for (const auto& d : c.incomparable) text += d + "\n";
    out +=
        "    <testcase classname=\"pathbench.compare\" name=\"comparable\">\n"
        "      <error type=\"incomparable\" message=\"results are from different node types "
        "or topologies\">" +
        xml_escape(text) + "</error>\n    </testcase>\n";
  }
  if (noisy) {
    std::string text;
    for (const auto& d : c.noise) text += d + "\n";
    out +=
        "    <testcase classname=\"pathbench.compare\" name=\"quiet\">\n"
        "      <error type=\"noisy\" message=\"incomparable: taken under noise\">" +
        xml_escape(text) + "</error>\n    </testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

void print_comparison(const Comparison& c, std::FILE* out, bool color) {
  auto paint = [&](Verdict v) -> const char* {
    if (!color) return "";
    switch (v) {
      case Verdict::kRegression:
      case Verdict::kFailed:
        return "\033[31m";
      case Verdict::kMissing:
      case Verdict::kNoise:
      case Verdict::kFlaky:
      case Verdict::kUnstable:
      case Verdict::kInsufficient:
        return "\033[33m";
      case Verdict::kImprovement:
        return "\033[32m";
      default:
        return "";
    }
  };
  const char* reset = color ? "\033[0m" : "";
  if (!c.floors_only) {
    // What changed is the first thing an upgrade gate's reader needs.
    if (c.changes.empty()) {
      std::fprintf(out, "what changed since the baseline: nothing in the node's context\n");
    } else {
      std::fprintf(out, "what changed since the baseline:\n");
      for (const auto& ch : c.changes) std::fprintf(out, "  %s\n", ch.text().c_str());
    }
    std::fprintf(out, "baseline: %s (%s, %zu run%s, newest %s)\nresult:   %s (%s, %s)\n",
                 c.baseline.file.c_str(), c.baseline.node_type.c_str(), c.baseline.runs,
                 c.baseline.runs == 1 ? "" : "s", c.baseline.start_time.c_str(),
                 c.result.file.c_str(), c.result.node_type.c_str(), c.result.start_time.c_str());
    for (const auto* ref : {&c.baseline, &c.result}) {
      if (ref->incomplete.empty()) continue;
      std::fprintf(out,
                   "incomplete: %s holds only the cases its run finished (%s); the rest cannot be "
                   "judged (exit 2 unless something fails)\n",
                   ref->file.c_str(), ref->incomplete.c_str());
    }
    if (c.baseline.runs < kMinRunsForSpread && !c.across) {
      const GateRuleOptions defaults;
      std::fprintf(out,
                   "the baseline has %zu run%s: the between-run spread is unknown, so the class "
                   "defaults apply (device-timed %.1f %%, host-timed %.1f %%); promote at least "
                   "%zu runs: pathbench baseline promote R1 R2 R3 ...\n",
                   c.baseline.runs, c.baseline.runs == 1 ? "" : "s",
                   defaults.device.unknown_spread * 100, defaults.host.unknown_spread * 100,
                   kMinRunsForSpread);
    }
  }
  for (const auto& n : c.noise) std::fprintf(out, "noisy: %s\n", n.c_str());
  if (!c.noise.empty()) {
    std::fprintf(out, c.allow_noisy
                          ? "judged anyway (--allow-noisy): treat the verdicts with care\n"
                          : "incomparable: noisy (exit 2); re-run on a quiet node, or pass "
                            "--allow-noisy to judge anyway\n");
  }
  for (const auto& d : c.incomparable) std::fprintf(out, "incomparable: %s\n", d.c_str());
  if (!c.incomparable.empty()) {
    std::fprintf(out,
                 "the results come from different node types or topologies; pass --across to "
                 "see ratios instead of verdicts\n");
  }
  if (!c.cases.empty()) {
    if (c.across) {
      std::fprintf(out, "%-12s  %-14s  %14s  %14s  %8s  %s\n", "verdict", "metric", "baseline",
                   "result", "ratio", "case");
    } else {
      std::fprintf(out, "%-26s  %-14s  %14s  %14s  %9s  %9s  %9s  %s\n", "verdict", "metric",
                   "baseline", "result", "change", "applied", "p", "case");
    }
  }
  // Skips are usually the same on both sides (no GPU, one NUMA node): one line per reason.
  std::map<std::string, std::size_t> skip_reasons;
  for (const auto& k : c.cases) {
    if (k.verdict == Verdict::kSkipped) {
      ++skip_reasons[k.reason];
      continue;
    }
    if (k.metrics.empty()) {
      std::fprintf(out, "%s%-26s%s  %-14s  %s  (%s)\n", paint(k.verdict),
                   std::string(to_string(k.verdict)).c_str(), reset, "", k.id.c_str(),
                   k.reason.c_str());
      continue;
    }
    for (const auto& m : k.metrics) {
      if (c.across) {
        std::fprintf(out, "%-12s  %-14s  %14s  %14s  %8.3f  %s\n", "", m.name.c_str(),
                     format_value(m.baseline_median, m.unit).c_str(),
                     format_value(m.result_median, m.unit).c_str(), m.ratio, k.id.c_str());
        continue;
      }
      if (m.verdict == Verdict::kUnstable) continue;  // listed in their own section below
      char p[16] = "n/a";
      if (m.p_between) std::snprintf(p, sizeof p, "%.2g", *m.p_between);
      std::fprintf(out, "%s%-26s%s  %-14s  %14s  %14s  %+8.2f%%  %8.1f%%  %9s  %s\n",
                   paint(m.verdict), verdict_label(m).c_str(), reset, m.name.c_str(),
                   format_value(m.baseline_median, m.unit).c_str(),
                   format_value(m.result_median, m.unit).c_str(), m.change_pct,
                   m.effective_threshold_pct, p, k.id.c_str());
      if (!m.reason.empty() && m.verdict != Verdict::kPass) {
        std::fprintf(out, "                            %s\n", m.reason.c_str());
      }
      if (m.confirmation && !m.confirmation->rerun_medians.empty()) {
        std::string medians;
        for (std::size_t i = 0; i < m.confirmation->rerun_medians.size(); ++i) {
          char r[96];
          std::snprintf(r, sizeof r, "%s%s (%+.2f %%)", i ? ", " : "",
                        format_value(m.confirmation->rerun_medians[i], m.unit).c_str(),
                        m.confirmation->rerun_changes_pct[i]);
          medians += r;
        }
        std::fprintf(out, "                            re-runs: %s\n", medians.c_str());
      }
      if (m.confirmation) {
        for (const auto& n : m.confirmation->notes) {
          std::fprintf(out, "                            %s\n", n.c_str());
        }
      }
    }
  }
  for (const auto& [reason, n] : skip_reasons) {
    std::fprintf(out, "%-26s  %zu case%s: %s\n", "skipped", n, n == 1 ? "" : "s", reason.c_str());
  }
  std::vector<std::string> ids;
  const auto unstable = not_gateable(c, &ids);
  if (!unstable.empty()) {
    std::fprintf(out,
                 "not gateable on this node type (between-run spread of the baseline above the "
                 "threshold; reported, never failing):\n");
    for (std::size_t i = 0; i < unstable.size(); ++i) {
      const auto& m = *unstable[i];
      std::fprintf(out,
                   "  %s%-9s%s spread %6.2f %% > threshold %5.1f %%  (%s-timed, %zu runs, "
                   "now %+.2f %%)  %s %s\n",
                   paint(m.verdict), "unstable", reset, m.spread_pct, m.threshold_pct,
                   std::string(to_string(m.timing_class)).c_str(), m.n_runs, m.change_pct,
                   m.name.c_str(), ids[i].c_str());
    }
  }
  for (const auto& f : c.floors) {
    const bool bad = is_failure(f.verdict);
    std::fprintf(out, "%sfloor %-13s%s %s: %s\n", bad && color ? "\033[31m" : "",
                 std::string(to_string(f.verdict)).c_str(), reset, f.id.c_str(), f.detail.c_str());
  }
  std::map<Verdict, std::size_t> counts;
  for (const auto& k : c.cases) ++counts[k.verdict];
  std::string summary;
  for (const auto& [v, n] : counts) {
    summary += (summary.empty() ? "" : ", ") + std::to_string(n) + " " + std::string(to_string(v));
  }
  std::fprintf(out, "%zu cases%s%s; exit %d\n", c.cases.size(), summary.empty() ? "" : ": ",
               summary.c_str(), c.exit_code);
}

}  // namespace pathbench
