#include "bench/device_memory.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/text.hpp"
#include "core/units.hpp"
#include "measure/caching_allocator.hpp"
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
    {{"cuda_malloc", Allocator::kCudaMalloc},
     {"pool", Allocator::kPool},
     {"vmm", Allocator::kVmm},
     {"caching", Allocator::kCaching}},
    "cuda_malloc: cudaMalloc / cudaFree; pool: cudaMallocFromPoolAsync / cudaFreeAsync from a "
    "memory pool of its own (cudaMemPoolCreate), stream-ordered; vmm: cuMemCreate + "
    "cuMemAddressReserve + cuMemMap + cuMemSetAccess, and cuMemUnmap + cuMemAddressFree + "
    "cuMemRelease; caching: a PyTorch-style caching allocator (size classes, split blocks "
    "cached on free) on cudaMalloc'd segments"};
const EnumAxis<Measure> kMeasure{
    "measure",
    {{"alloc_free", Measure::kAllocFree}, {"fragmentation", Measure::kFragmentation}},
    "alloc_free: host time of each allocation and of each free (axis bytes); fragmentation: a "
    "seeded KV-cache-like replay, then the largest block still allocatable vs the free memory"};
const EnumAxis<Threshold> kReleaseThreshold{
    "release_threshold",
    {{"0", Threshold::kZero},
     {"unbounded", Threshold::kUnbounded},
     {"trim_to_zero", Threshold::kTrimToZero}},
    "allocator pool only (cudaMemPoolAttrReleaseThreshold): \"0\" returns the pool's unused "
    "memory to the driver at every synchronisation, \"unbounded\" (UINT64_MAX) keeps it, "
    "\"trim_to_zero\" (measure fragmentation) keeps it but calls cudaMemPoolTrimTo(pool, 0) "
    "after the replay's free phase"};
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
                        "(release threshold 0 / unbounded / an explicit trim) vs the VMM API vs "
                        "a PyTorch-style caching allocator; allocation and free latency by size, "
                        "and a seeded KV-cache-like fragmentation replay (largest allocatable "
                        "block vs the driver's free memory, the pool's reserved and used bytes "
                        "at each synchronisation, the caching allocator's state when an "
                        "allocation fails)",
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
          "allocator pool needs release_threshold (\"0\", \"unbounded\" or "
          "\"trim_to_zero\"): each measures a different cost");
    }
    const bool alloc_free = kMeasure.decode(spec) == Measure::kAllocFree;
    if (alloc_free &&
        kReleaseThreshold.decode_or(spec, Threshold::kZero) == Threshold::kTrimToZero) {
      return std::string(
          "release_threshold trim_to_zero trims the pool after the fragmentation replay's free "
          "phase; measure alloc_free has none: give it \"0\" (the pool returns its memory at "
          "every synchronisation) or \"unbounded\"");
    }
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
  // (The caching allocator holds the segment its size class gets.)
  MemoryNeeds memory_needs(const CaseSpec& spec) const override {
    const DeviceMemoryRequest r = decode_device_memory_request(spec);
    if (r.measure != Measure::kAllocFree) return {0, 0};
    if (r.allocator == Allocator::kCaching) {
      return {0, caching_segment_size(caching_block_size(r.bytes))};
    }
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
  if (r.allocator == Allocator::kCaching) {
    return {{"allocations_until_oom", "count", Better::kHigher},
            {"free_at_oom", "bytes", Better::kHigher},
            {"reserved_at_oom", "bytes", Better::kLower},
            {"allocated_at_oom", "bytes", Better::kHigher},
            {"reserved_unused_at_oom", "bytes", Better::kLower},
            {"largest_cached_block", "bytes", Better::kHigher}};
  }
  std::vector<MetricSpec> metrics{{"largest_block", "bytes", Better::kHigher},
                                  {"reported_free", "bytes", Better::kHigher},
                                  {"fragmentation_ratio", "ratio", Better::kLower},
                                  {"allocations_until_oom", "count", Better::kHigher}};
  if (r.allocator == Allocator::kPool) {
    metrics.push_back({"reserved_after_sync", "bytes", Better::kLower});
    metrics.push_back({"used_after_sync", "bytes", Better::kLower});
    metrics.push_back({"released_at_sync", "bytes", Better::kHigher});
    if (r.release_threshold == Threshold::kTrimToZero) {
      metrics.push_back({"released_by_trim", "bytes", Better::kHigher});
    }
  }
  return metrics;
}

namespace {

const PoolStep& step_named(const std::vector<PoolStep>& steps, std::string_view name) {
  const auto it =
      std::find_if(steps.begin(), steps.end(), [&](const PoolStep& s) { return s.name == name; });
  if (it == steps.end()) {
    throw std::logic_error(concat("device_memory: the pool's step ", name, " was not recorded"));
  }
  return *it;
}

std::uint64_t dropped(std::uint64_t before, std::uint64_t after) {
  return before > after ? before - after : 0;
}

}  // namespace

PoolFigures pool_figures(const std::vector<PoolStep>& steps, Threshold threshold) {
  const PoolStep& freed = step_named(steps, pool_step::kHolesFreed);
  const PoolStep& synced = step_named(steps, pool_step::kHolesSynced);
  PoolFigures f;
  f.reserved_after_sync = synced.reserved;
  f.used_after_sync = synced.used;
  f.released_at_sync = dropped(freed.reserved, synced.reserved);
  if (threshold == Threshold::kTrimToZero) {
    f.released_by_trim =
        dropped(synced.reserved, step_named(steps, pool_step::kHolesTrimmed).reserved);
  }
  return f;
}

Check pool_steps_check(const std::vector<PoolStep>& steps, Threshold threshold,
                       std::uint64_t fill_bytes) {
  std::vector<std::string> wrong;
  nlohmann::ordered_json series = nlohmann::ordered_json::array();
  for (const PoolStep& s : steps) {
    series.push_back({{"step", s.name},
                      {"synchronised", s.synchronised},
                      {"reserved", s.reserved},
                      {"used", s.used},
                      {"driver_free", s.driver_free}});
    if (s.used > s.reserved) {
      wrong.push_back(concat(s.name, ": used ", format_bytes(s.used), " above reserved ",
                             format_bytes(s.reserved)));
    }
  }
  const PoolStep& fill = step_named(steps, pool_step::kFill);
  if (fill.used < fill_bytes) {
    wrong.push_back(concat("fill: the pool's used bytes ", format_bytes(fill.used),
                           " do not cover the replay's ", format_bytes(fill_bytes),
                           ": its blocks do not come from this pool"));
  }
  const PoolStep& holes_freed = step_named(steps, pool_step::kHolesFreed);
  const PoolStep& holes_synced = step_named(steps, pool_step::kHolesSynced);
  const PoolStep& all_freed = step_named(steps, pool_step::kAllFreed);
  const PoolStep& all_synced = step_named(steps, pool_step::kAllSynced);
  std::string expectation;
  if (threshold == Threshold::kZero) {
    expectation = "threshold 0: nothing reserved once every block is freed and synchronised";
    if (all_synced.reserved != 0) {
      wrong.push_back(concat(all_synced.name, ": ", format_bytes(all_synced.reserved),
                             " still reserved with nothing in use: the threshold is not in "
                             "effect at a synchronisation"));
    }
  } else {
    expectation = "unbounded: nothing released at a synchronisation";
    for (const auto& [before, after] :
         {std::pair{&holes_freed, &holes_synced}, std::pair{&all_freed, &all_synced}}) {
      if (after->reserved < before->reserved) {
        wrong.push_back(concat(after->name, ": ", format_bytes(before->reserved - after->reserved),
                               " released at a synchronisation by an unbounded pool"));
      }
    }
    if (threshold == Threshold::kTrimToZero) {
      expectation += "; cudaMemPoolTrimTo(pool, 0) with nothing in use leaves nothing reserved";
      const PoolStep& trimmed = step_named(steps, pool_step::kAllTrimmed);
      if (trimmed.reserved != 0) {
        wrong.push_back(concat(trimmed.name, ": ", format_bytes(trimmed.reserved),
                               " still reserved after cudaMemPoolTrimTo(pool, 0)"));
      }
    }
  }
  std::string detail;
  for (const auto& w : wrong) {
    if (!detail.empty()) detail += "; ";
    detail += w;
  }
  if (wrong.empty()) {
    detail = concat(expectation, " (held); the hole-punching synchronisation took the pool from ",
                    format_bytes(holes_freed.reserved), " to ", format_bytes(holes_synced.reserved),
                    " reserved, ", format_bytes(holes_synced.used), " used");
  }
  return {"pool_steps", wrong.empty(), std::move(detail), std::move(series)};
}

std::vector<Check> caching_replay_checks(const CachingReplayOutcome& out, std::uint64_t free_before,
                                         std::uint64_t tolerance) {
  std::vector<Check> checks;
  const std::uint64_t reserved = out.after_replay.reserved;
  const std::uint64_t drop = dropped(free_before, out.free_after_replay);
  checks.push_back({"segments_resident",
                    drop + tolerance >= reserved,
                    concat("the allocator reserved ", format_bytes(reserved), " in ",
                           std::to_string(out.after_replay.segments),
                           " cudaMalloc segments; the driver's free "
                           "memory fell by ",
                           format_bytes(drop), " (tolerance ", format_bytes(tolerance), ")"),
                    {{"reserved", reserved}, {"free_drop", drop}}});
  const CachingStats& at = out.at_failure;
  nlohmann::ordered_json value = {
      {"phase", out.failed_in_replay ? "replay" : "until_oom"},
      {"failed_event", out.failed_in_replay ? nlohmann::ordered_json(out.failed_event) : nullptr},
      {"allocations_until_oom", out.allocations_until_failure},
      {"failed_request", out.failure.requested},
      {"block_size", out.failure.block_size},
      {"segment_size", out.failure.segment_size},
      {"free_at_oom", out.free_at_failure},
      {"reserved", at.reserved},
      {"allocated", at.allocated},
      {"requested", at.requested},
      {"reserved_unused", at.reserved_unused()},
      {"largest_cached_block", at.largest_free_block},
      {"segments", at.segments},
      {"cache_flushes", at.cache_flushes}};
  if (!out.failed) {
    checks.push_back(
        {"oom_reached", false,
         concat("no allocation failed after ", std::to_string(out.allocations_until_failure),
                " allocations: allocations_until_oom is a lower bound"),
         std::move(value)});
    return checks;
  }
  std::string where =
      out.failed_in_replay
          ? concat("at event ", std::to_string(out.failed_event), " of the replay")
          : concat("after the replay and ", std::to_string(out.allocations_until_failure),
                   " allocations of ", format_bytes(out.failure.requested));
  checks.push_back(
      {"oom_reached", true,
       concat("out of memory ", where, ": tried to allocate ", format_bytes(out.failure.requested),
              " (a new segment of ", format_bytes(out.failure.segment_size), "); the device has ",
              format_bytes(out.free_at_failure), " free; ", format_bytes(at.reserved),
              " reserved by the allocator, ", format_bytes(at.allocated), " allocated, ",
              format_bytes(at.reserved_unused()), " reserved but unused (largest cached block ",
              format_bytes(at.largest_free_block),
              at.reserved_unused() >= out.failure.block_size
                  ? "): the cached bytes would hold the request in total, no cached block does"
                  : ")"),
       std::move(value)});
  return checks;
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
