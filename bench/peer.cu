// The `peer` family's CUDA bench. A sample is one block on a "control" stream, the forward
// direction's first (the source's; the destination's for sm_read), whose device holds the latch
// and the clock's events. Every other stream, on either GPU, waits on a fork event the control
// stream records after the latch, and the control stream waits on a join event of each at the
// end: the latch holds all of it, and the clock's events span the work on both GPUs.
#include <cuda_runtime_api.h>

#include <algorithm>

#include "bench/peer.hpp"
#include "core/errors.hpp"
#include "core/units.hpp"
#include "cuda/device_copy.hpp"
#include "cuda/device_pattern.hpp"
#include "cuda/multi_device.hpp"
#include "cuda/peer_access.hpp"
#include "measure/block_bench.hpp"
#include "measure/latched_clock.hpp"
#include "measure/link_check.hpp"
#include "measure/placed_host_memory.hpp"

namespace pathbench {

namespace {

constexpr std::uint64_t kSeed = 0x70656572u;  // "peer"
// A latched block must be enqueued while the latch holds the stream: a few hundred copies per
// stream, or two_hop chunks per direction (each a D2H, an H2D and four event operations).
constexpr std::uint64_t kMaxLatchedOps = 256;
constexpr std::uint64_t kMaxLatchedChunks = 128;
// The probing block moves at most this much per direction, so probing a large copy does not take
// seconds; no block of the case is larger than the probed one.
constexpr std::uint64_t kMaxProbeBytes = std::uint64_t{8} << 30;
constexpr unsigned kSync = cudaEventDisableTiming;  // events that only order streams

using Method = PeerRequest::Method;

// two_hop's ring of pinned staging slots for one direction, near the source GPU when its NUMA
// node is known and usable: each chunk goes D2H on the source's stream into the next slot, then
// H2D on the destination's; `full` orders a slot's D2H before its H2D and `free` the H2D before
// the slot's next D2H, so the two hops of consecutive chunks overlap.
struct StagingRing {
  StagingRing(const PeerRequest& r, int src, int dst, const Machine& machine)
      : chunk(r.staging_chunk_bytes()), slots(std::min(kPeerStagingSlots, r.staging_chunks())) {
    const auto node = machine.gpu_local_node(src);
    const bool placed = node && machine.cpus_of_node(*node) != nullptr;
    memory = PlacedHostMemory({HostMemoryKind::kPinned, slots * chunk, std::nullopt,
                               placed ? node : std::nullopt, cudaHostAllocPortable});
    for (std::uint64_t k = 0; k < slots; ++k) {
      full.push_back(on_device<Event>(src, kSync));
      free.push_back(on_device<Event>(dst, kSync));
    }
    check = host_memory_kind_check(
        memory.data(), cudaMemoryTypeHost,
        "staging buffer of GPU " + std::to_string(src) + " -> GPU " + std::to_string(dst) + " (" +
            std::to_string(r.staging_chunks()) + " chunk(s) of " + format_bytes(chunk) +
            " per copy through " + std::to_string(slots) + " pinned slot(s)" +
            (placed ? " on NUMA node " + std::to_string(*node) : "") + ")");
    check.name = "staging_memory";
  }

  std::uint64_t chunk, slots, next = 0;
  PlacedHostMemory memory;
  std::vector<Event> full, free;  // full on the source, free on the destination
  Check check;
};

// One direction of the case, src -> dst.
struct Lane {
  Lane(const PeerRequest& r, int s, int d, std::uint64_t seed, const Machine& machine)
      : src(s, r.bytes),
        dst(d, r.bytes),
        base_seed(seed),
        seed(seed),
        checker(on_device<DevicePatternChecker>(d)),
        home(r.method == Method::kSmRead ? dst.on() : src.on()),
        start(on_device<Event>(home.device)),
        end(on_device<Event>(home.device)),
        joined(on_device<Event>(home.device, kSync)) {
    if (r.method == Method::kSmRead) reader.emplace(d, r.bytes);
    if (r.method == Method::kTwoHop) {
      staging.emplace(r, s, d, machine);
      second_done.emplace(on_device<Event>(d, kSync));
    }
  }

  GpuBuffer src, dst;  // dst's stream: clears, checks, two_hop's H2D and sm_read's kernel
  std::uint64_t base_seed, seed;  // seed: the pattern the source holds now
  DevicePatternChecker checker;   // of the destination's device
  DeviceStream home;              // the direction's first stream
  Event start, end;               // on home: the direction's own time (bi)
  Event joined;                   // on home: the control stream waits on it
  std::optional<DeviceCopyKernel> reader;
  std::optional<StagingRing> staging;
  std::optional<Event> second_done;  // on dst: the end of two_hop's H2D stream
};

BlockShape shape_of(const PeerRequest& r) {
  BlockShape s;
  s.max_ops = r.method == Method::kTwoHop
                  ? std::max<std::uint64_t>(1, kMaxLatchedChunks / r.staging_chunks())
                  : kMaxLatchedOps;
  s.max_ops = std::min(
      s.max_ops, std::max<std::uint64_t>(1, kMaxProbeBytes / std::max<std::uint64_t>(1, r.bytes)));
  // The clock's probe of whether enqueueing blocks behind the latch (large copies the driver
  // stages can) is the largest block, so a block that passed it stays valid for the whole case.
  s.first_block_ops = s.max_ops;
  s.latency = r.measure == PeerRequest::Measure::kLatency;
  s.lanes = r.bidirectional ? 2 : 1;
  s.bytes_per_op = r.bytes;
  const auto arrow = [](int a, int b) { return std::to_string(a) + "->" + std::to_string(b); };
  s.verified = "the destination of " + arrow(r.src(), r.dst()) +
               (r.bidirectional ? " and " + arrow(r.dst(), r.src()) : "") +
               " matched the sample's pattern (a new one every sample)";
  return s;
}

class PeerBench final : public BlockBench {
 public:
  PeerBench(const PeerRequest& r, const Machine& machine)
      : BlockBench(shape_of(r)), r_(r), restore_(r.src()) {
    const int s = r.src(), d = r.dst();
    checks_.push_back(peer_link_check(machine, s, d, can_access_peer(s, d), can_access_peer(d, s)));
    if (const auto pairs = r.peer_access_pairs(); !pairs.empty()) {
      for (const auto& [a, p] : pairs) {
        if (r.needs_peer_access() && !can_access_peer(a, p)) {
          throw SkipCase(no_peer_access_reason(a, p, machine.link(a, p), peer_access_need(r)));
        }
      }
      const bool enable = r.method != Method::kNoPeerAccess;
      access_.emplace(pairs, enable);
      checks_.push_back({enable ? "peer_access_enabled" : "peer_access_disabled",
                         access_->verified(), access_->describe(),
                         enable ? "enabled" : "disabled"});
    }
    lanes_.push_back(std::make_unique<Lane>(r, s, d, kSeed, machine));
    if (r.bidirectional) {
      lanes_.push_back(std::make_unique<Lane>(r, d, s, kSeed ^ 0x5a5a5a5au, machine));
    }
    for (const auto& l : lanes_) {
      if (l->staging) checks_.push_back(l->staging->check);
    }
    control_ = lanes_.front()->home;
    fork_.emplace(on_device<Event>(control_.device, kSync));
    DeviceScope scope(control_.device);
    use_clock(std::make_unique<LatchedClock>(control_.stream));
  }

  ~PeerBench() override {
    // Nothing may still use the buffers when they are freed (an exception can leave work queued).
    for (auto& l : lanes_) {
      cudaStreamSynchronize(l->src.stream.get());
      cudaStreamSynchronize(l->dst.stream.get());
    }
  }

  std::vector<MetricSpec> metrics() const override { return peer_metrics(r_); }

 private:
  // Each source holds its lane's pattern, each destination zeros.
  void prepare_buffers() {
    for (auto& l : lanes_) {
      make_current(l->src.device);
      fill_pattern_on_device(l->src.memory.get(), r_.bytes, l->seed, l->src.stream.get());
      l->src.stream.synchronize();
      make_current(l->dst.device);
      PB_CUDA(cudaMemsetAsync(l->dst.memory.get(), 0, r_.bytes, l->dst.stream.get()));
      l->dst.stream.synchronize();
    }
    make_current(control_.device);
  }

  void enqueue_copy(Lane& l) {
    if (l.staging) {
      for (std::uint64_t off = 0; off < r_.bytes; off += l.staging->chunk) stage_chunk(l, off);
    } else if (l.reader) {
      make_current(l.dst.device);
      l.reader->launch(l.dst.memory.get(), l.src.memory.get(), l.home.stream);
    } else {
      make_current(l.src.device);
      PB_CUDA(cudaMemcpyPeerAsync(l.dst.memory.get(), l.dst.device, l.src.memory.get(),
                                  l.src.device, r_.bytes, l.home.stream));
    }
  }

  // One two_hop chunk through the ring's next slot.
  void stage_chunk(Lane& l, std::uint64_t off) {
    StagingRing& ring = *l.staging;
    const std::uint64_t n = std::min(ring.chunk, r_.bytes - off);
    const std::uint64_t k = ring.next++ % ring.slots;
    std::byte* slot = ring.memory.data() + k * ring.chunk;
    wait_event(l.src.on(), ring.free[k]);
    PB_CUDA(cudaMemcpyAsync(slot, l.src.memory.get() + off, n, cudaMemcpyDeviceToHost,
                            l.src.stream.get()));
    PB_CUDA(cudaEventRecord(ring.full[k].get(), l.src.stream.get()));
    wait_event(l.dst.on(), ring.full[k]);
    PB_CUDA(cudaMemcpyAsync(l.dst.memory.get() + off, slot, n, cudaMemcpyHostToDevice,
                            l.dst.stream.get()));
    PB_CUDA(cudaEventRecord(ring.free[k].get(), l.dst.stream.get()));
  }

  // `ops` copies per direction, fanned out from and joined back into the control stream.
  void enqueue(std::uint64_t ops) override {
    const bool two_hop = r_.method == Method::kTwoHop;
    if (lanes_.size() > 1 || two_hop) record_event(*fork_, control_);
    for (auto& l : lanes_) {
      if (l->home.stream != control_.stream) wait_event(l->home, *fork_);
      if (two_hop) wait_event(l->dst.on(), *fork_);
      if (r_.bidirectional) record_event(l->start, l->home);
    }
    // Interleaved, so that a host-timed fallback still issues both directions together.
    for (std::uint64_t i = 0; i < ops; ++i) {
      for (auto& l : lanes_) enqueue_copy(*l);
    }
    for (auto& l : lanes_) {
      if (two_hop) hand_off(l->dst.on(), *l->second_done, l->home);
      if (r_.bidirectional) record_event(l->end, l->home);
      if (l->home.stream != control_.stream) hand_off(l->home, l->joined, control_);
    }
    make_current(control_.device);
  }

  void complete() override { PB_CUDA(cudaStreamSynchronize(control_.stream)); }

  void before_sample() override {
    // A new pattern every sample, so what a destination holds afterwards can only have come
    // through this sample's copies (not a previous sample's data left in a staging slot).
    for (auto& l : lanes_) l->seed = l->base_seed + samples_ * 0x9e3779b97f4a7c15ull;
    prepare_buffers();
    if (samples_++ > 0) return;
    // The warm-up's call, before the clock's probe: the path's first use, outside any latch (the
    // driver maps the peer and stages; lazy loading of sm_read's kernel may wait for the device's
    // running kernels, which behind a latch would look like a blocked enqueue).
    enqueue(1);
    complete();
  }

  void check_destination() override {
    for (auto& l : lanes_) {
      make_current(l->dst.device);
      l->checker.verify(l->dst.memory.get(), r_.bytes, l->seed, l->dst.stream.get(),
                        "GPU " + std::to_string(l->dst.device) +
                            " destination of the copy from GPU " + std::to_string(l->src.device) +
                            " after the timed block");
    }
    make_current(control_.device);
  }

  std::vector<double> values(const BlockTimes& t) const override {
    const double seconds = t.slowest(), ops = static_cast<double>(t.ops);
    const double bytes = static_cast<double>(r_.bytes) * ops;
    if (shape().latency) return {seconds / ops, t.round_trip};
    if (!r_.bidirectional) return {bytes / seconds / kGB, seconds / ops};
    const auto own = [&](const Lane& l) {  // a direction's rate over its own events
      float ms = 0;
      PB_CUDA(cudaEventElapsedTime(&ms, l.start.get(), l.end.get()));
      return bytes / (ms * 1e-3) / kGB;
    };
    return {2 * bytes / seconds / kGB, own(*lanes_[0]), own(*lanes_[1]), seconds / ops};
  }

  PeerRequest r_;
  DeviceScope restore_;                       // first in, last out: the caller's device back
  std::optional<PeerAccessSettings> access_;  // restored after the buffers go
  std::vector<std::unique_ptr<Lane>> lanes_;  // [0] S -> D, [1] D -> S (bi)
  DeviceStream control_;
  std::optional<Event> fork_;  // on the control stream's device
  std::uint64_t samples_ = 0;  // before_sample calls: the warm-up's first, then one per sample
};

}  // namespace

std::unique_ptr<CaseBench> make_peer_bench(const PeerRequest& r, const Machine& machine) {
  return std::make_unique<PeerBench>(r, machine);
}

}  // namespace pathbench
