#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compare/baseline.hpp"
#include "compare/context_changes.hpp"
#include "compare/floors.hpp"
#include "compare/gate_rule.hpp"
#include "result/gate_block.hpp"
#include "result/result.hpp"
#include "result/run_context.hpp"

namespace pathbench {

enum class Verdict {
  kPass,
  kRegression,
  kImprovement,
  kNoise,
  kMissing,
  kNew,
  kSkipped,
  kFailed,
  kAcross,
  kUnstable,      // the baseline's between-run spread exceeds the threshold: not gateable
  kFlaky,         // a regression that did not reproduce in the majority of the re-runs
  kInsufficient,  // "insufficient_samples": too few samples to judge (a --quick result)
};
std::string_view to_string(Verdict v);
// Worst first: the order the table and the gate read verdicts in.
int severity(Verdict v);

struct CompareOptions {
  double alpha = 0.05;
  // The ceiling (percent) for metrics whose gate block sets none; 0: the class ceilings
  // (GateRuleOptions). Thresholds themselves are derived from the baseline (README "The rule").
  double default_threshold_pct = 0;
  std::size_t min_runs_heavy = 8;         // GateRuleOptions::min_runs_heavy
  std::size_t min_machines_heavy = 3;     // GateRuleOptions::min_machines_heavy
  std::vector<std::size_t> run_machines;  // set from the baseline by compare_results
  std::size_t min_samples = 5;     // below this on either side no statistical verdict is given
  bool across = false;             // compare different node types: ratios, no verdicts
  bool allow_noisy = false;        // judge results taken under noise instead of refusing (exit 2)
  bool allow_few_samples = false;  // judge too few samples on the threshold alone (GateRuleOptions)
  double k = 3.0;                  // a move must exceed k x the baseline's between-run spread
  FloorOptions floors;
  GateRuleOptions rule() const;
};

// Re-runs of a suspect (pathbench gate): how many of the runs, the original included, showed it.
struct Confirmation {
  std::size_t reproduced = 0, runs = 0;
  std::vector<double> rerun_medians;
  std::vector<double> rerun_changes_pct;
  std::vector<std::string> notes;  // a re-run that failed or lacked the case
  bool confirmed() const { return 2 * reproduced > runs; }
};

struct MetricComparison {
  std::string name, unit;
  // What was judged (result/gate_block.hpp): "median", the metric's samples, or a statistic of its
  // per-operation distribution ("p99"), judged on its per-repetition values; the medians, change,
  // spread and sample counts below are then that statistic's.
  std::string statistic{kMedianStatistic};
  Better better = Better::kHigher;
  Verdict verdict = Verdict::kPass;
  double baseline_median = 0, result_median = 0;
  double change_pct = 0;     // (result - baseline) / baseline x 100
  double ratio = 0;          // result / baseline
  double threshold_pct = 0;  // the ceiling (or the fixed threshold) in force
  ThresholdSetting threshold_setting;
  // The threshold applied (effective_threshold_pct below) came from: derived, class_floor,
  // unknown_spread, worst_run or fixed; the signed change it stands for (-1.4: a loss of 1.4 %
  // or more is flagged); one unchanged run's chance to cross it (sizes the confirmation).
  ThresholdSource threshold_source = ThresholdSource::kDerived;
  double detectable_pct = 0;
  double false_alarm_per_run = 0;
  std::optional<double> p_value;  // within runs: Mann-Whitney U, result vs the baseline's samples
  std::size_t n_baseline = 0, n_result = 0;
  std::string reason;
  // Between runs (README "The rule"): the baseline's run count, the relative spread of its run
  // medians (measured, or the class default when unknown), the threshold actually applied and
  // the one-sided p-value of the result's median against the run-to-run distribution.
  TimingClass timing_class = TimingClass::kHost;
  std::size_t n_runs = 0;
  double spread_pct = 0;
  bool spread_known = false;
  double effective_threshold_pct = 0;
  std::optional<double> p_between;
  std::optional<Confirmation> confirmation;
};

struct CaseComparison {
  std::string id, family;
  Verdict verdict = Verdict::kPass;
  std::string reason;
  std::vector<MetricComparison> metrics;
};

struct ResultRef {
  std::string file, node_type, topology_fingerprint, hostname, start_time;
  std::size_t runs = 1;  // a baseline's run count
  // Why the run did not finish (a signal, a kill, a full disk); empty for a complete one. Its
  // missing cases cannot be judged, so the comparison is incomplete (exit 2 unless it fails).
  std::string incomplete;
};

struct Comparison {
  bool across = false;
  bool floors_only = false;
  ResultRef baseline, result;
  double alpha = 0, default_threshold_pct = 0;
  std::vector<CaseComparison> cases;  // worst first
  std::vector<FloorCheck> floors;
  std::vector<std::string> incomparable;  // why the two results cannot be gated against each other
  // What changed in the node's context since the baseline (driver, BIOS, kernel, link ...).
  std::vector<ContextChange> changes;
  // Why the result or a baseline run was taken under noise; refused (exit 2) unless allow_noisy.
  std::vector<std::string> noise;
  bool allow_noisy = false;
  double k = 0;
  int exit_code = 0;
};

// Fields that differ between two results' node identities (node type and the topology facts
// behind the fingerprint), one human line each. Empty when they are the same kind of node.
// The Result overload reads both contexts as RunContext (InputError for a bad field).
std::vector<std::string> identity_differences(const Result& baseline, const Result& result);
std::vector<std::string> identity_differences(const RunContext& baseline_context,
                                              const RunContext& result_context);

// Matches cases by id and gives each a verdict (see README "Gating CI"). Incomparable results
// (different node type or fingerprint, without options.across) get no case verdicts and exit 2.
Comparison compare_results(const Baseline& baseline, const std::string& baseline_file,
                           const Result& result, const std::string& result_file,
                           const CompareOptions& options);
// A single result as the baseline (one run: the between-run spread is unknown).
Comparison compare_results(const Result& baseline, const std::string& baseline_file,
                           const Result& result, const std::string& result_file,
                           const CompareOptions& options);

// Folds re-runs of the suspects into the verdicts: a regression stays one only when the re-runs
// reproduce it in the majority of all runs (the original included), else it becomes flaky.
// Re-evaluates case verdicts and the exit code.
void apply_confirmation(Comparison& c, const Baseline& baseline, const std::vector<Result>& reruns,
                        const CompareOptions& options);
// Ids of cases with a regression verdict: what pathbench gate re-runs.
std::vector<std::string> suspect_case_ids(const Comparison& c);

// Floors alone, for a result without a baseline.
Comparison check_result_floors(const Result& result, const std::string& result_file,
                               const CompareOptions& options);

// The reporters (table, JSON, JUnit) are in export/compare_report.hpp.

}  // namespace pathbench
