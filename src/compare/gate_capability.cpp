#include "compare/gate_capability.hpp"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <utility>

#include "compare/case_verdicts.hpp"
#include "core/text.hpp"
#include "result/gate_block.hpp"

namespace pathbench {

std::vector<GateCapabilityRow> gate_capability(const Baseline& baseline,
                                               const CompareOptions& options) {
  std::vector<GateCapabilityRow> rows;
  CompareOptions with_machines = options;
  with_machines.run_machines = run_machines_of(baseline);
  const GateRuleOptions rule = with_machines.rule();
  for (const auto& c : baseline.cases) {
    if (c.status != CaseStatus::kOk || c.metrics.empty()) continue;
    for (const auto& name : gated_metric_names(c.metrics.front().name, c.gate)) {
      const BaselineMetric* m = c.metric(name);
      if (m == nullptr) continue;
      const MetricGate entry = metric_gate(c.gate, name);
      std::optional<BaselineMetric> view;
      if (!entry.median()) {
        view = statistic_view(*m, entry.statistic);
        if (!view) continue;  // no distribution in the baseline: compare reports it missing
        m = &*view;
      }
      GateCapabilityRow row;
      row.case_id = c.id;
      row.metric = name;
      row.statistic = entry.statistic;
      row.timing_class = m->timing_class;
      row.better = m->better;
      row.threshold =
          gate_threshold(*m, threshold_setting_for(entry, options.default_threshold_pct), rule);
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

std::string gate_capability_text(const std::vector<GateCapabilityRow>& rows) {
  std::string out;
  char line[1024];
  std::size_t gated = 0, not_gated = 0;
  const auto label = [](const GateCapabilityRow& r) {
    return r.statistic == kMedianStatistic ? r.metric : concat(r.metric, " (", r.statistic, ")");
  };
  std::snprintf(line, sizeof line, "%-10s  %-22s  %6s  %4s  %8s  %-14s  %s\n", "detects", "metric",
                "class", "runs", "spread", "from", "case");
  out += line;
  for (const auto& r : rows) {
    if (!r.threshold.gateable) continue;
    ++gated;
    std::snprintf(line, sizeof line, "%+8.2f %%  %-22s  %6s  %4zu  %6.2f %%  %-14s  %s\n",
                  r.threshold.detectable_pct, label(r).c_str(),
                  std::string(to_string(r.timing_class)).c_str(), r.threshold.n_runs,
                  r.threshold.spread_pct, std::string(to_string(r.threshold.source)).c_str(),
                  r.case_id.c_str());
    out += line;
  }
  // Not gated: one paragraph per reason (most share one: too few runs or machines).
  std::vector<std::pair<std::string, std::vector<const GateCapabilityRow*>>> by_reason;
  for (const auto& r : rows) {
    if (r.threshold.gateable) continue;
    ++not_gated;
    auto it = std::find_if(by_reason.begin(), by_reason.end(), [&](const auto& entry) {
      return entry.first == r.threshold.not_gateable_reason;
    });
    if (it == by_reason.end()) {
      by_reason.push_back({r.threshold.not_gateable_reason, {}});
      it = std::prev(by_reason.end());
    }
    it->second.push_back(&r);
  }
  for (const auto& [reason, group] : by_reason) {
    out += concat("not gated: ", reason, "\n");
    for (const auto* r : group) out += concat("           ", label(*r), "  ", r->case_id, "\n");
  }
  std::snprintf(line, sizeof line,
                "%zu gated metric%s (a change beyond 'detects', in the bad direction, is flagged "
                "and re-run); %zu not gated\n",
                gated, gated == 1 ? "" : "s", not_gated);
  out += line;
  return out;
}

}  // namespace pathbench
