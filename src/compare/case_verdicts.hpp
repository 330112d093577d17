#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "compare/compare.hpp"

// The verdict rules of one case and of a whole comparison, apart from matching cases by id
// (compare.cpp) and from re-runs (confirmation.cpp).

namespace pathbench {

const MetricResult* find_metric(const CaseResult& c, const std::string& name);

// The metrics a gate judges: the headline metric (a case's first) always, then those the gate
// block names, in its order.
std::vector<std::string> gated_metric_names(const std::string& headline,
                                            const nlohmann::ordered_json& gate);

// What the gate judges of a result's metric for a gate entry's statistic: its samples for
// "median", else the per-repetition values of that statistic of its distribution; nothing when
// it has no distribution.
std::optional<std::span<const double>> gated_values(const MetricResult& m,
                                                    std::string_view statistic);
// Why a gate on `statistic` of `metric` cannot be judged: `side` ("the result", "run 2 of the
// baseline") holds no distribution of it.
std::string no_distribution_reason(const std::string& metric, std::string_view statistic,
                                   std::string_view side);

// What a gate entry and the --threshold default say of a metric's threshold (a ceiling, or
// fixed), with where it came from.
ThresholdSetting threshold_setting_for(const MetricGate& gate, double default_pct);

// The case's verdict from its metrics' (the worst one), or across when comparing node types.
void settle_case_verdict(CaseComparison& c, bool across);

// One baseline case against the same case of the result: status rules first (failed, skipped,
// missing), then each gated metric through the between-run rule (compare/gate_rule.hpp).
CaseComparison compare_case(const BaselineCase& b, const CaseResult& r,
                            const CompareOptions& options);

// Worst verdict first, then the largest change.
void sort_worst_first(std::vector<CaseComparison>& cases);

// 0 pass, 1 a regression, failure or floor not met, 2 incomplete, incomparable or noisy.
int exit_code_of(const Comparison& c);

}  // namespace pathbench
