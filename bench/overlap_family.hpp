#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "measure/family.hpp"

namespace pathbench {

// The `overlap` family: does an H2D copy of the next batch really run while the current batch's
// kernel computes? Variants of the same loop, judged on a CUPTI timeline, not on API flags.
class OverlapFamilyBase : public Family {
 public:
  std::string_view name() const override { return "overlap"; }
  std::string_view description() const override;
  const std::vector<AxisSchema>& axes() const override;
  std::vector<std::string> required_axes() const override;
  std::optional<std::string> invalid_combination(const CaseSpec& spec) const override;
  MemoryNeeds memory_needs(const CaseSpec& spec) const override;
  Requirements requirements(const CaseSpec& spec) const override;
  bool measures_on_timeline() const override { return true; }
  std::optional<std::vector<std::string>> metric_names(const CaseSpec& spec) const override;
};

// The metrics an overlap case records, in order (the bench's metrics(), bench/overlap.cu).
std::vector<MetricSpec> overlap_metrics();

std::unique_ptr<Family> make_overlap_family();

}  // namespace pathbench
