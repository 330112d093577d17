// The `unified_memory` family: fault-driven migration of host-initialised managed buffers vs
// cudaMemPrefetchAsync vs cudaMemAdvise, and GPU-to-CPU faults back. Fault groups and migrated
// bytes come from CUPTI's unified-memory counters, captured around each timed pass.
#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bench/unified_memory_family.hpp"
#include "core/errors.hpp"
#include "core/units.hpp"
#include "cuda/cuda_resources.hpp"
#include "cuda/gpu_block_timer.hpp"
#include "cuda/kernel_loading.hpp"
#include "core/host_clock.hpp"
#include "placement/thread_affinity.hpp"
#include "timeline/cupti_timeline.hpp"
#include "timeline/timeline.hpp"

namespace pathbench {

namespace {

using Method = UnifiedMemoryRequest::Method;

constexpr double kMiB = 1024.0 * 1024.0;
constexpr unsigned kTouchThreads = 256;
// How long the probe's latch holds the stream while cudaMemPrefetchAsync is enqueued. A call that
// does not return within it waits for the stream itself, so it cannot be timed inside a latch.
constexpr double kPrefetchProbeTimeout = 2.0;

// One thread per touched address: reads the byte and writes it back incremented, so the page
// must be present and writable on the GPU.
__global__ void touch_kernel(unsigned char* buffer, std::size_t stride, std::size_t touches) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < touches) {
    volatile unsigned char* p = buffer + i * stride;
    *p = static_cast<unsigned char>(*p + 1);
  }
}

// cudaMallocManaged, attached globally (any stream, any processor).
class ManagedMemory {
 public:
  ManagedMemory() = default;
  explicit ManagedMemory(std::size_t bytes) : bytes_(bytes) {
    PB_CUDA(cudaMallocManaged(&ptr_, bytes == 0 ? 1 : bytes, cudaMemAttachGlobal));
  }
  ManagedMemory(ManagedMemory&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  ManagedMemory& operator=(ManagedMemory&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  ~ManagedMemory() {
    if (ptr_) cudaFree(ptr_);
  }
  unsigned char* get() const { return static_cast<unsigned char*>(ptr_); }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

cudaMemLocation device_location(int device) {
  cudaMemLocation l{};
  l.type = cudaMemLocationTypeDevice;
  l.id = device;
  return l;
}

cudaMemLocation host_location() {
  cudaMemLocation l{};
  l.type = cudaMemLocationTypeHost;  // id is ignored
  l.id = 0;
  return l;
}

UnifiedMemoryDeviceProperties query_device_properties(int device) {
  auto attribute = [device](cudaDeviceAttr a) {
    int value = 0;
    PB_CUDA(cudaDeviceGetAttribute(&value, a, device));
    return value != 0;
  };
  UnifiedMemoryDeviceProperties p;
  p.device = device;
  p.managed_memory = attribute(cudaDevAttrManagedMemory);
  p.concurrent_managed_access = attribute(cudaDevAttrConcurrentManagedAccess);
  p.pageable_memory_access = attribute(cudaDevAttrPageableMemoryAccess);
  p.pageable_uses_host_page_tables = attribute(cudaDevAttrPageableMemoryAccessUsesHostPageTables);
  p.direct_managed_access_from_host = attribute(cudaDevAttrDirectManagedMemAccessFromHost);
  std::size_t free_bytes = 0, total_bytes = 0;
  PB_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  p.free_device_bytes = free_bytes;
  return p;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

template <typename T>
std::string list_text(const std::vector<T>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::string join(const std::vector<std::string>& parts, const std::string& separator) {
  std::string s;
  for (std::size_t i = 0; i < parts.size(); ++i) s += (i ? separator : "") + parts[i];
  return s;
}

// What one timed pass measured and what CUPTI counted during it.
struct Pass {
  double seconds = 0;
  bool counted = false;  // the capture was active: `counts` are measured
  UnifiedMemoryCounts counts;
  std::vector<std::string> gaps;  // contradictions showing that CUPTI lost records
  std::uint64_t migrated = 0;     // the bytes the metrics divide by
  bool migrated_is_lower_bound = true;
  double prefetch_call_seconds = 0;  // prefetch: how long cudaMemPrefetchAsync held the thread
};

class UnifiedMemoryBench final : public CaseBench {
 public:
  UnifiedMemoryBench(const CaseSpec& spec, const Machine& machine, int device)
      : request_(decode_unified_memory_request(spec)), device_(device) {
    // The context must exist before CUPTI's unified-memory counters are configured.
    PB_CUDA(cudaSetDevice(device));
    PB_CUDA(cudaFree(nullptr));
    properties_ = query_device_properties(device);
    if (auto why = unified_memory_device_skip_reason(request_, properties_)) throw SkipCase(*why);
    if (const auto node = machine.gpu_local_node(device)) {
      if (const auto* cpus = machine.cpus_of_node(*node); cpus && !cpus->empty()) {
        affinity_.emplace(*cpus);  // the host side (fill, CPU faults) runs on the GPU's node
      }
    }
    stream_.emplace();
    timer_.emplace();
    load_kernel(touch_kernel);  // before the first latched block (see kernel_loading.hpp)
    // CUPTI counts the migrations of managed allocations made after it was initialised only.
    counters_unavailable_ = prepare_cupti_tracing();
    buffer_ = ManagedMemory(request_.bytes);
    record_static_checks();
    apply_advice();
    if (request_.method == Method::kPrefetch) probe_prefetch_in_latch();
  }

  ~UnifiedMemoryBench() override {
    // Nothing may still use the buffer when it is freed (an exception can leave work queued).
    if (stream_) cudaStreamSynchronize(stream_->get());
  }

  TimingMethod timing_method() const override {
    return host_timed() ? TimingMethod::kHostSteadyClock : TimingMethod::kCudaEventsLatched;
  }

  std::vector<MetricSpec> metrics() const override { return unified_memory_metrics(); }

  // A sample is one pass over the buffer (after it, the pages have moved): min_time cannot
  // lengthen it. The warm-up pass pays for CUPTI's set-up and the driver's first migration.
  void warm_up(double /*min_time*/) override {
    const bool latched_before = !(timer_ && timer_->host_timed());
    run_pass();
    if (latched_before && timer_ && timer_->host_timed()) {
      // The shared timer found that this pass blocked the calling thread behind the latch and
      // ran it again under the host clock: the bytes were touched twice. Nothing to verify in
      // that pass; run a clean one.
      pending_verify_ = false;
      run_pass();
    }
    verify();
  }

  Sample measure() override {
    const Pass p = run_pass();
    passes_.push_back(p);
    const double migrated = static_cast<double>(p.migrated);
    return {p.seconds, {p.seconds, migrated / p.seconds / kGB, p.seconds / (migrated / kMiB)}};
  }

  // The touched bytes hold what the pass wrote, their neighbours the fill: checked on the host
  // after migrating the buffer back (untimed; the next pass would do it anyway).
  void verify() override {
    if (!pending_verify_) return;
    pending_verify_ = false;
    to_host();
    const unsigned char* p = buffer_.get();
    for (std::uint64_t off = 0; off < request_.bytes; off += request_.stride) {
      if (p[off] != expected_touched_) {
        throw CaseFailure(
            "touched byte " + std::to_string(off) + " holds " + std::to_string(p[off]) +
            " after the pass, expected " + std::to_string(expected_touched_) + " (fill " +
            std::to_string(fill_) +
            (request_.method == Method::kGpuToCpu ? " + GPU + host touch)" : " + GPU touch)"));
      }
      if (off + 1 < request_.bytes && p[off + 1] != fill_) {
        throw CaseFailure("untouched byte " + std::to_string(off + 1) + " holds " +
                          std::to_string(p[off + 1]) + ", expected the fill " +
                          std::to_string(fill_));
      }
    }
    ++verified_passes_;
  }

  std::vector<Check> checks() const override {
    std::vector<Check> all = checks_;
    add_counter_checks(all);
    if (request_.method == Method::kPrefetch) add_prefetch_check(all);
    all.push_back({"touch_data", verified_passes_ > 0,
                   verified_passes_ > 0
                       ? "every touched byte held the value written by the pass and its "
                         "neighbour the host's fill, after " +
                             std::to_string(verified_passes_) + " passes (warm-up included)"
                       : "no pass was verified",
                   verified_passes_});
    return all;
  }

  // The last timed sample's CUPTI records (the runner writes them as a Chrome trace).
  const Timeline* captured_timeline() const override {
    return last_timeline_.records.empty() ? nullptr : &last_timeline_;
  }

  std::uint64_t operations_per_sample() const override { return request_.touches(); }
  std::uint64_t bytes_per_sample() const override { return request_.estimated_migrated_bytes(); }

 private:
  bool host_timed() const {
    return request_.method == Method::kGpuToCpu ||
           (request_.method == Method::kPrefetch && !prefetch_latched_) ||
           (timer_ && timer_->host_timed());
  }

  void to_host() {
    PB_CUDA(
        cudaMemPrefetchAsync(buffer_.get(), request_.bytes, host_location(), 0, stream_->get()));
    stream_->synchronize();
  }

  void launch_touch() {
    const std::uint64_t touches = request_.touches();
    const unsigned blocks = static_cast<unsigned>((touches + kTouchThreads - 1) / kTouchThreads);
    touch_kernel<<<blocks, kTouchThreads, 0, stream_->get()>>>(buffer_.get(), request_.stride,
                                                               touches);
    PB_CUDA(cudaGetLastError());
  }

  void enqueue_prefetch_to_gpu() {
    PB_CUDA(cudaMemPrefetchAsync(buffer_.get(), request_.bytes, device_location(device_), 0,
                                 stream_->get()));
  }

  void host_touch() {
    volatile unsigned char* p = buffer_.get();
    for (std::uint64_t off = 0; off < request_.bytes; off += request_.stride) {
      p[off] = static_cast<unsigned char>(p[off] + 1);
    }
  }

  // Untimed: every page on the host, written by the host with this pass's fill byte; for
  // gpu_to_cpu then migrated to the GPU and written there.
  void set_up_pass() {
    ++pass_count_;
    fill_ = static_cast<unsigned char>(1 + pass_count_ % 250);
    to_host();
    std::memset(buffer_.get(), fill_, request_.bytes);
    expected_touched_ = static_cast<unsigned char>(fill_ + 1);
    if (request_.method == Method::kGpuToCpu) {
      enqueue_prefetch_to_gpu();
      launch_touch();
      stream_->synchronize();
      expected_touched_ = static_cast<unsigned char>(fill_ + 2);
    }
  }

  double timed_part(Pass& pass) {
    const cudaStream_t s = stream_->get();
    switch (request_.method) {
      case Method::kGpuToCpu:
        return time_on_host([&] { host_touch(); });
      case Method::kPrefetch:
        if (prefetch_latched_) {
          return timer_->time_block(s, [&] {
            pass.prefetch_call_seconds = time_on_host([&] { enqueue_prefetch_to_gpu(); });
            launch_touch();
          });
        }
        return time_on_host([&] {
          pass.prefetch_call_seconds = time_on_host([&] { enqueue_prefetch_to_gpu(); });
          launch_touch();
          stream_->synchronize();
        });
      case Method::kFault:
      case Method::kAdvisePreferredGpu:
      case Method::kAdviseAccessedBy:
        break;
    }
    return timer_->time_block(s, [&] { launch_touch(); });
  }

  Pass run_pass() {
    set_up_pass();
    Pass pass;
    {
      TimelineCapture::Options options;
      options.unified_memory_counters = true;
      TimelineCapture capture(options);
      pass.seconds = timed_part(pass);
      Timeline timeline = capture.collect();
      if (capture.active() && timeline.unavailable_reason.empty()) {
        const TimelineAnalysis a = analyze_timeline(timeline);
        pass.counted = true;
        UnifiedMemoryCounts& c = pass.counts;
        c.gpu_fault_groups = a.unified_memory_fault_groups;
        c.bytes_h2d = a.unified_memory_bytes_h2d;
        c.bytes_d2h = a.unified_memory_bytes_d2h;
        for (const auto& r : timeline.records) {
          if (r.kind == ActivityKind::kUnifiedMemory && r.name == "cpu_page_fault_count") {
            c.cpu_faults += r.value;
          }
        }
        c.lost_records = timeline.dropped_records;
        pass.gaps = unified_memory_count_gaps(request_, c);
        last_timeline_ = std::move(timeline);
      } else {
        counters_unavailable_ = !capture.unavailable_reason().empty() ? capture.unavailable_reason()
                                                                      : timeline.unavailable_reason;
      }
    }
    pass.migrated = unified_memory_migrated_bytes(request_, pass.counts);
    const std::uint64_t counted_bytes =
        request_.method == Method::kGpuToCpu ? pass.counts.bytes_d2h : pass.counts.bytes_h2d;
    pass.migrated_is_lower_bound =
        !pass.counted || counted_bytes < request_.estimated_migrated_bytes();
    pending_verify_ = true;
    return pass;
  }

  void apply_advice() {
    const auto here = device_location(device_);
    if (request_.method == Method::kAdvisePreferredGpu) {
      PB_CUDA(
          cudaMemAdvise(buffer_.get(), request_.bytes, cudaMemAdviseSetPreferredLocation, here));
      int preferred = cudaInvalidDeviceId;
      PB_CUDA(cudaMemRangeGetAttribute(&preferred, sizeof preferred,
                                       cudaMemRangeAttributePreferredLocation, buffer_.get(),
                                       request_.bytes));
      checks_.push_back({"advice", preferred == device_,
                         "cudaMemRangeGetAttribute(PreferredLocation) reports " +
                             std::to_string(preferred) + ", advised GPU " + std::to_string(device_),
                         preferred});
    } else if (request_.method == Method::kAdviseAccessedBy) {
      PB_CUDA(cudaMemAdvise(buffer_.get(), request_.bytes, cudaMemAdviseSetAccessedBy, here));
      std::vector<int> ids(8, cudaInvalidDeviceId);
      PB_CUDA(cudaMemRangeGetAttribute(ids.data(), ids.size() * sizeof(int),
                                       cudaMemRangeAttributeAccessedBy, buffer_.get(),
                                       request_.bytes));
      std::erase(ids, cudaInvalidDeviceId);
      const bool ok = std::find(ids.begin(), ids.end(), device_) != ids.end();
      checks_.push_back({"advice", ok,
                         "cudaMemRangeGetAttribute(AccessedBy) reports devices " + list_text(ids) +
                             ", advised GPU " + std::to_string(device_),
                         ids});
    }
  }

  void record_static_checks() {
    cudaPointerAttributes attr{};
    PB_CUDA(cudaPointerGetAttributes(&attr, buffer_.get()));
    checks_.push_back({"managed_memory", attr.type == cudaMemoryTypeManaged,
                       attr.type == cudaMemoryTypeManaged
                           ? "CUDA reports the buffer as managed"
                           : "CUDA does not report the buffer as managed (type " +
                                 std::to_string(static_cast<int>(attr.type)) + ")",
                       static_cast<int>(attr.type)});
    const auto& p = properties_;
    nlohmann::ordered_json value = {
        {"concurrent_managed_access", p.concurrent_managed_access},
        {"pageable_memory_access", p.pageable_memory_access},
        {"pageable_memory_access_uses_host_page_tables", p.pageable_uses_host_page_tables},
        {"direct_managed_mem_access_from_host", p.direct_managed_access_from_host},
        {"free_device_bytes_before_allocation", p.free_device_bytes}};
    checks_.push_back({"device_properties", true,
                       "GPU " + std::to_string(device_) + ": concurrentManagedAccess=" +
                           std::to_string(p.concurrent_managed_access) +
                           ", pageableMemoryAccess=" + std::to_string(p.pageable_memory_access) +
                           ", pageableMemoryAccessUsesHostPageTables=" +
                           std::to_string(p.pageable_uses_host_page_tables) +
                           ", directManagedMemAccessFromHost=" +
                           std::to_string(p.direct_managed_access_from_host) + "; " +
                           format_bytes(p.free_device_bytes) + " free before allocating " +
                           format_bytes(request_.bytes) + " of managed memory",
                       std::move(value)});
  }

  // Some drivers make cudaMemPrefetchAsync wait for the stream before it returns; inside a
  // latched block that waits for the latch, which then times out. Find out once, untimed, and
  // time such a prefetch with the host clock instead (the result says which method timed it).
  void probe_prefetch_in_latch() {
    set_up_pass();
    GpuBlockTimer probe(kPrefetchProbeTimeout);
    try {
      probe.time_block(stream_->get(), [&] {
        enqueue_prefetch_to_gpu();
        launch_touch();
      });
      prefetch_latched_ = true;
    } catch (const CaseFailure& e) {
      prefetch_latched_ = false;
      prefetch_probe_ = e.what();
    }
    pending_verify_ = true;
    verify();
  }

  void add_counter_checks(std::vector<Check>& out) const {
    std::vector<std::uint64_t> groups, h2d, d2h, cpu_faults;
    nlohmann::ordered_json per_group = nlohmann::ordered_json::array();
    std::vector<double> per_group_values;
    std::size_t counted = 0, lower_bound = 0, with_gaps = 0;
    const Pass* first_gap = nullptr;
    for (const auto& p : passes_) {
      if (!p.counted) continue;
      ++counted;
      groups.push_back(p.counts.gpu_fault_groups);
      h2d.push_back(p.counts.bytes_h2d);
      d2h.push_back(p.counts.bytes_d2h);
      cpu_faults.push_back(p.counts.cpu_faults);
      if (p.migrated_is_lower_bound) ++lower_bound;
      if (!p.gaps.empty()) {
        ++with_gaps;
        if (!first_gap) first_gap = &p;
      }
      // A time per fault group needs every group counted: not from a sample that lost records.
      if (p.counts.gpu_fault_groups > 0 && p.gaps.empty()) {
        const double t = p.seconds / static_cast<double>(p.counts.gpu_fault_groups);
        per_group.push_back(t);
        per_group_values.push_back(t);
      } else {
        per_group.push_back(nullptr);
      }
    }
    const std::string least =
        format_bytes(request_.estimated_migrated_bytes()) +
        (request_.method == Method::kPrefetch ? " (the whole buffer)"
                                              : " (the page of every touched address)");
    if (counted == 0) {
      out.push_back({"um_counters", true,
                     "CUPTI unavailable: " +
                         (counters_unavailable_.empty() ? std::string("no sample was measured")
                                                        : counters_unavailable_) +
                         "; fault counts not measured; migration_throughput and time_per_mib "
                         "use the lower bound " +
                         least,
                     nullptr});
      return;
    }
    std::string detail = "CUPTI unified-memory counters per sample: GPU page-fault groups " +
                         list_text(groups) + ", bytes H2D " + list_text(h2d) + ", bytes D2H " +
                         list_text(d2h) + ", CPU page faults " + list_text(cpu_faults);
    if (!per_group_values.empty()) {
      detail += "; median time per fault group " + format_seconds(median_of(per_group_values));
    }
    if (lower_bound > 0) {
      detail += "; " + std::to_string(lower_bound) +
                " sample(s) counted fewer bytes than the pass must migrate (through a mapping, "
                "or records lost): their migration_throughput and time_per_mib use the lower "
                "bound " +
                least;
    }
    if (counted < passes_.size()) {
      detail += "; " + std::to_string(passes_.size() - counted) +
                " sample(s) without counters: " + counters_unavailable_;
    }
    if (first_gap) {
      detail += "; INCOMPLETE in " + std::to_string(with_gaps) + " of " + std::to_string(counted) +
                " samples, CUPTI lost records: " + join(first_gap->gaps, "; ") +
                " (first such sample); the counts are lower bounds";
    }
    nlohmann::ordered_json value = {{"gpu_fault_groups", groups},
                                    {"bytes_h2d", h2d},
                                    {"bytes_d2h", d2h},
                                    {"cpu_page_faults", cpu_faults},
                                    {"time_per_fault_group_s", per_group},
                                    {"complete", with_gaps == 0}};
    out.push_back({"um_counters", true, detail, std::move(value)});

    if (request_.method == Method::kFault) add_fault_check(out, groups);
    if (request_.method == Method::kGpuToCpu) {
      bool all_back = true;
      for (std::size_t i = 0; i < d2h.size(); ++i) all_back = all_back && d2h[i] > 0;
      out.push_back({"cpu_fault_migration", all_back,
                     all_back ? "every sample migrated pages back to the host: bytes D2H " +
                                    list_text(d2h) + ", CPU page faults " + list_text(cpu_faults)
                              : "a sample migrated no bytes back to the host " + list_text(d2h) +
                                    ": the host did not fault the pages back from the GPU",
                     d2h});
    }
  }

  // Fault-driven means: GPU fault groups counted, or pages reached the GPU in a pass that issued
  // nothing but the touch kernel (see unified_memory_fault_driven). A sample with neither did
  // not show a migration at all, and fails the case.
  void add_fault_check(std::vector<Check>& out, const std::vector<std::uint64_t>& groups) const {
    std::size_t shown = 0, uncounted = 0;
    for (const auto& p : passes_) {
      if (!p.counted) continue;
      if (unified_memory_fault_driven(p.counts)) ++shown;
      if (p.counts.gpu_fault_groups == 0 && p.counts.bytes_h2d > 0) ++uncounted;
    }
    const bool all = shown == groups.size();
    std::string detail;
    if (!all) {
      detail =
          "a sample counted neither a GPU page fault nor a migration to the GPU (fault "
          "groups " +
          list_text(groups) +
          "): the case did not show fault-driven migration (pages already on the GPU, or "
          "CUPTI lost every record of the pass)";
    } else if (uncounted == 0) {
      detail =
          "every sample's migration was fault-driven: GPU page-fault groups " + list_text(groups);
    } else {
      detail =
          "every sample migrated pages to the GPU with nothing but the touch kernel "
          "running, so by GPU faults; " +
          std::to_string(uncounted) +
          " sample(s) counted migrated bytes but no fault group (CUPTI lost the fault "
          "records): their fault counts are not measured; fault groups " +
          list_text(groups);
    }
    out.push_back({"gpu_fault_groups", all, detail, groups});
  }

  void add_prefetch_check(std::vector<Check>& out) const {
    std::vector<double> calls;
    for (const auto& p : passes_) calls.push_back(p.prefetch_call_seconds);
    const double median = median_of(calls);
    std::string detail = "cudaMemPrefetchAsync held the calling thread for a median " +
                         format_seconds(median) + " per sample";
    if (prefetch_latched_) {
      detail += "; timed in a latched block (CUDA events), which does not include that host time";
    } else {
      detail += "; it did not return while a latch held the stream (" + prefetch_probe_ +
                "), so prefetch and kernel are timed with the host clock up to the stream's "
                "completion";
    }
    out.push_back({"prefetch_timing", true, detail, median});
  }

  UnifiedMemoryRequest request_;
  int device_;
  UnifiedMemoryDeviceProperties properties_;
  std::optional<ThreadAffinityScope> affinity_;  // first in, last out: restores the thread
  std::optional<Stream> stream_;
  std::optional<GpuBlockTimer> timer_;
  ManagedMemory buffer_;  // declared after the stream; the destructor drains the stream first
  bool prefetch_latched_ = true;
  std::string prefetch_probe_;
  std::uint64_t pass_count_ = 0;
  unsigned char fill_ = 0;
  unsigned char expected_touched_ = 0;
  bool pending_verify_ = false;
  std::uint64_t verified_passes_ = 0;
  std::vector<Pass> passes_;  // the timed samples (not the warm-up or the probe)
  Timeline last_timeline_;
  std::string counters_unavailable_;
  std::vector<Check> checks_;
};

class UnifiedMemoryFamily final : public UnifiedMemoryFamilyBase {
 public:
  std::unique_ptr<CaseBench> prepare(const CaseSpec& spec, const Machine& machine,
                                     int device) const override {
    return std::make_unique<UnifiedMemoryBench>(spec, machine, device);
  }
};

}  // namespace

std::unique_ptr<Family> make_unified_memory_family() {
  return std::make_unique<UnifiedMemoryFamily>();
}

}  // namespace pathbench
