// The `copy` family: H2D / D2H / D2D bandwidth and latency, and the cost of pinning memory.
#include <sched.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "bench/copy_family.hpp"
#include "bench/copy_host.hpp"
#include "core/errors.hpp"
#include "core/units.hpp"
#include "cuda/cuda_resources.hpp"
#include "cuda/device_pattern.hpp"
#include "cuda/gpu_block_timer.hpp"
#include "cuda/memory_type.hpp"
#include "measure/host_clock.hpp"
#include "measure/pattern.hpp"
#include "placement/host_buffer.hpp"
#include "placement/memory_policy.hpp"
#include "placement/page_placement.hpp"
#include "placement/smaps.hpp"
#include "placement/thread_affinity.hpp"

namespace pathbench {

namespace {

constexpr std::uint64_t kSeed = 0x70617468u;  // "path"
// A latched block must be enqueued while the latch holds the stream; a few hundred copies stay
// well inside the driver's queue, so enqueueing never blocks.
constexpr std::uint64_t kMaxLatchedOps = 256;
constexpr std::uint64_t kMaxHostOps = 20000;
constexpr double kMinPlacedFraction = 0.99;
constexpr double kMinHugeFraction = 0.9;

using Direction = CopyRequest::Direction;
using HostKind = CopyRequest::HostKind;
using Measure = CopyRequest::Measure;

// Where the case's host memory and thread live, decided from the GPU's NUMA node.
struct HostPlacement {
  int node = 0;
  std::vector<int> cpus;
};

HostPlacement host_placement(const CopyRequest& r, const Machine& machine, int device) {
  const auto local = machine.gpu_local_node(device);
  const auto remote = machine.gpu_remote_node(device);
  if (!local || (r.remote && !remote)) {
    throw SkipCase("the GPU's local or a remote NUMA node is not available on this machine");
  }
  HostPlacement p;
  p.node = r.remote ? *remote : *local;
  if (const auto* cpus = machine.cpus_of_node(p.node)) p.cpus = *cpus;
  return p;
}

}  // namespace

void allocate_copy_host_memory(CopyHostMemory& memory, const CopyRequest& r, int node) {
  if (r.host_kind == HostKind::kNone) return;
  if (r.host_kind == HostKind::kPinned) {
    MemoryPolicyScope policy(node);
    memory.pinned = PinnedHostMemory(r.bytes);
    memory.ptr = memory.pinned.get();
    return;
  }
  const auto page = page_type_from_string(r.page);
  memory.buffer.emplace(HostBufferRequest{r.bytes, page.value_or(PageType::k4K), node});
  memory.buffer->touch();
  memory.ptr = memory.buffer->data();
  if (r.host_kind == HostKind::kRegistered) {
    memory.registration = HostRegistration(memory.ptr, r.bytes);
  }
}

Check host_memory_kind_check(const void* ptr, cudaMemoryType expected) {
  cudaPointerAttributes attr{};
  PB_CUDA(cudaPointerGetAttributes(&attr, ptr));
  return Check{"host_memory_kind", attr.type == expected,
               "CUDA reports the host buffer as " + memory_type_name(attr.type) + ", expected " +
                   memory_type_name(expected),
               memory_type_name(attr.type)};
}

std::vector<Check> host_buffer_checks(const CopyRequest& r, const std::byte* ptr, int node) {
  std::vector<Check> checks;
  const PagePlacement where = query_page_placement(ptr, r.bytes);
  const double on_node = where.fraction_on(node);
  if (r.host_kind == HostKind::kPinned && where.pages_error == where.pages_sampled) {
    // Driver-allocated pinned pages are not visible to move_pages; say so rather than guess.
    checks.push_back({"host_placement", true,
                      "move_pages cannot see cudaMallocHost pages (" + where.describe() +
                          "); allocated under MPOL_BIND to node " + std::to_string(node),
                      nullptr});
  } else {
    checks.push_back({"host_placement", on_node >= kMinPlacedFraction,
                      where.describe() + " (wanted node " + std::to_string(node) + ")", on_node});
  }

  if (!r.page.empty()) {
    const auto backing = query_huge_backing(ptr, r.bytes);
    if (!backing) {
      checks.push_back({"huge_backing", false, "the buffer is not in /proc/self/smaps", nullptr});
    } else if (r.page == "4k") {
      checks.push_back({"huge_backing", backing->huge_kb == 0,
                        backing->describe() + " (wanted 4 KiB pages only)", backing->fraction()});
    } else {
      checks.push_back({"huge_backing", backing->fraction() >= kMinHugeFraction,
                        backing->describe() + " (wanted huge pages)", backing->fraction()});
    }
  }
  return checks;
}

namespace {

class CopyBench final : public CaseBench {
 public:
  CopyBench(const CaseSpec& spec, const Machine& machine, int device)
      : request_(decode_copy_request(spec)), device_(device) {
    PB_CUDA(cudaSetDevice(device));
    if (request_.host_kind != HostKind::kNone) {
      placement_ = host_placement(request_, machine, device);
      if (!placement_->cpus.empty()) affinity_.emplace(placement_->cpus);
    }
    stream_.emplace();
    if (request_.measure == Measure::kAllocCost) return;  // each sample allocates its own
    timer_.emplace();
    checker_.emplace();
    allocate_host();
    allocate_device();
    fill_sources();
    record_placement_checks();
  }

  TimingMethod timing_method() const override {
    return latched() && !(timer_ && timer_->host_timed()) ? TimingMethod::kCudaEventsLatched
                                                          : TimingMethod::kHostSteadyClock;
  }

  std::vector<MetricSpec> metrics() const override { return copy_metrics(request_); }

  void warm_up(double min_time) override {
    if (request_.measure == Measure::kAllocCost) {
      alloc_sample();  // the first pin of a process pays for driver set-up; not counted
      return;
    }
    ops_ = 1;
    clear_destination();
    timed_copies(1);  // first touch of the copy path: not counted
    constexpr std::uint64_t kProbeOps = 4;
    const double per_op = timed_copies(kProbeOps) / kProbeOps;
    const double budget = request_.measure == Measure::kLatency ? min_time / 2 : min_time;
    ops_ = operations_for(budget, per_op, latched() ? kMaxLatchedOps : kMaxHostOps);
    if (request_.measure == Measure::kLatency) {
      const double rt = round_trip(4) / 4;
      round_trip_ops_ = operations_for(min_time / 2, rt, kMaxHostOps);
    }
  }

  Sample measure() override {
    if (request_.measure == Measure::kAllocCost) {
      const double seconds = alloc_sample();
      return {seconds, {seconds / (static_cast<double>(request_.bytes) / kGiB)}};
    }
    clear_destination();
    const double seconds = timed_copies(ops_);
    const double per_copy = seconds / static_cast<double>(ops_);
    if (request_.measure == Measure::kLatency) {
      return {seconds, {per_copy, round_trip(round_trip_ops_) / round_trip_ops_}};
    }
    return {seconds, {static_cast<double>(request_.bytes) * ops_ / seconds / kGB, per_copy}};
  }

  void verify() override {
    if (request_.measure == Measure::kAllocCost) return;
    const std::string what = "copy destination after the timed block";
    switch (request_.direction) {
      case Direction::kH2D:
        checker_->verify(device_a_.get(), request_.bytes, kSeed, stream_->get(), what);
        break;
      case Direction::kD2H:
        verify_pattern({host_ptr_, request_.bytes}, kSeed, what);
        break;
      case Direction::kD2D:
        checker_->verify(device_b_.get(), request_.bytes, kSeed, stream_->get(), what);
        break;
    }
    copies_verified_ = true;
  }

  std::vector<Check> checks() const override {
    std::vector<Check> all = checks_;
    if (request_.measure != Measure::kAllocCost) {
      all.push_back({"copy_pattern", copies_verified_,
                     copies_verified_ ? "destination matched the pattern after every sample"
                                      : "no sample was verified",
                     nullptr});
    }
    return all;
  }

  // The driver's view of the copies: which memory kind it saw on the host side, and how many
  // copies one sample issued.
  std::vector<Check> timeline_checks(const Timeline&, const TimelineAnalysis& a) const override {
    if (request_.measure == Measure::kAllocCost) return {};
    std::vector<Check> out;
    std::size_t copies = 0;
    std::size_t as_requested = 0;
    const char* wanted = pageable() ? "pageable" : "pinned";
    for (const auto& [kind, n] : a.copies_by_source_kind) copies += n;
    if (request_.direction == Direction::kH2D) {
      const auto it = a.copies_by_source_kind.find(wanted);
      as_requested = it == a.copies_by_source_kind.end() ? 0 : it->second;
      out.push_back({"timeline_memory_kind", copies > 0 && as_requested == copies,
                     std::to_string(as_requested) + " of " + std::to_string(copies) +
                         " copies on the timeline read " + wanted + " host memory",
                     wanted});
    }
    // Pageable copies may be split into several records by the driver's staging; pinned and
    // device copies are one record each.
    const std::uint64_t expected =
        request_.measure == Measure::kLatency ? ops_ + round_trip_ops_ : ops_;
    const bool count_ok = pageable() ? a.copies >= expected : a.copies == expected;
    out.push_back({"timeline_copies", count_ok,
                   std::to_string(a.copies) + " copy records for " + std::to_string(expected) +
                       " copies issued in one sample",
                   a.copies});
    return out;
  }

  std::uint64_t operations_per_sample() const override {
    return request_.measure == Measure::kAllocCost ? 1 : ops_;
  }
  std::uint64_t bytes_per_sample() const override {
    return request_.bytes * operations_per_sample();
  }

 private:
  bool pageable() const { return request_.host_kind == HostKind::kPageable; }
  bool latched() const { return request_.measure != Measure::kAllocCost && !pageable(); }

  void allocate_host() {
    if (request_.host_kind == HostKind::kNone) return;
    allocate_copy_host_memory(host_, request_, placement_->node);
    host_ptr_ = host_.ptr;
  }

  void allocate_device() {
    device_a_ = DeviceMemory(request_.bytes);
    if (request_.direction == Direction::kD2D) device_b_ = DeviceMemory(request_.bytes);
  }

  void fill_sources() {
    if (request_.direction == Direction::kH2D) {
      fill_pattern({host_ptr_, request_.bytes}, kSeed);
    } else {
      fill_pattern_on_device(device_a_.get(), request_.bytes, kSeed, stream_->get());
      stream_->synchronize();
    }
  }

  void clear_destination() {
    switch (request_.direction) {
      case Direction::kH2D:
        PB_CUDA(cudaMemsetAsync(device_a_.get(), 0, request_.bytes, stream_->get()));
        break;
      case Direction::kD2H:
        std::memset(host_ptr_, 0, request_.bytes);
        break;
      case Direction::kD2D:
        PB_CUDA(cudaMemsetAsync(device_b_.get(), 0, request_.bytes, stream_->get()));
        break;
    }
    stream_->synchronize();
  }

  void enqueue_copy() const {
    const cudaStream_t s = stream_->get();
    switch (request_.direction) {
      case Direction::kH2D:
        PB_CUDA(
            cudaMemcpyAsync(device_a_.get(), host_ptr_, request_.bytes, cudaMemcpyHostToDevice, s));
        break;
      case Direction::kD2H:
        PB_CUDA(
            cudaMemcpyAsync(host_ptr_, device_a_.get(), request_.bytes, cudaMemcpyDeviceToHost, s));
        break;
      case Direction::kD2D:
        PB_CUDA(cudaMemcpyAsync(device_b_.get(), device_a_.get(), request_.bytes,
                                cudaMemcpyDeviceToDevice, s));
        break;
    }
  }

  // Seconds for `ops` copies: CUDA events around a latched block, or, for pageable memory whose
  // copies the driver stages synchronously through the calling thread, the host's steady clock
  // around the calls and the final stream synchronisation.
  double timed_copies(std::uint64_t ops) {
    if (latched()) {
      return timer_->time_block(stream_->get(), [&] {
        for (std::uint64_t i = 0; i < ops; ++i) enqueue_copy();
      });
    }
    return time_on_host([&] {
      for (std::uint64_t i = 0; i < ops; ++i) enqueue_copy();
      stream_->synchronize();
    });
  }

  // Host-observed time from issuing a copy to seeing it complete, over `ops` round trips.
  double round_trip(std::uint64_t ops) {
    return time_on_host([&] {
      for (std::uint64_t i = 0; i < ops; ++i) {
        enqueue_copy();
        stream_->synchronize();
      }
    });
  }

  double alloc_sample() {
    const std::size_t bytes = request_.bytes;
    if (request_.host_kind == HostKind::kPinned) {
      MemoryPolicyScope policy(placement_->node);
      PinnedHostMemory memory;
      const double seconds = time_on_host([&] { memory = PinnedHostMemory(bytes); });
      record_memory_kind(memory.get(), cudaMemoryTypeHost);
      return seconds;  // freed outside the timed region
    }
    const auto page = page_type_from_string(request_.page).value_or(PageType::k4K);
    HostBuffer buffer(HostBufferRequest{bytes, page, placement_->node});
    buffer.touch();
    HostRegistration registration;
    const double seconds =
        time_on_host([&] { registration = HostRegistration(buffer.data(), bytes); });
    record_memory_kind(buffer.data(), cudaMemoryTypeHost);
    return seconds;
  }

  void record_memory_kind(const void* ptr, cudaMemoryType expected) {
    std::erase_if(checks_, [](const Check& x) { return x.name == "host_memory_kind"; });
    checks_.push_back(host_memory_kind_check(ptr, expected));
  }

  void record_placement_checks() {
    if (request_.host_kind == HostKind::kNone) return;
    record_memory_kind(host_ptr_, pageable() ? cudaMemoryTypeUnregistered : cudaMemoryTypeHost);
    for (auto& c : host_buffer_checks(request_, host_ptr_, placement_->node)) {
      checks_.push_back(std::move(c));
    }

    if (!placement_->cpus.empty()) {
      const int cpu = sched_getcpu();
      const bool on_node = std::find(placement_->cpus.begin(), placement_->cpus.end(), cpu) !=
                           placement_->cpus.end();
      checks_.push_back({"thread_placement", on_node,
                         "measuring thread runs on CPU " + std::to_string(cpu) + " (node " +
                             std::to_string(placement_->node) + ")",
                         cpu});
    }
  }

  CopyRequest request_;
  int device_;
  std::optional<HostPlacement> placement_;
  std::optional<ThreadAffinityScope> affinity_;  // first in, last out: restores the thread
  std::optional<Stream> stream_;
  std::optional<GpuBlockTimer> timer_;
  std::optional<DevicePatternChecker> checker_;
  CopyHostMemory host_;
  std::byte* host_ptr_ = nullptr;
  DeviceMemory device_a_, device_b_;
  std::uint64_t ops_ = 1;
  std::uint64_t round_trip_ops_ = 1;
  bool copies_verified_ = false;
  std::vector<Check> checks_;
};

class CopyFamily final : public CopyFamilyBase {
 public:
  std::unique_ptr<CaseBench> prepare(const CaseSpec& spec, const Machine& machine,
                                     int device) const override {
    if (decode_copy_request(spec).all_gpus) return make_copy_all_gpus_bench(spec, machine);
    return std::make_unique<CopyBench>(spec, machine, device);
  }
};

}  // namespace

std::unique_ptr<Family> make_copy_family() { return std::make_unique<CopyFamily>(); }

}  // namespace pathbench
