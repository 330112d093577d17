#include "compare/gate_rule.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <numbers>
#include <set>
#include <vector>

#include "compare/mann_whitney.hpp"
#include "stats/robust.hpp"

namespace pathbench {

namespace {

std::string format(const char* fmt, auto... args) {
  char buf[480];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

double sample_sd(std::span<const double> v) {
  if (v.size() < 2) return 0;
  double mean = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  return std::sqrt(ss / static_cast<double>(v.size() - 1));
}

// The judged scale: logarithms, so that a two-fold slowdown and a halving of bandwidth weigh the
// same and skewed (log-normal) run-to-run distributions become symmetric; relative to the center
// for the rare metric that can be zero or negative.
struct Scale {
  bool log = true;
  double linear_center = 1;
  double operator()(double x) const { return log ? std::log(x) : x / linear_center; }
};

// Bad-side distance in log units -> the relative change it stands for, in percent.
double bad_side_pct(double distance, bool log, Better better) {
  if (!log) return distance * 100;
  return better == Better::kHigher ? -std::expm1(-distance) * 100 : std::expm1(distance) * 100;
}

// The inverse: a bad-side percentage -> log units.
double bad_side_distance(double pct, bool log, Better better) {
  if (!log) return pct / 100;
  if (better == Better::kHigher) {
    return pct >= 100 ? std::numeric_limits<double>::infinity() : -std::log1p(-pct / 100);
  }
  return std::log1p(pct / 100);
}

const char* class_name(TimingClass c) { return c == TimingClass::kDevice ? "device" : "host"; }

}  // namespace

std::string_view to_string(ThresholdSource s) {
  switch (s) {
    case ThresholdSource::kDerived:
      return "derived";
    case ThresholdSource::kClassFloor:
      return "class_floor";
    case ThresholdSource::kUnknownSpread:
      return "unknown_spread";
    case ThresholdSource::kMachines:
      return "machines";
    case ThresholdSource::kWorstRun:
      return "worst_run";
    case ThresholdSource::kFixed:
      return "fixed";
  }
  return "derived";
}

GateThreshold gate_threshold(const BaselineMetric& baseline, const ThresholdSetting& setting,
                             const GateRuleOptions& options) {
  GateThreshold g;
  const ClassDefaults& defaults = options.defaults(baseline.timing_class);
  const bool higher = baseline.better == Better::kHigher;
  g.n_runs = baseline.runs.size();
  g.center = baseline.between.center;

  std::vector<double> medians;
  medians.reserve(g.n_runs);
  for (const auto& r : baseline.runs) medians.push_back(r.median);
  Scale scale;
  scale.log = !medians.empty() &&
              std::all_of(medians.begin(), medians.end(), [](double x) { return x > 0; });
  scale.linear_center = g.center != 0 ? std::abs(g.center) : 1;
  g.log_scale = scale.log;
  std::vector<double> y;
  y.reserve(medians.size());
  for (double m : medians) y.push_back(scale(m));
  g.center_scaled = median_of(y);

  double spread = defaults.unknown_spread;
  g.spread_known = g.n_runs >= kMinRunsForSpread;
  bool floored = false;
  if (g.spread_known) {
    // The core of the run-to-run distribution: the scaled MAD, and the SD of the runs within
    // three of those of the center (from five runs the MAD alone too often comes out small by
    // chance; the SD of all runs lets one wild run widen the gate for every metric it touched).
    const double mad = scaled_mad(y);
    const double reach = 3 * std::max(mad, defaults.min_spread);
    std::vector<double> ordinary;
    for (double v : y) {
      if (std::abs(v - g.center_scaled) <= reach) ordinary.push_back(v);
    }
    g.outlying_runs = y.size() - ordinary.size();
    const double measured = std::max(mad, sample_sd(ordinary));
    floored = measured < defaults.min_spread;
    spread = std::max(measured, defaults.min_spread);
  }
  g.spread_pct = spread * 100;
  // Heavy-tailed metrics of a baseline that spans machines: runs of one machine agree with each
  // other better than machines do, so the spread is at least the SD of the machines' medians,
  // and the center's error and the test's degrees of freedom are those of the machine count.
  double runs = static_cast<double>(std::max<std::size_t>(g.n_runs, 1));
  const bool heavy_class = defaults.heavy_tailed && !setting.fixed;
  if (heavy_class && g.spread_known && options.run_machines.size() == y.size()) {
    std::map<std::size_t, std::vector<double>> by_machine;
    for (std::size_t i = 0; i < y.size(); ++i) by_machine[options.run_machines[i]].push_back(y[i]);
    if (by_machine.size() >= 2) {
      std::vector<double> machine_medians;
      for (const auto& [m, v] : by_machine) machine_medians.push_back(median_of(v));
      const double between_machines = sample_sd(machine_medians);
      g.machines = by_machine.size();
      if (between_machines > spread) {
        spread = between_machines;
        floored = false;
        g.spread_from_machines = true;
        runs = static_cast<double>(by_machine.size());
        g.spread_pct = spread * 100;
      }
    }
  }
  // A new run differs from the baseline's center by its own between-run deviation plus the
  // center's error; the median of R runs has about pi/2 times the variance of their mean. The
  // bound is on that difference (a prediction bound), not on one run's deviation alone.
  g.difference_scale = spread * std::sqrt(1 + std::numbers::pi / (2 * runs));
  const double derived = options.k * g.difference_scale;
  g.degrees_of_freedom = g.spread_known ? runs - 1 : 0;
  const double df = g.degrees_of_freedom;
  g.source = !g.spread_known          ? ThresholdSource::kUnknownSpread
             : g.spread_from_machines ? ThresholdSource::kMachines
             : floored                ? ThresholdSource::kClassFloor
                                      : ThresholdSource::kDerived;
  g.threshold_log = derived;

  if (setting.fixed && setting.pct) {
    const double fixed = bad_side_distance(*setting.pct, scale.log, baseline.better);
    if (fixed >= derived) {
      g.threshold_log = fixed;
      g.source = ThresholdSource::kFixed;
    }
    if (g.spread_known && g.spread_pct > *setting.pct) {
      g.gateable = false;
      g.not_gateable_reason = format(
          "not gateable on this node type: the run medians of the baseline spread %.2f %% (over "
          "%zu runs), more than the fixed %.1f %% threshold (%s)",
          g.spread_pct, g.n_runs, *setting.pct, setting.origin.c_str());
    }
  } else {
    if (heavy_class && g.spread_known) {
      double worst = 0;
      for (double v : y)
        worst = std::max(worst, higher ? g.center_scaled - v : v - g.center_scaled);
      if (worst > g.threshold_log) {
        g.threshold_log = worst;
        g.source = ThresholdSource::kWorstRun;
      }
    }
    g.ceiling_pct = setting.pct.value_or(defaults.ceiling_pct);
    g.ceiling_origin = setting.pct ? setting.origin
                                   : format("the class ceiling of %s-timed metrics",
                                            class_name(baseline.timing_class));
  }
  g.threshold_pct = bad_side_pct(g.threshold_log, scale.log, baseline.better);
  g.detectable_pct = higher ? -g.threshold_pct : g.threshold_pct;

  double p =
      g.difference_scale > 0 ? student_t_upper_tail(g.threshold_log / g.difference_scale, df) : 0;
  if (heavy_class) p = std::max(p, 1 / (static_cast<double>(g.n_runs) + 1));
  g.false_alarm_per_run = p;

  if (!g.gateable) return g;
  if (heavy_class && g.n_runs < options.min_runs_heavy) {
    g.gateable = false;
    g.not_gateable_reason = format(
        "not gated yet: a host-timed metric's run-to-run distribution can be heavy-tailed or "
        "two-humped, and %zu baseline run%s cannot show its tail (%zu needed; grow the baseline "
        "with pathbench baseline update, or give the metric a fixed threshold)",
        g.n_runs, g.n_runs == 1 ? "" : "s", options.min_runs_heavy);
    return g;
  }
  const std::size_t machines =
      std::set<std::size_t>(options.run_machines.begin(), options.run_machines.end()).size();
  if (heavy_class && machines > 0 && machines < options.min_machines_heavy) {
    g.gateable = false;
    g.not_gateable_reason = format(
        "not gated yet: the baseline's runs come from %zu machine%s, and a host-timed metric "
        "moves between machines of a type by more than between runs of one (%zu needed; add "
        "runs of another machine with pathbench baseline update, or give the metric a fixed "
        "threshold)",
        machines, machines == 1 ? "" : "s", options.min_machines_heavy);
    return g;
  }
  if (!setting.fixed && g.threshold_pct > g.ceiling_pct) {
    g.gateable = false;
    g.not_gateable_reason = format(
        "not gateable on this node type: it needs a threshold of %.2f %% (%s; between-run "
        "spread %.2f %% over %zu runs), wider than the %.1f %% ceiling (%s)",
        g.threshold_pct,
        g.source == ThresholdSource::kWorstRun ? "the worst baseline run"
                                               : "k x the spread, widened for the center",
        g.spread_pct, g.n_runs, g.ceiling_pct, g.ceiling_origin.c_str());
  }
  return g;
}

RuleJudgement judge_metric(const BaselineMetric& baseline, std::span<const double> result_samples,
                           const ThresholdSetting& setting, const GateRuleOptions& options) {
  RuleJudgement j;
  j.gate = gate_threshold(baseline, setting, options);
  const GateThreshold& g = j.gate;
  j.center = g.center;
  j.result_median = median_of(result_samples);
  j.threshold_pct = setting.pct.value_or(g.ceiling_pct);
  j.change_pct = j.center != 0 ? (j.result_median / j.center - 1) * 100 : 0;
  j.spread_known = g.spread_known;
  j.spread_pct = g.spread_pct;
  j.effective_threshold_pct = g.threshold_pct;

  if (!g.gateable) {
    j.outcome = RuleOutcome::kUnstable;
    j.reason = g.not_gateable_reason;
    return j;
  }
  // The signed distance on the judged scale, positive on the bad side.
  const bool higher = baseline.better == Better::kHigher;
  double moved = 0;
  if (g.log_scale) {
    moved = j.result_median > 0 ? std::log(j.result_median) - g.center_scaled
                                : -std::numeric_limits<double>::infinity();
  } else {
    moved = j.result_median / (g.center != 0 ? std::abs(g.center) : 1) - g.center_scaled;
  }
  const double bad = higher ? -moved : moved;
  const bool beyond = std::abs(bad) > g.threshold_log;
  const bool worse = bad > 0;

  std::size_t baseline_min = SIZE_MAX;
  for (const auto& r : baseline.runs) baseline_min = std::min(baseline_min, r.samples.size());
  const bool few =
      result_samples.size() < options.min_samples || baseline_min < options.min_samples;
  if (few && options.allow_few_samples) {
    j.outcome = !beyond ? RuleOutcome::kPass
                        : (worse ? RuleOutcome::kRegression : RuleOutcome::kImprovement);
    j.reason = format(
        "moved %+.2f %% against %.2f %%, judged on the threshold alone (--allow-few-samples: %zu "
        "samples in the result, at least %zu in each baseline run, %zu needed for the tests)",
        j.change_pct, j.effective_threshold_pct, result_samples.size(),
        baseline_min == SIZE_MAX ? std::size_t{0} : baseline_min, options.min_samples);
    return j;
  }
  if (few) {
    j.outcome = RuleOutcome::kInsufficient;
    j.reason = format(
        "too few samples to judge: %zu in the result, at least %zu in each baseline run (%zu "
        "needed on each side; a --quick run is a smoke test, not a gate input; "
        "--allow-few-samples judges it on the threshold alone)",
        result_samples.size(), baseline_min == SIZE_MAX ? std::size_t{0} : baseline_min,
        options.min_samples);
    return j;
  }

  // Prediction test: is the result's median plausible as one more run of the baseline?
  const double z = g.difference_scale > 0 ? std::abs(bad) / g.difference_scale : INFINITY;
  j.p_between = student_t_upper_tail(z, g.degrees_of_freedom);
  const std::vector<double> pooled = baseline.pooled_samples();
  j.p_within = mann_whitney_u(pooled, result_samples).p_value;

  const std::string applied = format(
      "%.2f %%, %s: %s", j.effective_threshold_pct, std::string(to_string(g.source)).c_str(),
      g.source == ThresholdSource::kWorstRun ? "the worst of the baseline's runs"
      : g.source == ThresholdSource::kFixed
          ? "the scenario's fixed threshold"
          : format("%.0f x spread %.2f %%%s x sqrt(1 + pi/2R), R = %zu", options.k, j.spread_pct,
                   g.source == ThresholdSource::kClassFloor      ? " [class floor]"
                   : g.source == ThresholdSource::kUnknownSpread ? " [default: spread unknown]"
                   : g.source == ThresholdSource::kMachines      ? " [between machines]"
                                                                 : "",
                   g.source == ThresholdSource::kMachines ? g.machines : g.n_runs)
                .c_str());
  if (!beyond) {
    j.outcome = RuleOutcome::kPass;
    return j;
  }
  if (*j.p_between >= options.alpha) {
    j.outcome = RuleOutcome::kNoise;
    j.reason = format(
        "moved %+.2f %% but a run of the baseline could land there (p = %.3g >= %.3g against "
        "its run-to-run spread of %.2f %%)",
        j.change_pct, *j.p_between, options.alpha, j.spread_pct);
    return j;
  }
  if (*j.p_within >= options.alpha) {
    j.outcome = RuleOutcome::kNoise;
    j.reason = format(
        "moved %+.2f %% but the samples do not differ significantly (Mann-Whitney p = %.3g >= "
        "%.3g)",
        j.change_pct, *j.p_within, options.alpha);
    return j;
  }
  j.outcome = worse ? RuleOutcome::kRegression : RuleOutcome::kImprovement;
  j.reason = format("moved %+.2f %% (beyond %s; p = %.2g between runs, %.2g within)", j.change_pct,
                    applied.c_str(), *j.p_between, *j.p_within);
  return j;
}

double confirmed_false_alarm(double p, int reruns) {
  if (reruns <= 0) return p;
  // The first run raised it; the majority of 1 + m runs needs floor((1 + m) / 2) of the re-runs.
  const int need = (1 + reruns) / 2;
  double tail = 0;
  for (int i = need; i <= reruns; ++i) {
    const double log_choose =
        std::lgamma(reruns + 1.0) - std::lgamma(i + 1.0) - std::lgamma(reruns - i + 1.0);
    tail += std::exp(log_choose) * std::pow(p, i) * std::pow(1 - p, reruns - i);
  }
  return p * std::min(tail, 1.0);
}

int reruns_for_target(double p, double target, int max_reruns) {
  // From two: with one re-run both runs must show it, which halves the power against a real but
  // bursty loss (a neighbour's copies that some runs dodge) for a false-alarm gain the target
  // rarely needs.
  for (int m = std::min(2, max_reruns); m < max_reruns; ++m) {
    if (confirmed_false_alarm(p, m) <= target) return m;
  }
  return std::max(max_reruns, 1);
}

}  // namespace pathbench
