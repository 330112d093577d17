#pragma once

// The per-operation latency of a metric that times operations one by one (a request's copy, a
// serving step), as the result keeps it: exact percentiles over every operation of every
// repetition, the same percentiles per repetition (the gate judges a tail percentile against its
// between-run variation, so it needs one value per repetition, as for medians), and a mergeable
// LatencyHistogram for exports, plots and fleet views.
//
// Percentiles interpolate linearly between order statistics, as Summary's do, so an exact p50
// over one repetition equals that repetition's median.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "stats/latency_histogram.hpp"

namespace pathbench {

struct DistributionStatistic {
  std::string_view name;  // as written in results and gate blocks
  double quantile;
};
inline constexpr std::array<DistributionStatistic, 5> kDistributionStatistics = {{
    {"p50", 0.50},
    {"p90", 0.90},
    {"p99", 0.99},
    {"p99.9", 0.999},
    {"max", 1.0},
}};
// Index into kDistributionStatistics, or nothing for a name that is not one of them.
std::optional<std::size_t> distribution_statistic_index(std::string_view name);
// "p50, p90, p99, p99.9, max", for messages.
std::string distribution_statistic_names();

struct OperationDistribution {
  std::uint64_t operations = 0;  // over every repetition
  double mean = 0;
  std::array<double, kDistributionStatistics.size()> overall{};  // exact, over every operation
  // per_repetition[k][r]: statistic k of repetition r's operations.
  std::array<std::vector<double>, kDistributionStatistics.size()> per_repetition;
  LatencyHistogram histogram;

  double statistic(std::string_view name) const;  // std::invalid_argument for an unknown name
  const std::vector<double>& repetition_values(std::string_view name) const;
  std::size_t repetitions() const { return per_repetition[0].size(); }
};

// {"operations", "mean", "p50", "p90", "p99", "p99.9", "max", "per_repetition": {"p50": [...],
//  ...}, "histogram": LatencyHistogram::to_json()}
nlohmann::ordered_json to_json(const OperationDistribution& d);
// Reads what to_json writes, checking every field and that the parts agree (every per-repetition
// list equally long and non-empty, operations == the histogram's count, percentiles ordered).
// Throws std::invalid_argument "WHERE/FIELD: what is wrong", as LatencyHistogram::from_json.
OperationDistribution distribution_from_json(const nlohmann::ordered_json& j,
                                             const std::string& where);

// Collects the repetitions of one metric while a case runs; keeps every duration (8 bytes an
// operation) for the exact percentiles.
class DistributionRecorder {
 public:
  // One repetition's durations, seconds: at least one, each finite and >= 0, else
  // std::invalid_argument and nothing is recorded. Returns the repetition's median, the metric's
  // sample for that repetition.
  double add_repetition(std::vector<double> seconds);
  std::size_t repetitions() const { return per_repetition_[0].size(); }
  // Empty until a repetition was added.
  std::optional<OperationDistribution> finish() const;

 private:
  std::vector<double> all_;
  std::array<std::vector<double>, kDistributionStatistics.size()> per_repetition_;
  LatencyHistogram histogram_;
};

}  // namespace pathbench
