#include "compare/compare.hpp"

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
  r.min_runs_heavy = min_runs_heavy;
  r.min_machines_heavy = min_machines_heavy;
  r.run_machines = run_machines;
  return r;
}

}  // namespace pathbench
