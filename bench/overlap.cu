// The `overlap` family: a compute kernel of controlled duration and the H2D copy of the next
// batch, issued four ways; what overlapped is read off a CUPTI timeline of every sample.
#include <algorithm>
#include <array>
#include <optional>

#include "bench/overlap_family.hpp"
#include "core/errors.hpp"
#include "cuda/cuda_resources.hpp"
#include "cuda/device_pattern.hpp"
#include "cuda/gpu_block_timer.hpp"
#include "cuda/kernel_loading.hpp"
#include "core/host_clock.hpp"
#include "measure/pattern.hpp"
#include "placement/host_buffer.hpp"
#include "timeline/cupti_timeline.hpp"

namespace pathbench {

namespace {

constexpr std::uint64_t kSeed = 0x6f7665726c6170ull;  // "overlap"

__device__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Busy for a fixed time on every SM it occupies: a stand-in for a model's compute step whose
// duration does not depend on clocks or on what the copy engines do.
__global__ void compute_for(unsigned long long ns) {
  const unsigned long long start = now_ns();
  while (now_ns() - start < ns) {
  }
}

enum class Variant {
  kPageableSeparateStream,
  kPinnedSameStream,
  kPinnedEventWait,
  kPinnedDeviceSync
};

Variant variant_of(const std::string& v) {
  if (v == "pageable_separate_stream") return Variant::kPageableSeparateStream;
  if (v == "pinned_same_stream") return Variant::kPinnedSameStream;
  if (v == "pinned_device_sync") return Variant::kPinnedDeviceSync;
  return Variant::kPinnedEventWait;
}

class OverlapBench final : public CaseBench {
 public:
  OverlapBench(const CaseSpec& spec, int device)
      : variant_(variant_of(spec.str("variant"))),
        kernel_ns_(static_cast<unsigned long long>(spec.integer("kernel_us")) * 1000ull),
        bytes_(static_cast<std::size_t>(spec.integer("bytes"))),
        iterations_(spec.has("iterations") ? static_cast<int>(spec.integer("iterations")) : 8) {
    PB_CUDA(cudaSetDevice(device));
    int sms = 0;
    PB_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    blocks_ = std::max(1, sms);
    for (int i = 0; i < 2; ++i) {
      if (variant_ == Variant::kPageableSeparateStream) {
        pageable_[i].emplace(HostBufferRequest{bytes_, PageType::k4K, std::nullopt});
        pageable_[i]->touch();
        host_[i] = pageable_[i]->data();
      } else {
        pinned_[i] = PinnedHostMemory(bytes_);
        host_[i] = pinned_[i].get();
      }
      fill_pattern({host_[i], bytes_}, kSeed);
      device_[i] = DeviceMemory(bytes_);
    }
  }

  TimingMethod timing_method() const override { return TimingMethod::kHostSteadyClock; }

  std::vector<MetricSpec> metrics() const override { return overlap_metrics(); }

  void warm_up(double) override {
    {
      // Overlap can only be proven on a timeline: without CUPTI the case cannot claim anything.
      TimelineCapture probe(TimelineCapture::Options{});
      if (!probe.active()) {
        throw SkipCase("the overlap family needs a CUPTI timeline: " + probe.unavailable_reason());
      }
      prime();
      run_iterations();
      probe.collect();
    }
    // The ideal iteration is max(copy alone, kernel alone), each timed alone on an idle GPU.
    GpuBlockTimer timer;
    load_kernel(compute_for);  // before the first latched block (see kernel_loading.hpp)
    kernel_alone_ = timer.time_block(compute_.get(), [&] { launch_kernel(compute_.get()); });
    if (variant_ == Variant::kPageableSeparateStream) {
      copy_alone_ = time_on_host([&] {
        enqueue_copy(1, copy_.get());
        copy_.synchronize();
      });
    } else {
      copy_alone_ = timer.time_block(copy_.get(), [&] { enqueue_copy(1, copy_.get()); });
    }
  }

  Sample measure() override {
    PB_CUDA(cudaMemsetAsync(device_[0].get(), 0, bytes_, compute_.get()));
    PB_CUDA(cudaMemsetAsync(device_[1].get(), 0, bytes_, compute_.get()));
    compute_.synchronize();
    prime();  // batch 0 arrives before the clock starts: a steady-state loop is what is judged
    TimelineCapture capture(TimelineCapture::Options{});
    const double seconds = time_on_host([&] { run_iterations(); });
    timeline_ = capture.collect();
    if (!timeline_.unavailable_reason.empty()) {
      throw CaseFailure("the timeline of this sample is missing: " + timeline_.unavailable_reason);
    }
    analysis_ = analyze_timeline(timeline_);
    const double per_iteration = seconds / iterations_;
    const double ideal = std::max(copy_alone_, kernel_alone_);
    return {seconds, {per_iteration, analysis_.overlap_fraction, per_iteration / ideal}};
  }

  void verify() override {
    // The last iteration copied batch `iterations_` into buffer iterations_ % 2.
    checker_.verify(device_[iterations_ % 2].get(), bytes_, kSeed, compute_.get(),
                    "device buffer after the last copy");
    verified_ = true;
  }

  std::vector<Check> checks() const override {
    std::vector<Check> all = timeline_checks(timeline_, analysis_);
    all.push_back({"copy_pattern", verified_,
                   verified_ ? "the last batch matched the pattern after every sample"
                             : "no sample was verified",
                   nullptr});
    return all;
  }

  std::vector<Check> timeline_checks(const Timeline& timeline,
                                     const TimelineAnalysis& analysis) const override {
    std::vector<Check> out;
    out.push_back({"timeline_complete", analysis.complete,
                   analysis.complete ? "CUPTI dropped no records"
                                     : "CUPTI dropped " + std::to_string(timeline.dropped_records) +
                                           " records: the timeline is incomplete",
                   timeline.dropped_records});
    const std::string wanted = variant_ == Variant::kPageableSeparateStream ? "pageable" : "pinned";
    std::size_t matching = 0;
    for (const auto& [kind, n] : analysis.copies_by_source_kind) {
      if (kind == wanted) matching += n;
    }
    out.push_back({"timeline_memory_kind", analysis.copies > 0 && matching == analysis.copies,
                   std::to_string(matching) + " of " + std::to_string(analysis.copies) +
                       " copies on the timeline read " + wanted + " memory",
                   wanted});
    // A pageable copy may be split by the driver into several records; pinned ones may not.
    const double per_iteration = static_cast<double>(analysis.copies) / (iterations_ + 0.0);
    const bool one_each = variant_ == Variant::kPageableSeparateStream
                              ? analysis.copies >= static_cast<std::size_t>(iterations_)
                              : analysis.copies == static_cast<std::size_t>(iterations_);
    out.push_back({"copies_per_iteration", one_each,
                   std::to_string(analysis.copies) + " copy records for " +
                       std::to_string(iterations_) + " iterations",
                   per_iteration});
    return out;
  }

  const Timeline* captured_timeline() const override { return &timeline_; }
  std::uint64_t operations_per_sample() const override { return iterations_; }
  std::uint64_t bytes_per_sample() const override { return bytes_ * iterations_; }

 private:
  void launch_kernel(cudaStream_t s) const {
    compute_for<<<blocks_, 32, 0, s>>>(kernel_ns_);
    PB_CUDA(cudaGetLastError());
  }

  void enqueue_copy(int batch, cudaStream_t s) const {
    const int b = batch % 2;
    PB_CUDA(cudaMemcpyAsync(device_[b].get(), host_[b], bytes_, cudaMemcpyHostToDevice, s));
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
    switch (variant_) {
      case Variant::kPinnedSameStream:
        for (int i = 0; i < iterations_; ++i) {
          launch_kernel(compute);
          enqueue_copy(i + 1, compute);
        }
        break;
      case Variant::kPinnedDeviceSync:
        for (int i = 0; i < iterations_; ++i) {
          launch_kernel(compute);
          enqueue_copy(i + 1, copy);
          PB_CUDA(cudaDeviceSynchronize());
        }
        break;
      case Variant::kPinnedEventWait:
      case Variant::kPageableSeparateStream:
        for (int i = 0; i < iterations_; ++i) {
          const int cur = i % 2, next = (i + 1) % 2;
          // Compute on batch i once it has arrived...
          PB_CUDA(cudaStreamWaitEvent(compute, copied_[cur].get(), 0));
          launch_kernel(compute);
          PB_CUDA(cudaEventRecord(computed_[cur].get(), compute));
          // ...while batch i+1 goes into the other buffer, once its last reader is done.
          if (i > 0) PB_CUDA(cudaStreamWaitEvent(copy, computed_[next].get(), 0));
          enqueue_copy(i + 1, copy);
          PB_CUDA(cudaEventRecord(copied_[next].get(), copy));
        }
        break;
    }
    PB_CUDA(cudaDeviceSynchronize());
  }

  Variant variant_;
  unsigned long long kernel_ns_;
  std::size_t bytes_;
  int iterations_;
  int blocks_ = 1;
  std::array<std::optional<HostBuffer>, 2> pageable_;
  std::array<PinnedHostMemory, 2> pinned_;
  std::array<std::byte*, 2> host_{};
  std::array<DeviceMemory, 2> device_;
  Stream compute_, copy_;
  std::array<Event, 2> copied_{Event(cudaEventDisableTiming), Event(cudaEventDisableTiming)};
  std::array<Event, 2> computed_{Event(cudaEventDisableTiming), Event(cudaEventDisableTiming)};
  DevicePatternChecker checker_;
  double copy_alone_ = 0, kernel_alone_ = 0;
  Timeline timeline_;
  TimelineAnalysis analysis_;
  bool verified_ = false;
};

class OverlapFamily final : public OverlapFamilyBase {
 public:
  std::unique_ptr<CaseBench> prepare(const CaseSpec& spec, const Machine&,
                                     int device) const override {
    return std::make_unique<OverlapBench>(spec, device);
  }
};

}  // namespace

std::unique_ptr<Family> make_overlap_family() { return std::make_unique<OverlapFamily>(); }

}  // namespace pathbench
