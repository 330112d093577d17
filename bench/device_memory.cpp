#include "bench/device_memory.hpp"

#include <algorithm>

#include "core/text.hpp"
#include "core/units.hpp"
#include "measure/gpu_bench.hpp"
#include "scenario/typed_axis.hpp"

namespace pathbench {

namespace {

using Allocator = DeviceMemoryRequest::Allocator;
using Measure = DeviceMemoryRequest::Measure;
using Threshold = DeviceMemoryRequest::ReleaseThreshold;

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

enum class BlockSizes { kKv };

const EnumAxis<Allocator> kAllocator{
    "allocator",
    {{"cuda_malloc", Allocator::kCudaMalloc}, {"pool", Allocator::kPool}, {"vmm", Allocator::kVmm}},
    "cuda_malloc: cudaMalloc / cudaFree; pool: cudaMallocFromPoolAsync / cudaFreeAsync from a "
    "memory pool of its own (cudaMemPoolCreate), stream-ordered; vmm: cuMemCreate + "
    "cuMemAddressReserve + cuMemMap + cuMemSetAccess, and cuMemUnmap + cuMemAddressFree + "
    "cuMemRelease"};
const EnumAxis<Measure> kMeasure{
    "measure",
    {{"alloc_free", Measure::kAllocFree}, {"fragmentation", Measure::kFragmentation}},
    "alloc_free: host time of each allocation and of each free (axis bytes); fragmentation: a "
    "seeded KV-cache-like replay, then the largest block still allocatable vs the free memory"};
const EnumAxis<Threshold> kReleaseThreshold{
    "release_threshold",
    {{"0", Threshold::kZero}, {"unbounded", Threshold::kUnbounded}},
    "allocator pool only (cudaMemPoolAttrReleaseThreshold): \"0\" returns the pool's unused "
    "memory to the driver at every synchronisation, \"unbounded\" (UINT64_MAX) keeps it"};
const IntegerAxis kBytes{"bytes", 1, std::int64_t{64} << 30,
                         "measure alloc_free: bytes of each allocation (1 B .. 64 GiB; vmm rounds "
                         "up to cuMemGetAllocationGranularity)"};
const IntegerAxis kSeed{"seed", 0, std::int64_t{1} << 48,
                        "measure fragmentation: the seed of the allocation pattern"};
const IntegerAxis kBudgetPct{"budget_pct", 1, 95,
                             "measure fragmentation: share of the device's free memory the "
                             "replay fills, in % (1 .. 95)"};
const EnumAxis<BlockSizes> kBlockSizes{
    "block_sizes",
    {{"kv", BlockSizes::kKv}},
    "measure fragmentation: the size mix; kv (default): 2 MiB pages (weight 8), 16 / 64 / 256 MiB "
    "sequences (weights 4, 2, 1)"};

std::string names(const std::vector<std::string>& axes) {
  std::string out;
  for (const auto& a : axes) out += (out.empty() ? "" : ", ") + a;
  return out;
}

class DeviceMemoryFamily final : public DeclaredFamily {
 public:
  DeviceMemoryFamily()
      : DeclaredFamily({"device_memory",
                        "Device memory allocators: cudaMalloc vs a stream-ordered memory pool "
                        "(release threshold 0 / unbounded) vs the VMM API; allocation and free "
                        "latency by size, and a seeded KV-cache-like fragmentation replay "
                        "(largest allocatable block vs the driver's free memory)",
                        axis_schemas(kAllocator, kMeasure, kReleaseThreshold, kBytes, kSeed,
                                     kBudgetPct, kBlockSizes),
                        {"allocator", "measure"}}) {}

  std::optional<std::string> invalid_combination(const CaseSpec& spec) const override {
    const Allocator allocator = kAllocator.decode(spec);
    const bool pool = allocator == Allocator::kPool;
    if (kReleaseThreshold.present(spec) && !pool) {
      return concat(
          "release_threshold is a memory pool's attribute "
          "(cudaMemPoolAttrReleaseThreshold): allocator ",
          kAllocator.name_of(allocator), " has no pool; give it with allocator pool only");
    }
    if (pool && !kReleaseThreshold.present(spec)) {
      return std::string(
          "allocator pool needs release_threshold (\"0\" or \"unbounded\"): the "
          "two measure different costs");
    }
    const bool alloc_free = kMeasure.decode(spec) == Measure::kAllocFree;
    const std::vector<std::string> own = alloc_free
                                             ? std::vector<std::string>{"bytes"}
                                             : std::vector<std::string>{"seed", "budget_pct"};
    const std::vector<std::string> foreign =
        alloc_free ? std::vector<std::string>{"seed", "budget_pct", "block_sizes"}
                   : std::vector<std::string>{"bytes"};
    const std::string which = alloc_free ? "alloc_free" : "fragmentation";
    std::vector<std::string> missing, extra;
    for (const auto& a : own) {
      if (!spec.has(a)) missing.push_back(a);
    }
    for (const auto& a : foreign) {
      if (spec.has(a)) extra.push_back(a);
    }
    if (!missing.empty()) return "measure " + which + " needs " + names(missing);
    if (!extra.empty()) {
      return "measure " + which + " does not use " + names(extra) +
             (alloc_free ? " (they belong to measure fragmentation)"
                         : " (it belongs to measure alloc_free)");
    }
    return std::nullopt;
  }

  // alloc_free holds one allocation at a time; a replay's size is a share of the free memory
  // the device reports when it runs, not known at load.
  MemoryNeeds memory_needs(const CaseSpec& spec) const override {
    const DeviceMemoryRequest r = decode_device_memory_request(spec);
    if (r.measure != Measure::kAllocFree) return {0, 0};
    return {0, (r.bytes + kDeviceMemoryGranularity - 1) / kDeviceMemoryGranularity *
                   kDeviceMemoryGranularity};
  }

  Requirements requirements(const CaseSpec&) const override {
    return std::move(Requirements().gpu());
  }

  std::optional<std::vector<std::string>> metric_names(const CaseSpec& spec) const override {
    return metric_names_of(device_memory_metrics(decode_device_memory_request(spec)));
  }
  std::vector<std::string> per_operation_metric_names(const CaseSpec& spec) const override {
    std::vector<std::string> out;
    for (const auto& m : device_memory_metrics(decode_device_memory_request(spec))) {
      if (m.per_operation) out.push_back(m.name);
    }
    return out;
  }

  std::unique_ptr<CaseBench> prepare(const CaseSpec& spec, const Machine&,
                                     int device) const override {
    PATHBENCH_GPU_BENCH(make_device_memory_bench(decode_device_memory_request(spec), device));
  }
};

}  // namespace

DeviceMemoryRequest decode_device_memory_request(const CaseSpec& spec) {
  DeviceMemoryRequest r;
  r.allocator = kAllocator.decode(spec);
  r.allocator_name = std::string(kAllocator.name_of(r.allocator));
  r.measure = kMeasure.decode(spec);
  r.release_threshold = kReleaseThreshold.decode_optional(spec);
  r.bytes = static_cast<std::uint64_t>(kBytes.decode_or(spec, 0));
  r.seed = static_cast<std::uint64_t>(kSeed.decode_or(spec, 0));
  r.budget_pct = static_cast<unsigned>(kBudgetPct.decode_or(spec, 0));
  static_cast<void>(kBlockSizes.decode_or(spec, BlockSizes::kKv));  // kv is the only mix
  r.mix = kv_size_mix();
  return r;
}

std::vector<MetricSpec> device_memory_metrics(const DeviceMemoryRequest& r) {
  if (r.measure == Measure::kAllocFree) {
    return {{"alloc_time", "s", Better::kLower, true}, {"free_time", "s", Better::kLower, true}};
  }
  return {{"largest_block", "bytes", Better::kHigher},
          {"reported_free", "bytes", Better::kHigher},
          {"fragmentation_ratio", "ratio", Better::kLower},
          {"allocations_until_oom", "count", Better::kHigher}};
}

std::uint64_t device_memory_tolerance(std::uint64_t total_bytes) {
  return std::max<std::uint64_t>(256 * kMiB, total_bytes / 100);
}

std::uint64_t fragmentation_budget(std::uint64_t free_bytes, unsigned pct) {
  const std::uint64_t share = free_bytes / 100 * pct;
  return share / kDeviceMemoryGranularity * kDeviceMemoryGranularity;
}

std::uint64_t largest_fitting(const std::function<bool(std::uint64_t)>& fits, std::uint64_t upper,
                              std::uint64_t granularity, unsigned max_steps, unsigned* steps) {
  unsigned taken = 0;
  std::uint64_t lo = 0, hi = upper / granularity;  // lo fits (nothing); above hi is not tried
  if (hi > 0 && taken < max_steps) {
    ++taken;
    if (fits(hi * granularity)) lo = hi;
  }
  // Invariant: lo * granularity fits, hi * granularity does not (once lo < hi).
  while (hi - lo > 1 && taken < max_steps) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    ++taken;
    if (fits(mid * granularity)) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  if (steps != nullptr) *steps = taken;
  return lo * granularity;
}

double FragmentationOutcome::fragmentation_ratio() const {
  if (available() == 0) return 0;
  const double ratio = 1.0 - static_cast<double>(largest_block) / static_cast<double>(available());
  return std::clamp(ratio, 0.0, 1.0);
}

Check memory_returned_check(std::uint64_t free_before, std::uint64_t free_after,
                            std::uint64_t first_case_free, std::uint64_t total_bytes) {
  const std::uint64_t tolerance = device_memory_tolerance(total_bytes);
  const bool passed = free_after + tolerance >= free_before;
  const auto gap = static_cast<std::int64_t>(free_before) - static_cast<std::int64_t>(free_after);
  nlohmann::ordered_json value = {{"free_before", free_before},
                                  {"free_after", free_after},
                                  {"not_returned", gap},
                                  {"tolerance", tolerance},
                                  {"free_at_first_case", first_case_free}};
  std::string detail = (passed ? std::string("everything released: free memory ")
                               : std::string("memory did not come back: free memory ")) +
                       format_bytes(free_after) + " after, " + format_bytes(free_before) +
                       " before the case's allocations (tolerance " + format_bytes(tolerance) +
                       "); " + format_bytes(first_case_free) +
                       " when the first device_memory case of the process started";
  return {"memory_returned", passed, std::move(detail), std::move(value)};
}

std::unique_ptr<Family> make_device_memory_family() {
  return std::make_unique<DeviceMemoryFamily>();
}

}  // namespace pathbench
