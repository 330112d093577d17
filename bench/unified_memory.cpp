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
     {"gpu_to_cpu", Method::kGpuToCpu},
     {"gpu_to_gpu", Method::kGpuToGpu},
     {"prefetch_gpu_to_gpu", Method::kPrefetchGpuToGpu}},
    "fault: the GPU's first touch migrates host pages on demand; prefetch: cudaMemPrefetchAsync "
    "to the GPU before the same kernel (timed together); advise_preferred_gpu / "
    "advise_accessed_by: cudaMemAdvise(SetPreferredLocation / SetAccessedBy, GPU) before the "
    "kernel; gpu_to_cpu: pages on the GPU, the host touches them; gpu_to_gpu: pages on GPU S "
    "(the pair's), GPU D's touch kernel faults them over; prefetch_gpu_to_gpu: pages on GPU S, "
    "cudaMemPrefetchAsync to GPU D before D's kernel (timed together)"};
const IntegerAxis kStride{"stride", std::int64_t{4} << 10, std::int64_t{2} << 20,
                          "bytes between touched addresses, where one byte is read and written (a "
                          "power of two, 4 KiB .. 2 MiB)"};
const IntegerAxis kBytes{"bytes", std::int64_t{1} << 20, std::int64_t{4} << 30,
                         "size of the managed buffer (1 MiB .. 4 GiB)"};
const GpuPairAxis kPair{"pair",
                        "for gpu_to_gpu and prefetch_gpu_to_gpu only (and required there): the GPU "
                        "S the pages are on before a pass and the GPU D that touches them"};

class UnifiedMemoryFamily final : public DeclaredFamily {
 public:
  UnifiedMemoryFamily()
      : DeclaredFamily({"unified_memory",
                        "Unified Memory: fault-driven migration of host-initialised managed "
                        "buffers over strides vs cudaMemPrefetchAsync vs cudaMemAdvise, "
                        "GPU-to-CPU faults back, and pages on one GPU migrating to another; fault "
                        "groups and migrated bytes from CUPTI unified-memory counters",
                        axis_schemas(kMethod, kStride, kBytes, kPair),
                        {"method", "stride", "bytes"}}) {}

  std::optional<std::string> invalid_combination(const CaseSpec& spec) const override {
    const bool paired = kPair.present(spec);
    if (paired) {
      if (auto why = kPair.invalid(spec)) return why;
    }
    const UnifiedMemoryRequest r = decode_unified_memory_request(spec);
    if (r.between_gpus() && !paired) {
      return "method=" + r.method_name +
             " moves pages from one GPU to another and needs the pair axis (\"S-D\": the pages "
             "on GPU S, touched from GPU D; {\"gpu_pairs\": \"all\"} for every pair of the "
             "selected GPUs)";
    }
    if (!r.between_gpus() && paired) {
      return "the pair axis applies to method=gpu_to_gpu and prefetch_gpu_to_gpu only; method=" +
             r.method_name + " runs on the --device GPU";
    }
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

  // One managed buffer: on the host between passes, on the GPU after a pass (on each GPU of a
  // pair in turn).
  MemoryNeeds memory_needs(const CaseSpec& spec) const override {
    const std::uint64_t bytes = static_cast<std::uint64_t>(kBytes.decode(spec));
    return {bytes, bytes};
  }

  // The --device GPU; for a method between GPUs the pair's two (never --device). Whether they
  // page managed memory in on demand is the device's answer, read in prepare.
  Requirements requirements(const CaseSpec& spec) const override {
    if (!kPair.present(spec)) return Requirements().gpu();
    return kPair.requirements(spec);
  }

  void derive_params(CaseSpec& spec, const Machine& machine) const override {
    kPair.derive_link(spec, machine);
  }

  std::optional<std::vector<std::string>> metric_names(const CaseSpec&) const override {
    return metric_names_of(unified_memory_metrics());
  }

  std::unique_ptr<CaseBench> prepare(const CaseSpec& spec, const Machine& machine,
                                     int device) const override {
    PATHBENCH_GPU_BENCH(
        make_unified_memory_bench(decode_unified_memory_request(spec), machine, device));
  }
};

// "from GPU 0 to GPU 1": where a method between GPUs moves the pages.
std::string gpu_route(const UnifiedMemoryRequest& r) {
  if (!r.gpus) return "between the GPUs of pair " + r.pair;
  return "from GPU " + std::to_string(r.gpus->first) + " to GPU " + std::to_string(r.gpus->second);
}

}  // namespace

std::uint64_t UnifiedMemoryRequest::estimated_migrated_bytes() const {
  if (prefetches()) return bytes;
  return std::min(bytes, touches() * std::min(stride, kPageBytes));
}

UnifiedMemoryRequest decode_unified_memory_request(const CaseSpec& spec) {
  UnifiedMemoryRequest r;
  r.method = kMethod.decode(spec);
  r.method_name = kMethod.name_of(r.method);
  r.stride = static_cast<std::uint64_t>(kStride.decode(spec));
  r.bytes = static_cast<std::uint64_t>(kBytes.decode(spec));
  if (kPair.present(spec)) {
    r.pair = spec.str(kPair.name());
    r.gpus = kPair.decode(spec);
  }
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

std::optional<std::string> unified_memory_pair_skip_reason(
    const UnifiedMemoryRequest& request, const ManagedMemorySupport& source,
    const ManagedMemorySupport& destination) {
  for (const ManagedMemorySupport* gpu : {&source, &destination}) {
    if (auto gap = demand_paging_gap(*gpu, request.bytes, kUnifiedMemoryDeviceHeadroom)) {
      return "method=" + request.method_name + ", pair " + request.pair + ": " + *gap;
    }
  }
  return std::nullopt;
}

MigrationExpectation unified_memory_expectation(const UnifiedMemoryRequest& r) {
  const bool prefetch = r.prefetches(), back = r.method == Method::kGpuToCpu;
  const bool faults = back || r.method == Method::kFault || r.method == Method::kGpuToGpu;
  std::string least_what = prefetch ? "the whole buffer" : "the page of every touched address";
  if (r.gpus) least_what += ", " + gpu_route(r);
  return {.to_host = back,
          .between_gpus = r.between_gpus(),
          .least_bytes = r.estimated_migrated_bytes(),
          .least_what = least_what,
          .must_migrate = prefetch || faults,  // advice may map
          .by_faults = faults};
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
  if (counted > 0 && r.between_gpus()) {
    std::size_t moved = 0;
    for (const auto& p : passes.samples) moved += p.counts && p.counts->bytes_d2d > 0 ? 1 : 0;
    out.push_back(
        {"device_to_device_migration", moved == counted,
         (moved == counted
              ? "every sample migrated pages " + gpu_route(r) + " (device-to-device bytes)"
              : "a sample counted no bytes moved between GPUs: the pages did not migrate " +
                    gpu_route(r) + " (already on the touching GPU, mapped, or records lost)") +
             "; bytes D2D " + v.at("bytes_d2d").dump(),
         v.at("bytes_d2d")});
  }
  if (!r.prefetches()) return out;
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
