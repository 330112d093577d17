#include "compare/case_verdicts.hpp"

#include <algorithm>
#include <cmath>
#include <span>
#include <string_view>

#include "core/text.hpp"
#include "stats/robust.hpp"

namespace pathbench {

std::vector<std::string> gated_metric_names(const std::string& headline,
                                            const nlohmann::ordered_json& gate) {
  std::vector<std::string> names;
  if (!headline.empty()) names.push_back(headline);
  if (gate.is_object()) {
    if (const auto m = gate.find("metrics"); m != gate.end() && m->is_object()) {
      for (const auto& [name, entry] : m->items()) {
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
      }
    }
  }
  return names;
}

const MetricResult* find_metric(const CaseResult& c, const std::string& name) {
  for (const auto& m : c.metrics) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

std::optional<std::span<const double>> gated_values(const MetricResult& m,
                                                    std::string_view statistic) {
  if (statistic == kMedianStatistic) return std::span<const double>(m.samples);
  if (!m.distribution || !distribution_statistic_index(statistic)) return std::nullopt;
  return std::span<const double>(m.distribution->repetition_values(statistic));
}

std::string no_distribution_reason(const std::string& metric, std::string_view statistic,
                                   std::string_view side) {
  return concat("the gate judges the ", statistic, " of ", metric, ", but ", side,
                " holds no per-operation distribution of it (not a per-operation metric, or "
                "written before distributions were recorded)");
}

namespace {

// The gate block that applies: the new result's (its scenario may have been tuned), else the
// baseline's.
const nlohmann::ordered_json& gate_of(const BaselineCase& baseline, const CaseResult& result) {
  return result.gate.is_object() ? result.gate : baseline.gate;
}

std::vector<std::string> gated_metrics(const BaselineCase& baseline, const CaseResult& result) {
  return gated_metric_names(
      baseline.metrics.empty() ? std::string() : baseline.metrics.front().name,
      gate_of(baseline, result));
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

// `b` and `values` are what the gate judges: the metric's samples, or the per-repetition values
// of the statistic `statistic` (statistic_view and gated_values).
MetricComparison compare_metric(const BaselineMetric& b, std::span<const double> values,
                                double result_median, const std::string& statistic,
                                const ThresholdSetting& threshold, const CompareOptions& options) {
  MetricComparison m;
  m.name = b.name;
  m.unit = b.unit;
  m.statistic = statistic;
  m.better = b.better;
  m.timing_class = b.timing_class;
  m.n_runs = b.runs.size();
  m.baseline_median = b.between.center;
  m.result_median = result_median;
  m.n_baseline = 0;
  for (const auto& run : b.runs) m.n_baseline += run.samples.size();
  m.n_result = values.size();
  m.threshold_setting = threshold;
  m.threshold_pct = threshold.pct.value_or(0);
  m.ratio = m.baseline_median != 0 ? result_median / m.baseline_median : 0;
  m.change_pct = m.baseline_median != 0 ? (m.ratio - 1) * 100 : 0;
  if (options.across) {
    m.verdict = Verdict::kAcross;
    return m;
  }
  const RuleJudgement j = judge_metric(b, values, threshold, options.rule());
  m.threshold_pct = j.threshold_pct;
  m.threshold_source = j.gate.source;
  m.detectable_pct = j.gate.detectable_pct;
  m.false_alarm_per_run = j.gate.false_alarm_per_run;
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

ThresholdSetting threshold_setting_for(const MetricGate& gate, double default_pct) {
  ThresholdSetting t;
  t.fixed = gate.fixed;
  if (gate.threshold_pct) {
    t.pct = gate.threshold_pct;
    t.origin = "the scenario's gate block";
  } else if (default_pct > 0) {
    t.pct = default_pct;
    t.origin = "--threshold";
  }
  return t;
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
    const MetricGate entry = metric_gate(gate, name);
    const BaselineMetric* bm = b.metric(name);
    const MetricResult* rm = find_metric(r, name);
    const auto missing = [&](std::string reason) {
      MetricComparison m;
      m.name = name;
      m.statistic = entry.statistic;
      if (bm != nullptr) {
        m.unit = bm->unit;
        m.better = bm->better;
        m.timing_class = bm->timing_class;
      }
      m.verdict = Verdict::kMissing;
      m.reason = std::move(reason);
      c.metrics.push_back(std::move(m));
    };
    if (bm == nullptr || rm == nullptr) {
      missing(std::string("metric absent from the ") + (bm ? "result" : "baseline"));
      continue;
    }
    const ThresholdSetting threshold = threshold_setting_for(entry, options.default_threshold_pct);
    if (entry.median()) {
      c.metrics.push_back(
          compare_metric(*bm, rm->samples, rm->stats.median, entry.statistic, threshold, options));
      continue;
    }
    // A tail statistic: judged on its per-repetition values on both sides, never on the
    // samples instead (a p99 gate that quietly judged medians would pass a tail regression).
    const auto values = gated_values(*rm, entry.statistic);
    if (!values) {
      missing(no_distribution_reason(name, entry.statistic, "the result"));
      continue;
    }
    std::size_t missing_run = 0;
    const std::optional<BaselineMetric> view = statistic_view(*bm, entry.statistic, &missing_run);
    if (!view) {
      missing(no_distribution_reason(
          name, entry.statistic,
          bm->runs.size() <= 1
              ? std::string("the baseline")
              : concat("run ", std::to_string(missing_run + 1), " of the baseline")));
      continue;
    }
    c.metrics.push_back(
        compare_metric(*view, *values, median_of(*values), entry.statistic, threshold, options));
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
