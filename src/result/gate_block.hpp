#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace pathbench {

// A gate block, {"threshold_pct": 5, "metrics": {"round_trip_time": 20, "h2d_latency":
// {"statistic": "p99", "threshold_pct": 50}}}: which metrics are gated, which statistic of each is
// judged, and an optional percentage per metric. The gate derives each metric's threshold from
// the baseline's between-run spread; the percentage is a ceiling on it (a metric that would need
// a wider threshold is reported not gateable), or with "fixed": true the threshold itself (the
// fixed rule: that percentage, widened to k x the spread where that is wider). It is
// written in a scenario, travels inside each case of a result and of a baseline, and is checked
// by this one function wherever it is read, so that no reader takes a typo, a string or a
// negative threshold as "no gate" or "always noise":
//   - an object with only the fields threshold_pct, fixed and metrics;
//   - threshold_pct: a number in (0, kMaxGatePercent];
//   - fixed: true or false (every metric's percentage is a fixed threshold, not a ceiling);
//   - metrics: a non-empty object of metric name -> an entry, which is either
//       a number in (0, kMaxGatePercent] (the metric's threshold; its samples are judged), or
//       an object with the fields statistic, threshold_pct and fixed, at least one of them:
//         statistic: "median" (the samples, the default) or a name of kDistributionStatistics
//                    (p50, p90, p99, p99.9, max: the per-repetition values of that statistic of
//                    a per-operation metric's distribution are judged instead of its samples);
//         threshold_pct: a number in (0, kMaxGatePercent] (absent: the block's threshold_pct);
//         fixed: true or false (absent: the block's fixed).
// Anything else is an InputError(file, pointer of the offending field). (Which metric names a
// scenario's cases record is the scenario reader's own check.)
inline constexpr double kMaxGatePercent = 1000;
void check_gate_block(const nlohmann::ordered_json& gate, const std::string& file,
                      const std::string& pointer);

// The statistic of a gate entry that means "the metric's samples, as without a statistic".
inline constexpr std::string_view kMedianStatistic = "median";
// "median, p50, p90, p99, p99.9, max", for messages.
std::string gate_statistic_names();

// What a gate block checked by check_gate_block (or null: no block) says about one metric.
struct MetricGate {
  bool named = false;  // the block's metrics object names the metric
  std::string statistic{kMedianStatistic};
  std::optional<double> threshold_pct;  // the metric's own percentage, else the block's
  bool fixed = false;                   // the percentage is a fixed threshold, not a ceiling
  bool median() const { return statistic == kMedianStatistic; }
};
MetricGate metric_gate(const nlohmann::ordered_json& gate, const std::string& metric);

}  // namespace pathbench
