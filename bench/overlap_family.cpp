#include "bench/overlap_family.hpp"

namespace pathbench {

std::string_view OverlapFamilyBase::description() const {
  return "a compute kernel of controlled duration and an H2D copy of the next batch, issued as "
         "pageable/separate stream, pinned/same stream, pinned/copy stream + event wait (the "
         "recommended pattern) and pinned/copy stream + device synchronisation; overlap is "
         "measured on a CUPTI timeline";
}

const std::vector<AxisSchema>& OverlapFamilyBase::axes() const {
  static const std::vector<AxisSchema> kAxes = {
      {"variant",
       AxisSchema::Kind::kString,
       {"pageable_separate_stream", "pinned_same_stream", "pinned_event_wait",
        "pinned_device_sync"},
       0,
       0,
       "how the copy and the kernel are issued"},
      {"kernel_us", AxisSchema::Kind::kInteger, {}, 10, 1000000, "kernel duration, microseconds"},
      {"bytes", AxisSchema::Kind::kInteger, {}, 4096, std::int64_t{1} << 32, "bytes per copy"},
      {"iterations", AxisSchema::Kind::kInteger, {}, 2, 10000, "batches per sample (default 8)"},
  };
  return kAxes;
}

std::vector<std::string> OverlapFamilyBase::required_axes() const {
  return {"variant", "kernel_us", "bytes"};
}

std::optional<std::string> OverlapFamilyBase::invalid_combination(const CaseSpec&) const {
  return std::nullopt;
}

std::vector<MetricSpec> overlap_metrics() {
  return {{"time_per_iteration", "s", Better::kLower},
          {"overlap_fraction", "ratio", Better::kHigher},
          {"ratio_to_ideal", "ratio", Better::kLower}};
}

std::optional<std::vector<std::string>> OverlapFamilyBase::metric_names(const CaseSpec&) const {
  return metric_names_of(overlap_metrics());
}

MemoryNeeds OverlapFamilyBase::memory_needs(const CaseSpec& spec) const {
  // Two batches in flight: double-buffered on both sides.
  const auto bytes = static_cast<std::uint64_t>(spec.integer("bytes"));
  return {2 * bytes, 2 * bytes};
}

Requirements OverlapFamilyBase::requirements(const CaseSpec&) const {
  return std::move(Requirements().gpu());
}

}  // namespace pathbench
