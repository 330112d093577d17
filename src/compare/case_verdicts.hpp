#pragma once

#include <string>
#include <vector>

#include "compare/compare.hpp"

// The verdict rules of one case and of a whole comparison, apart from matching cases by id
// (compare.cpp) and from re-runs (confirmation.cpp).

namespace pathbench {

const MetricResult* find_metric(const CaseResult& c, const std::string& name);

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
