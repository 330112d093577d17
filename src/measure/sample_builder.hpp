#pragma once

#include <string_view>
#include <vector>

#include "result/vocabulary.hpp"

namespace pathbench {

// Fills one Sample by metric name, in the order of the case's metrics: a family whose metric
// list depends on the case need not track indices. A per-operation metric takes its operations'
// durations (the core sets its value to their median once the sample is verified), any other
// metric a value. Naming an unknown metric, the wrong kind, or leaving one unset is a
// std::logic_error naming it: a programming error of the family, caught by its first run.
class SampleBuilder {
 public:
  explicit SampleBuilder(std::vector<MetricSpec> metrics);
  SampleBuilder& value(std::string_view name, double v);
  SampleBuilder& operations(std::string_view name, std::vector<double> seconds);
  Sample build(double seconds);

 private:
  std::size_t index(std::string_view name, bool per_operation) const;
  std::vector<MetricSpec> metrics_;
  std::vector<bool> set_;
  Sample sample_;
};

}  // namespace pathbench
