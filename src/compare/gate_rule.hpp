#pragma once

#include <optional>
#include <span>
#include <string>

#include "compare/baseline.hpp"

namespace pathbench {

// Per-class settings of the rule. The spread of a class is relative to the baseline's center.
struct ClassDefaults {
  // Used when the baseline cannot estimate the between-run spread (fewer than 3 runs).
  double unknown_spread = 0;
  // Never trust a measured spread below this: five runs can agree by chance.
  double min_spread = 0;
};

struct GateRuleOptions {
  double alpha = 0.05;  // both tests: between runs (one-sided) and within runs (Mann-Whitney)
  double k = 3.0;       // a move must exceed k x the between-run spread
  std::size_t min_samples = 5;
  // Below min_samples, judge on the threshold alone instead of answering "insufficient" (which
  // fails a gate): a --quick smoke run still catches a large loss, but proves nothing subtle.
  bool allow_few_samples = false;
  ClassDefaults device{0.02, 0.005};
  ClassDefaults host{0.10, 0.02};
  const ClassDefaults& defaults(TimingClass c) const {
    return c == TimingClass::kDevice ? device : host;
  }
};

enum class RuleOutcome {
  kPass,          // no move beyond the effective threshold, or not in the bad direction
  kRegression,    // all conditions hold in the bad direction
  kImprovement,   // all conditions hold in the good direction
  kNoise,         // moved beyond the threshold but a condition failed (reason says which)
  kUnstable,      // the baseline's between-run spread exceeds the threshold: not gateable
  kInsufficient,  // too few samples in the result to test
};

struct RuleJudgement {
  RuleOutcome outcome = RuleOutcome::kPass;
  double center = 0;  // baseline median of run medians
  double result_median = 0;
  double change_pct = 0;               // (result - center) / center x 100
  double threshold_pct = 0;            // the scenario's threshold
  double spread_pct = 0;               // relative between-run spread used (measured or default)
  bool spread_known = false;           // measured from >= 3 runs (else the class default)
  double effective_threshold_pct = 0;  // max(threshold, k x spread)
  std::optional<double> p_between;     // one-sided, against the run-to-run distribution
  std::optional<double> p_within;      // two-sided Mann-Whitney, result vs pooled baseline samples
  std::string reason;
};

// The decision rule (README, "The rule"): a metric regresses only when its median moved in the
// bad direction by more than max(threshold, k x between-run spread), that move is significant
// against the baseline's run-to-run distribution (a prediction test on the run medians), and the
// result's samples differ from the baseline's (Mann-Whitney U). A metric whose measured
// between-run spread exceeds its threshold is unstable: it cannot be gated on this node type.
RuleJudgement judge_metric(const BaselineMetric& baseline, std::span<const double> result_samples,
                           double threshold_pct, const GateRuleOptions& options);

}  // namespace pathbench
