#include "measure/sample_builder.hpp"

#include <stdexcept>
#include <utility>

#include "core/text.hpp"

namespace pathbench {

SampleBuilder::SampleBuilder(std::vector<MetricSpec> metrics)
    : metrics_(std::move(metrics)), set_(metrics_.size(), false) {
  sample_.values.assign(metrics_.size(), 0.0);
  sample_.operation_seconds.resize(metrics_.size());
}

std::size_t SampleBuilder::index(std::string_view name, bool per_operation) const {
  for (std::size_t i = 0; i < metrics_.size(); ++i) {
    if (metrics_[i].name != name) continue;
    if (metrics_[i].per_operation != per_operation) {
      throw std::logic_error(concat("metric ", name,
                                    per_operation ? " is not per-operation: give it a value"
                                                  : " is per-operation: give it durations"));
    }
    if (set_[i]) throw std::logic_error(concat("metric ", name, " set twice in one sample"));
    return i;
  }
  throw std::logic_error(concat("the case has no metric ", name));
}

SampleBuilder& SampleBuilder::value(std::string_view name, double v) {
  const std::size_t i = index(name, false);
  sample_.values[i] = v;
  set_[i] = true;
  return *this;
}

SampleBuilder& SampleBuilder::operations(std::string_view name, std::vector<double> seconds) {
  const std::size_t i = index(name, true);
  sample_.operation_seconds[i] = std::move(seconds);
  set_[i] = true;
  return *this;
}

Sample SampleBuilder::build(double seconds) {
  for (std::size_t i = 0; i < metrics_.size(); ++i) {
    if (!set_[i]) throw std::logic_error(concat("metric ", metrics_[i].name, " was not set"));
  }
  sample_.seconds = seconds;
  set_.assign(metrics_.size(), false);
  return std::exchange(sample_, Sample{0.0, std::vector<double>(metrics_.size(), 0.0),
                                       std::vector<std::vector<double>>(metrics_.size())});
}

}  // namespace pathbench
