#pragma once

#include <cstddef>
#include <span>

#include <nlohmann/json.hpp>

namespace pathbench {

// Statistics of one metric's samples. Percentiles interpolate linearly between order statistics
// (NumPy's default), stddev is the sample standard deviation (n-1), cv = stddev / mean.
struct Summary {
  std::size_t n = 0;
  double median = 0, min = 0, max = 0, mean = 0, p10 = 0, p90 = 0, stddev = 0, cv = 0;
};

Summary summarize(std::span<const double> samples);
double percentile(std::span<const double> sorted_samples, double q);  // q in [0, 1]

void to_json(nlohmann::ordered_json& j, const Summary& s);
void from_json(const nlohmann::json& j, Summary& s);

}  // namespace pathbench
