#pragma once

// The `device_memory` family: what a device allocation costs with cudaMalloc, a stream-ordered
// memory pool (cudaMallocFromPoolAsync, release threshold 0 or unbounded, or an explicit trim),
// the virtual memory management API (cuMemCreate + cuMemAddressReserve + cuMemMap +
// cuMemSetAccess) and a PyTorch-style caching allocator on cudaMalloc'd segments, and how each
// copes with a KV-cache-like fragmentation replay: the largest block still allocatable against
// the free memory the driver reports, what a pool holds at each synchronisation, and what a
// caching allocator holds when its allocation fails.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "measure/caching_replay.hpp"
#include "measure/family.hpp"
#include "measure/fragmentation_pattern.hpp"

namespace pathbench {

struct DeviceMemoryRequest {
  enum class Allocator { kCudaMalloc, kPool, kVmm, kCaching };
  enum class Measure { kAllocFree, kFragmentation };
  // kTrimToZero: unbounded, and cudaMemPoolTrimTo(pool, 0) after the replay's free phase.
  enum class ReleaseThreshold { kZero, kUnbounded, kTrimToZero };
  Allocator allocator = Allocator::kCudaMalloc;
  Measure measure = Measure::kAllocFree;
  std::optional<ReleaseThreshold> release_threshold;  // the pool's, and only the pool's
  std::string allocator_name;
  std::uint64_t bytes = 0;      // alloc_free: the size of each allocation
  std::uint64_t seed = 0;       // fragmentation: the pattern's seed
  unsigned budget_pct = 0;      // fragmentation: share of the free memory the replay fills
  SizeMix mix = kv_size_mix();  // fragmentation: block_sizes
};
DeviceMemoryRequest decode_device_memory_request(const CaseSpec& spec);
std::vector<MetricSpec> device_memory_metrics(const DeviceMemoryRequest& r);

// The allocation granularity the largest-block bisection steps by (the 2 MiB large page that
// cudaMalloc, the pool and cuMemCreate's minimum granularity use on current GPUs).
inline constexpr std::uint64_t kDeviceMemoryGranularity = std::uint64_t{2} << 20;
// Allocations of the OOM loop, at most (a bound on its time whatever the device's size).
inline constexpr std::uint64_t kMaxAllocationsUntilOom = 200000;
// Bisection probes, at most (2 MiB steps over 141 GB take 17).
inline constexpr unsigned kMaxBisectionSteps = 64;

// How far the device's free memory may be below what it was before the case once the case
// released everything: max(256 MiB, 1 % of the device's memory). The driver keeps some memory
// for the context and its own bookkeeping after the first use of an allocator.
std::uint64_t device_memory_tolerance(std::uint64_t total_bytes);

// The replay's budget: `pct` % of `free_bytes`, rounded down to the granularity.
std::uint64_t fragmentation_budget(std::uint64_t free_bytes, unsigned pct);

// The largest multiple of `granularity` in [0, upper] for which `fits` is true, assuming fits is
// monotone (a size that fits, any smaller one fits too), in at most `max_steps` probes; `steps`
// gets how many it took. Tries `upper` (rounded down) first: nothing fragmented takes one probe.
std::uint64_t largest_fitting(const std::function<bool(std::uint64_t)>& fits, std::uint64_t upper,
                              std::uint64_t granularity, unsigned max_steps,
                              unsigned* steps = nullptr);

// A pool's figures at the replay's steps. The replay synchronises its stream after filling the
// budget, after punching the holes, after the larger blocks and after freeing everything: a
// release threshold acts at those synchronisations (never at cudaFreeAsync), so each step before
// and after one shows what the threshold gave back.
namespace pool_step {
inline constexpr std::string_view kFill = "fill";               // synchronised
inline constexpr std::string_view kHolesFreed = "holes_freed";  // frees enqueued
inline constexpr std::string_view kHolesSynced = "holes_synchronised";
inline constexpr std::string_view kHolesTrimmed = "holes_trimmed";  // trim_to_zero only
inline constexpr std::string_view kLarger = "larger_blocks";        // synchronised
inline constexpr std::string_view kUntilOom = "until_oom";          // the OOM loop's blocks held
inline constexpr std::string_view kAllFreed = "all_freed";          // frees enqueued
inline constexpr std::string_view kAllSynced = "all_synchronised";
inline constexpr std::string_view kAllTrimmed = "all_trimmed";  // trim_to_zero only
}  // namespace pool_step

struct PoolStep {
  std::string name;
  bool synchronised = false;      // read right after a cudaStreamSynchronize
  std::uint64_t reserved = 0;     // cudaMemPoolAttrReservedMemCurrent
  std::uint64_t used = 0;         // cudaMemPoolAttrUsedMemCurrent
  std::uint64_t driver_free = 0;  // cudaMemGetInfo
};

// The pool's metrics, from the hole-punching synchronisation: reserved and used after it, what it
// gave back (reserved before it minus after), and (trim_to_zero) what the trim after it gave back.
struct PoolFigures {
  std::uint64_t reserved_after_sync = 0, used_after_sync = 0;
  std::uint64_t released_at_sync = 0, released_by_trim = 0;
};
// Throws std::logic_error when a step the threshold needs is missing.
PoolFigures pool_figures(const std::vector<PoolStep>& steps,
                         DeviceMemoryRequest::ReleaseThreshold threshold);

// `pool_steps`: the steps as a data series, and whether the pool behaved as its threshold says:
// used never above reserved; the fill's used bytes cover the replay's `fill_bytes` (the blocks
// come from this pool); threshold 0 holds nothing once everything is freed and synchronised;
// unbounded and trim_to_zero release nothing at a synchronisation; trim_to_zero's last trim
// leaves nothing reserved.
Check pool_steps_check(const std::vector<PoolStep>& steps,
                       DeviceMemoryRequest::ReleaseThreshold threshold, std::uint64_t fill_bytes);

// The caching allocator's replay: `segments_resident` (the driver's free memory fell by the
// segments reserved after the replay, within `tolerance`) and `oom_reached` (an allocation
// failed, with PyTorch's figures: the request, the device's free memory, reserved, allocated,
// reserved-but-unused and the largest cached block; false where the loop hit its cap).
std::vector<Check> caching_replay_checks(const CachingReplayOutcome& out, std::uint64_t free_before,
                                         std::uint64_t tolerance);

// What the replay left, measured.
struct FragmentationOutcome {
  std::uint64_t largest_block = 0;  // bytes, by bisection
  std::uint64_t reported_free = 0;  // cudaMemGetInfo after the replay, before the probes
  std::uint64_t pool_idle = 0;      // a pool's reserved but unused bytes (0 for the others)
  std::uint64_t allocations_until_oom = 0;
  bool oom_reached = false;  // false: the loop stopped at kMaxAllocationsUntilOom
  unsigned bisection_steps = 0;
  // Memory the allocator could hand out: the driver's free memory and the pool's idle bytes.
  std::uint64_t available() const { return reported_free + pool_idle; }
  // 1 - largest / available; 0 when nothing is available.
  double fragmentation_ratio() const;
};

// `memory_returned`: after the case released everything, the free memory is back within the
// tolerance of what it was before the case's allocations. `first_case_free` (the free memory when
// the process's first device_memory case started) is recorded beside it, not judged: another
// process may have taken memory since.
Check memory_returned_check(std::uint64_t free_before, std::uint64_t free_after,
                            std::uint64_t first_case_free, std::uint64_t total_bytes);

std::unique_ptr<Family> make_device_memory_family();
// The CUDA bench (bench/device_memory.cu).
std::unique_ptr<CaseBench> make_device_memory_bench(const DeviceMemoryRequest& r, int device);

}  // namespace pathbench
