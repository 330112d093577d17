#include "bench/overlap.hpp"

#include "measure/gpu_bench.hpp"
#include "scenario/typed_axis.hpp"

namespace pathbench {

namespace {

const EnumAxis<OverlapVariant> kVariant{
    "variant",
    {{"pageable_separate_stream", OverlapVariant::kPageableSeparateStream},
     {"pinned_same_stream", OverlapVariant::kPinnedSameStream},
     {"pinned_event_wait", OverlapVariant::kPinnedEventWait},
     {"pinned_device_sync", OverlapVariant::kPinnedDeviceSync}},
    "how the copy and the kernel are issued"};
const IntegerAxis kKernelUs{"kernel_us", 10, 1000000, "kernel duration, microseconds"};
const IntegerAxis kBytes{"bytes", 4096, std::int64_t{1} << 32, "bytes per copy"};
const IntegerAxis kIterations{"iterations", 2, 10000, "batches per sample (default 8)"};

OverlapRequest decode(const CaseSpec& spec) {
  return {kVariant.decode(spec), static_cast<std::uint64_t>(kKernelUs.decode(spec)) * 1000,
          static_cast<std::uint64_t>(kBytes.decode(spec)),
          static_cast<int>(kIterations.decode_or(spec, 8)), decode_host_placement(spec)};
}

class OverlapFamily final : public DeclaredFamily {
 public:
  OverlapFamily()
      : DeclaredFamily({"overlap",
                        "a compute kernel of controlled duration and an H2D copy of the next "
                        "batch, issued as pageable/separate stream, pinned/same stream, "
                        "pinned/copy stream + event wait (the recommended pattern) and "
                        "pinned/copy stream + device synchronisation; overlap is measured on a "
                        "CUPTI timeline",
                        axis_schemas(kVariant, kKernelUs, kBytes, kIterations, host_node_axis(),
                                     threads_axis()),
                        {"variant", "kernel_us", "bytes"}}) {}
  // Two batches in flight: double-buffered on both sides.
  MemoryNeeds memory_needs(const CaseSpec& spec) const override {
    const std::uint64_t bytes = decode(spec).bytes;
    return {2 * bytes, 2 * bytes};
  }
  Requirements requirements(const CaseSpec& spec) const override {
    Requirements needs;
    needs.gpu();
    require_host_placement(needs, decode(spec).placement);
    return needs;
  }
  bool measures_on_timeline() const override { return true; }
  std::optional<std::vector<std::string>> metric_names(const CaseSpec&) const override {
    return metric_names_of(overlap_metrics());
  }
  std::unique_ptr<CaseBench> prepare(const CaseSpec& spec, const Machine& machine,
                                     int device) const override {
    PATHBENCH_GPU_BENCH(make_overlap_bench(decode(spec), machine, device));
  }
};

}  // namespace

std::vector<MetricSpec> overlap_metrics() {
  return {{"time_per_iteration", "s", Better::kLower},
          {"overlap_fraction", "ratio", Better::kHigher},
          {"ratio_to_ideal", "ratio", Better::kLower}};
}

std::unique_ptr<Family> make_overlap_family() { return std::make_unique<OverlapFamily>(); }

}  // namespace pathbench
