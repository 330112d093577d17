#pragma once

// The `unified_memory` family: fault-driven migration of host-initialised managed buffers vs
// prefetch vs advice, GPU-to-CPU faults back, and pages resident on one GPU migrating to another
// (the `pair` axis), counted by CUPTI's unified-memory counters.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cuda/managed_memory_support.hpp"
#include "measure/family.hpp"
#include "measure/migration_evidence.hpp"

namespace pathbench {

struct UnifiedMemoryRequest {
  enum class Method {
    kFault,               // GPU first touch of host-resident pages: fault-driven migration
    kPrefetch,            // cudaMemPrefetchAsync to the GPU, then the same touch kernel
    kAdvisePreferredGpu,  // cudaMemAdvise(SetPreferredLocation, GPU), then the kernel
    kAdviseAccessedBy,    // cudaMemAdvise(SetAccessedBy, GPU), then the kernel
    kGpuToCpu,            // pages on the GPU, the host touches them: CPU faults back
    kGpuToGpu,            // pages on GPU S, GPU D's touch kernel faults them over
    kPrefetchGpuToGpu,    // pages on GPU S, cudaMemPrefetchAsync to GPU D, then D's kernel
  };
  Method method = Method::kFault;
  std::string method_name;  // the axis value
  std::uint64_t stride = 0, bytes = 0;
  std::string pair;                         // the pair axis: "S-D", "none"; empty without it
  std::optional<std::pair<int, int>> gpus;  // {S, D}; empty without the axis or for "none"

  // The methods that move pages from GPU S to GPU D (and need the pair axis).
  bool between_gpus() const {
    return method == Method::kGpuToGpu || method == Method::kPrefetchGpuToGpu;
  }
  // cudaMemPrefetchAsync to the touching GPU inside the timed pass.
  bool prefetches() const {
    return method == Method::kPrefetch || method == Method::kPrefetchGpuToGpu;
  }
  // The GPU whose kernel touches the pages: the pair's D, else `device`.
  int touching_gpu(int device) const { return gpus ? gpus->second : device; }

  // Addresses touched in one pass: 0, stride, 2*stride, ... < bytes.
  std::uint64_t touches() const { return stride == 0 ? 0 : (bytes + stride - 1) / stride; }
  // The least a pass migrates: the whole buffer (prefetch), else the page of each touched address.
  std::uint64_t estimated_migrated_bytes() const;
};
UnifiedMemoryRequest decode_unified_memory_request(const CaseSpec& spec);
std::vector<MetricSpec> unified_memory_metrics();

// GPU memory kept free beside the managed buffer (latch, kernels, CUPTI buffers).
inline constexpr std::uint64_t kUnifiedMemoryDeviceHeadroom = std::uint64_t{256} << 20;
// Why this device cannot run the case as asked, else nothing (prepare reads the support).
std::optional<std::string> unified_memory_device_skip_reason(const UnifiedMemoryRequest& request,
                                                             const ManagedMemorySupport& support);
// The same for a GPU-to-GPU method: both GPUs of the pair must page the buffer in on demand (S
// holds it before a pass, D after), each with the whole buffer free beside the headroom.
std::optional<std::string> unified_memory_pair_skip_reason(const UnifiedMemoryRequest& request,
                                                           const ManagedMemorySupport& source,
                                                           const ManagedMemorySupport& destination);

// What a pass must have migrated, to judge CUPTI's counts of it against.
MigrationExpectation unified_memory_expectation(const UnifiedMemoryRequest& request);
// A fault pass issues nothing but the touch kernel on host-resident, unadvised pages: fault
// groups counted, or any bytes moved to the GPU, show it migrated by GPU faults.
inline bool unified_memory_fault_driven(const UnifiedMemoryCounts& c) {
  return c.gpu_fault_groups > 0 || c.bytes_h2d > 0;
}

// The timed passes: their counts, and how long each one's cudaMemPrefetchAsync held the thread.
struct UnifiedMemoryPasses {
  std::vector<CountedSample> samples;
  std::vector<double> prefetch_calls;
};
// um_counters; gpu_fault_groups (fault) or cpu_fault_migration (gpu_to_cpu) once a pass was
// counted; device_to_device_migration (gpu_to_gpu, prefetch_gpu_to_gpu) once a pass was counted;
// prefetch_timing, whose passes were `latched` or host-timed.
std::vector<Check> unified_memory_pass_checks(const UnifiedMemoryRequest& request,
                                              const UnifiedMemoryPasses& passes,
                                              const std::string& counters_unavailable,
                                              bool latched);

std::unique_ptr<Family> make_unified_memory_family();
// The CUDA bench (bench/unified_memory.cu).
std::unique_ptr<CaseBench> make_unified_memory_bench(const UnifiedMemoryRequest& r,
                                                     const Machine& machine, int device);

}  // namespace pathbench
