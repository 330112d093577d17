// The `copy` family with gpus=all: H2D or D2H to every selected GPU at the same time, so GPUs that
// share a PCIe switch, a root port or a socket's I/O bandwidth show it (each GPU alone reaches
// its link rate; together they split the shared uplink).
//
// Per GPU: a host buffer of the case's host_memory kind on that GPU's own NUMA node, a device
// buffer and a stream on the GPU. One sample is one block of `ops` copies on every GPU's stream,
// timed by the shared GpuBlockTimer over all the streams: one latch kernel per stream, all
// released by one host write, so the copies of every GPU start together; each GPU's block is
// timed by its own events. Metrics: bandwidth_gpu<N> (that GPU's bytes over its block time),
// bandwidth (their sum: the node's aggregate rate while all GPUs copy), time_per_copy (the slowest
// GPU's block time per copy: one copy to every GPU). Every GPU's destination is verified after
// every sample, each GPU with its own pattern seed so a copy from the wrong buffer is caught.
#include <algorithm>
#include <cstring>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "bench/copy_family.hpp"
#include "bench/copy_host.hpp"
#include "core/errors.hpp"
#include "core/units.hpp"
#include "cuda/cuda_resources.hpp"
#include "cuda/device_pattern.hpp"
#include "cuda/gpu_block_timer.hpp"
#include "measure/host_clock.hpp"
#include "measure/pattern.hpp"

namespace pathbench {

namespace {

constexpr std::uint64_t kSeed = 0x616c6c67u;  // "allg"; GPU N's data uses kSeed + N
// Per stream, as in the single-GPU bench: a latched block stays well inside the driver's queue.
constexpr std::uint64_t kMaxLatchedOps = 256;

using Direction = CopyRequest::Direction;

std::string suffixed(const std::string& name, int gpu) {
  return name + "_gpu" + std::to_string(gpu);
}

class CopyAllGpusBench final : public CaseBench {
 public:
  CopyAllGpusBench(const CaseSpec& spec, const Machine& machine)
      : request_(decode_copy_request(spec)), restore_device_(current_device()) {
    const std::vector<int> indexes = copy_all_gpus(machine);
    if (indexes.empty()) throw SkipCase("no GPU to copy to");
    for (int index : indexes) {
      const auto node = machine.gpu_local_node(index);
      if (!node) {
        throw SkipCase("the NUMA node of GPU " + std::to_string(index) +
                       " is unknown, so its host buffer cannot be placed on its own node");
      }
      auto gpu = std::make_unique<PerGpu>();
      gpu->device = index;
      gpu->node = *node;
      gpu->seed = kSeed + static_cast<std::uint64_t>(index);
      {
        // Everything of this GPU, its host buffer included, belongs to its own context.
        DeviceScope scope(index);
        gpu->stream.emplace();
        gpu->checker.emplace();
        gpu->device_buffer = DeviceMemory(request_.bytes);
        allocate_copy_host_memory(gpu->host, request_, gpu->node);
      }
      streams_.push_back(DeviceStream{index, gpu->stream->get()});
      gpus_.push_back(std::move(gpu));
    }
    {
      DeviceScope scope(gpus_.front()->device);
      timer_.emplace();
    }
    fill_sources();
    record_placement_checks();
  }

  TimingMethod timing_method() const override {
    return timer_->host_timed() ? TimingMethod::kHostSteadyClock : TimingMethod::kCudaEventsLatched;
  }

  std::vector<MetricSpec> metrics() const override {
    std::vector<std::string> labels;
    for (const auto& g : gpus_) labels.push_back(std::to_string(g->device));
    return copy_metrics(request_, labels);  // bandwidth, bandwidth_gpu<N>..., time_per_copy
  }

  void warm_up(double min_time) override {
    ops_ = 1;
    clear_destinations();
    timed_copies(1);  // first touch of every GPU's copy path: not counted
    constexpr std::uint64_t kProbeOps = 4;
    const auto probe = timed_copies(kProbeOps);
    const double slowest = *std::max_element(probe.begin(), probe.end());
    ops_ = operations_for(min_time, slowest / kProbeOps, kMaxLatchedOps);
  }

  Sample measure() override {
    clear_destinations();
    const std::vector<double> seconds = timed_copies(ops_);
    const double bytes = static_cast<double>(request_.bytes) * static_cast<double>(ops_);
    Sample s;
    s.seconds = *std::max_element(seconds.begin(), seconds.end());
    s.values.push_back(0.0);  // the sum, filled in below
    double sum = 0;
    for (double t : seconds) {
      const double gb_per_s = bytes / t / kGB;
      s.values.push_back(gb_per_s);
      sum += gb_per_s;
    }
    s.values.front() = sum;
    s.values.push_back(s.seconds / static_cast<double>(ops_));
    return s;
  }

  void verify() override {
    for (const auto& g : gpus_) {
      const std::string what =
          "GPU " + std::to_string(g->device) + "'s copy destination after the timed block";
      if (request_.direction == Direction::kH2D) {
        DeviceScope scope(g->device);
        g->checker->verify(g->device_buffer.get(), request_.bytes, g->seed, g->stream->get(), what);
      } else {
        verify_pattern({g->host.ptr, request_.bytes}, g->seed, what);
      }
    }
    copies_verified_ = true;
  }

  std::vector<Check> checks() const override {
    std::vector<Check> all = checks_;
    for (const auto& g : gpus_) {
      all.push_back({suffixed("copy_pattern", g->device), copies_verified_,
                     copies_verified_ ? "GPU " + std::to_string(g->device) +
                                            "'s destination matched its pattern after every sample"
                                      : "no sample was verified",
                     nullptr});
    }
    if (timer_->host_timed()) {
      all.push_back({"timing", true, timer_->host_timed_reason(), "host_steady_clock"});
    }
    return all;
  }

  std::vector<Check> timeline_checks(const Timeline&, const TimelineAnalysis& a) const override {
    std::vector<Check> out;
    std::size_t copies = 0;
    for (const auto& [kind, n] : a.copies_by_source_kind) copies += n;
    if (request_.direction == Direction::kH2D) {
      const auto it = a.copies_by_source_kind.find("pinned");
      const std::size_t pinned = it == a.copies_by_source_kind.end() ? 0 : it->second;
      out.push_back({"timeline_memory_kind", copies > 0 && pinned == copies,
                     std::to_string(pinned) + " of " + std::to_string(copies) +
                         " copies on the timeline read pinned host memory",
                     "pinned"});
    }
    const std::uint64_t expected = ops_ * gpus_.size();
    out.push_back({"timeline_copies", a.copies == expected,
                   std::to_string(a.copies) + " copy records for " + std::to_string(expected) +
                       " copies issued in one sample (" + std::to_string(ops_) + " on each of " +
                       std::to_string(gpus_.size()) + " GPUs)",
                   a.copies});
    return out;
  }

  std::uint64_t operations_per_sample() const override { return ops_ * gpus_.size(); }
  std::uint64_t bytes_per_sample() const override {
    return request_.bytes * operations_per_sample();
  }

 private:
  struct PerGpu {
    PerGpu() = default;
    PerGpu(const PerGpu&) = delete;
    PerGpu& operator=(const PerGpu&) = delete;
    // The members are freed with their own device current (the caller's device comes back with
    // the bench's restore_device_).
    ~PerGpu() { cudaSetDevice(device); }

    int device = 0;
    int node = 0;
    std::uint64_t seed = 0;
    // Destroyed bottom-up: the device side before the host buffer it copies from or to.
    CopyHostMemory host;
    std::optional<Stream> stream;
    std::optional<DevicePatternChecker> checker;
    DeviceMemory device_buffer;
  };

  static int current_device() {
    int device = 0;
    PB_CUDA(cudaGetDevice(&device));
    return device;
  }

  void fill_sources() {
    for (const auto& g : gpus_) {
      if (request_.direction == Direction::kH2D) {
        fill_pattern({g->host.ptr, request_.bytes}, g->seed);
      } else {
        DeviceScope scope(g->device);
        fill_pattern_on_device(g->device_buffer.get(), request_.bytes, g->seed, g->stream->get());
      }
    }
    synchronize_all();
  }

  void clear_destinations() {
    for (const auto& g : gpus_) {
      if (request_.direction == Direction::kH2D) {
        DeviceScope scope(g->device);
        PB_CUDA(cudaMemsetAsync(g->device_buffer.get(), 0, request_.bytes, g->stream->get()));
      } else {
        std::memset(g->host.ptr, 0, request_.bytes);
      }
    }
    synchronize_all();
  }

  void synchronize_all() const {
    for (const auto& g : gpus_) g->stream->synchronize();
  }

  // Seconds of each GPU's block of `ops` copies, all GPUs released together.
  std::vector<double> timed_copies(std::uint64_t ops) {
    return timer_->time_blocks(streams_, [&] {
      for (const auto& g : gpus_) {
        PB_CUDA(cudaSetDevice(g->device));
        const cudaStream_t s = g->stream->get();
        for (std::uint64_t i = 0; i < ops; ++i) {
          if (request_.direction == Direction::kH2D) {
            PB_CUDA(cudaMemcpyAsync(g->device_buffer.get(), g->host.ptr, request_.bytes,
                                    cudaMemcpyHostToDevice, s));
          } else {
            PB_CUDA(cudaMemcpyAsync(g->host.ptr, g->device_buffer.get(), request_.bytes,
                                    cudaMemcpyDeviceToHost, s));
          }
        }
      }
    });
  }

  void record_placement_checks() {
    std::string devices;
    for (const auto& g : gpus_) {
      devices += (devices.empty() ? "" : ", ") + std::to_string(g->device) + " (host node " +
                 std::to_string(g->node) + ")";
      DeviceScope scope(g->device);
      Check kind = host_memory_kind_check(g->host.ptr, cudaMemoryTypeHost);
      kind.name = suffixed(kind.name, g->device);
      checks_.push_back(std::move(kind));
      for (auto& c : host_buffer_checks(request_, g->host.ptr, g->node)) {
        c.name = suffixed(c.name, g->device);
        checks_.push_back(std::move(c));
      }
    }
    nlohmann::ordered_json indexes = nlohmann::ordered_json::array();
    for (const auto& g : gpus_) indexes.push_back(g->device);
    checks_.insert(checks_.begin(),
                   {"gpus", true,
                    std::to_string(gpus_.size()) + " GPU" + (gpus_.size() == 1 ? "" : "s") +
                        " copied at once, released by one latch: " + devices,
                    indexes});
  }

  CopyRequest request_;
  DeviceScope restore_device_;  // first in, last out: the caller's device back
  std::vector<std::unique_ptr<PerGpu>> gpus_;
  std::vector<DeviceStream> streams_;
  std::optional<GpuBlockTimer> timer_;
  std::uint64_t ops_ = 1;
  bool copies_verified_ = false;
  std::vector<Check> checks_;
};

}  // namespace

std::unique_ptr<CaseBench> make_copy_all_gpus_bench(const CaseSpec& spec, const Machine& machine) {
  return std::make_unique<CopyAllGpusBench>(spec, machine);
}

}  // namespace pathbench
