#pragma once

// The words every layer shares: what a metric is, how a case was timed, what it verified. They
// are part of the result format, so they live beside it (result/), below the measurement core
// and the families that produce them.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace pathbench {

enum class Better { kHigher, kLower };
enum class TimingMethod {
  kCudaEventsLatched,  // CUDA events around a block of operations released by a latch kernel
  kHostSteadyClock,    // std::chrono::steady_clock around calls the host performs synchronously
};
std::string_view to_string(Better b);
std::string_view to_string(TimingMethod m);

struct MetricSpec {
  std::string name;  // "bandwidth", "time_per_copy", ...
  std::string unit;  // "GB/s", "s", "s/GiB"
  Better better = Better::kHigher;
  // Timed operation by operation (a request's latency): each sample carries every operation's
  // duration in seconds, and the result keeps their distribution (stats/operation_distribution).
  bool per_operation = false;
};

// The names of `metrics`, in order (for Family::metric_names).
inline std::vector<std::string> metric_names_of(const std::vector<MetricSpec>& metrics) {
  std::vector<std::string> names;
  names.reserve(metrics.size());
  for (const auto& m : metrics) names.push_back(m.name);
  return names;
}

// Something the case verified instead of assuming (placement, page backing, memory kind, copy
// correctness). A check that did not pass fails the case.
struct Check {
  std::string name;
  bool passed = true;
  std::string detail;
  nlohmann::ordered_json value;  // the measured quantity, when there is one
};

// One repetition's values, one per metric in metrics() order. `seconds` is the timed duration
// handed to Google Benchmark as manual time.
struct Sample {
  Sample() = default;
  Sample(double timed_seconds, std::vector<double> metric_values,
         std::vector<std::vector<double>> per_operation = {})
      : seconds(timed_seconds),
        values(std::move(metric_values)),
        operation_seconds(std::move(per_operation)) {}
  double seconds = 0.0;
  std::vector<double> values;
  // For a per_operation metric i, operation_seconds[i] holds this repetition's durations and the
  // core sets values[i] to their median; empty (or shorter) when no metric is per_operation.
  std::vector<std::vector<double>> operation_seconds;
};

}  // namespace pathbench
