#include "bench/unified_memory.hpp"

#include <algorithm>

#include "core/units.hpp"
#include "measure/gpu_bench.hpp"
#include "scenario/typed_axis.hpp"
#include "stats/robust.hpp"

namespace pathbench {

namespace {

using Method = UnifiedMemoryRequest::Method;

constexpr std::uint64_t kPageBytes = 4096;  // migrated at the least per touched address (x86-64)

const EnumAxis<Method> kMethod{
    "method",
    {{"fault", Method::kFault},
     {"prefetch", Method::kPrefetch},
     {"advise_preferred_gpu", Method::kAdvisePreferredGpu},
     {"advise_accessed_by", Method::kAdviseAccessedBy},
     {"gpu_to_cpu", Method::kGpuToCpu}},
    "fault: the GPU's first touch migrates host pages on demand; prefetch: cudaMemPrefetchAsync "
    "to the GPU before the same kernel (timed together); advise_preferred_gpu / "
    "advise_accessed_by: cudaMemAdvise(SetPreferredLocation / SetAccessedBy, GPU) before the "
    "kernel; gpu_to_cpu: pages on the GPU, the host touches them"};
const IntegerAxis kStride{"stride", std::int64_t{4} << 10, std::int64_t{2} << 20,
                          "bytes between touched addresses, where one byte is read and written (a "
                          "power of two, 4 KiB .. 2 MiB)"};
const IntegerAxis kBytes{"bytes", std::int64_t{1} << 20, std::int64_t{4} << 30,
                         "size of the managed buffer (1 MiB .. 4 GiB)"};

class UnifiedMemoryFamily final : public DeclaredFamily {
 public:
  UnifiedMemoryFamily()
      : DeclaredFamily({"unified_memory",
                        "Unified Memory: fault-driven migration of host-initialised managed "
                        "buffers over strides vs cudaMemPrefetchAsync vs cudaMemAdvise, and "
                        "GPU-to-CPU faults back; fault groups and migrated bytes from CUPTI "
                        "unified-memory counters",
                        axis_schemas(kMethod, kStride, kBytes),
                        {"method", "stride", "bytes"}}) {}

  std::optional<std::string> invalid_combination(const CaseSpec& spec) const override {
    const UnifiedMemoryRequest r = decode_unified_memory_request(spec);
    if (r.stride == 0 || (r.stride & (r.stride - 1)) != 0) {
      return "stride " + std::to_string(r.stride) +
             " is not a power of two (use 4KiB, 64KiB, 2MiB, ...)";
    }
    if (r.stride > r.bytes) {
      return "stride " + format_bytes(r.stride) + " is larger than the buffer (" +
             format_bytes(r.bytes) + "): a pass would touch one address";
    }
    return std::nullopt;
  }

  // One managed buffer: on the host between passes, on the GPU after a pass.
  MemoryNeeds memory_needs(const CaseSpec& spec) const override {
    const std::uint64_t bytes = static_cast<std::uint64_t>(kBytes.decode(spec));
    return {bytes, bytes};
  }

  Requirements requirements(const CaseSpec&) const override { return Requirements().gpu(); }

  std::optional<std::vector<std::string>> metric_names(const CaseSpec&) const override {
    return metric_names_of(unified_memory_metrics());
  }

  std::unique_ptr<CaseBench> prepare(const CaseSpec& spec, const Machine& machine,
                                     int device) const override {
    PATHBENCH_GPU_BENCH(
        make_unified_memory_bench(decode_unified_memory_request(spec), machine, device));
  }
};

}  // namespace

std::uint64_t UnifiedMemoryRequest::estimated_migrated_bytes() const {
  if (method == Method::kPrefetch) return bytes;
  return std::min(bytes, touches() * std::min(stride, kPageBytes));
}

UnifiedMemoryRequest decode_unified_memory_request(const CaseSpec& spec) {
  UnifiedMemoryRequest r;
  r.method = kMethod.decode(spec);
  r.method_name = kMethod.name_of(r.method);
  r.stride = static_cast<std::uint64_t>(kStride.decode(spec));
  r.bytes = static_cast<std::uint64_t>(kBytes.decode(spec));
  return r;
}

std::vector<MetricSpec> unified_memory_metrics() {
  return {{"time", "s", Better::kLower},
          {"migration_throughput", "GB/s", Better::kHigher},
          {"time_per_mib", "s/MiB", Better::kLower}};
}

std::optional<std::string> unified_memory_device_skip_reason(const UnifiedMemoryRequest& request,
                                                             const ManagedMemorySupport& support) {
  if (request.method == Method::kGpuToCpu && support.direct_managed_access_from_host) {
    return "the host reads and writes managed memory on GPU " + std::to_string(support.device) +
           " directly, without migration (cudaDevAttrDirectManagedMemAccessFromHost = 1, a "
           "coherent CPU-GPU link): there are no CPU faults back to measure";
  }
  return demand_paging_gap(support, request.bytes, kUnifiedMemoryDeviceHeadroom);
}

MigrationExpectation unified_memory_expectation(const UnifiedMemoryRequest& r) {
  const bool prefetch = r.method == Method::kPrefetch, back = r.method == Method::kGpuToCpu;
  return {.to_host = back,
          .least_bytes = r.estimated_migrated_bytes(),
          .least_what = prefetch ? "the whole buffer" : "the page of every touched address",
          .must_migrate = prefetch || back || r.method == Method::kFault,  // advice may map
          .by_faults = back || r.method == Method::kFault};
}

std::vector<Check> unified_memory_pass_checks(const UnifiedMemoryRequest& r,
                                              const UnifiedMemoryPasses& passes,
                                              const std::string& counters_unavailable,
                                              bool latched) {
  std::vector<Check> out{unified_memory_counter_check(unified_memory_expectation(r), passes.samples,
                                                      counters_unavailable)};
  std::size_t counted = 0, shown = 0, uncounted = 0, back = 0;
  for (const auto& p : passes.samples) {
    if (!p.counts) continue;
    ++counted;
    shown += unified_memory_fault_driven(*p.counts) ? 1 : 0;
    uncounted += p.counts->gpu_fault_groups == 0 && p.counts->bytes_h2d > 0 ? 1 : 0;
    back += p.counts->bytes_d2h > 0 ? 1 : 0;
  }
  const nlohmann::ordered_json v = out[0].value;  // once a pass was counted, the series
  if (counted > 0 && r.method == Method::kGpuToCpu) {
    out.push_back({"cpu_fault_migration", back == counted,
                   (back == counted ? "every sample migrated pages back to the host"
                                    : "a sample migrated no bytes back: the host did not fault "
                                      "the pages back from the GPU") +
                       std::string("; bytes D2H ") + v.at("bytes_d2h").dump(),
                   v.at("bytes_d2h")});
  }
  if (counted > 0 && r.method == Method::kFault) {
    std::string detail = shown < counted ? "a sample counted neither a GPU page fault nor a "
                                           "migration to the GPU: no fault-driven migration "
                                           "shown (pages already on the GPU, or records lost)"
                                         : "every sample migrated pages to the GPU with nothing "
                                           "but the touch kernel running: by GPU faults";
    if (shown == counted && uncounted > 0) {
      detail += "; " + std::to_string(uncounted) +
                " sample(s) counted bytes but no fault group (CUPTI lost those records)";
    }
    out.push_back({"gpu_fault_groups", shown == counted,
                   detail + "; fault groups " + v.at("gpu_fault_groups").dump(),
                   v.at("gpu_fault_groups")});
  }
  if (r.method != Method::kPrefetch) return out;
  const double median = median_of(passes.prefetch_calls);
  out.push_back({"prefetch_timing", true,
                 "cudaMemPrefetchAsync held the calling thread for a median " +
                     format_seconds(median) + " per sample, which the " +
                     (latched ? "latched timing (CUDA events) leaves out"
                              : "host clock includes: the prefetch blocked behind the latch"),
                 median});
  return out;
}

std::unique_ptr<Family> make_unified_memory_family() {
  return std::make_unique<UnifiedMemoryFamily>();
}

}  // namespace pathbench
