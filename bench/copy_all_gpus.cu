// The `copy` family with gpus=all: H2D or D2H to every GPU in use at the same time, so GPUs that
// share a PCIe switch, a root port or a socket's I/O bandwidth show it (each GPU alone reaches
// its link rate; together they split the shared uplink).
//
// Per GPU: a host buffer of the case's host_memory kind on that GPU's own NUMA node, a device
// buffer and a stream on the GPU. One sample is one block of copies on every GPU's stream, all
// released by one latch and each timed by its own events. Metrics: bandwidth_gpu<N> (that GPU's
// bytes over its block time), bandwidth (their sum: the node's aggregate rate while all GPUs
// copy), time_per_copy (the slowest GPU's block time per copy). Each GPU's data has its own
// pattern seed, so a copy from the wrong buffer is caught.
#include <cstring>
#include <memory>
#include <vector>

#include "bench/copy.hpp"
#include "core/units.hpp"
#include "cuda/cuda_resources.hpp"
#include "cuda/device_pattern.hpp"
#include "measure/block_bench.hpp"
#include "measure/latched_clock.hpp"
#include "measure/pattern.hpp"
#include "measure/placed_host_memory.hpp"
#include "measure/timeline_checks.hpp"

namespace pathbench {

namespace {

constexpr std::uint64_t kSeed = 0x616c6c67u;  // "allg"; GPU N's data uses kSeed + N

struct PerGpu {
  PerGpu(const CopyRequest& r, int index, int node) : device(index), seed(kSeed + index) {
    // Everything of this GPU, its host buffer included, belongs to its own context.
    DeviceScope scope(index);
    host = PlacedHostMemory({r.pinned() ? HostMemoryKind::kPinned : HostMemoryKind::kRegistered,
                             r.bytes, r.page(), node});
    stream.emplace();
    checker.emplace();
    buffer = DeviceMemory(r.bytes);
  }
  PerGpu(const PerGpu&) = delete;
  PerGpu& operator=(const PerGpu&) = delete;
  // The members are freed with their own device current.
  ~PerGpu() { cudaSetDevice(device); }

  int device;
  std::uint64_t seed;
  // Destroyed bottom-up: the device side before the host buffer it copies from or to.
  PlacedHostMemory host;
  std::optional<Stream> stream;
  std::optional<DevicePatternChecker> checker;
  DeviceMemory buffer;
};

class CopyAllGpusBench final : public BlockBench {
 public:
  CopyAllGpusBench(const CopyRequest& r, const Machine& machine)
      : BlockBench(shape_of(r, machine)), r_(r), restore_(current_device()) {
    std::vector<DeviceStream> streams;
    std::string devices;
    for (int index : copy_all_gpus(machine)) {
      const int node = *machine.gpu_local_node(index);  // requirements() made sure
      gpus_.push_back(std::make_unique<PerGpu>(r, index, node));
      PerGpu& g = *gpus_.back();
      streams.push_back(DeviceStream{index, g.stream->get()});
      devices += (devices.empty() ? "" : ", ") + std::to_string(index) + " (host node " +
                 std::to_string(node) + ")";
      DeviceScope scope(index);
      for (auto& c : g.host.checks("host buffer", "_gpu" + std::to_string(index))) {
        checks_.push_back(std::move(c));
      }
      if (r.direction == CopyDirection::kH2D) {
        fill_pattern({g.host.data(), r.bytes}, g.seed);
      } else {
        fill_pattern_on_device(g.buffer.get(), r.bytes, g.seed, g.stream->get());
      }
    }
    synchronize_all();
    nlohmann::ordered_json indexes = nlohmann::ordered_json::array();
    for (const auto& g : gpus_) indexes.push_back(g->device);
    checks_.insert(checks_.begin(),
                   {"gpus", true,
                    std::to_string(gpus_.size()) + " GPU" + (gpus_.size() == 1 ? "" : "s") +
                        " copied at once, released by one latch: " + devices,
                    indexes});
    DeviceScope scope(gpus_.front()->device);
    use_clock(std::make_unique<LatchedClock>(std::move(streams)));
  }

  std::vector<MetricSpec> metrics() const override {
    std::vector<std::string> labels;
    for (const auto& g : gpus_) labels.push_back(std::to_string(g->device));
    return copy_metrics(r_, labels);  // bandwidth, bandwidth_gpu<N>..., time_per_copy
  }

  std::vector<Check> timeline_checks(const Timeline&, const TimelineAnalysis& a) const override {
    const bool h2d = r_.direction == CopyDirection::kH2D;
    return timeline_copy_checks(
        a, {h2d ? std::optional<std::string>("pinned") : std::nullopt, ops() * gpus_.size(), false,
            "copies issued in one sample (" + std::to_string(ops()) + " on each of " +
                std::to_string(gpus_.size()) + " GPUs)"});
  }

 private:
  static BlockShape shape_of(const CopyRequest& r, const Machine& machine) {
    BlockShape s;
    s.lanes = copy_all_gpus(machine).size();
    s.bytes_per_op = r.bytes;
    s.verified = "every GPU's destination matched its own pattern";
    return s;
  }

  void synchronize_all() const {
    for (const auto& g : gpus_) g->stream->synchronize();
  }

  void enqueue(std::uint64_t ops) override {
    for (const auto& g : gpus_) {
      PB_CUDA(cudaSetDevice(g->device));
      const cudaStream_t s = g->stream->get();
      for (std::uint64_t i = 0; i < ops; ++i) {
        if (r_.direction == CopyDirection::kH2D) {
          PB_CUDA(cudaMemcpyAsync(g->buffer.get(), g->host.data(), r_.bytes, cudaMemcpyHostToDevice,
                                  s));
        } else {
          PB_CUDA(cudaMemcpyAsync(g->host.data(), g->buffer.get(), r_.bytes, cudaMemcpyDeviceToHost,
                                  s));
        }
      }
    }
  }

  void complete() override { synchronize_all(); }

  void before_sample() override {
    for (const auto& g : gpus_) {
      if (r_.direction == CopyDirection::kH2D) {
        DeviceScope scope(g->device);
        PB_CUDA(cudaMemsetAsync(g->buffer.get(), 0, r_.bytes, g->stream->get()));
      } else {
        std::memset(g->host.data(), 0, r_.bytes);
      }
    }
    synchronize_all();
  }

  void check_destination() override {
    for (const auto& g : gpus_) {
      const std::string what =
          "GPU " + std::to_string(g->device) + "'s copy destination after the timed block";
      if (r_.direction == CopyDirection::kH2D) {
        DeviceScope scope(g->device);
        g->checker->verify(g->buffer.get(), r_.bytes, g->seed, g->stream->get(), what);
      } else {
        verify_pattern({g->host.data(), r_.bytes}, g->seed, what);
      }
    }
  }

  std::vector<double> values(const BlockTimes& t) const override {
    const double bytes = static_cast<double>(r_.bytes) * static_cast<double>(t.ops);
    std::vector<double> v{0.0};  // the sum, filled in below
    for (double s : t.seconds) {
      v.push_back(bytes / s / kGB);
      v.front() += v.back();
    }
    v.push_back(t.slowest() / static_cast<double>(t.ops));
    return v;
  }

  CopyRequest r_;
  DeviceScope restore_;  // first in, last out: the caller's device back
  std::vector<std::unique_ptr<PerGpu>> gpus_;
};

}  // namespace

std::unique_ptr<CaseBench> make_copy_all_gpus_bench(const CopyRequest& r, const Machine& machine) {
  return std::make_unique<CopyAllGpusBench>(r, machine);
}

}  // namespace pathbench
