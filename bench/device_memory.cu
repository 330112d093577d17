// The `device_memory` bench. alloc_free: a sample is N allocate/free round trips of one size,
// each call timed by the host steady clock (per-operation distributions). fragmentation: a
// sample is one replay of the seeded pattern, synchronised between its phases, after which the
// bench measures what the allocator can still hand out (a pool's reserved and used bytes at each
// step beside); the caching allocator instead allocates on until an allocation fails and records
// what it held then (measure/caching_replay.hpp). Either way a sample starts from a fresh
// allocator (a pool of its own) and releases everything it took before it ends, so the free
// memory after it must be back.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bench/device_memory.hpp"
#include "bench/device_memory_allocators.hpp"
#include "core/errors.hpp"
#include "core/host_clock.hpp"
#include "core/units.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/cuda_resources.hpp"
#include "measure/caching_allocator.hpp"
#include "measure/caching_replay.hpp"
#include "measure/check_log.hpp"
#include "measure/sample_builder.hpp"

namespace pathbench {

namespace {

using Measure = DeviceMemoryRequest::Measure;
using Threshold = DeviceMemoryRequest::ReleaseThreshold;

constexpr std::uint64_t kMinRoundTrips = 8;     // per sample, whatever min_time says
constexpr std::uint64_t kMaxRoundTrips = 4096;  // per sample
constexpr std::uint64_t kProbeRoundTrips = 4;   // warm-up: size the sample
constexpr std::uint64_t kVerifiedBytes = 4096;  // read back at each end of the verified block

struct MemInfo {
  std::uint64_t free = 0, total = 0;
};
MemInfo mem_info() {
  std::size_t f = 0, t = 0;
  PB_CUDA(cudaMemGetInfo(&f, &t));
  return {f, t};
}

// The free memory when the process's first device_memory case started (recorded, not judged).
std::uint64_t first_case_free(std::uint64_t now) {
  static const std::uint64_t first = now;
  return first;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

class DeviceMemoryBench final : public CaseBench {
 public:
  DeviceMemoryBench(const DeviceMemoryRequest& r, int device)
      : r_(r), device_(make_current(device)) {
    PB_CUDA(cudaFree(nullptr));  // the context first: its memory is not the case's
    const MemInfo info = mem_info();
    free_before_ = info.free;
    total_ = info.total;
    first_free_ = first_case_free(free_before_);
    // The allocator as the samples will make it: skips here when the device lacks it.
    allocator_check_ = make_device_allocator(r_, device_)->describe();
    if (r_.measure == Measure::kFragmentation) {
      budget_ = fragmentation_budget(free_before_, r_.budget_pct);
      pattern_ = make_fragmentation_pattern(r_.seed, budget_, r_.mix);
    }
  }

  TimingMethod timing_method() const override { return TimingMethod::kHostSteadyClock; }
  std::vector<MetricSpec> metrics() const override { return device_memory_metrics(r_); }

  // alloc_free: round trips (not counted) whose mean sizes the sample to min_time. A replay's
  // metrics are capacities, not times: nothing to warm.
  void warm_up(double min_time) override {
    if (r_.measure != Measure::kAllocFree) return;
    const auto allocator = make_device_allocator(r_, device_);
    const double seconds = time_on_host([&] {
      for (std::uint64_t i = 0; i < kProbeRoundTrips; ++i) round_trip(*allocator);
    });
    round_trips_ = std::max(kMinRoundTrips,
                            operations_for(min_time, seconds / kProbeRoundTrips, kMaxRoundTrips));
  }

  Sample measure() override {
    if (r_.measure == Measure::kAllocFree) return measure_alloc_free();
    return caching() ? measure_caching_replay() : measure_fragmentation();
  }

  // alloc_free: a block of the case's size from a fresh allocator holds what the GPU wrote into
  // it (cudaMemset, read back at both ends). The replay's checks are made during its sample.
  void verify() override {
    if (r_.measure != Measure::kAllocFree) return;
    const auto allocator = make_device_allocator(r_, device_);
    LiveBlocks held(*allocator);
    const auto block = allocator->allocate(r_.bytes);
    if (!block) {
      throw CaseFailure("out of memory allocating " + format_bytes(r_.bytes) + " to verify");
    }
    held.add(0, *block);
    allocator->settle();  // the pool's allocation is ordered on its stream: complete it
    const auto fill = static_cast<unsigned char>(0x5A + verified_ % 100);
    PB_CUDA(cudaMemset(block->ptr, fill, r_.bytes));
    const std::uint64_t n = std::min(r_.bytes, kVerifiedBytes);
    std::vector<unsigned char> head(n), tail(n);
    PB_CUDA(cudaMemcpy(head.data(), block->ptr, n, cudaMemcpyDeviceToHost));
    PB_CUDA(cudaMemcpy(tail.data(), static_cast<unsigned char*>(block->ptr) + (r_.bytes - n), n,
                       cudaMemcpyDeviceToHost));
    for (std::uint64_t i = 0; i < n; ++i) {
      if (head[i] != fill || tail[i] != fill) {
        throw CaseFailure("byte " + std::to_string(head[i] != fill ? i : r_.bytes - n + i) +
                          " of a " + format_bytes(r_.bytes) + " block holds " +
                          std::to_string(head[i] != fill ? head[i] : tail[i]) +
                          " after cudaMemset to " + std::to_string(fill));
      }
    }
    held.release_all();
    ++verified_;
  }

  std::vector<Check> checks() const override {
    std::vector<Check> all{allocator_check_};
    if (r_.measure == Measure::kAllocFree) {
      all.push_back({"allocation_usable", verified_ > 0,
                     "after every sample a fresh " + format_bytes(r_.bytes) +
                         " block held what "
                         "cudaMemset wrote (first and last " +
                         format_bytes(std::min(r_.bytes, kVerifiedBytes)) + " read back), " +
                         std::to_string(verified_) + " verified",
                     verified_});
    } else {
      all.push_back(pattern_check());
    }
    for (const auto& c : log_.checks()) all.push_back(c);
    return all;
  }

  std::string timing_detail() const override {
    if (r_.measure == Measure::kAllocFree) {
      return "host steady clock around each call, " + std::to_string(round_trips_) +
             " allocate/free round trips per sample from a fresh allocator after one untimed "
             "round trip; alloc_time: the allocation call alone (pool: cudaMallocFromPoolAsync "
             "on an idle stream, the pointer valid at once; vmm: cuMemCreate + "
             "cuMemAddressReserve + cuMemMap + cuMemSetAccess); free_time: until the memory is "
             "back with the allocator (cuda_malloc: cudaFree, synchronous; pool: cudaFreeAsync "
             "+ cudaStreamSynchronize, where release threshold 0 returns the memory to the "
             "driver; vmm: cuMemUnmap + cuMemAddressFree + cuMemRelease; caching: back in the "
             "allocator's cache, no driver call once its segment exists)";
    }
    if (caching()) {
      return "host steady clock around one replay of " + std::to_string(pattern_.events.size()) +
             " allocations and frees through the caching allocator and the allocations of " +
             format_bytes(r_.mix.largest()) +
             " after it until one fails (the sample's time, not a metric); the metrics are what "
             "the allocator and cudaMemGetInfo report at that failure";
    }
    return "host steady clock around one replay of " + std::to_string(pattern_.events.size()) +
           " allocations and frees per sample (the sample's time, not a metric); the metrics are "
           "capacities measured after the replay: cudaMemGetInfo, then a bisection of the "
           "largest block in " +
           format_bytes(kDeviceMemoryGranularity) +
           " steps (each probe allocated and freed at once), then allocations of " +
           format_bytes(r_.mix.largest()) + " until the first out-of-memory" +
           (r_.allocator == DeviceMemoryRequest::Allocator::kPool
                ? "; the replay synchronises its stream after each phase (pool_steps)"
                : "");
  }

  std::uint64_t operations_per_sample() const override {
    return r_.measure == Measure::kAllocFree ? round_trips_ : pattern_.events.size();
  }
  std::uint64_t bytes_per_sample() const override {
    return r_.measure == Measure::kAllocFree ? round_trips_ * r_.bytes : pattern_.peak_live_bytes;
  }

 private:
  struct RoundTrip {
    double alloc = 0, free = 0;
  };
  RoundTrip round_trip(DeviceAllocator& allocator) const {
    RoundTrip t;
    const auto start = std::chrono::steady_clock::now();
    const auto block = allocator.allocate(r_.bytes);
    t.alloc = seconds_since(start);
    if (!block) throw CaseFailure("out of memory allocating " + format_bytes(r_.bytes));
    const auto freeing = std::chrono::steady_clock::now();
    allocator.free(*block);
    allocator.settle();
    t.free = seconds_since(freeing);
    return t;
  }

  // After a sample released everything (its allocator destroyed).
  void record_memory_returned() {
    log_.record({memory_returned_check(free_before_, mem_info().free, first_free_, total_)});
  }

  Sample measure_alloc_free() {
    std::vector<double> alloc, free;
    alloc.reserve(round_trips_);
    free.reserve(round_trips_);
    {
      const auto allocator = make_device_allocator(r_, device_);
      round_trip(*allocator);  // untimed: a pool's first growth is not the steady state
      for (std::uint64_t i = 0; i < round_trips_; ++i) {
        const RoundTrip t = round_trip(*allocator);
        alloc.push_back(t.alloc);
        free.push_back(t.free);
      }
    }
    record_memory_returned();
    double total = 0;
    for (std::size_t i = 0; i < alloc.size(); ++i) total += alloc[i] + free[i];
    return SampleBuilder(metrics())
        .operations("alloc_time", std::move(alloc))
        .operations("free_time", std::move(free))
        .build(total);
  }

  bool caching() const { return r_.allocator == DeviceMemoryRequest::Allocator::kCaching; }
  bool trims() const { return r_.release_threshold == Threshold::kTrimToZero; }

  Sample measure_fragmentation() {
    FragmentationOutcome out;
    double replay_seconds = 0;
    std::uint64_t held_after_replay = 0, free_drop = 0, fill_bytes = 0;
    std::vector<PoolStep> steps;
    {
      const auto allocator = make_device_allocator(r_, device_);
      // What a pool holds now (after synchronising its stream when `sync`); nothing to record
      // for the others, whose settle() is a no-op.
      auto step = [&](std::string_view name, bool sync) {
        if (sync) allocator->settle();
        if (const auto usage = allocator->pool_usage()) {
          steps.push_back({std::string(name), sync, usage->reserved, usage->used, mem_info().free});
        }
      };
      auto trim_step = [&](std::string_view name) {
        allocator->trim_to(0);
        step(name, false);
      };
      LiveBlocks live(*allocator);
      // The phase boundaries: the threshold acts at these synchronisations.
      auto at_boundary = [&](std::size_t i) {
        if (i == pattern_.holes_begin) {
          step(pool_step::kFill, true);
          fill_bytes = live.bytes();
        }
        if (i == pattern_.larger_begin) {
          step(pool_step::kHolesFreed, false);
          step(pool_step::kHolesSynced, true);
          if (trims()) trim_step(pool_step::kHolesTrimmed);
        }
      };
      const auto start = std::chrono::steady_clock::now();
      for (std::size_t i = 0; i < pattern_.events.size(); ++i) {
        at_boundary(i);
        const AllocationEvent& e = pattern_.events[i];
        if (e.kind == AllocationEvent::Kind::kFree) {
          live.release(e.id);
          continue;
        }
        const auto block = allocator->allocate(e.bytes);
        if (!block) {
          throw CaseFailure("out of memory at event " + std::to_string(i) + " of the replay (" +
                            format_bytes(e.bytes) + " with " + format_bytes(live.bytes()) +
                            " held, budget " + format_bytes(budget_) +
                            "): another process took GPU memory since the case started?");
        }
        live.add(e.id, *block);
      }
      at_boundary(pattern_.events.size());
      step(pool_step::kLarger, true);
      replay_seconds = seconds_since(start);
      held_after_replay = live.bytes();

      out.reported_free = mem_info().free;
      out.pool_idle = allocator->idle_bytes();
      free_drop = free_before_ > out.reported_free ? free_before_ - out.reported_free : 0;
      auto fits = [&](std::uint64_t bytes) {
        const auto probe = allocator->allocate(bytes);
        if (!probe) return false;
        allocator->free(*probe);
        allocator->settle();
        return true;
      };
      out.largest_block = largest_fitting(fits, out.available(), kDeviceMemoryGranularity,
                                          kMaxBisectionSteps, &out.bisection_steps);

      LiveBlocks more(*allocator);
      while (out.allocations_until_oom < kMaxAllocationsUntilOom) {
        const auto block = allocator->allocate(r_.mix.largest());
        if (!block) {
          out.oom_reached = true;
          break;
        }
        more.add(static_cast<std::uint32_t>(out.allocations_until_oom++), *block);
      }
      step(pool_step::kUntilOom, false);
      more.free_all();
      live.free_all();
      step(pool_step::kAllFreed, false);
      step(pool_step::kAllSynced, true);
      if (trims()) trim_step(pool_step::kAllTrimmed);
    }
    record_memory_returned();
    std::vector<Check> fresh;
    if (!steps.empty()) fresh.push_back(pool_steps_check(steps, *r_.release_threshold, fill_bytes));
    record_outcome(out, held_after_replay, free_drop, std::move(fresh));
    SampleBuilder sample(metrics());
    sample.value("largest_block", static_cast<double>(out.largest_block))
        .value("reported_free", static_cast<double>(out.reported_free))
        .value("fragmentation_ratio", out.fragmentation_ratio())
        .value("allocations_until_oom", static_cast<double>(out.allocations_until_oom));
    if (!steps.empty()) {
      const PoolFigures f = pool_figures(steps, *r_.release_threshold);
      sample.value("reserved_after_sync", static_cast<double>(f.reserved_after_sync))
          .value("used_after_sync", static_cast<double>(f.used_after_sync))
          .value("released_at_sync", static_cast<double>(f.released_at_sync));
      if (trims()) sample.value("released_by_trim", static_cast<double>(f.released_by_trim));
    }
    return sample.build(replay_seconds);
  }

  // The caching allocator's replay: the pattern, then the mix's largest size until a failure.
  Sample measure_caching_replay() {
    CachingReplayOutcome out;
    double seconds = 0;
    {
      const auto segments = make_cuda_malloc_segments();
      CachingAllocator allocator(*segments);
      const auto start = std::chrono::steady_clock::now();
      out = run_caching_replay(allocator, pattern_, r_.mix.largest(), kMaxAllocationsUntilOom,
                               [] { return mem_info().free; });
      seconds = seconds_since(start);
    }
    record_memory_returned();
    log_.record(caching_replay_checks(out, free_before_, device_memory_tolerance(total_)));
    const CachingStats& at = out.at_failure;
    return SampleBuilder(metrics())
        .value("allocations_until_oom", static_cast<double>(out.allocations_until_failure))
        .value("free_at_oom", static_cast<double>(out.free_at_failure))
        .value("reserved_at_oom", static_cast<double>(at.reserved))
        .value("allocated_at_oom", static_cast<double>(at.allocated))
        .value("reserved_unused_at_oom", static_cast<double>(at.reserved_unused()))
        .value("largest_cached_block", static_cast<double>(at.largest_free_block))
        .build(seconds);
  }

  void record_outcome(const FragmentationOutcome& out, std::uint64_t held, std::uint64_t drop,
                      std::vector<Check> fresh) {
    const std::uint64_t tolerance = device_memory_tolerance(total_);
    // The replay's blocks really took device memory: the driver's free memory fell by what the
    // replay holds at least (a pool may hold more: its idle bytes).
    fresh.push_back({"replay_resident",
                     drop + tolerance >= held,
                     "the replay held " + format_bytes(held) +
                         "; the driver's free memory fell "
                         "by " +
                         format_bytes(drop) + " (tolerance " + format_bytes(tolerance) + ")",
                     {{"held", held}, {"free_drop", drop}}});
    fresh.push_back({"largest_block",
                     out.largest_block <= out.available(),
                     format_bytes(out.largest_block) + " in " +
                         std::to_string(out.bisection_steps) + " probes, of " +
                         format_bytes(out.reported_free) + " free (driver) + " +
                         format_bytes(out.pool_idle) + " idle in the pool",
                     {{"largest_block", out.largest_block},
                      {"reported_free", out.reported_free},
                      {"pool_idle", out.pool_idle},
                      {"available", out.available()},
                      {"bisection_steps", out.bisection_steps}}});
    fresh.push_back({"oom_reached", out.oom_reached,
                     out.oom_reached
                         ? std::to_string(out.allocations_until_oom) + " allocations of " +
                               format_bytes(r_.mix.largest()) +
                               " succeeded before the first out-of-memory (caught)"
                         : "no out-of-memory after " + std::to_string(kMaxAllocationsUntilOom) +
                               " allocations: allocations_until_oom is a lower bound",
                     out.allocations_until_oom});
    log_.record(std::move(fresh));
  }

  Check pattern_check() const {
    return {"pattern",
            pattern_.allocations > 0 && pattern_.peak_live_bytes <= budget_,
            "seed " + std::to_string(r_.seed) + ", mix " + r_.mix.name + ": " +
                std::to_string(pattern_.allocations) + " allocations, " +
                std::to_string(pattern_.frees) + " frees; peak " +
                format_bytes(pattern_.peak_live_bytes) + " within the budget " +
                format_bytes(budget_) + " (" + std::to_string(r_.budget_pct) + " % of " +
                format_bytes(free_before_) + " free), " + format_bytes(pattern_.final_live_bytes) +
                " live after it",
            {{"seed", r_.seed},
             {"budget", budget_},
             {"allocations", pattern_.allocations},
             {"frees", pattern_.frees},
             {"peak_live_bytes", pattern_.peak_live_bytes},
             {"final_live_bytes", pattern_.final_live_bytes}}};
  }

  DeviceMemoryRequest r_;
  int device_;
  std::uint64_t free_before_ = 0, total_ = 0, first_free_ = 0;
  Check allocator_check_;
  std::uint64_t budget_ = 0;
  FragmentationPattern pattern_;
  std::uint64_t round_trips_ = kMinRoundTrips;
  std::uint64_t verified_ = 0;
  CheckLog log_;
};

}  // namespace

std::unique_ptr<CaseBench> make_device_memory_bench(const DeviceMemoryRequest& r, int device) {
  return std::make_unique<DeviceMemoryBench>(r, device);
}

}  // namespace pathbench
