#include "compare/gate_rule.hpp"

#include <cmath>
#include <cstdio>
#include <numbers>

#include "compare/mann_whitney.hpp"
#include "stats/robust.hpp"

namespace pathbench {

namespace {

std::string format(const char* fmt, auto... args) {
  char buf[320];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

}  // namespace

RuleJudgement judge_metric(const BaselineMetric& baseline, std::span<const double> result_samples,
                           double threshold_pct, const GateRuleOptions& options) {
  RuleJudgement j;
  const BetweenRun& between = baseline.between;
  const ClassDefaults& defaults = options.defaults(baseline.timing_class);
  j.center = between.center;
  j.result_median = median_of(result_samples);
  j.threshold_pct = threshold_pct;
  j.change_pct = j.center != 0 ? (j.result_median / j.center - 1) * 100 : 0;
  j.spread_known = between.known;
  j.spread_pct = between.known ? std::max(between.spread_pct, defaults.min_spread * 100)
                               : defaults.unknown_spread * 100;
  // A new run differs from the baseline's center by its own between-run deviation plus the
  // center's error; the median of R runs has about pi/2 times the variance of their mean. The
  // k-sigma bound is on that difference (a prediction bound), not on one run's deviation alone.
  const double runs = static_cast<double>(std::max<std::size_t>(between.n_runs, 1));
  const double difference_scale = j.spread_pct * std::sqrt(1 + std::numbers::pi / (2 * runs));
  j.effective_threshold_pct = std::max(threshold_pct, options.k * difference_scale);

  if (between.known && between.spread_pct > threshold_pct) {
    j.outcome = RuleOutcome::kUnstable;
    j.reason = format(
        "not gateable on this node type: the run medians of the baseline spread %.2f %% (over "
        "%zu runs), more than the %.1f %% threshold",
        between.spread_pct, between.n_runs, threshold_pct);
    return j;
  }
  std::size_t baseline_min = SIZE_MAX;
  for (const auto& r : baseline.runs) baseline_min = std::min(baseline_min, r.samples.size());
  const bool few =
      result_samples.size() < options.min_samples || baseline_min < options.min_samples;
  if (few && options.allow_few_samples) {
    const bool beyond = std::abs(j.change_pct) > j.effective_threshold_pct;
    const bool worse = baseline.better == Better::kHigher ? j.change_pct < 0 : j.change_pct > 0;
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
  const double z = difference_scale > 0 ? std::abs(j.change_pct) / difference_scale : INFINITY;
  j.p_between = student_t_upper_tail(z, between.known ? runs - 1 : 0);
  const std::vector<double> pooled = baseline.pooled_samples();
  j.p_within = mann_whitney_u(pooled, result_samples).p_value;

  const bool beyond = std::abs(j.change_pct) > j.effective_threshold_pct;
  if (!beyond) {
    j.outcome = RuleOutcome::kPass;
    if (std::abs(j.change_pct) > threshold_pct) {
      j.reason = format(
          "moved %+.2f %%, within %.0f x the between-run spread (%.2f %%%s, widened for a "
          "%.0f-run center: %.2f %%)",
          j.change_pct, options.k, j.spread_pct,
          j.spread_known ? "" : ", a default: the spread is unknown", runs,
          j.effective_threshold_pct);
    }
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
  const bool worse = baseline.better == Better::kHigher ? j.change_pct < 0 : j.change_pct > 0;
  j.outcome = worse ? RuleOutcome::kRegression : RuleOutcome::kImprovement;
  j.reason = format(
      "moved %+.2f %% (beyond max(threshold %.1f %%, %.0f x spread %.2f %%%s x sqrt(1 + "
      "pi/2R)) = %.2f %%; p = %.2g between runs, %.2g within)",
      j.change_pct, threshold_pct, options.k, j.spread_pct,
      j.spread_known ? "" : " [default: spread unknown]", j.effective_threshold_pct, *j.p_between,
      *j.p_within);
  return j;
}

}  // namespace pathbench
