#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "compare/baseline.hpp"

namespace pathbench {

// Per-class settings of the rule. Spreads are on the log scale (a relative spread: 0.004 is
// 0.4 %), thresholds in percent of the baseline's center.
struct ClassDefaults {
  // Used when the baseline cannot estimate the between-run spread (fewer than 3 runs).
  double unknown_spread = 0;
  // Never trust a measured spread below this: a handful of runs can agree by chance.
  double min_spread = 0;
  // Without a ceiling from the scenario or --threshold: a metric whose derived threshold is wider
  // than this is reported not gateable rather than gated at a width that catches nothing.
  double ceiling_pct = 0;
  // Run-to-run distributions with heavy or two-humped tails (page faults, pinning, pageable
  // copies): the threshold is also at least the worst baseline run's distance from the center,
  // and the metric is gated only from min_runs_heavy runs on.
  bool heavy_tailed = false;
};

struct GateRuleOptions {
  double alpha = 0.05;  // both tests: between runs (one-sided) and within runs (Mann-Whitney)
  double k = 3.0;       // a move must exceed k x the between-run spread (prediction scale)
  std::size_t min_samples = 5;
  // Below min_samples, judge on the threshold alone instead of answering "insufficient" (which
  // fails a gate): a --quick smoke run still catches a large loss, but proves nothing subtle.
  bool allow_few_samples = false;
  // Runs a heavy-tailed metric's baseline needs before it is gated: with R runs, an unchanged
  // run lands beyond the worst of them with probability 1/(R+1), so the range says something
  // only from about ten runs on; below that the tail is unseen, and the gate says so.
  std::size_t min_runs_heavy = 8;
  // Machines a heavy-tailed metric's baseline runs must come from: host-side costs move between
  // machines of one type by more than between runs of one (H200 VMs: pageable copies 8-27 %,
  // mlock 38 %, where runs of one machine spread 3-8 %; docs/measurements.md, 2026-12-04).
  std::size_t min_machines_heavy = 3;
  // Each baseline run's machine (run_machines_of), aligned with the runs; empty: unknown, and the
  // machine minimum is not applied. From two machines on, a heavy-tailed metric's spread is at
  // least that of the machines' medians.
  std::vector<std::size_t> run_machines;
  ClassDefaults device{0.02, 0.004, 15, false};
  ClassDefaults host{0.10, 0.02, 100, true};
  const ClassDefaults& defaults(TimingClass c) const {
    return c == TimingClass::kDevice ? device : host;
  }
};

// What a scenario's gate block (or --threshold) says of a metric's threshold.
struct ThresholdSetting {
  // Percent. Absent: the class ceiling. A ceiling by default: the gate never applies a wider
  // threshold than this (a metric that needs one is not gateable); with `fixed`, the old fixed
  // rule: this threshold, widened to k x the spread where that is wider.
  std::optional<double> pct;
  bool fixed = false;
  // Where pct came from, for the reports: "gate block", "--threshold".
  std::string origin;
};

// Where the applied threshold came from.
enum class ThresholdSource {
  kDerived,        // k x the baseline's measured between-run spread
  kClassFloor,     // k x the class's minimum spread (the measured one was smaller)
  kUnknownSpread,  // k x the class default: fewer than 3 runs
  kMachines,       // k x the spread of the machines' medians (a baseline of several machines)
  kWorstRun,       // the worst baseline run (heavy-tailed metrics): wider than k x the spread
  kFixed,          // the scenario's fixed threshold
};
std::string_view to_string(ThresholdSource s);

// What the gate can do with one metric of a baseline, before any result is seen: whether it is
// gated, the threshold it applies and the smallest change it detects. `baseline promote` prints
// it, `compare` and `gate` apply it.
struct GateThreshold {
  bool gateable = true;
  std::string not_gateable_reason;  // why not: spread beyond the ceiling, too few runs
  std::size_t n_runs = 0;
  double center = 0;      // median of the run medians, in the metric's unit
  double spread_pct = 0;  // relative between-run spread applied (floored; default if unknown)
  bool spread_known = false;
  bool log_scale = true;              // judged as ratios (false only for metrics with values <= 0)
  std::size_t outlying_runs = 0;      // runs beyond 3 spreads of the center (not in the spread)
  std::size_t machines = 1;           // machines the runs come from, where known
  bool spread_from_machines = false;  // the machines' medians spread more than runs of one
  double degrees_of_freedom = 0;      // of the prediction test (0: the normal)
  // The applied threshold as a relative move on the bad side, in percent (positive), and its
  // origin. detectable_pct is the signed change it stands for: -1.4 for a higher-is-better
  // metric ("detects a loss of 1.4 % or more"), +1.4 for a lower-is-better one.
  double threshold_pct = 0;
  double detectable_pct = 0;
  ThresholdSource source = ThresholdSource::kDerived;
  double ceiling_pct = 0;  // the ceiling in force (0 with a fixed threshold)
  std::string ceiling_origin;
  // Probability that one run of the unchanged node moves beyond the threshold (the model's: t
  // with R-1 degrees of freedom on the prediction scale; heavy-tailed metrics at least 1/(R+1),
  // the chance of landing beyond the worst of R runs). What the confirmation re-runs are sized
  // from.
  double false_alarm_per_run = 0;
  // Internal: the scale of a new run's difference from the center (log units), the threshold
  // in log units, and the center on the judged scale.
  double difference_scale = 0, threshold_log = 0, center_scaled = 0;
};
GateThreshold gate_threshold(const BaselineMetric& baseline, const ThresholdSetting& setting,
                             const GateRuleOptions& options);

enum class RuleOutcome {
  kPass,          // no move beyond the applied threshold, or not in the bad direction
  kRegression,    // all conditions hold in the bad direction
  kImprovement,   // all conditions hold in the good direction
  kNoise,         // moved beyond the threshold but a condition failed (reason says which)
  kUnstable,      // not gateable: spread beyond the ceiling, or too few runs for the metric
  kInsufficient,  // too few samples in the result to test
};

struct RuleJudgement {
  RuleOutcome outcome = RuleOutcome::kPass;
  GateThreshold gate;
  double center = 0;  // baseline median of run medians
  double result_median = 0;
  double change_pct = 0;               // (result - center) / center x 100
  double threshold_pct = 0;            // the setting's percentage (ceiling or fixed), 0 if none
  double spread_pct = 0;               // relative between-run spread used (measured or default)
  bool spread_known = false;           // measured from >= 3 runs (else the class default)
  double effective_threshold_pct = 0;  // the threshold applied (gate.threshold_pct)
  std::optional<double> p_between;     // one-sided, against the run-to-run distribution
  std::optional<double> p_within;      // two-sided Mann-Whitney, result vs pooled baseline samples
  std::string reason;
};

// The decision rule (README, "The rule"): a metric regresses only when its median moved in the
// bad direction beyond the threshold derived from the baseline (k x its between-run spread on the
// log scale, widened for the center's own error; for heavy-tailed metrics also beyond the worst
// baseline run), that move is significant against the run-to-run distribution (a prediction test
// on the run medians), and the result's samples differ from the baseline's (Mann-Whitney U).
RuleJudgement judge_metric(const BaselineMetric& baseline, std::span<const double> result_samples,
                           const ThresholdSetting& setting, const GateRuleOptions& options);

// Confirmation sized to a false-alarm target. A suspect is re-run m times and stands when the
// majority of the 1 + m runs show it. With p the chance that one unchanged run shows it, the
// chance that an unchanged node fails is p x P(Binomial(m, p) >= floor((1 + m) / 2)).
double confirmed_false_alarm(double p_per_run, int reruns);
// The fewest re-runs (2 ... max_reruns) that bring confirmed_false_alarm to `target` or below;
// max_reruns when none does.
int reruns_for_target(double p_per_run, double target, int max_reruns);

}  // namespace pathbench
