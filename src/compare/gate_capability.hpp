#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "compare/baseline.hpp"
#include "compare/compare.hpp"
#include "compare/gate_rule.hpp"

namespace pathbench {

// What a baseline lets the gate detect, metric by metric, before any result is judged: the
// threshold each gated metric gets on this node type and the smallest change it flags, or why
// it is not gated. `baseline promote`, `baseline update` and the README's tables print it, so a
// team knows what its gate is worth before relying on it.
struct GateCapabilityRow {
  std::string case_id, metric, statistic;
  TimingClass timing_class = TimingClass::kHost;
  Better better = Better::kHigher;
  GateThreshold threshold;
};

std::vector<GateCapabilityRow> gate_capability(const Baseline& baseline,
                                               const CompareOptions& options);

// The rows as a table: one line a gated metric ("detects -0.97 %"), the not-gateable ones last
// with their reason, and a count per outcome.
std::string gate_capability_text(const std::vector<GateCapabilityRow>& rows);

}  // namespace pathbench
