// The `copy` family on one GPU: H2D / D2H / D2D copies of a block, a latency loop, and the cost of
// pinning or registering host memory.
#include <algorithm>
#include <cstring>
#include <iterator>
#include <optional>
#include <vector>

#include "bench/copy.hpp"
#include "core/host_clock.hpp"
#include "core/units.hpp"
#include "cuda/cuda_resources.hpp"
#include "cuda/device_pattern.hpp"
#include "measure/block_bench.hpp"
#include "measure/latched_clock.hpp"
#include "measure/pattern.hpp"
#include "measure/placed_host_memory.hpp"
#include "measure/timeline_checks.hpp"
#include "placement/memory_policy.hpp"
#include "placement/thread_placement.hpp"

namespace pathbench {

namespace {

constexpr std::uint64_t kSeed = 0x70617468u;      // "path"
constexpr std::uint64_t kBackSeed = 0x62696469u;  // "bidi": the D2H half of bidir

HostMemoryKind kind_of(const CopyRequest& r) {
  if (r.pinned()) return HostMemoryKind::kPinned;
  return r.pageable() ? HostMemoryKind::kPageable : HostMemoryKind::kRegistered;
}

std::unique_ptr<OperationClock> clock_for(const CopyRequest& r, const Stream& stream,
                                          const std::optional<Stream>& back, int device) {
  // Pageable copies are staged by the driver through the calling thread: the host clock.
  if (r.pageable()) {
    return std::make_unique<HostClock>([&stream] { stream.synchronize(); },
                                       "pageable copies are staged synchronously by the driver");
  }
  if (back) {  // bidir: one latch releases both directions, each timed by its own events
    return std::make_unique<LatchedClock>(
        std::vector<DeviceStream>{{device, stream.get()}, {device, back->get()}});
  }
  return std::make_unique<LatchedClock>(stream.get());
}

bool bidir(const CopyRequest& r) { return r.direction == CopyDirection::kBidir; }

BlockShape shape_of(const CopyRequest& r) {
  BlockShape s;
  // A latched block must be enqueued while the latch holds the stream; a few hundred copies stay
  // well inside the driver's queue, so enqueueing never blocks.
  s.max_ops = r.pageable() ? 20000 : 256;
  s.latency = r.measure == CopyMeasure::kLatency;
  s.lanes = bidir(r) ? 2 : 1;
  s.bytes_per_op = r.bytes;
  s.verified = bidir(r) ? "both directions' destinations matched their own patterns"
                        : "destination matched the pattern";
  return s;
}

// Host memory and the measuring thread of a case, on the GPU's node (or a remote one).
struct HostSide {
  HostSide(const CopyRequest& r, const Machine& machine, int device)
      : node(host_node_for(machine, device, r.remote)), thread(machine, node) {}
  int node;
  ThreadPlacement thread;
};

class CopyBench final : public BlockBench {
 public:
  CopyBench(const CopyRequest& r, const Machine& machine, int device)
      : BlockBench(shape_of(r)), r_(r), device_(make_current(device)) {
    if (bidir(r)) back_stream_.emplace();
    use_clock(clock_for(r, stream_, back_stream_, device));
    if (r.host) {
      host_side_.emplace(r, machine, device);
      host_ = PlacedHostMemory({kind_of(r), r.bytes, r.page(), host_side_->node});
      checks_ = bidir(r) ? host_.checks("H2D source", "_h2d") : host_.checks();
      if (bidir(r)) {
        back_host_ = PlacedHostMemory({kind_of(r), r.bytes, r.page(), host_side_->node});
        std::ranges::move(back_host_.checks("D2H destination", "_d2h"),
                          std::back_inserter(checks_));
      }
      checks_.push_back(host_side_->thread.check());
    }
    a_ = DeviceMemory(r.bytes);
    if (r.direction == CopyDirection::kD2D || bidir(r)) b_ = DeviceMemory(r.bytes);
    if (r.direction == CopyDirection::kH2D || bidir(r))
      fill_pattern({host_.data(), r.bytes}, kSeed);
    if (r.direction != CopyDirection::kH2D) {
      // d2h and d2d copy from a_; bidir's D2H half from b_, with its own pattern.
      fill_pattern_on_device(bidir(r) ? b_.get() : a_.get(), r.bytes, bidir(r) ? kBackSeed : kSeed,
                             stream_.get());
      stream_.synchronize();
    }
  }

  std::vector<MetricSpec> metrics() const override { return copy_metrics(r_); }

  // The driver's view of the copies: which memory kind it saw on the host side, and how many
  // copies one sample issued.
  // Pageable copies may be split into several records by the driver's staging; pinned and
  // device copies are one record each.
  std::vector<Check> timeline_checks(const Timeline&, const TimelineAnalysis& a) const override {
    TimelineCopyExpectation e{std::nullopt,
                              ops() * shape().lanes + (shape().latency ? round_trip_ops() : 0),
                              r_.pageable()};
    if (r_.direction == CopyDirection::kH2D) e.host_kind = r_.pageable() ? "pageable" : "pinned";
    return timeline_copy_checks(a, e);
  }

 private:
  void enqueue(std::uint64_t ops) override {
    const cudaStream_t s = stream_.get();
    for (std::uint64_t i = 0; i < ops; ++i) {
      switch (*r_.direction) {
        case CopyDirection::kH2D:
          PB_CUDA(cudaMemcpyAsync(a_.get(), host_.data(), r_.bytes, cudaMemcpyHostToDevice, s));
          break;
        case CopyDirection::kD2H:
          PB_CUDA(cudaMemcpyAsync(host_.data(), a_.get(), r_.bytes, cudaMemcpyDeviceToHost, s));
          break;
        case CopyDirection::kD2D:
          PB_CUDA(cudaMemcpyAsync(b_.get(), a_.get(), r_.bytes, cudaMemcpyDeviceToDevice, s));
          break;
        case CopyDirection::kBidir:  // interleaved: a host-timed fallback still issues both
          PB_CUDA(cudaMemcpyAsync(a_.get(), host_.data(), r_.bytes, cudaMemcpyHostToDevice, s));
          PB_CUDA(cudaMemcpyAsync(back_host_.data(), b_.get(), r_.bytes, cudaMemcpyDeviceToHost,
                                  back_stream_->get()));
          break;
      }
    }
  }

  void complete() override {
    stream_.synchronize();
    if (back_stream_) back_stream_->synchronize();
  }

  void before_sample() override {
    if (r_.direction == CopyDirection::kD2H || bidir(r_)) {
      std::memset((bidir(r_) ? back_host_ : host_).data(), 0, r_.bytes);
    }
    if (r_.direction != CopyDirection::kD2H) {
      const auto* dst = r_.direction == CopyDirection::kD2D ? &b_ : &a_;
      PB_CUDA(cudaMemsetAsync(dst->get(), 0, r_.bytes, stream_.get()));
    }
    stream_.synchronize();
  }

  void check_destination() override {
    const std::string what = "copy destination after the timed block";
    if (r_.direction == CopyDirection::kD2H || bidir(r_)) {
      verify_pattern({(bidir(r_) ? back_host_ : host_).data(), r_.bytes},
                     bidir(r_) ? kBackSeed : kSeed, bidir(r_) ? "D2H " + what : what);
    }
    if (r_.direction != CopyDirection::kD2H) {
      const auto& dst = r_.direction == CopyDirection::kD2D ? b_ : a_;
      checker_.verify(dst.get(), r_.bytes, kSeed, stream_.get(), bidir(r_) ? "H2D " + what : what);
    }
  }

  std::vector<double> values(const BlockTimes& t) const override {
    const double seconds = t.slowest(), ops = static_cast<double>(t.ops);
    const double per_copy = seconds / ops, bytes = static_cast<double>(r_.bytes) * ops;
    if (shape().latency) return {per_copy, t.round_trip};
    if (bidir(r_)) {  // each direction over its own events, the sum over the slower one's
      return {2 * bytes / seconds / kGB, bytes / t.seconds.at(0) / kGB,
              bytes / t.seconds.at(1) / kGB, per_copy};
    }
    return {bytes / seconds / kGB, per_copy};
  }

  CopyRequest r_;
  int device_;  // current before anything of the case is created
  Stream stream_;
  std::optional<Stream> back_stream_;  // bidir: the D2H half
  std::optional<HostSide> host_side_;  // first in, last out: restores the thread
  PlacedHostMemory host_, back_host_;  // back_host_: bidir's D2H destination
  DevicePatternChecker checker_;
  DeviceMemory a_, b_;
};

// alloc_cost: each sample pins (cudaMallocHost) or registers (cudaHostRegister) a fresh buffer.
class PinCostBench final : public CaseBench {
 public:
  PinCostBench(const CopyRequest& r, const Machine& machine, int device)
      : r_(r), host_side_(r, machine, device) {
    PB_CUDA(cudaSetDevice(device));
  }

  TimingMethod timing_method() const override { return TimingMethod::kHostSteadyClock; }
  std::vector<MetricSpec> metrics() const override { return copy_metrics(r_); }
  // The first pin of a process pays for driver set-up; not counted.
  void warm_up(double) override { sample(); }
  Sample measure() override {
    const double seconds = sample();
    return {seconds, {seconds / (static_cast<double>(r_.bytes) / kGiB)}};
  }
  void verify() override {}
  std::vector<Check> checks() const override {
    std::vector<Check> all{kind_};
    all.push_back(host_side_.thread.check());
    return all;
  }
  std::uint64_t operations_per_sample() const override { return 1; }
  std::uint64_t bytes_per_sample() const override { return r_.bytes; }
  std::string timing_detail() const override {
    return "host steady clock around each cudaMallocHost or cudaHostRegister of a fresh buffer";
  }

 private:
  double sample() {
    if (r_.pinned()) {
      MemoryPolicyScope policy(host_side_.node);
      PinnedHostMemory memory;
      const double seconds = time_on_host([&] { memory = PinnedHostMemory(r_.bytes); });
      kind_ = host_memory_kind_check(memory.get(), cudaMemoryTypeHost, "host buffer");
      return seconds;  // freed outside the timed region
    }
    HostBuffer buffer(HostBufferRequest{r_.bytes, *r_.page(), host_side_.node});
    buffer.touch();
    HostRegistration registration;
    const double seconds =
        time_on_host([&] { registration = HostRegistration(buffer.data(), r_.bytes); });
    kind_ = host_memory_kind_check(buffer.data(), cudaMemoryTypeHost, "host buffer");
    return seconds;
  }

  CopyRequest r_;
  HostSide host_side_;
  Check kind_{"host_memory_kind", false, "no buffer was pinned", nullptr};
};

}  // namespace

std::unique_ptr<CaseBench> make_copy_bench(const CopyRequest& r, const Machine& machine,
                                           int device) {
  if (r.measure == CopyMeasure::kAllocCost)
    return std::make_unique<PinCostBench>(r, machine, device);
  return std::make_unique<CopyBench>(r, machine, device);
}

}  // namespace pathbench
