#pragma once

#include <string>
#include <vector>

#include "compare/compare.hpp"

// What the compare reporters (text, JSON, JUnit) say alike, so that the three never disagree.

namespace pathbench {

// The metric as the reports name it: "bandwidth" when its samples were judged (the median), else
// with the statistic of its distribution that was: "h2d_latency (p99)".
std::string metric_label(const MetricComparison& m);

// "regression (confirmed 3/3)", "flaky (1/3)", or the bare verdict without re-runs.
std::string verdict_label(const MetricComparison& m);

// The metrics too unstable to gate, worst-first as the cases are; their case ids into `ids`.
std::vector<const MetricComparison*> not_gateable(const Comparison& c,
                                                  std::vector<std::string>* ids = nullptr);

}  // namespace pathbench
