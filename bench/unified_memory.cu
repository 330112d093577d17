// The `unified_memory` bench: a sample is one pass over the managed buffer (after it the pages
// have moved: it cannot be repeated in a block), counted by CUPTI's unified-memory counters. For
// a GPU pair, the set-up of every pass puts the pages on GPU S and the pass runs on GPU D.
#include <algorithm>
#include <cstring>
#include <iterator>
#include <optional>

#include "bench/unified_memory.hpp"
#include "core/errors.hpp"
#include "core/host_clock.hpp"
#include "core/units.hpp"
#include "cuda/cuda_resources.hpp"
#include "cuda/kernel_loading.hpp"
#include "cuda/managed_memory.hpp"
#include "cuda/peer_access.hpp"
#include "measure/latched_clock.hpp"
#include "measure/link_check.hpp"
#include "measure/placed_host_memory.hpp"
#include "placement/thread_placement.hpp"

namespace pathbench {

namespace {

using Method = UnifiedMemoryRequest::Method;

constexpr unsigned kTouchThreads = 256;

// One thread per touched address: reads the byte and writes it back incremented, so the page
// must be present and writable on the GPU.
__global__ void touch_kernel(unsigned char* buffer, std::size_t stride, std::size_t touches) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < touches) {
    volatile unsigned char* p = buffer + i * stride;
    *p = static_cast<unsigned char>(*p + 1);
  }
}

// The pair's source GPU's support, read first: the touching GPU's query then leaves that one
// current, where the stream, the kernel and the latch live.
std::optional<ManagedMemorySupport> source_support(const UnifiedMemoryRequest& r) {
  if (!r.gpus) return std::nullopt;
  return query_managed_memory_support(r.gpus->first);
}

class UnifiedMemoryBench final : public CaseBench {
 public:
  UnifiedMemoryBench(const UnifiedMemoryRequest& r, const Machine& machine, int device)
      : r_(r),
        source_support_(source_support(r)),
        device_(r.touching_gpu(device)),
        support_(query_managed_memory_support(device_)) {
    if (auto why = source_support_ ? unified_memory_pair_skip_reason(r_, *source_support_, support_)
                                   : unified_memory_device_skip_reason(r_, support_)) {
      throw SkipCase(*why);
    }
    thread_.emplace(machine, machine.gpu_local_node(device_));  // the fill and the CPU faults
    load_kernel(touch_kernel);  // before the first latched block (see kernel_loading.hpp)
    // Before the managed allocation, or CUPTI counts none of it.
    counter_.emplace(r_.between_gpus());
    buffer_ = ManagedMemory(r_.bytes);
    checks_.push_back(host_memory_kind_check(buffer_.get(), cudaMemoryTypeManaged, "buffer"));
    checks_.back().name = "managed_memory";
    checks_.push_back({"device_properties", true,
                       "GPU " + std::to_string(device_) + ": " + to_json(support_).dump(),
                       to_json(support_)});
    if (source_support_) {
      const int s = r_.gpus->first;
      checks_.push_back({"source_device_properties", true,
                         "GPU " + std::to_string(s) + " (the pages' GPU before each pass): " +
                             to_json(*source_support_).dump(),
                         to_json(*source_support_)});
      checks_.push_back(peer_link_check(machine, s, device_, can_access_peer(s, device_),
                                        can_access_peer(device_, s)));
    }
    checks_.push_back(thread_->check());
    apply_advice();
    if (r_.method == Method::kGpuToCpu) {
      clock_ = std::make_unique<HostClock>(nullptr, "the host's own touches");
      return;
    }
    clock_ = std::make_unique<LatchedClock>(stream_.get());
    if (r_.prefetches()) probe_prefetch();
  }

  ~UnifiedMemoryBench() override {
    // Nothing may still use the buffer when it is freed (an exception can leave work queued).
    cudaStreamSynchronize(stream_.get());
  }

  TimingMethod timing_method() const override { return clock_->method(); }
  std::vector<MetricSpec> metrics() const override { return unified_memory_metrics(); }

  // Not counted: CUPTI's set-up, the driver's first migration, and the probe of a latched clock
  // not yet probed. min_time cannot lengthen a pass.
  void warm_up(double) override {
    const bool latched = clock_->method() == TimingMethod::kCudaEventsLatched;
    run_pass();
    if (latched && clock_->method() != TimingMethod::kCudaEventsLatched) {
      // Blocked, the clock ran the pass again under the host clock (touched twice): a clean one.
      pending_verify_ = false;
      run_pass();
    }
    verify();
  }

  Sample measure() override {
    const CountedSample& p = passes_.samples.emplace_back(run_pass());
    passes_.prefetch_calls.push_back(prefetch_call_);
    const auto migrated = static_cast<double>(
        migrated_bytes(unified_memory_expectation(r_), p.counts.value_or(UnifiedMemoryCounts{})));
    return {p.seconds, {p.seconds, migrated / p.seconds / kGB, p.seconds / (migrated / (1 << 20))}};
  }

  // The touched bytes hold what the pass wrote, their neighbours the fill: checked on the host
  // after migrating the buffer back (untimed; the next pass would do it anyway).
  void verify() override {
    if (!pending_verify_) return;
    pending_verify_ = false;
    to_host();
    const unsigned char* p = buffer_.get();
    for (std::uint64_t off = 0; off < r_.bytes; off += r_.stride) {
      const bool touched_ok = p[off] == expected_;
      if (touched_ok && (off + 1 == r_.bytes || p[off + 1] == fill_)) continue;
      const std::uint64_t at = touched_ok ? off + 1 : off;
      throw CaseFailure((touched_ok ? "untouched byte " : "touched byte ") + std::to_string(at) +
                        " holds " + std::to_string(p[at]) + " after the pass, expected " +
                        std::to_string(touched_ok ? fill_ : expected_) + " (fill " +
                        std::to_string(fill_) + ", touched " + std::to_string(expected_) + ")");
    }
    ++verified_;
  }

  std::vector<Check> checks() const override {
    std::vector<Check> all = checks_;
    const bool latched = clock_->method() == TimingMethod::kCudaEventsLatched;
    std::ranges::move(
        unified_memory_pass_checks(r_, passes_, counter_->unavailable_reason(), latched),
        std::back_inserter(all));
    all.push_back({"touch_data", verified_ > 0,
                   "every touched byte held the pass's value, its neighbour the host's fill, in " +
                       std::to_string(verified_) + " verified passes (warm-up included)",
                   verified_});
    return all;
  }

  std::string timing_detail() const override {
    const std::string pair = r_.gpus
                                 ? "the pages prefetched to GPU " + std::to_string(r_.gpus->first) +
                                       " before each pass (untimed), touched from GPU " +
                                       std::to_string(device_) + "; "
                                 : std::string();
    return "one pass over the buffer per sample; " + pair + clock_->describe();
  }
  // The last timed sample's CUPTI records (the runner writes them as a Chrome trace).
  const Timeline* captured_timeline() const override {
    return counter_->last_timeline().records.empty() ? nullptr : &counter_->last_timeline();
  }
  std::uint64_t operations_per_sample() const override { return r_.touches(); }
  std::uint64_t bytes_per_sample() const override { return r_.estimated_migrated_bytes(); }

 private:
  void to_host() {
    buffer_.prefetch(ManagedMemory::kHost, stream_.get());
    stream_.synchronize();
  }

  void launch_touch() {
    const std::uint64_t touches = r_.touches();
    const auto blocks = static_cast<unsigned>((touches + kTouchThreads - 1) / kTouchThreads);
    touch_kernel<<<blocks, kTouchThreads, 0, stream_.get()>>>(buffer_.get(), r_.stride, touches);
    PB_CUDA(cudaGetLastError());
  }

  // What a pass times: the host's touches; the prefetch and the kernel; or the kernel alone.
  void timed_work() {
    if (r_.method == Method::kGpuToCpu) {
      volatile unsigned char* p = buffer_.get();
      for (std::uint64_t off = 0; off < r_.bytes; off += r_.stride) {
        p[off] = static_cast<unsigned char>(p[off] + 1);
      }
      return;
    }
    if (r_.prefetches()) {
      prefetch_call_ = time_on_host([&] { buffer_.prefetch(device_, stream_.get()); });
    }
    launch_touch();
  }

  // Untimed: every page on the host and filled there; for gpu_to_cpu then written on the GPU;
  // for a GPU pair then moved to the source GPU (the stream is the touching GPU's, which pages
  // managed memory in on demand as cudaMemPrefetchAsync requires).
  void set_up_pass() {
    ++pass_count_;
    fill_ = static_cast<unsigned char>(1 + pass_count_ % 250);
    to_host();
    std::memset(buffer_.get(), fill_, r_.bytes);
    expected_ = static_cast<unsigned char>(fill_ + 1);
    if (r_.method == Method::kGpuToCpu) {
      buffer_.prefetch(device_, stream_.get());
      launch_touch();
      stream_.synchronize();
      expected_ = static_cast<unsigned char>(fill_ + 2);
    }
    if (r_.gpus) {
      buffer_.prefetch(r_.gpus->first, stream_.get());
      stream_.synchronize();
    }
  }

  CountedSample run_pass() {
    set_up_pass();
    CountedSample pass;
    pass.counts =
        counter_->count([&] { pass.seconds = clock_->time([&] { timed_work(); }).front(); });
    pending_verify_ = true;
    return pass;
  }

  // Some drivers make cudaMemPrefetchAsync wait for the stream before it returns: behind the
  // latch it blocks. An untimed pass, the clock's first block, finds out; blocked, the clock ran
  // the pass again under the host clock (touched twice) and times every later pass that way.
  void probe_prefetch() {
    set_up_pass();
    clock_->time([&] { timed_work(); });
    if (clock_->method() != TimingMethod::kCudaEventsLatched) ++expected_;
    pending_verify_ = true;
    verify();
  }

  // The advice, applied and read back: the driver must report what was advised.
  void apply_advice() {
    const bool preferred = r_.method == Method::kAdvisePreferredGpu;
    if (!preferred && r_.method != Method::kAdviseAccessedBy) return;
    buffer_.advise(preferred ? cudaMemAdviseSetPreferredLocation : cudaMemAdviseSetAccessedBy,
                   device_);
    const auto ids = preferred ? std::vector{buffer_.preferred_location()} : buffer_.accessed_by();
    const auto value = preferred ? nlohmann::ordered_json(ids[0]) : nlohmann::ordered_json(ids);
    checks_.push_back({"advice", std::ranges::find(ids, device_) != ids.end(),
                       std::string("cudaMemRangeGetAttribute(") +
                           (preferred ? "PreferredLocation" : "AccessedBy") + ") reports " +
                           value.dump() + ", advised GPU " + std::to_string(device_),
                       value});
  }

  UnifiedMemoryRequest r_;
  std::optional<ManagedMemorySupport> source_support_;  // a pair's GPU S (read first)
  int device_;                                          // the touching GPU: the pair's D
  ManagedMemorySupport support_;           // read with the device current, its context created
  std::optional<ThreadPlacement> thread_;  // first in, last out: restores the thread
  Stream stream_;
  std::optional<UnifiedMemoryCounter> counter_;
  ManagedMemory buffer_;  // after the stream: the destructor drains the stream first
  std::unique_ptr<OperationClock> clock_;
  std::vector<Check> checks_;  // what prepare verified
  std::uint64_t pass_count_ = 0;
  unsigned char fill_ = 0, expected_ = 0;
  bool pending_verify_ = false;
  std::uint64_t verified_ = 0;
  double prefetch_call_ = 0;    // how long the last pass's cudaMemPrefetchAsync held the thread
  UnifiedMemoryPasses passes_;  // the timed samples (not the warm-up or the probe)
};

}  // namespace

std::unique_ptr<CaseBench> make_unified_memory_bench(const UnifiedMemoryRequest& r,
                                                     const Machine& machine, int device) {
  return std::make_unique<UnifiedMemoryBench>(r, machine, device);
}

}  // namespace pathbench
