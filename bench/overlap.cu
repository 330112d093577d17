// The `overlap` family: a compute kernel of controlled duration and the H2D copy of the next
// batch, issued four ways; what overlapped is read off a CUPTI timeline of every sample.
#include <algorithm>
#include <array>
#include <optional>

#include "bench/overlap.hpp"
#include "core/errors.hpp"
#include "cuda/cuda_resources.hpp"
#include "cuda/device_pattern.hpp"
#include "cuda/global_timer.cuh"
#include "cuda/kernel_loading.hpp"
#include "measure/latched_clock.hpp"
#include "measure/pattern.hpp"
#include "measure/placed_host_memory.hpp"
#include "measure/timeline_checks.hpp"
#include "placement/thread_placement.hpp"
#include "timeline/cupti_timeline.hpp"

namespace pathbench {

namespace {

constexpr std::uint64_t kSeed = 0x6f7665726c6170ull;  // "overlap"

// Busy for a fixed time on every SM it occupies: a stand-in for a model's compute step whose
// duration does not depend on clocks or on what the copy engines do.
__global__ void compute_for(unsigned long long ns) { spin_until(global_timer_ns(), ns); }

class OverlapBench final : public CaseBench {
 public:
  OverlapBench(const OverlapRequest& r, const Machine& machine, int device)
      : r_(r),
        device_(make_current(device)),
        where_(resolve_host_placement(machine, device, r.placement)),
        thread_(where_.cpus, where_.thread_node, where_.where) {
    int sms = 0;
    PB_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    blocks_ = std::max(1, sms);
    const bool pageable = r.variant == OverlapVariant::kPageableSeparateStream;
    for (int i = 0; i < 2; ++i) {
      host_[i] = PlacedHostMemory({pageable ? HostMemoryKind::kPageable : HostMemoryKind::kPinned,
                                   r.bytes, pageable ? std::optional(PageType::k4K) : std::nullopt,
                                   where_.memory_node});
      fill_pattern({host_[i].data(), r.bytes}, kSeed);
      device_buf_[i] = DeviceMemory(r.bytes);
    }
    placement_ = host_[0].checks("host buffers");
    placement_.push_back(thread_.check());
  }

  TimingMethod timing_method() const override { return TimingMethod::kHostSteadyClock; }
  std::vector<MetricSpec> metrics() const override { return overlap_metrics(); }
  std::string timing_detail() const override {
    return clock_.describe() + "; the ideal is max(copy alone, kernel alone), each timed alone";
  }

  void warm_up(double) override {
    // Overlap can only be proven on a timeline: without CUPTI the case cannot claim anything.
    require_cupti_timeline("the overlap family");
    {
      TimelineCapture warm(TimelineCapture::Options{});
      prime();
      run_iterations();
      warm.collect();
    }
    // The ideal iteration is max(copy alone, kernel alone), each timed alone on an idle GPU.
    load_kernel(compute_for);  // before the first latched block (see kernel_loading.hpp)
    LatchedClock kernel_clock(compute_.get());
    kernel_alone_ = kernel_clock.time([&] { launch_kernel(compute_.get()); }).front();
    if (r_.variant == OverlapVariant::kPageableSeparateStream) {
      HostClock copy_clock([&] { copy_.synchronize(); });
      copy_alone_ = copy_clock.time([&] { enqueue_copy(1, copy_.get()); }).front();
    } else {
      LatchedClock copy_clock(copy_.get());
      copy_alone_ = copy_clock.time([&] { enqueue_copy(1, copy_.get()); }).front();
    }
  }

  Sample measure() override {
    PB_CUDA(cudaMemsetAsync(device_buf_[0].get(), 0, r_.bytes, compute_.get()));
    PB_CUDA(cudaMemsetAsync(device_buf_[1].get(), 0, r_.bytes, compute_.get()));
    compute_.synchronize();
    prime();  // batch 0 arrives before the clock starts: a steady-state loop is what is judged
    TimelineCapture capture(TimelineCapture::Options{});
    const double seconds = clock_.time([&] { run_iterations(); }).front();
    timeline_ = capture.collect();
    if (!timeline_.unavailable_reason.empty()) {
      throw CaseFailure("the timeline of this sample is missing: " + timeline_.unavailable_reason);
    }
    analysis_ = analyze_timeline(timeline_);
    const double per_iteration = seconds / r_.iterations;
    const double ideal = std::max(copy_alone_, kernel_alone_);
    return {seconds, {per_iteration, analysis_.overlap_fraction, per_iteration / ideal}};
  }

  void verify() override {
    // The last iteration copied batch `iterations` into buffer iterations % 2.
    checker_.verify(device_buf_[r_.iterations % 2].get(), r_.bytes, kSeed, compute_.get(),
                    "device buffer after the last copy");
    ++verified_;
  }

  std::vector<Check> checks() const override {
    std::vector<Check> all = placement_;
    for (auto& c : timeline_checks(timeline_, analysis_)) all.push_back(std::move(c));
    all.push_back({"copy_pattern", verified_ > 0,
                   verified_ > 0 ? "the last batch matched the pattern after every sample"
                                 : "no sample was verified",
                   verified_});
    return all;
  }

  std::vector<Check> timeline_checks(const Timeline& timeline,
                                     const TimelineAnalysis& analysis) const override {
    std::vector<Check> out;
    out.push_back(timeline_complete_check(timeline));
    const bool pageable = r_.variant == OverlapVariant::kPageableSeparateStream;
    const std::string wanted = pageable ? "pageable" : "pinned";
    std::size_t matching = 0;
    for (const auto& [kind, n] : analysis.copies_by_source_kind) {
      if (kind == wanted) matching += n;
    }
    out.push_back({"timeline_memory_kind", analysis.copies > 0 && matching == analysis.copies,
                   std::to_string(matching) + " of " + std::to_string(analysis.copies) +
                       " copies on the timeline read " + wanted + " memory",
                   wanted});
    // A pageable copy may be split by the driver into several records; pinned ones may not.
    const auto iterations = static_cast<std::size_t>(r_.iterations);
    const bool one_each = pageable ? analysis.copies >= iterations : analysis.copies == iterations;
    out.push_back({"copies_per_iteration", one_each,
                   std::to_string(analysis.copies) + " copy records for " +
                       std::to_string(iterations) + " iterations",
                   static_cast<double>(analysis.copies) / static_cast<double>(iterations)});
    return out;
  }

  const Timeline* captured_timeline() const override { return &timeline_; }
  std::uint64_t operations_per_sample() const override { return r_.iterations; }
  std::uint64_t bytes_per_sample() const override { return r_.bytes * r_.iterations; }

 private:
  void launch_kernel(cudaStream_t s) const {
    compute_for<<<blocks_, 32, 0, s>>>(r_.kernel_ns);
    PB_CUDA(cudaGetLastError());
  }

  void enqueue_copy(int batch, cudaStream_t s) const {
    const int b = batch % 2;
    PB_CUDA(cudaMemcpyAsync(device_buf_[b].get(), host_[b].data(), r_.bytes, cudaMemcpyHostToDevice,
                            s));
  }

  // Loads batch 0 and waits for it, outside the timed loop.
  void prime() {
    enqueue_copy(0, copy_.get());
    PB_CUDA(cudaEventRecord(copied_[0].get(), copy_.get()));
    PB_CUDA(cudaDeviceSynchronize());
  }

  // One sample: iteration i computes on batch i while batch i+1 is copied into the other buffer
  // (double buffering), however the variant orders that. Batch 0 is already there (prime()).
  void run_iterations() {
    const cudaStream_t compute = compute_.get();
    const cudaStream_t copy = copy_.get();
    for (int i = 0; i < r_.iterations; ++i) {
      switch (r_.variant) {
        case OverlapVariant::kPinnedSameStream:
          launch_kernel(compute);
          enqueue_copy(i + 1, compute);
          break;
        case OverlapVariant::kPinnedDeviceSync:
          launch_kernel(compute);
          enqueue_copy(i + 1, copy);
          PB_CUDA(cudaDeviceSynchronize());
          break;
        case OverlapVariant::kPinnedEventWait:
        case OverlapVariant::kPageableSeparateStream: {
          const int cur = i % 2, next = (i + 1) % 2;
          // Compute on batch i once it has arrived...
          PB_CUDA(cudaStreamWaitEvent(compute, copied_[cur].get(), 0));
          launch_kernel(compute);
          PB_CUDA(cudaEventRecord(computed_[cur].get(), compute));
          // ...while batch i+1 goes into the other buffer, once its last reader is done.
          if (i > 0) PB_CUDA(cudaStreamWaitEvent(copy, computed_[next].get(), 0));
          enqueue_copy(i + 1, copy);
          PB_CUDA(cudaEventRecord(copied_[next].get(), copy));
          break;
        }
      }
    }
    PB_CUDA(cudaDeviceSynchronize());
  }

  OverlapRequest r_;
  int device_;
  ResolvedHostPlacement where_;
  ThreadPlacement thread_;  // after where_, which it is built from
  int blocks_ = 1;
  std::array<PlacedHostMemory, 2> host_;
  std::array<DeviceMemory, 2> device_buf_;
  Stream compute_, copy_;
  std::array<Event, 2> copied_{Event(cudaEventDisableTiming), Event(cudaEventDisableTiming)};
  std::array<Event, 2> computed_{Event(cudaEventDisableTiming), Event(cudaEventDisableTiming)};
  DevicePatternChecker checker_;
  HostClock clock_{{}, "the loop synchronises the device itself; overlap is read off the timeline"};
  double copy_alone_ = 0, kernel_alone_ = 0;
  std::vector<Check> placement_;
  Timeline timeline_;
  TimelineAnalysis analysis_;
  std::uint64_t verified_ = 0;
};

}  // namespace

std::unique_ptr<CaseBench> make_overlap_bench(const OverlapRequest& r, const Machine& machine,
                                              int device) {
  return std::make_unique<OverlapBench>(r, machine, device);
}

}  // namespace pathbench
