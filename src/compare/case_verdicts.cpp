#include "compare/case_verdicts.hpp"

#include <algorithm>
#include <cmath>

namespace pathbench {

const MetricResult* find_metric(const CaseResult& c, const std::string& name) {
  for (const auto& m : c.metrics) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

namespace {

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

}  // namespace

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

}  // namespace pathbench
