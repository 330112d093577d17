// The `peer` family: copies between two GPUs of one node.
//
// Methods (S = source GPU, D = destination GPU):
//   peer_access     cudaMemcpyPeerAsync on a stream of S, peer access enabled both ways
//                   (cudaDeviceEnablePeerAccess): the direct NVLink / PCIe P2P path.
//   no_peer_access  the same call with peer access disabled both ways
//                   (cudaDeviceDisablePeerAccess): the driver stages the copy through the host.
//   two_hop         what an engine does by hand when P2P is unavailable: each copy is split into
//                   chunks (4 MiB, more for copies over 256 MiB); each chunk goes D2H on a
//                   stream of S into the next slot of a ring of pinned staging slots, then H2D
//                   on a stream of D from that slot. Events between the two streams
//                   order each slot's D2H before its H2D and the H2D before the slot's next D2H,
//                   so the two hops of consecutive chunks run at the same time.
//   sm_read         a copy kernel on D reading S's memory through peer access (D may access S).
//
// Timing. All work of a sample is one block timed by the shared GpuBlockTimer on a "control"
// stream: the stream of the forward direction's first operation (S's stream; D's for sm_read),
// on that stream's GPU, where the timer's latch and CUDA events live (an event times the stream
// and device it is recorded on). Every other stream involved — the reverse direction's (bi), the
// destination-side streams of two_hop, on either GPU — waits on a fork event recorded on the
// control stream after the latch, and the control stream waits on a join event of each at the
// end. So the latch holds all of it until the whole block is enqueued, and the timer's events
// span the work on both GPUs. For direction=bi each direction also records a start and an end
// event on its own first stream (same stream, same device), which give its own time.
//
// Large peer copies can block the enqueueing thread (the driver staging a copy without peer
// access). The timer latches the first block with a short timeout and, when enqueueing blocked,
// times the case with the host clock instead (timing_method host_steady_clock, and a `timing`
// check saying why). That first block is the largest this case will ever use: every later block
// has at most as many copies, so a block proven not to block stays valid for the whole case.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/peer_family.hpp"
#include "core/errors.hpp"
#include "core/units.hpp"
#include "cuda/cuda_resources.hpp"
#include "cuda/device_pattern.hpp"
#include "cuda/gpu_block_timer.hpp"
#include "cuda/memory_type.hpp"
#include "inventory/topology.hpp"
#include "core/host_clock.hpp"
#include "placement/memory_policy.hpp"

namespace pathbench {

namespace {

constexpr std::uint64_t kSeed = 0x70656572u;  // "peer"
// A latched block must be enqueued while the latch holds the stream; a few hundred copies per
// stream stay well inside the driver's queue.
constexpr std::uint64_t kMaxLatchedOps = 256;
// two_hop: staged chunks per direction in one block (each is a D2H, an H2D and four event
// operations on two GPUs).
constexpr std::uint64_t kMaxLatchedChunks = 128;
// The first (probing) block moves at most this much per direction, so probing a large copy does
// not take seconds; the case's blocks are never larger than the probed one.
constexpr std::uint64_t kMaxProbeBytes = std::uint64_t{8} << 30;
constexpr std::uint64_t kMaxRoundTrips = 20000;
constexpr int kReadThreads = 512;

using Method = PeerRequest::Method;
using Measure = PeerRequest::Measure;

void set_device(int device) { PB_CUDA(cudaSetDevice(device)); }

// dst[i] = src[i] for `bytes` bytes, 16 bytes per load where it can; src may be a peer's memory.
// Both buffers come from cudaMalloc (256-byte aligned).
__global__ void peer_read_kernel(std::byte* __restrict__ dst, const std::byte* __restrict__ src,
                                 std::size_t bytes) {
  const std::size_t vectors = bytes / 16;
  auto* d = reinterpret_cast<uint4*>(dst);
  const auto* s = reinterpret_cast<const uint4*>(src);
  const std::size_t stride = std::size_t(blockDim.x) * gridDim.x;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < vectors;
       i += stride) {
    d[i] = s[i];
  }
  const std::size_t tail = vectors * 16;
  if (blockIdx.x == 0 && threadIdx.x < bytes - tail)
    dst[tail + threadIdx.x] = src[tail + threadIdx.x];
}

Event event_on(int device, unsigned flags = cudaEventDefault) {
  DeviceScope scope(device);
  return Event(flags);
}

bool can_access_peer(int accessor, int peer) {
  int can = 0;
  PB_CUDA(cudaDeviceCanAccessPeer(&can, accessor, peer));
  return can != 0;
}

// Peer access from `accessor` to `peer`'s memory set as the case needs it for the case's
// lifetime, then put back as it was. The state is verified by asking the driver again: a second
// enable must answer cudaErrorPeerAccessAlreadyEnabled, a second disable
// cudaErrorPeerAccessNotEnabled.
class PeerAccessSetting {
 public:
  PeerAccessSetting(int accessor, int peer, bool enable)
      : accessor_(accessor), peer_(peer), enable_(enable) {
    DeviceScope scope(accessor);
    const cudaError_t already =
        enable ? cudaErrorPeerAccessAlreadyEnabled : cudaErrorPeerAccessNotEnabled;
    const cudaError_t err = apply(enable);
    if (err != cudaSuccess && err != already) {
      throw CudaError(enable ? "cudaDeviceEnablePeerAccess" : "cudaDeviceDisablePeerAccess", err);
    }
    changed_ = err == cudaSuccess;
    const cudaError_t again = apply(enable);
    verified_ = again == already;
    answer_ = cudaGetErrorName(again);
  }
  PeerAccessSetting(const PeerAccessSetting&) = delete;
  PeerAccessSetting& operator=(const PeerAccessSetting&) = delete;
  ~PeerAccessSetting() {
    if (!changed_) return;
    int previous = 0;
    if (cudaGetDevice(&previous) != cudaSuccess) return;
    if (cudaSetDevice(accessor_) == cudaSuccess) apply(!enable_);
    cudaSetDevice(previous);
  }

  bool verified() const { return verified_; }
  std::string describe() const {
    return "GPU " + std::to_string(accessor_) + " -> GPU " + std::to_string(peer_) + ": " +
           (enable_ ? "enabled" : "disabled") + (changed_ ? "" : " already") +
           "; asking again answered " + answer_;
  }

 private:
  // Returns the call's result and clears it from the runtime's last-error slot.
  cudaError_t apply(bool enable) const {
    const cudaError_t err =
        enable ? cudaDeviceEnablePeerAccess(peer_, 0) : cudaDeviceDisablePeerAccess(peer_);
    cudaGetLastError();
    return err;
  }

  int accessor_, peer_;
  bool enable_;
  bool changed_ = false;
  bool verified_ = false;
  std::string answer_;
};

// One direction of the case: S -> D with its buffers, streams and events.
struct Lane {
  int src = 0, dst = 0;
  std::uint64_t base_seed = kSeed;
  std::uint64_t seed = kSeed;      // the pattern the source holds now
  DeviceMemory src_buf, dst_buf;   // on src, on dst
  std::optional<Stream> src_side;  // on src
  std::optional<Stream> dst_side;  // on dst: clears, checks, two_hop's H2D, sm_read's kernel
  std::optional<DevicePatternChecker> checker;  // created on dst
  cudaStream_t home = nullptr;                  // the direction's first stream
  int home_device = 0;
  std::optional<Event> start, end;  // on home: the direction's own time (bi)
  std::optional<Event> joined;      // on home: the control stream waits on it
  int read_blocks = 1;              // sm_read grid
  // two_hop
  PinnedHostMemory staging;
  std::uint64_t slots = 0;
  std::vector<Event> slot_full;      // on src: slot k holds chunk data (after its D2H)
  std::vector<Event> slot_free;      // on dst: slot k may be refilled (after its H2D)
  std::optional<Event> second_done;  // on dst: end of the H2D stream's work
  std::uint64_t next_slot = 0;
  std::optional<int> staging_node;
};

class PeerBench final : public CaseBench {
 public:
  PeerBench(const CaseSpec& spec, const Machine& machine) : request_(decode_peer_request(spec)) {
    if (!request_.gpus) {
      throw SkipCase(two_gpu_reason(machine).value_or("pair=none names no GPU pair"));
    }
    int count = 0;
    PB_CUDA(cudaGetDeviceCount(&count));
    for (int g : {request_.src(), request_.dst()}) {
      if (g >= count) {
        throw SkipCase("pair " + request_.pair + ": CUDA sees " + std::to_string(count) +
                       " devices, so GPU " + std::to_string(g) + " cannot be used");
      }
    }
    restore_device_.emplace(request_.src());
    record_link_check(machine);
    set_peer_access();
    add_lane(request_.src(), request_.dst(), kSeed, machine);
    if (request_.bidirectional)
      add_lane(request_.dst(), request_.src(), kSeed ^ 0x5a5a5a5au, machine);
    control_ = lanes_.front()->home;
    control_device_ = lanes_.front()->home_device;
    {
      DeviceScope scope(control_device_);
      timer_.emplace();
      fork_.emplace(cudaEventDisableTiming);
    }
    max_ops_ = request_.method == Method::kTwoHop
                   ? std::max<std::uint64_t>(1, kMaxLatchedChunks / request_.staging_chunks())
                   : kMaxLatchedOps;
    max_ops_ = std::min(
        max_ops_,
        std::max<std::uint64_t>(1, kMaxProbeBytes / std::max<std::uint64_t>(1, request_.bytes)));
    fill_sources();
  }

  ~PeerBench() override {
    // Nothing may still use the buffers when they are freed (an exception can leave work queued).
    for (auto& l : lanes_) {
      if (l->src_side) cudaStreamSynchronize(l->src_side->get());
      if (l->dst_side) cudaStreamSynchronize(l->dst_side->get());
    }
  }

  TimingMethod timing_method() const override {
    return timer_ && timer_->host_timed() ? TimingMethod::kHostSteadyClock
                                          : TimingMethod::kCudaEventsLatched;
  }

  std::vector<MetricSpec> metrics() const override { return peer_metrics(request_); }

  void warm_up(double min_time) override {
    clear_destinations();
    // First use of the path, outside any latch: the driver sets up peer mappings and staging
    // buffers, and loads sm_read's kernel on the destination (lazy loading may wait for the
    // device's running kernels — behind a latch that would look like a blocked enqueue).
    enqueue_block(1);
    PB_CUDA(cudaStreamSynchronize(control_));
    // The first latched block is the timer's probe (does enqueueing block behind the latch?);
    // it is the largest block of the case and is not counted.
    timed_block(max_ops_);
    const std::uint64_t probe = std::min<std::uint64_t>(4, max_ops_);
    const double per_op = timed_block(probe) / static_cast<double>(probe);
    const double budget = request_.measure == Measure::kLatency ? min_time / 2 : min_time;
    ops_ = operations_for(budget, per_op, max_ops_);
    if (request_.measure == Measure::kLatency) {
      const double rt = round_trip(4) / 4;
      round_trip_ops_ = operations_for(min_time / 2, rt, kMaxRoundTrips);
    }
  }

  Sample measure() override {
    // A new pattern every sample, so what the destination holds afterwards can only have come
    // through this sample's copies (not a previous sample's data left in a staging slot).
    ++sample_;
    for (auto& l : lanes_) l->seed = l->base_seed + sample_ * 0x9e3779b97f4a7c15ull;
    fill_sources();
    clear_destinations();
    const double seconds = timed_block(ops_);
    const double ops = static_cast<double>(ops_);
    const double per_copy = seconds / ops;
    const double bytes = static_cast<double>(request_.bytes) * ops;
    if (request_.measure == Measure::kLatency) {
      return {seconds,
              {per_copy, round_trip(round_trip_ops_) / static_cast<double>(round_trip_ops_)}};
    }
    if (request_.bidirectional) {
      const double fwd = lane_seconds(*lanes_[0]);
      const double rev = lane_seconds(*lanes_[1]);
      return {seconds, {2 * bytes / seconds / kGB, bytes / fwd / kGB, bytes / rev / kGB, per_copy}};
    }
    return {seconds, {bytes / seconds / kGB, per_copy}};
  }

  void verify() override {
    for (auto& l : lanes_) {
      set_device(l->dst);
      l->checker->verify(l->dst_buf.get(), request_.bytes, l->seed, l->dst_side->get(),
                         "GPU " + std::to_string(l->dst) + " destination of the copy from GPU " +
                             std::to_string(l->src) + " after the timed block");
    }
    set_device(control_device_);
    ++verified_samples_;
  }

  std::vector<Check> checks() const override {
    std::vector<Check> all = checks_;
    if (timer_ && timer_->host_timed()) {
      all.push_back({"timing", true, timer_->host_timed_reason(), "host_steady_clock"});
    }
    std::string lanes;
    for (const auto& l : lanes_) {
      lanes +=
          (lanes.empty() ? "" : " and ") + std::to_string(l->src) + "->" + std::to_string(l->dst);
    }
    all.push_back({"copy_pattern", verified_samples_ > 0,
                   verified_samples_ > 0
                       ? "the destination of " + lanes +
                             " matched the sample's pattern (a new one every sample) after every "
                             "sample"
                       : "no sample was verified",
                   verified_samples_});
    return all;
  }

  std::uint64_t operations_per_sample() const override { return ops_ * lanes_.size(); }
  std::uint64_t bytes_per_sample() const override {
    return request_.bytes * operations_per_sample();
  }

 private:
  bool two_hop() const { return request_.method == Method::kTwoHop; }

  // The driver's answer against the inventory's link map, for both directions of the pair.
  void record_link_check(const Machine& machine) {
    const int s = request_.src(), d = request_.dst();
    const bool sd = can_access_peer(s, d), ds = can_access_peer(d, s);
    const GpuLink* link = machine.link(s, d);
    std::string detail = "cudaDeviceCanAccessPeer: " + std::to_string(s) + "->" +
                         std::to_string(d) + " " + (sd ? "yes" : "no") + ", " + std::to_string(d) +
                         "->" + std::to_string(s) + " " + (ds ? "yes" : "no");
    bool consistent = true;
    if (link == nullptr) {
      detail += "; the inventory has no link for this pair (nvidia-smi topo -m unavailable)";
    } else {
      detail += "; inventory link " + link_type_name(link->type) +
                (link->nvlinks > 0 ? " x" + std::to_string(link->nvlinks) : "") + " (" +
                link->param + ")";
      if (link->peer_access) {
        consistent = *link->peer_access == sd;
        detail += consistent ? ", which agrees"
                             : ", which recorded peer access " +
                                   std::string(*link->peer_access ? "yes" : "no");
      }
    }
    checks_.push_back({"peer_link", consistent, detail, link ? link->param : "unknown"});
    if (request_.needs_peer_access()) {
      for (const auto& [accessor, peer] : request_.peer_access_pairs()) {
        if (!can_access_peer(accessor, peer)) {
          throw SkipCase("GPU " + std::to_string(accessor) + " cannot access GPU " +
                         std::to_string(peer) + "'s memory (cudaDeviceCanAccessPeer = 0): method=" +
                         std::string(to_string(request_.method)) +
                         " needs peer access; no_peer_access and two_hop measure this pair");
        }
      }
    }
  }

  void set_peer_access() {
    const auto pairs = request_.peer_access_pairs();
    if (pairs.empty()) return;
    const bool enable = request_.method != Method::kNoPeerAccess;
    std::string detail;
    bool all_verified = true;
    for (const auto& [accessor, peer] : pairs) {
      detail += detail.empty() ? "" : "; ";
      if (!enable && !can_access_peer(accessor, peer)) {
        // Nothing to disable: the driver offers no peer access for this direction at all.
        detail += "GPU " + std::to_string(accessor) + " -> GPU " + std::to_string(peer) +
                  ": off (cudaDeviceCanAccessPeer = 0)";
        continue;
      }
      access_.push_back(std::make_unique<PeerAccessSetting>(accessor, peer, enable));
      all_verified = all_verified && access_.back()->verified();
      detail += access_.back()->describe();
    }
    checks_.push_back({enable ? "peer_access_enabled" : "peer_access_disabled", all_verified,
                       detail, enable ? "enabled" : "disabled"});
  }

  void add_lane(int src, int dst, std::uint64_t seed, const Machine& machine) {
    auto lane = std::make_unique<Lane>();
    Lane& l = *lane;
    l.src = src;
    l.dst = dst;
    l.base_seed = seed;
    l.seed = seed;
    {
      DeviceScope scope(src);
      l.src_buf = DeviceMemory(request_.bytes);
      l.src_side.emplace();
    }
    {
      DeviceScope scope(dst);
      l.dst_buf = DeviceMemory(request_.bytes);
      l.dst_side.emplace();
      l.checker.emplace();
    }
    const bool on_dst = request_.method == Method::kSmRead;
    l.home = on_dst ? l.dst_side->get() : l.src_side->get();
    l.home_device = on_dst ? dst : src;
    l.start.emplace(event_on(l.home_device));
    l.end.emplace(event_on(l.home_device));
    l.joined.emplace(event_on(l.home_device, cudaEventDisableTiming));
    if (on_dst) {
      int sms = 1;
      PB_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dst));
      const std::uint64_t vectors = request_.bytes / 16;
      const std::uint64_t wanted = (vectors + kReadThreads - 1) / kReadThreads;
      l.read_blocks = static_cast<int>(
          std::clamp<std::uint64_t>(wanted, 1, static_cast<std::uint64_t>(sms) * 4));
    }
    if (two_hop()) allocate_staging(l, machine);
    lanes_.push_back(std::move(lane));
  }

  void allocate_staging(Lane& l, const Machine& machine) {
    const std::uint64_t chunk = request_.staging_chunk_bytes();
    l.slots = std::min(kPeerStagingSlots, request_.staging_chunks());
    {
      // Near the source GPU when its NUMA node is known and usable.
      std::optional<MemoryPolicyScope> policy;
      const auto node = machine.gpu_local_node(l.src);
      if (node && machine.cpus_of_node(*node) != nullptr) {
        policy.emplace(*node);
        l.staging_node = node;
      }
      l.staging = PinnedHostMemory(l.slots * chunk, cudaHostAllocPortable);
    }
    for (std::uint64_t k = 0; k < l.slots; ++k) {
      l.slot_full.push_back(event_on(l.src, cudaEventDisableTiming));
      l.slot_free.push_back(event_on(l.dst, cudaEventDisableTiming));
    }
    l.second_done.emplace(event_on(l.dst, cudaEventDisableTiming));
    cudaPointerAttributes attr{};
    PB_CUDA(cudaPointerGetAttributes(&attr, l.staging.get()));
    const bool pinned = attr.type == cudaMemoryTypeHost;
    checks_.push_back(
        {"staging_memory", pinned,
         "GPU " + std::to_string(l.src) + " -> GPU " + std::to_string(l.dst) + ": " +
             std::to_string(request_.staging_chunks()) + " chunk(s) of " + format_bytes(chunk) +
             " per copy through " + std::to_string(l.slots) + " pinned staging slot(s)" +
             (l.staging_node ? " on NUMA node " + std::to_string(*l.staging_node) : "") +
             "; CUDA reports the staging buffer as " + memory_type_name(attr.type),
         memory_type_name(attr.type)});
  }

  void fill_sources() {
    for (auto& l : lanes_) {
      set_device(l->src);
      fill_pattern_on_device(l->src_buf.get(), request_.bytes, l->seed, l->src_side->get());
      l->src_side->synchronize();
    }
    set_device(control_device_);
  }

  void clear_destinations() {
    for (auto& l : lanes_) {
      set_device(l->dst);
      PB_CUDA(cudaMemsetAsync(l->dst_buf.get(), 0, request_.bytes, l->dst_side->get()));
      l->dst_side->synchronize();
    }
    set_device(control_device_);
  }

  void enqueue_copy(Lane& l) {
    switch (request_.method) {
      case Method::kPeerAccess:
      case Method::kNoPeerAccess:
        set_device(l.src);
        PB_CUDA(cudaMemcpyPeerAsync(l.dst_buf.get(), l.dst, l.src_buf.get(), l.src, request_.bytes,
                                    l.home));
        break;
      case Method::kSmRead:
        set_device(l.dst);
        peer_read_kernel<<<l.read_blocks, kReadThreads, 0, l.home>>>(
            l.dst_buf.get(), l.src_buf.get(), request_.bytes);
        PB_CUDA(cudaGetLastError());
        break;
      case Method::kTwoHop:
        enqueue_two_hop(l);
        break;
    }
  }

  void enqueue_two_hop(Lane& l) {
    const std::uint64_t chunk = request_.staging_chunk_bytes();
    const cudaStream_t d2h = l.src_side->get();
    const cudaStream_t h2d = l.dst_side->get();
    for (std::uint64_t off = 0; off < request_.bytes; off += chunk) {
      const std::uint64_t n = std::min(chunk, request_.bytes - off);
      const std::uint64_t k = l.next_slot++ % l.slots;
      std::byte* slot = l.staging.get() + k * chunk;
      // Hop 1 on the source GPU: wait until the slot's previous H2D read it, then fill it.
      set_device(l.src);
      PB_CUDA(cudaStreamWaitEvent(d2h, l.slot_free[k].get(), 0));
      PB_CUDA(cudaMemcpyAsync(slot, l.src_buf.get() + off, n, cudaMemcpyDeviceToHost, d2h));
      PB_CUDA(cudaEventRecord(l.slot_full[k].get(), d2h));
      // Hop 2 on the destination GPU: wait for the slot's data, then empty it.
      set_device(l.dst);
      PB_CUDA(cudaStreamWaitEvent(h2d, l.slot_full[k].get(), 0));
      PB_CUDA(cudaMemcpyAsync(l.dst_buf.get() + off, slot, n, cudaMemcpyHostToDevice, h2d));
      PB_CUDA(cudaEventRecord(l.slot_free[k].get(), h2d));
    }
  }

  // `ops` copies per direction, fanned out from and joined back into the control stream.
  void enqueue_block(std::uint64_t ops) {
    const bool fan_out = lanes_.size() > 1 || two_hop();
    if (fan_out) {
      set_device(control_device_);
      PB_CUDA(cudaEventRecord(fork_->get(), control_));
    }
    for (auto& l : lanes_) {
      if (l->home != control_) {
        set_device(l->home_device);
        PB_CUDA(cudaStreamWaitEvent(l->home, fork_->get(), 0));
      }
      if (two_hop()) {
        set_device(l->dst);
        PB_CUDA(cudaStreamWaitEvent(l->dst_side->get(), fork_->get(), 0));
      }
      if (request_.bidirectional) {
        set_device(l->home_device);
        PB_CUDA(cudaEventRecord(l->start->get(), l->home));
      }
    }
    // Interleaved, so that a host-timed fallback still issues both directions together.
    for (std::uint64_t i = 0; i < ops; ++i) {
      for (auto& l : lanes_) enqueue_copy(*l);
    }
    for (auto& l : lanes_) {
      if (two_hop()) {
        set_device(l->dst);
        PB_CUDA(cudaEventRecord(l->second_done->get(), l->dst_side->get()));
        set_device(l->home_device);
        PB_CUDA(cudaStreamWaitEvent(l->home, l->second_done->get(), 0));
      }
      set_device(l->home_device);
      if (request_.bidirectional) PB_CUDA(cudaEventRecord(l->end->get(), l->home));
      if (l->home != control_) {
        PB_CUDA(cudaEventRecord(l->joined->get(), l->home));
        set_device(control_device_);
        PB_CUDA(cudaStreamWaitEvent(control_, l->joined->get(), 0));
      }
    }
    set_device(control_device_);
  }

  double timed_block(std::uint64_t ops) {
    set_device(control_device_);
    return timer_->time_block(control_, [&] { enqueue_block(ops); });
  }

  // A direction's own time in the last block (its start and end events, same stream).
  double lane_seconds(const Lane& l) const {
    float ms = 0;
    PB_CUDA(cudaEventElapsedTime(&ms, l.start->get(), l.end->get()));
    return ms * 1e-3;
  }

  // Host-observed time from issuing one copy to seeing it complete, over `ops` round trips.
  double round_trip(std::uint64_t ops) {
    return time_on_host([&] {
      for (std::uint64_t i = 0; i < ops; ++i) {
        enqueue_block(1);
        PB_CUDA(cudaStreamSynchronize(control_));
      }
    });
  }

  PeerRequest request_;
  std::optional<DeviceScope> restore_device_;  // first in, last out: the caller's device back
  std::vector<std::unique_ptr<PeerAccessSetting>> access_;  // restored after the buffers go
  std::vector<std::unique_ptr<Lane>> lanes_;                // [0] S -> D, [1] D -> S (bi)
  cudaStream_t control_ = nullptr;
  int control_device_ = 0;
  std::optional<GpuBlockTimer> timer_;
  std::optional<Event> fork_;
  std::uint64_t max_ops_ = 1;
  std::uint64_t ops_ = 1;
  std::uint64_t round_trip_ops_ = 1;
  std::uint64_t verified_samples_ = 0;
  std::uint64_t sample_ = 0;
  std::vector<Check> checks_;
};

class PeerFamily final : public PeerFamilyBase {
 public:
  std::unique_ptr<CaseBench> prepare(const CaseSpec& spec, const Machine& machine,
                                     int /*device*/) const override {
    return std::make_unique<PeerBench>(spec, machine);
  }
};

}  // namespace

std::unique_ptr<Family> make_peer_family() { return std::make_unique<PeerFamily>(); }

}  // namespace pathbench
