#include <algorithm>
#include <optional>
#include <span>
#include <string_view>
#include <unordered_map>

#include "compare/case_verdicts.hpp"
#include "compare/compare.hpp"

// pathbench gate's re-runs of the suspects, folded into the verdicts.

namespace pathbench {

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
      // The re-runs are judged on what the original was: the same statistic, against the same
      // view of the baseline.
      std::optional<BaselineMetric> view;
      if (m.statistic != kMedianStatistic) {
        view = statistic_view(*bm, m.statistic);
        if (!view) continue;  // cannot happen: the original verdict was judged on it
        bm = &*view;
      }
      Confirmation conf;
      conf.runs = 1 + reruns.size();
      conf.reproduced = 1;  // the run that raised it
      for (std::size_t i = 0; i < reruns.size(); ++i) {
        const auto hit = rerun_by_id[i].find(k.id);
        const CaseResult* rc = hit == rerun_by_id[i].end() ? nullptr : hit->second;
        const MetricResult* rm =
            rc != nullptr && rc->status == CaseStatus::kOk ? find_metric(*rc, m.name) : nullptr;
        const auto values = rm != nullptr ? gated_values(*rm, m.statistic)
                                          : std::optional<std::span<const double>>();
        if (rm != nullptr && !values) {
          // A re-run without the distribution cannot show the tail again: as a re-run that
          // could not measure the case, it counts against the node.
          ++conf.reproduced;
          conf.notes.push_back("re-run " + std::to_string(i + 1) + ": " +
                               no_distribution_reason(m.name, m.statistic, "the re-run"));
          continue;
        }
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
        const RuleJudgement j = judge_metric(*bm, *values, m.threshold_setting, rule);
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

}  // namespace pathbench
