#include "export/compare_report_parts.hpp"

#include "core/text.hpp"

namespace pathbench {

std::string metric_label(const MetricComparison& m) {
  if (m.statistic.empty() || m.statistic == kMedianStatistic) return m.name;
  return concat(m.name, " (", m.statistic, ")");
}

std::string verdict_label(const MetricComparison& m) {
  std::string label(to_string(m.verdict));
  if (m.confirmation) {
    label += m.verdict == Verdict::kRegression ? " (confirmed " : " (";
    label += std::to_string(m.confirmation->reproduced) + "/" +
             std::to_string(m.confirmation->runs) + ")";
  }
  return label;
}

std::vector<const MetricComparison*> not_gateable(const Comparison& c,
                                                  std::vector<std::string>* ids) {
  std::vector<const MetricComparison*> out;
  for (const auto& k : c.cases) {
    for (const auto& m : k.metrics) {
      if (m.verdict != Verdict::kUnstable) continue;
      out.push_back(&m);
      if (ids) ids->push_back(k.id);
    }
  }
  return out;
}

}  // namespace pathbench
